//! The SQLite backend: one database file (the embedded default).
//!
//! One [`Sqlite`] per connection, opened to write ([`Sqlite::open`]) or to read
//! ([`Sqlite::open_read_only`]); what a file must hold to be opened is in `open.rs`. A write's
//! rows are `write.rs`'s, step texts compressed (`store::texts`); the search index (FTS5) is
//! built after the write (`search_index.rs`). Reads, labels, notes, copies and the writes'
//! transactions are `store::sql`'s, written once for both stores over `sql.rs`.

mod open;
mod schema;
mod search_index;
mod sql;
mod tables;
mod write;

use super::backend::{Admin, Backend};
use super::sql::write_path::Writing;
use super::texts;
use crate::error::StoreError;
use rusqlite::Connection;
use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use open::APPLICATION_ID;

pub struct Sqlite {
    conn: Connection,
    /// blob hash -> id, for blobs known to be stored. Cleared whenever blobs may have been
    /// removed (a source replaced) or a write rolled back.
    blob_ids: HashMap<[u8; 16], i64>,
    /// The file of a database opened read-only; `None` for a read-write one.
    read_only: Option<PathBuf>,
    /// The file (`None`: in memory).
    path: Option<PathBuf>,
    /// For a read-only store, the read-write one [`Sqlite::write_store`] opened on first use.
    writer: OnceCell<Box<Sqlite>>,
    /// Compresses step texts (made on the first write, then reused).
    packer: Option<texts::Packer>,
    /// The step texts of the run a live write wrote last, still on their way into chunks
    /// (`LiveWrites::live_steps`); written before the transaction commits.
    open_texts: Option<write::StepTexts>,
    /// A batch open, a source written in parts (`store::sql::write`).
    writing: Writing,
    /// Searches read `temp.pending_fts` too (`ensure_search_index`).
    pending_index: Cell<bool>,
    /// The `data_version` at which `temp.pending_fts` was built.
    pending_version: Cell<Option<i64>>,
}

impl Sqlite {
    /// Open a trajan database to write (see [`crate::store::Store::open`]).
    pub fn open(path: &Path) -> Result<Sqlite, StoreError> {
        open::read_write(path)
    }

    /// Open a trajan database to read (see [`crate::store::Store::open_read_only`]).
    pub fn open_read_only(path: &Path) -> Result<Sqlite, StoreError> {
        open::read_only(path)
    }

    pub fn open_in_memory() -> Result<Sqlite, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let tx = conn.transaction()?;
        for sql in schema::MIGRATIONS {
            tx.execute_batch(sql)?;
        }
        tx.pragma_update(None, "user_version", schema::MIGRATIONS.len() as i64)?;
        tx.pragma_update(None, "application_id", open::APPLICATION_ID)?;
        tx.commit()?;
        Ok(Sqlite::new(conn, None, false))
    }

    fn new(conn: Connection, path: Option<PathBuf>, read_only: bool) -> Sqlite {
        Sqlite {
            conn,
            blob_ids: HashMap::new(),
            read_only: path.clone().filter(|_| read_only),
            path,
            writer: OnceCell::new(),
            packer: None,
            open_texts: None,
            writing: Writing::default(),
            pending_index: Cell::new(false),
            pending_version: Cell::new(None),
        }
    }

    /// The store to write with: this one, or for a store opened read-only, a read-write store on
    /// the same file, opened the first time it is asked for.
    fn write_store(&self) -> Result<&Sqlite, StoreError> {
        let Some(path) = &self.read_only else { return Ok(self) };
        if let Some(writer) = self.writer.get() {
            return Ok(writer);
        }
        let writer = Sqlite::open(path)?;
        Ok(self.writer.get_or_init(|| Box::new(writer)))
    }
}

impl Admin for Sqlite {
    fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    fn writer(&self) -> Result<&dyn Backend, StoreError> {
        Ok(self.write_store()?)
    }

    fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn integrity_check(&self) -> Result<String, StoreError> {
        Ok(self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }

    fn stored_bytes(&self) -> Result<u64, StoreError> {
        let bytes: i64 = self.conn.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get(0),
        )?;
        Ok(bytes.max(0) as u64)
    }

    fn location(&self) -> String {
        self.path.as_ref().map_or_else(|| ":memory:".to_string(), |p| p.display().to_string())
    }
}

impl texts::Chunks for Connection {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        Ok(self.query_row("SELECT body FROM text_chunks WHERE id = ?1", [chunk_id], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests;
