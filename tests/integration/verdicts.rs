//! Verdicts and per-test results joined from real results folders (issue 21): which runs
//! failed is what every statistic rests on.

use serde_json::Value;
use std::path::Path;

use crate::common;
use crate::common::{json, trajan};

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

/// instance -> verdict of every run (`runs --json`).
fn verdicts(db: &Path) -> std::collections::BTreeMap<String, Option<bool>> {
    let runs = json(db, &["runs", "--json"]);
    runs.as_array()
        .into_iter()
        .flatten()
        .map(|r| (r["instance_id"].as_str().unwrap_or_default().to_string(), r["resolved"].as_bool()))
        .collect()
}

/// `runs --evaluations --json`: (instance, verdict, tests, why) of each evaluation that matched no run.
fn orphans(db: &Path) -> Vec<(String, Option<bool>, i64, String)> {
    let list = json(db, &["runs", "--evaluations", "--json"]);
    list.as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                o["instance_id"].as_str().unwrap_or_default().to_string(),
                o["resolved"].as_bool(),
                o["tests"].as_i64().unwrap_or(-1),
                o["why"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn layout(rel: &str) -> std::path::PathBuf {
    common::fixtures_dir("layouts").join(rel)
}

fn db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    (dir, db)
}

fn map(pairs: &[(&str, Option<bool>)]) -> std::collections::BTreeMap<String, Option<bool>> {
    pairs.iter().map(|(i, v)| (i.to_string(), *v)).collect()
}

#[test]
fn multi_swe_bench_resolved_lists_and_run_logs_give_every_run_its_verdict() {
    let (_dir, db) = db();
    let sub = "multi-swe-bench/evaluation/java/verified/20240825_SWE-agent_gpt-4o-2024-05-13";
    let stderr = ingest(&db, &[layout("multi-swe-bench")]);
    assert!(!stderr.contains("warning") && !stderr.contains("error"), "{stderr}");
    assert_eq!(
        verdicts(&db),
        map(&[
            ("alibaba__fastjson2-2775", Some(true)),
            ("apache__dubbo-10638", Some(false)),
            // Only results.json's `resolved` list says so: no log.
            ("fasterxml__jackson-databind-4228", Some(true)),
        ])
    );
    // The run log's `Result for <id>: resolved: True` line is the verdict of its folder.
    let fastjson = show(&db, "alibaba__fastjson2-2775");
    assert!(fastjson["outcome"]["source"].as_str().is_some_and(|s| s.ends_with("logs/alibaba__fastjson2-2775")));
    assert_eq!(fastjson["outcome"]["resolved"], true);
    let jackson = show(&db, "fasterxml__jackson-databind-4228");
    assert!(jackson["outcome"]["source"].as_str().is_some_and(|s| s.ends_with(&format!("{sub}/results/results.json"))));
    // The model of a SWE-agent 0.x run without predictions: the submission folder's name.
    let runs = json(&db, &["runs", "--json"]);
    for r in runs.as_array().into_iter().flatten() {
        assert_eq!(r["model"], "gpt-4o-2024-05-13", "{r}");
    }
    // A resolved id with no trajectory is an evaluation without a run.
    assert_eq!(orphans(&db), [("mockito__mockito-3129".to_string(), Some(true), 0, "no_trajectory".to_string())]);
}

#[test]
fn autocoderover_final_report_gives_the_swe_agent_runs_their_verdict_and_task_folders_are_not_runs() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("autocoderover")]);
    assert!(!stderr.contains("warning") && !stderr.contains("error"), "{stderr}");
    // Resolved: listed; the others: predicted and not listed.
    assert_eq!(
        verdicts(&db),
        map(&[
            ("django__django-11099", Some(true)),
            ("pytest-dev__pytest-5227", Some(false)),
            ("sympy__sympy-20590", Some(false))
        ])
    );
    // No run named after an ACR round, none of another agent.
    let runs = json(&db, &["runs", "--json"]);
    assert!(runs.as_array().into_iter().flatten().all(|r| r["agent"] == "swe-agent"), "{runs}");
    // The task folder's files are each skipped as what they are.
    let out = trajan(&db, &["ingest".as_ref(), "-v".as_ref(), layout("autocoderover").as_os_str()]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let task = "applicable_patch/django__django-11099_2024-04-05_10-41-27/";
    for file in ["conversation_round_0.json", "conversation_round_1.json", "meta.json", "developer_patch.diff"] {
        assert!(
            text.lines().any(|l| l.contains(&format!("{task}{file}: part of an AutoCodeRover task folder"))),
            "{file}: {text}"
        );
    }
    // The prediction without a trajectory is an unresolved evaluation without a run.
    assert_eq!(orphans(&db), [("astropy__astropy-12907".to_string(), Some(false), 0, "no_trajectory".to_string())]);
}

#[test]
fn swe_polybench_results_are_evaluations_with_their_tests() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("swe-polybench/evaluation/PB500/20250610_prometheus")]);
    assert!(!stderr.contains("error") && !stderr.contains("run summary"), "{stderr}");
    assert_eq!(
        orphans(&db),
        [
            ("huggingface__transformers-29688".to_string(), Some(false), 2, "no_trajectory".to_string()),
            ("microsoft__vscode-125826".to_string(), Some(true), 3, "no_trajectory".to_string()),
        ]
    );
    // Counted in the resolve rate, though no run is there.
    let stats = json(&db, &["stats", "--json"]);
    let total = &stats["outcomes_total"];
    assert_eq!((total["runs"].as_i64(), total["no_trajectory"].as_i64()), (Some(0), Some(2)), "{total}");
    assert_eq!(total["resolve_rate"].as_f64(), Some(0.5), "{total}");
}

#[test]
fn rovo_dev_transcripts_are_runs_with_their_polybench_verdicts_and_tests() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("swe-polybench/evaluation/PBVerified/20251208_atlassian-rovo-dev")]);
    assert!(!stderr.contains("warning") && !stderr.contains("error"), "{stderr}");
    assert!(stderr.contains("verdicts: 2 of 2 runs"), "{stderr}");
    assert_eq!(verdicts(&db), map(&[("google__gson-2024", Some(true)), ("microsoft__vscode-131416", Some(false))]));
    assert!(orphans(&db).is_empty(), "every result joined its transcript");
    let run = show(&db, "microsoft__vscode-131416");
    assert_eq!(run["format"], "rovo-dev");
    // The model is the submission's name in all_preds.jsonl.
    assert_eq!(run["model"], "atlassian_rovo_dev_20251208");
    let failing: Vec<&str> = run["outcome"]["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["passed"] == false)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        failing,
        ["src/vs/platform/terminal/test/node/ptyService.test.ts > PtyService > restores the title after a reload"]
    );
    assert_eq!(run["steps"], 12);
    // The refused edit is counted as refused, the applied ones as edits.
    let text = String::from_utf8_lossy(&trajan(&db, &["runs"]).stdout).into_owned();
    assert!(text.lines().any(|l| l.contains("microsoft__vscode-131416") && l.contains("4!1")), "{text}");
    // A failed transcript is classified like any other run, its evidence steps its own.
    let out = trajan(&db, &["classify", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn harbor_0_6_trials_read_their_artifacts_trajectory_and_their_own_verdict() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("harbor-0.6")]);
    assert!(!stderr.contains("warning") && !stderr.contains("error"), "{stderr}");
    // The instance is the trial's task_name (never `trajectory`, nor a cut folder name); trials
    // regrouped into outcome folders still join their own result.json.
    assert_eq!(
        verdicts(&db),
        map(&[
            ("build-cython-ext", Some(true)),
            ("configure-git-webserver-with-post-receive-hook", Some(true)),
            ("fix-git", Some(true)),
            ("regex-log", Some(false)),
        ])
    );
    // Reward 1.0 with an AgentTimeoutError is resolved, the exception kept.
    let cython = show(&db, "build-cython-ext");
    assert_eq!(cython["exit_status"], "AgentTimeoutError", "{}", cython["exit_status"]);
    assert_eq!(cython["model"], "gpt-5-codex");
    // A trial with a reward and no trajectory is an evaluation without a run; one whose
    // verifier never ran (`verifier_result: null`) has no verdict and is no error.
    // Its tests are the verifier's report (ctrf.json: one failed test).
    assert_eq!(orphans(&db), [("sqlite-with-gcov".to_string(), Some(false), 1, "no_trajectory".to_string())]);
    assert!(stderr.contains("sqlite-with-gcov__Zz9yY8x: no trajectory"), "{stderr}");
}

#[test]
fn swe_smith_reports_take_their_instance_from_the_folder_and_their_model_from_the_report() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[common::corpus().join("swe-smith")]);
    assert!(!stderr.contains("error") && !stderr.contains("warning"), "{stderr}");
    assert_eq!(
        verdicts(&db),
        map(&[
            ("pandas-dev__pandas.95280573.pr_53652", Some(true)),
            ("pandas-dev__pandas.95280573.pr_53856", Some(false)),
            ("pydantic__pydantic.acb0f10f.pr_8316", Some(true)),
        ])
    );
    for id in ["pandas-dev__pandas.95280573.pr_53652", "pandas-dev__pandas.95280573.pr_53856"] {
        let o = show(&db, id)["outcome"].clone();
        assert!(o["source"].as_str().is_some_and(|s| s.ends_with(&format!("run_evaluation/{id}"))), "{id}: {o}");
        assert!(o["tests"].as_array().is_some_and(|t| !t.is_empty()), "{id}: per-test results");
    }
    let f2p_failed = show(&db, "pandas-dev__pandas.95280573.pr_53856")["outcome"]["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["group"] == "FAIL_TO_PASS" && t["passed"] == false)
        .count();
    assert_eq!(f2p_failed, 28);
    // The run report (`ids_resolved`) names 53 instances, 50 of them with no trajectory here; the
    // getmoto report has none either. The validation report is no verdict: skipped.
    let list = orphans(&db);
    assert_eq!(list.iter().filter(|o| o.3 == "no_trajectory").count(), list.len());
    assert_eq!(list.iter().filter(|o| o.0 == "getmoto__moto.694ce1f4.pr_7331").count(), 2, "{list:?}");
    assert_eq!(list.len(), 51, "{list:?}");
    let out = trajan(&db, &["ingest".as_ref(), "-v".as_ref(), common::corpus().join("swe-smith").as_os_str()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("run_validation: a SWE-smith validation report"));
}

#[test]
fn a_results_file_with_trailing_commas_is_read_with_a_note_naming_the_line() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("coder")]);
    assert!(
        stderr.contains("results.json: line 3, column 33: a trailing comma before a closing bracket, dropped"),
        "{stderr}"
    );
    assert!(stderr.contains("note: ") && !stderr.contains("warning"), "{stderr}");
    assert_eq!(verdicts(&db), map(&[("pallets__flask-4045", Some(false)), ("psf__requests-2317", Some(true))]));
}

#[test]
fn the_ingest_summary_says_what_joined_and_json_has_the_same_counts() {
    let (_dir, db) = db();
    let out = trajan(&db, &["ingest".as_ref(), "--json".as_ref(), layout("multi-swe-bench").as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "verdicts: 3 of 3 runs; evaluations that matched no run: 1 (names another model: 0, patch differs: 0, no trajectory: 1)"
        ),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let j = &v["verdicts"];
    assert_eq!(
        [
            &j["runs"],
            &j["runs_with_verdict"],
            &j["unmatched"],
            &j["other_model"],
            &j["patch_differs"],
            &j["no_trajectory"]
        ],
        [3, 3, 1, 0, 0, 1].map(Value::from).each_ref(),
        "{v}"
    );
    assert_eq!(v["runs"], 3);
    // Another model's evaluation: the beside-trajectory flask folder evaluated an earlier patch.
    let out = trajan(&db, &["ingest".as_ref(), layout("beside-trajectory").as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("verdicts: 5 of 6 runs; evaluations that matched no run: 2 (names another model: 0, patch differs: 1, no trajectory: 1)"), "{stderr}");
}

/// A Terminal-Bench 2 job of an agent whose tools write and edit files by name (`write_file
/// {file_path, content}`, `edit_file {file_path, old_string, new_string}`) and whose shell tool
/// answers with a JSON object of streams (issue 38): every edit call is an edit with its diff and
/// its result, the observations read as a terminal shows them (and searched so), and each trial's
/// tests are the verifier's report (`ctrf.json`, else the pytest lines of `test-stdout.txt`).
#[test]
fn terminal_bench_2_tool_calls_are_edits_streams_are_text_and_the_verifier_gives_the_tests() {
    let (_dir, db) = db();
    let stderr = ingest(&db, &[layout("harbor-0.6-tools")]);
    assert!(!stderr.contains("error") && !stderr.contains("warning"), "{stderr}");
    let run = show(&db, "regex-log");
    let edits: Vec<(Option<i64>, String, String, String)> = run["edit_list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| !e["step"].is_null())
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (e["step"].as_i64(), s("path"), s("kind"), s("status"))
        })
        .collect();
    let want = [
        (Some(2), "/app/regex.py", "create", "applied"),
        (Some(6), "/app/regex.py", "str_replace", "applied"),
        (Some(7), "/app/regex.py", "str_replace", "refused_by_tool"),
        (Some(8), "/app/regex.txt", "create", "applied"),
    ]
    .map(|(st, p, k, s)| (st, p.to_string(), k.to_string(), s.to_string()));
    assert_eq!(edits, want);
    // The edit steps are marked so in the step list (a refused one as rejected).
    let flagged = |s: &Value, f: &str| s["flags"].as_array().is_some_and(|a| a.iter().any(|x| x == f));
    let marked: Vec<(i64, bool)> = run["step_list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| flagged(s, "edit"))
        .map(|s| (s["index"].as_i64().unwrap_or(-1), flagged(s, "edit_rejected")))
        .collect();
    assert_eq!(marked, [(2, false), (6, false), (7, true), (8, false)]);
    let diffs = run["edit_list"].as_array().cloned().unwrap_or_default();
    assert!(
        diffs.iter().filter(|e| !e["step"].is_null()).all(|e| e["diff"].as_str().is_some_and(|d| d.contains("@@")))
    );
    // The stream object reads as a terminal shows it.
    let obs = run["step_list"][3]["observation"].as_str().unwrap_or_default().to_string();
    assert!(obs.starts_with("[stderr]\nTraceback") && obs.ends_with("[exit code 1]"), "{obs}");
    assert!(!obs.contains("\\n") && !obs.contains("\"stdout\""), "{obs}");
    let found = json(&db, &["search", "ModuleNotFoundError: No module named", "--json"]);
    let runs: Vec<&str> = found.as_array().into_iter().flatten().filter_map(|h| h["instance_id"].as_str()).collect();
    assert_eq!(runs, ["regex-log"], "{found}");
    // The verifier's tests, with their messages.
    let tests = run["outcome"]["tests"].as_array().cloned().unwrap_or_default();
    let failing: Vec<&str> = tests.iter().filter(|t| t["passed"] == false).filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        failing,
        ["test_outputs.py::test_regex_matches_last_date", "test_outputs.py::test_rejects_invalid_dates"]
    );
    assert!(tests[1]["message"].as_str().is_some_and(|m| m.starts_with("AssertionError: assert ['2025-01-03']")));
    // A trial whose agent wrote no trajectory: its tests come from the verifier's output.
    assert_eq!(orphans(&db), [("polyglot-c-py".to_string(), Some(false), 2, "no_trajectory".to_string())]);
    // The classifier sees the edits: the run attempted them.
    let out = trajan(&db, &["classify", "--json"]);
    assert!(out.status.success(), "{}", common::both(&out));
    let labels = json(&db, &["labels", "--json"]);
    let summary =
        labels.as_array().into_iter().flatten().find(|l| l["instance_id"] == "regex-log").map(|l| l["summary"].clone());
    assert!(summary.as_ref().and_then(Value::as_str).is_some_and(|s| !s.contains("no edit attempted")), "{summary:?}");
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        let rel = entry.path().strip_prefix(from).unwrap_or_else(|e| panic!("{e}"));
        let target = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Two jobs of one task (issue 38): a trial whose agent kept no trajectory is that trial's
/// evaluation without a run, never another job's run's, whatever model (or none) it names.
#[test]
fn a_trial_without_a_trajectory_is_its_own_and_no_other_trials_run() {
    let (dir, db) = db();
    let job = layout("harbor-0.6-tools").join("jobs/2026-02-03__16-40-12");
    let (a, b) = (dir.path().join("jobs/a"), dir.path().join("jobs/b"));
    copy_tree(&job, &a);
    copy_tree(&job, &b);
    let trial = b.join("regex-log__Hq2wE9r");
    std::fs::remove_dir_all(trial.join("agent")).unwrap_or_else(|e| panic!("{e}"));
    let result = trial.join("result.json");
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap_or_default()).unwrap_or_default();
    r["agent_info"] = Value::Null;
    r["config"]["agent"]["model_name"] = Value::Null;
    std::fs::write(&result, r.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let stderr = ingest(&db, &[dir.path().join("jobs")]);
    assert!(!stderr.contains("error"), "{stderr}");
    let why: Vec<(String, String)> = orphans(&db).into_iter().map(|o| (o.0, o.3)).collect();
    assert!(why.contains(&("regex-log".to_string(), "no_trajectory".to_string())), "{why:?}");
    assert!(why.iter().all(|(_, w)| w == "no_trajectory"), "{why:?}");
    // The run of job a keeps its own trial's verdict and tests.
    let run = show(&db, "regex-log");
    assert!(run["outcome"]["source"].as_str().is_some_and(|s| s.contains("/jobs/a/")), "{}", run["outcome"]);
}

/// A Harbor trial written by the test: `reward` its verdict, `model` its configured model (none:
/// the trial names none), `steps` whether its agent kept a trajectory.
fn write_trial(job: &Path, task: &str, n: usize, model: Option<&str>, reward: f64, steps: bool) {
    let trial = job.join(format!("{task}__T{n:06}"));
    std::fs::create_dir_all(trial.join("verifier")).unwrap_or_else(|e| panic!("{e}"));
    let result = serde_json::json!({
        "task_name": task, "trial_name": format!("{task}__T{n:06}"), "source": "terminal-bench",
        "config": {"agent": {"model_name": model}}, "agent_info": null,
        "verifier_result": {"rewards": {"reward": reward}}, "exception_info": null
    });
    std::fs::write(trial.join("result.json"), result.to_string()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(trial.join("verifier/reward.txt"), format!("{reward}\n")).unwrap_or_else(|e| panic!("{e}"));
    if steps {
        std::fs::create_dir_all(trial.join("agent")).unwrap_or_else(|e| panic!("{e}"));
        let t = serde_json::json!({"schema_version": "ATIF-v1.2", "session_id": "s",
            "agent": {"name": "deepagent-harbor", "version": "0.0.1", "model_name": model},
            "steps": [{"step_id": 1, "source": "user", "message": "do the task"},
                      {"step_id": 2, "source": "agent", "message": "done"}]});
        std::fs::write(trial.join("agent/trajectory.json"), t.to_string()).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A written trial: its model, task index, reward, and whether it kept a trajectory.
type Trial = (Option<&'static str>, usize, f64, bool);

/// Every resolve figure adds up (issue 38): per model, the runs and the trials that kept no
/// trajectory together, as counted here from what the test wrote; every "X of Y (P%)" has
/// P = X/Y; `stats --json`, the Markdown table, the chart and the report give the same numbers;
/// a trial that names no model at all is counted apart under a name that says so.
#[test]
fn resolve_rates_per_model_add_up_with_trials_without_a_trajectory() {
    let (dir, db) = db();
    let models = ["anthropic/claude-opus-4-5", "openai/gpt-5"];
    // (model, task index, reward, trajectory kept), as the test counts them.
    let mut trials: Vec<Trial> = Vec::new();
    for (m, model) in models.iter().enumerate() {
        for i in 0..12 {
            let reward = if (i + m) % 3 == 0 { 1.0 } else { 0.0 };
            trials.push((Some(model), i, reward, i % 4 != 1));
        }
    }
    trials.push((None, 20, 0.0, false));
    trials.push((None, 21, 1.0, false));
    for (n, (model, task, reward, steps)) in trials.iter().enumerate() {
        let job = dir.path().join(format!("jobs/job-{}", model.map_or("none", |m| m.rsplit('/').next().unwrap_or(m))));
        write_trial(&job, &format!("task-{task:02}"), n, *model, *reward, *steps);
    }
    let stderr = ingest(&db, &[dir.path().join("jobs")]);
    assert!(!stderr.contains("error"), "{stderr}");
    let stats = json(&db, &["stats", "--by", "model", "--json"]);
    let rows = stats["outcomes"].as_array().cloned().unwrap_or_default();
    let row =
        |group: &str| rows.iter().find(|r| r["group"] == group).cloned().unwrap_or_else(|| panic!("{group}: {rows:?}"));
    for model in models.iter().map(|m| Some(*m)).chain([None]) {
        let mine: Vec<_> = trials.iter().filter(|t| t.0 == model).collect();
        let count = |f: &dyn Fn(&&Trial) -> bool| mine.iter().filter(|t| f(t)).count() as u64;
        let r = row(model.unwrap_or("no model named"));
        let n = |k: &str| r[k].as_u64().unwrap_or(u64::MAX);
        assert_eq!(n("resolved"), count(&|t| t.3 && t.2 >= 1.0), "{r}");
        assert_eq!(n("failed"), count(&|t| t.3 && t.2 < 1.0), "{r}");
        assert_eq!(n("no_trajectory"), count(&|t| !t.3), "{r}");
        assert_eq!(n("no_trajectory_resolved"), count(&|t| !t.3 && t.2 >= 1.0), "{r}");
        let rate = count(&|t| t.2 >= 1.0) as f64 / mine.len() as f64;
        assert!((r["resolve_rate"].as_f64().unwrap_or(-1.0) - rate).abs() < 1e-9, "{r}");
    }
    // Every "X of Y (P%)" anywhere has P = X/Y, and the texts agree.
    let markdown = String::from_utf8_lossy(&trajan(&db, &["stats", "--by", "model"]).stdout).into_owned();
    let report_path = dir.path().join("report.html");
    let out = trajan(&db, &["export", "report", "-o", &report_path.display().to_string()]);
    assert!(out.status.success(), "{}", common::both(&out));
    let report = std::fs::read_to_string(&report_path).unwrap_or_default();
    let figures = regex::Regex::new(r"(\d+) of (\d+) \((\d+\.\d)%\)").unwrap_or_else(|e| panic!("{e}"));
    let mut seen = 0;
    for text in [&markdown, &report] {
        for c in figures.captures_iter(text) {
            let (x, y, p): (f64, f64, f64) =
                (c[1].parse().unwrap_or(0.0), c[2].parse().unwrap_or(1.0), c[3].parse().unwrap_or(-1.0));
            assert!((x * 100.0 / y - p).abs() < 0.051, "{} is not {x}/{y}", &c[0]);
            seen += 1;
        }
    }
    let total = trials.len();
    let resolved_all = trials.iter().filter(|t| t.2 >= 1.0).count();
    let want = format!("{resolved_all} of {total} (");
    assert!(markdown.contains(&want), "the total {want}… in\n{markdown}");
    assert!(report.contains(&want), "the total {want}… in the report");
    assert!(seen >= 6, "{seen} figures:\n{markdown}");
}
