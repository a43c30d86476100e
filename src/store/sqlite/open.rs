//! Opening a database file: what it holds (trajan's, empty, another program's, a newer trajan's),
//! read-only or read-write, the connection's pragmas, and the migrations, applied once however
//! many processes open a new file at the same moment.

use super::{Sqlite, schema};
use crate::error::StoreError;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `PRAGMA application_id` of a trajan database: "TRJN" in ASCII.
pub const APPLICATION_ID: i32 = i32::from_be_bytes(*b"TRJN");

/// How long a connection waits for another holding the lock it needs.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// What an opened file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// No schema: a new or empty file, or an SQLite database with nothing in it.
    Empty,
    /// A trajan database with `version` migrations applied; `marked` when it carries
    /// [`APPLICATION_ID`] (databases made before the mark are known by their version and tables).
    Trajan { version: i64, marked: bool },
}

/// Reads only: the header's application id and version, and the names of the tables, in one
/// read transaction (a process creating the schema at the same moment commits it all at once;
/// read statement by statement, its version could be seen before and its tables after).
fn identify(conn: &Connection, path: &Path) -> Result<Found, StoreError> {
    if conn.is_autocommit() {
        let snapshot = conn.unchecked_transaction()?;
        let found = identify_in(&snapshot, path);
        snapshot.rollback()?;
        return found;
    }
    identify_in(conn, path)
}

fn identify_in(conn: &Connection, path: &Path) -> Result<Found, StoreError> {
    let id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let known = schema::MIGRATIONS.len() as i64;
    let too_new = StoreError::TooNew { found: version, known };
    let not_trajan = StoreError::NotTrajan(path.to_path_buf());
    if id == APPLICATION_ID {
        return if version > known { Err(too_new) } else { Ok(Found::Trajan { version, marked: true }) };
    }
    if id != 0 {
        return Err(not_trajan);
    }
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<HashSet<String>, _>>()?;
    if names.is_empty() {
        return if version == 0 { Ok(Found::Empty) } else { Err(not_trajan) };
    }
    let has_tables_of = |migrations: usize| {
        schema::MIGRATIONS
            .iter()
            .take(migrations)
            .flat_map(|sql| schema::created_tables(sql))
            .all(|t| names.contains(t))
    };
    match version {
        v if (1..=known).contains(&v) && has_tables_of(v as usize) => Ok(Found::Trajan { version: v, marked: false }),
        v if v > known && has_tables_of(1) => Err(too_new),
        _ => Err(not_trajan),
    }
}

/// SQLite's "file is not a database" as the error that names the file.
fn named(path: &Path, e: StoreError) -> StoreError {
    match e {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == ErrorCode::NotADatabase => {
            StoreError::NotADatabase(path.to_path_buf())
        }
        e => e,
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// Settings of this connection only (nothing is written to the file).
fn connection_pragmas(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "cache_size", -crate::store::backend::CACHE_KIB)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}

/// Open to write: create the schema in a new or empty file, migrate a trajan database, refuse
/// anything else before writing to it.
pub(super) fn read_write(path: &Path) -> Result<Sqlite, StoreError> {
    // SQLite follows a link to nothing and creates the database there (`--db` named by a link
    // left behind): refused, naming both.
    if let Ok(target) = std::fs::read_link(path)
        && std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Err(StoreError::DanglingLink { link: path.to_path_buf(), target });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags)?;
    // Before the first statement: writers opening one file at once wait their turn.
    conn.busy_timeout(BUSY_WAIT)?;
    // SQLite opens a file the user may not write read-only, silently.
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(StoreError::ReadOnly(path.to_path_buf()));
    }
    // Read before any pragma below writes to the file (WAL changes its header). In a folder this
    // user cannot write, reading a WAL database fails: SQLite cannot create its log.
    let found = identify(&conn, path).map_err(|e| match e {
        StoreError::Sqlite(e) => named(path, read_only_folder(path, e)),
        e => e,
    })?;
    if found == Found::Empty {
        // Larger pages suit long observations (fewer overflow pages); only takes effect on a new file.
        conn.pragma_update(None, "page_size", 16384)?;
    }
    write_ahead_log(&conn).map_err(|e| read_only_folder(path, e))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 8192)?;
    connection_pragmas(&conn)?;
    if found != (Found::Trajan { version: schema::MIGRATIONS.len() as i64, marked: true }) {
        migrate(&mut conn, path)?;
    }
    Ok(Sqlite::new(conn, Some(path.to_path_buf()), false))
}

/// Switch to WAL. The switch needs the file to itself; when other processes open it at the same
/// moment it can fail busy without waiting on the busy handler, so it is tried again until the
/// busy timeout would have passed.
fn write_ahead_log(conn: &Connection) -> Result<(), rusqlite::Error> {
    let deadline = Instant::now() + BUSY_WAIT;
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Err(e) if is_busy(&e) && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            done => return done.map(drop),
        }
    }
}

/// A folder the user may not write: SQLite cannot create the write-ahead log beside the file.
fn read_only_folder(path: &Path, e: rusqlite::Error) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, ErrorCode::ReadOnly | ErrorCode::CannotOpen) => {
            StoreError::ReadOnly(path.to_path_buf())
        }
        _ => e.into(),
    }
}

/// Check what the file holds and apply the missing migrations in one IMMEDIATE transaction:
/// processes that found a new file at once apply the schema once (the first); the others see it
/// applied when they get the lock.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| read_only_folder(path, e))?;
    let version = match identify(&tx, path)? {
        Found::Empty => 0,
        Found::Trajan { version, .. } => version,
    };
    for sql in schema::MIGRATIONS.iter().skip(version as usize) {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", schema::MIGRATIONS.len() as i64)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}

/// Open to read (`SQLITE_OPEN_READONLY`): nothing is created, migrated or written. A trajan
/// database with the current schema only.
///
/// SQLite reads a WAL database through `FILE-wal` and `FILE-shm`, and a reader creates them when
/// they are missing. Where that cannot be done (a folder this user cannot write), or must not (a
/// file this user cannot write: files a reader creates belong to the reader, and the owner's
/// writer could not write through them afterwards), and no log holds changes, the file is the
/// whole database and is opened `immutable`: no lock, no file beside it.
pub(super) fn read_only(path: &Path) -> Result<Sqlite, StoreError> {
    let (conn, found) = if may_create_log(path) || log_files_exist(path) {
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(BUSY_WAIT)?;
        match identify(&conn, path) {
            // The folder cannot be written: SQLite could not create the log files.
            Err(StoreError::Sqlite(e)) if cannot_open_log(&e) => {
                drop(conn);
                immutable(path)?
            }
            found => (conn, found.map_err(|e| named(path, e))?),
        }
    } else {
        immutable(path)?
    };
    let known = schema::MIGRATIONS.len() as i64;
    match found {
        Found::Empty | Found::Trajan { version: 0, .. } => return Err(StoreError::Empty(path.to_path_buf())),
        Found::Trajan { version, .. } if version < known => {
            return Err(StoreError::TooOld { path: path.to_path_buf(), found: version, known });
        }
        Found::Trajan { .. } => {}
    }
    connection_pragmas(&conn)?;
    Ok(Sqlite::new(conn, Some(path.to_path_buf()), true))
}

/// Open `path` with `immutable=1` (nothing created beside it, no lock taken), unless a log holds
/// changes the file does not have.
fn immutable(path: &Path) -> Result<(Connection, Found), StoreError> {
    if log_has_content(path) {
        return Err(StoreError::WalUnreadable(path.to_path_buf()));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(immutable_uri(path), flags)?;
    let found = identify(&conn, path).map_err(|e| named(path, e))?;
    Ok((conn, found))
}

/// The errors SQLite gives when it cannot create the write-ahead log or its shared memory.
fn cannot_open_log(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, ErrorCode::ReadOnly | ErrorCode::CannotOpen))
}

/// `FILE` + `suffix` (`-wal`, `-shm`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether this user may write the database file (effective ids), hence create its log files.
fn may_create_log(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{Access, AtFlags, CWD, accessat};
        accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS).is_ok()
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
}

/// Both log files are there: a reader opens them as they are, creating nothing.
fn log_files_exist(path: &Path) -> bool {
    beside(path, "-wal").exists() && beside(path, "-shm").exists()
}

/// Whether `FILE-wal` exists with something in it (committed changes not yet in the file).
fn log_has_content(path: &Path) -> bool {
    // Unknown (unreadable metadata) counts as content: reading without the log could be stale.
    std::fs::metadata(beside(path, "-wal"))
        .map(|m| m.len() > 0)
        .unwrap_or_else(|e| e.kind() != std::io::ErrorKind::NotFound)
}

/// `file:PATH?immutable=1`, every byte outside a safe set percent-encoded (an absolute path
/// after an empty authority, `file:///...`, so a path starting `//` is not read as a host).
pub(super) fn immutable_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    let mut uri = String::from(if path.is_absolute() { "file://" } else { "file:" });
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}
