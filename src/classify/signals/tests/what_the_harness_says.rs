//! Location findings that lean on what the harness and the run itself say (issue 22): a failing
//! FAIL_TO_PASS test named for a gold function the agent left; most of the gold's files changed
//! and one left; an edit written in a reply and never run.

use super::{edit, fired, run, step};
use crate::classify::input::{Outcome, RunInput, Step, Task};
use crate::classify::signals::*;
use crate::label::Rule;
use crate::model::{TestCase, TestGroup};

fn outcome(failing_fail_to_pass: &[&str]) -> Outcome {
    let case =
        |name: &str| TestCase { name: name.into(), group: Some(TestGroup::FailToPass), passed: false, message: None };
    Outcome { tests: failing_fail_to_pass.iter().map(|n| case(n)).collect() }
}

fn with(mut r: RunInput, gold: &str, failing: &[&str]) -> Signals {
    r.task = Some(Task { instruction: None, gold_patch: Some(gold.into()) });
    r.outcome = Some(outcome(failing));
    compute(&r)
}

/// The gold fixes `prepend_scheme_if_needed`; the agent rewrote `get_auth_from_url` in the same
/// file (the shape of a real SWE-bench run on requests/utils.py).
const GOLD_UTILS: &str = "diff --git a/requests/utils.py b/requests/utils.py\n--- a/requests/utils.py\n+++ b/requests/utils.py\n@@ -974,6 +974,10 @@ def prepend_scheme_if_needed(url, new_scheme):\n     if not netloc:\n         netloc, path = path, netloc\n \n+    if auth:\n+        netloc = '@'.join([auth, netloc])\n     if scheme is None:\n         scheme = new_scheme\n";

fn rewrote_another_function(failing: &[&str]) -> Signals {
    let agent = "diff --git a/requests/utils.py b/requests/utils.py\n--- a/requests/utils.py\n+++ b/requests/utils.py\n@@ -950,8 +950,9 @@ def get_auth_from_url(url):\n     parsed = urlparse(url)\n \n     try:\n-        auth = (unquote(parsed.username), unquote(parsed.password))\n+        auth = (unquote(parsed.username or ''), unquote(parsed.password or ''))\n     except (AttributeError, TypeError):\n         auth = ('', '')\n";
    let steps = vec![
        step(
            0,
            "nl -ba requests/utils.py | sed -n '940,990p'",
            "   950\tdef get_auth_from_url(url):\n   974\tdef prepend_scheme_if_needed(url, new_scheme):",
        ),
        step(1, "python - <<'PY'\nPY", ""),
    ];
    let edits = vec![
        edit(Some(1), "requests/utils.py", "shell_write", "applied", &[], None),
        edit(None, "requests/utils.py", "final_patch", "unknown", &[], None),
    ];
    with(run(steps, edits, Some(false), Some(agent)), GOLD_UTILS, failing)
}

#[test]
fn a_failing_test_named_for_the_gold_function_the_agent_left_assigns_the_wrong_place() {
    let named = rewrote_another_function(&[
        "tests/test_utils.py::test_prepend_scheme_if_needed[http://user:pass@example.com/path?query-http://user:pass@example.com/path?query]",
    ]);
    let f = named.expected.iter().flat_map(|e| &e.functions).next();
    assert!(f.is_some_and(|f| f.edited == Some(false) && f.failing_test.is_some()), "{:?}", named.expected);
    assert_eq!(fired(&named, Rule::ExpectedFunctionNotEdited), Some(0.75));
    let found = crate::classify::rules::evaluate(&named, &[Rule::ExpectedFunctionNotEdited]);
    assert!(found[0].rationale.contains("test_prepend_scheme_if_needed"), "{}", found[0].rationale);
    // The LLM's prompt reads the same evidence.
    let table = table(&named);
    assert!(table.contains("failing test tests/test_utils.py::test_prepend_scheme_if_needed"), "{table}");
    // The tests fail, but none is named for the function: weighed, as before.
    let unnamed = rewrote_another_function(&["tests/test_utils.py::test_proxy_auth"]);
    assert_eq!(fired(&unnamed, Rule::ExpectedFunctionNotEdited), Some(0.6));
}

#[test]
fn a_second_gold_function_left_counts_only_when_its_failing_test_names_it() {
    // The gold changes split_csv and strip_quotes; the agent changed split_csv only.
    let gold = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,2 +10,2 @@ import re\n def split_csv(value):\n-    return [v.strip() for v in value.split(',')]\n+    return [v.strip() for v in value.split(',') if v]\n@@ -14,2 +14,2 @@ def split_csv(value):\n def strip_quotes(value):\n-    return value.strip('\"')\n+    return value.strip('\"\\'')\n";
    let agent = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -10,2 +10,2 @@ import re\n def split_csv(value):\n-    return [v.strip() for v in value.split(',')]\n+    return [v.strip() for v in value.split(',') if v.strip()]\n";
    let signals = |failing: &[&str]| {
        let steps = vec![
            step(
                0,
                "str_replace_editor view /testbed/pkg/utils.py",
                "def split_csv(value):\n\ndef strip_quotes(value):",
            ),
            step(1, "str_replace_editor str_replace /testbed/pkg/utils.py", "The file has been edited."),
        ];
        let edits = vec![
            edit(Some(1), "/testbed/pkg/utils.py", "str_replace", "applied", &[], None),
            edit(None, "pkg/utils.py", "final_patch", "unknown", &[], None),
        ];
        with(run(steps, edits, Some(false), Some(agent)), gold, failing)
    };
    assert_eq!(
        fired(&signals(&["tests/test_utils.py::test_strip_quotes_single"]), Rule::ExpectedFunctionNotEdited),
        Some(0.75)
    );
    assert_eq!(fired(&signals(&["tests/test_utils.py::test_split_csv_empty"]), Rule::ExpectedFunctionNotEdited), None);
}

/// A gold patch over four backend files; the agent changed `changed` of them and opened the rest.
fn backends(changed: usize) -> Signals {
    let files = ["mysql", "oracle", "postgresql", "sqlite3"];
    let hunk = |f: &str| {
        format!(
            "diff --git a/db/backends/{f}/operations.py b/db/backends/{f}/operations.py\n--- a/db/backends/{f}/operations.py\n+++ b/db/backends/{f}/operations.py\n@@ -70,2 +70,2 @@ class DatabaseOperations(BaseDatabaseOperations):\n     def _convert_field_to_tz(self, field_name, tzname):\n-        return field_name\n+        return self.tz(field_name)\n"
        )
    };
    let gold: String = files.iter().map(|f| hunk(f)).collect();
    let agent: String = files[..changed].iter().map(|f| hunk(f)).collect();
    let mut steps = Vec::new();
    let mut edits = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let path = format!("/testbed/db/backends/{f}/operations.py");
        steps.push(step(i as i64, &format!("cat {path}"), "class DatabaseOperations(BaseDatabaseOperations):"));
        if i < changed {
            edits.push(edit(None, &path[8..], "final_patch", "unknown", &[], None));
        }
    }
    steps.push(step(4, "sed -i 's/field_name$/self.tz(field_name)/' db/backends/*/operations.py", ""));
    edits.push(edit(Some(4), "db/backends/mysql/operations.py", "shell_write", "applied", &[], None));
    with(run(steps, edits, Some(false), Some(&agent)), &gold, &["tests/test_tz.py::test_query_convert"])
}

#[test]
fn one_gold_file_left_of_four_changed_is_weighed_and_most_left_is_assigned() {
    let most_changed = backends(3);
    assert_eq!(most_changed.miss_ratio, Some(0.25));
    assert_eq!(fired(&most_changed, Rule::ExpectedFileNotEdited), Some(0.6));
    let most_left = backends(1);
    assert_eq!(most_left.miss_ratio, Some(0.75));
    assert_eq!(fired(&most_left, Rule::ExpectedFileNotEdited), Some(0.7));
}

/// A SWE-agent step whose model wrote its edit as text: the action is empty, the call is in the
/// reply, and the run exits on format errors.
fn written_not_run(applied_later: bool) -> Signals {
    let gold = "diff --git a/src/_pytest/unittest.py b/src/_pytest/unittest.py\n--- a/src/_pytest/unittest.py\n+++ b/src/_pytest/unittest.py\n@@ -97,1 +97,1 @@ def _make_xunit_fixture(\n-        if getattr(self, \"__unittest_skip__\", None):\n+        if _is_skipped(self):\n";
    let reply = "Now let me implement the fix:\nstr_replace_editor{\n    \"command\": \"str_replace\",\n    \"path\": \"/testbed/src/_pytest/unittest.py\",\n    \"old_str\": \"        if getattr(self, \\\"__unittest_skip__\\\", None):\",\n    \"new_str\": \"        if _is_skipped(self):\"\n}<｜end▁of▁thinking｜>";
    let mut steps = vec![
        step(
            0,
            "str_replace_editor view /testbed/src/_pytest/unittest.py",
            "    97\t        if getattr(self, \"__unittest_skip__\", None):",
        ),
        Step { thought: reply.into(), ..step(1, "", "") },
    ];
    let mut edits = vec![edit(Some(2), "/testbed/reproduce_issue.py", "create", "applied", &[], None)];
    steps.push(step(2, "str_replace_editor create /testbed/reproduce_issue.py", "File created successfully"));
    if applied_later {
        steps.push(step(
            3,
            "str_replace_editor str_replace /testbed/src/_pytest/unittest.py",
            "The file has been edited.",
        ));
        edits.push(edit(Some(3), "/testbed/src/_pytest/unittest.py", "str_replace", "applied", &[], None));
    }
    let r = run(steps, edits, Some(false), Some("diff --git a/reproduce_issue.py b/reproduce_issue.py\n"));
    with(r, gold, &["testing/test_unittest.py::test_pdb_teardown_skipped[@unittest.skip]"])
}

#[test]
fn an_edit_written_in_the_reply_and_never_run_is_lost() {
    let s = written_not_run(false);
    let lost: Vec<_> = s.lost_edits.iter().map(|l| (l.step, l.path.as_str(), &l.why)).collect();
    assert_eq!(lost, vec![(1, "src/_pytest/unittest.py", &LostWhy::Announced)]);
    assert_eq!(fired(&s, Rule::EditLost), Some(0.7));
    let table = table(&s);
    assert!(table.contains("lost edit: step 1 src/_pytest/unittest.py: written in the reply"), "{table}");
    // Applied by a later step: nothing was lost.
    let s = written_not_run(true);
    assert!(s.lost_edits.iter().all(|l| l.why != LostWhy::Announced), "{:?}", s.lost_edits);
}

/// The gold's header names the method (git's Python driver); the agent's submission, made with
/// the default driver, names the unindented factory around it. The run's numbered view of the
/// file, before its edit, places both in the same method.
fn factory_method(viewed: bool) -> Signals {
    let path = "django/db/models/fields/related_descriptors.py";
    let gold = format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -709,3 +709,3 @@ def get_prefetch_queryset(self, instances, queryset=None):\n             query = {{\"%s__in\" % self.field.name: instances}}\n-            queryset = queryset.filter(**query)\n+            queryset = _filter_prefetch_queryset(queryset, self.field.name, instances)\n             return queryset\n"
    );
    let agent = format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -709,3 +709,4 @@ def create_reverse_many_to_one_manager(superclass, rel):\n             query = {{\"%s__in\" % self.field.name: instances}}\n-            queryset = queryset.filter(**query)\n+            if not queryset.query.is_sliced:\n+                queryset = queryset.filter(**query)\n             return queryset\n"
    );
    let view = "<returncode>0</returncode>\n<output>\n   700\tdef create_reverse_many_to_one_manager(superclass, rel):\n   701\t    class RelatedManager(superclass):\n   702\t        def __init__(self, instance):\n   703\t            self.instance = instance\n   704\t\n   705\t        def get_prefetch_queryset(self, instances, queryset=None):\n   706\t            if queryset is None:\n   707\t                queryset = super().get_queryset()\n   708\t\n</output>";
    let mut steps = Vec::new();
    if viewed {
        steps.push(step(0, &format!("nl -ba {path} | sed -n '700,708p'"), view));
    } else {
        steps.push(step(0, "ls django/db/models/fields", "related_descriptors.py"));
    }
    steps.push(step(1, "python - <<'PY'\nPY", ""));
    let edits = vec![
        edit(Some(1), path, "shell_write", "applied", &[], None),
        edit(None, path, "final_patch", "unknown", &[], None),
    ];
    with(
        run(steps, edits, Some(false), Some(&agent)),
        &gold,
        &["test_foreignkey_reverse (prefetch_related.tests.PrefetchLimitTests)"],
    )
}

#[test]
fn a_method_deep_in_a_factory_is_located_by_the_view_the_run_showed() {
    let located = |s: &Signals| {
        s.expected.iter().flat_map(|e| &e.functions).map(|f| (f.name.clone(), f.edited)).collect::<Vec<_>>()
    };
    let seen = factory_method(true);
    let method = "create_reverse_many_to_one_manager.RelatedManager.get_prefetch_queryset".to_string();
    assert_eq!(located(&seen), vec![(method, Some(true))]);
    assert_eq!(fired(&seen, Rule::ExpectedFunctionNotEdited), None);
    // Without the view, the headers name a method and the factory around it; the two hunks still
    // change the same line of the base file: the agent reached the gold's place.
    let unseen = factory_method(false);
    assert_eq!(located(&unseen), vec![("get_prefetch_queryset".to_string(), Some(true))]);
}
