//! Chunks read ahead in batches for a read that names many: a whole run's texts (`show`, the
//! run in full) name a chunk every few steps, thousands for a long run, and fetched one at a
//! time each was a round trip to the server. The rows are read first; the chunks they name are
//! then fetched [`BATCH`] at a time, in the order the rows need them, and handed out once each.

use super::Pg;
use crate::error::StoreError;
use crate::store::texts::Chunks;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

/// Chunks fetched in one statement (compressed, about 40 KB each: a few MB held at most).
const BATCH: usize = 64;

/// The chunks of a read, fetched ahead of their use.
pub(super) struct Ahead<'a> {
    pg: &'a Pg,
    /// Each chunk the rows name, once, in the order they name them.
    order: Vec<i64>,
    /// Where the next batch starts in `order`.
    next: Cell<usize>,
    fetched: RefCell<HashMap<i64, Vec<u8>>>,
}

impl<'a> Ahead<'a> {
    pub(super) fn new(pg: &'a Pg, named: impl IntoIterator<Item = i64>) -> Ahead<'a> {
        let mut seen = HashSet::new();
        let order = named.into_iter().filter(|id| seen.insert(*id)).collect();
        Ahead { pg, order, next: Cell::new(0), fetched: RefCell::new(HashMap::new()) }
    }

    /// Fetch the batch that begins with chunk `id`, when the rows name it and it is not fetched.
    fn fetch_from(&self, id: i64) -> Result<(), StoreError> {
        let next = self.next.get();
        let Some(at) = self.order[next..].iter().position(|c| *c == id).map(|p| p + next) else {
            return Ok(());
        };
        let batch = self.order[at..(at + BATCH).min(self.order.len())].to_vec();
        self.next.set(at + batch.len());
        let rows = self.pg.rows("SELECT id, body FROM text_chunks WHERE id = ANY($1)", &[&batch])?;
        let mut fetched = self.fetched.borrow_mut();
        for r in rows {
            use super::Cells;
            fetched.insert(r.int(0)?, r.bytes(1)?);
        }
        Ok(())
    }
}

impl Chunks for Ahead<'_> {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        if !self.fetched.borrow().contains_key(&chunk_id) {
            self.fetch_from(chunk_id)?;
        }
        match self.fetched.borrow_mut().remove(&chunk_id) {
            Some(body) => Ok(body),
            // Asked again, or not named by the rows: alone.
            None => self.pg.chunk(chunk_id),
        }
    }
}
