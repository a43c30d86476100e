//! Onset and blame on small hand-built runs (failure-modes.md, "Failure onset and blame"): each
//! rule with the near miss that must not fire.

use super::{edit, reconstructed, run, step};
use crate::classify::input::{Outcome, RunInput, Task};
use crate::classify::signals::*;
use crate::label::taxonomy::Taxonomy;
use crate::label::{Blame, Label};
use crate::model::{StepFlags, TestCase, TestGroup};

fn label(r: &RunInput) -> Label {
    let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("the built-in taxonomy"));
    crate::classify::heuristic::classify(r.id, &compute(r), &taxonomy, String::new())
}

/// The onset step and the rule that gave it (the rationale's brackets).
fn onset(l: &Label) -> (Option<usize>, String) {
    let o = l.judgement.onset.clone().unwrap_or_default();
    let rule = crate::review::onset_validity::rule_of(&o.rationale).to_string();
    (o.step, rule)
}

fn blame(l: &Label) -> Option<Blame> {
    l.judgement.blame.as_ref().and_then(|b| b.value)
}

fn test(name: &str, group: TestGroup, passed: bool, message: Option<&str>) -> TestCase {
    TestCase { name: name.into(), group: Some(group), passed, message: message.map(str::to_string) }
}

fn format_error(i: i64) -> crate::classify::input::Step {
    let mut s = step(i, "", "Your output was not formatted correctly");
    s.flags = StepFlags { format_error: true, ..Default::default() };
    s
}

#[test]
fn a_format_exit_starts_at_the_first_of_its_final_streak_unless_an_earlier_error_decided() {
    // An early streak recovered from (2, 3), then the final one (7, 8, 9) before the exit.
    let mut steps = vec![step(0, "ls", "a.py"), step(1, "cat a.py", "def f(): pass")];
    steps.extend([format_error(2), format_error(3)]);
    steps.extend((4..7).map(|i| step(i, "grep -n f a.py", "1:def f()")));
    steps.extend((7..10).map(format_error));
    let mut r = run(steps.clone(), Vec::new(), Some(false), None);
    r.exit_status = Some("exit_format".into());
    let l = label(&r);
    assert_eq!(onset(&l), (Some(7), "final_format_streak".into()));
    assert_eq!(blame(&l), Some(Blame::Agent));
    // The same steps with a submitted exit: no format exit, no streak; nothing else to go on.
    let mut submitted = run(steps.clone(), Vec::new(), Some(false), None);
    submitted.exit_status = Some("submitted".into());
    let l = label(&submitted);
    assert_eq!(l.judgement.onset.as_ref().and_then(|o| o.step), None);
    assert!(l.judgement.onset.as_ref().is_some_and(|o| o.rationale.starts_with("onset unknown")), "{l:?}");
    // An edit written in a reply at step 5, never run: it decided the run before the streak.
    steps[5] = step(5, "", "");
    steps[5].response = Some(
        r#"I will fix f: str_replace_editor{"command": "str_replace", "path": "/testbed/a.py", "old_str": "pass", "new_str": "return 1"}"#
            .into(),
    );
    let mut announced = run(steps, Vec::new(), Some(false), None);
    announced.exit_status = Some("exit_format".into());
    let l = label(&announced);
    assert_eq!(onset(&l), (Some(5), "announced_edit_never_run".into()), "{:?}", l.judgement);
}

#[test]
fn a_fix_undone_by_git_after_a_check_is_the_onset_at_its_reset() {
    let steps = vec![
        step(0, "cat src/calc.py", "def add(a, b):\n    return a - b\n"),
        step(1, "sed -i 's/return a - b/return a + b/' src/calc.py", ""),
        step(2, "python -m pytest tests", "1 passed"),
        step(3, "git checkout src/calc.py", ""),
        step(4, "python -m pytest tests", "1 failed"),
    ];
    let edits = reconstructed(&steps, Some(""));
    let l = label(&run(steps, edits, Some(false), Some("")));
    assert_eq!(onset(&l), (Some(3), "revert_never_reapplied".into()), "{:?}", l.judgement);
}

#[test]
fn an_edit_that_matched_nothing_is_the_onset() {
    let steps = vec![
        step(0, "cat src/calc.py", "def add(a, b):\n    return a - b\n"),
        step(1, "sed -i 's/return a \\* b/return a + b/' src/calc.py", ""),
        step(2, "python -m pytest tests", "1 failed"),
    ];
    let edits = reconstructed(&steps, Some(""));
    let l = label(&run(steps, edits, Some(false), Some("")));
    assert_eq!(onset(&l), (Some(1), "edit_changed_nothing".into()), "{:?}", l.judgement);
}

#[test]
fn a_refused_edit_given_up_is_the_onset_at_its_last_refusal() {
    let steps = (0..5).map(|i| step(i, "str_replace_editor str_replace /testbed/a.py", "No replacement")).collect();
    let refused = vec![
        edit(Some(1), "/testbed/a.py", "str_replace", "refused_by_tool", &[], None),
        edit(Some(3), "/testbed/a.py", "str_replace", "refused_by_tool", &[], None),
    ];
    let l = label(&run(steps, refused, Some(false), Some("")));
    assert_eq!(onset(&l), (Some(3), "refused_edit_abandoned".into()), "{:?}", l.judgement);
    // Refused, then applied: nothing was given up.
    let steps = (0..5).map(|i| step(i, "str_replace_editor str_replace /testbed/a.py", "")).collect();
    let recovered = vec![
        edit(Some(1), "/testbed/a.py", "str_replace", "refused_by_tool", &[], None),
        edit(Some(3), "/testbed/a.py", "str_replace", "applied", &[], Some("@@ -1 +1 @@\n-x = 1\n+x = compute(2)\n")),
    ];
    let l = label(&run(steps, recovered, Some(false), Some("")));
    assert_ne!(onset(&l).1, "refused_edit_abandoned");
}

/// A run that tried one fix (taken back), then wrote the one it submitted through a script
/// written a step before.
fn committed_fix() -> RunInput {
    let submission = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x is not None)\n";
    let steps = vec![
        step(0, "cat pkg/core.py", "def total(xs):\n    return sum(xs)\n"),
        step(1, "str_replace_editor str_replace /testbed/pkg/core.py", "The file has been edited."),
        step(2, "str_replace_editor str_replace /testbed/pkg/core.py", "The file has been edited."),
        step(3, "cat <<'EOF' > fix.py\nopen('pkg/core.py')\nEOF", ""),
        step(4, "python fix.py", ""),
        step(5, "python -m pytest", "1 failed"),
    ];
    let mut by_script = edit(
        Some(4),
        "/testbed/pkg/core.py",
        "shell_write",
        "applied",
        &[],
        Some("@@ -2 +2 @@\n-    return sum(xs)\n+    return sum(x for x in xs if x is not None)\n"),
    );
    by_script.command = Some("python fix.py".into());
    let edits = vec![
        edit(
            Some(1),
            "/testbed/pkg/core.py",
            "str_replace",
            "applied",
            &[],
            Some("@@ -2 +2 @@\n-    return sum(xs)\n+    return sum(filter(None, xs))\n"),
        ),
        edit(
            Some(2),
            "/testbed/pkg/core.py",
            "str_replace",
            "applied",
            &[],
            Some("@@ -2 +2 @@\n-    return sum(filter(None, xs))\n+    return sum(xs)\n"),
        ),
        edit(Some(3), "/testbed/fix.py", "shell_write", "applied", &[], Some("@@ -0,0 +1 @@\n+open('pkg/core.py')\n")),
        by_script,
        edit(None, "pkg/core.py", "final_patch", "unknown", &[], None),
    ];
    let mut r = run(steps, edits, Some(false), Some(submission));
    if let Some(e) = r.edits.last_mut() {
        e.diff = Some(submission.to_string());
    }
    r
}

#[test]
fn the_first_edit_the_failing_patch_holds_is_the_onset_at_the_script_that_wrote_it() {
    let r = committed_fix();
    let s = compute(&r);
    assert_eq!(s.origins.len(), 1, "{:?}", s.origins);
    assert_eq!((s.origins[0].step, s.origins[0].written_at), (4, Some(3)));
    let l = label(&r);
    assert_eq!(onset(&l), (Some(3), "first_edit_of_failing_fix".into()), "{:?}", l.judgement);
    // Without per-test results it says so, and is less sure.
    let o = l.judgement.onset.clone().unwrap_or_default();
    assert!(o.missing.iter().any(|m| m.starts_with("no per-test results")), "{o:?}");
    assert!(o.missing.iter().any(|m| m.starts_with("no gold patch")), "{o:?}");
    assert!(o.confidence < 0.45, "{o:?}");
}

fn with_tests(mut r: RunInput, tests: Vec<TestCase>) -> RunInput {
    r.outcome = Some(Outcome { tests });
    r
}

#[test]
fn the_environment_is_blamed_for_its_own_errors_and_a_suite_that_never_ran() {
    let mut r = committed_fix();
    r.exit_status = Some("exit_environment_error".into());
    assert_eq!(blame(&label(&r)), Some(Blame::Environment));
    let l = label(&r);
    assert_eq!(onset(&l).0, None, "no onset for a failure that is not the agent's");
    // No test passes, PASS_TO_PASS included: the tests could not run.
    let none = (0..4).map(|i| test(&format!("t{i}"), TestGroup::PassToPass, false, None));
    let tests: Vec<TestCase> = std::iter::once(test("f", TestGroup::FailToPass, false, None)).chain(none).collect();
    assert_eq!(blame(&label(&with_tests(committed_fix(), tests.clone()))), Some(Blame::Environment));
    // The hard negative: the FAIL_TO_PASS test passes and the PASS_TO_PASS ones the patch broke
    // fail: its own regression.
    let mut regression = tests;
    regression[0].passed = true;
    let l = label(&with_tests(committed_fix(), regression));
    assert_eq!(blame(&l), Some(Blame::Agent));
    assert!(l.judgement.blame.as_ref().is_some_and(|b| b.reason.contains("regression")), "{:?}", l.judgement);
}

#[test]
fn a_test_id_no_runner_prints_is_the_tasks_and_a_cut_one_the_harness() {
    let fixed = test("tests/t.py::test_fix", TestGroup::FailToPass, true, None);
    let passing = test("tests/t.py::test_other", TestGroup::PassToPass, true, None);
    let tests = |failing: &str| vec![fixed.clone(), passing.clone(), test(failing, TestGroup::PassToPass, false, None)];
    let l = label(&with_tests(committed_fix(), tests("tests/t.py::test_roundtrip[]")));
    assert_eq!(blame(&l), Some(Blame::Task), "{:?}", l.judgement);
    let l = label(&with_tests(committed_fix(), tests("tests/t.py::test_csv[foo,")));
    assert_eq!(blame(&l), Some(Blame::Environment), "{:?}", l.judgement);
    // A real id failing: the agent's regression.
    let l = label(&with_tests(committed_fix(), tests("tests/t.py::test_roundtrip[m]")));
    assert_eq!(blame(&l), Some(Blame::Agent));
    // Every test passes yet the run was graded failed: the grading.
    let l = label(&with_tests(committed_fix(), vec![fixed, passing]));
    assert_eq!(blame(&l), Some(Blame::Environment));
}

const GOLD: &str = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n-def total(xs):\n-    return sum(xs)\n+def total(xs, *, skip_none=True):\n+    return sum(x for x in xs if x is not None or not skip_none)\n";

fn with_gold(r: RunInput, gold: &str, statement: &str, tests: Vec<TestCase>) -> RunInput {
    let mut r = with_tests(r, tests);
    r.task = Some(Task { instruction: Some(statement.into()), gold_patch: Some(gold.into()) });
    r
}

#[test]
fn a_parameter_only_the_gold_adds_to_the_function_the_agent_fixed_is_the_tasks() {
    let failing = || vec![test("tests/t.py::test_total", TestGroup::FailToPass, false, None)];
    let statement = "total() should ignore None values in the list.";
    let r = with_gold(committed_fix(), GOLD, statement, failing());
    let s = compute(&r);
    assert_eq!(s.grading.unstated.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["skip_none"], "{s:?}");
    let l = label(&r);
    assert_eq!(blame(&l), Some(Blame::Task), "{:?}", l.judgement);
    // The task names the parameter: the tests check what it asked for.
    let named = with_gold(committed_fix(), GOLD, "total() should ignore None values (a skip_none keyword).", failing());
    assert_eq!(blame(&label(&named)), Some(Blame::Agent));
    // A PASS_TO_PASS test fails too: it may be the agent's regression.
    let mut regressed = failing();
    regressed.push(test("tests/t.py::test_sum", TestGroup::PassToPass, false, None));
    assert_eq!(blame(&label(&with_gold(committed_fix(), GOLD, statement, regressed))), Some(Blame::Agent));
}

#[test]
fn a_failure_naming_what_only_the_gold_introduces_is_the_tasks() {
    let message = "TypeError: total() got an unexpected keyword argument 'skip_none'";
    let failing = vec![test("tests/t.py::test_total", TestGroup::FailToPass, false, Some(message))];
    let r = with_gold(committed_fix(), GOLD, "total() should ignore None values.", failing);
    let s = compute(&r);
    assert_eq!(s.grading.failures_naming_gold.first().map(|n| n.name.as_str()), Some("skip_none"));
    assert_eq!(blame(&label(&r)), Some(Blame::Task));
    // The message names what the agent's own patch wrote: nothing the agent could not know.
    let failing =
        vec![test("tests/t.py::test_total", TestGroup::FailToPass, false, Some("AssertionError: 3 != 4 in total"))];
    let r = with_gold(committed_fix(), GOLD, "total() should ignore None values (skip_none).", failing);
    assert!(compute(&r).grading.failures_naming_gold.is_empty());
}

#[test]
fn a_patch_that_is_the_golds_own_change_graded_failed_is_the_tasks() {
    let r = committed_fix();
    let submission = r.submission.clone().unwrap_or_default();
    let failing = vec![test("tests/t.py::test_total", TestGroup::FailToPass, false, None)];
    let l = label(&with_gold(r, &submission, "total() should ignore None.", failing.clone()));
    assert_eq!(blame(&l), Some(Blame::Task), "{:?}", l.judgement);
    // Another change than the gold's: the tests fail the agent's fix, not the gold's.
    let other = GOLD.replace("def total(xs, *, skip_none=True):", "def total(xs):").replace(" or not skip_none", "");
    let l = label(&with_gold(committed_fix(), &other, "total() should ignore None.", failing));
    assert_eq!(blame(&l), Some(Blame::Agent));
}

#[test]
fn a_resolved_run_has_no_blame_and_no_onset() {
    let l = label(&run(vec![step(0, "ls", "")], Vec::new(), Some(true), Some("")));
    assert_eq!(blame(&l), None);
    assert_eq!(onset(&l).0, None);
    assert!(l.judgement.blame.as_ref().is_some_and(|b| b.reason.starts_with("resolved")));
}
