//! Classifying runs in the database with the heuristic: read each run, compute its signals,
//! classify, and write signals and labels in batches. Classifying again is a no-op for runs
//! whose signals, taxonomy and classifier are unchanged.

use crate::classify::from_store::run_input;
use crate::classify::heuristic;
use crate::classify::input::RunInput;
use crate::classify::signals::{self, Signals};
use crate::error::StoreError;
use crate::label::Source;
use crate::label::taxonomy::Taxonomy;
use crate::store::Store;
use crate::store::labels::Classified;
use serde::Serialize;
use std::collections::BTreeMap;

/// Runs written per transaction.
const BATCH: usize = 256;

#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    /// Runs given a new label.
    pub labelled: usize,
    /// Runs whose latest label already matched (same signals, taxonomy and classifier).
    pub unchanged: usize,
    /// Of the new labels, how many assign at least one mode.
    pub with_modes: usize,
    /// New labels per assigned mode.
    pub by_mode: BTreeMap<String, usize>,
    /// New labels per exit category.
    pub by_exit: BTreeMap<String, usize>,
    /// Runs that could not be read: (run id, error).
    pub errors: Vec<(i64, String)>,
    /// Of the new labels, runs without a gold patch: the rules that need one did not run.
    pub without_gold: usize,
}

/// The hash that identifies what the heuristic saw: signals, taxonomy and classifier version.
pub fn input_hash(signals_json: &str, taxonomy: &Taxonomy) -> String {
    let mut h = blake3::Hasher::new();
    h.update(signals_json.as_bytes());
    h.update(taxonomy.fingerprint().as_bytes());
    h.update(heuristic::VERSION.as_bytes());
    h.finalize().to_hex()[..32].to_string()
}

/// Why one run could not be measured; the others are classified all the same.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Measuring the run panicked (a bug its content met): that run's error, not the end of
    /// the command.
    #[error("internal error while measuring this run (please report it): {0}")]
    Panicked(String),
}

/// [`signals::compute`] with a panic caught as the run's error.
pub fn measure(run: &RunInput) -> Result<Signals, RunError> {
    guard(|| signals::compute(run))
}

/// Work on one run, a panic caught as that run's error.
fn guard<T>(work: impl FnOnce() -> T) -> Result<T, RunError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|panic| RunError::Panicked(crate::error::panic_text(&panic)))
}

/// Compute signals for a run and serialize them.
pub fn signals_of(store: &Store, run_id: i64) -> Result<(Signals, String), RunError> {
    let s = measure(&run_input(store, run_id)?)?;
    let json = serde_json::to_string(&s).map_err(|e| StoreError::Encode(e.to_string()))?;
    Ok((s, json))
}

/// Classify `runs` with the heuristic under `taxonomy`. `progress` is called after each run.
pub fn classify_heuristic(
    store: &mut Store,
    taxonomy: &Taxonomy,
    runs: &[i64],
    mut progress: impl FnMut(usize),
) -> Result<Report, StoreError> {
    let latest = store.latest_input_hashes(Source::Heuristic, heuristic::RATER, &taxonomy.name, &taxonomy.version)?;
    let mut report = Report::default();
    let mut batch: Vec<Classified> = Vec::with_capacity(BATCH);
    for (done, &run_id) in runs.iter().enumerate() {
        match signals_of(store, run_id) {
            Err(e) => report.errors.push((run_id, e.to_string())),
            Ok((s, json)) => {
                let hash = input_hash(&json, taxonomy);
                let label = if latest.get(&run_id) == Some(&hash) {
                    report.unchanged += 1;
                    None
                } else {
                    let label = heuristic::classify(run_id, &s, taxonomy, hash);
                    report.labelled += 1;
                    report.without_gold += usize::from(s.miss_ratio.is_none() && s.resolved != Some(true));
                    if !label.modes.is_empty() {
                        report.with_modes += 1;
                    }
                    for m in &label.modes {
                        *report.by_mode.entry(m.mode.clone()).or_default() += 1;
                    }
                    *report.by_exit.entry(label.exit_category.clone()).or_default() += 1;
                    Some(label)
                };
                let signals_hash = blake3::hash(json.as_bytes()).to_hex()[..32].to_string();
                batch.push(Classified {
                    run_id,
                    signals_version: crate::classify::signals::VERSION,
                    signals_json: json,
                    signals_hash,
                    label,
                });
            }
        }
        if batch.len() >= BATCH {
            store.save_classified(&batch)?;
            batch.clear();
        }
        progress(done + 1);
    }
    if !batch.is_empty() {
        store.save_classified(&batch)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_whose_measuring_panics_is_that_runs_error() {
        let caught = std::panic::catch_unwind(|| guard(|| -> u8 { panic!("a bug met on one run") }));
        match caught {
            Ok(Err(RunError::Panicked(m))) => assert_eq!(m, "a bug met on one run"),
            other => panic!("the panic was not the run's error: {other:?}"),
        }
    }
}
