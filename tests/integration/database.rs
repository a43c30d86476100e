//! The database file in hostile places, through the real binary: a folder or a file the user
//! cannot write (reading commands read it, change nothing and create nothing beside it; writing
//! commands say why they cannot), a writer's log the reader must see, and eight processes
//! creating one database at once.
//!
//! A folder the user cannot write must really be one: CI runs as root, whom permission bits do
//! not stop. So as root the reading commands run as `nobody` (`setpriv`, util-linux) on files
//! root owns; as anyone else, on files and folders whose write bits are removed. Each test first
//! checks that the reader can indeed not write there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use trajan::store::Store;

use crate::common;
use crate::common::trajan;

fn must<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn fixture_traj() -> PathBuf {
    common::fixtures_dir("demo/swe-agent-0.x/demo__calc-1.traj")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A folder with a database ingested from the demo fixture, made unwritable for [`Reader`].
struct Place {
    dir: tempfile::TempDir,
    db: PathBuf,
    root: bool,
    /// The binary the reader runs: the build's, or a link to it (else a copy) in this folder.
    binary: PathBuf,
}

const NOBODY: u32 = 65534;

impl Place {
    fn new() -> Place {
        let dir = must(tempfile::tempdir(), "tempdir");
        let data = dir.path().join("data");
        must(std::fs::create_dir(&data), "mkdir");
        must(std::fs::copy(fixture_traj(), data.join("calc-1.traj")), "copy");
        let db = dir.path().join("t.db");
        let out = trajan(&db, &["ingest", &data.to_string_lossy()]);
        assert_eq!(out.status.code(), Some(0), "ingest: {}", text(&out).1);
        // Two reviewers' labels, for the agreement and the statistics.
        for (rater, what) in [("ann", "--unclassified"), ("bob", "--mode=missed_edit_location")] {
            let out = trajan(&db, &["label", "1", what, "--rater", rater]);
            assert_eq!(out.status.code(), Some(0), "label: {}", text(&out).1);
        }
        // The process's effective user owns what it creates.
        let root = std::os::unix::fs::MetadataExt::uid(&must(std::fs::metadata(&db), "stat")) == 0;
        let mut binary = PathBuf::from(env!("CARGO_BIN_EXE_trajan"));
        if root && !nobody_runs_the_build() {
            let here = dir.path().join("trajan");
            if std::fs::hard_link(&binary, &here).is_err() {
                must(std::fs::copy(&binary, &here), "copy the binary");
            }
            binary = here;
        }
        Place { dir, db, root, binary }
    }

    fn folder(&self) -> &Path {
        self.dir.path()
    }

    /// The folder: readable by everyone, writable by nobody but its owner (root), or by no one
    /// when the test is not root; with `writable_file`, the database file stays writable by the
    /// reader (only the folder stops it).
    fn lock(&self, writable_file: bool) {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &Path, mode: u32| must(std::fs::set_permissions(path, PermissionsExt::from_mode(mode)), "chmod");
        if self.root {
            mode(self.folder(), 0o755);
            mode(&self.db, 0o644);
            if writable_file {
                must(std::os::unix::fs::chown(&self.db, Some(NOBODY), Some(NOBODY)), "chown");
            }
        } else {
            mode(&self.db, if writable_file { 0o644 } else { 0o444 });
            mode(self.folder(), 0o555);
        }
        let probe = self.folder().join("probe");
        let touched = self.reader("touch").arg(&probe).output();
        assert!(touched.is_ok_and(|o| !o.status.success()), "the reader can write in {}", self.folder().display());
    }

    /// A command run by the reader: `nobody` when the test is root, else this user.
    fn reader(&self, program: &str) -> Command {
        if !self.root {
            return Command::new(program);
        }
        let mut cmd = Command::new("setpriv");
        cmd.args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}"), "--clear-groups".into()]).arg(program);
        cmd
    }

    /// `trajan --db DB ARGS` as the reader (no configuration: its HOME may be root's).
    fn read(&self, args: &[&str]) -> Output {
        self.read_at(&self.db, args)
    }

    fn read_at(&self, db: &Path, args: &[&str]) -> Output {
        let out = self
            .reader(&self.binary.to_string_lossy())
            .arg("--db")
            .arg(db)
            .args(args)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .output();
        must(out, "run trajan (is setpriv installed? util-linux)")
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = must(std::fs::read_dir(self.folder()), "read_dir")
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        names
    }

    fn unlock(&self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(self.folder(), PermissionsExt::from_mode(0o755));
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        // A folder without its write bit could not be removed.
        self.unlock();
    }
}

/// Whether `nobody` can run the built binary where it is (the build folder may be under a home
/// only root may enter).
fn nobody_runs_the_build() -> bool {
    static RUNS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RUNS.get_or_init(|| {
        let out = Command::new("setpriv")
            .args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}"), "--clear-groups".into()])
            .arg(env!("CARGO_BIN_EXE_trajan"))
            .arg("--version")
            .output();
        out.is_ok_and(|o| o.status.success())
    })
}

/// Every reading command, and the TUI up to where it needs a terminal: each reads the database
/// and the folder is left as it was.
fn every_reading_command_reads(place: &Place) {
    let before = place.entries();
    let cases: &[(&[&str], &str)] = &[
        (&["runs"], "calc-1"),
        (&["runs", "--failed", "--json"], "["),
        (&["show", "1"], "calc-1"),
        (&["show", "1", "--step", "0"], "step 0 · find_file"),
        (&["search", "ops.py"], "calc-1"),
        (&["labels"], "missed_edit_location"),
        (&["signals", "1"], "files edited"),
        (&["agreement"], "human:bob"),
        (&["stats", "--json"], "\"taxonomy\": \"refactoring@1.0\""),
        (&["export", "labels", "--format", "json"], "\"rater\": \"ann\""),
        (&["classify", "--llm", "--dry-run", "--model", "m", "calc-1"], "calc-1"),
    ];
    for (args, expected) in cases {
        let out = place.read(args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stdout.contains(expected), "{args:?}: {stdout}");
    }
    // The TUI opens the database before it looks for a terminal.
    for args in [&["tui"][..], &["open", "1"], &[]] {
        let (_, stderr) = text(&place.read(args));
        assert!(stderr.contains("the review TUI needs a terminal"), "{args:?}: {stderr}");
    }
    assert_eq!(place.entries(), before, "nothing is created beside the database");
}

/// A database in a folder the reader cannot write, in a file it cannot write either: read
/// without the log files SQLite would create.
#[test]
fn a_database_in_a_folder_the_user_cannot_write_is_read() {
    let place = Place::new();
    place.lock(false);
    every_reading_command_reads(&place);
}

/// The same folder with the database file writable by the reader: SQLite's read-only open
/// fails to create the log beside it, and the file is read as it is.
#[test]
fn a_writable_database_in_a_folder_the_user_cannot_write_is_read() {
    let place = Place::new();
    place.lock(true);
    every_reading_command_reads(&place);
}

/// Commands that write say why they cannot, naming the file: a file the user cannot write, or
/// one it could write in a folder where SQLite cannot create its log.
#[test]
fn writing_commands_say_the_database_cannot_be_written() {
    let data = fixture_traj().to_string_lossy().into_owned();
    let cases: &[&[&str]] = &[&["ingest", &data], &["label", "1", "--unclassified", "--rater", "ann"], &["classify"]];
    for writable_file in [false, true] {
        let place = Place::new();
        place.lock(writable_file);
        for args in cases {
            let out = place.read(args);
            let (_, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert_eq!(
                stderr,
                format!("error: {} cannot be written here (the file or its folder is read-only)\n", place.db.display()),
                "{args:?}, writable file: {writable_file}"
            );
        }
    }
}

/// While a writer has the database open, its committed changes may be only in the log: the
/// reader in an unwritable folder reads through the writer's log files and sees them.
#[test]
fn a_reader_sees_what_a_writer_has_committed_to_the_log() {
    let place = Place::new();
    let writer = must(rusqlite::Connection::open(&place.db), "open");
    must(writer.execute_batch("PRAGMA wal_autocheckpoint = 0; UPDATE runs SET agent = 'changed-agent';"), "update");
    assert!(Path::new(&format!("{}-wal", place.db.display())).exists(), "the change is in the log");
    place.lock(false);
    let out = place.read(&["show", "1", "--json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("changed-agent"), "{stdout}");
    drop(writer);
}

/// A log left with changes and without its shared-memory file, in a folder where the reader
/// cannot create one: refused in plain words rather than read stale.
#[test]
fn a_log_that_cannot_be_read_is_named() {
    let place = Place::new();
    let writer = must(rusqlite::Connection::open(&place.db), "open");
    must(writer.execute_batch("PRAGMA wal_autocheckpoint = 0; UPDATE runs SET agent = 'changed-agent';"), "update");
    // What a crash can leave: a copy of the file and its log, no shared memory.
    let copy = place.folder().join("copy.db");
    must(std::fs::copy(&place.db, &copy), "copy");
    must(std::fs::copy(format!("{}-wal", place.db.display()), format!("{}-wal", copy.display())), "copy log");
    drop(writer);
    place.lock(false);
    let (_, stderr) = text(&place.read_at(&copy, &["runs"]));
    let db = copy.display();
    assert_eq!(
        stderr,
        format!(
            "error: {db} cannot be read here: its write-ahead log ({db}-wal) holds changes, and reading them needs {db}-shm, which this folder does not let us create; open it once with write access to its folder\n"
        )
    );
}

/// In a folder everyone may write, a reader who cannot write the database file creates no log
/// files: files it created would be its own, and the owner's writer could not write through
/// them.
#[test]
fn a_reader_leaves_no_files_for_the_owner_to_trip_on() {
    use std::os::unix::fs::PermissionsExt;
    let place = Place::new();
    place.lock(false);
    // Then the folder is opened to everyone, the file still the owner's.
    must(std::fs::set_permissions(place.folder(), PermissionsExt::from_mode(0o1777)), "chmod");
    let before = place.entries();
    let out = place.read(&["runs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    assert_eq!(place.entries(), before);
    // The owner writes as before.
    must(std::fs::set_permissions(&place.db, PermissionsExt::from_mode(0o644)), "chmod");
    let out = trajan(&place.db, &["label", "1", "--unclassified", "--rater", "owner"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
}

/// Eight processes ingest into one new database at the same moment: each waits its turn, none
/// fails, every run is there and the database is sound.
#[test]
fn eight_ingests_into_one_new_database_all_succeed() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let db = dir.path().join("new.db");
    let children: Vec<_> = (0..8)
        .map(|i| {
            let folder = dir.path().join(format!("d{i}"));
            must(std::fs::create_dir(&folder), "mkdir");
            must(std::fs::copy(fixture_traj(), folder.join(format!("copy__run-{i}.traj"))), "copy");
            let child = common::command()
                .arg("--db")
                .arg(&db)
                .arg("ingest")
                .arg(&folder)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn();
            must(child, "spawn trajan")
        })
        .collect();
    for child in children {
        let out = must(child.wait_with_output(), "wait");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    }
    let store = must(Store::open_read_only(&db), "open");
    let runs = must(store.list_runs(Default::default()), "runs");
    let mut instances: Vec<String> = runs.into_iter().map(|r| r.instance_id).collect();
    instances.sort();
    assert_eq!(instances, (0..8).map(|i| format!("copy__run-{i}")).collect::<Vec<_>>());
    assert_eq!(must(store.integrity_check(), "integrity"), "ok");
}

/// Issue 24: a `--db` that is a symbolic link to nothing was followed and the database created
/// where it pointed. It is refused, naming both, and nothing is created; a link to a database is
/// followed as before.
#[test]
fn a_db_that_is_a_link_to_nothing_is_refused() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let target = dir.path().join("elsewhere/trajan.db");
    must(std::fs::create_dir_all(dir.path().join("elsewhere")), "mkdir");
    let link = dir.path().join("link.db");
    must(std::os::unix::fs::symlink(&target, &link), "symlink");
    let traj = fixture_traj();
    let out = trajan(&link, &["ingest", &traj.to_string_lossy()]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{} is a symbolic link to {}, which does not exist", link.display(), target.display())),
        "{err}"
    );
    assert!(!target.exists(), "nothing is created where the link points");
    // Once the database is there, the link to it is a way to name it.
    let out = trajan(&target, &["ingest", &traj.to_string_lossy()]);
    assert!(out.status.success(), "{:?}", text(&out));
    let out = trajan(&link, &["runs"]);
    assert!(out.status.success(), "{:?}", text(&out));
}
