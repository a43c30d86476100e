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
/// The runs are read through `store` on this thread, measured on a worker per core.
pub fn classify_heuristic(
    store: &mut Store,
    taxonomy: &Taxonomy,
    runs: &[i64],
    progress: impl FnMut(usize),
) -> Result<Report, StoreError> {
    classify_heuristic_reading(store, Vec::new(), taxonomy, runs, progress)
}

/// [`classify_heuristic`] with `readers`, read-only stores of the same database (one per
/// worker): each worker reads the runs it measures, so reading is shared by the cores too.
/// Without them the store is read on this thread (a store is not shared between threads) while
/// workers, one per core, measure and classify the runs read. Either way results are taken up
/// in the runs' order, so what is written, and in what order, is what one thread would write.
pub fn classify_heuristic_reading(
    store: &mut Store,
    readers: Vec<Store>,
    taxonomy: &Taxonomy,
    runs: &[i64],
    mut progress: impl FnMut(usize),
) -> Result<Report, StoreError> {
    let latest = store.latest_input_hashes(Source::Heuristic, heuristic::RATER, &taxonomy.name, &taxonomy.version)?;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_WORKERS);
    let reading = !readers.is_empty();
    let mut readers: Vec<Option<Store>> = readers.into_iter().map(Some).collect();
    if !reading {
        readers.resize_with(workers, || None);
    }
    let mut report = Report::default();
    let mut batch: Vec<Classified> = Vec::with_capacity(BATCH);
    let (jobs, queue) = std::sync::mpsc::sync_channel::<(usize, i64, Option<RunInput>)>(readers.len() * 2);
    let queue = std::sync::Mutex::new(queue);
    let (done_tx, done) = std::sync::mpsc::channel::<(usize, i64, Result<Measured, RunError>)>();
    std::thread::scope(|scope| -> Result<(), StoreError> {
        // Owned here, so that however this ends the workers see the queue close and stop.
        let jobs = jobs;
        for reader in readers {
            let (queue, done_tx, latest) = (&queue, done_tx.clone(), &latest);
            scope.spawn(move || {
                loop {
                    let job = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, run_id, input)) = job else { return };
                    let input = match (input, &reader) {
                        (Some(input), _) => Ok(input),
                        (None, Some(reader)) => run_input(reader, run_id).map_err(RunError::from),
                        (None, None) => Err(RunError::Store(StoreError::Encode("no store to read the run".into()))),
                    };
                    // A panic anywhere in a run's work is that run's error, never a lost worker.
                    let measured =
                        input.and_then(|input| guard(|| measured(run_id, &input, taxonomy, latest)).and_then(|m| m));
                    if done_tx.send((seq, run_id, measured)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        // Results come back in any order: each is taken up in the runs' order.
        let mut waiting: BTreeMap<usize, (i64, Result<Measured, RunError>)> = BTreeMap::new();
        let mut next = 0;
        let mut take_up = |waiting: &mut BTreeMap<usize, (i64, Result<Measured, RunError>)>,
                           store: &mut Store|
         -> Result<(), StoreError> {
            while let Some((run_id, result)) = waiting.remove(&next) {
                next += 1;
                match result {
                    Err(e) => report.errors.push((run_id, e.to_string())),
                    Ok(m) => {
                        report.count(&m);
                        batch.push(m.classified);
                    }
                }
                if batch.len() >= BATCH {
                    store.save_classified(&batch)?;
                    batch.clear();
                }
                progress(next);
            }
            Ok(())
        };
        for (seq, &run_id) in runs.iter().enumerate() {
            match if reading { Ok(None) } else { run_input(store, run_id).map(Some) } {
                Ok(input) => {
                    if jobs.send((seq, run_id, input)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    waiting.insert(seq, (run_id, Err(e.into())));
                }
            }
            while let Ok((seq, run_id, result)) = done.try_recv() {
                waiting.insert(seq, (run_id, result));
            }
            take_up(&mut waiting, store)?;
            // Results held behind a slow run are bounded: no new run is sent until it is in.
            while waiting.len() >= MAX_WAITING {
                let Ok((seq, run_id, result)) = done.recv() else { break };
                waiting.insert(seq, (run_id, result));
                take_up(&mut waiting, store)?;
            }
        }
        drop(jobs);
        for (seq, run_id, result) in done.iter() {
            waiting.insert(seq, (run_id, result));
            take_up(&mut waiting, store)?;
        }
        take_up(&mut waiting, store)?;
        if !batch.is_empty() {
            store.save_classified(&batch)?;
        }
        Ok(())
    })?;
    Ok(report)
}

/// At most this many threads measure runs.
const MAX_WORKERS: usize = 8;

/// At most this many runs' results wait for an earlier run's (each holds its signals).
const MAX_WAITING: usize = 4 * BATCH;

/// One run measured and, unless its label is already the latest, classified.
struct Measured {
    classified: Classified,
    /// A new label for a failed run without a gold patch (the rules needing one did not run).
    without_gold: bool,
}

impl Report {
    fn count(&mut self, m: &Measured) {
        let Some(label) = &m.classified.label else {
            self.unchanged += 1;
            return;
        };
        self.labelled += 1;
        self.without_gold += usize::from(m.without_gold);
        if !label.modes.is_empty() {
            self.with_modes += 1;
        }
        for mode in &label.modes {
            *self.by_mode.entry(mode.mode.clone()).or_default() += 1;
        }
        *self.by_exit.entry(label.exit_category.clone()).or_default() += 1;
    }
}

/// A run's signals, and its label when the latest differs (pure: run on a worker).
fn measured(
    run_id: i64,
    input: &RunInput,
    taxonomy: &Taxonomy,
    latest: &std::collections::HashMap<i64, String>,
) -> Result<Measured, RunError> {
    let s = measure(input)?;
    let json = serde_json::to_string(&s).map_err(|e| StoreError::Encode(e.to_string()))?;
    let hash = input_hash(&json, taxonomy);
    let label = (latest.get(&run_id) != Some(&hash)).then(|| heuristic::classify(run_id, &s, taxonomy, hash));
    let signals_hash = blake3::hash(json.as_bytes()).to_hex()[..32].to_string();
    Ok(Measured {
        without_gold: s.miss_ratio.is_none() && s.resolved != Some(true),
        classified: Classified {
            run_id,
            signals_version: crate::classify::signals::VERSION,
            signals_json: json,
            signals_hash,
            label,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs measured on several threads are taken up in their order: an unreadable run among
    /// them is its error, in its place, the others labelled; a second pass changes nothing.
    #[test]
    fn runs_are_taken_up_in_their_order_with_an_unreadable_one_its_error() {
        use crate::model::{Format, Parsed, Run, Step};
        use crate::store::SourceRecord;
        fn ok<T>(r: Result<T, StoreError>) -> T {
            r.unwrap_or_else(|e| panic!("{e}"))
        }
        let mut store = ok(Store::open_in_memory());
        let runs = (0..60)
            .map(|i| Run {
                instance_id: format!("r__r-{i}"),
                format: Some(Format::SweAgent),
                steps: vec![Step { action: format!("cat f{i}.py"), observation: "x = 1".into(), ..Step::default() }],
                ..Run::default()
            })
            .collect();
        let record = SourceRecord { path: "/a.traj", kind: "file", format: "test", size: 1, hash: &[1; 32] };
        ok(store.write_source(&record, &Parsed { runs, ..Parsed::default() }));
        let mut ids: Vec<i64> = (0..60).map(|i| ok(store.resolve_run(&format!("r__r-{i}")))).collect();
        ids.insert(30, -7);
        let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("preset"));
        let mut seen = Vec::new();
        let report = ok(classify_heuristic(&mut store, &taxonomy, &ids, |n| seen.push(n)));
        assert_eq!(seen, (1..=61).collect::<Vec<_>>(), "progress in order, once per run");
        assert_eq!((report.labelled, report.unchanged), (60, 0));
        assert_eq!(report.errors.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [-7]);
        let again = ok(classify_heuristic(&mut store, &taxonomy, &ids, |_| {}));
        assert_eq!((again.labelled, again.unchanged, again.errors.len()), (0, 60, 1));
    }

    /// Workers that read the runs themselves (a read-only store each) write what one reader
    /// writes: the same signals, in the same order.
    #[test]
    fn workers_reading_their_runs_write_what_one_reader_writes() {
        fn ok<T>(r: Result<T, StoreError>) -> T {
            r.unwrap_or_else(|e| panic!("{e}"))
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("preset"));
        let mut signals = Vec::new();
        for (name, readers) in [("one.db", 0), ("many.db", 3)] {
            let path = dir.path().join(name);
            let mut store = ok(Store::open(&path));
            let runs = (0..50)
                .map(|i| crate::model::Run {
                    instance_id: format!("r__r-{i}"),
                    format: Some(crate::model::Format::SweAgent),
                    steps: vec![crate::model::Step { action: format!("cat f{i}.py"), ..Default::default() }],
                    ..Default::default()
                })
                .collect();
            let record =
                crate::store::SourceRecord { path: "/a.traj", kind: "file", format: "test", size: 1, hash: &[1; 32] };
            ok(store.write_source(&record, &crate::model::Parsed { runs, ..Default::default() }));
            let ids: Vec<i64> = (0..50).map(|i| ok(store.resolve_run(&format!("r__r-{i}")))).collect();
            let readers = (0..readers).map(|_| ok(Store::open_read_only(&path))).collect();
            let report = ok(classify_heuristic_reading(&mut store, readers, &taxonomy, &ids, |_| {}));
            assert_eq!((report.labelled, report.errors.len()), (50, 0), "{name}");
            signals.push(
                ids.iter().map(|id| ok(store.signals_json(*id, crate::classify::signals::VERSION))).collect::<Vec<_>>(),
            );
        }
        assert!(signals[0].iter().all(Option::is_some), "every run's signals written");
        assert_eq!(signals[0], signals[1]);
    }

    #[test]
    fn a_run_whose_measuring_panics_is_that_runs_error() {
        let caught = std::panic::catch_unwind(|| guard(|| -> u8 { panic!("a bug met on one run") }));
        match caught {
            Ok(Err(RunError::Panicked(m))) => assert_eq!(m, "a bug met on one run"),
            other => panic!("the panic was not the run's error: {other:?}"),
        }
    }
}
