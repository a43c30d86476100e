//! Reviewers' notes on steps: a bookmark with text, not a label. One note per run, step and
//! reviewer: writing it again replaces it, writing it empty removes it.

use super::cells::Cells;
use crate::error::StoreError;
use serde::Serialize;

/// Notes longer than this are refused (a note is a sentence or a paragraph, not a document).
pub const MAX_NOTE: usize = 64 * 1024;

/// A note as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoteRow {
    pub id: i64,
    pub run_id: i64,
    /// The run's instance, when the run is still in the database.
    pub instance_id: Option<String>,
    pub step: i64,
    pub rater: String,
    pub text: String,
    pub created_at: String,
}

impl NoteRow {
    /// A row of `id, run_id, instance_id, step_idx, rater, text, created_at`.
    pub fn from_row(r: &dyn Cells) -> Result<NoteRow, StoreError> {
        Ok(NoteRow {
            id: r.int(0)?,
            run_id: r.int(1)?,
            instance_id: r.opt_text(2)?,
            step: r.int(3)?,
            rater: r.text(4)?,
            text: r.text(5)?,
            created_at: r.text(6)?,
        })
    }
}

/// Why a note cannot be written on step `step` of run `run_id` (which has `steps` steps, or is
/// not there), if it cannot: the note trimmed, or the error.
pub fn checked(text: &str, run_id: i64, step: i64, steps: Option<i64>) -> Result<&str, StoreError> {
    let text = text.trim();
    if text.len() > MAX_NOTE {
        return Err(StoreError::Invalid(format!(
            "a note is at most {} KiB (this one is {} KiB)",
            MAX_NOTE / 1024,
            text.len() / 1024
        )));
    }
    let Some(steps) = steps else { return Err(StoreError::NoSuchRun(run_id.to_string())) };
    if !(0..steps).contains(&step) {
        return Err(StoreError::Invalid(format!("run {run_id} has no step {step} (its steps are 0 to {})", steps - 1)));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn store_with_a_run() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/swe-agent-0.x/demo__calc-1.traj");
        let mut store = Store::open(&dir.path().join("t.db")).unwrap_or_else(|e| panic!("{e}"));
        let report = crate::ingest::pipeline::ingest(
            &mut store,
            &[root],
            &crate::ingest::pipeline::Options::default(),
            &crate::ingest::pipeline::Silent,
        );
        assert!(!report.has_problems());
        (dir, store)
    }

    #[test]
    fn a_note_per_step_and_reviewer_replaced_by_a_new_one_and_removed_when_empty() {
        let (_dir, store) = store_with_a_run();
        assert!(store.set_note(1, 2, "ann", "  the fix is here  ").unwrap_or(false));
        assert!(store.set_note(1, 2, "bob", "agree").unwrap_or(false));
        assert!(store.set_note(1, 2, "ann", "no: one line up").unwrap_or(false));
        let notes = store.notes(Some(1)).unwrap_or_default();
        let texts: Vec<(&str, &str)> = notes.iter().map(|n| (n.rater.as_str(), n.text.as_str())).collect();
        assert_eq!(texts, [("ann", "no: one line up"), ("bob", "agree")]);
        assert_eq!(notes[0].instance_id.as_deref(), Some("demo__calc-1"));
        assert!(!store.set_note(1, 2, "ann", "   ").unwrap_or(true), "empty removes");
        assert_eq!(store.notes(None).unwrap_or_default().len(), 1);
        // A step the run does not have, a run that is not there, a note too long: refused.
        let e = store.set_note(1, 99, "ann", "x").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("has no step 99"), "{e}");
        assert!(matches!(store.set_note(7, 0, "ann", "x"), Err(StoreError::NoSuchRun(_))));
        assert!(store.set_note(1, 0, "ann", &"x".repeat(MAX_NOTE + 1)).is_err());
        assert_eq!(store.notes(None).unwrap_or_default().len(), 1);
    }
}
