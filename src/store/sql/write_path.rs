//! What a backend does itself when it writes sources ([`WritePath`]): the rest of `Writes`
//! (`write.rs`) and `LiveWrites` (`live.rs`) is written once over it.

use super::Sql;
use crate::error::StoreError;
use crate::store::write::{SourceWrite, StepsOf};
use std::cell::Cell;

/// What a store's writes keep between calls: whether a batch is open, and the source being
/// written whose earlier parts are committed (`commit_part`).
#[derive(Debug, Default)]
pub(in crate::store) struct Writing {
    pub(super) batch: Cell<bool>,
    pub(super) parted: Cell<Option<i64>>,
}

/// A commit a backend is told of ([`WritePath::committed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Committed {
    /// What a source's write (or a document's written as it is read) holds so far; it goes on.
    Part,
    /// A whole source (in a batch: its savepoint released).
    Source,
    /// A batch of sources.
    Batch,
}

/// What a backend does itself when it writes sources (`sqlite/write.rs`, `pg/write.rs`).
pub(in crate::store) trait WritePath: Sql + Sized {
    /// The state of this store's writes.
    fn writing(&self) -> &Writing;

    /// Writers of one source's path take turns until the transaction ends: nothing where one
    /// writer holds every lock (SQLite); PostgreSQL's advisory lock.
    fn lock_path(&self, _path: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// An id for a new run of the write: one no run, label, note or classification error has
    /// had, nor a run kept by this write.
    fn fresh_run_id(&mut self, w: &mut SourceWrite) -> Result<i64, StoreError>;

    /// The rows of these runs beside their own: history, steps with their texts and prompts,
    /// edits, and what search needs. `live`: the parts of a document written as it is read
    /// (steps after those written before, searchable once committed).
    fn write_rows(&mut self, parts: &[StepsOf<'_>], live: bool) -> Result<(), StoreError>;

    /// What the transaction needs written before it commits; `part`: the write goes on after.
    fn before_commit(&mut self, w: &SourceWrite, part: bool) -> Result<(), StoreError>;

    /// A commit happened.
    fn committed(&mut self, _what: Committed) {}

    /// The write of a source was given up (`batch`: the whole batch with it): what the backend
    /// keeps in memory for it goes.
    fn rolled_back(&mut self, batch: bool);

    /// What a source's rows are removed with that does not go with them by a foreign key
    /// (SQLite: its steps' entries in the full-text index).
    fn drop_source(&mut self, _source_id: i64) -> Result<(), StoreError> {
        Ok(())
    }

    /// Give run `from` the id `to` (free), with the rows that name it.
    fn rekey_run(&mut self, from: i64, to: i64) -> Result<(), StoreError>;

    /// `LiveWrites::limit_cache`: nothing where the server holds the pages.
    fn limit_pages(&self, kib: i64) -> Result<i64, StoreError> {
        Ok(kib)
    }
}

/// The transaction's work so far committed, the write going on.
pub(super) fn commit_going_on<S: WritePath>(s: &mut S, w: &SourceWrite) -> Result<(), StoreError> {
    s.before_commit(w, true)?;
    s.commit()?;
    s.committed(Committed::Part);
    Ok(())
}
