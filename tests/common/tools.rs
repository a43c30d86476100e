//! Tests that need a program installed beside cargo (tmux for the TUI end to end, Chromium for
//! the HTML report) skip, and say so, on a machine without it, as the PostgreSQL tests do without
//! a server (`pg_server::server`). `.ci/run` installs both and sets `TRAJAN_REQUIRE_TOOLS=1`,
//! under which a missing program fails the test instead: CI never skips.
//!
//! Each skipped test leaves a record under cargo's temporary folder for integration tests; the
//! last test binary of `cargo test` (`tests/zz_skipped.rs`) prints them all at the end of the
//! run, with how to enable them, and removes them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

/// A program some tests need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Tmux,
    Chromium,
}

impl Tool {
    pub const ALL: [Tool; 2] = [Tool::Tmux, Tool::Chromium];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Tmux => "tmux",
            Tool::Chromium => "chromium",
        }
    }

    /// What the tests that need it do, and how to install it.
    pub fn how_to_enable(self) -> &'static str {
        match self {
            Tool::Tmux => {
                "the TUI end to end in a real terminal; install tmux (Debian/Ubuntu: apt-get install tmux; \
                 macOS: brew install tmux)"
            }
            Tool::Chromium => {
                "the HTML report in headless Chromium; install it (Debian: apt-get install chromium; \
                 Ubuntu: chromium-browser)"
            }
        }
    }

    fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the program is installed (on the PATH, and answers for tmux).
    pub fn installed(self) -> bool {
        match self {
            Tool::Tmux => Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success()),
            Tool::Chromium => {
                let Some(path) = std::env::var_os("PATH") else { return false };
                ["chromium", "chromium-browser"]
                    .iter()
                    .any(|name| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
            }
        }
    }
}

/// The variable under which a missing program is a failure, not a skip (`.ci/run` sets it).
pub const REQUIRE: &str = "TRAJAN_REQUIRE_TOOLS";

/// Where skipped tests are recorded for the summary at the end of the run: cargo's temporary
/// folder for integration tests, or `TRAJAN_SKIP_RECORDS` (the tests of this helper use their own).
pub fn records_dir() -> PathBuf {
    match std::env::var_os("TRAJAN_SKIP_RECORDS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tools"),
    }
}

/// Whether the running test can use `tool`. When it is not installed: under
/// `TRAJAN_REQUIRE_TOOLS=1` the test fails; otherwise the skip is recorded, said once per test
/// binary on standard error (past the harness's capture), and `false` returned: the test returns.
pub fn have(tool: Tool) -> bool {
    if tool.installed() {
        return true;
    }
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    if std::env::var(REQUIRE).is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!(
            "{test} needs {}, which is not installed, and {REQUIRE} is set (a missing tool is a failure): {}",
            tool.name(),
            tool.how_to_enable()
        );
    }
    record(tool, &test);
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: tests that need {} are skipped: it is not installed ({}); the list is printed at the end of `cargo test`",
            tool.name(),
            tool.how_to_enable()
        );
    });
    false
}

/// The record of one skipped test: a file named after the binary and the test, holding the tool.
fn record(tool: Tool, test: &str) {
    let dir = records_dir();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // The binary's stem is `NAME-HASH`: the test file's name.
    let file = binary.rsplit_once('-').map_or(binary.as_str(), |(name, _)| name).to_string();
    let name: String = format!("{file}::{test}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == ':' { c } else { '_' })
        .collect();
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(name), format!("{}\n{file}\n{test}\n", tool.name()));
}

/// A skipped test as recorded: (tool, test file, test).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    pub tool: &'static str,
    pub file: String,
    pub test: String,
}

impl Skipped {
    /// The test's file and name: `tests/tmux.rs: NAME` for a binary of its own, `tests/integration/
    /// MODULE.rs: NAME` for a test of the integration binary (`MODULE::NAME`).
    pub fn place(&self) -> String {
        match self.test.split_once("::").filter(|_| self.file == "integration") {
            Some((module, name)) => format!("tests/integration/{module}.rs: {name}"),
            None => format!("tests/{}.rs: {}", self.file, self.test),
        }
    }
}

/// The skips recorded in `dir`, sorted; every record is removed. With `still_missing`, only those
/// whose tool is still missing (a record left by an earlier run, on a machine that has the tool
/// since, is dropped).
pub fn take_records(dir: &Path, still_missing: bool) -> Vec<Skipped> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let _ = std::fs::remove_file(entry.path());
        let mut lines = text.lines();
        let (Some(tool), Some(file), Some(test)) = (lines.next(), lines.next(), lines.next()) else { continue };
        let Some(tool) = Tool::from_name(tool) else { continue };
        if !still_missing || !tool.installed() {
            found.push(Skipped { tool: tool.name(), file: file.to_string(), test: test.to_string() });
        }
    }
    found.sort();
    found
}

/// The summary printed at the end of a run that skipped tests, or `None` when none was skipped.
pub fn summary(skipped: &[Skipped], pg_skipped: bool) -> Option<String> {
    if skipped.is_empty() && !pg_skipped {
        return None;
    }
    let rule = "=".repeat(78);
    let mut out = format!("\n{rule}\nSKIPPED TESTS: these passed without running what they test\n");
    for tool in Tool::ALL {
        let tests: Vec<&Skipped> = skipped.iter().filter(|s| s.tool == tool.name()).collect();
        if tests.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{} test(s) need {}, which is not installed:\n", tests.len(), tool.name()));
        for s in tests {
            out.push_str(&format!("  {}\n", s.place()));
        }
        out.push_str(&format!("  to run them: {}\n", tool.how_to_enable()));
    }
    if pg_skipped {
        out.push_str(
            "\nthe PostgreSQL tests: no server was given; to run them set TRAJAN_TEST_PG to a server's admin URL \
             (.ci/postgres start DIR prints it)\n",
        );
    }
    out.push_str(&format!(
        "\n.ci/run installs tmux, Chromium and PostgreSQL and sets {REQUIRE}=1, under which a missing tool fails.\n{rule}\n"
    ));
    Some(out)
}

/// Run one test of the running test binary again on a machine without the tools (an empty
/// `PATH`), recording its skips in `records`, with `TRAJAN_REQUIRE_TOOLS=1` when `require`.
pub fn rerun_without_tools(test: &str, require: bool, records: &Path) -> std::process::Output {
    let exe = super::must(std::env::current_exe(), "the test binary");
    let empty = super::must(tempfile::tempdir(), "tempdir");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", test, "--test-threads=1"]).env("PATH", empty.path()).env("TRAJAN_SKIP_RECORDS", records);
    if require {
        cmd.env(REQUIRE, "1");
    } else {
        cmd.env_remove(REQUIRE);
    }
    super::must(cmd.output(), "rerun the test binary")
}

/// The check both tools' tests make of [`rerun_without_tools`] on `test` (which needs `tool`):
/// it passes, says it was skipped, and leaves a record naming it; required, it fails and says why.
pub fn assert_skipped_then_required(tool: Tool, test: &str) {
    let records = super::must(tempfile::tempdir(), "tempdir");
    let out = rerun_without_tools(test, false, records.path());
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "without {} the test must pass (skipped):\n{stdout}\n{stderr}", tool.name());
    assert!(stdout.contains(&format!("test {test} ... ok")), "{stdout}");
    assert!(stderr.contains(&format!("tests that need {} are skipped", tool.name())), "{stderr}");
    let skipped = take_records(records.path(), false);
    assert_eq!(skipped.len(), 1, "one record: {skipped:?}");
    assert_eq!((skipped[0].tool, skipped[0].test.as_str()), (tool.name(), test), "{skipped:?}");
    let summary = summary(&skipped, false).unwrap_or_default();
    let name = test.rsplit("::").next().unwrap_or(test);
    assert!(summary.contains(&format!(": {name}\n")), "{summary}");

    let records = super::must(tempfile::tempdir(), "tempdir");
    let out = rerun_without_tools(test, true, records.path());
    let both = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "required, a missing {} is a failure:\n{both}", tool.name());
    assert!(both.contains(&format!("needs {}, which is not installed, and {REQUIRE} is set", tool.name())), "{both}");
}
