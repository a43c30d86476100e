//! The binary end to end on the project's own fixtures: demo, idempotent and replacing
//! ingests, run lookup, output to a closed pipe.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn trajan(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trajan"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("TRAJAN_DB")
        .output()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"))
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"))
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn demo_lists_every_fixture_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_trajan")).arg("demo").output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    for instance in [
        "demo__calc-1",
        "demo__calc-2",
        "demo__calc-3",
        "demo__empty-1",
        "demo__events-list",
        "demo__mini-1",
        "demo__mini-2",
        "demo__oh-1",
        "demo__retry-1",
    ] {
        assert!(stdout.contains(instance), "{instance} missing from:\n{stdout}");
    }
    assert!(stdout.contains("12 runs"), "{stdout}");
}

#[test]
fn fixture_outcomes_join_their_runs() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    assert_eq!(trajan(&db, &["ingest", &fixtures().to_string_lossy()]).status.code(), Some(0));
    let runs = stdout_json(&trajan(&db, &["runs", "--json"]));
    let resolved = |instance: &str| -> Vec<Value> {
        runs.as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["instance_id"] == instance)
            .map(|r| r["resolved"].clone())
            .collect()
    };
    // calc-1: harness report resolved; calc-2: its patch did not apply.
    assert_eq!(resolved("demo__calc-1"), vec![Value::Bool(true)]);
    assert_eq!(resolved("demo__calc-2"), vec![Value::Bool(false)]);
    // mini-1: a flat report.json beside the trajectory.
    assert_eq!(resolved("demo__mini-1"), vec![Value::Bool(false)]);
    // RetryAgent: both attempts are runs.
    assert_eq!(resolved("demo__retry-1").len(), 2);
    // The 1.0 run takes its model from its replay config; its prediction (preds.json, dict form)
    // agrees and joins.
    let calc3 = runs.as_array().into_iter().flatten().find(|r| r["instance_id"] == "demo__calc-3").cloned();
    assert_eq!(calc3.as_ref().map(|r| r["model"].clone()), Some(Value::from("demo-model")));
    assert_eq!(calc3.as_ref().map(|r| r["format_version"].clone()), Some(Value::from("1.0")));
    let detail = stdout_json(&trajan(&db, &["show", "demo__calc-3", "--step", "1", "--json"]));
    assert_eq!(detail["edit_list"][0]["kind"], "windowed_edit");
    assert_eq!(detail["edit_list"][0]["status"], "applied");
    // An OpenHands event list in one file.
    let events = stdout_json(&trajan(&db, &["show", "demo__events-list", "--json"]));
    assert_eq!(events["steps"], 2);
    assert!(events["step_list"][0]["flags"].as_array().is_some_and(|f| f.iter().any(|x| x == "error")));
}

#[test]
fn ingest_is_idempotent_and_a_changed_file_replaces_its_runs() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    let traj = data.join("demo__x-1.traj");
    let write = |obs: &str| {
        let doc = serde_json::json!({
            "trajectory": [{"action": "ls", "observation": obs, "thought": "look", "response": "look",
                            "state": {"working_dir": "/r"}, "execution_time": 0.1}],
            "history": [], "info": {"exit_status": "submitted"}
        });
        std::fs::write(&traj, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    };
    write("first version");
    let first = trajan(&db, &["ingest", &data.to_string_lossy()]);
    assert!(String::from_utf8_lossy(&first.stderr).contains("ingested 1 (runs 1, steps 1"));
    let again = trajan(&db, &["ingest", &data.to_string_lossy()]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("ingested 0 (runs 0") && stderr.contains("unchanged 1"), "{stderr}");

    write("second version with more words");
    let replaced = trajan(&db, &["ingest", &data.to_string_lossy()]);
    assert_eq!(replaced.status.code(), Some(0));
    let runs = stdout_json(&trajan(&db, &["runs", "--json"]));
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "replaced, not added");
    let old = stdout_json(&trajan(&db, &["search", "first version", "--json"]));
    assert_eq!(old.as_array().map(Vec::len), Some(0));
    let new = stdout_json(&trajan(&db, &["search", "second version", "--json"]));
    assert_eq!(new.as_array().map(Vec::len), Some(1));
}

#[test]
fn runs_are_named_by_id_or_unique_instance() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &["ingest", &fixtures().to_string_lossy()]);
    let detail = stdout_json(&trajan(&db, &["show", "demo__calc-1", "--step", "2", "--json"]));
    assert_eq!(detail["step_list"].as_array().map(Vec::len), Some(1));
    assert_eq!(detail["step_list"][0]["index"], 2);
    assert_eq!(detail["edit_list"][0]["status"], "rejected_by_linter");
    assert_eq!(detail["edit_list"][0]["lint_codes"], serde_json::json!(["F821"]));

    let ambiguous = trajan(&db, &["show", "demo__retry-1"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&ambiguous.stderr).contains("names 2 runs"));
    // An interrupted run: no steps, no exit status.
    let empty = trajan(&db, &["show", "demo__empty-1", "--step", "0"]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("has no steps"));
    let summary = stdout_json(&trajan(&db, &["show", "demo__empty-1", "--json"]));
    assert_eq!(summary["steps"], 0);
    assert!(summary["exit_status"].is_null());
    let missing = trajan(&db, &["show", "no-such-run"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run matches"));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &["ingest", &fixtures().to_string_lossy()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_trajan"))
        .arg("--db")
        .arg(&db)
        .args(["show", "demo__calc-2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // Close the reading end before the program writes.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
