//! Signals and rules on small hand-built runs: the cases the rulings of failure-modes.md name,
//! each with the near miss that must not fire.

use super::*;
use crate::classify::input::{Edit, RunInput, Step};
use crate::classify::rules;
use crate::label::ASSIGN_THRESHOLD;
use crate::label::Rule;

pub(super) fn step(index: i64, action: &str, observation: &str) -> Step {
    Step::sample(index, action, observation)
}

pub(super) fn edit(
    step: Option<i64>,
    path: &str,
    kind: &str,
    status: &str,
    codes: &[&str],
    diff: Option<&str>,
) -> Edit {
    Edit {
        step,
        path: path.into(),
        kind: kind.parse().unwrap_or_else(|_| panic!("edit kind {kind}")),
        status: status.parse().unwrap_or_else(|_| panic!("edit status {status}")),
        lint_codes: codes.iter().map(|c| c.to_string()).collect(),
        diff: diff.map(str::to_string),
        certainty: None,
        command: None,
        undone_at: None,
    }
}

/// The edits the reconstruction stores for shell steps (each run, its files written as
/// `Exec::Shell`): what the classifier reads of a bash-only run.
pub(super) fn reconstructed(steps: &[Step], submission: Option<&str>) -> Vec<Edit> {
    use crate::analysis::reconstruct::{Exec, reconstruct};
    let mut model = crate::model::Run {
        submission: submission.map(str::to_string),
        steps: steps
            .iter()
            .map(|s| crate::model::Step {
                action: s.action.clone(),
                observation: s.observation.clone(),
                working_dir: s.working_dir.clone(),
                ..crate::model::Step::default()
            })
            .collect(),
        ..crate::model::Run::default()
    };
    let exec = vec![Exec::Shell(crate::model::EditStatus::Applied); steps.len()];
    reconstruct(&mut model, &exec);
    model
        .edits
        .into_iter()
        .map(|e| Edit {
            step: e.step.map(|s| s as i64),
            path: e.path,
            kind: e.kind,
            status: e.status,
            lint_codes: e.lint_codes,
            diff: e.diff,
            certainty: e.trace.certainty,
            command: e.trace.command,
            undone_at: e.trace.undone_at.map(|s| s as i64),
        })
        .collect()
}

pub(super) fn run(steps: Vec<Step>, edits: Vec<Edit>, resolved: Option<bool>, submission: Option<&str>) -> RunInput {
    RunInput {
        id: 1,
        instance_id: "t__t-1".into(),
        format: crate::model::Format::SweAgent,
        agent: None,
        model: None,
        exit_status: Some("submitted".into()),
        resolved,
        submission: submission.map(str::to_string),
        outcome: None,
        task: None,
        edits,
        steps,
    }
}

pub(super) fn fired(s: &Signals, rule: Rule) -> Option<f64> {
    rules::evaluate(s, &[rule]).first().map(|f| f.confidence)
}

#[test]
fn undefined_names_refused_by_a_tool_without_a_gate_are_not_temporary_errors() {
    // str_replace_editor refusals ("No replacement was performed") have no linter gate.
    let steps = (0..4)
        .map(|i| step(i, "str_replace_editor str_replace /testbed/a.py", "No replacement was performed"))
        .collect();
    let edits = vec![
        edit(Some(1), "/testbed/a.py", "str_replace", "refused_by_tool", &[], None),
        edit(Some(2), "/testbed/a.py", "str_replace", "refused_by_tool", &[], None),
    ];
    let s = compute(&run(steps, edits, Some(false), Some("")));
    assert!(!s.tools.gated);
    for r in [Rule::GatedRejectionAbandoned, Rule::GatedRejectionBypassed, Rule::GatedRejectionRecovered] {
        assert_eq!(fired(&s, r), None, "{r:?}");
    }
    // Two refusals and no later applied edit: gave up applying (a location-and-apply failure).
    assert_eq!(fired(&s, Rule::GaveUpApplying), Some(0.7));
}

#[test]
fn a_gated_undefined_name_then_a_shell_write_is_a_bypass_and_a_later_tool_edit_a_recovery() {
    let steps = (0..6).map(|i| step(i, "edit 1:2", "")).collect();
    let bypassed = vec![
        edit(Some(1), "/testbed/b.py", "windowed_edit", "rejected_by_linter", &["F821"], None),
        edit(Some(2), "b.py", "shell_write", "unknown", &[], None),
    ];
    let s = compute(&run(steps, bypassed, Some(false), None));
    assert_eq!(s.rejections[0].after, After::Bypassed { step: 2 });
    assert_eq!(fired(&s, Rule::GatedRejectionBypassed), Some(0.8));
    let steps = (0..6).map(|i| step(i, "edit 1:2", "")).collect();
    let recovered = vec![
        edit(Some(1), "/testbed/b.py", "windowed_edit", "rejected_by_linter", &["F821"], None),
        edit(Some(4), "/testbed/b.py", "windowed_edit", "applied", &[], None),
    ];
    let s = compute(&run(steps, recovered, Some(false), None));
    assert_eq!(fired(&s, Rule::GatedRejectionBypassed), None);
    assert!(fired(&s, Rule::GatedRejectionRecovered).is_some_and(|c| c < ASSIGN_THRESHOLD));
}

#[test]
fn format_error_loops_and_re_running_code_are_not_flooding() {
    let big = "x".repeat(30_000);
    let mut steps = vec![step(0, "cat /testbed/big.py", &big)];
    for i in 1..6 {
        let mut s = step(i, "", "Your output was not formatted correctly");
        s.flags = crate::model::StepFlags { format_error: true, ..Default::default() };
        steps.push(s);
    }
    for i in 6..12 {
        steps.push(step(i, "python reproduce.py", "AssertionError"));
    }
    let edits = vec![edit(Some(7), "/testbed/a.py", "str_replace", "applied", &[], None)];
    let s = compute(&run(steps, edits, Some(false), None));
    assert!(s.repeats.is_empty(), "{:?}", s.repeats);
    let f = rules::evaluate(&s, &[Rule::FloodThenRepeat]);
    assert!(f[0].confidence < ASSIGN_THRESHOLD, "a flood alone is weighed, not assigned");
}

#[test]
fn asking_again_for_what_was_shown_after_a_flood_is_flooding() {
    let big = "x".repeat(30_000);
    let money = "def amount(): ...";
    let steps = |flood_between: bool, clipped_view: bool| {
        let view = if clipped_view { format!("{money}\n<response clipped>") } else { money.to_string() };
        let mut first = step(0, "cat src/money.py", &view);
        if clipped_view {
            first.flags = crate::model::StepFlags { output_clipped: true, ..Default::default() };
        }
        let mut v = vec![first, step(1, "ls src", "money.py")];
        v.push(if flood_between { step(2, "grep -rn amount .", &big) } else { step(2, "ls", "src") });
        v.push(step(3, "str_replace_editor str_replace /testbed/src/other.py", "edited"));
        v.push(step(4, "python reproduce.py", "ok"));
        v.push(step(5, "python reproduce.py", "ok"));
        v.push(step(6, "cat src/money.py", &view));
        v.push(if flood_between { step(7, "ls", "src") } else { step(7, "grep -rn amount .", &big) });
        v
    };
    let edits = || vec![edit(Some(3), "/testbed/src/other.py", "str_replace", "applied", &[], None)];
    let s = compute(&run(steps(true, false), edits(), Some(false), None));
    assert_eq!(s.context.unbounded_steps, vec![2]);
    assert!(fired(&s, Rule::FloodThenRepeat).is_some_and(|c| c >= ASSIGN_THRESHOLD), "{:?}", s.repeats);
    // The same repeat with the flood after it, not between: no sign of displacement.
    let s = compute(&run(steps(false, false), edits(), Some(false), None));
    assert!(fired(&s, Rule::FloodThenRepeat).is_some_and(|c| c < ASSIGN_THRESHOLD));
    // Asking again for a view that was clipped is looking for the part not shown.
    let s = compute(&run(steps(true, true), edits(), Some(false), None));
    assert!(fired(&s, Rule::FloodThenRepeat).is_some_and(|c| c < ASSIGN_THRESHOLD));
}

#[test]
fn a_rename_left_in_files_the_agent_never_changed_is_stale_and_only_those() {
    let grep =
        "src/utils.py:10:def old_name(x):\nsrc/models.py:3:from .utils import old_name\nsrc/views.py:7:old_name(y)\n";
    let steps = vec![
        step(0, "grep -rn old_name src", grep),
        step(1, "str_replace_editor str_replace /testbed/src/utils.py", "The file has been edited."),
    ];
    let patch = "diff --git a/src/utils.py b/src/utils.py\n--- a/src/utils.py\n+++ b/src/utils.py\n@@ -10 +10 @@\n-def old_name(x):\n+def new_name(x):\ndiff --git a/src/views.py b/src/views.py\n--- a/src/views.py\n+++ b/src/views.py\n@@ -7 +7 @@\n-old_name(y)\n+new_name(y)\n";
    let edits = vec![
        edit(Some(1), "/testbed/src/utils.py", "str_replace", "applied", &[], None),
        edit(None, "src/utils.py", "final_patch", "unknown", &[], None),
        edit(None, "src/views.py", "final_patch", "unknown", &[], None),
    ];
    let s = compute(&run(steps, edits, Some(false), Some(patch)));
    assert_eq!(s.stale.len(), 1);
    let st = &s.stale[0];
    assert_eq!((st.identifier.as_str(), st.renamed_to.as_deref()), ("old_name", Some("new_name")));
    assert_eq!(
        st.seen_in,
        vec![Sighting { path: "src/models.py".into(), step: 0, how: "import".into() }],
        "views.py was changed"
    );
    assert_eq!(fired(&s, Rule::StaleIdentifier), Some(0.75));
}

#[test]
fn a_resolved_run_gets_no_finding_whatever_its_signals() {
    let steps = (0..4).map(|i| step(i, "edit 1:2", "")).collect();
    let edits = vec![
        edit(Some(1), "/testbed/b.py", "windowed_edit", "rejected_by_linter", &["F821"], None),
        edit(Some(2), "b.py", "shell_write", "unknown", &[], None),
    ];
    let s = compute(&run(steps, edits, Some(true), None));
    assert!(rules::evaluate(&s, &<Rule as strum::IntoEnumIterator>::iter().collect::<Vec<_>>()).is_empty());
}

#[test]
fn gold_files_never_seen_need_an_edit_attempt_first() {
    let gold = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";
    let mut cut_off = run(vec![step(0, "ls", "src")], Vec::new(), Some(false), None);
    cut_off.task = Some(crate::classify::input::Task { instruction: None, gold_patch: Some(gold.into()) });
    let s = compute(&cut_off);
    assert_eq!(s.miss_ratio, Some(1.0));
    assert_eq!(fired(&s, Rule::ExpectedFileNeverSeen), None, "cut off before any edit: no mode");
    let mut elsewhere = run(
        vec![step(0, "ls", "src"), step(1, "str_replace_editor str_replace /testbed/src/b.py", "")],
        vec![edit(Some(1), "/testbed/src/b.py", "str_replace", "applied", &[], None)],
        Some(false),
        None,
    );
    elsewhere.task = Some(crate::classify::input::Task { instruction: None, gold_patch: Some(gold.into()) });
    assert_eq!(fired(&compute(&elsewhere), Rule::ExpectedFileNeverSeen), Some(0.8));
}

#[test]
fn release_notes_in_the_gold_patch_are_neither_location_nor_periphery() {
    let gold = "diff --git a/django/db/query.py b/django/db/query.py\n--- a/django/db/query.py\n+++ b/django/db/query.py\n@@ -1 +1 @@\n-def filter_rows(q):\n+def filter_rows(q, strict=False):\ndiff --git a/docs/releases/4.2.1.txt b/docs/releases/4.2.1.txt\n--- a/docs/releases/4.2.1.txt\n+++ b/docs/releases/4.2.1.txt\n@@ -1 +1,2 @@\n+* Fixed filter_rows() with strict.\n";
    let patch = "diff --git a/django/db/query.py b/django/db/query.py\n--- a/django/db/query.py\n+++ b/django/db/query.py\n@@ -1 +1 @@\n-def filter_rows(q):\n+def filter_rows(q, wrong=True):\n";
    let steps = vec![
        step(0, "str_replace_editor view /testbed/django/db/query.py", "def filter_rows(q):"),
        step(1, "str_replace_editor str_replace /testbed/django/db/query.py", "edited"),
    ];
    let edits = vec![
        edit(Some(1), "/testbed/django/db/query.py", "str_replace", "applied", &[], None),
        edit(None, "django/db/query.py", "final_patch", "unknown", &[], None),
    ];
    let mut r = run(steps, edits, Some(false), Some(patch));
    r.task = Some(crate::classify::input::Task { instruction: None, gold_patch: Some(gold.into()) });
    let s = compute(&r);
    assert!(s.periphery.as_ref().is_some_and(|p| p.periphery.is_empty()), "{:?}", s.periphery);
    for rule in [Rule::GoldPeripheryUntouched, Rule::ExpectedFileNeverSeen, Rule::ExpectedFileNotEdited] {
        assert_eq!(fired(&s, rule), None, "{rule:?}: wrong logic in the right place is no mode");
    }
}

#[test]
fn a_debug_edit_reset_without_a_check_is_weighed_and_a_checked_fix_reset_is_lost() {
    let run_with = |between: &str| {
        let steps = vec![
            step(0, "grep -rn x src", "src/pkg/helper.py:3:x = 1\n"),
            step(1, "sed -i 's/x/dbg(x)/' src/pkg/helper.py", ""),
            step(2, between, "ok"),
            step(3, "git checkout src/pkg/helper.py", ""),
            step(4, "str_replace_editor str_replace /testbed/src/pkg/core.py", "edited"),
        ];
        let mut edits = reconstructed(&steps, None);
        edits.extend([
            edit(Some(4), "/testbed/src/pkg/core.py", "str_replace", "applied", &[], None),
            edit(None, "src/pkg/core.py", "final_patch", "unknown", &[], None),
        ]);
        compute(&run(steps, edits, Some(false), Some("diff --git a/src/pkg/core.py b/src/pkg/core.py\n")))
    };
    let unchecked = run_with("ls");
    assert!(
        matches!(unchecked.lost_edits[0].why, LostWhy::GitRevert { checked: false, .. }),
        "{:?}",
        unchecked.lost_edits
    );
    assert!(fired(&unchecked, Rule::EditLost).is_some_and(|c| c < ASSIGN_THRESHOLD));
    let checked = run_with("python -m pytest tests");
    assert_eq!(fired(&checked, Rule::EditLost), Some(0.7));
}

#[test]
fn a_bare_file_name_from_the_task_is_weighed_not_assigned() {
    let steps = vec![
        step(0, "cat django/forms/models.py", "class ModelForm: ..."),
        step(1, "str_replace_editor str_replace /testbed/django/forms/fields.py", "edited"),
    ];
    let edits = vec![edit(Some(1), "/testbed/django/forms/fields.py", "str_replace", "applied", &[], None)];
    let mut r = run(steps, edits, Some(false), None);
    r.task = Some(crate::classify::input::Task {
        instruction: Some("In my models.py the form breaks.".into()),
        gold_patch: None,
    });
    let s = compute(&r);
    assert_eq!(s.expected[0].path.as_deref(), Some("django/forms/models.py"));
    assert_eq!(fired(&s, Rule::ExpectedFileNotEdited), Some(0.4));
}

/// A reconstructed `sed -i` that matched no line edited nothing: not a file edit, and when it
/// is the last attempt at the file, a lost edit; a later edit that changed the file repairs it.
#[test]
fn a_shell_edit_that_changed_nothing_is_no_edit_and_lost_when_last() {
    let noop = |step: i64| {
        let mut e = edit(Some(step), "src/pkg/core.py", "shell_write", "applied", &[], None);
        e.certainty = Some(crate::model::Certainty::Unchanged);
        e
    };
    let steps = vec![
        step(0, "sed -n '10,20p' src/pkg/core.py", "x = 1\n"),
        step(1, "sed -i '12s/y = 2/y = 3/' src/pkg/core.py", ""),
        step(2, "sed -i 's/x = 1/x = 2/' src/pkg/core.py", ""),
    ];
    let patch = "diff --git a/src/pkg/other.py b/src/pkg/other.py\n";
    // The run up to step 1 (the actions read would find step 2's write).
    let s = compute(&run(steps[..2].to_vec(), vec![noop(1)], Some(false), Some(patch)));
    let core = s.files.iter().find(|f| f.path == "src/pkg/core.py").expect("met");
    assert!(core.edited.is_empty(), "{core:?}");
    assert_eq!(s.first_edit_step, None);
    assert_eq!(s.lost_edits.len(), 1);
    assert_eq!((s.lost_edits[0].step, &s.lost_edits[0].why), (1, &LostWhy::ChangedNothing));
    // Fixed at step 2 (and then missing from the patch: that, not the no-op, is the loss).
    let fixed = edit(Some(2), "src/pkg/core.py", "shell_write", "applied", &[], Some("-x = 1\n+x = 2\n"));
    let s = compute(&run(steps, vec![noop(1), fixed], Some(false), Some(patch)));
    assert_eq!(s.lost_edits.len(), 1);
    assert_eq!(s.lost_edits[0].why, LostWhy::NotInPatch { shell: true });
}

mod defects;
mod evidence_needed;
mod onset_and_blame;
mod periphery_kinds;
mod refactoring;
mod what_the_harness_says;
