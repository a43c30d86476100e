//! What a mode needs before it is assigned (failure-modes.md, issue 22): propagation the agent's
//! own central change (the gold's core file edited in some other definition leaves a stale
//! periphery that is no propagation of it); a function-level location the FAIL_TO_PASS results;
//! the gold-patch rules a gold patch, said when there is none.

use super::{edit, fired, run, step};
use crate::classify::input::Task;
use crate::classify::signals::*;
use crate::label::Rule;

const GOLD: &str = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,5 +10,5 @@ import re\n-def split_csv(value):\n+def split_csv(value, strict=False):\n     return [v.strip() for v in value.split(',')]\n \n \n def strip_quotes(value):\ndiff --git a/pkg/config.py b/pkg/config.py\n--- a/pkg/config.py\n+++ b/pkg/config.py\n@@ -40,3 +40,3 @@ def regexp_option(value):\n-    return split_csv(value)\n+    return split_csv(value, strict=True)\n";

fn signals_after(agent_patch: &str) -> Signals {
    let steps = vec![
        step(0, "str_replace_editor view /testbed/pkg/utils.py", "def split_csv(value):\n\ndef strip_quotes(value):"),
        step(1, "str_replace_editor view /testbed/pkg/config.py", "    return split_csv(value)"),
        step(2, "str_replace_editor str_replace /testbed/pkg/utils.py", "The file has been edited."),
    ];
    let edits = vec![
        edit(Some(2), "/testbed/pkg/utils.py", "str_replace", "applied", &[], None),
        edit(None, "pkg/utils.py", "final_patch", "unknown", &[], None),
    ];
    let mut r = run(steps, edits, Some(false), Some(agent_patch));
    r.task = Some(Task { instruction: None, gold_patch: Some(GOLD.into()) });
    compute(&r)
}

#[test]
fn the_core_file_changed_elsewhere_is_not_propagation() {
    // The agent changed strip_quotes in the core file; the gold re-signs split_csv.
    let other = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -14,2 +14,2 @@ def split_csv(value):\n def strip_quotes(value):\n-    return value.strip('\"')\n+    return value.strip('\"\\'')\n";
    let s = signals_after(other);
    let p = s.periphery.as_ref().unwrap_or_else(|| panic!("no periphery: {s:?}"));
    assert_eq!(p.central, vec!["split_csv".to_string()]);
    assert!(p.core_edited.contains(&"pkg/utils.py".to_string()) && p.central_edited.is_empty(), "{p:?}");
    assert_eq!(fired(&s, Rule::GoldPeripheryUntouched), None);
}

#[test]
fn the_central_change_made_and_its_call_site_left_is_propagation() {
    // The same definition re-signed; the call site in config.py left as it was.
    let same = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,2 +10,2 @@ import re\n-def split_csv(value):\n+def split_csv(value, quoted=False):\n     return [v.strip() for v in value.split(',')]\n";
    let s = signals_after(same);
    assert_eq!(s.periphery.as_ref().map(|p| p.central_edited.clone()), Some(vec!["split_csv".to_string()]));
    assert_eq!(fired(&s, Rule::GoldPeripheryUntouched), Some(0.7));
    // Changed in behaviour only (its body), the same holds.
    let body = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,2 +10,2 @@ import re\n def split_csv(value):\n-    return [v.strip() for v in value.split(',')]\n+    return [v.strip() for v in value.split(',') if v]\n";
    assert_eq!(fired(&signals_after(body), Rule::GoldPeripheryUntouched), Some(0.7));
}

/// A run that edited the gold's file in another function (`strip_quotes`, not `split_csv`).
fn elsewhere_in_the_file(tests: Option<TestResults>, gold: Option<&str>) -> Signals {
    let patch = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -14,2 +14,2 @@ def split_csv(value):\n def strip_quotes(value):\n-    return value.strip('\"')\n+    return value.strip('\"\\'')\n";
    let gold = gold.map(|g| g.to_string());
    let steps = vec![
        step(0, "str_replace_editor view /testbed/pkg/utils.py", "def split_csv(value):\n\ndef strip_quotes(value):"),
        step(1, "str_replace_editor str_replace /testbed/pkg/utils.py", "The file has been edited."),
    ];
    let edits = vec![
        edit(Some(1), "/testbed/pkg/utils.py", "str_replace", "applied", &[], None),
        edit(None, "pkg/utils.py", "final_patch", "unknown", &[], None),
    ];
    let mut r = run(steps, edits, Some(false), Some(patch));
    r.task = Some(Task { instruction: Some("Fix `pkg/utils.py`.".into()), gold_patch: gold });
    let mut s = compute(&r);
    s.tests = tests;
    s
}

#[test]
fn the_wrong_function_without_per_test_results_is_weighed_and_says_why() {
    let gold = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,2 +10,2 @@ import re\n def split_csv(value):\n-    return [v.strip() for v in value.split(',')]\n+    return [v.strip() for v in value.split(',') if v]\n";
    let failing =
        TestResults { fail_to_pass: Counts { passed: 0, failed: 2 }, pass_to_pass: Counts { passed: 5, failed: 0 } };
    let known = elsewhere_in_the_file(Some(failing), Some(gold));
    assert_eq!(fired(&known, Rule::ExpectedFunctionNotEdited), Some(0.6), "assigned with the tests known");
    let unknown = elsewhere_in_the_file(None, Some(gold));
    let found = crate::classify::rules::evaluate(&unknown, &[Rule::ExpectedFunctionNotEdited]);
    assert_eq!(found.first().map(|f| f.confidence), Some(0.45), "{found:?}");
    assert!(found[0].rationale.contains("FAIL_TO_PASS results are unknown"), "{}", found[0].rationale);
}

#[test]
fn without_a_gold_patch_the_label_names_the_rules_that_did_not_run() {
    let t = crate::label::taxonomy::Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("preset"));
    let s = elsewhere_in_the_file(None, None);
    let label = crate::classify::heuristic::classify(1, &s, &t, String::new());
    assert!(
        label.summary.contains("not run without a gold patch: expected_function_not_edited, gold_periphery_untouched"),
        "{}",
        label.summary
    );
    let with_gold = elsewhere_in_the_file(None, Some(GOLD));
    let label = crate::classify::heuristic::classify(1, &with_gold, &t, String::new());
    assert!(!label.summary.contains("not run"), "{}", label.summary);
}
