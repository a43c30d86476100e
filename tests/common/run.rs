//! The one way the integration tests run the `trajan` binary: with the reviewer's own settings
//! shut out. A reviewer who runs `cargo test` may have a `config.toml`, `TRAJAN_DB`, `NO_COLOR`
//! or `COLUMNS` set; none of them may change a test's result.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// An empty folder that stands for `HOME` and `XDG_CONFIG_HOME` (so no `config.toml`, keymap or
/// theme of the user's is read). One per test process, under cargo's temporary folder for
/// integration tests (removed with `target/`).
pub fn empty_home() -> &'static Path {
    static HOME: OnceLock<std::path::PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        super::must(std::fs::create_dir_all(&dir), "create the empty home");
        dir
    })
}

/// `trajan` with the environment isolated: `HOME` and `XDG_CONFIG_HOME` an empty folder,
/// `TRAJAN_DB`, `NO_COLOR`, `COLUMNS`, `LINES` and `TRAJAN_RATER` unset. A test that needs one
/// of them sets it on the returned command.
pub fn command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trajan"));
    cmd.env("HOME", empty_home())
        .env("XDG_CONFIG_HOME", empty_home())
        .env_remove("TRAJAN_DB")
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .env_remove("TRAJAN_RATER");
    cmd
}

/// `trajan --db DB ARGS...`, isolated as [`command`].
pub fn trajan<S: AsRef<OsStr>>(db: &Path, args: &[S]) -> Output {
    super::must(command().arg("--db").arg(db).args(args).output(), "run trajan")
}

/// Standard output and standard error, one after the other.
pub fn both(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Standard output of a command that must succeed.
pub fn text<S: AsRef<OsStr> + std::fmt::Debug>(db: &Path, args: &[S]) -> String {
    let out = trajan(db, args);
    assert!(out.status.success(), "{args:?}: {}", both(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard output of a command that must succeed, as JSON.
pub fn json<S: AsRef<OsStr> + std::fmt::Debug>(db: &Path, args: &[S]) -> serde_json::Value {
    let out = trajan(db, args);
    assert!(out.status.success(), "{args:?}: {}", both(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}
