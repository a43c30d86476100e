//! Reviewers' notes on steps in PostgreSQL (`store::notes` says what a note is).

use super::{Cells, Pg, enc};
use crate::error::StoreError;
use crate::store::backend::Notes;
use crate::store::notes::{NoteRow, checked};

impl Notes for Pg {
    fn set_note(&self, run_id: i64, step: i64, rater: &str, text: &str) -> Result<bool, StoreError> {
        let steps = self.opt("SELECT step_count FROM runs WHERE id = $1", &[&run_id])?.map(|r| r.int(0)).transpose()?;
        let text = checked(text, run_id, step, steps)?;
        self.in_transaction_of(|pg| {
            if text.is_empty() {
                pg.exec("DELETE FROM notes WHERE run_id = $1 AND step_idx = $2 AND rater = $3", &[&run_id, &step, &enc(rater)])?;
            } else {
                // The run's identity goes with the note, so it follows the run through re-ingests.
                let who = super::identity::identities(pg, &[run_id])?.remove(&run_id);
                pg.exec(
                    "INSERT INTO notes (run_id, step_idx, rater, text, created_at,
                         run_source, run_instance, run_attempt, run_nth)
                     VALUES ($1, $2, $3, $4, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
                         $5, $6, $7, $8)
                     ON CONFLICT (run_id, step_idx, rater) DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
                    &[
                        &run_id,
                        &step,
                        &enc(rater),
                        &enc(text),
                        &who.as_ref().map(|w| enc(&w.source)),
                        &who.as_ref().map(|w| enc(&w.instance)),
                        &who.as_ref().and_then(|w| w.attempt),
                        &who.as_ref().map(|w| w.nth),
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
             WHERE ($1::bigint IS NULL OR n.run_id = $1) ORDER BY n.run_id, n.step_idx, n.rater",
            &[&run],
        )?
        .iter()
        .map(|r| NoteRow::from_row(r))
        .collect()
    }

    fn review_stamp(&self) -> Result<String, StoreError> {
        self.one(
            "SELECT (SELECT count(*)::text FROM labels) || ' ' || (SELECT coalesce(max(id), 0)::text FROM labels) || ' ' ||
                    (SELECT count(*)::text FROM notes) || ' ' || (SELECT coalesce(max(id), 0)::text FROM notes) || ' ' ||
                    (SELECT coalesce(max(created_at), '') FROM notes)",
            &[],
        )?
        .text(0)
    }
}
