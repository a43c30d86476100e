//! The SWE-bench harness's test-log parsers (`swebench/harness/log_parsers/python.py`) and the
//! part of its grading that reads the log (`grading.py`, `get_logs_eval`), line for line, so
//! that test names match the task's FAIL_TO_PASS / PASS_TO_PASS lists, which the same parsers
//! wrote.
//!
//! - The log is read as Python reads text (`\r\n` and `\r` become `\n`).
//! - A log holding `>>>>> Patch Apply Failed`, `>>>>> Reset Failed`, `>>>>> Tests Errored` or
//!   `>>>>> Tests Timed Out` is unresolved, whatever the task. A log without the
//!   `>>>>> Start Test Output` / `>>>>> End Test Output` markers is not graded here (the harness
//!   counts it unresolved; a log without them was not written by the harness this follows).
//! - The part between the markers is parsed with the repository's parser; when it yields no
//!   test, the whole log is (the harness's fallback).
//! - Only the Python repositories of SWE-bench (full, Lite, Verified) have parsers here; for any
//!   other repository the verdict stays unknown rather than guessed.
//!
//! Where the harness would raise on a line (`FAILED` alone, `FAIL:` with no name), the line is
//! skipped. A status word that is none of the five (`ERROR:` read by the old-style matplotlib
//! parser) is skipped too: the harness counts such a test neither passed nor failed.

use crate::model::{LoggedTest, TestStatus};
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

const START: &str = ">>>>> Start Test Output";
const END: &str = ">>>>> End Test Output";
const BAD_CODES: [&str; 4] =
    [">>>>> Patch Apply Failed", ">>>>> Reset Failed", ">>>>> Tests Errored", ">>>>> Tests Timed Out"];

/// What reading a `test_output.txt` the harness's way gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// The harness counts it unresolved whatever the task: the marker it holds.
    Unresolved(&'static str),
    /// No test-output markers: not graded.
    NoMarkers,
    /// No parser for the instance's repository: not graded.
    NoParser(String),
    /// Each test the parser found, in the order it first appears, with its last status.
    Tests(Vec<LoggedTest>),
}

type Parser = fn(&str) -> Vec<(String, TestStatus)>;

/// Read a test log as the harness does for `instance_id` (`owner__repo-number`).
pub fn read(log: &str, instance_id: &str) -> Reading {
    let content = log.replace("\r\n", "\n").replace('\r', "\n");
    if let Some(code) = BAD_CODES.iter().find(|c| content.contains(**c)) {
        return Reading::Unresolved(code);
    }
    if !(content.contains(START) && content.contains(END)) {
        return Reading::NoMarkers;
    }
    let repo = repo_of(instance_id);
    let Some(parser) = parser_for(&repo) else { return Reading::NoParser(repo) };
    // `content.split(START)[1].split(END)[0]`
    let after = content.split(START).nth(1).unwrap_or_default();
    let region = after.split(END).next().unwrap_or_default();
    let mut found = parser(region);
    if found.is_empty() {
        found = parser(&content);
    }
    Reading::Tests(status_map(found))
}

/// `django__django-11099` -> `django/django`; `pvlib__pvlib-python-1072` -> `pvlib/pvlib-python`.
pub fn repo_of(instance_id: &str) -> String {
    let (owner, rest) = instance_id.split_once("__").unwrap_or(("", instance_id));
    let name = match rest.rsplit_once('-') {
        Some((name, number)) if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => rest,
    };
    format!("{owner}/{name}")
}

fn parser_for(repo: &str) -> Option<Parser> {
    Some(match repo {
        "astropy/astropy" | "scikit-learn/scikit-learn" | "sphinx-doc/sphinx" => pytest_v2,
        "django/django" => django,
        "matplotlib/matplotlib" => matplotlib,
        "mwaskom/seaborn" => seaborn,
        "psf/requests" | "pydicom/pydicom" | "pylint-dev/pylint" => pytest_options,
        "sympy/sympy" => sympy,
        "marshmallow-code/marshmallow"
        | "pallets/flask"
        | "pvlib/pvlib-python"
        | "pydata/xarray"
        | "pylint-dev/astroid"
        | "pytest-dev/pytest"
        | "pyvista/pyvista"
        | "sqlfluff/sqlfluff" => pytest,
        _ => return None,
    })
}

/// A Python dict filled in order: the last status of a name wins, its first place is kept.
fn status_map(found: Vec<(String, TestStatus)>) -> Vec<LoggedTest> {
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<LoggedTest> = Vec::new();
    for (name, status) in found {
        match at.get(&name) {
            Some(&i) => out[i].status = status,
            None => {
                at.insert(name.clone(), out.len());
                out.push(LoggedTest { name, status, message: None });
            }
        }
    }
    out
}

fn status(word: &str) -> Option<TestStatus> {
    Some(match word {
        "PASSED" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "SKIPPED" => TestStatus::Skipped,
        "ERROR" => TestStatus::Error,
        "XFAIL" => TestStatus::Xfail,
        _ => return None,
    })
}

const STATUS_WORDS: [&str; 5] = ["FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL"];

static STATUS_FIRST: LazyLock<Regex> = LazyLock::new(|| re(r"^(FAILED|PASSED|SKIPPED|ERROR|XFAIL)\s+(\S+)"));
static TEST_FIRST: LazyLock<Regex> = LazyLock::new(|| re(r"^(\S+)\s+(FAILED|PASSED|SKIPPED|ERROR|XFAIL)(?:\s|$)"));
static SKIP_COUNT: LazyLock<Regex> = LazyLock::new(|| re(r"^\[\d+\]"));
static OPTION: LazyLock<Regex> = LazyLock::new(|| re(r"(.*?)\[(.*)\]"));
static COLOUR: LazyLock<Regex> = LazyLock::new(|| re(r"\[(\d+)m"));
static SYMPY_FAILURE: LazyLock<Regex> = LazyLock::new(|| re(r"(_*) (.*)\.py:(.*) (_*)"));
static DJANGO_SPLIT: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    [
        re(r"(?m)^(.*?)\s\.\.\.\sTesting against Django installed in ((?s:.*?)) silenced\)\.\nok$"),
        re(r"(?m)^(.*?)\s\.\.\.\sInternal Server Error: /(.*)/\nok$"),
        re(r"(?m)^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$"),
    ]
});

/// The patterns are constants (`every_pattern_compiles` builds each one).
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a constant pattern compiles")
}

/// `_parse_pytest_result_line`: `STATUS name` (`FAILED name - message`) or `name STATUS ...`;
/// a skip summary (`SKIPPED [1] file:line: reason`) names no test.
fn pytest_line(line: &str) -> Option<(String, TestStatus)> {
    // Both patterns need a status word: most lines of a log have none.
    if !STATUS_WORDS.iter().any(|w| line.contains(w)) {
        return None;
    }
    if let Some(c) = STATUS_FIRST.captures(line) {
        let word = c.get(1)?.as_str();
        let mut name = c.get(2)?.as_str().to_string();
        if word == "FAILED" {
            name = line.replace(" - ", " ").split_whitespace().nth(1)?.to_string();
        }
        if word == "SKIPPED" && SKIP_COUNT.is_match(&name) {
            return None;
        }
        return Some((name, status(word)?));
    }
    let c = TEST_FIRST.captures(line)?;
    Some((c.get(1)?.as_str().to_string(), status(c.get(2)?.as_str())?))
}

/// The tests of a plain pytest output (no harness markers, no task to grade against: a
/// Terminal-Bench verifier's `test-stdout.txt`), each with its last status.
pub fn pytest_tests(log: &str) -> Vec<LoggedTest> {
    status_map(pytest_v2(log))
}

fn pytest(log: &str) -> Vec<(String, TestStatus)> {
    log.split('\n').filter_map(pytest_line).collect()
}

/// `parse_log_pytest_options`: a parametrised name whose option is an absolute path keeps only
/// the path's last component (`test_x[/tmp/abc/file]` -> `test_x[/file]`).
fn pytest_options(log: &str) -> Vec<(String, TestStatus)> {
    pytest(log).into_iter().map(|(name, s)| (option_name(&name), s)).collect()
}

fn option_name(name: &str) -> String {
    let Some(c) = OPTION.captures(name) else { return name.to_string() };
    let (main, mut option) = (c.get(1).map_or("", |m| m.as_str()), c.get(2).map_or("", |m| m.as_str()).to_string());
    if option.starts_with('/') && !option.starts_with("//") && !option.contains('*') {
        option = format!("/{}", option.rsplit('/').next().unwrap_or_default());
    }
    format!("{main}[{option}]")
}

/// `parse_log_pytest_v2`: colour codes (`[32m`) and control characters removed first.
fn pytest_v2(log: &str) -> Vec<(String, TestStatus)> {
    log.split('\n')
        .filter_map(|line| {
            let line = COLOUR.replace_all(line, "");
            let line: String = line.chars().filter(|c| !('\u{1}'..='\u{1f}').contains(c)).collect();
            pytest_line(&line)
        })
        .collect()
}

/// `parse_log_matplotlib`: the old pytest parser, mouse buttons spelled as numbers.
fn matplotlib(log: &str) -> Vec<(String, TestStatus)> {
    let mut out = Vec::new();
    for line in log.split('\n') {
        let mut line = line.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3");
        if !STATUS_WORDS.iter().any(|w| line.starts_with(w)) {
            continue;
        }
        if line.starts_with("FAILED") {
            line = line.replace(" - ", " ");
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [word, name, ..] = parts.as_slice()
            && let Some(s) = status(word)
        {
            out.push((name.to_string(), s));
        }
    }
    out
}

/// `parse_log_seaborn`.
fn seaborn(log: &str) -> Vec<(String, TestStatus)> {
    let mut out = Vec::new();
    for line in log.split('\n') {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with("FAILED") {
            if let Some(name) = parts.get(1) {
                out.push((name.to_string(), TestStatus::Failed));
            }
        } else if line.contains(" PASSED ") {
            if let [name, "PASSED", ..] = parts.as_slice() {
                out.push((name.to_string(), TestStatus::Passed));
            }
        } else if line.starts_with("PASSED")
            && let Some(name) = parts.get(1)
        {
            out.push((name.to_string(), TestStatus::Passed));
        }
    }
    out
}

/// `parse_log_sympy`: failure headers (`____ sympy/x/tests/test_y.py:test_z ____`) anywhere,
/// then `test_name ok` / `F` / `E` lines.
fn sympy(log: &str) -> Vec<(String, TestStatus)> {
    let mut out: Vec<(String, TestStatus)> = SYMPY_FAILURE
        .captures_iter(log)
        .map(|c| {
            let file = c.get(2).map_or("", |m| m.as_str());
            let test = c.get(3).map_or("", |m| m.as_str());
            (format!("{file}.py:{test}"), TestStatus::Failed)
        })
        .collect();
    for line in log.split('\n') {
        let line = line.trim();
        if !line.starts_with("test_") {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or_default().to_string();
        if line.ends_with(" E") {
            out.push((first.clone(), TestStatus::Error));
        }
        if line.ends_with(" F") {
            out.push((first.clone(), TestStatus::Failed));
        }
        if line.ends_with(" ok") {
            out.push((first, TestStatus::Passed));
        }
    }
    out
}

/// `parse_log_django`: `name ... ok|OK|FAIL|ERROR|skipped`, `FAIL: name` / `ERROR: name`
/// headers, an `ok` on its own line for the last test named, and three known interruptions.
fn django(log: &str) -> Vec<(String, TestStatus)> {
    let mut out = Vec::new();
    let mut prev_test: Option<String> = None;
    for raw in log.split('\n') {
        let mut line = raw.trim().to_string();
        if line.contains("--version is equivalent to version") {
            out.push(("--version is equivalent to version".to_string(), TestStatus::Passed));
        }
        if let Some((head, _)) = line.split_once(" ... ") {
            prev_test = Some(head.to_string());
        }
        for suffix in [" ... ok", " ... OK", " ...  OK"] {
            if line.ends_with(suffix) {
                // django__django-7188: the test's line starts with a migration's output.
                if line.trim().starts_with("Applying sites.0002_alter_domain_unique...test_no_migrations") {
                    line = line.split_once("...").map_or(line.as_str(), |(_, r)| r).trim().to_string();
                }
                let test = line.rsplit_once(suffix).map_or(line.as_str(), |(t, _)| t);
                out.push((test.to_string(), TestStatus::Passed));
                break;
            }
        }
        if let Some((test, _)) = line.split_once(" ... skipped") {
            out.push((test.to_string(), TestStatus::Skipped));
        }
        if line.ends_with(" ... FAIL")
            && let Some((test, _)) = line.split_once(" ... FAIL")
        {
            out.push((test.to_string(), TestStatus::Failed));
        }
        if line.starts_with("FAIL:")
            && let Some(test) = line.split_whitespace().nth(1)
        {
            out.push((test.trim().to_string(), TestStatus::Failed));
        }
        if line.ends_with(" ... ERROR")
            && let Some((test, _)) = line.split_once(" ... ERROR")
        {
            out.push((test.to_string(), TestStatus::Error));
        }
        if line.starts_with("ERROR:")
            && let Some(test) = line.split_whitespace().nth(1)
        {
            out.push((test.trim().to_string(), TestStatus::Error));
        }
        if line.trim_start().starts_with("ok")
            && let Some(test) = &prev_test
        {
            out.push((test.clone(), TestStatus::Passed));
        }
    }
    for pattern in DJANGO_SPLIT.iter() {
        for c in pattern.captures_iter(log) {
            if let Some(name) = c.get(1) {
                out.push((name.as_str().to_string(), TestStatus::Passed));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(found: Vec<(String, TestStatus)>) -> Vec<(String, TestStatus)> {
        status_map(found).into_iter().map(|t| (t.name, t.status)).collect()
    }

    fn pairs(v: &[(&str, TestStatus)]) -> Vec<(String, TestStatus)> {
        v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    use TestStatus::*;

    #[test]
    fn every_pattern_compiles() {
        for r in [&*STATUS_FIRST, &*TEST_FIRST, &*SKIP_COUNT, &*OPTION, &*COLOUR, &*SYMPY_FAILURE] {
            assert!(!r.as_str().is_empty());
        }
        assert_eq!(DJANGO_SPLIT.len(), 3);
    }

    #[test]
    fn repositories_from_instance_ids() {
        assert_eq!(repo_of("django__django-11099"), "django/django");
        assert_eq!(repo_of("pvlib__pvlib-python-1072"), "pvlib/pvlib-python");
        assert_eq!(repo_of("scikit-learn__scikit-learn-10297"), "scikit-learn/scikit-learn");
        assert_eq!(repo_of("demo__calc-1"), "demo/calc");
    }

    #[test]
    fn pytest_lines_as_the_harness_reads_them() {
        let log = "tests/t.py::test_a PASSED                                [ 25%]\n\
                   tests/t.py::test_b[x y] FAILED\n\
                   FAILED tests/t.py::test_b[x y] - AssertionError\n\
                   PASSED tests/t.py::test_a\n\
                   FAILED tests/t.py::test_c - AssertionError: 1 == 2\n\
                   SKIPPED [1] tests/t.py:12: needs network\n\
                   SKIPPED tests/t.py::test_d\n\
                   XFAIL tests/t.py::test_e - reason\n\
                   ERROR tests/t.py::test_f - fixture\n\
                   + echo PASSED\n";
        assert_eq!(
            map(pytest(log)),
            pairs(&[
                ("tests/t.py::test_a", Passed),
                ("tests/t.py::test_b[x", Failed),
                ("tests/t.py::test_c", Failed),
                ("tests/t.py::test_d", Skipped),
                ("tests/t.py::test_e", Xfail),
                ("tests/t.py::test_f", Error),
            ])
        );
    }

    #[test]
    fn option_paths_keep_their_last_component() {
        assert_eq!(option_name("t.py::test_x[/tmp/a/b.dcm]"), "t.py::test_x[/b.dcm]");
        assert_eq!(option_name("t.py::test_x[//net/a]"), "t.py::test_x[//net/a]");
        assert_eq!(option_name("t.py::test_x[/a/*.py]"), "t.py::test_x[/a/*.py]");
        assert_eq!(option_name("t.py::test_x[a-b]"), "t.py::test_x[a-b]");
        assert_eq!(option_name("t.py::test_x"), "t.py::test_x");
    }

    #[test]
    fn colour_codes_are_dropped_for_astropy() {
        let log = "\u{1b}[32mPASSED\u{1b}[0m astropy/t.py::test_a\n";
        assert_eq!(map(pytest_v2(log)), pairs(&[("astropy/t.py::test_a", Passed)]));
        assert!(pytest(log).is_empty(), "the plain parser does not strip them");
    }

    #[test]
    fn django_runner_lines() {
        let log = "test_a (m.T) ... ok\n\
                   test_b (m.T) ... FAIL\n\
                   test_c (m.T) ... skipped 'no db'\n\
                   test_d (m.T) ... ERROR\n\
                   test_e (m.T) ... some output\n\
                   ok\n\
                   Docstring of a test ... ok\n\
                   FAIL: test_b (m.T)\n\
                   test_f (m.T) ... System check identified no issues (0 silenced).\nok\n";
        let got = map(django(log));
        let want = pairs(&[
            ("test_a (m.T)", Passed),
            ("test_b", Failed),
            ("test_c (m.T)", Skipped),
            ("test_d (m.T)", Error),
            ("test_e (m.T)", Passed),
            ("Docstring of a test", Passed),
            ("test_f (m.T)", Passed),
        ]);
        for w in &want {
            assert!(got.contains(w), "{w:?} in {got:?}");
        }
        // `FAIL: test_b (m.T)` names `test_b` (its first word), as the harness does.
        assert!(got.contains(&("test_b (m.T)".to_string(), Failed)));
    }

    #[test]
    fn sympy_headers_and_status_lines() {
        let log = "test_sums ok\ntest_products F\ntest_broken E\n\
                   ________________ sympy/core/tests/test_basic.py:test_subs ________________\n";
        assert_eq!(
            map(sympy(log)),
            pairs(&[
                ("sympy/core/tests/test_basic.py:test_subs", Failed),
                ("test_sums", Passed),
                ("test_products", Failed),
                ("test_broken", Error),
            ])
        );
    }

    #[test]
    fn seaborn_and_matplotlib() {
        let log = "tests/t.py::test_a PASSED [ 10%]\nFAILED tests/t.py::test_b - x\nPASSED tests/t.py::test_c\n";
        assert_eq!(
            map(seaborn(log)),
            pairs(&[("tests/t.py::test_a", Passed), ("tests/t.py::test_b", Failed), ("tests/t.py::test_c", Passed)])
        );
        let log = "PASSED lib/t.py::test_click[MouseButton.LEFT]\nFAILED lib/t.py::test_x - boom\nERROR: not found\n";
        assert_eq!(map(matplotlib(log)), pairs(&[("lib/t.py::test_click[1]", Passed), ("lib/t.py::test_x", Failed)]));
    }

    #[test]
    fn the_region_between_markers_is_read_and_bad_codes_decide() {
        let log = "+ pytest\ntests/t.py::test_setup PASSED\r\n+ : '>>>>> Start Test Output'\r\n\
                   PASSED tests/t.py::test_real\r\n+ : '>>>>> End Test Output'\nPASSED tests/t.py::test_after\n";
        let Reading::Tests(tests) = read(log, "pytest-dev__pytest-1") else { panic!("not read") };
        assert_eq!(tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["tests/t.py::test_real"]);
        // Nothing between the markers: the whole log.
        let log = ">>>>> Start Test Output\n>>>>> End Test Output\nPASSED tests/t.py::test_x\n";
        let Reading::Tests(tests) = read(log, "pytest-dev__pytest-1") else { panic!("not read") };
        assert_eq!(tests.len(), 1);
        assert_eq!(read("x\n>>>>> Tests Timed Out\n", "a__b-1"), Reading::Unresolved(">>>>> Tests Timed Out"));
        assert_eq!(read("PASSED t.py::a\n", "pytest-dev__pytest-1"), Reading::NoMarkers);
        let marked = ">>>>> Start Test Output\nok\n>>>>> End Test Output\n";
        assert_eq!(read(marked, "nodejs__node-1"), Reading::NoParser("nodejs/node".into()));
    }
}
