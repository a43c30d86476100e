//! Library errors. Every ingest error names the file and, where known, the position in it.

use std::fmt;
use std::path::PathBuf;

/// Where in a file a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// 1-based line and column, as serde_json reports them.
    LineColumn { line: usize, column: usize },
    /// 1-based line of a line-oriented file (JSONL).
    Line(usize),
    /// 0-based byte offset.
    Byte(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::LineColumn { line, column } => write!(f, "line {line}, column {column}"),
            Location::Line(line) => write!(f, "line {line}"),
            Location::Byte(b) => write!(f, "byte {b}"),
        }
    }
}

/// A size for messages: `4.0 GiB (4294967296 bytes)`, `512 bytes`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {} ({n} bytes)", UNITS[unit])
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: empty file", path.display())]
    Empty { path: PathBuf },
    #[error("{}: {}", path.display(), describe(location, message))]
    Parse { path: PathBuf, location: Option<Location>, message: String },
    #[error("{}: not a known trajectory or test-output format: {detail}", path.display())]
    UnknownFormat { path: PathBuf, detail: String },
    #[error("{}: database error: {source}", path.display())]
    Store {
        path: PathBuf,
        #[source]
        source: StoreError,
    },
}

fn describe(location: &Option<Location>, message: &str) -> String {
    match location {
        Some(l) => format!("{l}: {message}"),
        None => message.to_string(),
    }
}

impl IngestError {
    /// The file (or folder) the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            IngestError::Io { path, .. }
            | IngestError::Empty { path }
            | IngestError::Parse { path, .. }
            | IngestError::UnknownFormat { path, .. }
            | IngestError::Store { path, .. } => path,
        }
    }

    pub fn parse(path: &std::path::Path, location: Option<Location>, message: impl Into<String>) -> Self {
        IngestError::Parse { path: path.to_path_buf(), location, message: message.into() }
    }

    /// A serde_json error, with its line and column.
    pub fn json(path: &std::path::Path, err: &serde_json::Error) -> Self {
        let location = (err.line() > 0).then(|| Location::LineColumn { line: err.line(), column: err.column() });
        IngestError::parse(path, location, json_message(err))
    }

    /// The same error with a remark added to its message (parse errors; others as they are).
    pub fn with_note(self, note: &str) -> Self {
        match self {
            IngestError::Parse { path, location, message } => {
                IngestError::Parse { path, location, message: format!("{message} ({note})") }
            }
            other => other,
        }
    }

    /// A shape error: the JSON parsed but a field has the wrong type or is missing.
    pub fn shape(path: &std::path::Path, message: impl Into<String>) -> Self {
        IngestError::parse(path, None, message)
    }
}

/// serde_json appends " at line L column C" to its messages; we report the position ourselves.
pub fn json_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("database schema version {found} is newer than this trajan understands ({known})")]
    TooNew { found: i64, known: i64 },
    /// The file is not an SQLite database at all.
    #[error("{} is not a trajan database (not SQLite)", .0.display())]
    NotADatabase(PathBuf),
    /// An SQLite database with tables of its own and no trajan schema.
    #[error("{} is not a trajan database (an SQLite database of another program)", .0.display())]
    NotTrajan(PathBuf),
    /// Opened to read, the file holds no trajan schema yet (an empty file or SQLite database).
    #[error("{} is an empty database: nothing has been ingested into it", .0.display())]
    Empty(PathBuf),
    /// Opened to read, a database an older trajan made: reading commands never migrate it.
    #[error(
        "{} was made by an older trajan (schema version {found}; this one reads {known}); a command that writes to it (ingest, classify, label, import-labels) upgrades it",
        .path.display()
    )]
    TooOld { path: PathBuf, found: i64, known: i64 },
    /// A symbolic link to nothing: following it would create a database wherever it points.
    #[error(
        "{} is a symbolic link to {}, which does not exist: not followed (name the database itself, or create it where the link points)",
        .link.display(), .target.display()
    )]
    DanglingLink { link: PathBuf, target: PathBuf },
    /// Opened to write, the file or its folder cannot be written by this user.
    #[error("{} cannot be written here (the file or its folder is read-only)", .0.display())]
    ReadOnly(PathBuf),
    /// Opened to read in a folder that cannot be written, a write-ahead log with changes that
    /// SQLite cannot read without creating its shared-memory file beside it.
    #[error(
        "{} cannot be read here: its write-ahead log ({}-wal) holds changes, and reading them needs {}-shm, which this folder does not let us create; open it once with write access to its folder",
        .0.display(), .0.display(), .0.display()
    )]
    WalUnreadable(PathBuf),
    #[error("no run matches {0:?}")]
    NoSuchRun(String),
    #[error("{query:?} names {count} runs; use a numeric run id ({ids})")]
    AmbiguousRun { query: String, count: usize, ids: String },
    #[error("cannot encode for storage: {0}")]
    Encode(String),
    /// A batch of sources lost to an error that rolled its whole transaction back.
    #[error("the batch of files written with this one was rolled back: {0}")]
    BatchRolledBack(String),
    /// Stored data that cannot be decoded (a damaged compressed text).
    #[error("the database is damaged: {0}")]
    Corrupt(String),
    /// A value stored by name that this trajan does not know (a run's format, a label's source,
    /// an edit's kind): the database is damaged or another program wrote it. Never read as a
    /// default.
    #[error("the database is damaged: {value:?} is not a known {what}")]
    UnknownName { what: &'static str, value: String },
    /// A write given out of order (steps before their run, an end describing other runs).
    #[error("inconsistent write: {0}")]
    Inconsistent(String),
    /// A PostgreSQL URL that cannot be read (shown without its password).
    #[error("{url}: {why}")]
    BadUrl { url: String, why: String },
    /// No connection to the PostgreSQL server (host and port, then why; never the password).
    #[error("cannot connect to PostgreSQL at {at} ({url}): {why}")]
    Connect { at: String, url: String, why: String },
    /// TLS asked for by the URL cannot be set up (its certificates).
    #[error("TLS: {0}")]
    Tls(String),
    /// What the PostgreSQL server answered, or that the connection was lost.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// A PostgreSQL database without trajan's schema, or with an older one: only `trajan
    /// migrate` changes the schema.
    #[error(
        "{url} has trajan schema version {found} (this trajan needs {known}): run `trajan --db URL migrate` as a role that owns the database"
    )]
    Unmigrated { url: String, found: i64, known: i64 },
    /// The target of a copy already holds data.
    #[error("{0} already holds data that is not a copy of the source: a copy goes into an empty store")]
    NotEmpty(String),
    /// Two stores compared after a copy differ.
    #[error("table {table} differs: {why}")]
    Differs { table: String, why: String },
    /// A PostgreSQL database whose `trajan_schema` table is another program's.
    #[error("{0} is not a trajan database")]
    NotTrajanServer(String),
    /// A copy into PostgreSQL by a role that may not advance the id sequences the copy sets at its
    /// end: said before a row is copied (it failed at the end, after the whole copy).
    #[error(
        "{role} may not set the id sequences a copy advances ({missing}): copy as the database's owner, or have the owner run `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}` (README: A shared store, Roles)"
    )]
    CopyPrivileges { role: String, missing: String },
    /// A value the store refuses (a note on a step the run does not have, a note too long).
    #[error("{0}")]
    Invalid(String),
}

/// What a caught panic said (its message when it has one): a bug reported, never the process
/// ended for one input.
pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The error of a unit whose reading panicked (a bug): the unit fails, the others go on.
pub fn internal(path: &std::path::Path, panic: &Box<dyn std::any::Any + Send>) -> IngestError {
    IngestError::parse(
        path,
        None,
        format!("internal error while reading this file (please report it): {}", panic_text(panic)),
    )
}
