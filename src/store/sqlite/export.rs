//! Reads for the exports from SQLite: a run whole, the tables a row at a time.

use super::{Sqlite, collect};
use crate::error::StoreError;
use crate::model::Message;
use crate::store::backend::Exports;
use crate::store::browse::{EDIT_TEXT, EditText};
use crate::store::export::{EDIT_TABLE_ROW, EditTableRow, RunRest, STEP_TABLE_ROW, StepTableRow, edit_of};
use crate::store::read::{RunRow, SUMMARY_SELECT};
use crate::store::texts;

impl Exports for Sqlite {
    fn run_rest(&self, run_id: i64) -> Result<RunRest, StoreError> {
        let (metadata, best_attempt) =
            self.conn.query_row("SELECT metadata, best_attempt FROM runs WHERE id = ?1", [run_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let mut stmt = self.conn.prepare(
            "SELECT b.role, b.content, b.extra FROM history h JOIN blobs b ON b.id = h.blob_id
             WHERE h.run_id = ?1 ORDER BY h.pos",
        )?;
        let history = stmt
            .query_map([run_id], |r| Ok(Message { role: r.get(0)?, content: r.get(1)?, extra: r.get(2)? }))?
            .collect::<Result<_, _>>()?;
        let mut stmt = self.conn.prepare(&format!("SELECT {EDIT_TEXT} FROM edits WHERE run_id = ?1 ORDER BY id"))?;
        let rows = collect(&mut stmt, [run_id], EditText::from_row)?;
        let mut cache = texts::ChunkCache::default();
        let edits = rows
            .into_iter()
            .map(|(edit, place)| Ok(edit_of(edit.filled(place, &mut cache, &self.conn)?)))
            .collect::<Result<_, StoreError>>()?;
        Ok(RunRest { history, metadata, best_attempt, edits })
    }

    /// Every run, in id order.
    fn run_table(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!("{SUMMARY_SELECT} ORDER BY r.id"))?;
        collect(&mut stmt, [], RunRow::from_row)
    }

    /// Every step of every run, in run and step order, handed to `each` one at a time (the texts
    /// of a large database are never all in memory); `each` returns false to stop.
    fn each_step(&self, each: &mut dyn FnMut(StepTableRow) -> bool) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {STEP_TABLE_ROW} FROM steps s JOIN runs r ON r.id = s.run_id JOIN step_texts t ON t.step_id = s.id
             ORDER BY s.run_id, s.idx"
        ))?;
        let mut rows = stmt.query([])?;
        // Consecutive steps share a chunk: each chunk is decompressed once.
        let mut cache = texts::ChunkCache::default();
        while let Some(r) = rows.next()? {
            if !each(StepTableRow::from_row(r, &mut cache, &self.conn)?) {
                break;
            }
        }
        Ok(())
    }

    /// Every edit, in run and edit order.
    fn edit_table(&self) -> Result<Vec<EditTableRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {EDIT_TABLE_ROW} FROM edits e JOIN runs r ON r.id = e.run_id ORDER BY e.run_id, e.id"
        ))?;
        let rows = collect(&mut stmt, [], EditTableRow::from_row)?;
        let mut cache = texts::ChunkCache::default();
        rows.into_iter()
            .map(|(mut row, place)| {
                row.diff = cache.edit(&self.conn, place)?.diff;
                Ok(row)
            })
            .collect()
    }
}
