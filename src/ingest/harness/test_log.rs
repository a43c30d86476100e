//! Test names and verdicts read from a harness `test_output.txt`, for folders without a
//! `report.json`. The log is a `bash -x` trace with ANSI colours; newer harnesses mark the test
//! run between `>>>>> Start Test Output` and `>>>>> End Test Output`, and only that part is read
//! when the markers are there.
//!
//! Recognized lines (the conventions of the SWE-bench log parsers, so names match the ones in
//! reports):
//! - pytest: `PASSED tests/x.py::test_a`, `FAILED tests/x.py::test_b - AssertionError: ...`
//!   (`-rA` summary) and `tests/x.py::test_a PASSED [ 50%]` (`-v`);
//! - Django / unittest verbose: `test_x (module.Class) ... ok` / `... FAIL` / `... ERROR`; the
//!   name is everything before ` ... ` (a docstring line when the test has one, as in reports).
//!
//! The tests have no group: the log does not say which were expected to flip.

use crate::ingest::unittest::{TestList, failure_blocks};
use crate::model::TestCase;
use crate::sanitize::sanitize;

const START: &str = ">>>>> Start Test Output";
const END: &str = ">>>>> End Test Output";

pub(crate) fn parse_tests(log: &str) -> Vec<TestCase> {
    let clean = sanitize(log);
    let lines: Vec<&str> = clean.lines().collect();
    let region = test_region(&lines);
    let mut tests = TestList::default();
    for line in region {
        if let Some((name, passed, message)) = pytest_line(line).or_else(|| django_line(line)) {
            tests.set(name, passed, message);
        }
    }
    // unittest-style `FAIL:` blocks (Django) carry the messages of tests already named.
    for block in failure_blocks(region) {
        tests.add_message(&block.name, block.message);
    }
    tests.cases
}

/// The lines after the first line containing the start marker, up to the next line containing
/// the end marker. The marker may be echoed (`+ : '>>>>> Start Test Output'`), so containment,
/// not equality, decides.
fn test_region<'a, 'b>(lines: &'a [&'b str]) -> &'a [&'b str] {
    let start = lines.iter().position(|l| l.contains(START)).map_or(0, |i| i + 1);
    let rest = lines.get(start..).unwrap_or_default();
    let end = rest.iter().position(|l| l.contains(END)).unwrap_or(rest.len());
    rest.get(..end).unwrap_or(rest)
}

const PYTEST_STATUSES: [(&str, bool); 3] = [("PASSED", true), ("FAILED", false), ("ERROR", false)];

/// `PASSED node` / `FAILED node - message` / `node PASSED [ 50%]`.
fn pytest_line(line: &str) -> Option<(&str, bool, Option<String>)> {
    let t = line.trim();
    for (status, passed) in PYTEST_STATUSES {
        if let Some(rest) = t.strip_prefix(status).and_then(|r| r.strip_prefix(' ')) {
            let (name, message) = match rest.split_once(" - ") {
                Some((name, msg)) if !passed => (name.trim(), Some(msg.trim().to_string())),
                _ => (rest.trim(), None),
            };
            // A collection error names the module: `ERROR tests/test_x.py - ImportError`.
            if name.contains("::") || name.ends_with(".py") {
                return Some((name, passed, message.filter(|m| !m.is_empty())));
            }
        }
    }
    // `-v` lines end with a progress percentage.
    let t = match t.strip_suffix("%]").and_then(|s| s.rfind('[')) {
        Some(i) => t.get(..i).unwrap_or(t).trim_end(),
        None => t,
    };
    for (status, passed) in PYTEST_STATUSES {
        if let Some(name) = t.strip_suffix(status).and_then(|n| n.strip_suffix(' ')) {
            let name = name.trim();
            if name.contains("::") && !name.starts_with(['+', '-', '=']) {
                return Some((name, passed, None));
            }
        }
    }
    None
}

/// `test_x (module.Class) ... ok`.
fn django_line(line: &str) -> Option<(&str, bool, Option<String>)> {
    let (head, verdict) = line.rsplit_once(" ... ")?;
    let passed = match verdict.trim() {
        "ok" | "OK" => true,
        "FAIL" | "ERROR" => false,
        _ => return None,
    };
    let name = head.trim();
    (!name.is_empty()).then_some((name, passed, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(log: &str) -> Vec<(String, bool)> {
        parse_tests(log).into_iter().map(|t| (t.name, t.passed)).collect()
    }

    #[test]
    fn pytest_lines_in_both_orders_and_ansi() {
        let log = "\u{1b}[1mtests/t.py::test_a \u{1b}[32mPASSED\u{1b}[0m                 [ 50%]\n\
                   tests/t.py::test_b[x y] FAILED                                  [100%]\n\
                   =========================== short test summary info ============================\n\
                   PASSED tests/t.py::test_a\n\
                   \u{1b}[31mFAILED\u{1b}[0m tests/t.py::test_b[x y] - AssertionError: assert 1 == 2\n\
                   ERROR tests/test_broken.py - ImportError: nope\n";
        let tests = parse_tests(log);
        let got: Vec<(&str, bool, Option<&str>)> =
            tests.iter().map(|t| (t.name.as_str(), t.passed, t.message.as_deref())).collect();
        assert_eq!(
            got,
            vec![
                ("tests/t.py::test_a", true, None),
                ("tests/t.py::test_b[x y]", false, Some("AssertionError: assert 1 == 2")),
                ("tests/test_broken.py", false, Some("ImportError: nope")),
            ]
        );
        assert!(tests.iter().all(|t| t.group.is_none()));
    }

    #[test]
    fn django_lines_with_docstrings_and_failure_messages() {
        let log = "\
test_eq (constraints.tests.CheckConstraintTests.test_eq) ... ok
test_validate (constraints.tests.UniqueConstraintTests.test_validate) ... FAIL
test_name (constraints.tests.UniqueConstraintTests.test_name)
Partial unique constraints are not ignored by ... ok
  Applying admin.0001_initial... OK

======================================================================
FAIL: test_validate (constraints.tests.UniqueConstraintTests.test_validate)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/testbed/tests/constraints/tests.py\", line 9, in test_validate
django.core.exceptions.ValidationError: ['boom']

----------------------------------------------------------------------
Ran 3 tests in 0.010s
";
        let tests = parse_tests(log);
        assert_eq!(tests.len(), 3, "{tests:?}");
        assert_eq!(tests[1].name, "test_validate (constraints.tests.UniqueConstraintTests.test_validate)");
        assert!(!tests[1].passed);
        assert_eq!(tests[1].message.as_deref(), Some("django.core.exceptions.ValidationError: ['boom']"));
        assert_eq!(tests[2].name, "Partial unique constraints are not ignored by");
        assert!(tests[2].passed);
    }

    #[test]
    fn only_the_marked_region_is_read() {
        let log = "+ pytest tests/t.py::test_setup\ntests/t.py::test_setup PASSED\n\
                   + : '>>>>> Start Test Output'\n\
                   tests/t.py::test_real FAILED\n\
                   + : '>>>>> End Test Output'\n\
                   tests/t.py::test_after PASSED\n";
        assert_eq!(verdicts(log), vec![("tests/t.py::test_real".to_string(), false)]);
        // Without markers the whole log is read.
        assert_eq!(verdicts("tests/t.py::test_a PASSED\ntest_x (m.C) ... ERROR\n").len(), 2);
    }

    #[test]
    fn trace_lines_are_not_tests() {
        let log = "+ echo PASSED\n+ git status\nPASSED without a node id\n... ok\n\
                   ============ 2 passed in 0.1s ============\n";
        assert!(parse_tests(log).is_empty());
    }
}
