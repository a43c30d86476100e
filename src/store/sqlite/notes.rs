//! Reviewers' notes on steps in SQLite (`store::notes` says what a note is).

use super::{Sqlite, collect};
use crate::error::StoreError;
use crate::store::backend::Notes;
use crate::store::notes::{NoteRow, checked};
use rusqlite::{OptionalExtension, params};

impl Notes for Sqlite {
    fn set_note(&self, run_id: i64, step: i64, rater: &str, text: &str) -> Result<bool, StoreError> {
        let steps: Option<i64> =
            self.conn.query_row("SELECT step_count FROM runs WHERE id = ?1", [run_id], |r| r.get(0)).optional()?;
        let text = checked(text, run_id, step, steps)?;
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

    fn notes(&self, run: Option<i64>) -> Result<Vec<NoteRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT n.id, n.run_id, r.instance_id, n.step_idx, n.rater, n.text, n.created_at
             FROM notes n LEFT JOIN runs r ON r.id = n.run_id
             WHERE (?1 IS NULL OR n.run_id = ?1) ORDER BY n.run_id, n.step_idx, n.rater",
        )?;
        collect(&mut stmt, [run], NoteRow::from_row)
    }

    fn review_stamp(&self) -> Result<String, StoreError> {
        Ok(self.conn.query_row(
            "SELECT (SELECT count(*) FROM labels) || ' ' || (SELECT coalesce(max(id), 0) FROM labels) || ' ' ||
                    (SELECT count(*) FROM notes) || ' ' || (SELECT coalesce(max(id), 0) FROM notes) || ' ' ||
                    (SELECT coalesce(max(created_at), '') FROM notes)",
            [],
            |r| r.get(0),
        )?)
    }
}
