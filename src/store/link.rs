//! Joining runs to their test outcome and prediction by instance id.
//!
//! Run after every write, for each instance the source touched, so that a log ingested before
//! or after its trajectory joins either way. Precision first — a wrong verdict is worse than
//! none — so a candidate is never joined when it contradicts the run:
//! - it names another model (harness folder, prediction's model, or a summary whose file name
//!   names the model it evaluated);
//! - it carries a patch and the run submitted a different one;
//! - the run is a RetryAgent attempt that was not the one submitted.
//!
//! Among the rest, the same unit (a Harbor trial's run and verdict), a matching model, the same
//! folder, the same patch and per-test detail win.
//! When several runs share the instance, a candidate must have something tying it to the run.

use crate::error::StoreError;
use rusqlite::{Connection, params};
use std::path::Path;

struct RunSide {
    id: i64,
    /// The unit it was read from: an evaluation read with the run (a Harbor trial) is its own.
    source: i64,
    /// The run's own model, else its prediction's (filled in between the two joins).
    model: Option<String>,
    dir: String,
    submission: Option<String>,
    /// RetryAgent: `Some(false)` for an attempt that was not chosen.
    best_attempt: Option<bool>,
}

struct Candidate {
    id: i64,
    source: i64,
    model: Option<String>,
    /// Harness run id or summary file name; names the model for summaries.
    label: Option<String>,
    dir: String,
    /// Per-test detail beats a bare resolved flag (summaries).
    detail: i64,
    patch: Option<String>,
}

pub fn relink_instance(tx: &Connection, instance_id: &str) -> Result<(), StoreError> {
    let mut runs: Vec<RunSide> = tx
        .prepare_cached(
            "SELECT r.id, r.model, s.path, r.submission, r.best_attempt, r.source_id FROM runs r
             JOIN sources s ON s.id = r.source_id WHERE r.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            Ok(RunSide {
                id: r.get(0)?,
                source: r.get(5)?,
                model: r.get(1)?,
                dir: parent(&r.get::<_, String>(2)?),
                submission: r.get(3)?,
                best_attempt: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    if runs.is_empty() {
        return Ok(());
    }
    let outcomes: Vec<Candidate> = tx
        .prepare_cached(
            "SELECT o.id, o.model, o.run_label, s.path, s.kind, o.test_count + (o.log IS NOT NULL), o.patch,
                    o.source_id
             FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            let path: String = r.get(3)?;
            let kind: String = r.get(4)?;
            Ok(Candidate {
                id: r.get(0)?,
                source: r.get(7)?,
                model: r.get(1)?,
                label: r.get(2)?,
                // A harness folder sits beside nothing; a report.json sits beside its trajectory.
                dir: if kind == "file" { parent(&path) } else { path },
                detail: r.get(5)?,
                patch: r.get(6)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let predictions: Vec<Candidate> = tx
        .prepare_cached(
            "SELECT p.id, p.model, s.path, p.patch, p.source_id FROM predictions p
             JOIN sources s ON s.id = p.source_id WHERE p.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            Ok(Candidate {
                id: r.get(0)?,
                source: r.get(4)?,
                model: r.get(1)?,
                label: None,
                dir: parent(&r.get::<_, String>(2)?),
                detail: 0,
                patch: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    // Attempts that were not submitted take no part; the chosen one stands alone.
    let shared = runs.iter().filter(|r| r.best_attempt != Some(false)).count() > 1;
    for run in &mut runs {
        let prediction = best(run, &predictions, shared);
        if run.model.is_none() {
            run.model = predictions.iter().find(|c| Some(c.id) == prediction).and_then(|c| c.model.clone());
        }
        let outcome = best(run, &outcomes, shared);
        tx.prepare_cached("UPDATE runs SET outcome_id = ?2, prediction_id = ?3 WHERE id = ?1")?
            .execute(params![run.id, outcome, prediction])?;
    }
    Ok(())
}

/// The best candidate for a run, or none.
fn best(run: &RunSide, candidates: &[Candidate], shared: bool) -> Option<i64> {
    if run.best_attempt == Some(false) {
        return None;
    }
    candidates
        .iter()
        .filter_map(|c| {
            let model_match = match (&run.model, &c.model, &c.label) {
                (Some(m), Some(cm), _) => Some(same_model(m, cm)),
                (Some(m), None, Some(label)) => Some(label_names_model(label, m)),
                _ => None,
            };
            let patch_match = match (&run.submission, &c.patch) {
                (Some(a), Some(b)) => Some(same_patch(a, b)),
                _ => None,
            };
            if model_match == Some(false) || patch_match == Some(false) {
                return None;
            }
            let score = 16 * i64::from(c.source == run.source)
                + 8 * i64::from(model_match == Some(true))
                + 4 * i64::from(c.dir == run.dir)
                + 4 * i64::from(patch_match == Some(true))
                + 2 * i64::from(c.detail > 0);
            if shared && score < 4 {
                // Nothing ties this candidate to this run rather than another one.
                return None;
            }
            Some((score, c.id))
        })
        .max()
        .map(|(_, id)| id)
}

/// Model names as agents and harness folders spell them: `org/model`, `org__model`, or just
/// the last segment.
pub fn same_model(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace("__", "/");
    let (a, b) = (norm(a), norm(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// Whether a summary's file name (`<model>.<run_id>`, with `/` spelled `_` or `__`) names the
/// run's model: its last path segment, compared with punctuation folded.
fn label_names_model(label: &str, model: &str) -> bool {
    let fold = |s: &str| -> String {
        s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
    };
    let last = model.rsplit('/').next().unwrap_or(model);
    let needle = fold(last);
    !needle.trim_matches('-').is_empty() && fold(label).contains(&needle)
}

/// Patches compared as git would apply them: line endings and surrounding blank lines aside.
fn same_patch(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.replace("\r\n", "\n").trim().to_string();
    norm(a) == norm(b)
}

fn parent(path: &str) -> String {
    Path::new(path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_spellings_match() {
        assert!(same_model("openrouter/deepseek/deepseek-v3.2", "openrouter__deepseek__deepseek-v3.2"));
        assert!(same_model("google/gemini-3-pro-preview", "gemini-3-pro-preview"));
        assert!(!same_model("gpt-4o", "claude-3"));
        assert!(!same_model("x/gpt-4o", "4o"));
        assert!(!same_model("", ""));
    }

    #[test]
    fn summary_names_name_their_model() {
        let label = "run_report.openrouter_deepseek_deepseek-v3.2.SWE-bench_SWE-bench_Verified";
        assert!(label_names_model(label, "openrouter/deepseek/deepseek-v3.2"));
        assert!(!label_names_model(label, "openrouter/meta-llama/llama-3-70b-instruct"));
        assert!(label_names_model("demo-model.demo-run", "demo-model"));
    }

    #[test]
    fn patches_compare_without_line_ending_noise() {
        assert!(same_patch("\ndiff --git a/x b/x\r\n+y\r\n", "diff --git a/x b/x\n+y\n"));
        assert!(!same_patch("diff --git a/x b/x\n+y\n", "diff --git a/x b/x\n+z\n"));
    }
}
