//! Human review end to end: the real binary labelling the classification fixtures
//! (`trajan label`), history and adjudication, `agreement`, `stats`, every export format,
//! `import-labels` between two databases, and eight reviewers labelling one database at once.
//! Each test has its own temporary folder, used as `XDG_CONFIG_HOME` too, so no user config
//! leaks in.

use crate::chat_server;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chat_server::{Behaviour, ChatServer};
use trajan::store::Store;

use crate::common;

#[path = "review/blame.rs"]
mod blame;

const KEY_VAR: &str = "TRAJAN_TEST_REVIEW_KEY";

/// The taxonomy's modes, in order.
const MODES: [&str; 4] =
    ["missed_edit_location", "required_temporary_errors", "context_flooding", "incomplete_peripheral_propagation"];

/// The label export's CSV columns, as docs/LABELLING.md documents them (stable names).
const LABEL_CSV: [&str; 28] = [
    "label_id",
    "run_id",
    "instance_id",
    "run_model",
    "run_agent",
    "source",
    "rater",
    "taxonomy",
    "taxonomy_version",
    "current",
    "created_at",
    "unclassified",
    "modes",
    "confidences",
    "evidence",
    "weighed",
    "exit_category",
    "summary",
    "note",
    "llm_model",
    "prompt_hash",
    "tokens_in",
    "tokens_out",
    "cost",
    "latency_ms",
    "onset_step",
    "onset_confidence",
    "blame",
];

/// The statistics export's CSV columns before the `mode:<id>` ones (docs/LABELLING.md).
const STATS_CSV: [&str; 13] = [
    "taxonomy",
    "source",
    "by",
    "group",
    "runs",
    "labelled",
    "with_mode",
    "coverage",
    "compared",
    "agreement",
    "blamed_task",
    "blamed_environment",
    "blame_unjudged",
];

fn command(db: &Path) -> Command {
    let mut c = common::command();
    c.arg("--db")
        .arg(db)
        .env("XDG_CONFIG_HOME", db.parent().unwrap_or(Path::new("/")))
        .env("USER", "env-user")
        .env_remove("LOGNAME")
        .env_remove("TRAJAN_DB");
    c
}

fn trajan(db: &Path, args: &[&str]) -> Output {
    command(db).args(args).output().unwrap_or_else(|e| panic!("cannot run trajan: {e}"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn ok(db: &Path, args: &[&str]) -> String {
    let out = trajan(db, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{args:?}: not UTF-8: {e}"))
}

fn ok_json(db: &Path, args: &[&str]) -> Value {
    let out = ok(db, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}\n{out}"))
}

fn fixtures() -> PathBuf {
    common::fixtures_dir("classify")
}

fn ingest(db: &Path, paths: &[PathBuf]) {
    let mut args = vec!["ingest".to_string()];
    args.extend(paths.iter().map(|p| p.to_string_lossy().into_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(db, &refs);
}

/// A database with the classification fixtures (12 runs, one resolved) ingested.
fn fixture_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    ingest(&db, &[fixtures()]);
    (dir, db)
}

/// `trajan label RUN ARGS... --rater RATER`, which must succeed.
fn label(db: &Path, run: &str, rater: &str, args: &[&str]) {
    let mut all = vec!["label", run, "--rater", rater];
    all.extend_from_slice(args);
    ok(db, &all);
}

fn instance(name: &str) -> String {
    format!("classify__{name}")
}

fn labels(db: &Path, history: bool) -> Vec<Value> {
    let args: &[&str] = if history { &["labels", "--history", "--json"] } else { &["labels", "--json"] };
    ok_json(db, args).as_array().cloned().unwrap_or_default()
}

fn modes(label: &Value) -> Vec<String> {
    label["modes"].as_array().unwrap().iter().map(|m| m["mode"].as_str().unwrap().to_string()).collect()
}

/// Run ids by instance id.
fn run_ids(db: &Path) -> BTreeMap<String, i64> {
    ok_json(db, &["runs", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["instance_id"].as_str().unwrap().to_string(), r["id"].as_i64().unwrap()))
        .collect()
}

fn stats(db: &Path, args: &[&str]) -> Value {
    let mut all = vec!["stats", "--json"];
    all.extend_from_slice(args);
    ok_json(db, &all)
}

fn row<'a>(stats: &'a Value, group: &str) -> &'a Value {
    if group == "total" {
        return &stats["total"];
    }
    stats["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == group)
        .unwrap_or_else(|| panic!("no group {group}: {stats}"))
}

/// (runs, labelled, with_mode) of a statistics row, and its per-mode counts.
fn counts(row: &Value) -> ((u64, u64, u64), BTreeMap<String, u64>) {
    let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("{k} in {row}"));
    let modes = row["modes"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
    ((n("runs"), n("labelled"), n("with_mode")), modes)
}

fn mode_counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(m, n)| (m.to_string(), *n)).collect()
}

/// The agreement report (no bootstrap), as JSON.
fn agreement(db: &Path) -> Value {
    ok_json(db, &["agreement", "--json", "--resamples", "0"])
}

/// Against the reference, for one mode: rater → (n, tp, fp, fn, tn).
fn against_reference(report: &Value, mode: &str) -> BTreeMap<String, (u64, u64, u64, u64, u64)> {
    let m = report["report"]["modes"].as_array().unwrap().iter().find(|m| m["mode"] == mode).unwrap();
    m["against_reference"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = &c["confusion"];
            let n = |v: &Value| v.as_u64().unwrap();
            (c["rater"].as_str().unwrap().to_string(), (n(&c["n"]), n(&f["tp"]), n(&f["fp"]), n(&f["fn"]), n(&f["tn"])))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Labelling

#[test]
fn a_label_with_modes_evidence_and_note_reads_back() {
    let (_dir, db) = fixture_db();
    let mixture = instance("mixture");
    let out = ok(
        &db,
        &[
            "label",
            &mixture,
            "--mode",
            "missed_edit_location",
            "context_flooding",
            "--evidence",
            "2",
            "7",
            "--note",
            "edits core.py only; the grep floods",
            "--confidence",
            "0.75",
            "--rater",
            "ann",
        ],
    );
    assert!(out.contains("label ") && out.contains("by ann"), "{out}");
    label(&db, &instance("wrong-logic"), "ann", &["--unclassified", "--note", "wrong logic, right place"]);

    let rows = labels(&db, false);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let l = rows.iter().find(|r| r["instance_id"] == mixture.as_str()).unwrap();
    assert_eq!((l["source"].as_str(), l["rater"].as_str()), (Some("human"), Some("ann")));
    assert_eq!((l["taxonomy"].as_str(), l["taxonomy_version"].as_str()), (Some("refactoring"), Some("1.0")));
    assert_eq!(l["note"], "edits core.py only; the grep floods");
    assert_eq!(l["exit_category"], "submitted");
    assert_eq!(modes(l), ["context_flooding", "missed_edit_location"], "modes sorted, each once");
    for m in l["modes"].as_array().unwrap() {
        let steps: Vec<u64> = m["evidence"].as_array().unwrap().iter().map(|e| e["step"].as_u64().unwrap()).collect();
        assert_eq!(steps, [2, 7], "{m}");
        assert_eq!(m["confidence"].as_f64(), Some(0.75));
    }
    assert_eq!(l["considered"].as_array().map(Vec::len), Some(0));
    assert_eq!(l["run_id"].as_i64(), run_ids(&db).get(&mixture).copied());

    let u = rows.iter().find(|r| r["instance_id"] == instance("wrong-logic").as_str()).unwrap();
    assert!(modes(u).is_empty(), "unclassified is a label with no mode: {u}");
    assert_eq!((u["summary"].as_str(), u["note"].as_str()), (Some("unclassified"), Some("wrong logic, right place")));
}

#[test]
fn bad_labels_are_refused_and_nothing_is_written() {
    let (_dir, db) = fixture_db();
    let mixture = instance("mixture"); // 10 steps: 0 to 9
    let refused = |args: &[&str], says: &[&str]| {
        let out = trajan(&db, args);
        let t = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {t}");
        for s in says {
            assert!(t.contains(s), "{args:?}: {s:?} not in {t}");
        }
    };
    // An unknown mode: the error names it and every mode of the taxonomy.
    let mut says = vec!["no_such_mode", "refactoring@1.0"];
    says.extend(MODES);
    refused(&["label", &mixture, "--mode", "context_flooding", "no_such_mode", "--rater", "ann"], &says);
    refused(
        &["label", &mixture, "--mode", "context_flooding", "--evidence", "3", "10", "--rater", "ann"],
        &["step 10 is out of range", "0 to 9"],
    );
    refused(&["label", &mixture, "--rater", "ann"], &["--mode", "--unclassified"]);
    refused(&["label", &mixture, "--note", "hm", "--rater", "ann"], &["--mode", "--unclassified"]);
    refused(&["label", &mixture, "--mode", "context_flooding", "--unclassified", "--rater", "ann"], &[]);
    refused(&["label", &mixture, "--mode", "context_flooding", "--confidence", "1.5", "--rater", "ann"], &["1.5"]);
    refused(
        &["label", "classify__no-such-run", "--mode", "context_flooding", "--rater", "ann"],
        &["classify__no-such-run"],
    );
    refused(&["label", &mixture, "--mode", "context_flooding", "--rater", "  "], &["rater"]);
    assert!(labels(&db, true).is_empty(), "a refused label writes nothing");
    // The same label without the fault is accepted: the refusals were about the fault.
    label(&db, &mixture, "ann", &["--mode", "context_flooding", "--evidence", "3", "9"]);
    assert_eq!(labels(&db, true).len(), 1);
}

#[test]
fn the_rater_is_the_flag_else_the_config_file_else_user() {
    let (dir, db) = fixture_db();
    let run = instance("mixture");
    let rater_of_latest = |db: &Path| labels(db, true).last().map(|l| l["rater"].as_str().unwrap().to_string());
    let label_with = |user: Option<&str>, extra: &[&str]| {
        let mut c = command(&db);
        c.args(["label", &run, "--mode", "context_flooding"]).args(extra);
        match user {
            Some(u) => c.env("USER", u),
            None => c.env_remove("USER"),
        };
        c.output().unwrap()
    };
    // No flag, no config: $USER.
    let out = label_with(Some("unix-user"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rater_of_latest(&db).as_deref(), Some("unix-user"));
    // Nobody at all: an error that says how to name the rater, and no label.
    let out = label_with(None, &[]);
    assert!(!out.status.success() && text(&out).contains("--rater"), "{}", text(&out));
    assert_eq!(labels(&db, true).len(), 1);
    // The config file wins over $USER.
    let config = dir.path().join("trajan");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[labels]\nrater = \"config-rater\"\nblind = false\n").unwrap();
    let out = label_with(Some("unix-user"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rater_of_latest(&db).as_deref(), Some("config-rater"));
    // The flag wins over both.
    let out = label_with(Some("unix-user"), &["--rater", "flag-rater"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(rater_of_latest(&db).as_deref(), Some("flag-rater"));
    let raters: Vec<String> = labels(&db, false).iter().map(|l| l["rater"].as_str().unwrap().to_string()).collect();
    assert_eq!(raters, ["unix-user", "config-rater", "flag-rater"], "one current label per rater");
}

// ---------------------------------------------------------------------------------------------
// History and adjudication

#[test]
fn labelling_again_appends_and_the_latest_is_current() {
    let (_dir, db) = fixture_db();
    let run = instance("mixture");
    label(&db, &run, "ann", &["--mode", "missed_edit_location", "--note", "first look"]);
    label(&db, &run, "bob", &["--mode", "context_flooding"]);
    label(&db, &run, "ann", &["--mode", "context_flooding", "incomplete_peripheral_propagation"]);
    label(&db, &run, "ann", &["--unclassified", "--note", "third look"]);

    let history = labels(&db, true);
    let ann: Vec<&Value> = history.iter().filter(|l| l["rater"] == "ann").collect();
    assert_eq!(ann.len(), 3, "nothing is overwritten: {history:?}");
    let ann_modes: Vec<Vec<String>> = ann.iter().map(|l| modes(l)).collect();
    assert_eq!(
        ann_modes,
        [
            vec!["missed_edit_location".to_string()],
            vec!["context_flooding".into(), "incomplete_peripheral_propagation".into()],
            vec![]
        ],
        "oldest first"
    );
    assert_eq!(ann[0]["note"], "first look");
    let ids: Vec<i64> = ann.iter().map(|l| l["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let times: Vec<&str> = ann.iter().map(|l| l["created_at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");

    let current = labels(&db, false);
    assert_eq!(current.len(), 2, "one current label per rater: {current:?}");
    let ann_now = current.iter().find(|l| l["rater"] == "ann").unwrap();
    assert!(modes(ann_now).is_empty() && ann_now["note"] == "third look", "{ann_now}");
    assert_eq!(modes(current.iter().find(|l| l["rater"] == "bob").unwrap()), ["context_flooding"]);
    // One run: the same, and `--history` for that run only.
    assert_eq!(ok_json(&db, &["labels", &run, "--history", "--json"]).as_array().unwrap().len(), 4);
    assert_eq!(ok_json(&db, &["labels", &instance("flooding"), "--history", "--json"]), Value::Array(vec![]));
}

#[test]
fn an_adjudication_becomes_the_reference_of_stats_and_agreement() {
    let (_dir, db) = fixture_db();
    let (mixture, flooding) = (instance("mixture"), instance("flooding"));
    // Agreeing on flooding; disagreeing on mixture (a tie on both modes: no consensus).
    label(&db, &flooding, "ann", &["--mode", "context_flooding"]);
    label(&db, &flooding, "bob", &["--mode", "context_flooding"]);
    label(&db, &mixture, "ann", &["--mode", "context_flooding"]);
    label(&db, &mixture, "bob", &["--mode", "missed_edit_location"]);

    let before = stats(&db, &["--source", "reference"]);
    assert_eq!(counts(&before["total"]), ((11, 1, 1), mode_counts(&[("context_flooding", 1)])), "{before}");
    let report = agreement(&db);
    assert_eq!(report["taxonomy"], "refactoring@1.0");
    assert_eq!(report["report"]["raters"], serde_json::json!(["human:ann", "human:bob"]));
    assert_eq!(report["report"]["items"], 2);
    // Only flooding has a reference.
    let mel = against_reference(&report, "missed_edit_location");
    assert_eq!(mel["human:ann"], (1, 0, 0, 0, 1));
    assert_eq!(mel["human:bob"], (1, 0, 0, 0, 1));

    // carol settles mixture: missed_edit_location.
    let out = ok(&db, &["label", &mixture, "--mode", "missed_edit_location", "--rater", "carol", "--adjudicate"]);
    assert!(out.starts_with("adjudication "), "{out}");
    let adj: Vec<Value> = labels(&db, false).into_iter().filter(|l| l["rater"] == "carol").collect();
    assert_eq!(adj.len(), 1);
    assert_eq!(adj[0]["source"], "adjudication");

    let after = stats(&db, &["--source", "reference"]);
    assert_eq!(
        counts(&after["total"]),
        ((11, 2, 2), mode_counts(&[("context_flooding", 1), ("missed_edit_location", 1)])),
        "{after}"
    );
    // The reviewers' consensus alone does not use the adjudication.
    let human = stats(&db, &["--source", "human"]);
    assert_eq!(counts(&human["total"]), ((11, 1, 1), mode_counts(&[("context_flooding", 1)])), "{human}");

    let report = agreement(&db);
    assert_eq!(
        report["report"]["raters"],
        serde_json::json!(["human:ann", "human:bob"]),
        "the adjudicator makes the reference; she is not a rater"
    );
    let mel = against_reference(&report, "missed_edit_location");
    assert_eq!(mel["human:ann"], (2, 0, 0, 1, 1), "ann missed it on mixture");
    assert_eq!(mel["human:bob"], (2, 1, 0, 0, 1));
    let cf = against_reference(&report, "context_flooding");
    assert_eq!(cf["human:ann"], (2, 1, 1, 0, 0), "ann's flooding on mixture is a false positive now");
    assert_eq!(cf["human:bob"], (2, 1, 0, 0, 1));

    // An adjudication outranks a consensus too: carol says flooding fits no mode.
    label(&db, &flooding, "carol", &["--unclassified", "--adjudicate"]);
    let last = stats(&db, &["--source", "reference"]);
    assert_eq!(counts(&last["total"]), ((11, 2, 1), mode_counts(&[("missed_edit_location", 1)])), "{last}");
    let cf = against_reference(&agreement(&db), "context_flooding");
    assert_eq!(cf["human:bob"], (2, 0, 1, 0, 1));
}

// ---------------------------------------------------------------------------------------------
// Exports

/// A database with reviewers' labels on three runs, the heuristic's labels, and LLM labels on
/// two runs from a scripted local server.
fn labelled_db() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = fixture_db();
    label(&db, &instance("mixture"), "ann", &["--mode", "missed_edit_location", "--evidence", "1", "--note", "a|b"]);
    label(&db, &instance("mixture"), "bob", &["--mode", "missed_edit_location", "context_flooding"]);
    label(&db, &instance("flooding"), "ann", &["--mode", "context_flooding", "--evidence", "2", "8"]);
    label(&db, &instance("wrong-logic"), "bob", &["--unclassified", "--note", "line one\nline two"]);
    ok(&db, &["classify"]);
    let reply = serde_json::json!({
        "modes": [{"mode": "missed_edit_location", "confidence": 0.8, "evidence": [{"step": 1, "note": "see here"}], "rationale": "because"}],
        "unclassified": false,
        "summary": "a summary",
        "onset": {"step": 1, "evidence": [{"step": 1, "note": "see here"}], "confidence": 0.6, "rationale": "because"},
        "blame": {"value": "agent", "reason": "its own edit"}
    });
    let server =
        ChatServer::start(move |_| Behaviour::Reply { content: reply.to_string(), tokens_in: 1000, tokens_out: 50 })
            .unwrap();
    let url = server.base_url();
    let out = command(&db)
        .args(["classify", "--llm", "--base-url", &url, "--model", "test-model", "--api-key-env", KEY_VAR])
        .args(["--price-in", "1", "--price-out", "2", &instance("mixture"), &instance("gold-periphery")])
        .env(KEY_VAR, "sk-test-review")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    (dir, db)
}

fn export(db: &Path, what: &str, format: &str, extra: &[&str]) -> String {
    let mut args = vec!["export", what, "--format", format];
    args.extend_from_slice(extra);
    ok(db, &args)
}

fn csv_rows(text: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("bad CSV: {e}\n{text}"));
            assert_eq!(r.len(), header.len());
            header.iter().cloned().zip(r.iter().map(str::to_string)).collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn labels_export_as_csv_json_jsonl_and_markdown_with_taxonomy_and_llm_provenance() {
    let (_dir, db) = labelled_db();
    let history = labels(&db, true);
    let heuristic = history.iter().filter(|l| l["source"] == "heuristic").count();
    assert_eq!(heuristic, 11, "the heuristic labels every run not known to be resolved");
    let n = history.len();
    assert_eq!(n, 4 + heuristic + 2);

    // CSV: the documented columns, one row per label.
    let (header, rows) = csv_rows(&export(&db, "labels", "csv", &[]));
    assert_eq!(header, LABEL_CSV);
    assert_eq!(header, trajan::review::export::LABEL_COLUMNS, "the documented columns are the code's");
    assert_eq!(rows.len(), n);
    for r in &rows {
        assert_eq!((r["taxonomy"].as_str(), r["taxonomy_version"].as_str()), ("refactoring", "1.0"), "{r:?}");
        assert!(!r["created_at"].is_empty() && !r["instance_id"].is_empty(), "{r:?}");
        if r["source"] == "llm" {
            assert_eq!(r["llm_model"], "test-model", "{r:?}");
            assert_eq!(r["prompt_hash"].len(), 32, "{r:?}");
            assert!(r["prompt_hash"].chars().all(|c| c.is_ascii_hexdigit()), "{r:?}");
            assert_eq!((r["tokens_in"].as_str(), r["tokens_out"].as_str()), ("1000", "50"));
            assert!(!r["cost"].is_empty() && !r["latency_ms"].is_empty(), "{r:?}");
        } else {
            assert_eq!((r["llm_model"].as_str(), r["prompt_hash"].as_str()), ("", ""), "{r:?}");
        }
    }
    let llm_rows = rows.iter().filter(|r| r["source"] == "llm").count();
    assert_eq!(llm_rows, 2);
    let ann = rows
        .iter()
        .find(|r| r["source"] == "human" && r["rater"] == "ann" && r["instance_id"] == instance("flooding"))
        .unwrap();
    assert_eq!(ann["modes"], "context_flooding");
    assert_eq!(ann["evidence"], "context_flooding:2,8");
    assert_eq!(ann["confidences"], "1.00");
    assert_eq!((ann["unclassified"].as_str(), ann["exit_category"].as_str()), ("false", "cost"));
    assert_eq!((ann["run_model"].as_str(), ann["run_agent"].as_str()), ("classify/mini-model", "mini-swe-agent"));
    let bob = rows.iter().find(|r| r["rater"] == "bob" && r["instance_id"] == instance("wrong-logic")).unwrap();
    assert_eq!((bob["unclassified"].as_str(), bob["modes"].as_str()), ("true", ""));
    assert_eq!(bob["note"], "line one\nline two", "CSV quotes what it must");
    let two = rows.iter().find(|r| r["rater"] == "bob" && r["instance_id"] == instance("mixture")).unwrap();
    assert_eq!(two["modes"], "context_flooding;missed_edit_location");

    // JSON: an array of every label, whole.
    let json: Value = serde_json::from_str(&export(&db, "labels", "json", &[])).unwrap();
    let json = json.as_array().unwrap();
    assert_eq!(json.len(), n);
    for l in json {
        for key in ["label_id", "run_id", "instance_id", "run_model", "run_agent", "created_at", "note"] {
            assert!(l.get(key).is_some(), "{key} missing in {l}");
        }
        for key in ["source", "rater", "taxonomy", "taxonomy_version", "modes", "considered", "exit_category"] {
            assert!(l.get(key).is_some(), "{key} missing in {l}");
        }
        assert_eq!((l["taxonomy"].as_str(), l["taxonomy_version"].as_str()), (Some("refactoring"), Some("1.0")));
        if l["source"] == "llm" {
            assert_eq!(l["provenance"]["model"], "test-model");
            assert_eq!(l["provenance"]["input_hash"].as_str().map(str::len), Some(32));
        }
    }
    // JSON lines: one object per line, the same labels.
    let jsonl = export(&db, "labels", "jsonl", &[]);
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), n);
    assert!(lines.iter().all(Value::is_object));
    assert_eq!(&lines, json, "jsonl and json carry the same labels");

    // Markdown: a title naming the taxonomy, a table with the columns, one row per label.
    let md = export(&db, "labels", "markdown", &[]);
    let mut md_lines = md.lines();
    let title = md_lines.next().unwrap();
    assert!(title.starts_with("# Labels") && title.contains("refactoring@1.0"), "{title}");
    assert!(md.contains(&format!("| {} |", LABEL_CSV.join(" | "))), "{md}");
    assert!(md.contains(&format!("|{}", "---|".repeat(LABEL_CSV.len()))), "{md}");
    assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), n + 1, "{md}");
    assert!(md.contains("a\\|b") && md.contains("line one line two"), "cells escaped: {md}");

    // --current: the latest per run, source, rater and taxonomy.
    label(&db, &instance("flooding"), "ann", &["--unclassified"]);
    let (_, all) = csv_rows(&export(&db, "labels", "csv", &[]));
    let (_, current) = csv_rows(&export(&db, "labels", "csv", &["--current"]));
    assert_eq!((all.len(), current.len()), (n + 1, n));
    let ann_now: Vec<_> =
        current.iter().filter(|r| r["rater"] == "ann" && r["instance_id"] == instance("flooding")).collect();
    assert_eq!(ann_now.len(), 1);
    assert_eq!(ann_now[0]["unclassified"], "true");
}

/// The top-level keys of an exported label that occur more than once in its text (a JSON object
/// with a repeated key is ill-formed, and serde refuses it). `serde_json::Value` keeps only the
/// last of repeated keys, so they are counted in the text; keys that also occur nested are
/// skipped.
fn repeated_keys(v: &Value, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = v.as_object() {
        for k in o.keys() {
            let needle = format!("\"{k}\":");
            if ["note", "model", "mode"].contains(&k.as_str()) {
                continue;
            }
            if text.matches(&needle).count() > 1 {
                out.push(k.clone());
            }
        }
    }
    out
}

#[test]
fn label_exports_have_no_repeated_keys_and_read_back_as_exported_labels() {
    let (_dir, db) = labelled_db();
    for line in export(&db, "labels", "jsonl", &[]).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(repeated_keys(&v, line), Vec::<String>::new(), "{line}");
        // What `import-labels` reads.
        let back: Result<trajan::review::export::ExportedLabel, _> = serde_json::from_str(line);
        assert!(back.is_ok(), "an exported label does not read back: {:?}\n{line}", back.err());
    }
}

#[test]
fn stats_export_in_every_format_names_the_taxonomy_and_the_llm_models() {
    let (_dir, db) = labelled_db();
    let mode_columns: Vec<String> = MODES.iter().map(|m| format!("mode:{m}")).collect();

    let (header, rows) = csv_rows(&export(&db, "stats", "csv", &["--by", "exit"]));
    let mut want: Vec<String> = STATS_CSV.iter().map(|c| c.to_string()).collect();
    want.extend(mode_columns.iter().cloned());
    assert_eq!(header, want);
    assert_eq!(&header[..STATS_CSV.len()], trajan::review::export::STATS_COLUMNS);
    let groups: Vec<&str> = rows.iter().map(|r| r["group"].as_str()).collect();
    assert_eq!(groups, ["cost", "format", "submitted", "total"]);
    for r in &rows {
        assert_eq!(
            (r["taxonomy"].as_str(), r["source"].as_str(), r["by"].as_str()),
            ("refactoring@1.0", "best", "exit")
        );
    }
    let total = rows.last().unwrap();
    assert_eq!((total["runs"].as_str(), total["labelled"].as_str()), ("11", "11"));
    let sum: u64 = rows[..3].iter().map(|r| r["runs"].parse::<u64>().unwrap()).sum();
    assert_eq!(sum, 11, "the groups add up to the total");

    let json: Value = serde_json::from_str(&export(&db, "stats", "json", &["--by", "model"])).unwrap();
    assert_eq!((json["taxonomy"].as_str(), json["by"].as_str()), (Some("refactoring@1.0"), Some("model")));
    assert_eq!(json["llm_models"], serde_json::json!({"test-model": 2}), "two prompts, one model");
    assert_eq!(json["total"]["runs"], 11);
    let models: BTreeSet<&str> =
        json["rows"].as_array().unwrap().iter().map(|r| r["group"].as_str().unwrap()).collect();
    assert_eq!(models, BTreeSet::from(["classify-model", "classify/mini-model", "unknown"]));

    let jsonl = export(&db, "stats", "jsonl", &["--by", "benchmark", "--source", "heuristic"]);
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "fixtures and the total: {jsonl}");
    for l in &lines {
        assert_eq!((l["taxonomy"].as_str(), l["source"].as_str()), (Some("refactoring@1.0"), Some("heuristic")));
        assert_eq!(l["llm_models"], serde_json::json!({"test-model": 2}));
    }
    assert_eq!(
        (lines[0]["row"]["group"].as_str(), lines[1]["row"]["group"].as_str()),
        (Some("fixtures"), Some("total"))
    );

    let md = export(&db, "stats", "markdown", &[]);
    let title = md.lines().next().unwrap();
    assert!(title.contains("refactoring@1.0") && title.contains("test-model (2 prompts)"), "{title}");
    // No run has two raters yet: the agreement columns are left out, and a line says why (the
    // CSV, JSON and JSON lines keep every column for scripts).
    let mut md_header = vec![
        "group",
        "runs",
        "labelled",
        "with_mode",
        "coverage",
        "blamed_task",
        "blamed_environment",
        "blame_unjudged",
    ];
    md_header.extend(mode_columns.iter().map(String::as_str));
    assert!(md.contains(&format!("| {} |", md_header.join(" | "))), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| total | 11 |")), "{md}");
    // The default labels (`best`) are the reference where there is one: never compared, and
    // the line says so, not that raters are missing.
    assert!(
        md.contains("Agreement: the labels counted (best) are the reference where there is one, so not compared"),
        "{md}"
    );
    assert_eq!(json["total"]["compared"], 0);

    // `stats` prints the same numbers as `export stats`.
    assert_eq!(stats(&db, &["--by", "model"]), json);
    let csv_out = ok(&db, &["stats", "--csv", "--by", "exit"]);
    assert_eq!(csv_out, export(&db, "stats", "csv", &["--by", "exit"]));

    // Bad choices name the good ones.
    for (args, says) in [
        (vec!["stats", "--by", "colour"], "benchmark"),
        (vec!["stats", "--source", "oracle"], "reference"),
        (vec!["export", "labels", "--format", "xml"], "jsonl"),
        (vec!["export", "widgets"], "labels, notes, stats, runs, steps, edits, run, chart or report"),
    ] {
        let out = trajan(&db, &args);
        assert!(!out.status.success() && text(&out).contains(says), "{args:?}: {}", text(&out));
    }
}

#[test]
fn export_to_a_file_writes_it_whole_or_not_at_all() {
    let (dir, db) = labelled_db();
    let file = dir.path().join("labels.csv");
    std::fs::write(&file, "old content").unwrap();
    let out = trajan(&db, &["export", "labels", "--format", "csv", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stdout.is_empty(), "the export goes to the file, not stdout");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), export(&db, "labels", "csv", &[]), "replaced whole");
    let stats_file = dir.path().join("stats.md");
    ok(&db, &["export", "stats", "--format", "markdown", "--output", stats_file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&stats_file).unwrap(), export(&db, "stats", "markdown", &[]));

    // Into a folder that does not exist: an error naming it, and nothing written anywhere.
    let before: BTreeSet<PathBuf> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    let missing = dir.path().join("no-such-folder");
    let target = missing.join("labels.json");
    let out = trajan(&db, &["export", "labels", "--format", "json", "-o", target.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        text(&out),
        format!("error: cannot write {}: the folder {} does not exist\n", target.display(), missing.display())
    );
    assert!(!missing.exists() && !target.exists());
    let after: BTreeSet<PathBuf> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    let new: Vec<&PathBuf> = after.difference(&before).filter(|p| !p.to_string_lossy().contains("t.db")).collect();
    assert!(new.is_empty(), "left behind: {new:?}");
}

/// A file that cannot be written is named with the reason in plain words: never the temporary
/// file it was written to first, nor an OS error code.
#[test]
fn export_errors_name_the_file_and_the_reason() {
    let (dir, db) = fixture_db();
    let folder = dir.path().join("exports");
    std::fs::create_dir(&folder).unwrap();
    let cases = [
        (
            dir.path().join("missing/labels.csv"),
            format!("the folder {} does not exist", dir.path().join("missing").display()),
        ),
        (folder.clone(), "it is a folder".to_string()),
        (dir.path().join("t.db/labels.csv"), format!("{} is not a folder", db.display())),
    ];
    for (target, why) in cases {
        for what in ["labels", "stats"] {
            let out = trajan(&db, &["export", what, "--format", "csv", "-o", target.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{}", text(&out));
            assert_eq!(text(&out), format!("error: cannot write {}: {why}\n", target.display()), "{what}");
        }
    }
    assert!(std::fs::read_dir(&folder).unwrap().next().is_none(), "nothing written into the folder");
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("t.db"))
        .collect();
    assert_eq!(left, ["exports"], "no temporary file left behind");
}

/// `-o` onto a FIFO (or a character device such as /dev/stdout or /dev/null) writes into it, and
/// it stays what it was. /dev/null itself is not tried: without the fix, root would replace it
/// with a file.
#[cfg(unix)]
#[test]
fn export_into_a_fifo_writes_into_it_and_leaves_it_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, db) = fixture_db();
    ok(&db, &["classify"]);
    let fifo = dir.path().join("labels.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = trajan(&db, &["export", "labels", "--format", "csv", "-o", fifo.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    // Checked before waiting for the reader: had the FIFO been replaced, it would wait forever.
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(reader.join().unwrap(), export(&db, "labels", "csv", &[]));
}

/// `-o` onto an existing file keeps its mode and, for root (as CI runs), its owner and group.
#[cfg(unix)]
#[test]
fn export_over_a_file_keeps_its_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (dir, db) = fixture_db();
    ok(&db, &["classify"]);
    let file = dir.path().join("private.csv");
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let root = std::fs::metadata(&file).unwrap().uid() == 0;
    if root {
        std::os::unix::fs::chown(&file, Some(4321), Some(4322)).unwrap();
    }
    ok(&db, &["export", "labels", "--format", "csv", "-o", file.to_str().unwrap()]);
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o640, "the mode is kept");
    if root {
        assert_eq!((m.uid(), m.gid()), (4321, 4322), "the owner is kept");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), export(&db, "labels", "csv", &[]));
}

/// `-o` onto a socket is refused with the reason, and the socket is left alone.
#[cfg(unix)]
#[test]
fn export_onto_a_socket_is_refused() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, db) = fixture_db();
    let socket = dir.path().join("labels.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for what in ["labels", "stats"] {
        let out = trajan(&db, &["export", what, "--format", "csv", "-o", socket.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert_eq!(
            text(&out),
            format!(
                "error: cannot write {}: it is a socket; an export goes to a file, a character device (such as \
                 /dev/stdout) or a FIFO\n",
                socket.display()
            )
        );
        assert!(std::fs::symlink_metadata(&socket).unwrap().file_type().is_socket(), "the socket is left");
    }
}

/// Instance ids, models and notes a spreadsheet would run as formulas are exported as text
/// (`'` first) in every CSV; Markdown and JSON keep them as they are; numbers stay numbers.
#[test]
fn csv_cells_that_start_a_formula_are_quoted_in_every_csv() {
    let (dir, db) = fixture_db();
    let extra = dir.path().join("extra");
    std::fs::create_dir(&extra).unwrap();
    write_traj(&extra, "=1+2__x-1", "submitted", Some("@SUM(1+1)"));
    ingest(&db, &[extra]);
    ok(&db, &["classify"]);
    label(&db, "=1+2__x-1", "ann", &["--unclassified", "--note=-2+3"]);

    let (_, rows) = csv_rows(&export(&db, "labels", "csv", &[]));
    let ann = rows.iter().find(|r| r["rater"] == "ann").unwrap();
    assert_eq!(
        (ann["instance_id"].as_str(), ann["run_model"].as_str(), ann["note"].as_str()),
        ("'=1+2__x-1", "'@SUM(1+1)", "'-2+3")
    );
    assert!(ann["label_id"].parse::<i64>().is_ok() && ann["run_id"].parse::<i64>().is_ok(), "{ann:?}");
    assert!(export(&db, "labels", "markdown", &[]).contains("| =1+2__x-1 | @SUM(1+1) |"));
    let json: Value = serde_json::from_str(&export(&db, "labels", "json", &[])).unwrap();
    assert!(json.as_array().unwrap().iter().any(|l| l["instance_id"] == "=1+2__x-1" && l["note"] == "-2+3"));

    for csv in [
        export(&db, "stats", "csv", &["--by", "model", "--include-unknown"]),
        ok(&db, &["--include-unknown", "stats", "--csv", "--by", "model"]),
    ] {
        let (_, rows) = csv_rows(&csv);
        let row = rows.iter().find(|r| r["group"].contains("SUM")).unwrap_or_else(|| panic!("{csv}"));
        assert_eq!(row["group"], "'@SUM(1+1)");
        assert_eq!((row["runs"].as_str(), row["coverage"].as_str()), ("1", "0.0000"), "numbers as they are: {row:?}");
    }
}

/// The Markdown statistics are titled by their grouping, and not grouped they are plainly the
/// failure modes.
#[test]
fn markdown_statistics_are_titled_by_their_grouping() {
    let (_dir, db) = fixture_db();
    ok(&db, &["classify"]);
    let title = |extra: &[&str]| {
        let mut args = vec!["stats", "--markdown"];
        args.extend_from_slice(extra);
        ok(&db, &args).lines().next().unwrap_or_default().to_string()
    };
    assert!(title(&[]).starts_with("# Failure modes (refactoring@"), "{}", title(&[]));
    assert!(title(&["--by", "all"]).starts_with("# Failure modes ("));
    assert!(title(&["--by", "model"]).starts_with("# Failure modes by model ("));
    let exported = export(&db, "stats", "markdown", &["--by", "exit"]);
    assert!(exported.starts_with("# Failure modes by exit ("), "{exported}");
}

// ---------------------------------------------------------------------------------------------
// Import

/// Database A: two reviewers labelled four runs (ann twice on mixture), and the heuristic ran.
/// Database B: the same fixtures, ingested so that every run id differs from A's.
fn two_databases() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    ingest(&a, &[fixtures()]);
    // B sees the runs in reverse order, one folder at a time, so ids are assigned differently.
    let mut folders: Vec<PathBuf> =
        std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    folders.sort();
    folders.reverse();
    for f in &folders {
        ingest(&b, std::slice::from_ref(f));
    }
    let (ids_a, ids_b) = (run_ids(&a), run_ids(&b));
    assert_eq!(ids_a.keys().collect::<Vec<_>>(), ids_b.keys().collect::<Vec<_>>(), "the same runs");
    let same = ids_a.iter().filter(|(i, id)| ids_b[*i] == **id).count();
    assert!(same <= 1, "run ids should differ between the databases: {ids_a:?} {ids_b:?}");

    label(&a, &instance("mixture"), "ann", &["--mode", "context_flooding", "--note", "first"]);
    label(&a, &instance("mixture"), "bob", &["--mode", "missed_edit_location", "--evidence", "4"]);
    label(&a, &instance("flooding"), "ann", &["--mode", "context_flooding", "--confidence", "0.5"]);
    label(&a, &instance("wrong-logic"), "bob", &["--unclassified", "--note", "wrong logic"]);
    label(&a, &instance("temp-errors"), "carol", &["--mode", "required_temporary_errors", "--adjudicate"]);
    ok(&a, &["classify"]);
    (dir, a, b)
}

/// The people's labels: (instance, source, rater, created_at) → (modes, note, evidence steps).
type Human = BTreeMap<(String, String, String, String), (Vec<String>, Value, Vec<u64>)>;

fn human_labels(db: &Path, history: bool) -> Human {
    labels(db, history)
        .iter()
        .filter(|l| l["source"] == "human" || l["source"] == "adjudication")
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or("").to_string();
            let steps = l["modes"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["evidence"].as_array().unwrap().iter().map(|e| e["step"].as_u64().unwrap()))
                .collect();
            ((s("instance_id"), s("source"), s("rater"), s("created_at")), (modes(l), l["note"].clone(), steps))
        })
        .collect()
}

/// `import-labels FILE --json --adjudications` (every label of the file, adjudications too).
fn import(db: &Path, file: &Path) -> (Option<i32>, Value, String) {
    import_with(db, file, &["--adjudications"])
}

fn import_with(db: &Path, file: &Path, flags: &[&str]) -> (Option<i32>, Value, String) {
    let mut args = vec!["import-labels", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(flags);
    let out = trajan(db, &args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, text(&out))
}

#[test]
fn labels_exported_from_one_database_import_into_another_by_instance_not_id() {
    let (dir, a, b) = two_databases();
    let json = dir.path().join("a.json");
    let jsonl = dir.path().join("a.jsonl");
    ok(&a, &["export", "labels", "--format", "json", "-o", json.to_str().unwrap()]);
    ok(&a, &["export", "labels", "--format", "jsonl", "-o", jsonl.to_str().unwrap()]);
    let want = human_labels(&a, true);
    assert_eq!(want.len(), 5);

    let (code, report, t) = import(&b, &json);
    assert_eq!(code, Some(0), "{t}");
    assert_eq!(report["imported"], 5, "{t}");
    assert_eq!(report["already_present"], 0, "{t}");
    assert_eq!(report["skipped_classifier"], 11, "the heuristic's labels are not imported: {t}");
    assert_eq!(human_labels(&b, true), want, "same modes, notes, evidence and times");
    // Attached to B's runs of the same instances.
    let ids_b = run_ids(&b);
    for l in labels(&b, true) {
        assert_eq!(l["run_id"].as_i64(), ids_b.get(l["instance_id"].as_str().unwrap()).copied(), "{l}");
    }
    assert_eq!(labels(&b, true).len(), 5, "nothing but the people's labels");

    // Again, from either file: already present, nothing added.
    for file in [&jsonl, &json] {
        let (code, report, t) = import(&b, file);
        assert_eq!(code, Some(0), "{t}");
        assert_eq!((report["imported"].as_u64(), report["already_present"].as_u64()), (Some(0), Some(5)), "{t}");
        assert_eq!(report["conflicts"], serde_json::json!([]), "{t}");
    }
    assert_eq!(labels(&b, true).len(), 5);
    // Agreement reads the imported labels like local ones.
    let cf = against_reference(&agreement(&b), "required_temporary_errors");
    assert!(cf.contains_key("human:ann") && cf.contains_key("human:bob"), "{cf:?}");
}

/// Issue 24: a file's adjudications (the reference) go in only when asked; a label whose note is
/// larger than a note may be is refused, the others go in.
#[test]
fn adjudications_are_imported_only_when_asked_and_huge_notes_never() {
    let (dir, a, b) = two_databases();
    let file = dir.path().join("a.jsonl");
    ok(&a, &["export", "labels", "--format", "jsonl", "-o", file.to_str().unwrap()]);
    let (code, report, t) = import_with(&b, &file, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert_eq!((report["imported"].as_u64(), report["skipped_adjudications"].as_u64()), (Some(4), Some(1)), "{t}");
    assert!(labels(&b, true).iter().all(|l| l["source"] != "adjudication"), "{t}");
    let (_, report, t) = import(&b, &file);
    assert_eq!((report["imported"].as_u64(), report["already_present"].as_u64()), (Some(1), Some(4)), "{t}");
    // A note of 64 KiB and a byte more: that record is rejected, named by its line.
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().find(|l| l.contains("\"rater\":\"ann\"")).unwrap_or_else(|| panic!("{text}"));
    let mut huge: Value = serde_json::from_str(line).unwrap();
    huge["note"] = "n".repeat(64 * 1024 + 1).into();
    huge["created_at"] = "2030-01-01T00:00:00Z".into();
    let mut later: Value = serde_json::from_str(line).unwrap();
    later["rater"] = "dan".into();
    let more = dir.path().join("more.jsonl");
    std::fs::write(&more, format!("{huge}\n{later}\n")).unwrap();
    let (code, report, t) = import(&b, &more);
    assert_eq!(code, Some(1), "{t}");
    assert_eq!(report["imported"], 1, "{t}");
    let rejected = report["rejected"].to_string();
    assert!(rejected.contains("line 1") && rejected.contains("its note is 64.0 KiB (65537 bytes); at most"), "{t}");
}

#[test]
fn an_export_with_a_raters_history_imports_whole_and_keeps_the_latest_current() {
    let (dir, a, b) = two_databases();
    // ann changes her mind on mixture: the export (all labels by default) holds both.
    label(&a, &instance("mixture"), "ann", &["--mode", "incomplete_peripheral_propagation", "--note", "second"]);
    let file = dir.path().join("a.jsonl");
    ok(&a, &["export", "labels", "--format", "jsonl", "-o", file.to_str().unwrap()]);
    let (code, report, t) = import(&b, &file);
    assert_eq!(code, Some(0), "a rater's own history is not a conflict: {t}");
    assert_eq!(report["imported"], 6, "{t}");
    assert_eq!(human_labels(&b, true), human_labels(&a, true));
    let current = |db: &Path| -> Vec<String> {
        let l = labels(db, false);
        let ann = l.iter().find(|l| l["rater"] == "ann" && l["instance_id"] == instance("mixture").as_str()).unwrap();
        modes(ann)
    };
    assert_eq!(current(&b), ["incomplete_peripheral_propagation"], "the latest stays current");
    assert_eq!(current(&b), current(&a));
}

#[test]
fn import_reports_conflicts_and_unmatched_runs_and_overwrites_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    ingest(&a, &[fixtures()]);
    // B lacks the cut-off run.
    let folders: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("cut-off"))
        .collect();
    ingest(&b, &folders);
    label(&a, &instance("mixture"), "ann", &["--mode", "context_flooding"]);
    label(&a, &instance("flooding"), "ann", &["--mode", "context_flooding"]);
    label(&a, &instance("cut-off"), "bob", &["--unclassified"]);
    // In B, ann already said something else about mixture.
    label(&b, &instance("mixture"), "ann", &["--mode", "missed_edit_location", "--note", "local"]);
    let local_before = human_labels(&b, true);

    let file = dir.path().join("a.json");
    ok(&a, &["export", "labels", "--format", "json", "-o", file.to_str().unwrap()]);
    let (code, report, t) = import(&b, &file);
    assert_eq!(code, Some(1), "conflicts and unmatched runs make the exit status 1: {t}");
    assert_eq!(report["imported"], 1, "flooding: {t}");
    let conflicts: Vec<&str> = report["conflicts"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(conflicts.len(), 1, "{t}");
    assert!(conflicts[0].contains("classify__mixture") && conflicts[0].contains("ann"), "{conflicts:?}");
    assert!(
        conflicts[0].contains("missed_edit_location") && conflicts[0].contains("context_flooding"),
        "{conflicts:?}"
    );
    let unmatched: Vec<&str> = report["unmatched"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(unmatched.len(), 1, "{t}");
    assert!(unmatched[0].contains("classify__cut-off"), "{unmatched:?}");

    // The local label is untouched and still current; only flooding was added.
    let after = human_labels(&b, true);
    assert!(local_before.iter().all(|(k, v)| after.get(k) == Some(v)), "local labels changed: {after:?}");
    assert_eq!(after.len(), local_before.len() + 1);
    let current = labels(&b, false);
    let ann_mixture = current.iter().find(|l| l["instance_id"] == instance("mixture").as_str()).unwrap();
    assert_eq!(
        (modes(ann_mixture), ann_mixture["note"].as_str()),
        (vec!["missed_edit_location".into()], Some("local"))
    );

    // The text report says the same, and importing again changes nothing.
    let out = trajan(&b, &["import-labels", file.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("imported 0, already present 1, conflicts 1, unmatched 1"), "{t}");
    assert!(
        t.contains("conflict (kept the local label)") && t.contains("unmatched: item 1: classify__cut-off by bob"),
        "{t}"
    );
    assert_eq!(human_labels(&b, true), after);
}

// ---------------------------------------------------------------------------------------------
// Many reviewers at once

#[test]
fn eight_reviewers_labelling_one_database_at_once_lose_nothing() {
    let (dir, db) = fixture_db();
    let runs: Vec<String> = run_ids(&db).into_keys().collect();
    assert_eq!(runs.len(), 12);
    let list = runs.join(" ");
    let children: Vec<_> = (0..8)
        .map(|i| {
            // Each reviewer labels every run, one `trajan label` process after another.
            let mode = MODES[i % MODES.len()];
            let script = format!(
                "for r in {list}; do \"$TRAJAN\" --db \"$DB\" label \"$r\" --mode {mode} --rater r{i} \
                 --note \"reviewer {i} on $r\" >/dev/null || exit 1; done"
            );
            Command::new("sh")
                .arg("-c")
                .arg(script)
                .env("TRAJAN", env!("CARGO_BIN_EXE_trajan"))
                .env("DB", &db)
                .env("XDG_CONFIG_HOME", dir.path())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "reviewer r{i} failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    let store = Store::open(&db).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let all = store.labels(None, false).unwrap();
    assert_eq!(all.len(), 8 * runs.len(), "every label is there, once");
    let pairs: BTreeSet<(String, Option<String>)> =
        all.iter().map(|l| (l.label.rater.clone(), l.instance_id.clone())).collect();
    assert_eq!(pairs.len(), 8 * runs.len(), "each reviewer labelled each run once");
    for l in &all {
        let i: usize = l.label.rater.trim_start_matches('r').parse().unwrap();
        assert_eq!(l.label.modes.len(), 1);
        assert_eq!(l.label.modes[0].mode, MODES[i % MODES.len()], "{l:?}");
        assert_eq!(l.note.as_deref(), Some(format!("reviewer {i} on {}", l.instance_id.as_deref().unwrap()).as_str()));
    }
    let ids: BTreeSet<i64> = all.iter().map(|l| l.id).collect();
    assert_eq!(ids.len(), all.len());
    drop(store);
    // And the reports read them all.
    let report = agreement(&db);
    assert_eq!(report["report"]["raters"].as_array().unwrap().len(), 8);
    assert_eq!(report["report"]["items"], 12);
}

// ---------------------------------------------------------------------------------------------
// Statistics

/// A small SWE-agent trajectory (instance id from the file name) with no test outcome, and the
/// model when given.
fn write_traj(dir: &Path, instance: &str, exit: &str, model: Option<&str>) -> PathBuf {
    let mut traj = serde_json::json!({
        "trajectory": [{
            "action": "ls", "observation": "a.py", "thought": "t", "response": "t",
            "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/r\"}"
        }],
        "history": [],
        "info": {"exit_status": exit}
    });
    if let Some(model) = model {
        traj["replay_config"] = serde_json::json!({"agent": {"model": {"name": model}}}).to_string().into();
    }
    let path = dir.join(format!("{instance}.traj"));
    std::fs::write(&path, traj.to_string()).unwrap();
    path
}

#[test]
fn stats_of_a_hand_labelled_set_count_what_the_reviewers_said() {
    let (dir, db) = fixture_db();
    let extra = dir.path().join("extra");
    std::fs::create_dir(&extra).unwrap();
    write_traj(&extra, "astropy__astropy-12907", "exit_context", None);
    write_traj(&extra, "plainrun", "submitted", None);
    ingest(&db, &[extra]);
    // Heuristic labels, which `--source human` must not read; the runs whose outcome is unknown
    // count as failed runs here, on purpose (most of these fixtures have no verdict).
    ok(&db, &["classify", "--include-unknown"]);

    let both = |run: &str, args: &[&str]| {
        label(&db, &instance(run), "ann", args);
        label(&db, &instance(run), "bob", args);
    };
    both("flooding", &["--mode", "context_flooding"]); // cost
    both("cut-off", &["--unclassified"]); // cost
    both("mixture", &["--mode", "missed_edit_location", "context_flooding"]); // submitted
    both("temp-errors", &["--mode", "required_temporary_errors"]); // submitted
    // A tie: no consensus, so not labelled for `human`.
    label(&db, &instance("wrong-logic"), "ann", &["--unclassified"]);
    label(&db, &instance("wrong-logic"), "bob", &["--mode", "missed_edit_location"]);
    // One reviewer alone is the consensus.
    label(&db, &instance("format-loop"), "ann", &["--mode", "incomplete_peripheral_propagation"]); // format
    // A resolved run is not counted, labelled or not.
    label(&db, &instance("clean-success"), "ann", &["--mode", "context_flooding"]);
    // Runs of other benchmarks, grouped by their instance ids.
    label(&db, "astropy__astropy-12907", "ann", &["--mode", "context_flooding"]); // context

    // Without --include-unknown, failed runs are those with a known, unresolved verdict, and
    // the others are counted apart.
    let failed_only = stats(&db, &["--source", "human"]);
    let left_out = failed_only["outcome_unknown_left_out"].as_u64().unwrap_or(0);
    assert!(left_out > 0, "{failed_only}");
    assert_eq!(failed_only["total"]["runs"].as_u64().map(|n| n + left_out), Some(13), "{failed_only}");
    assert_eq!(failed_only["scope"], "failed");

    let s = stats(&db, &["--source", "human", "--include-unknown"]);
    assert_eq!(s["scope"], "failed_or_unknown");
    assert_eq!(
        (s["source"].as_str(), s["by"].as_str(), s["taxonomy"].as_str()),
        (Some("human"), Some("all"), Some("refactoring@1.0"))
    );
    let want_modes = mode_counts(&[
        ("context_flooding", 3),
        ("missed_edit_location", 1),
        ("required_temporary_errors", 1),
        ("incomplete_peripheral_propagation", 1),
    ]);
    assert_eq!(counts(&s["total"]), ((13, 6, 5), want_modes.clone()), "{s}");
    assert_eq!(s["total"]["coverage"].as_f64(), Some(5.0 / 6.0));
    assert_eq!(counts(row(&s, "all")), counts(&s["total"]));

    let b = stats(&db, &["--source", "human", "--by", "benchmark", "--include-unknown"]);
    let groups: Vec<&str> = b["rows"].as_array().unwrap().iter().map(|r| r["group"].as_str().unwrap()).collect();
    assert_eq!(groups, ["fixtures", "other", "swe-bench"], "{b}");
    let fixture_modes = mode_counts(&[
        ("context_flooding", 2),
        ("missed_edit_location", 1),
        ("required_temporary_errors", 1),
        ("incomplete_peripheral_propagation", 1),
    ]);
    assert_eq!(counts(row(&b, "fixtures")), ((11, 5, 4), fixture_modes), "{b}");
    assert_eq!(row(&b, "fixtures")["coverage"].as_f64(), Some(0.8));
    assert_eq!(counts(row(&b, "swe-bench")), ((1, 1, 1), mode_counts(&[("context_flooding", 1)])), "{b}");
    assert_eq!(counts(row(&b, "other")), ((1, 0, 0), BTreeMap::new()), "{b}");
    assert_eq!(row(&b, "other")["coverage"], Value::Null, "undefined, not zero");
    assert_eq!(counts(&b["total"]), ((13, 6, 5), want_modes), "{b}");

    let e = stats(&db, &["--source", "human", "--by", "exit", "--include-unknown"]);
    let groups: Vec<&str> = e["rows"].as_array().unwrap().iter().map(|r| r["group"].as_str().unwrap()).collect();
    // plainrun said "submitted" but submitted no patch.
    assert_eq!(groups, ["context", "cost", "format", "no_patch", "submitted"], "{e}");
    assert_eq!(counts(row(&e, "no_patch")), ((1, 0, 0), BTreeMap::new()), "{e}");
    assert_eq!(counts(row(&e, "cost")), ((2, 2, 1), mode_counts(&[("context_flooding", 1)])), "{e}");
    assert_eq!(row(&e, "cost")["coverage"].as_f64(), Some(0.5));
    assert_eq!(counts(row(&e, "format")), ((1, 1, 1), mode_counts(&[("incomplete_peripheral_propagation", 1)])), "{e}");
    assert_eq!(
        counts(row(&e, "submitted")),
        (
            (8, 2, 2),
            mode_counts(&[("missed_edit_location", 1), ("context_flooding", 1), ("required_temporary_errors", 1)])
        ),
        "{e}"
    );
    assert_eq!(counts(row(&e, "context")), ((1, 1, 1), mode_counts(&[("context_flooding", 1)])), "{e}");
    // With no adjudication the reference is the same consensus: all compared runs agree.
    assert_eq!((e["total"]["compared"].as_u64(), e["total"]["agreement"].as_f64()), (Some(6), Some(1.0)));
    // Runs with two raters: the printed table has the agreement columns.
    let md = ok(&db, &["stats", "--source", "human", "--by", "exit", "--include-unknown"]);
    assert!(md.contains("| coverage | compared | agreement |") && !md.contains("Agreement: no run"), "{md}");
    // The same runs under the default labels (`best`): two raters labelled them, so the line
    // must not say none has, but what is compared where.
    let md = ok(&db, &["stats", "--by", "exit", "--include-unknown"]);
    assert!(!md.contains("two raters") && !md.contains("no run has"), "{md}");
    assert!(md.contains("the labels counted (best) are the reference") && md.contains("`trajan agreement`"), "{md}");
    let md = ok(&db, &["stats", "--source", "llm", "--include-unknown"]);
    assert!(md.contains("no run has both a label of llm and a reference"), "{md}");

    // The heuristic's numbers are its own: every failed run labelled.
    let h = stats(&db, &["--source", "heuristic", "--include-unknown"]);
    assert_eq!(h["total"]["labelled"], 13, "{h}");
    assert_ne!(counts(&h["total"]), counts(&s["total"]));
}

#[test]
fn imported_records_are_checked_like_labels_made_here() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let out = trajan(&db, &["ingest", fixtures().to_str().unwrap()]);
    assert!(out.status.success());
    let good = |over: serde_json::Value| {
        let mut v = serde_json::json!({
            "label_id": 1, "instance_id": "classify__mixture", "run_model": null, "run_agent": null,
            "created_at": "2026-01-02T03:04:05.000Z", "note": null, "run_id": 99, "source": "human",
            "rater": "ann", "taxonomy": "refactoring", "taxonomy_version": "1.0",
            "modes": [{"mode": "context_flooding", "confidence": 1.0, "evidence": [{"step": 3, "note": ""}], "rationale": ""}]
        });
        for (k, x) in over.as_object().unwrap() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let bad_mode = serde_json::json!([{"mode": "not_a_mode", "confidence": 1.0, "evidence": [], "rationale": ""}]);
    let far_step = serde_json::json!([{"mode": "context_flooding", "confidence": 1.0, "evidence": [{"step": 9999, "note": ""}], "rationale": ""}]);
    let lines = [
        good(serde_json::json!({"modes": bad_mode})),
        good(serde_json::json!({"modes": far_step})),
        good(serde_json::json!({"rater": ""})),
        good(serde_json::json!({"created_at": "zzzz"})),
        good(serde_json::json!({"taxonomy_version": "0.1"})),
        "{not json".to_string(),
        good(serde_json::json!({"rater": "bob"})),
    ];
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = trajan(&db, &["import-labels", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rejected: Vec<&str> = report["rejected"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert_eq!(rejected.len(), 6, "{rejected:#?}");
    for want in ["unknown mode", "step 9999", "no valid name", "RFC 3339", "refactoring@0.1", "line 6"] {
        assert!(rejected.iter().any(|r| r.contains(want)), "{want}: {rejected:#?}");
    }
    assert_eq!(report["imported"], 1, "the good record still goes in");
}

#[test]
fn labels_of_another_taxonomy_version_are_not_mixed_in() {
    let (dir, db) = fixture_db();
    let mixture = instance("mixture");
    label(&db, &mixture, "ann", &["--mode", "context_flooding"]);
    // The same taxonomy name at version 2.0: another vocabulary.
    let v2 = dir.path().join("refactoring-2.toml");
    let preset =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/label/taxonomies/refactoring.toml"))
            .unwrap();
    std::fs::write(&v2, preset.replace("version = \"1.0\"", "version = \"2.0\"")).unwrap();
    label(&db, &mixture, "bob", &["--mode", "missed_edit_location", "--taxonomy", v2.to_str().unwrap()]);
    let report = agreement(&db);
    assert_eq!(report["report"]["raters"], serde_json::json!(["human:ann"]), "bob labelled under 2.0: {report}");
    let v2_report = ok_json(&db, &["agreement", "--json", "--resamples", "0", "--taxonomy", v2.to_str().unwrap()]);
    assert_eq!(v2_report["taxonomy"], "refactoring@2.0");
    assert_eq!(v2_report["report"]["raters"], serde_json::json!(["human:bob"]));
}

#[test]
fn runs_filter_selects_as_the_tui_filter_does() {
    let (_dir, db) = labelled_db();
    let ids = |args: &[&str]| -> BTreeSet<u64> {
        let mut all = vec!["runs", "--json"];
        all.extend_from_slice(args);
        ok_json(&db, &all).as_array().unwrap().iter().map(|r| r["id"].as_u64().unwrap()).collect()
    };
    // What the filter should keep, from `labels --json` and `runs --json` directly.
    let runs = ok_json(&db, &["runs", "--json"]);
    let run_ids = |keep: &dyn Fn(&Value) -> bool| -> BTreeSet<u64> {
        runs.as_array().unwrap().iter().filter(|r| keep(r)).map(|r| r["id"].as_u64().unwrap()).collect()
    };
    // Each term reads every current label of the run: some label by ann, some label with the mode.
    let current = labels(&db, false);
    let runs_where = |keep: &dyn Fn(&Value) -> bool| -> BTreeSet<u64> {
        current.iter().filter(|l| keep(l)).map(|l| l["run_id"].as_u64().unwrap()).collect()
    };
    let by_ann = runs_where(&|l| l["rater"] == "ann");
    let flooding = runs_where(&|l| modes(l).iter().any(|m| m == "context_flooding"));
    let both: BTreeSet<u64> = by_ann.intersection(&flooding).copied().collect();
    assert!(!both.is_empty());
    assert_eq!(ids(&["--filter", "rater:ann label:flooding"]), both);
    assert_eq!(ids(&["--filter", "failed"]), run_ids(&|r| r["resolved"] == false));
    assert_eq!(
        ids(&["--filter", "resolved:no steps>3"]),
        run_ids(&|r| r["resolved"] == false && r["steps"].as_u64() > Some(3))
    );
    assert_eq!(
        ids(&["--filter", "-source:heuristic"]).len() + ids(&["--filter", "source:heuristic"]).len(),
        runs.as_array().unwrap().len()
    );
    // A bad query names the term, as in the TUI.
    let out = trajan(&db, &["runs", "--filter", "steps>x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("steps>x"), "{}", text(&out));
}

#[test]
fn the_readmes_query_over_exported_rows_gives_the_numbers_of_stats() {
    // The README's DuckDB query, run over the exported CSV rows (the same columns as the Parquet
    // files): one source's current labels of the taxonomy's version, on failed runs the label
    // does not blame on the task or the environment, counted per model and mode. History rows (a
    // rater's earlier labels) must not count.
    let (_dir, db) = labelled_db();
    ok(&db, &["classify"]); // unchanged labels: nothing new
    label(&db, &instance("flooding"), "ann", &["--mode", "missed_edit_location"]); // ann changes her mind
    let (_, label_rows) = csv_rows(&export(&db, "labels", "csv", &[]));
    let (_, run_rows) = csv_rows(&export(&db, "runs", "csv", &[]));
    assert!(label_rows.iter().any(|l| l["current"] == "false"), "the history has superseded labels");
    let runs: BTreeMap<&str, &BTreeMap<String, String>> = run_rows.iter().map(|r| (r["run_id"].as_str(), r)).collect();
    // Sources with one label per run: the heuristic, and the LLM (one model here). Reviewers'
    // labels combine per run (a consensus), which `stats` computes and no row-wise query can.
    for source in ["heuristic", "llm"] {
        let mut counted: BTreeMap<(String, String), u64> = BTreeMap::new();
        for l in &label_rows {
            let run = runs[l["run_id"].as_str()];
            let keep = l["current"] == "true"
                && l["source"] == source
                && l["taxonomy"] == "refactoring"
                && l["taxonomy_version"] == "1.0"
                && run["resolved"] == "false"
                && l["blame"] != "task"
                && l["blame"] != "environment"
                && !l["modes"].is_empty();
            if keep {
                let model = if run["model"].is_empty() { "unknown".to_string() } else { run["model"].clone() };
                for mode in l["modes"].split(';') {
                    *counted.entry((model.clone(), mode.to_string())).or_default() += 1;
                }
            }
        }
        let s = stats(&db, &["--by", "model", "--source", source]);
        let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
        for row in s["rows"].as_array().unwrap() {
            for (mode, n) in row["modes"].as_object().unwrap() {
                if n.as_u64() > Some(0) {
                    want.insert((row["group"].as_str().unwrap().to_string(), mode.clone()), n.as_u64().unwrap());
                }
            }
        }
        assert_eq!(counted, want, "{source}: the query's numbers are stats': {s}");
        assert!(!counted.is_empty(), "{source}");
    }
}

#[test]
fn notes_on_steps_are_written_listed_and_exported() {
    let (_dir, db) = fixture_db();
    let run = instance("mixture");
    ok(&db, &["note", &run, "--step", "1", "the fix belongs here", "--rater", "ann"]);
    ok(&db, &["note", &run, "--step", "3", "=cmd|' /C calc'!A0", "--rater", "bob"]);
    let listed = ok(&db, &["notes", &run]);
    assert!(listed.contains("step 1 · ann:\n  the fix belongs here") && listed.ends_with("2 notes\n"), "{listed}");
    let json = ok_json(&db, &["notes", "--json"]);
    assert_eq!(json.as_array().map(Vec::len), Some(2));
    assert_eq!((json[0]["step"].as_u64(), json[0]["rater"].as_str()), (Some(1), Some("ann")));
    // Exported like labels: CSV (formula-quoted), JSON lines.
    let (header, rows) = csv_rows(&export(&db, "notes", "csv", &[]));
    assert_eq!(header, trajan::review::export::NOTE_COLUMNS);
    assert_eq!(rows[1]["text"], "'=cmd|' /C calc'!A0", "a formula is quoted");
    assert_eq!(export(&db, "notes", "jsonl", &[]).lines().count(), 2);
    // Replaced, then removed; a step the run does not have is refused.
    ok(&db, &["note", &run, "--step", "1", "one line up", "--rater", "ann"]);
    ok(&db, &["note", &run, "--step", "3", "--delete", "--rater", "bob"]);
    let json = ok_json(&db, &["notes", "--json"]);
    assert_eq!(json.as_array().map(Vec::len), Some(1));
    assert_eq!(json[0]["text"], "one line up");
    let out = trajan(&db, &["note", &run, "--step", "999", "x", "--rater", "ann"]);
    assert!(!out.status.success() && text(&out).contains("has no step 999"), "{}", text(&out));
}

/// `stats` says, below its table, how many of the failed runs counted have no gold patch known
/// (the heuristic's rules that need one did not run on them), as `classify` and the labels do;
/// `stats --json` counts them (`without_gold`); `export stats` says it too.
#[test]
fn stats_footnote_the_failed_runs_without_a_gold_patch() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    ok(&db, &["ingest", fixtures().to_str().unwrap()]);
    let md = ok(&db, &["stats"]);
    let note = md.lines().find(|l| l.starts_with("Gold patch: ")).unwrap_or_else(|| panic!("no footnote:\n{md}"));
    assert!(
        note.contains("7 of 11 failed runs without a gold patch")
            && note.contains("expected_function_not_edited, gold_periphery_untouched did not run on them"),
        "{note}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&db, &["stats", "--json"])).unwrap();
    assert_eq!(json["without_gold"], 7, "{json}");
    let md = ok(&db, &["export", "stats", "--format", "markdown"]);
    assert!(md.contains("Gold patch: 7 of 11 failed runs"), "export stats says it too:\n{md}");
}
