//! Storage: the only module with SQL.
//!
//! The rest of the program talks to one [`Store`], whatever holds the data: an SQLite file
//! (`sqlite/`, the embedded default) or a PostgreSQL server shared by a team (`pg/`). The
//! interface is the traits of `backend.rs` (typed in, typed out: no SQL, row or transaction
//! crosses it); a `Store` dereferences to the backend it opened, so `store.list_runs(..)` reads
//! the same on both. The queries both answer alike are written once (`sql/`, over the `Sql`
//! trait each backend implements). What both compute alike lives beside the traits: the read models
//! (`read.rs`, `browse.rs`, `labels.rs`, `export.rs`), how outcomes join runs (`link.rs`), how a
//! test log is graded (`grade.rs`), how step texts are packed (`texts.rs`). See
//! docs/ARCHITECTURE.md for the schema.

pub mod backend;
pub mod browse;
pub mod cells;
pub mod copy;
pub mod export;
mod grade;
mod identity;
pub mod labels;
mod link;
pub use link::ROW_VERDICT;
pub mod notes;
pub mod pg;
pub mod read;
mod sql;
mod sqlite;
pub mod terms;
#[cfg(test)]
mod tests;
mod texts;
mod unmatched;
mod write;

use crate::error::StoreError;
use std::path::Path;

pub use backend::{Backend, IndexStats};
pub use grade::ungraded;
pub use link::{Unjoined, is_layout_word, label_names_model, same_model};
pub use sqlite::APPLICATION_ID;
pub use texts::{Cut, SHOWN};
pub use unmatched::{Joined, Orphan, Why};
pub use write::{LiveWrite, SourceRecord, SourceWrite, UNFINISHED, WriteStats};

/// A trajan database, opened through the backend that holds it (see the module).
pub struct Store {
    backend: Box<dyn Backend>,
}

impl std::ops::Deref for Store {
    type Target = dyn Backend;

    fn deref(&self) -> &(dyn Backend + 'static) {
        &*self.backend
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut (dyn Backend + 'static) {
        &mut *self.backend
    }
}

impl Store {
    /// Open a trajan database file to write, creating it when the file is new or empty and
    /// migrating it when an older trajan made it. A file that is not one is refused before
    /// anything is written to it: not SQLite ([`StoreError::NotADatabase`]), another program's
    /// SQLite database ([`StoreError::NotTrajan`]), or a newer trajan's ([`StoreError::TooNew`]);
    /// so is one this user cannot write ([`StoreError::ReadOnly`]). Safe when several processes
    /// create one new database at the same moment.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Ok(Store::of(sqlite::Sqlite::open(path)?))
    }

    /// Open a trajan database file to read (`SQLITE_OPEN_READONLY`): nothing is created,
    /// migrated or written, and a database in a folder this user cannot write is read all the
    /// same. Besides the files [`Store::open`] refuses, an empty file ([`StoreError::Empty`])
    /// and a database an older trajan made ([`StoreError::TooOld`]) are refused.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Ok(Store::of(sqlite::Sqlite::open_read_only(path)?))
    }

    /// A new SQLite database in memory (tests, benchmarks).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Ok(Store::of(sqlite::Sqlite::open_in_memory()?))
    }

    /// Connect to a trajan database on a PostgreSQL server to write (its schema made by
    /// `trajan migrate`: [`StoreError::Unmigrated`] otherwise).
    pub fn connect(url: &pg::url::PgUrl) -> Result<Store, StoreError> {
        Ok(Store::of(pg::Pg::open(url)?))
    }

    /// Connect to read: every transaction of the connection is read-only; a save asks
    /// [`Admin::writer`](backend::Admin::writer) for a connection that writes.
    pub fn connect_read_only(url: &pg::url::PgUrl) -> Result<Store, StoreError> {
        Ok(Store::of(pg::Pg::open_read_only(url)?))
    }

    /// Open the database `at` names: a file, or a PostgreSQL server.
    pub fn open_at(at: &Location, read_only: bool) -> Result<Store, StoreError> {
        match (at, read_only) {
            (Location::File(path), false) => Store::open(path),
            (Location::File(path), true) => Store::open_read_only(path),
            (Location::Server(url), false) => Store::connect(url),
            (Location::Server(url), true) => Store::connect_read_only(url),
        }
    }

    fn of(backend: impl Backend + 'static) -> Store {
        Store { backend: Box::new(backend) }
    }
}

/// Where a database is: an SQLite file, or a PostgreSQL server (`postgres://...`, `host=...`).
#[derive(Debug, Clone)]
pub enum Location {
    File(std::path::PathBuf),
    Server(Box<pg::url::PgUrl>),
}

impl Location {
    /// The database user a server's URL logs in as, when it names one; `None` for a file.
    pub fn login(&self) -> Option<String> {
        match self {
            Location::File(_) => None,
            Location::Server(url) => url.user().map(str::to_string),
        }
    }

    /// `--db` as given: a `postgres://` or `postgresql://` URL or libpq `key=value` pairs
    /// (`host=db dbname=trajan`), else a file's path.
    pub fn parse(text: &std::ffi::OsStr) -> Result<Location, StoreError> {
        match text.to_str() {
            Some(t) if pg::url::is_url(t) => Ok(Location::Server(Box::new(pg::url::PgUrl::parse(t)?))),
            _ => Ok(Location::File(std::path::PathBuf::from(text))),
        }
    }

    /// How it is shown in messages (a URL without its password).
    pub fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Server(url) => url.shown().to_string(),
        }
    }
}
