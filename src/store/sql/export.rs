//! Reads for the exports, on either store: a run whole, the tables a row at a time.

use super::{Sql, args};
use crate::error::StoreError;
use crate::model::Message;
use crate::store::backend::Exports;
use crate::store::browse::{EDIT_TEXT, EditText};
use crate::store::export::{EDIT_TABLE_ROW, EditTableRow, RunRest, STEP_TABLE_ROW, StepTableRow, edit_of};
use crate::store::read::{RunRow, SUMMARY_SELECT};
use crate::store::texts::ChunkCache;

/// Steps read per query by `each_step`: the texts of a large database are never all in memory
/// (nor a PostgreSQL result's rows).
const PAGE: i64 = 512;

impl<S: Sql> Exports for S {
    fn run_rest(&self, run_id: i64) -> Result<RunRest, StoreError> {
        let (metadata, best_attempt) =
            self.one("SELECT metadata, best_attempt FROM runs WHERE id = ?1", &args![run_id], |r| {
                Ok((r.opt_text(0)?, r.opt_flag(1)?))
            })?;
        let history = self.rows(
            "SELECT b.role, b.content, b.extra FROM history h JOIN blobs b ON b.id = h.blob_id
             WHERE h.run_id = ?1 ORDER BY h.pos",
            &args![run_id],
            |m| Ok(Message { role: m.text(0)?, content: m.text(1)?, extra: m.opt_text(2)? }),
        )?;
        let edits = self.rows(
            &format!("SELECT {EDIT_TEXT} FROM edits WHERE run_id = ?1 ORDER BY id"),
            &args![run_id],
            EditText::from_row,
        )?;
        let named = edits.iter().filter_map(|(_, place)| place.chunk_id()).collect();
        let edits = self.with_chunks(named, |chunks| {
            let mut cache = ChunkCache::default();
            edits
                .into_iter()
                .map(|(edit, place)| Ok(edit_of(edit.filled(place, &mut cache, chunks)?)))
                .collect::<Result<_, StoreError>>()
        })?;
        Ok(RunRest { history, metadata, best_attempt, edits })
    }

    fn run_table(&self) -> Result<Vec<RunRow>, StoreError> {
        self.rows(&format!("{SUMMARY_SELECT} ORDER BY r.id"), &[], RunRow::from_row)
    }

    fn each_step(&self, each: &mut dyn FnMut(StepTableRow) -> bool) -> Result<(), StoreError> {
        let sql = format!(
            "SELECT {STEP_TABLE_ROW} FROM steps s JOIN runs r ON r.id = s.run_id JOIN step_texts t ON t.step_id = s.id
             WHERE (s.run_id, s.idx) > (?1, ?2) ORDER BY s.run_id, s.idx LIMIT ?3"
        );
        // Consecutive steps share a chunk: each chunk is decompressed once.
        let mut cache = ChunkCache::default();
        let mut after = (i64::MIN, i64::MIN);
        loop {
            let (mut read, mut stop) = (0, false);
            self.each(&sql, &args![after.0, after.1, PAGE], &mut |r| {
                read += 1;
                if stop {
                    return Ok(());
                }
                after = (r.int(0)?, r.int(2)?);
                stop = !each(StepTableRow::from_row(r, &mut cache, self)?);
                Ok(())
            })?;
            if stop || read < PAGE {
                return Ok(());
            }
        }
    }

    fn edit_table(&self) -> Result<Vec<EditTableRow>, StoreError> {
        let rows = self.rows(
            &format!("SELECT {EDIT_TABLE_ROW} FROM edits e JOIN runs r ON r.id = e.run_id ORDER BY e.run_id, e.id"),
            &[],
            EditTableRow::from_row,
        )?;
        let mut cache = ChunkCache::default();
        rows.into_iter()
            .map(|(mut row, place)| {
                row.diff = cache.edit(self, place)?.diff;
                Ok(row)
            })
            .collect()
    }
}
