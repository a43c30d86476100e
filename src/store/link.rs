//! Joining runs to their test outcome and prediction by instance id.
//!
//! Run after every write, for each instance the source touched, so that a log ingested before
//! or after its trajectory joins either way. When several runs share an instance, the model
//! named by the outcome (harness folder, prediction) and the folder the files sit in decide.

use crate::error::StoreError;
use rusqlite::{Transaction, params};
use std::path::Path;

struct RunSide {
    id: i64,
    model: Option<String>,
    dir: String,
    submission: Option<String>,
}

struct Candidate {
    id: i64,
    model: Option<String>,
    dir: String,
    /// Per-test detail beats a bare resolved flag (summaries).
    detail: i64,
    patch: Option<String>,
}

pub fn relink_instance(tx: &Transaction<'_>, instance_id: &str) -> Result<(), StoreError> {
    let runs: Vec<RunSide> = tx
        .prepare_cached(
            "SELECT r.id, r.model, s.path, r.submission FROM runs r JOIN sources s ON s.id = r.source_id
             WHERE r.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            Ok(RunSide { id: r.get(0)?, model: r.get(1)?, dir: parent(&r.get::<_, String>(2)?), submission: r.get(3)? })
        })?
        .collect::<Result<_, _>>()?;
    if runs.is_empty() {
        return Ok(());
    }
    let outcomes: Vec<Candidate> = tx
        .prepare_cached(
            "SELECT o.id, o.model, s.path, s.kind, o.test_count + (o.log IS NOT NULL), o.patch
             FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            let path: String = r.get(2)?;
            let kind: String = r.get(3)?;
            Ok(Candidate {
                id: r.get(0)?,
                model: r.get(1)?,
                // A harness folder sits beside nothing; a report.json sits beside its trajectory.
                dir: if kind == "file" { parent(&path) } else { path },
                detail: r.get(4)?,
                patch: r.get(5)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let predictions: Vec<Candidate> = tx
        .prepare_cached(
            "SELECT p.id, p.model, s.path, p.patch FROM predictions p JOIN sources s ON s.id = p.source_id
             WHERE p.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            Ok(Candidate {
                id: r.get(0)?,
                model: r.get(1)?,
                dir: parent(&r.get::<_, String>(2)?),
                detail: 0,
                patch: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let shared = runs.len() > 1;
    for run in &runs {
        let outcome = best(run, &outcomes, shared);
        let prediction = best(run, &predictions, shared);
        tx.prepare_cached("UPDATE runs SET outcome_id = ?2, prediction_id = ?3 WHERE id = ?1")?
            .execute(params![run.id, outcome, prediction])?;
    }
    Ok(())
}

/// The best candidate for a run, or none. With several runs on the instance a candidate that
/// names another model is never taken.
fn best(run: &RunSide, candidates: &[Candidate], shared: bool) -> Option<i64> {
    candidates
        .iter()
        .filter_map(|c| {
            let model_match = match (&run.model, &c.model) {
                (Some(a), Some(b)) => Some(same_model(a, b)),
                _ => None,
            };
            if shared && model_match == Some(false) {
                return None;
            }
            let patch_match = match (&run.submission, &c.patch) {
                (Some(a), Some(b)) => a.trim() == b.trim(),
                _ => false,
            };
            let score = 8 * i64::from(model_match == Some(true))
                + 4 * i64::from(c.dir == run.dir)
                + 4 * i64::from(patch_match)
                + 2 * i64::from(c.detail > 0);
            if shared && score == 0 {
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

fn parent(path: &str) -> String {
    Path::new(path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::same_model;

    #[test]
    fn model_spellings_match() {
        assert!(same_model("openrouter/deepseek/deepseek-v3.2", "openrouter__deepseek__deepseek-v3.2"));
        assert!(same_model("google/gemini-3-pro-preview", "gemini-3-pro-preview"));
        assert!(!same_model("gpt-4o", "claude-3"));
        assert!(!same_model("x/gpt-4o", "4o"));
        assert!(!same_model("", ""));
    }
}
