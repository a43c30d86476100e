//! SQLite storage: the only module with SQL.
//!
//! One [`Store`] per database file, opened to write ([`Store::open`]) or to read
//! ([`Store::open_read_only`]); what a file must hold to be opened is in `open.rs`. Writes go
//! through [`Store::write_source`], one transaction per source (or a savepoint of a batch,
//! [`Store::begin_batch`]); step texts are compressed (`texts.rs`); the search index is built
//! after the write (`search_index.rs`); reads are in `read.rs`. See docs/ARCHITECTURE.md for
//! the schema.

pub mod browse;
pub mod compare;
pub mod export;
mod grade;
mod identity;
pub mod labels;
mod link;
mod live;
pub mod notes;
mod open;
pub mod read;
mod schema;
mod search_index;
mod texts;
mod unmatched;
mod write;

use crate::error::StoreError;
use rusqlite::Connection;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use grade::ungraded;
pub use link::{Unjoined, is_layout_word};
pub use live::{LiveWrite, UNFINISHED};
pub use open::APPLICATION_ID;
pub use search_index::IndexStats;
pub use unmatched::{Joined, Orphan, Why};
pub use write::{SourceRecord, SourceWrite, WriteStats};

pub struct Store {
    conn: Connection,
    /// blob hash -> id, for blobs known to be committed. Cleared whenever blobs may have been
    /// removed (a source replaced) or a transaction failed.
    blob_ids: HashMap<[u8; 16], i64>,
    /// The file of a store opened read-only; `None` for a read-write one.
    read_only: Option<PathBuf>,
    /// For a read-only store, the read-write one [`Store::writer`] opened on first use.
    writer: OnceCell<Box<Store>>,
    /// Compresses step texts (made on the first write, then reused).
    packer: Option<texts::Packer>,
    /// A batch of sources is open ([`Store::begin_batch`]).
    batch: bool,
    /// The source being written whose earlier parts are committed ([`Store::commit_part`]).
    parted: Option<i64>,
    /// Searches read `temp.pending_fts` too ([`Store::ensure_search_index`]).
    pending_index: std::cell::Cell<bool>,
    /// The `data_version` at which `temp.pending_fts` was built.
    pending_version: std::cell::Cell<Option<i64>>,
}

impl Store {
    /// Open a trajan database to write, creating it when the file is new or empty and migrating
    /// it when an older trajan made it. A file that is not one is refused before anything is
    /// written to it: not SQLite ([`StoreError::NotADatabase`]), another program's SQLite
    /// database ([`StoreError::NotTrajan`]), or a newer trajan's ([`StoreError::TooNew`]); so is
    /// one this user cannot write ([`StoreError::ReadOnly`]). Safe when several processes create
    /// one new database at the same moment.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        open::read_write(path)
    }

    /// Open a trajan database to read (`SQLITE_OPEN_READONLY`): nothing is created, migrated or
    /// written, and a database in a folder this user cannot write is read all the same. Besides
    /// the files [`Store::open`] refuses, an empty file ([`StoreError::Empty`]) and a database
    /// an older trajan made ([`StoreError::TooOld`]) are refused.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        open::read_only(path)
    }

    pub fn open_in_memory() -> Result<Store, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let tx = conn.transaction()?;
        for sql in schema::MIGRATIONS {
            tx.execute_batch(sql)?;
        }
        tx.pragma_update(None, "user_version", schema::MIGRATIONS.len() as i64)?;
        tx.pragma_update(None, "application_id", open::APPLICATION_ID)?;
        tx.commit()?;
        Ok(Store::new(conn, None))
    }

    fn new(conn: Connection, read_only: Option<PathBuf>) -> Store {
        Store {
            conn,
            blob_ids: HashMap::new(),
            read_only,
            writer: OnceCell::new(),
            packer: None,
            batch: false,
            parted: None,
            pending_index: std::cell::Cell::new(false),
            pending_version: std::cell::Cell::new(None),
        }
    }

    /// Whether this store was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// The store to write with: this one, or for a store opened read-only, a read-write store on
    /// the same file, opened the first time it is asked for (the TUI reads read-only and writes
    /// only when the reviewer saves a label). Its error says why the file cannot be written.
    pub fn writer(&self) -> Result<&Store, StoreError> {
        let Some(path) = &self.read_only else { return Ok(self) };
        if let Some(writer) = self.writer.get() {
            return Ok(writer);
        }
        let writer = Store::open(path)?;
        Ok(self.writer.get_or_init(|| Box::new(writer)))
    }

    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// `PRAGMA integrity_check`: "ok" when the database is sound.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        Ok(self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    /// Fold the write-ahead log into the main file (used before measuring its size).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_edit_texts;
#[cfg(test)]
mod tests_reingest;
#[cfg(test)]
mod tests_texts;
