//! The defects a review of real SWE-bench runs found in the signals (issue 15), each on a
//! hand-built run: the false mode (or the missed evidence) the old reading gave.

use super::{edit, fired, reconstructed, run, step};
use crate::classify::input::{Outcome, RunInput, Task};
use crate::classify::signals::*;
use crate::label::taxonomy::Taxonomy;
use crate::label::{ASSIGN_THRESHOLD, Rule};
use crate::model::{TestCase, TestGroup};

/// The modes the heuristic assigns under the default taxonomy.
fn modes(s: &Signals) -> Vec<String> {
    let t = Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("refactoring preset"));
    crate::classify::heuristic::classify(1, s, &t, String::new()).modes.into_iter().map(|m| m.mode).collect()
}

fn with_task(mut r: RunInput, instruction: Option<&str>, gold: Option<&str>) -> RunInput {
    r.task = Some(Task { instruction: instruction.map(str::to_string), gold_patch: gold.map(str::to_string) });
    r
}

fn patch(path: &str, hunks: &str) -> String {
    format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}")
}

fn file<'a>(s: &'a Signals, path: &str) -> &'a FileActivity {
    s.files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("no {path} in {:?}", s.files))
}

#[test]
fn d1_an_edit_of_a_build_copy_is_lost_and_the_root_is_never_learned_inside_build() {
    let gold = patch("pkg/mod.py", "@@ -1 +1 @@\n-x = 1\n+x = 2\n");
    let steps = vec![
        step(0, "str_replace_editor view /testbed/build/lib/pkg/mod.py", "x = 1"),
        step(1, "str_replace_editor str_replace /testbed/build/lib/pkg/mod.py", "The file has been edited."),
    ];
    let edits = vec![edit(Some(1), "/testbed/build/lib/pkg/mod.py", "str_replace", "applied", &[], None)];
    let s = compute(&with_task(run(steps, edits, Some(false), Some("")), None, Some(&gold)));
    assert!(s.files.iter().all(|f| f.path != "pkg/mod.py" || f.edited.is_empty()), "{:?}", s.files);
    assert_eq!(s.lost_edits[0].why, LostWhy::BuildCopy);
    assert_eq!(fired(&s, Rule::ExpectedFileNeverSeen), Some(0.8));
    // Without a gold patch, the file the task names is the repository's, not the copy the
    // agent met.
    let steps = vec![step(0, "cat build/lib/pkg/mod.py", "x = 1"), step(1, "sed -i 's/1/2/' build/lib/pkg/mod.py", "")];
    let edits = vec![edit(Some(1), "build/lib/pkg/mod.py", "shell_write", "applied", &[], None)];
    let s = compute(&with_task(run(steps, edits, Some(false), Some("")), Some("Fix `pkg/mod.py`."), None));
    assert_eq!(s.expected[0].path.as_deref(), Some("pkg/mod.py"));
    assert!(!s.expected[0].edited);
    for copy in ["node_modules/lib/x.ts", "app/.tox/py39/lib/site-packages/a.py", "core/target/classes/A.java"] {
        assert!(paths::is_build_copy(copy), "{copy}");
    }
    assert!(!paths::is_build_copy("src/build_tools/a.py") && !paths::is_build_copy("tools/build/a.py"));
}

#[test]
fn d2_an_empty_submission_still_finds_fixes_undone_by_git() {
    let steps = vec![
        step(0, "cat src/pkg/core.py", "def f(): return 1"),
        step(1, "sed -i 's/1/2/' src/pkg/core.py", ""),
        step(2, "python -m pytest tests", "1 passed"),
        step(3, "git stash", "Saved working directory"),
        step(4, "python -m pytest tests", "1 failed"),
    ];
    let edits = reconstructed(&steps, None);
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(s.lost_edits.len(), 1, "{:?}", s.lost_edits);
    assert_eq!(s.lost_edits[0].why, LostWhy::GitRevert { step: 3, checked: true });
    assert_eq!(fired(&s, Rule::EditLost), Some(0.7));
}

#[test]
fn d3_cd_inside_a_command_line_places_the_written_file() {
    // SWE-agent's adapter resolves the path against the step's folder, not the `cd`.
    let steps = vec![step(0, "cd src/pkg && cat > util.py <<'EOF'\nX = 1\nEOF", "")];
    let edits = reconstructed(&steps, None);
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(file(&s, "src/pkg/util.py").edited, vec![0]);
    assert!(s.files.iter().all(|f| f.path != "util.py"));
    // mini-swe-agent keeps no folder.
    let mut steps = vec![step(0, "cd /testbed/src/pkg && echo 'Y = 2' >> util.py", "")];
    steps[0].working_dir = None;
    let edits = reconstructed(&steps, None);
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(file(&s, "src/pkg/util.py").edited, vec![0]);
}

#[test]
fn d4_scripts_and_patches_edit_the_files_they_name_and_their_reverts_undo() {
    let script =
        "cat > fix.py <<'EOF'\np = 'src/pkg/core.py'\ns = open(p).read().replace('a', 'b')\nopen(p, 'w').write(s)\nEOF";
    let diff = "--- a/src/pkg/util.py\n+++ b/src/pkg/util.py\n@@ -1 +1 @@\n-a\n+b\n";
    let steps = vec![
        step(0, script, ""),
        step(1, "python fix.py", ""),
        step(2, &format!("cat > fix.patch <<'EOF'\n{diff}EOF"), ""),
        step(3, "git apply fix.patch", ""),
        step(4, "python -m pytest tests", "1 passed"),
        step(5, "git apply -R fix.patch", ""),
        step(6, "patch -p1 < other.diff", "patching file src/pkg/third.py\n"),
    ];
    let edits = reconstructed(&steps, Some(""));
    let s = compute(&run(steps, edits, Some(false), Some("")));
    assert_eq!(file(&s, "src/pkg/core.py").edited, vec![1], "python fix.py");
    assert_eq!(file(&s, "src/pkg/util.py").edited, vec![3], "git apply; the reverse patch is an undo, not an edit");
    assert_eq!(file(&s, "src/pkg/third.py").edited, vec![6], "patch names what it patched");
    let util = s.lost_edits.iter().find(|l| l.path == "src/pkg/util.py");
    assert_eq!(util.map(|l| &l.why), Some(&LostWhy::GitRevert { step: 5, checked: true }), "{:?}", s.lost_edits);
    // An inline script through a variable.
    let inline = "python - <<'EOF'\nimport re\npath = 'src/pkg/core.py'\nt = open(path).read()\nopen(path, 'w').write(re.sub('a', 'b', t))\nEOF";
    let steps = vec![step(0, inline, "")];
    let edits = reconstructed(&steps, None);
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(file(&s, "src/pkg/core.py").edited, vec![0]);
}

#[test]
fn d5_scratch_files_are_no_attempt_and_a_gold_file_edited_is_not_elsewhere() {
    let gold = format!(
        "{}{}",
        patch("src/pkg/right.py", "@@ -1 +1 @@\n-x = 1\n+x = 2\n"),
        patch("src/pkg/other.py", "@@ -1 +1 @@\n-y = 1\n+y = 2\n")
    );
    // Only scratch: reproduction and check scripts, a patch file, a file created and removed.
    let steps = vec![
        step(0, "cat > reproduce_bug.py <<'EOF'\nprint(1)\nEOF", ""),
        step(1, "cat > test_fix.py <<'EOF'\nprint(2)\nEOF", ""),
        step(2, "cat > src/pkg/probe.py <<'EOF'\nprint(3)\nEOF", ""),
        step(3, "rm src/pkg/probe.py && cat > inspect_x.py <<'EOF'\nprint(4)\nEOF", ""),
    ];
    let edits = vec![
        edit(Some(0), "/testbed/reproduce_bug.py", "shell_write", "applied", &[], None),
        edit(Some(1), "/testbed/test_fix.py", "shell_write", "applied", &[], None),
        edit(Some(2), "/testbed/src/pkg/probe.py", "shell_write", "applied", &[], None),
        edit(Some(3), "/testbed/inspect_x.py", "shell_write", "applied", &[], None),
    ];
    let s = compute(&with_task(run(steps, edits, Some(false), Some("")), None, Some(&gold)));
    assert!(s.files.iter().all(|f| f.scratch), "{:?}", s.files);
    assert_eq!(s.first_edit_step, None);
    assert!(modes(&s).is_empty(), "no attempt at the fix: no location mode");
    // A real attempt elsewhere: the evidence names that file, not the gold file it also edited
    // nor its scratch.
    let steps = vec![
        step(0, "cat > test_fix.py <<'EOF'\nprint(2)\nEOF", ""),
        step(1, "sed -i 's/1/2/' src/pkg/other.py", ""),
        step(2, "sed -i 's/1/2/' src/pkg/wrong.py", ""),
    ];
    let edits = vec![
        edit(Some(0), "/testbed/test_fix.py", "shell_write", "applied", &[], None),
        edit(Some(1), "src/pkg/other.py", "shell_write", "applied", &[], None),
        edit(Some(2), "src/pkg/wrong.py", "shell_write", "applied", &[], None),
    ];
    let s = compute(&with_task(run(steps, edits, Some(false), Some("")), None, Some(&gold)));
    let f = crate::classify::rules::evaluate(&s, &[Rule::ExpectedFileNeverSeen]);
    let notes: Vec<&str> = f[0].evidence.iter().map(|e| e.note.as_str()).collect();
    assert!(notes.contains(&"edited src/pkg/wrong.py instead"), "{notes:?}");
    assert!(notes.iter().all(|n| !n.contains("other.py") && !n.contains("test_fix")), "{notes:?}");
}

#[test]
fn d6_appending_to_a_file_does_not_create_it() {
    let steps = vec![
        step(0, "cat >> src/pkg/conf.py <<'EOF'\nDEBUG = True\nEOF", ""),
        step(1, "python -m pytest", "1 passed"),
        step(2, "git checkout src/pkg/conf.py", ""),
    ];
    let edits = reconstructed(&steps, Some(""));
    let s = compute(&run(steps, edits, Some(false), Some("")));
    assert!(!file(&s, "src/pkg/conf.py").created);
    assert_eq!(s.lost_edits.len(), 1, "the append to an existing file was undone by git: {:?}", s.lost_edits);
}

#[test]
fn d7_a_gold_hunk_adding_a_test_to_a_skip_list_is_no_required_location() {
    let gold = format!(
        "{}{}",
        patch(
            "django/db/models/lookups.py",
            "@@ -10 +10 @@ class Exact(Lookup):\n-    prepare_rhs = False\n+    prepare_rhs = True\n"
        ),
        patch(
            "django/db/backends/oracle/features.py",
            "@@ -80,3 +80,6 @@ class DatabaseFeatures(BaseDatabaseFeatures):\n         django_test_skips = {\n+            \"Oracle doesn't support this.\": {\n+                \"lookup.tests.LookupTests.test_exact_sliced_queryset\",\n+            },\n"
        )
    );
    let steps = vec![
        step(0, "cat django/db/models/lookups.py", "class Exact(Lookup):\n    prepare_rhs = False"),
        step(1, "sed -i 's/prepare_rhs = False/prepare_rhs = True/' django/db/models/lookups.py", ""),
    ];
    let edits = vec![
        edit(Some(1), "django/db/models/lookups.py", "shell_write", "applied", &[], None),
        edit(None, "django/db/models/lookups.py", "final_patch", "unknown", &[], None),
    ];
    let s = compute(&with_task(
        run(
            steps,
            edits,
            Some(false),
            Some("diff --git a/django/db/models/lookups.py b/django/db/models/lookups.py\n"),
        ),
        None,
        Some(&gold),
    ));
    let features =
        s.expected.iter().find(|e| e.named.ends_with("features.py")).unwrap_or_else(|| panic!("{:?}", s.expected));
    assert!(features.plumbing && !features.required());
    assert_eq!(fired(&s, Rule::ExpectedFileNeverSeen), None);
    assert!(modes(&s).is_empty(), "{:?}", modes(&s));
}

#[test]
fn d8_a_repeat_counts_only_with_a_flood_between_it_and_its_first_use() {
    let big = "x".repeat(30_000);
    let mut steps = vec![
        step(0, "ls", "src"),
        step(1, "grep -rn amount .", &big),
        step(2, "ls src", "money.py"),
        step(3, "cat src/money.py", "def amount(): ..."),
        step(4, "str_replace_editor str_replace /testbed/src/other.py", "edited"),
    ];
    for i in 5..9 {
        steps.push(step(i, "python reproduce.py", "ok"));
    }
    steps.push(step(9, "cat src/money.py", "def amount(): ..."));
    let edits = vec![edit(Some(4), "/testbed/src/other.py", "str_replace", "applied", &[], None)];
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(s.repeats.len(), 1);
    assert!(
        fired(&s, Rule::FloodThenRepeat).is_some_and(|c| c < ASSIGN_THRESHOLD),
        "the flood came before the first look"
    );
}

#[test]
fn d9_every_fail_to_pass_test_passing_weighs_location_findings() {
    let gold = patch("src/pkg/right.py", "@@ -1 +1 @@\n-x = 1\n+x = 2\n");
    let steps = vec![step(0, "ls", "src"), step(1, "sed -i 's/1/2/' src/pkg/near.py", "")];
    let edits = vec![edit(Some(1), "src/pkg/near.py", "shell_write", "applied", &[], None)];
    let mut r = with_task(
        run(steps, edits, Some(false), Some("diff --git a/src/pkg/near.py b/src/pkg/near.py\n")),
        None,
        Some(&gold),
    );
    let case = |name: &str, group, passed| TestCase { name: name.into(), group: Some(group), passed, message: None };
    r.outcome = Some(Outcome {
        tests: vec![case("t::fixed", TestGroup::FailToPass, true), case("t::other", TestGroup::PassToPass, false)],
    });
    let s = compute(&r);
    assert!(s.tests.as_ref().is_some_and(|t| t.located()));
    assert!(fired(&s, Rule::ExpectedFileNeverSeen).is_some_and(|c| c < ASSIGN_THRESHOLD));
    assert!(modes(&s).is_empty());
}

#[test]
fn d10_the_windowed_edit_gates_python_files_only() {
    let steps = (0..3).map(|i| step(i, "edit 1:2", "File updated.")).collect();
    let edits = vec![
        edit(Some(1), "/testbed/src/main/java/A.java", "windowed_edit", "applied", &[], None),
        edit(Some(2), "/testbed/src/main/java/B.java", "windowed_edit", "applied", &[], None),
    ];
    let s = compute(&run(steps, edits, Some(false), None));
    assert!(!s.tools.gated);
    assert!(table(&s).contains("no linter gate"), "{}", table(&s));
    let steps = (0..2).map(|i| step(i, "edit 1:2", "File updated.")).collect();
    let edits = vec![edit(Some(1), "/testbed/src/a.py", "windowed_edit", "applied", &[], None)];
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!((s.tools.gated, s.tools.gated_extensions.as_slice()), (true, ["py".to_string()].as_slice()));
}

#[test]
fn d11_the_right_file_and_the_wrong_function_is_a_missed_location() {
    let gold = patch(
        "django/db/models/query.py",
        "@@ -900,6 +900,6 @@ class QuerySet:\n     def _filter_or_exclude(self, negate, args, kwargs):\n         clone = self._chain()\n-        clone.query.add_q(Q(*args))\n+        clone.query.add_q(~Q(*args))\n         return clone\n",
    );
    let agent = patch(
        "django/db/models/query.py",
        "@@ -880,5 +880,6 @@ class QuerySet:\n     def filter(self, *args, **kwargs):\n+        kwargs = dict(kwargs)\n         return self._filter_or_exclude(False, args, kwargs)\n",
    );
    let steps = vec![
        step(
            0,
            "grep -n 'def filter' django/db/models/query.py",
            "django/db/models/query.py:880:    def filter(self, *args, **kwargs):",
        ),
        step(1, "str_replace_editor str_replace /testbed/django/db/models/query.py", "The file has been edited."),
    ];
    let edits = vec![
        edit(Some(1), "/testbed/django/db/models/query.py", "str_replace", "applied", &[], None),
        edit(None, "django/db/models/query.py", "final_patch", "unknown", &[], None),
    ];
    let s = compute(&with_task(run(steps, edits, Some(false), Some(&agent)), None, Some(&gold)));
    let f = &s.expected[0].functions;
    assert_eq!((f[0].name.as_str(), f[0].edited), ("QuerySet._filter_or_exclude", Some(false)), "{f:?}");
    // Found, and weighed: a function-level location is medium confidence at most (0.6, under
    // the taxonomy's threshold of 0.7), and without the FAIL_TO_PASS results lower still.
    assert_eq!(fired(&s, Rule::ExpectedFunctionNotEdited), Some(0.45));
    assert!(modes(&s).is_empty(), "{:?}", modes(&s));
    // The agent's change in the gold function: no mode.
    let right = gold.clone();
    let steps = vec![step(0, "str_replace_editor str_replace /testbed/django/db/models/query.py", "edited")];
    let edits = vec![
        edit(Some(0), "/testbed/django/db/models/query.py", "str_replace", "applied", &[], None),
        edit(None, "django/db/models/query.py", "final_patch", "unknown", &[], None),
    ];
    let s = compute(&with_task(run(steps, edits, Some(false), Some(&right)), None, Some(&gold)));
    assert!(s.expected[0].functions.iter().all(|f| f.edited == Some(true)) && modes(&s).is_empty());
}

#[test]
fn d11_a_gold_file_missed_while_editing_the_module_the_task_names_is_weighed() {
    let gold = patch("src/pkg/backend.py", "@@ -1 +1 @@\n-x = 1\n+x = 2\n");
    let steps =
        vec![step(0, "cat src/pkg/forms.py", "class Form: ..."), step(1, "sed -i 's/a/b/' src/pkg/forms.py", "")];
    let edits = vec![
        edit(Some(1), "src/pkg/forms.py", "shell_write", "applied", &[], None),
        edit(None, "src/pkg/forms.py", "final_patch", "unknown", &[], None),
    ];
    let task = "The form in src/pkg/forms.py drops the value.";
    let s = compute(&with_task(
        run(steps, edits, Some(false), Some("diff --git a/src/pkg/forms.py b/src/pkg/forms.py\n")),
        Some(task),
        Some(&gold),
    ));
    assert_eq!(s.task_files_edited, ["src/pkg/forms.py"]);
    assert!(fired(&s, Rule::ExpectedFileNeverSeen).is_some_and(|c| c < ASSIGN_THRESHOLD));
}

#[test]
fn a_test_failing_the_same_way_after_each_edit_is_a_loop() {
    let fail = |n: u32| format!("FAILED tests/test_a.py::test_x - AssertionError: {n} != 4\n1 failed in 0.{n}s");
    let steps = vec![
        step(0, "python -m pytest tests/test_a.py", &fail(1)),
        step(1, "sed -i 's/a/b/' src/a.py", ""),
        step(2, "python -m pytest tests/test_a.py", &fail(2)),
        step(3, "sed -i 's/b/c/' src/a.py", ""),
        step(4, "python -m pytest tests/test_a.py", &fail(3)),
        step(5, "git checkout src/a.py", ""),
        step(6, "python -m pytest tests/test_a.py", &fail(1)),
    ];
    let edits = vec![
        edit(Some(1), "src/a.py", "shell_write", "applied", &[], None),
        edit(Some(3), "src/a.py", "shell_write", "applied", &[], None),
    ];
    let s = compute(&run(steps, edits, Some(false), None));
    assert_eq!(s.loops.len(), 1, "{:?}", s.loops);
    assert_eq!((s.loops[0].runs.as_slice(), s.loops[0].edits.as_slice()), ([0, 2, 4].as_slice(), [1, 3].as_slice()));
    assert!(
        table(&s).contains("loop: `python -m pytest tests/test_a.py` failed the same way at [0,2,4]"),
        "{}",
        table(&s)
    );
}
