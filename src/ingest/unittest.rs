//! Python unittest text output (RefactorBench AST tests).
//!
//! Non-verbose output names only the failures (`FAIL: test_x (__main__.Class.test_x)` blocks, each
//! with a traceback); verbose output (`-v`) also has one `test_x (...) ... ok` line per test. The
//! verdict is the status line after `Ran N tests in Xs`: `OK` or `FAILED (failures=k, errors=e)`.
//! `N` is not compared with the number of named tests: non-verbose output names only failures.
//!
//! The failure-block reader is shared with the harness test-log parser (Django's runner is
//! unittest underneath).

use crate::error::IngestError;
use crate::ingest::file_name::instance_from_file_name;
use crate::model::{Format, Parsed, TestCase, TestOutcome};
use std::collections::HashMap;
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let ran = lines
        .iter()
        .rposition(|l| ran_count(l).is_some())
        .ok_or_else(|| IngestError::shape(path, "no `Ran N tests in ...` line: not unittest output"))?;

    let mut tests = TestList::default();
    for (i, line) in lines.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| lines.get(p)).copied();
        if let Some((name, verdict)) = verbose_line(line, prev) {
            match verdict {
                Verdict::Passed => tests.set(name, true, None),
                Verdict::Failed(message) => tests.set(name, false, message),
                Verdict::Skipped => {}
            }
        }
    }
    for block in failure_blocks(&lines) {
        tests.set(&block.name, false, block.message);
    }

    let mut warnings = Vec::new();
    let status = lines.iter().skip(ran + 1).map(|l| l.trim()).find(|l| !l.is_empty());
    let resolved = match status {
        Some(s) if s == "OK" || s.starts_with("OK (") => Some(true),
        Some(s) if s.starts_with("FAILED") || s.starts_with("NO TESTS RAN") => Some(false),
        _ => {
            let any_failed = tests.cases.iter().any(|t| !t.passed);
            warnings.push(format!(
                "{}: line {}: no `OK` or `FAILED (...)` line after `Ran N tests`{}",
                path.display(),
                ran + 1,
                if any_failed { "; failures are named, so resolved = false" } else { "; resolved unknown" }
            ));
            any_failed.then_some(false)
        }
    };

    Ok(Parsed {
        outcomes: vec![TestOutcome {
            instance_id: instance_from_file_name(path),
            format: Some(Format::UnittestText),
            resolved,
            tests: tests.cases,
            log: Some(text.to_string()),
            ..TestOutcome::default()
        }],
        warnings,
        ..Parsed::default()
    })
}

/// `Ran 3 tests in 0.016s` -> 3.
fn ran_count(line: &str) -> Option<usize> {
    let rest = line.trim().strip_prefix("Ran ")?;
    let (n, rest) = rest.split_once(' ')?;
    (rest.starts_with("test") && rest.contains(" in ")).then_some(())?;
    n.parse().ok()
}

/// Test cases in first-seen order; a later verdict for the same name replaces the earlier one
/// (a verbose `... FAIL` line and its `FAIL:` block are one test).
#[derive(Default)]
pub(crate) struct TestList {
    pub cases: Vec<TestCase>,
    index: HashMap<String, usize>,
}

impl TestList {
    pub fn set(&mut self, name: &str, passed: bool, message: Option<String>) {
        match self.index.get(name).and_then(|&i| self.cases.get_mut(i)) {
            Some(case) => {
                case.passed = passed;
                if message.is_some() || passed {
                    case.message = message;
                }
            }
            None => {
                self.index.insert(name.to_string(), self.cases.len());
                self.cases.push(TestCase { name: name.to_string(), group: None, passed, message });
            }
        }
    }

    /// Attach a message to a test already listed; unknown names are ignored.
    pub fn add_message(&mut self, name: &str, message: Option<String>) {
        if let Some(case) = self.index.get(name).and_then(|&i| self.cases.get_mut(i))
            && !case.passed
            && message.is_some()
        {
            case.message = message;
        }
    }
}

enum Verdict {
    Passed,
    Failed(Option<String>),
    Skipped,
}

/// A verbose result line: `test_x (__main__.C.test_x) ... ok`. When the test has a docstring,
/// unittest prints the header alone and the docstring's first line before ` ... ok`; the header
/// (the previous line) is the name then, so it matches the `FAIL:` block of the same test.
fn verbose_line<'a>(line: &'a str, prev: Option<&'a str>) -> Option<(&'a str, Verdict)> {
    let (head, verdict) = line.rsplit_once(" ... ")?;
    let verdict = match verdict.trim() {
        "ok" | "expected failure" => Verdict::Passed,
        "FAIL" | "ERROR" => Verdict::Failed(None),
        "unexpected success" => Verdict::Failed(Some("unexpected success".to_string())),
        v if v.starts_with("skipped") => Verdict::Skipped,
        _ => return None,
    };
    let head = head.trim();
    if is_test_header(head) {
        return Some((head, verdict));
    }
    let prev = prev?.trim();
    is_test_header(prev).then_some((prev, verdict))
}

/// `test_x (module.Class.test_x)` or `test_x (module.Class)`, optionally followed by a subtest
/// description `(i=1)`.
pub(crate) fn is_test_header(s: &str) -> bool {
    let Some((method, rest)) = s.split_once(" (") else {
        return false;
    };
    let Some((dotted, _)) = rest.split_once(')') else {
        return false;
    };
    is_identifier(method) && !dotted.is_empty() && dotted.split('.').all(is_identifier)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// One `FAIL:`/`ERROR:` block of a unittest report.
#[derive(Debug, PartialEq)]
pub(crate) struct FailureBlock {
    pub name: String,
    /// The last exception line of the traceback (`AssertionError: ...`), trimmed.
    pub message: Option<String>,
}

fn is_rule(line: &str, c: char) -> bool {
    let t = line.trim_end();
    t.len() >= 10 && t.chars().all(|x| x == c)
}

/// The `FAIL:` / `ERROR:` blocks: a `=====` rule, the header, the docstring, a `-----` rule,
/// then the traceback up to the next rule.
pub(crate) fn failure_blocks(lines: &[&str]) -> Vec<FailureBlock> {
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines.get(i).copied().unwrap_or_default();
        let after_rule = i > 0 && lines.get(i - 1).is_some_and(|p| is_rule(p, '='));
        let header = line.strip_prefix("FAIL: ").or_else(|| line.strip_prefix("ERROR: "));
        let (Some(name), true) = (header, after_rule) else {
            i += 1;
            continue;
        };
        // Docstring lines, then the `-----` rule that opens the traceback.
        let mut j = i + 1;
        while j < lines.len() && !lines.get(j).is_some_and(|l| is_rule(l, '-') || is_rule(l, '=')) {
            j += 1;
        }
        if lines.get(j).is_some_and(|l| is_rule(l, '-')) {
            j += 1;
        }
        let start = j;
        while j < lines.len() && !lines.get(j).is_some_and(|l| is_rule(l, '-') || is_rule(l, '=')) {
            j += 1;
        }
        let traceback = lines.get(start..j).unwrap_or_default();
        blocks.push(FailureBlock {
            name: name.trim().to_string(),
            message: traceback.iter().rev().find_map(|l| exception_line(l)).map(str::to_string),
        });
        i = j.max(i + 1);
    }
    blocks
}

/// A traceback's exception line (`AssertionError: ...`, `KeyError: 'x'`,
/// `django.core.exceptions.ValidationError: ...`, a bare `AssertionError`), trimmed.
pub(crate) fn exception_line(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let line = line.trim_end();
    let head = line.split_once(':').map_or(line, |(h, _)| h);
    let last = head.rsplit('.').next()?;
    let dotted_name = head.split('.').all(is_identifier);
    let exception_like = ["Error", "Exception", "Failure", "Exit", "Interrupt", "Iteration", "Warning"]
        .iter()
        .any(|suffix| last.ends_with(suffix));
    (dotted_name && exception_like).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(path: &str, text: &str) -> (TestOutcome, Vec<String>) {
        let parsed = parse(Path::new(path), text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.outcomes.len(), 1);
        let o = parsed.outcomes.into_iter().next().unwrap_or_default();
        (o, parsed.warnings)
    }

    fn corpus(name: &str) -> String {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/refactorbench/test-outputs/");
        std::fs::read_to_string(format!("{dir}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn fixture_names_the_failure_and_its_file() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/refactorbench/demo__rename-task.txt");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        let (o, warnings) = outcome(path, &text);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(o.instance_id, "demo__rename-task");
        assert_eq!(o.format, Some(Format::UnittestText));
        assert_eq!(o.resolved, Some(false));
        assert_eq!(o.log.as_deref(), Some(text.as_str()));
        assert_eq!(o.tests.len(), 1, "non-verbose output names only the failure");
        let t = &o.tests[0];
        assert_eq!(t.name, "test_add_renamed_to_plus (__main__.TestRename.test_add_renamed_to_plus)");
        assert!(!t.passed);
        assert_eq!(t.group, None);
        let msg = t.message.as_deref().unwrap_or_default();
        assert!(msg.starts_with("AssertionError: "), "{msg}");
        assert!(msg.contains("calc/ops.py"), "{msg}");
    }

    #[test]
    fn partial_rename_fails_naming_models_py() {
        let name = "requests_super-to-complex-len__partial_core_only.txt";
        let (o, _) = outcome(name, &corpus(name));
        assert_eq!(o.instance_id, "requests_super-to-complex-len__partial_core_only");
        assert_eq!(o.resolved, Some(false));
        assert_eq!(o.tests.len(), 1);
        assert!(o.tests.iter().all(|t| !t.passed));
        for t in &o.tests {
            let msg = t.message.as_deref().unwrap_or_default();
            assert!(msg.contains("models.py"), "{msg}");
        }
    }

    #[test]
    fn unmodified_repos_fail() {
        for (name, failures) in [
            ("requests_super-to-complex-len__unmodified_repo.txt", 3),
            ("flask_get-debug-flag__unmodified_repo.txt", 6),
        ] {
            let (o, warnings) = outcome(name, &corpus(name));
            assert_eq!(o.resolved, Some(false), "{name}");
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(o.tests.len(), failures, "{name}");
            assert!(o.tests.iter().all(|t| !t.passed && t.message.is_some()), "{name}");
        }
    }

    #[test]
    fn verbose_output_records_passes_and_merges_failures() {
        let text = "\
test_a (__main__.T.test_a) ... ok
test_b (__main__.T.test_b)
Check b. ... FAIL
test_c (__main__.T.test_c) ... ERROR
test_d (__main__.T.test_d) ... skipped 'later'

======================================================================
ERROR: test_c (__main__.T.test_c)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"t.py\", line 9, in test_c
    open('missing.py')
FileNotFoundError: [Errno 2] No such file or directory: 'missing.py'

======================================================================
FAIL: test_b (__main__.T.test_b)
Check b.
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"t.py\", line 5, in test_b
    self.assertEqual(1, 2)
AssertionError: 1 != 2

----------------------------------------------------------------------
Ran 4 tests in 0.002s

FAILED (failures=1, errors=1, skipped=1)
";
        let (o, _) = outcome("v.txt", text);
        let got: Vec<(&str, bool, Option<&str>)> =
            o.tests.iter().map(|t| (t.name.as_str(), t.passed, t.message.as_deref())).collect();
        assert_eq!(
            got,
            vec![
                ("test_a (__main__.T.test_a)", true, None),
                ("test_b (__main__.T.test_b)", false, Some("AssertionError: 1 != 2")),
                (
                    "test_c (__main__.T.test_c)",
                    false,
                    Some("FileNotFoundError: [Errno 2] No such file or directory: 'missing.py'")
                ),
            ]
        );
        assert_eq!(o.resolved, Some(false));
    }

    #[test]
    fn ok_run_is_resolved() {
        let text = "...\r\n------------------------------------------------------------\r\nRan 3 tests in 0.001s\r\n\r\nOK\r\n";
        let (o, _) = outcome("ok.txt", text);
        assert_eq!(o.resolved, Some(true));
        assert!(o.tests.is_empty());
        let (o, _) = outcome("ok.txt", "Ran 1 test in 0.000s\n\nOK (skipped=1)\n");
        assert_eq!(o.resolved, Some(true));
    }

    #[test]
    fn missing_ran_line_is_an_error() {
        let text = "======================================================================\n\
                    FAIL: test_x (__main__.T.test_x)\n----------\nAssertionError: no\n";
        let err = parse(Path::new("bad.txt"), text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("bad.txt") && err.contains("Ran N tests"), "{err}");
        assert!(parse(Path::new("empty.txt"), "").is_err());
    }

    #[test]
    fn truncated_output_without_status_line_warns() {
        let (o, warnings) = outcome("cut.txt", "Ran 2 tests in 0.1s\n");
        assert_eq!(o.resolved, None);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("cut.txt: line 1"), "{}", warnings[0]);
    }

    #[test]
    fn exception_lines_are_recognized() {
        assert_eq!(exception_line("AssertionError: a : b"), Some("AssertionError: a : b"));
        assert_eq!(exception_line("AssertionError"), Some("AssertionError"));
        assert_eq!(
            exception_line("django.core.exceptions.ValidationError: x"),
            Some("django.core.exceptions.ValidationError: x")
        );
        assert_eq!(exception_line("Traceback (most recent call last):"), None);
        assert_eq!(exception_line("    raise AssertionError: x"), None);
        assert_eq!(exception_line("During handling of the above exception, another exception occurred:"), None);
    }
}
