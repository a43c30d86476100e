use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo");
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus");
const RUN_DIR: &str = "swebench-harness/logs/run_evaluation/demo-run/demo-model";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The member files of a fixture instance folder, as `source` would hand them over.
fn folder(instance: &str) -> (PathBuf, Vec<(PathBuf, String)>) {
    let dir = Path::new(FIXTURES).join(RUN_DIR).join(instance);
    let files = crate::ingest::source::HARNESS_FILES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .map(|p| {
            let text = read(&p);
            (p, text)
        })
        .collect();
    (dir, files)
}

fn only(parsed: Parsed) -> TestOutcome {
    assert_eq!(parsed.outcomes.len(), 1, "{:?}", parsed.outcomes);
    parsed.outcomes.into_iter().next().unwrap_or_default()
}

fn ok<T>(r: Result<T, IngestError>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn err_text<T: std::fmt::Debug>(r: Result<T, IngestError>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn groups(o: &TestOutcome) -> Vec<(Option<&str>, usize, usize)> {
    let mut out = Vec::new();
    for g in <TestGroup as strum::IntoEnumIterator>::iter() {
        let in_group = o.tests.iter().filter(|t| t.group == Some(g));
        let (pass, fail) = in_group.fold((0, 0), |(p, f), t| if t.passed { (p + 1, f) } else { (p, f + 1) });
        if pass + fail > 0 {
            out.push((Some(g.name()), pass, fail));
        }
    }
    out
}

#[test]
fn wrapped_fixture_report() {
    let path = Path::new(FIXTURES).join(RUN_DIR).join("demo__calc-1/report.json");
    let o = only(ok(parse_report(&path, &read(&path))));
    assert_eq!(o.instance_id, "demo__calc-1");
    assert_eq!(o.format, Some(Format::SwebenchReport));
    assert_eq!((o.resolved, o.patch_applied, o.patch_exists), (Some(true), Some(true), Some(true)));
    assert_eq!(groups(&o), vec![(Some("FAIL_TO_PASS"), 1, 0), (Some("PASS_TO_PASS"), 2, 0)]);
    assert!(o.tests.iter().any(|t| t.name == "tests/test_ops.py::test_div_by_zero"));
}

#[test]
fn harness_folder_with_report() {
    let (dir, files) = folder("demo__calc-1");
    assert_eq!(files.len(), 4, "report, run log, test output, patch");
    let parsed = ok(parse_dir(&dir, &files));
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let o = only(parsed);
    assert_eq!(o.instance_id, "demo__calc-1");
    assert_eq!(o.format, Some(Format::SwebenchHarness));
    assert_eq!(o.model.as_deref(), Some("demo-model"));
    assert_eq!(o.run_label.as_deref(), Some("demo-run"));
    assert_eq!((o.resolved, o.patch_applied, o.patch_exists), (Some(true), Some(true), Some(true)));
    assert_eq!(groups(&o).len(), 2, "tests come from report.json, grouped");
    let log = o.log.unwrap_or_default();
    assert!(log.contains("\u{1b}[32mPASSED"), "the log is kept raw, ANSI and all");
    assert!(log.contains(">>>>> Start Test Output"));
    assert_eq!(o.patch.as_deref(), Some(read(&dir.join("patch.diff")).as_str()));
}

#[test]
fn harness_folder_whose_patch_did_not_apply() {
    let (dir, files) = folder("demo__calc-2");
    assert!(!files.iter().any(|(p, _)| p.ends_with("report.json")));
    let o = only(ok(parse_dir(&dir, &files)));
    assert_eq!(o.instance_id, "demo__calc-2");
    assert_eq!((o.resolved, o.patch_applied, o.patch_exists), (Some(false), Some(false), Some(true)));
    assert_eq!(o.model.as_deref(), Some("demo-model"));
    assert!(o.tests.is_empty());
    let log = o.log.unwrap_or_default();
    assert!(log.trim_end().ends_with(">>>>> Patch Apply Failed"), "the run log is the log: {log}");
    assert!(o.patch.is_some_and(|p| p.contains("pow(a, b)")));
}

#[test]
fn harness_folder_without_report_reads_tests_from_the_log() {
    let (dir, files) = folder("demo__calc-1");
    let files: Vec<_> = files.into_iter().filter(|(p, _)| p.ends_with("test_output.txt")).collect();
    let o = only(ok(parse_dir(&dir, &files)));
    assert_eq!((o.resolved, o.patch_applied), (None, None), "a log alone gives no verdict");
    let got: Vec<(&str, bool, Option<TestGroup>)> =
        o.tests.iter().map(|t| (t.name.as_str(), t.passed, t.group)).collect();
    assert_eq!(
        got,
        vec![
            ("tests/test_ops.py::test_add", true, None),
            ("tests/test_ops.py::test_div", true, None),
            ("tests/test_ops.py::test_div_by_zero", true, None),
        ]
    );
}

#[test]
fn wrapped_key_names_the_instance_in_a_folder() {
    let dir = Path::new("/x/run-7/org__model/renamed-folder");
    let report = r#"{"demo__calc-9": {"resolved": false, "patch_successfully_applied": true}}"#;
    let files = vec![(dir.join("report.json"), report.to_string()), (dir.join("notes.md"), String::new())];
    let parsed = ok(parse_dir(dir, &files));
    assert_eq!(parsed.warnings.len(), 1, "notes.md is named as ignored");
    let o = only(parsed);
    assert_eq!(o.instance_id, "demo__calc-9");
    assert_eq!(o.model.as_deref(), Some("org__model"));
    assert_eq!(o.run_label.as_deref(), Some("run-7"));
    assert_eq!(o.resolved, Some(false));
}

#[test]
fn only_the_tail_of_a_long_run_log_is_kept() {
    let dir = Path::new("/x/run/model/demo__big-1");
    let mut log = String::new();
    for i in 0..20_000 {
        log.push_str(&format!("2025-01-01 - INFO - line {i} é\n"));
    }
    log.push_str(">>>>> Patch Apply Failed\n");
    let o = only(ok(parse_dir(dir, &[(dir.join("run_instance.log"), log.clone())])));
    let kept = o.log.unwrap_or_default();
    assert!(kept.len() <= RUN_LOG_TAIL && kept.len() > RUN_LOG_TAIL - 100, "{}", kept.len());
    assert!(kept.starts_with("2025-01-01"), "cut at a line start");
    assert!(log.ends_with(&kept));
    assert_eq!(o.resolved, Some(false));
    assert_eq!(tail("short", 10), "short");
}

#[test]
fn empty_folder_is_an_error() {
    let dir = Path::new("/x/run/model/demo__none");
    assert!(err_text(parse_dir(dir, &[])).contains("none of report.json"));
}

#[test]
fn real_flat_reports() {
    let path = Path::new(CORPUS).join("mini-swe-agent-1/django__django-11163/report.json");
    let o = only(ok(parse_report(&path, &read(&path))));
    assert_eq!(o.instance_id, "django__django-11163");
    assert_eq!(o.resolved, Some(true));
    assert_eq!(groups(&o), vec![(Some("FAIL_TO_PASS"), 1, 0), (Some("PASS_TO_PASS"), 141, 0)]);

    let path = Path::new(CORPUS).join("mini-swe-agent-1/django__django-16560/report.json");
    let o = only(ok(parse_report(&path, &read(&path))));
    assert_eq!(o.instance_id, "django__django-16560");
    assert_eq!(o.resolved, Some(false));
    let failed: Vec<&TestCase> = o.tests.iter().filter(|t| !t.passed).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].group, Some(TestGroup::PassToPass));
    assert_eq!(failed[0].name, "test_validate (constraints.tests.UniqueConstraintTests.test_validate)");
}

#[test]
fn flat_fixture_report_for_mini_swe_agent() {
    let path = Path::new(FIXTURES).join("mini-swe-agent-v1/demo__mini-1/report.json");
    let o = only(ok(parse_report(&path, &read(&path))));
    assert_eq!(o.instance_id, "demo__mini-1");
    assert_eq!(o.resolved, Some(false));
    assert_eq!(groups(&o), vec![(Some("FAIL_TO_PASS"), 1, 0), (Some("PASS_TO_PASS"), 1, 1)]);
}

#[test]
fn several_instances_and_infra_failure() {
    let text = r#"{
        "a__a-1": {"patch_is_None": true, "resolved": false},
        "a__a-2": {"resolved": true, "infra_failure": true, "tests_status": {"FAIL_TO_PASS": {"success": ["t", 3]}, "ODD": {}}}
    }"#;
    let parsed = ok(parse_report(Path::new("r.json"), text));
    let ids: Vec<&str> = parsed.outcomes.iter().map(|o| o.instance_id.as_str()).collect();
    assert_eq!(ids, vec!["a__a-1", "a__a-2"]);
    assert_eq!(parsed.outcomes[0].patch_exists, Some(false), "patch_is_None: true");
    assert_eq!(parsed.outcomes[1].resolved, None, "infra failure: verdict unknown");
    assert_eq!(parsed.outcomes[1].tests.len(), 1);
    let w = parsed.warnings.join("\n");
    assert!(w.contains("a__a-2: infra_failure"), "{w}");
    assert!(w.contains("non-string test name 3"), "{w}");
    assert!(w.contains("unknown test group \"ODD\""), "{w}");
}

#[test]
fn malformed_reports_are_errors() {
    let p = Path::new("report.json");
    let e = err_text(parse_report(p, r#"{"a__a-1": {"resolved": true, "tests_status": [1, 2]}}"#));
    assert!(e.contains("a__a-1: tests_status is not an object"), "{e}");
    let e = err_text(parse_report(p, r#"{"a__a-1": {"tests_status": {"PASS_TO_PASS": []}}}"#));
    assert!(e.contains("tests_status.PASS_TO_PASS is not an object"), "{e}");
    let e = err_text(parse_report(p, r#"{"a__a-1": {"tests_status": {"PASS_TO_PASS": {"failure": "t"}}}}"#));
    assert!(e.contains("PASS_TO_PASS.failure is not a list"), "{e}");
    let e = err_text(parse_report(p, r#"{"a__a-1": {"resolved": "yes"}}"#));
    assert!(e.contains("resolved must be true or false"), "{e}");
    let e = err_text(parse_report(p, r#"{"a__a-1": 5}"#));
    assert!(e.contains("not an instance report"), "{e}");
    assert!(err_text(parse_report(p, "{}")).contains("no instance"));
    assert!(err_text(parse_report(p, "[1]")).contains("expected a JSON object"));
    let e = err_text(parse_report(p, "{\n  \"a\": {\"resolved\": nope}\n}\n"));
    assert!(e.contains("report.json: line 2, column"), "{e}");
}

#[test]
fn fixture_summary() {
    let path = Path::new(FIXTURES).join("swebench-harness/demo-model.demo-run.json");
    let parsed = ok(parse_summary(&path, &read(&path)));
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let got: Vec<(&str, Option<bool>)> = parsed.outcomes.iter().map(|o| (o.instance_id.as_str(), o.resolved)).collect();
    assert_eq!(got, vec![("demo__calc-1", Some(true)), ("demo__calc-2", None)]);
    for o in &parsed.outcomes {
        assert_eq!(o.format, Some(Format::SwebenchSummary));
        assert_eq!(o.run_label.as_deref(), Some("demo-model.demo-run"));
        assert!(o.tests.is_empty());
    }
}

#[test]
fn real_summary_lists_pytest_6202_as_unresolved() {
    let name = "run_report.openrouter_deepseek_deepseek-v3.2.SWE-bench_SWE-bench_Verified";
    let path = Path::new(CORPUS).join(format!("swe-agent-1.1/{name}.json"));
    let parsed = ok(parse_summary(&path, &read(&path)));
    let o = parsed.outcomes.iter().find(|o| o.instance_id == "pytest-dev__pytest-6202");
    assert_eq!(o.map(|o| o.resolved), Some(Some(false)));
    assert_eq!(o.and_then(|o| o.run_label.as_deref()), Some(name));
    let count = |r: Option<bool>, pe: Option<bool>| {
        parsed.outcomes.iter().filter(|o| o.resolved == r && o.patch_exists == pe).count()
    };
    assert_eq!(count(Some(true), None), 11);
    assert_eq!(count(Some(false), None), 45);
    assert_eq!(count(Some(false), Some(false)), 11, "empty patches");
    assert_eq!(parsed.outcomes.len(), 67);
}

#[test]
fn summary_lists_and_shapes() {
    let p = Path::new("s.json");
    let text = r#"{"resolved_ids": ["a"], "empty_patch_ids": ["b"], "error_ids": ["c", "a", 7], "schema_version": 3}"#;
    let parsed = ok(parse_summary(p, text));
    let got: Vec<(&str, Option<bool>, Option<bool>)> =
        parsed.outcomes.iter().map(|o| (o.instance_id.as_str(), o.resolved, o.patch_exists)).collect();
    assert_eq!(got, vec![("a", Some(true), None), ("b", Some(false), Some(false)), ("c", None, None)]);
    let w = parsed.warnings.join("\n");
    assert!(w.contains("schema_version 3"), "{w}");
    assert!(w.contains("a is listed in both resolved_ids and error_ids"), "{w}");
    assert!(w.contains("non-string id 7"), "{w}");
    assert!(err_text(parse_summary(p, r#"{"resolved_ids": "a"}"#)).contains("resolved_ids is not a list"));
    assert!(err_text(parse_summary(p, r#"{"total_instances": 3}"#)).contains("none of resolved_ids"));
    assert!(err_text(parse_summary(p, "[]")).contains("expected a JSON object"));
}

/// A harness folder's files, named as the harness names them.
fn members(dir: &Path, files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files.iter().map(|(n, t)| (dir.join(n), t.to_string())).collect()
}

const PYTEST_LOG: &str = "+ : '>>>>> Start Test Output'\n+ pytest -rA t.py\nPASSED t.py::test_a\nFAILED t.py::test_b - boom\n+ : '>>>>> End Test Output'\n";

#[test]
fn layout_words_are_no_model_and_the_instance_folder_may_be_the_parent() {
    let cases = [
        ("/e/sub/logs/pytest-dev__pytest-1", None, None),
        ("/e/sub/run_evaluation/pytest-dev__pytest-1", None, None),
        ("/e/my results/run evaluation/pytest-dev__pytest-1", None, None),
        ("/e/logs/run_evaluation/run-7/org__model/pytest-dev__pytest-1", Some("org__model"), Some("run-7")),
    ];
    for (dir, model, run) in cases {
        let o = only(ok(parse_dir(Path::new(dir), &members(Path::new(dir), &[("patch.diff", "x")]))));
        assert_eq!(o.instance_id, "pytest-dev__pytest-1", "{dir}");
        assert_eq!((o.model.as_deref(), o.run_label.as_deref()), (model, run), "{dir}");
    }
    // `<instance>/eval/`: the instance is the parent folder, and `eval` names no model.
    let dir = Path::new("/e/run/pytest-dev__pytest-1/eval");
    let o = only(ok(parse_dir(dir, &members(dir, &[("patch.diff", "x"), ("test_output.txt", PYTEST_LOG)]))));
    assert_eq!((o.instance_id.as_str(), o.model.as_deref()), ("pytest-dev__pytest-1", None));
    let report = r#"{"resolved": true, "tests_status": {}}"#;
    let o = only(ok(parse_dir(dir, &members(dir, &[("report.json", report)]))));
    assert_eq!((o.instance_id.as_str(), o.resolved), ("pytest-dev__pytest-1", Some(true)), "a flat report in eval/");
}

#[test]
fn run_instance_log_names_the_run_and_model_of_a_copied_folder() {
    let dir = Path::new("/e/sub/logs/renamed");
    let log = "x - INFO - Intermediate patch for a__b-1 written to logs/run_evaluation/r1/org__m/a__b-1/patch.diff, now applying to container...\n";
    let o = only(ok(parse_dir(dir, &members(dir, &[("run_instance.log", log)]))));
    assert_eq!(o.instance_id, "a__b-1");
    assert_eq!((o.model.as_deref(), o.run_label.as_deref()), (Some("org__m"), Some("r1")));
}

#[test]
fn a_test_output_without_report_is_kept_to_be_graded() {
    let dir = Path::new("/e/sub/logs/pytest-dev__pytest-1");
    let o = only(ok(parse_dir(dir, &members(dir, &[("patch.diff", "x"), ("test_output.txt", PYTEST_LOG)]))));
    assert_eq!((o.resolved, o.patch_applied), (None, Some(true)), "graded later, against the task's lists");
    let logged: Vec<(&str, crate::model::TestStatus)> =
        o.logged.iter().flatten().map(|t| (t.name.as_str(), t.status)).collect();
    assert_eq!(
        logged,
        [("t.py::test_a", crate::model::TestStatus::Passed), ("t.py::test_b", crate::model::TestStatus::Failed)]
    );
    assert_eq!(o.tests.iter().filter(|t| !t.passed).count(), 1);
    // The harness says unresolved whatever the task.
    let timed_out = format!("{PYTEST_LOG}\n\nTimeout error: 1800 seconds exceeded.\n>>>>> Tests Timed Out\n");
    let o = only(ok(parse_dir(dir, &members(dir, &[("test_output.txt", timed_out.as_str())]))));
    assert_eq!((o.resolved, o.logged.is_none()), (Some(false), true));
    // A repository with no parser here: tests read, no verdict, nothing to grade.
    let dir = Path::new("/e/sub/logs/nodejs__node-1");
    let o = only(ok(parse_dir(dir, &members(dir, &[("test_output.txt", PYTEST_LOG)]))));
    assert_eq!((o.resolved, o.logged.is_none(), o.tests.len()), (None, true, 2));
}
