//! Reviewers' notes on steps: a bookmark with text, not a label. One note per run, step and
//! reviewer: writing it again replaces it, writing it empty removes it.

use super::Store;
use crate::error::StoreError;
use rusqlite::params;
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

impl Store {
    /// Write the reviewer's note on a step (replacing theirs), or remove it when `text` is
    /// empty. Returns whether a note is there now. One short IMMEDIATE transaction, as labels.
    pub fn set_note(&self, run_id: i64, step: i64, rater: &str, text: &str) -> Result<bool, StoreError> {
        let text = text.trim();
        if text.len() > MAX_NOTE {
            return Err(StoreError::Invalid(format!(
                "a note is at most {} KiB (this one is {} KiB)",
                MAX_NOTE / 1024,
                text.len() / 1024
            )));
        }
        use rusqlite::OptionalExtension;
        let steps: Option<i64> =
            self.conn.query_row("SELECT step_count FROM runs WHERE id = ?1", [run_id], |r| r.get(0)).optional()?;
        let Some(steps) = steps else { return Err(StoreError::NoSuchRun(run_id.to_string())) };
        if !(0..steps).contains(&step) {
            return Err(StoreError::Invalid(format!(
                "run {run_id} has no step {step} (its steps are 0 to {})",
                steps - 1
            )));
        }
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let written = if text.is_empty() {
            self.conn
                .execute(
                    "DELETE FROM notes WHERE run_id = ?1 AND step_idx = ?2 AND rater = ?3",
                    params![run_id, step, rater],
                )
                .map_err(StoreError::from)
        } else {
            // The run's identity goes with the note, so it follows the run through re-ingests.
            super::identity::of_run(&self.conn, run_id).and_then(|who| {
                Ok(self.conn.execute(
                    "INSERT INTO notes (run_id, step_idx, rater, text, created_at, run_source, run_instance, run_attempt, run_nth)
                     VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?5, ?6, ?7, ?8)
                     ON CONFLICT (run_id, step_idx, rater) DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
                    params![
                        run_id,
                        step,
                        rater,
                        text,
                        who.as_ref().map(|w| &w.source),
                        who.as_ref().map(|w| &w.instance),
                        who.as_ref().and_then(|w| w.attempt),
                        who.as_ref().map(|w| w.nth),
                    ],
                )?)
            })
        };
        match written {
            Ok(_) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(!text.is_empty())
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The notes of a run (or of every run), by run and step.
    pub fn notes(&self, run: Option<i64>) -> Result<Vec<NoteRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT n.id, n.run_id, r.instance_id, n.step_idx, n.rater, n.text, n.created_at
             FROM notes n LEFT JOIN runs r ON r.id = n.run_id
             WHERE (?1 IS NULL OR n.run_id = ?1) ORDER BY n.run_id, n.step_idx, n.rater",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(NoteRow {
                id: r.get(0)?,
                run_id: r.get(1)?,
                instance_id: r.get(2)?,
                step: r.get(3)?,
                rater: r.get(4)?,
                text: r.get(5)?,
                created_at: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
