//! The results folders people keep, ingested by the real binary: every run with an evaluation
//! carries its verdict, whatever the layout (fixtures/layouts/, one folder per layout, built
//! from the layouts' descriptions and real examples):
//!
//! - `experiments/`: a SWE-bench/experiments submission (`evaluation/lite/<date>_<name>/` with
//!   `all_preds.jsonl`, `metadata.yaml`, `README.md`, `trajs/`, `logs/<instance>/` without
//!   run id or model level, some with only `patch.diff` + `test_output.txt`, `results/`);
//! - `beside-trajectory/`: harness output copied beside the trajectory (`<instance>/eval/`);
//! - `run-evaluation/`: `run_evaluation/<instance>/` and `run evaluation/<instance>/`, no
//!   model level, in a folder whose name has a space;
//! - `canonical/`: `logs/run_evaluation/<run_id>/<model>/<instance>/`;
//! - `swe-agent-0.x/`: a 0.x run folder with its `args.yaml`;
//! - `dataset/`: the three experiments tasks with their FAIL_TO_PASS / PASS_TO_PASS lists.
//!
//! The harness folders keep the dangling `image_build_dir` symlink every copy has.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;
use crate::common::{json, text, trajan};

fn layouts() -> PathBuf {
    common::fixtures_dir("layouts")
}

/// Ingest the given folders of fixtures/layouts, one `ingest` each, in order; each must exit 0
/// and report no problem.
fn ingest(db: &Path, parts: &[&str]) {
    for part in parts {
        let out = trajan(db, &["ingest".as_ref(), layouts().join(part).as_os_str()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "ingest {part}:\n{stdout}\n{stderr}");
        for word in ["error", "warning"] {
            assert!(
                !stderr.contains(word) && !stdout.contains(&format!("{word}:")),
                "ingest {part}: {word}:\n{stdout}\n{stderr}"
            );
        }
    }
}

struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn db() -> Db {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("layouts.db");
    Db { _dir: dir, path }
}

/// instance -> run summary (`runs --json`); one run per instance in these layouts.
fn runs(db: &Path) -> BTreeMap<String, Value> {
    let Value::Array(runs) = json(db, &["runs", "--json"]) else { panic!("runs --json is not a list") };
    let mut by_instance = BTreeMap::new();
    for r in runs {
        let instance = r["instance_id"].as_str().unwrap_or_default().to_string();
        assert!(by_instance.insert(instance.clone(), r).is_none(), "two runs of {instance}");
    }
    by_instance
}

fn verdicts(db: &Path) -> BTreeMap<String, Option<bool>> {
    runs(db).into_iter().map(|(i, r)| (i, r["resolved"].as_bool())).collect()
}

fn show(db: &Path, instance: &str) -> Value {
    json(db, &["show", instance, "--json"])
}

/// The outcome's source relative to fixtures/layouts.
fn outcome_source(run: &Value) -> String {
    let source = run["outcome"]["source"].as_str().unwrap_or_else(|| panic!("no outcome: {run}"));
    let root = layouts().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    Path::new(source).strip_prefix(&root).map(|p| p.display().to_string()).unwrap_or_else(|_| source.to_string())
}

fn assert_dangling(link: &Path) {
    let meta = std::fs::symlink_metadata(link).unwrap_or_else(|e| panic!("{}: {e}", link.display()));
    assert!(meta.file_type().is_symlink(), "{} must be a symlink (the fixture lost it)", link.display());
    assert!(std::fs::metadata(link).is_err(), "{} must dangle", link.display());
}

const SUB: &str = "experiments/evaluation/lite/20240402_sweagent_gpt4";
const DJANGO: &str = "django__django-11099";
const PYTEST: &str = "pytest-dev__pytest-5227";
const SYMPY: &str = "sympy__sympy-20590";

#[test]
fn experiments_submission_ingests_with_exit_0_and_every_run_gets_its_verdict() {
    assert_dangling(&layouts().join(SUB).join("logs").join(DJANGO).join("image_build_dir"));
    let db = db();
    ingest(&db.path, &["experiments", "dataset"]);
    let want: BTreeMap<String, Option<bool>> =
        [(DJANGO, Some(true)), (PYTEST, Some(true)), (SYMPY, Some(false))].map(|(i, v)| (i.to_string(), v)).into();
    assert_eq!(verdicts(&db.path), want);

    // The report's verdict for the full harness folder; the graded test logs for the others.
    let django = show(&db.path, DJANGO);
    assert_eq!(outcome_source(&django), format!("{SUB}/logs/{DJANGO}"));
    assert_eq!(django["outcome"]["verdict"], "reported");
    for (instance, failing) in [(PYTEST, 0), (SYMPY, 2)] {
        let run = show(&db.path, instance);
        assert_eq!(outcome_source(&run), format!("{SUB}/logs/{instance}"), "{instance}");
        assert_eq!(run["outcome"]["verdict"], "graded", "{instance}");
        let Value::Array(tests) = &run["outcome"]["tests"] else { panic!("no tests") };
        assert_eq!(tests.iter().filter(|t| t["passed"] == false).count(), failing, "{instance}: {tests:?}");
    }
    let sympy = show(&db.path, SYMPY);
    let f2p: Vec<&Value> =
        sympy["outcome"]["tests"].as_array().into_iter().flatten().filter(|t| t["group"] == "FAIL_TO_PASS").collect();
    assert_eq!(f2p.len(), 1);
    assert_eq!((f2p[0]["name"].as_str(), f2p[0]["passed"].as_bool()), (Some("test_immutable"), Some(false)));

    // The submission's model comes from its predictions, not from a folder named `logs`.
    for run in runs(&db.path).values() {
        assert_eq!(run["model"], "gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1");
    }
    // The summary that lost to a harness folder is named, with why.
    let unjoined = &django["unjoined_evaluations"];
    assert_eq!(unjoined.as_array().map(Vec::len), Some(1), "{unjoined}");
    assert!(unjoined[0]["source"].as_str().is_some_and(|s| s.ends_with("results/results.json")), "{unjoined}");
}

#[test]
fn a_test_log_is_graded_whichever_arrives_first() {
    let orders: [&[&str]; 4] = [
        &["experiments", "dataset"],
        &["dataset", "experiments"],
        // The log alone, then the dataset, then the trajectories and the rest.
        &[
            &format!("{SUB}/logs/{SYMPY}"),
            &format!("{SUB}/logs/{PYTEST}"),
            "dataset",
            &format!("{SUB}/trajs"),
            "experiments",
        ],
        &[&format!("{SUB}/trajs"), "dataset", &format!("{SUB}/logs")],
    ];
    for order in orders {
        let db = db();
        ingest(&db.path, order);
        let got = verdicts(&db.path);
        assert_eq!(got.get(PYTEST), Some(&Some(true)), "{order:?}: {got:?}");
        assert_eq!(got.get(SYMPY), Some(&Some(false)), "{order:?}: {got:?}");
        assert_eq!(show(&db.path, SYMPY)["outcome"]["verdict"], "graded", "{order:?}");
    }
}

#[test]
fn without_the_task_lists_a_test_log_is_evaluated_with_verdict_unknown() {
    let db = db();
    ingest(&db.path, &["experiments"]);
    let got = verdicts(&db.path);
    // results.json lists pytest as resolved; sympy is only in its test log.
    assert_eq!(got.get(PYTEST), Some(&Some(true)));
    assert_eq!(got.get(SYMPY), Some(&None));
    let sympy = show(&db.path, SYMPY);
    assert_eq!(sympy["outcome"]["verdict"], "ungraded");
    assert_eq!(sympy["outcome"]["resolved"], Value::Null);
    let shown = text(&db.path, &["show", SYMPY]);
    assert!(shown.contains("evaluated, verdict unknown"), "{shown}");
    // pytest's verdict is the summary's; its test log, not graded yet, gives its tests (both
    // join: issue 21), and `show` says where each comes from.
    let pytest = show(&db.path, PYTEST);
    assert!(outcome_source(&pytest).ends_with("results.json"), "{pytest}");
    let tests_from = pytest["outcome"]["tests_source"].as_str().unwrap_or_default();
    assert!(tests_from.ends_with(&format!("logs/{PYTEST}")), "{}", pytest["outcome"]);
    assert!(pytest["unjoined_evaluations"].as_array().is_some_and(Vec::is_empty), "{pytest}");
    let shown = text(&db.path, &["show", PYTEST]);
    assert!(shown.contains("tests from ") && shown.contains(&format!("{SUB}/logs/{PYTEST}\n")), "{shown}");
    // Once the dataset arrives the log's graded verdict replaces the summary's.
    ingest(&db.path, &["dataset"]);
    assert_eq!(outcome_source(&show(&db.path, PYTEST)), format!("{SUB}/logs/{PYTEST}"));
}

#[test]
fn a_dataset_replaced_without_the_task_takes_the_grade_back() {
    let db = db();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let copy = dir.path().join("SWE-bench_Lite.test.jsonl");
    std::fs::copy(layouts().join("dataset/SWE-bench_Lite.test.jsonl"), &copy).unwrap_or_else(|e| panic!("{e}"));
    ingest(&db.path, &["experiments"]);
    let ingest_copy = || {
        let out = trajan(&db.path, &["ingest".as_ref(), copy.as_os_str()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    ingest_copy();
    assert_eq!(verdicts(&db.path).get(SYMPY), Some(&Some(false)));
    let without: String = std::fs::read_to_string(&copy)
        .unwrap_or_else(|e| panic!("{e}"))
        .lines()
        .filter(|l| !l.contains(SYMPY))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&copy, without).unwrap_or_else(|e| panic!("{e}"));
    ingest_copy();
    assert_eq!(verdicts(&db.path).get(SYMPY), Some(&None));
    assert_eq!(show(&db.path, SYMPY)["outcome"]["verdict"], "ungraded");
}

const RUN1: &str = "beside-trajectory/trajectories/alice/anthropic_filemap__claude-3-5-sonnet-20241022__t-0.00__p-1.00__c-2.00___swe_bench_lite_test";

#[test]
fn harness_output_copied_beside_the_trajectory() {
    for inst in ["astropy__astropy-12907", "psf__requests-2317", "pallets__flask-4045"] {
        assert_dangling(&layouts().join(RUN1).join(inst).join("eval/image_build_dir"));
    }
    let db = db();
    ingest(&db.path, &["beside-trajectory"]);
    let got = verdicts(&db.path);
    assert_eq!(got.get("astropy__astropy-12907"), Some(&Some(true)), "{got:?}");
    assert_eq!(got.get("psf__requests-2317"), Some(&Some(false)), "the patch did not apply: {got:?}");
    let astropy = show(&db.path, "astropy__astropy-12907");
    assert_eq!(outcome_source(&astropy), format!("{RUN1}/astropy__astropy-12907/eval"));
    assert_eq!(astropy["outcome"]["tests"].as_array().map(Vec::len), Some(5));
    assert_eq!(show(&db.path, "psf__requests-2317")["outcome"]["patch_applied"], false);

    // The flask folder evaluated an earlier patch: not joined, and said so.
    assert_eq!(got.get("pallets__flask-4045"), Some(&None));
    let flask = show(&db.path, "pallets__flask-4045");
    assert_eq!(flask["outcome"], Value::Null);
    let unjoined = &flask["unjoined_evaluations"][0];
    assert_eq!(unjoined["reason"], "its patch differs from this run's submission", "{flask}");
    assert!(unjoined["source"].as_str().is_some_and(|s| s.ends_with("pallets__flask-4045/eval")), "{unjoined}");
    let shown = text(&db.path, &["show", "pallets__flask-4045"]);
    assert!(
        shown.lines().any(|l| l.starts_with("evaluation found in ")
            && l.ends_with("pallets__flask-4045/eval, not joined: its patch differs from this run's submission")),
        "{shown}"
    );
}

#[test]
fn run_evaluation_without_a_model_level_in_folders_with_spaces() {
    assert_dangling(&layouts().join("run-evaluation/my results/run evaluation/sympy__sympy-13480/image_build_dir"));
    let db = db();
    ingest(&db.path, &["run-evaluation"]);
    let got = verdicts(&db.path);
    assert_eq!(got.get("django__django-11133"), Some(&Some(true)), "{got:?}");
    assert_eq!(got.get("sympy__sympy-13480"), Some(&Some(true)), "{got:?}");
    assert_eq!(
        outcome_source(&show(&db.path, "django__django-11133")),
        "run-evaluation/my results/run_evaluation/django__django-11133"
    );
    assert_eq!(
        outcome_source(&show(&db.path, "sympy__sympy-13480")),
        "run-evaluation/my results/run evaluation/sympy__sympy-13480"
    );
    for run in runs(&db.path).values() {
        assert_eq!(run["model"], "anthropic/claude-sonnet-4-20250514");
    }
}

#[test]
fn canonical_harness_layout_keeps_joining() {
    let db = db();
    ingest(&db.path, &["canonical"]);
    let got = verdicts(&db.path);
    assert_eq!(got.get("pylint-dev__pylint-7080"), Some(&Some(false)), "{got:?}");
    let run = show(&db.path, "pylint-dev__pylint-7080");
    assert_eq!(
        outcome_source(&run),
        "canonical/logs/run_evaluation/nightly/openrouter__qwen__qwen3-coder/pylint-dev__pylint-7080"
    );
    assert_eq!(run["unjoined_evaluations"], Value::Array(Vec::new()));
}

#[test]
fn swe_agent_0x_model_comes_from_args_yaml() {
    let db = db();
    ingest(&db.path, &["swe-agent-0.x"]);
    let runs = runs(&db.path);
    let run = runs.get("marshmallow-code__marshmallow-1343").unwrap_or_else(|| panic!("{runs:?}"));
    assert_eq!(run["model"], "gpt4", "not the run folder's name");
}
