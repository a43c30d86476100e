//! `trajan bench validity` (issue 22): the classifiers scored against the labelled development
//! set's reference judgements, end to end on the real set in `fixtures/labelled`. The figures
//! themselves are what the command measures; these tests check that what it prints is the
//! reference's own counting (positives, confusions, disagreements with the reference's words),
//! computed here from labels.json independently.

use crate::chat_server;
use chat_server::{Behaviour, ChatServer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::common;

const MODES: [&str; 4] =
    ["missed_edit_location", "required_temporary_errors", "context_flooding", "incomplete_peripheral_propagation"];

fn reference() -> (PathBuf, Vec<Value>) {
    let path = common::fixtures_dir("labelled").join("labels.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    (path, entries)
}

fn present(e: &Value, mode: &str) -> bool {
    e["modes"][mode]["present"].as_bool().unwrap_or(false)
}

fn validity(args: &[&str]) -> (Option<i32>, Value) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("unused.db");
    let (path, _) = reference();
    let mut all: Vec<String> = vec!["bench".into(), "validity".into(), "--json".into(), "--reference".into()];
    all.push(path.display().to_string());
    all.extend(args.iter().map(|s| s.to_string()));
    let out = common::trajan(&db, &all);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", common::both(&out)));
    (out.status.code(), v)
}

/// Per mode: (tp, fp, fn) from the report.
fn confusions(v: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    let modes = v["validity"]["agreement"]["modes"].as_array().cloned().unwrap_or_default();
    modes
        .iter()
        .map(|m| {
            let c = &m["against_reference"][0]["confusion"];
            let n = |k: &str| c[k].as_u64().unwrap_or(u64::MAX);
            (m["mode"].as_str().unwrap_or_default().to_string(), (n("tp"), n("fp"), n("fn")))
        })
        .collect()
}

#[test]
fn the_heuristic_is_scored_against_every_entry_of_the_reference() {
    let (_, entries) = reference();
    let (code, v) = validity(&["--resamples", "50"]);
    assert_eq!(code, Some(0), "every entry scored: {v}");
    assert_eq!(v["not_scored"].as_array().map(Vec::len), Some(0), "{v}");
    let report = &v["validity"];
    assert_eq!(report["runs"].as_u64(), Some(entries.len() as u64));
    let conf = confusions(&v);
    let disagreements = report["disagreements"].as_array().cloned().unwrap_or_default();
    let mut wrong = 0;
    for mode in MODES {
        let positives = entries.iter().filter(|e| present(e, mode)).count() as u64;
        let (tp, fp, fn_) = conf.get(mode).copied().unwrap_or_else(|| panic!("{mode} missing: {v}"));
        assert_eq!(tp + fn_, positives, "{mode}: the reference's positives");
        wrong += fp + fn_;
        // Each miss is a disagreement carrying the reference's own rationale.
        for d in disagreements.iter().filter(|d| d["mode"] == mode) {
            let e = entries.iter().find(|e| e["file"] == d["file"]).unwrap_or_else(|| panic!("{d}"));
            assert_eq!(d["reference"]["rationale"], e["modes"][mode]["rationale"], "{d}");
            let side = d["side"].as_str().unwrap_or_default();
            assert_eq!(side == "reference_only", present(e, mode), "{d}");
        }
    }
    assert_eq!(disagreements.len() as u64, wrong, "one disagreement per false positive and miss");
    // The reliability table counts every verdict once: assigned verdicts are the tp + fp.
    let assigned: u64 = report["reliability"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["assigned"] == true)
        .map(|b| b["verdicts"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(assigned, conf.values().map(|(tp, fp, _)| tp + fp).sum::<u64>());
    let micro = &report["agreement"]["micro"][0]["precision"];
    assert!(micro.as_f64().is_some(), "{report}");
}

#[test]
fn the_text_report_names_runs_modes_and_both_sides() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (path, _) = reference();
    let out = common::trajan(
        &dir.path().join("unused.db"),
        &["bench", "validity", "--resamples", "0", "--reference", &path.display().to_string()],
    );
    let text = common::both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for part in ["precision", "recall", "coverage (runs with any mode)", "reliability:", "disagreements ("] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // A disagreement line names the run's file whole, and is followed by the reference's rationale.
    let line = text.lines().find(|l| l.starts_with("run ") && l.contains(".traj")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("runs/"), "{line}");
    assert!(text.contains("  reference  "), "{text}");
}

#[test]
fn an_llm_is_measured_the_same_way_and_a_failed_reply_is_not_a_label() {
    let (_, entries) = reference();
    // Every run: missed_edit_location, except one instance whose replies are never valid.
    let once = |id: &Value| entries.iter().filter(|e| &e["instance_id"] == id).count() == 1;
    let broken = entries
        .iter()
        .map(|e| &e["instance_id"])
        .find(|id| once(id))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let b = broken.clone();
    let server = ChatServer::start(move |r| {
        let body = r.json().unwrap_or_default();
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default().to_string();
        let mode = if prompt.contains(&format!("({b})")) { "no_such_mode" } else { "missed_edit_location" };
        let content = serde_json::json!({
            "modes": [{"mode": mode, "confidence": 0.8, "evidence": [{"step": 1, "note": "n"}], "rationale": "r"}],
            "unclassified": false, "summary": "s",
            "onset": {"step": 1, "rationale": "r"}, "blame": {"value": "agent", "reason": "r"}
        });
        Behaviour::Reply { content: content.to_string(), tokens_in: 100, tokens_out: 10 }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.base_url();
    let (code, v) = validity(&[
        "--resamples",
        "0",
        "--llm",
        "--base-url",
        &url,
        "--model",
        "test-model",
        "--api-key-env",
        "TRAJAN_TEST_NO_KEY",
        "--timeout",
        "5",
    ]);
    assert_eq!(code, Some(1), "a run without a label makes the measure incomplete: {v}");
    let not_scored = v["not_scored"].as_array().cloned().unwrap_or_default();
    assert_eq!(not_scored.len(), 1, "{v}");
    assert!(not_scored[0]["why"].as_str().is_some_and(|w| w.contains("no_such_mode")), "{v}");
    assert!(v["classifier"].as_str().is_some_and(|c| c.contains("test-model")), "{v}");
    let scored: Vec<&Value> = entries.iter().filter(|e| e["instance_id"] != broken.as_str()).collect();
    let positives = scored.iter().filter(|e| present(e, "missed_edit_location")).count() as u64;
    let conf = confusions(&v);
    assert_eq!(conf.get("missed_edit_location"), Some(&(positives, scored.len() as u64 - positives, 0)), "{v}");
    assert_eq!(v["validity"]["runs"].as_u64(), Some(scored.len() as u64));
}

/// Onset and blame (issue 37) against the set's onset.json: the counts the report prints are
/// the reference's own, counted here independently; the development figures stay at or above
/// the goals the heuristic was measured at (60% of agent onsets within tolerance; task blame
/// precision 0.8).
#[test]
fn onset_and_blame_are_scored_against_the_sets_onset_reference() {
    let path = common::fixtures_dir("labelled").join("onset.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let agent = entries.iter().filter(|e| e["blame"]["value"] == "agent" && e["onset"]["step"].is_u64()).count();
    let task = entries.iter().filter(|e| e["blame"]["value"] == "task").count();
    let (code, v) = validity(&["--resamples", "0"]);
    assert_eq!(code, Some(0), "every entry scored: {}", v["onset"]);
    let o = &v["onset"]["onset"];
    assert_eq!(o["runs"].as_u64(), Some(agent as u64), "{o}");
    let within = o["within"].as_u64().unwrap_or(0);
    assert!(within * 10 >= agent as u64 * 6, "onset within tolerance on {within} of {agent}: {o}");
    // Each miss names a run the reference blames on the agent, with its reference step.
    for m in o["misses"].as_array().cloned().unwrap_or_default() {
        let e = entries.iter().find(|e| e["file"] == m["file"]).unwrap_or_else(|| panic!("{m}"));
        assert_eq!(e["onset"]["step"], m["reference"], "{m}");
    }
    let values = v["onset"]["blame"]["values"].as_array().cloned().unwrap_or_default();
    let t = values.iter().find(|x| x["value"] == "task").unwrap_or_else(|| panic!("{values:?}"));
    let (tp, fn_) = (t["tp"].as_u64().unwrap_or(0), t["fn_"].as_u64().unwrap_or(0));
    assert_eq!(tp + fn_, task as u64, "every task-blamed run is counted: {t}");
    assert!(t["precision"].as_f64().is_some_and(|p| p >= 0.8), "{t}");
}

/// A reference with an unknown run, a step out of the run's range and a value that is no blame
/// is reported entry by entry; the good entries are still scored.
#[test]
fn a_bad_onset_reference_is_reported_entry_by_entry() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = common::fixtures_dir("labelled").join("onset.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut entries: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    entries[0]["file"] = "runs/nobody/none.traj".into();
    entries[1]["onset"]["step"] = 5000.into();
    entries[2]["blame"]["value"] = "harness".into();
    let bad = dir.path().join("onset.json");
    std::fs::write(&bad, serde_json::to_string(&entries).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
    let (code, v) = validity(&["--resamples", "0", "--onset", &bad.display().to_string()]);
    assert_eq!(code, Some(1), "problems make the exit status 1");
    let problems: Vec<String> =
        v["onset"]["problems"].as_array().cloned().unwrap_or_default().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("item 1: runs/nobody/none.traj: no run was read from this file"), "{problems:?}");
    assert!(problems[1].contains("item 2: ") && problems[1].contains("step 5000 out of range"), "{problems:?}");
    assert!(
        problems[2].contains("item 3: ") && problems[2].contains("blame \\\"harness\\\" is none of"),
        "{problems:?}"
    );
    let agent = |e: &Value| e["blame"]["value"] == "agent" && e["onset"]["step"].is_u64();
    let scored = entries.iter().skip(3).filter(|e| agent(e)).count() as u64;
    assert_eq!(v["onset"]["onset"]["runs"].as_u64(), Some(scored), "the other agent onsets are scored");
}
