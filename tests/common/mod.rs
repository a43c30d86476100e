//! Helpers shared by the integration tests: the one runner of the binary (`run`: the reviewer's
//! environment shut out), the fixtures read from a long path (`places`), and the bad-input cases.
//!
//! A bad-input case builds a temporary folder holding one known-good SWE-agent trajectory plus the
//! input under test, and a database in a separate temporary folder (so the database is never
//! ingested itself).

#![allow(dead_code, unused_imports)] // each test file uses a different subset

mod places;
mod run;
pub mod tools;
pub use places::*;
pub use run::*;

#[path = "../../src/testkit/pg_server.rs"]
pub mod pg_server;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use tempfile::TempDir;
use trajan::error::IngestError;
use trajan::ingest::pipeline::{self, Options, Report, Silent, UnitResult};
use trajan::model::Format;
use trajan::store::Store;
use trajan::store::read::RunFilter;

/// The file name of the known-good trajectory; its instance id is the name without `.traj`.
pub const GOOD_NAME: &str = "good__one-1.traj";
pub const GOOD_INSTANCE: &str = "good__one-1";
/// A word that only occurs in the good trajectory's observation.
pub const GOOD_WORD: &str = "goodmarkerword";

/// A small valid SWE-agent 0.x trajectory with one step.
pub fn swe_agent_traj(observation: &str) -> String {
    serde_json::json!({
        "trajectory": [{
            "action": "ls",
            "observation": observation,
            "thought": "t",
            "response": "t",
            "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/r\"}"
        }],
        "history": [],
        "info": {"exit_status": "submitted"}
    })
    .to_string()
}

pub fn good_traj() -> String {
    swe_agent_traj(&format!("hello world {GOOD_WORD}"))
}

pub fn must<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// A folder with the good trajectory in it, and a database path outside it.
pub struct Case {
    _dir: TempDir,
    _db_dir: TempDir,
    /// The folder, canonical (ingest reports canonical absolute paths).
    pub root: PathBuf,
    pub db: PathBuf,
}

impl Case {
    pub fn new() -> Case {
        let dir = must(tempfile::tempdir(), "tempdir");
        let db_dir = must(tempfile::tempdir(), "tempdir");
        let root = must(std::fs::canonicalize(dir.path()), "canonicalize");
        let db = db_dir.path().join("trajan.db");
        let case = Case { _dir: dir, _db_dir: db_dir, root, db };
        case.write(GOOD_NAME, good_traj().as_bytes());
        case
    }

    /// Write a file under the folder; returns its path as ingest reports it.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            must(std::fs::create_dir_all(parent), "create_dir_all");
        }
        must(std::fs::write(&path, bytes), "write");
        path
    }

    pub fn good_path(&self) -> PathBuf {
        self.root.join(GOOD_NAME)
    }

    pub fn open(&self) -> Store {
        must(Store::open(&self.db), "open store")
    }

    /// Ingest the whole folder through the library.
    pub fn ingest(&self) -> (Report, Store) {
        let mut store = self.open();
        let report = pipeline::ingest(&mut store, std::slice::from_ref(&self.root), &Options::default(), &Silent);
        (report, store)
    }

    /// Run the `trajan` binary with this case's database.
    pub fn cli(&self, args: &[&std::ffi::OsStr]) -> Output {
        trajan(&self.db, args)
    }
}

/// The path an error is about.
pub fn error_path(e: &IngestError) -> &Path {
    e.path()
}

pub fn result_path(r: &UnitResult) -> &Path {
    match r {
        UnitResult::Ingested { path, .. } | UnitResult::Unchanged { path, .. } | UnitResult::Skipped { path, .. } => {
            path
        }
        UnitResult::Failed(e) => error_path(e),
    }
}

/// The one result about `path` (fails when there is none or several).
pub fn result_for<'a>(report: &'a Report, path: &Path) -> &'a UnitResult {
    let found: Vec<&UnitResult> = report.results.iter().filter(|r| result_path(r) == path).collect();
    assert_eq!(found.len(), 1, "expected exactly one result for {}: {:#?}", path.display(), report.results);
    found[0]
}

/// The error for `path`, displayed; fails unless that unit failed.
pub fn failure_for(report: &Report, path: &Path) -> String {
    match result_for(report, path) {
        UnitResult::Failed(e) => e.to_string(),
        other => panic!("expected {} to fail, got {other:#?}", path.display()),
    }
}

/// The good trajectory was ingested (first time) or recognised as unchanged (later), with no
/// warnings.
pub fn assert_good(report: &Report, case: &Case, first_time: bool) {
    match result_for(report, &case.good_path()) {
        UnitResult::Ingested { format, stats, warnings, .. } if first_time => {
            assert_eq!(*format, Format::SweAgent);
            assert_eq!((stats.runs, stats.steps), (1, 1));
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        UnitResult::Unchanged { warnings, .. } if !first_time => assert!(warnings.is_empty(), "{warnings:?}"),
        other => panic!("good file: unexpected result (first time: {first_time}): {other:#?}"),
    }
}

/// The instance ids of all stored runs, in list order.
pub fn instances(store: &Store) -> Vec<String> {
    must(store.list_runs(RunFilter::default()), "list_runs").into_iter().map(|r| r.instance_id).collect()
}

/// The source paths stored.
pub fn sources(store: &Store) -> BTreeSet<PathBuf> {
    must(store.source_hashes(), "source_hashes").into_keys().map(PathBuf::from).collect()
}

pub fn assert_integrity(store: &Store) {
    assert_eq!(must(store.integrity_check(), "integrity_check"), "ok");
}

/// The whole check for an input that must be rejected: ingest the folder twice; both times the
/// good file is kept (ingested, then unchanged), `bad` fails with the same message, nothing else
/// is reported, only the good run and source are stored and the database is sound. Returns the
/// error message for case-specific checks.
pub fn assert_rejected(case: &Case, bad: &Path) -> String {
    let (report, store) = case.ingest();
    assert_eq!(report.results.len(), 2, "{:#?}", report.results);
    assert_good(&report, case, true);
    let message = failure_for(&report, bad);
    assert!(
        message.starts_with(&format!("{}: ", bad.display())),
        "the error must start with the file path {}: {message}",
        bad.display()
    );
    assert!(report.has_problems());
    assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
    assert_eq!(sources(&store), BTreeSet::from([case.good_path()]));
    assert_integrity(&store);
    drop(store);

    let (again, store) = case.ingest();
    assert_eq!(again.results.len(), 2, "{:#?}", again.results);
    assert_good(&again, case, false);
    assert_eq!(failure_for(&again, bad), message, "the second ingest must report the same error");
    assert_eq!(instances(&store), vec![GOOD_INSTANCE], "no duplicate runs after a second ingest");
    assert_eq!(sources(&store), BTreeSet::from([case.good_path()]));
    assert_integrity(&store);
    message
}

/// `"<path>: line L, column C: ..."` -> (L, C), or a panic naming what was found.
pub fn line_column(message: &str, path: &Path) -> (usize, usize) {
    let prefix = format!("{}: line ", path.display());
    let rest =
        message.strip_prefix(&prefix).unwrap_or_else(|| panic!("expected {prefix:?}L, column C: ...; got {message:?}"));
    let (line, rest) = rest.split_once(", column ").unwrap_or_else(|| panic!("no column in {message:?}"));
    let (column, _) = rest.split_once(':').unwrap_or_else(|| panic!("no message after the column in {message:?}"));
    (
        line.parse().unwrap_or_else(|_| panic!("bad line in {message:?}")),
        column.parse().unwrap_or_else(|_| panic!("bad column in {message:?}")),
    )
}

/// Am I root? (Read from /proc so no libc dependency is needed.)
pub fn is_root() -> bool {
    let status = must(std::fs::read_to_string("/proc/self/status"), "read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|euid| euid == "0")
}

/// A PostgreSQL database of this test's own, with trajan's schema made by `trajan migrate`, or
/// `None` when no server was given (the test is skipped; see `pg_server`).
pub fn pg_database() -> Option<pg_server::TestDb> {
    pg_server::database(&|url| {
        let out = command().args(["--db", url, "migrate"]).output().map_err(|e| e.to_string())?;
        if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
    })
}
