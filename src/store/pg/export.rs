//! Reads for the exports from PostgreSQL: a run whole, the tables a row at a time (steps read a
//! page at a time, so the texts of a large database are never all in memory).

use super::{Cells, Pg};
use crate::error::StoreError;
use crate::model::Message;
use crate::store::backend::Exports;
use crate::store::browse::{EDIT_TEXT, EditText};
use crate::store::export::{EDIT_TABLE_ROW, EditTableRow, RunRest, STEP_TABLE_ROW, StepTableRow, edit_of};
use crate::store::read::{RunRow, SUMMARY_SELECT};
use crate::store::texts;

/// Steps read per query by `each_step`.
const PAGE: i64 = 512;

impl Exports for Pg {
    fn run_rest(&self, run_id: i64) -> Result<RunRest, StoreError> {
        let r = self.one("SELECT metadata, best_attempt FROM runs WHERE id = $1", &[&run_id])?;
        let history = self
            .rows(
                "SELECT b.role, b.content, b.extra FROM history h JOIN blobs b ON b.id = h.blob_id
                 WHERE h.run_id = $1 ORDER BY h.pos",
                &[&run_id],
            )?
            .iter()
            .map(|m| Ok(Message { role: m.text(0)?, content: m.text(1)?, extra: m.opt_text(2)? }))
            .collect::<Result<_, StoreError>>()?;
        let mut cache = texts::ChunkCache::default();
        let edits = self
            .rows(&format!("SELECT {EDIT_TEXT} FROM edits WHERE run_id = $1 ORDER BY id"), &[&run_id])?
            .iter()
            .map(|row| {
                let (edit, place) = EditText::from_row(row)?;
                Ok(edit_of(edit.filled(place, &mut cache, self)?))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(RunRest { history, metadata: r.opt_text(0)?, best_attempt: r.opt_flag(1)?, edits })
    }

    fn run_table(&self) -> Result<Vec<RunRow>, StoreError> {
        self.rows(&format!("{SUMMARY_SELECT} ORDER BY r.id"), &[])?.iter().map(|r| RunRow::from_row(r)).collect()
    }

    fn each_step(&self, each: &mut dyn FnMut(StepTableRow) -> bool) -> Result<(), StoreError> {
        let sql = format!(
            "SELECT {STEP_TABLE_ROW} FROM steps s JOIN runs r ON r.id = s.run_id JOIN step_texts t ON t.step_id = s.id
             WHERE (s.run_id, s.idx) > ($1, $2) ORDER BY s.run_id, s.idx LIMIT $3"
        );
        let mut cache = texts::ChunkCache::default();
        let mut after = (i64::MIN, i64::MIN);
        loop {
            let rows = self.rows(&sql, &[&after.0, &after.1, &PAGE])?;
            for r in &rows {
                after = (r.int(0)?, r.int(2)?);
                if !each(StepTableRow::from_row(r, &mut cache, self)?) {
                    return Ok(());
                }
            }
            if (rows.len() as i64) < PAGE {
                return Ok(());
            }
        }
    }

    fn edit_table(&self) -> Result<Vec<EditTableRow>, StoreError> {
        let mut cache = texts::ChunkCache::default();
        self.rows(
            &format!("SELECT {EDIT_TABLE_ROW} FROM edits e JOIN runs r ON r.id = e.run_id ORDER BY e.run_id, e.id"),
            &[],
        )?
        .iter()
        .map(|r| {
            let (mut row, place) = EditTableRow::from_row(r)?;
            row.diff = cache.edit(self, place)?.diff;
            Ok(row)
        })
        .collect()
    }
}
