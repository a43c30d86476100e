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
            self.conn.execute(
                "DELETE FROM notes WHERE run_id = ?1 AND step_idx = ?2 AND rater = ?3",
                params![run_id, step, rater],
            )
        } else {
            self.conn.execute(
                "INSERT INTO notes (run_id, step_idx, rater, text, created_at)
                 VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                 ON CONFLICT (run_id, step_idx, rater) DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
                params![run_id, step, rater, text],
            )
        };
        match written {
            Ok(_) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(!text.is_empty())
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e.into())
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
}
