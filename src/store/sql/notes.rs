//! Reviewers' notes on steps (`store::notes` says what a note is), on either store.

use super::{Sql, args};
use crate::error::StoreError;
use crate::store::backend::Notes;
use crate::store::notes::{NoteRow, checked};

impl<S: Sql> Notes for S {
    fn set_note(&self, run_id: i64, step: i64, rater: &str, text: &str) -> Result<bool, StoreError> {
        let steps = self.opt("SELECT step_count FROM runs WHERE id = ?1", &args![run_id], |r| r.int(0))?;
        let text = checked(text, run_id, step, steps)?;
        self.transaction(|| {
            if text.is_empty() {
                self.execute(
                    "DELETE FROM notes WHERE run_id = ?1 AND step_idx = ?2 AND rater = ?3",
                    &args![run_id, step, rater],
                )?;
            } else {
                // The run's identity goes with the note, so it follows the run through re-ingests.
                let who = super::identity::of_runs(self, &[run_id])?.remove(&run_id);
                let who = who.as_ref();
                self.execute(
                    &format!(
                        "INSERT INTO notes (run_id, step_idx, rater, text, created_at,
                             run_source, run_instance, run_attempt, run_nth)
                         VALUES (?1, ?2, ?3, ?4, {}, ?5, ?6, ?7, ?8)
                         ON CONFLICT (run_id, step_idx, rater) DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
                        S::NOW
                    ),
                    &args![
                        run_id,
                        step,
                        rater,
                        text,
                        who.map(|w| w.source.as_str()),
                        who.map(|w| w.instance.as_str()),
                        who.and_then(|w| w.attempt),
                        who.map(|w| w.nth),
                    ],
                )?;
            }
            Ok(!text.is_empty())
        })
    }

    fn notes(&self, run: Option<i64>) -> Result<Vec<NoteRow>, StoreError> {
        self.rows(
            "SELECT n.id, n.run_id, r.instance_id, n.step_idx, n.rater, n.text, n.created_at
             FROM notes n LEFT JOIN runs r ON r.id = n.run_id
             WHERE (CAST(?1 AS bigint) IS NULL OR n.run_id = ?1) ORDER BY n.run_id, n.step_idx, n.rater",
            &args![run],
            NoteRow::from_row,
        )
    }

    fn review_stamp(&self) -> Result<String, StoreError> {
        self.one(
            "SELECT CAST((SELECT count(*) FROM labels) AS text) || ' ' || CAST((SELECT coalesce(max(id), 0) FROM labels) AS text)
                    || ' ' || CAST((SELECT count(*) FROM notes) AS text) || ' ' || CAST((SELECT coalesce(max(id), 0) FROM notes) AS text)
                    || ' ' || (SELECT coalesce(max(created_at), '') FROM notes)",
            &[],
            |r| r.text(0),
        )
    }
}
