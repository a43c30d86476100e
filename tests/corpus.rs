//! The real-world corpus in fixtures/corpus, ingested by the real binary, checked against the
//! facts its MANIFEST.md lists.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn trajan<S: AsRef<std::ffi::OsStr>>(db: &Path, args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trajan"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"))
}

fn json(db: &Path, args: &[&str]) -> Value {
    let out = trajan(db, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

struct Ingested {
    _dir: tempfile::TempDir,
    db: PathBuf,
    runs: Vec<Value>,
}

fn ingest_args() -> Vec<String> {
    std::iter::once("ingest".to_string()).chain(common::corpus_paths()).collect()
}

fn ingest_corpus() -> Ingested {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("corpus.db");
    let out = trajan(&db, &ingest_args());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "ingest of the corpus must succeed:\n{stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    let runs = match json(&db, &["runs", "--json"]) {
        Value::Array(r) => r,
        other => panic!("runs --json is not an array: {other}"),
    };
    Ingested { _dir: dir, db, runs }
}

fn run<'a>(runs: &'a [Value], instance: &str) -> &'a Value {
    let found: Vec<&Value> = runs.iter().filter(|r| r["instance_id"] == instance).collect();
    assert_eq!(found.len(), 1, "exactly one run for {instance}");
    found[0]
}

#[test]
fn every_run_has_the_manifest_facts() {
    let c = ingest_corpus();
    // (instance, steps, exit status, resolved)
    let facts: &[(&str, i64, &str, Option<bool>)] = &[
        ("pydicom__pydicom-1458", 12, "submitted", None),
        ("marshmallow-code__marshmallow-1867", 13, "submitted", None),
        ("6e44b9__sweagenttestrepo-1c2844", 5, "submitted", None),
        ("pytest-dev__pytest-6202", 56, "submitted (exit_format)", Some(false)),
        // A llama run; the only summary naming this instance evaluated deepseek-v3.2: no verdict.
        ("pylint-dev__pylint-4604", 1, "exit_error", None),
        ("django__django-11163", 13, "Submitted", Some(true)),
        ("astropy__astropy-13033", 32, "Submitted", Some(false)),
        ("django__django-16560", 145, "Submitted", Some(false)),
        ("ponylang__ponyc-4595", 23, "finished", None),
        ("ponylang__ponyc-4593", 33, "finished", None),
    ];
    assert_eq!(c.runs.len(), facts.len() + 1, "one run per trajectory (plus ponyc-4588)");
    for (instance, steps, exit, resolved) in facts {
        let r = run(&c.runs, instance);
        assert_eq!(r["steps"], *steps, "{instance} steps");
        assert_eq!(r["exit_status"], *exit, "{instance} exit");
        assert_eq!(r["resolved"].as_bool(), *resolved, "{instance} resolved");
        for key in ["id", "format", "agent", "model", "edits", "cost", "source"] {
            assert!(r.get(key).is_some(), "{instance} lacks {key}");
        }
    }
    let r = run(&c.runs, "ponylang__ponyc-4588");
    assert_eq!(r["steps"], 49);
    assert!(r["exit_status"].as_str().is_some_and(|s| s.starts_with("RuntimeError: Agent reached maximum iteration")));

    let pydicom = run(&c.runs, "pydicom__pydicom-1458");
    assert!((pydicom["cost"].as_f64().unwrap_or(0.0) - 1.27).abs() < 0.005);
    // The 0.x trajectory names no model; the prediction beside it does.
    assert!(pydicom["model"].as_str().is_some_and(|m| m.starts_with("gpt4__swe-bench-dev-easy")));
    let django = run(&c.runs, "django__django-16560");
    assert!((django["cost"].as_f64().unwrap_or(0.0) - 1.44).abs() < 0.005);
}

#[test]
fn edits_and_rejections_match_the_manifest() {
    let c = ingest_corpus();
    // pydicom-1458: three consecutive lint-rejected edits, then an applied one.
    let id = run(&c.runs, "pydicom__pydicom-1458")["id"].to_string();
    let detail = json(&c.db, &["show", &id, "--json"]);
    let statuses: Vec<(i64, String)> = detail["edit_list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "windowed_edit" && e["path"].as_str().is_some_and(|p| p.ends_with("numpy_handler.py")))
        .map(|e| (e["step"].as_i64().unwrap_or(-1), e["status"].as_str().unwrap_or("").to_string()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (5, "rejected_by_linter".to_string()),
            (6, "rejected_by_linter".to_string()),
            (7, "rejected_by_linter".to_string()),
            (8, "applied".to_string()),
        ]
    );
    let rejected_steps: Vec<i64> = detail["step_list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["flags"].as_array().is_some_and(|f| f.iter().any(|x| x == "edit_rejected")))
        .filter_map(|s| s["index"].as_i64())
        .collect();
    assert_eq!(rejected_steps, vec![5, 6, 7]);

    // OpenHands: tool edit attempts per instance.
    for (instance, tool_edits) in
        [("ponylang__ponyc-4595", 2), ("ponylang__ponyc-4593", 11), ("ponylang__ponyc-4588", 16)]
    {
        let id = run(&c.runs, instance)["id"].to_string();
        let detail = json(&c.db, &["show", &id, "--json"]);
        let n = detail["edit_list"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["step"].is_i64() && e["kind"] != "shell_write")
            .count();
        assert_eq!(n, tool_edits, "{instance}");
    }
}

#[test]
fn outcomes_join_from_reports_and_summaries() {
    let c = ingest_corpus();
    let id = run(&c.runs, "django__django-16560")["id"].to_string();
    let detail = json(&c.db, &["show", &id, "--json"]);
    let failing: Vec<&Value> =
        detail["outcome"]["tests"].as_array().into_iter().flatten().filter(|t| t["passed"] == false).collect();
    assert_eq!(failing.len(), 1, "one PASS_TO_PASS regression");
    assert_eq!(failing[0]["group"], "PASS_TO_PASS");
    let failed = json(&c.db, &["runs", "--failed", "--json"]);
    let names: Vec<&str> = failed.as_array().into_iter().flatten().filter_map(|r| r["instance_id"].as_str()).collect();
    assert!(names.contains(&"pytest-dev__pytest-6202") && names.contains(&"django__django-16560"));
    assert!(!names.contains(&"django__django-11163"));
}

#[test]
fn search_finds_a_phrase_from_an_observation() {
    let c = ingest_corpus();
    let hits = json(&c.db, &["search", "Your changes have NOT been applied", "--json"]);
    let hits = hits.as_array().cloned().unwrap_or_default();
    let pydicom: Vec<i64> = hits
        .iter()
        .filter(|h| h["instance_id"] == "pydicom__pydicom-1458")
        .filter_map(|h| h["step"].as_i64())
        .collect();
    assert_eq!(pydicom, vec![5, 6, 7]);
    assert!(hits.iter().all(|h| h["snippet"].as_str().is_some_and(|s| s.contains('['))));
    // Restricted to one run.
    let id = run(&c.runs, "pydicom__pydicom-1458")["id"].to_string();
    let only = json(&c.db, &["search", "NOT been applied", "--run", &id, "--json"]);
    assert_eq!(only.as_array().map(Vec::len), Some(3));
}

#[test]
fn reingesting_the_corpus_adds_nothing() {
    let c = ingest_corpus();
    let out = trajan(&c.db, &ingest_args());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ingested 0 (runs 0"), "{stderr}");
    let again = json(&c.db, &["runs", "--json"]);
    assert_eq!(again.as_array().map(Vec::len), Some(c.runs.len()));
}
