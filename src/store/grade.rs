//! Verdicts computed from a test log, as the SWE-bench harness computes them
//! (`swebench/harness/grading.py`: `get_eval_tests_report`, `get_resolution_status`).
//!
//! An outcome read from a harness folder without `report.json` keeps its tests as the harness's
//! log parser read them (`outcomes.logged`). When the task's FAIL_TO_PASS / PASS_TO_PASS lists
//! are known, `regrade` grades them and writes `resolved` and the `tests` rows; when
//! they are not (or no longer, the dataset's source replaced), it writes the tests ungraded and
//! `resolved` NULL. Each backend runs it from its `link::relink_instance`, which every write touching the
//! instance (a log, a trajectory, a dataset) calls, so the order of ingestion does not matter.
//!
//! The harness's rule: a FAIL_TO_PASS test succeeds when the log shows it PASSED or XFAIL, and
//! fails otherwise (FAILED, ERROR, SKIPPED, or missing from the log); a PASS_TO_PASS test
//! succeeds when PASSED, XFAIL or SKIPPED. Resolved (`RESOLVED_FULL`) when no listed test fails.

use crate::model::{LoggedTest, TestCase, TestGroup, TestStatus};

/// What a missing listed test is marked with.
pub const NOT_IN_LOG: &str = "not in the test output";
/// What a skipped test is marked with where it does not fail.
const SKIPPED: &str = "skipped";

/// The tests of a log graded against the task's lists, and the verdict.
#[derive(Debug, PartialEq)]
pub struct Graded {
    pub resolved: bool,
    pub tests: Vec<TestCase>,
}

/// Grade `logged` against the lists: the listed tests first (FAIL_TO_PASS, then PASS_TO_PASS,
/// in list order, those missing from the log included), then the log's other tests ungrouped.
pub fn grade(logged: &[LoggedTest], fail_to_pass: &[String], pass_to_pass: &[String]) -> Graded {
    let by_name: std::collections::HashMap<&str, &LoggedTest> = logged.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut tests = Vec::with_capacity(logged.len() + fail_to_pass.len());
    let mut resolved = true;
    let mut listed = std::collections::HashSet::new();
    for (group, names) in [(TestGroup::FailToPass, fail_to_pass), (TestGroup::PassToPass, pass_to_pass)] {
        for name in names {
            if !listed.insert(name.as_str()) {
                continue;
            }
            let found = by_name.get(name.as_str());
            let passed = matches!(
                (group, found.map(|t| t.status)),
                (_, Some(TestStatus::Passed | TestStatus::Xfail)) | (TestGroup::PassToPass, Some(TestStatus::Skipped))
            );
            resolved &= passed;
            let message = match found {
                None => Some(NOT_IN_LOG.to_string()),
                Some(t) => message_of(t),
            };
            tests.push(TestCase { name: name.clone(), group: Some(group), passed, message });
        }
    }
    tests.extend(logged.iter().filter(|t| !listed.contains(t.name.as_str())).map(ungraded));
    Graded { resolved, tests }
}

/// A test of a log that no list names: it passed unless the log shows it failed or errored.
pub fn ungraded(t: &LoggedTest) -> TestCase {
    TestCase {
        name: t.name.clone(),
        group: None,
        passed: !matches!(t.status, TestStatus::Failed | TestStatus::Error),
        message: message_of(t),
    }
}

fn message_of(t: &LoggedTest) -> Option<String> {
    match t.status {
        TestStatus::Skipped => Some(SKIPPED.to_string()),
        _ => t.message.clone(),
    }
}

/// A task's FAIL_TO_PASS and PASS_TO_PASS lists.
pub(super) type Lists = (Vec<String>, Vec<String>);

/// The lists as stored (JSON arrays, or NULL).
pub(super) fn lists_of(fail_to_pass: Option<String>, pass_to_pass: Option<String>) -> Lists {
    let list =
        |json: Option<String>| -> Vec<String> { json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default() };
    (list(fail_to_pass), list(pass_to_pass))
}

/// What an outcome with a test log (`logged`, JSON) and its verdict so far becomes under the
/// task's lists: its verdict and tests to write, or `None` when it is ungraded already and no
/// lists are known.
pub(super) fn regrade(
    logged: &str,
    resolved: Option<bool>,
    lists: Option<&Lists>,
) -> Option<(Option<bool>, Vec<TestCase>)> {
    if lists.is_none() && resolved.is_none() {
        // Ungraded already: written so (`insert_outcome`), or ungraded before.
        return None;
    }
    // Written by `insert_outcome` from the same type; a row that does not read back (edited by
    // hand) keeps no tests and no verdict.
    let logged: Vec<LoggedTest> = serde_json::from_str(logged).unwrap_or_default();
    Some(match lists {
        Some((f2p, p2p)) => {
            let g = grade(&logged, f2p, p2p);
            (Some(g.resolved), g.tests)
        }
        None => (None, logged.iter().map(ungraded).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, status: TestStatus) -> LoggedTest {
        LoggedTest { name: name.into(), status, message: None }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn resolved_when_every_listed_test_succeeds_as_the_harness_counts_it() {
        let log = [
            t("f1", TestStatus::Passed),
            t("f2", TestStatus::Xfail),
            t("p1", TestStatus::Passed),
            t("p2", TestStatus::Skipped),
            t("other", TestStatus::Failed),
        ];
        let g = grade(&log, &names(&["f1", "f2"]), &names(&["p1", "p2"]));
        assert!(g.resolved, "{g:?}");
        let other = g.tests.iter().find(|c| c.name == "other").map(|c| (c.group, c.passed));
        assert_eq!(other, Some((None, false)), "unlisted tests do not decide");
        let p2 = g.tests.iter().find(|c| c.name == "p2").map(|c| (c.passed, c.message.as_deref()));
        assert_eq!(p2, Some((true, Some("skipped"))));
    }

    #[test]
    fn a_skipped_or_missing_fail_to_pass_test_fails() {
        let g = grade(&[t("f1", TestStatus::Skipped)], &names(&["f1"]), &[]);
        assert!(!g.resolved);
        let g = grade(&[t("p1", TestStatus::Passed)], &names(&["f1"]), &names(&["p1"]));
        assert!(!g.resolved);
        let f1 = &g.tests[0];
        assert_eq!(
            (f1.group, f1.passed, f1.message.as_deref()),
            (Some(TestGroup::FailToPass), false, Some(NOT_IN_LOG))
        );
        // A PASS_TO_PASS test that errors fails too.
        let g = grade(&[t("f1", TestStatus::Passed), t("p1", TestStatus::Error)], &names(&["f1"]), &names(&["p1"]));
        assert!(!g.resolved);
    }

    #[test]
    fn empty_lists_resolve_as_in_the_harness() {
        // compute_fail_to_pass / compute_pass_to_pass return 1 for an empty list.
        assert!(grade(&[t("x", TestStatus::Failed)], &[], &[]).resolved);
    }
}
