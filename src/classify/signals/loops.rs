//! The read-edit-test-revert loop (SWE-Bench ProMax's finding on failed runs): the same test
//! failing the same way after each of several edits.

use super::TestLoop;
use super::edits::EditEvent;
use crate::analysis::markers::runs_tests;
use crate::classify::input::Step;

/// A loop needs this many failing runs of the same failure, with edits between each.
const MIN_RUNS: usize = 3;
/// Lines of an observation that say how a run failed.
const FAILURE_MARKERS: &[&str] = &[
    "Error",
    "error:",
    "FAILED",
    "FAIL:",
    "FAIL ",
    "--- FAIL",
    "panicked at",
    "assert",
    "Exception",
    "BUILD FAILURE",
    "Segmentation fault",
    "expected",
];

/// Whether a step runs tests or a script that checks the fix.
fn checks(action: &str) -> bool {
    let a = action.trim_start();
    runs_tests(a)
        || ["python ", "python3 ", "node ", "go run", "cargo run", "java ", "npx ", "./"]
            .iter()
            .any(|p| a.starts_with(p))
        || a.contains("&& python ")
        || a.contains("&& python3 ")
        || a.contains("mvn ")
        || a.contains("gradle")
        || a.contains("make ")
}

/// How a run failed, with numbers, addresses and timings folded so that two runs of the same
/// failure compare equal; `None` when the output shows no failure.
pub(super) fn failure(observation: &str) -> Option<String> {
    let lines: Vec<String> = observation
        .lines()
        .filter(|l| FAILURE_MARKERS.iter().any(|m| l.contains(m)))
        .map(|l| {
            let mut out = String::new();
            let mut last_digit = false;
            for c in l.trim().chars() {
                if c.is_ascii_digit() {
                    if !last_digit {
                        out.push('#');
                    }
                    last_digit = true;
                } else {
                    last_digit = false;
                    out.push(c);
                }
            }
            out.chars().take(200).collect()
        })
        .collect();
    let tail: Vec<String> = lines.into_iter().rev().take(3).collect();
    (!tail.is_empty()).then(|| tail.into_iter().rev().collect::<Vec<_>>().join(" | "))
}

/// Runs of a check that failed the same way, each after an edit of a file that is not scratch;
/// three or more make a loop.
pub(super) fn loops(steps: &[Step], edits: &[EditEvent], scratch: &dyn Fn(&str) -> bool) -> Vec<TestLoop> {
    let runs: Vec<(usize, String, String)> = steps
        .iter()
        .filter(|s| checks(&s.action))
        .filter_map(|s| {
            failure(&s.observation).map(|f| (s.index as usize, f, s.action.lines().next().unwrap_or("").to_string()))
        })
        .collect();
    let edited_between = |a: usize, b: usize| -> Vec<usize> {
        let mut v: Vec<usize> = edits
            .iter()
            .filter(|e| !e.rejected() && !scratch(&e.path))
            .filter_map(|e| e.step)
            .filter(|&s| s > a && s < b)
            .collect();
        v.dedup();
        v
    };
    let mut out: Vec<TestLoop> = Vec::new();
    let mut used = vec![false; runs.len()];
    for i in 0..runs.len() {
        if used[i] {
            continue;
        }
        let mut chain = vec![i];
        let mut edits_seen = Vec::new();
        for j in i + 1..runs.len() {
            if runs[j].1 != runs[i].1 {
                continue;
            }
            let prev = runs[*chain.last().unwrap_or(&i)].0;
            let between = edited_between(prev, runs[j].0);
            if between.is_empty() {
                continue;
            }
            edits_seen.extend(between);
            chain.push(j);
        }
        if chain.len() >= MIN_RUNS {
            for &c in &chain {
                used[c] = true;
            }
            out.push(TestLoop {
                command: runs[i].2.chars().take(120).collect(),
                runs: chain.iter().map(|&c| runs[c].0).collect(),
                edits: edits_seen,
                failure: runs[i].1.chars().take(240).collect(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_compare_without_their_numbers() {
        let a =
            failure("collected 3 items\nFAILED tests/test_a.py::test_x - AssertionError: 3 != 4\n1 failed in 0.12s");
        let b =
            failure("collected 3 items\nFAILED tests/test_a.py::test_x - AssertionError: 5 != 4\n1 failed in 0.31s");
        assert!(a.is_some() && a == b);
        assert_eq!(failure("3 passed in 0.1s"), None);
    }
}
