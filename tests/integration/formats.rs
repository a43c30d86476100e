//! Formats met in the wild that have no real sample in the corpus: the hand-written fixtures of
//! `fixtures/formats/` (see its README), through the real binary, with the corpus runs they
//! belong to.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::{json, trajan};

fn formats(rel: &str) -> PathBuf {
    common::fixtures_dir("formats").join(rel)
}

fn ingest(db: &Path, paths: &[PathBuf]) -> String {
    let mut args = vec![std::ffi::OsString::from("ingest")];
    args.extend(paths.iter().map(|p| p.clone().into_os_string()));
    let out = trajan(db, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

/// The multi-SWE-bench dataset gives OpenHands' ponyc runs their task's gold patch, so the
/// gold-patch signals work on a C benchmark: ponyc-4595's patch changed one of the two files the
/// gold patch changes.
#[test]
fn a_multi_swe_bench_dataset_gives_gold_patch_signals_to_its_runs() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let stderr =
        ingest(&db, &[common::corpus().join("openhands/multi_swe_bench_output.jsonl"), formats("multi-swe-bench")]);
    assert!(stderr.contains("dataset tasks 2)"), "{stderr}");
    let runs = json(&db, &["runs", "--json"]);
    let id = runs
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["instance_id"] == "ponylang__ponyc-4595")
        .map(|r| r["id"].to_string())
        .unwrap_or_else(|| panic!("no ponyc-4595 run: {runs}"));
    let signals = json(&db, &["signals", &id, "--json"]);
    assert_eq!(signals["miss_ratio"].as_f64(), Some(0.5), "{signals}");
    let gold: Vec<&str> = signals["expected"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["why"].as_array().is_some_and(|w| w.iter().any(|x| x == "gold")))
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(gold, ["src/libponyc/ast/parser.c", "src/libponyc/pass/syntax.c"], "{signals}");
}

#[test]
fn swe_bench_pro_tasks_are_read() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let stderr = ingest(&dir.path().join("t.db"), &[formats("swe-bench-pro")]);
    assert!(stderr.contains("dataset tasks 2)"), "{stderr}");
}

/// Old SWE-bench `*.eval.log` files, in the layout of SWE-bench/experiments: one outcome each,
/// never read as JSON though two of them start with `[`.
#[test]
fn old_eval_logs_are_outcomes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let stderr = ingest(&dir.path().join("t.db"), &[formats("swebench-eval-log")]);
    assert!(stderr.contains("ingested 3 files (runs 0, steps 0, test outcomes 3, "), "{stderr}");
    assert!(!stderr.contains("error") && !stderr.contains("warning"), "{stderr}");
}
