//! The TUI's step view on PostgreSQL (the rest of its reads are `store::sql`'s): one round trip
//! for most keys, the step, its chunk's body unless this connection holds it (`chunks.rs`), and
//! whether it has edits.

use super::{Cells, Pg};
use crate::error::StoreError;
use crate::store::read::StepRow;
use crate::store::sql::read::STEP_WITH_TEXTS;
use crate::store::texts;
use std::cell::RefCell;

impl Pg {
    /// [`crate::store::sql::Sql::shown_step`] in one statement.
    pub(super) fn shown_step_at_once(&self, run_id: i64, index: i64) -> Result<Option<(StepRow, bool)>, StoreError> {
        let held = self.chunks.borrow().ids();
        let Some(r) = self.opt(
            &format!(
                "SELECT {STEP_WITH_TEXTS},
                        CASE WHEN t.chunk_id = ANY($3) THEN NULL ELSE c.body END,
                        EXISTS (SELECT 1 FROM edits e WHERE e.run_id = s.run_id AND e.step_idx = s.idx)
                 FROM steps s JOIN step_texts t ON t.step_id = s.id LEFT JOIN text_chunks c ON c.id = t.chunk_id
                 WHERE s.run_id = $1 AND s.idx = $2"
            ),
            &[&run_id, &index, &held],
        )?
        else {
            return Ok(None);
        };
        let body: Option<Vec<u8>> = r.try_get(17).map_err(super::column)?;
        let chunks = Given { pg: self, id: r.opt_int(15)?, body: RefCell::new(body) };
        if let (Some(id), Some(body)) = (chunks.id, chunks.body.borrow().as_deref()) {
            self.chunks.borrow_mut().keep(id, body);
        }
        let step = StepRow::from_row(&r, texts::within_of_row(&r, 10, &chunks, texts::SHOWN)?)?;
        Ok(Some((step, r.flag(18)?)))
    }
}

/// The server's chunks, one of which (`id`) a query already brought.
struct Given<'p> {
    pg: &'p Pg,
    id: Option<i64>,
    body: RefCell<Option<Vec<u8>>>,
}

impl texts::Chunks for Given<'_> {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        if self.id == Some(chunk_id)
            && let Some(body) = self.body.borrow_mut().take()
        {
            return Ok(body);
        }
        texts::Chunks::chunk(self.pg, chunk_id)
    }
}
