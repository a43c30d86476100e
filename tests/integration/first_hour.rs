//! The README's walk-through of a reviewer's first hour (`## A reviewer's first hour`): every
//! command of its block is run, as written, by `sh` in a folder where `fixtures/` is the
//! repository's and `trajan` is this build's binary; each must succeed and do what the README
//! says it does.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The commands of the walk-through's code block, comments removed.
fn walkthrough() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let section = readme
        .split("\n## A reviewer's first hour\n")
        .nth(1)
        .unwrap_or_else(|| panic!("the README has no section `## A reviewer's first hour`"));
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("the walk-through has no ```sh block"));
    block.lines().map(|l| l.split("   #").next().unwrap_or(l).trim().to_string()).filter(|l| !l.is_empty()).collect()
}

#[test]
fn every_command_of_the_first_hour_runs_and_does_what_it_says() {
    let commands = walkthrough();
    assert!(commands.len() >= 6, "{commands:?}");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(common::fixtures(), dir.path().join("fixtures")).unwrap_or_else(|e| panic!("{e}"));
    // `trajan` on the PATH is this build's binary, run as `common::command` runs it.
    let bin = Path::new(env!("CARGO_BIN_EXE_trajan"));
    let path = format!(
        "{}:{}",
        bin.parent().map(|p| p.display().to_string()).unwrap_or_default(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut outputs = Vec::new();
    for line in &commands {
        assert!(line.starts_with("trajan "), "a command that is not trajan's: {line}");
        let probe = common::command();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(line).current_dir(dir.path()).env("PATH", &path);
        for (k, v) in probe.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.output().unwrap_or_else(|e| panic!("{line}: {e}"));
        let text = common::both(&out);
        assert!(out.status.success(), "`{line}` failed:\n{text}");
        outputs.push((line.clone(), String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    let said = |what: &str| {
        outputs.iter().find(|(l, _)| l.contains(what)).map(|(_, o)| o.clone()).unwrap_or_else(|| panic!("no `{what}`"))
    };
    let failed = said("runs --failed");
    assert!(failed.contains("demo__calc-2") && failed.contains("2 runs"), "{failed}");
    assert!(said("--step 1").contains("refused_by_tool"), "step 1 is the edit the tool refused");
    let labels = said("labels demo__calc-2");
    assert!(labels.contains("[human me") && labels.contains("[heuristic"), "{labels}");
    let stats = said("stats");
    assert!(stats.contains("mode:missed_edit_location") && stats.contains("Resolve rates"), "{stats}");
    let html = std::fs::read_to_string(dir.path().join("first-hour.html")).unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("demo__calc-2") && html.contains("old string never in the file"), "the report");
}
