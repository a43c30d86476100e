//! The real-world corpus in fixtures/corpus, ingested by the real binary, checked against the
//! facts its MANIFEST.md lists.

use serde_json::Value;
use std::path::PathBuf;

use crate::common;
use crate::common::{json, trajan};

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

/// The run of `instance` read from the corpus file `rel`.
fn run_in<'a>(runs: &'a [Value], rel: &str, instance: &str) -> &'a Value {
    let source = common::corpus().join(rel).to_string_lossy().into_owned();
    let found: Vec<&Value> =
        runs.iter().filter(|r| r["instance_id"] == instance && r["source"].as_str() == Some(source.as_str())).collect();
    assert_eq!(found.len(), 1, "exactly one run for {instance} in {rel}");
    found[0]
}

#[test]
fn every_run_has_the_manifest_facts() {
    let c = ingest_corpus();
    // (instance, steps, exit status, resolved)
    let facts: &[(&str, i64, &str, Option<bool>)] = &[
        ("pydicom__pydicom-1458", 12, "submitted", None),
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
    let marshmallow =
        run_in(&c.runs, "swe-agent-1.0/marshmallow-code__marshmallow-1867.traj", "marshmallow-code__marshmallow-1867");
    assert_eq!((marshmallow["steps"].as_i64(), marshmallow["exit_status"].as_str()), (Some(13), Some("submitted")));
}

/// The whole corpus folder: every run, one per trajectory (a file of several instances gives
/// one each); metadata, READMEs, licences and the demonstration are skipped, not failed.
#[test]
fn the_whole_corpus_folder_ingests_with_every_run() {
    let c = ingest_corpus();
    // 3 bare mini-swe-agent lists, 3 mini-swe-agent-1, 3 OpenHands (multi-SWE-bench), 6 OpenDevin
    // 2024, 1 event list, 1 Java OpenHands, 2 resolver, pydicom, 2 SWE-agent 1.0, 2 SWE-agent
    // 1.1, 3 replays; 6 OpenHands V1 conversations, 1 Codex rollout, 34 aider sessions, 1
    // Moatless trajectory (tests/agents.rs checks them), 3 SWE-smith trajectories.
    assert_eq!(c.runs.len(), 72);
    let out = trajan(&c.db, &["ingest", "--verbose", &common::corpus().to_string_lossy()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let demo = common::corpus().join("swe-agent-demonstrations/function_calling_simple.traj");
    let line =
        format!("skipped: {}: a SWE-agent demonstration (only `history`): a prompt example, not a run", demo.display());
    assert!(stderr.lines().any(|l| l == line), "{stderr}");
    let metadata = common::corpus().join("openhands-2024/metadata.json");
    let line = format!("skipped: {}: not a known format (a JSON object with keys [Dataset, ", metadata.display());
    assert!(stderr.lines().any(|l| l.starts_with(&line)), "{stderr}");
    assert!(
        stderr.lines().last().is_some_and(|l| l.starts_with(
            "skipped, not inputs: 1 demonstration (a prompt example, not a run), 16 agent files not read (caches, \
             state, raw logs, summaries; --verbose names them), 1 JSON of no known format"
        )),
        "the summary comes last: {stderr}"
    );
}

/// MANIFEST: mini-swe-agent before `trajectory_format`: a bare list of messages.
#[test]
fn bare_mini_swe_agent_lists_have_their_turns() {
    let c = ingest_corpus();
    for (instance, turns) in [("github_issue", 10), ("early-2025-07", 10), ("local", 2)] {
        let r = run(&c.runs, instance);
        assert_eq!((r["steps"].as_i64(), r["format"].as_str()), (Some(turns), Some("mini-swe-agent")), "{instance}");
        assert_eq!(r["exit_status"], "Submitted", "{instance}");
    }
}

/// MANIFEST: OpenDevin 2024 output: 6 lines, histories of 6, 6, 6, 6, 6, 5 pairs, the model on
/// the first three lines only.
#[test]
fn openhands_2024_pairs_and_the_model_only_where_named() {
    let c = ingest_corpus();
    for (i, steps) in [4, 4, 4, 4, 4, 3].into_iter().enumerate() {
        let instance = format!("ProntoQA_{}", i + 1);
        let r = run_in(&c.runs, "openhands-2024/output.jsonl", &instance);
        assert_eq!(r["steps"].as_i64(), Some(steps), "{instance}");
        let model = if i < 3 { Value::from("gpt-4o-2024-05-13") } else { Value::Null };
        assert_eq!(r["model"], model, "{instance}: a line without metadata names no model");
    }
    // test_result.result: the benchmark's grading of the answer.
    assert_eq!(run(&c.runs, "ProntoQA_1")["resolved"], false);
    assert_eq!(run(&c.runs, "ProntoQA_2")["resolved"], true);
}

/// MANIFEST: the resolver's output (2 lines, histories of 8 and 44 events) and the runtime's
/// event list (4 events: message, edit, edit, finish); the Java multi-SWE-bench run.
#[test]
fn resolver_event_list_and_java_runs() {
    let c = ingest_corpus();
    let five = run_in(&c.runs, "openhands-resolver/output.jsonl", "neubig__pr-viewer-5");
    assert_eq!((five["steps"].as_i64(), five["format"].as_str()), (Some(4), Some("openhands-resolver")));
    assert_eq!(five["resolved"], Value::Null, "the resolver's `success` is not a test outcome");
    assert_eq!(run(&c.runs, "neubig__pr-viewer-1")["steps"], 22);

    let basic = run_in(&c.runs, "openhands-events/basic.json", "basic");
    assert_eq!((basic["steps"].as_i64(), basic["exit_status"].as_str()), (Some(2), Some("finished")));
    let detail = json(&c.db, &["show", &basic["id"].to_string(), "--json"]);
    let edit = &detail["edit_list"][0];
    assert_eq!((edit["kind"].as_str(), edit["status"].as_str()), (Some("create"), Some("applied")));
    assert_eq!(edit["path"], "/workspace/game_2048.py");

    // Java (alibaba__fastjson2-2775): 40 events, 20 agent actions (13 run, 3 read, 3 edit, 1
    // finish), model openai/gpt-5-ca, a git_patch of 1,573 characters.
    let java = run(&c.runs, "alibaba__fastjson2-2775");
    assert_eq!((java["steps"].as_i64(), java["model"].as_str()), (Some(20), Some("openai/gpt-5-ca")));
    let detail = json(&c.db, &["show", &java["id"].to_string(), "--json"]);
    let tools: Vec<&str> =
        detail["step_list"].as_array().into_iter().flatten().filter_map(|s| s["tool"].as_str()).collect();
    let count = |names: &[&str]| tools.iter().filter(|t| names.contains(t)).count();
    assert_eq!(count(&["execute_bash"]), 13, "{tools:?}");
    assert_eq!(count(&["str_replace_editor"]), 6, "3 reads and 3 edits through the editor: {tools:?}");
    assert_eq!(count(&["finish"]), 1);
    assert_eq!(detail["submission"].as_str().map(|s| s.chars().count()), Some(1573));
}

/// MANIFEST: three SWE-agent configurations on one instance: 14, 11 and 11 steps, submissions of
/// 564, 578 and 564 characters.
#[test]
fn swe_agent_replays_of_one_instance() {
    let c = ingest_corpus();
    let replays: Vec<&Value> =
        c.runs.iter().filter(|r| r["source"].as_str().is_some_and(|s| s.contains("/swe-agent-replays/"))).collect();
    let mut facts: Vec<(i64, usize)> = replays
        .iter()
        .map(|r| {
            let detail = json(&c.db, &["show", &r["id"].to_string(), "--json"]);
            assert_eq!(r["exit_status"], "submitted");
            (r["steps"].as_i64().unwrap_or(-1), detail["submission"].as_str().map_or(0, |s| s.chars().count()))
        })
        .collect();
    facts.sort();
    assert_eq!(facts, vec![(11, 564), (11, 578), (14, 564)]);
}

/// MANIFEST: multi-SWE-bench predictions (`org`, `repo`, `number`, `fix_patch`), 3 lines.
#[test]
fn multi_swe_bench_predictions_are_read() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("p.db");
    let file = common::corpus().join("openhands/multi_swe_bench_patch.jsonl");
    let out = trajan(&db, &["ingest".as_ref(), file.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ingested 1 file (runs 0, steps 0, test outcomes 0, predictions 3, "), "{stderr}");
}
