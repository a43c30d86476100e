//! `trajan compare` through the binary: the JSON of the three SWE-agent runs of marshmallow-1867
//! in the corpus (one instance under three configurations), the same with the task's gold patch
//! ingested, and what the command refuses.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::common;
use crate::common::trajan;

fn replays() -> PathBuf {
    common::fixtures_dir("corpus/swe-agent-replays")
}

fn ingest(db: &Path, paths: &[&Path]) {
    let mut args = vec!["ingest"];
    let paths: Vec<String> = paths.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    args.extend(paths.iter().map(String::as_str));
    let out = trajan(db, &args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

fn compare_json(db: &Path, runs: &[&str]) -> Value {
    let mut args = vec!["compare"];
    args.extend(runs);
    args.push("--json");
    let out = trajan(db, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn three_configurations_of_one_instance_align_step_for_step() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    ingest(&db, &[&replays()]);
    let c = compare_json(&db, &["1", "2", "3"]);
    // The default configuration first looks around and installs (ls, open setup.py, pip
    // install): three rows the others leave empty; from creating reproduce.py on, every step of
    // the three runs is on one row.
    let rows = c["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 14);
    assert_eq!(rows[0], json!([0, null, null]));
    assert_eq!(rows[2], json!([2, null, null]));
    for (r, row) in rows.iter().enumerate().skip(3) {
        let i = r as i64;
        assert_eq!(row, &json!([i, i - 3, i - 3]), "row {r}");
    }
    assert_eq!(c["divergences"], json!([{"row": 0, "end": 3}]));
    assert_eq!(c["gold_patch"], json!(false));
    assert_eq!(c["runs"][0]["files_viewed"], json!(["setup.py", "src/marshmallow/fields.py"]));
    assert_eq!(c["runs"][1]["files_edited"], json!(["reproduce.py", "src/marshmallow/fields.py"]));
    // One file, one hunk, the same in all three submissions.
    let patches = c["patches"].as_array().cloned().unwrap_or_default();
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0]["path"], "src/marshmallow/fields.py");
    assert_eq!(patches[0]["runs"], json!([true, true, true]));
    assert_eq!(patches[0]["hunks"].as_array().map(Vec::len), Some(1));
    assert_eq!(patches[0]["hunks"][0]["runs"], json!([true, true, true]));
    assert_eq!(patches[0]["gold"], Value::Null);
}

/// The task as the SWE-bench dataset has it (one record per line); the gold patch fixes the
/// rounding in `utils` instead of where the runs did.
const TASK: &str = r#"{"repo": "marshmallow-code/marshmallow", "instance_id": "marshmallow-code__marshmallow-1867", "base_commit": "bfd2593d4b416122e30cdefe0c72d322ef471611", "patch": "diff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py\n--- a/src/marshmallow/fields.py\n+++ b/src/marshmallow/fields.py\n@@ -1114,7 +1114,7 @@ def _serialize(self, value, attr, obj, **kwargs):\n         if value is None:\n             return None\n         base_unit = dt.timedelta(**{self.precision: 1})\n-        return int(value.total_seconds() / base_unit.total_seconds())\n+        return utils.timedelta_to_microseconds(value) // utils.timedelta_to_microseconds(base_unit)\n \n     def _deserialize(self, value, attr, data, **kwargs):\n         try:\ndiff --git a/src/marshmallow/utils.py b/src/marshmallow/utils.py\n--- a/src/marshmallow/utils.py\n+++ b/src/marshmallow/utils.py\n@@ -300,3 +300,9 @@ def resolve_field_instance(cls_or_instance):\n         return cls_or_instance\n+\n+\n+def timedelta_to_microseconds(value: dt.timedelta) -> int:\n+    return (value.days * (24 * 3600) + value.seconds) * 1000000 + value.microseconds\n", "test_patch": "", "problem_statement": "TimeDelta serialization precision", "hints_text": "", "created_at": "2021-03-04T10:55:49Z", "version": "3.0", "FAIL_TO_PASS": "[\"tests/test_fields.py::TestFieldSerialization::test_timedelta_field\"]", "PASS_TO_PASS": "[]", "environment_setup_commit": "bfd2593d4b416122e30cdefe0c72d322ef471611"}"#;

#[test]
fn submissions_are_compared_with_the_gold_patch_file_by_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let task = dir.path().join("swe-bench.jsonl");
    std::fs::write(&task, format!("{TASK}\n")).unwrap_or_else(|e| panic!("{e}"));
    ingest(&db, &[&replays(), &task]);
    let c = compare_json(&db, &["2", "3"]);
    assert_eq!(c["gold_patch"], json!(true));
    let patches = c["patches"].as_array().cloned().unwrap_or_default();
    let paths: Vec<&str> = patches.iter().filter_map(|p| p["path"].as_str()).collect();
    assert_eq!(paths, ["src/marshmallow/fields.py", "src/marshmallow/utils.py"]);
    // fields.py: touched by both runs and the gold patch, but with other changes: the runs'
    // hunk is theirs alone, the gold hunk the gold patch's alone.
    assert_eq!((&patches[0]["runs"], &patches[0]["gold"]), (&json!([true, true]), &json!(true)));
    let hunks: Vec<(Value, Value)> = patches[0]["hunks"]
        .as_array()
        .map(|h| h.iter().map(|h| (h["runs"].clone(), h["gold"].clone())).collect())
        .unwrap_or_default();
    assert_eq!(hunks, vec![(json!([true, true]), json!(false)), (json!([false, false]), json!(true))]);
    // utils.py: only the gold patch.
    assert_eq!((&patches[1]["runs"], &patches[1]["gold"]), (&json!([false, false]), &json!(true)));
}

#[test]
fn compare_needs_two_runs_known_and_a_terminal_for_the_view() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    ingest(&db, &[&replays()]);
    let one = trajan(&db, &["compare", "1"]);
    assert_eq!(one.status.code(), Some(2), "one run is refused");
    assert!(
        String::from_utf8_lossy(&one.stderr).contains("two runs or more"),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    // One instance id compares every run of it.
    let instance = compare_json(&db, &["marshmallow-code__marshmallow-1867"]);
    assert_eq!(instance, compare_json(&db, &["1", "2", "3"]), "the instance's three runs");
    let none = trajan(&db, &["compare", "no__such-1", "--json"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no run of instance no__such-1"));
    let unknown = trajan(&db, &["compare", "1", "99", "--json"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("99"), "{}", String::from_utf8_lossy(&unknown.stderr));
    // Not on a terminal: the view cannot open, and says what scripts use.
    let piped = trajan(&db, &["compare", "1", "2"]);
    assert!(!piped.status.success());
    assert!(String::from_utf8_lossy(&piped.stderr).contains("--json"), "{}", String::from_utf8_lossy(&piped.stderr));
}

#[test]
fn runs_of_different_instances_are_compared_with_a_warning() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let other = common::fixtures_dir("corpus/swe-agent-1.0/6e44b9__sweagenttestrepo-1c2844.traj");
    ingest(&db, &[&replays()]);
    ingest(&db, &[&other]);
    let out = trajan(&db, &["compare", "1", "4", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: runs of 2 different instances"), "{err}");
    assert!(err.contains("the gold patch is left out"), "{err}");
    // Runs of one instance: no warning.
    let out = trajan(&db, &["compare", "1", "2", "--json"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn each_runs_onset_and_blame_are_in_the_json() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    ingest(&db, &[&replays()]);
    // The heuristic judges all three (their outcome is unknown: counted as failed runs here).
    let out = trajan(&db, &["classify", "--include-unknown"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let label = |run: &str, rater: &str, extra: &[&str]| {
        let mut args = vec!["--rater", rater, "label", run, "--mode", "context_flooding"];
        args.extend(extra);
        let out = trajan(&db, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    // Run 1: a reviewer's onset, then an adjudication's (the one the run is read by, before the
    // heuristic's); run 2: the task's failure; run 3: the heuristic's alone.
    label("1", "bob", &["--onset", "2", "--blame", "agent"]);
    label("1", "cat", &["--onset", "5", "--blame", "agent", "--adjudicate"]);
    label("2", "cat", &["--blame", "task", "--adjudicate"]);
    let c = compare_json(&db, &["1", "2", "3"]);
    let run = |k: usize| &c["runs"][k];
    assert_eq!(
        (&run(0)["onset"], &run(0)["blame"], &run(0)["judged_by"]),
        (&json!(5), &json!("agent"), &json!("adjudication:cat"))
    );
    let judgements = run(0)["judgements"].as_array().cloned().unwrap_or_default();
    let sources: Vec<&Value> = judgements.iter().map(|j| &j["source"]).collect();
    assert_eq!(sources, [&json!("heuristic"), &json!("human"), &json!("adjudication")], "{judgements:?}");
    assert_eq!(judgements[1], json!({"source": "human", "rater": "bob", "onset": 2, "blame": "agent"}));
    assert_eq!((&run(1)["onset"], &run(1)["blame"]), (&Value::Null, &json!("task")));
    assert_eq!(run(2)["judged_by"], json!("heuristic"));
    assert_eq!((&run(2)["onset"], &run(2)["blame"]), (&run(2)["judgements"][0]["onset"], &json!("agent")));
    assert!(run(2)["onset"].is_u64(), "{}", run(2));
}
