//! SQLite storage: the only module with SQL.
//!
//! One [`Store`] per database file. Writes go through [`Store::write_source`], one transaction
//! per source; reads are in `read.rs`. See docs/ARCHITECTURE.md for the schema.

pub mod browse;
pub mod labels;
mod link;
pub mod read;
mod schema;
mod write;

use crate::error::StoreError;
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::Path;

pub use write::{SourceRecord, SourceWrite, WriteStats};

pub struct Store {
    conn: Connection,
    /// blob hash -> id, for blobs known to be committed. Cleared whenever blobs may have been
    /// removed (a source replaced) or a transaction failed.
    blob_ids: HashMap<[u8; 16], i64>,
}

impl Store {
    /// Open (or create) a trajan database. A file that is not one is refused before anything is
    /// written to it: not SQLite ([`StoreError::NotADatabase`]), another program's SQLite
    /// database ([`StoreError::NotTrajan`]), or a newer trajan's ([`StoreError::TooNew`]).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        Store::init(conn, path).map_err(|e| match e {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::NotADatabase => {
                StoreError::NotADatabase(path.to_path_buf())
            }
            e => e,
        })
    }

    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory()?, Path::new(":memory:"))
    }

    fn init(conn: Connection, path: &Path) -> Result<Store, StoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // Read before any pragma below writes to the file (WAL changes its header).
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == 0 {
            let foreign: bool = conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name NOT LIKE 'sqlite_%')",
                [],
                |r| r.get(0),
            )?;
            if foreign {
                return Err(StoreError::NotTrajan(path.to_path_buf()));
            }
        } else if version > schema::MIGRATIONS.len() as i64 {
            return Err(StoreError::TooNew { found: version, known: schema::MIGRATIONS.len() as i64 });
        }
        // Larger pages suit long observations (fewer overflow pages); only takes effect on a new file.
        conn.pragma_update(None, "page_size", 16384)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "cache_size", -128_000)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.pragma_update(None, "wal_autocheckpoint", 8192)?;
        let mut store = Store { conn, blob_ids: HashMap::new() };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let known = schema::MIGRATIONS.len() as i64;
        let found: i64 = self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if found > known {
            return Err(StoreError::TooNew { found, known });
        }
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(found as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
            tx.commit()?;
        }
        Ok(())
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
