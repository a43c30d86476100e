//! Verdicts and per-test results joined from real results folders (issue 21): which runs
//! failed is what every statistic rests on.

use serde_json::Value;
use std::path::Path;

mod common;
use common::{json, trajan};

fn ingest<P: AsRef<std::ffi::OsStr>>(db: &Path, paths: &[P]) -> String {
    let mut args: Vec<std::ffi::OsString> = vec!["ingest".into()];
    args.extend(paths.iter().map(|p| p.as_ref().to_os_string()));
    let out = trajan(db, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

fn show(db: &Path, run: &str) -> Value {
    json(db, &["show", run, "--json"])
}

#[test]
fn a_run_summary_gives_the_verdict_and_the_per_instance_report_the_tests() {
    // The labelled set's Gemini runs: an sb-cli run report (resolved ids of all 500 instances)
    // and, beside it, per-instance harness reports (flat, the id in the folder name).
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let gemini = common::fixtures_dir("labelled/runs/google_gemini-3-pro-preview");
    let reports = common::fixtures_dir("labelled/reports/google_gemini-3-pro-preview");
    ingest(&db, &[&gemini, &reports]);
    let runs = json(&db, &["runs", "--json"]);
    let runs = runs.as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 22);
    for run in &runs {
        let id = run["instance_id"].as_str().unwrap_or_default();
        let d = show(&db, &run["id"].to_string());
        let o = &d["outcome"];
        assert!(o["source"].as_str().is_some_and(|s| s.ends_with("-20251118.json")), "{id}: verdict from the summary");
        let tests_from = o["tests_source"].as_str().unwrap_or_default();
        assert!(tests_from.ends_with(&format!("logs/{id}/report.json")), "{id}: tests from its report: {o}");
        assert!(o["tests"].as_array().is_some_and(|t| !t.is_empty()), "{id}: per-test results kept");
        assert!(o["tests_say_resolved"].is_null(), "{id}: the two agree");
        assert!(d["unjoined_evaluations"].as_array().is_some_and(Vec::is_empty), "{id}: {}", d["unjoined_evaluations"]);
    }
    let resolved: Vec<&str> =
        runs.iter().filter(|r| r["resolved"] == true).filter_map(|r| r["instance_id"].as_str()).collect();
    assert_eq!(resolved, ["astropy__astropy-7166"], "the one resolved control");
}

#[test]
fn when_the_summary_and_the_report_disagree_the_run_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let data = dir.path().join("results");
    let id = "django__django-11477";
    let src = common::fixtures_dir("labelled");
    let copy = |rel: &str| {
        let to = data.join(rel);
        std::fs::create_dir_all(to.parent().unwrap_or(&data)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::copy(src.join(rel), &to).unwrap_or_else(|e| panic!("{e}"));
        to
    };
    copy(&format!("runs/google_gemini-3-pro-preview/{id}.traj.json"));
    copy(
        "reports/google_gemini-3-pro-preview/swe-bench_verified__test__20251118_mini-v1.15.0_gemini-3-pro-preview-20251118.json",
    );
    let report = copy(&format!("reports/google_gemini-3-pro-preview/logs/{id}/report.json"));
    // The per-instance report says resolved; the summary lists the id as unresolved.
    let text =
        std::fs::read_to_string(&report).unwrap_or_default().replace("\"resolved\": false", "\"resolved\": true");
    std::fs::write(&report, text).unwrap_or_else(|e| panic!("{e}"));
    ingest(&db, &[&data]);
    let o = show(&db, id)["outcome"].clone();
    assert_eq!((o["resolved"].as_bool(), o["tests_say_resolved"].as_bool()), (Some(false), Some(true)), "{o}");
    let text = String::from_utf8_lossy(&trajan(&db, &["show", id]).stdout).into_owned();
    assert!(
        text.contains("the evaluations disagree: the per-test report says resolved yes, the verdict's says no"),
        "{text}"
    );
}
