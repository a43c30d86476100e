//! Synthetic failed runs for the classification benchmarks: about 30 steps each of searches,
//! views, reproductions and test runs, str_replace edits (some refused), linter-gated windowed
//! edits (some rejected with F821 or E999, some bypassed with `sed -i`), clipped outputs, a
//! submission patch, the task with a gold patch, and an unresolved (sometimes resolved) outcome.

use super::random::{Rng, WORDS, code_lines, prose};
use trajan::analysis::edits::{final_patch_edits, unified_diff};
use trajan::analysis::markers::{looks_like_error, output_clipped, runs_tests};
use trajan::model::{Edit, EditKind, EditStatus, Format, Run, Step, StepFlags, Task, TestCase, TestGroup, TestOutcome};

/// One run with its task and test outcome.
pub struct FailedRun {
    pub run: Run,
    pub task: Task,
    pub outcome: TestOutcome,
}

fn diff_git(path: &str, old: &str, new: &str) -> String {
    let body = unified_diff(path, old, new).unwrap_or_default();
    format!("diff --git a/{path} b/{path}\n{body}")
}

/// The steps and edits of a run being written.
struct Trajectory {
    seed: u64,
    steps: Vec<Step>,
    edits: Vec<Edit>,
}

impl Trajectory {
    fn push(&mut self, action: String, observation: String, args: Option<String>) {
        let flags = StepFlags {
            output_clipped: output_clipped(&observation),
            test_run: runs_tests(&action),
            error: looks_like_error(&observation),
            ..StepFlags::default()
        };
        self.steps.push(Step {
            thought: prose(&mut Rng(self.steps.len() as u64 + self.seed), 14),
            action,
            observation,
            args,
            flags,
            working_dir: Some("/testbed".into()),
            ..Step::default()
        });
    }

    /// The edit of step `i`, marking the step as an edit (rejected or not).
    fn edit(&mut self, i: usize, edit: Edit, rejected: bool) {
        self.edits.push(edit);
        self.steps[i].flags.edit = true;
        self.steps[i].flags.edit_rejected = rejected;
    }

    /// A windowed edit behind a linter: applied, or rejected (F821/E999) and sometimes bypassed
    /// with `sed -i` at the next step.
    fn linted_edit(&mut self, rng: &mut Rng, core: &str, old: &mut String, head: &str) {
        let i = self.steps.len();
        let new = format!("def {head}(self, value=None, {}=None):\n    return value\n", rng.pick(WORDS));
        let rejected = rng.below(3) == 0;
        let codes = if rng.below(2) == 0 { vec!["F821".to_string()] } else { vec!["E999".to_string()] };
        let obs = if rejected {
            format!(
                "Your proposed edit has introduced new syntax error(s).\nERRORS:\n- {} undefined name 'x'\nYour changes have NOT been applied.",
                codes[0]
            )
        } else {
            "File updated. Please review the changes.".into()
        };
        self.push("edit 12:13".into(), obs, None);
        let status = if rejected { EditStatus::RejectedByLinter } else { EditStatus::Applied };
        let edit = Edit {
            step: Some(i),
            path: format!("/testbed/{core}"),
            kind: EditKind::WindowedEdit,
            status,
            diff: unified_diff(core, old, &new),
            old_text: Some(old.clone()),
            new_text: Some(new.clone()),
            lint_codes: if rejected { codes } else { Vec::new() },
            trace: Default::default(),
        };
        self.edit(i, edit, rejected);
        if !rejected {
            *old = new;
        } else if rng.below(2) == 0 {
            self.push(format!("sed -i 's/value=None/value=0/' {core}"), String::new(), None);
            let bypass = Edit {
                step: Some(i + 1),
                path: core.to_string(),
                kind: EditKind::ShellWrite,
                status: EditStatus::Unknown,
                old_text: None,
                new_text: None,
                diff: None,
                lint_codes: Vec::new(),
                trace: Default::default(),
            };
            self.edit(i + 1, bypass, false);
        }
    }

    /// A str_replace edit, sometimes refused by the tool.
    fn replace_edit(&mut self, rng: &mut Rng, core: &str, old: &mut String) {
        let i = self.steps.len();
        let new = old.replace("return value", &format!("return {}(value)", rng.pick(WORDS)));
        let refused = rng.below(5) == 0;
        let obs = if refused {
            "No replacement was performed, old_str did not appear verbatim".to_string()
        } else {
            format!("The file /testbed/{core} has been edited.")
        };
        self.push(format!("str_replace_editor str_replace /testbed/{core}"), obs, None);
        let status = if refused { EditStatus::RefusedByTool } else { EditStatus::Applied };
        let edit = Edit {
            step: Some(i),
            path: format!("/testbed/{core}"),
            kind: EditKind::StrReplace,
            status,
            diff: unified_diff(core, old, &new),
            old_text: Some(old.clone()),
            new_text: Some(new.clone()),
            lint_codes: Vec::new(),
            trace: Default::default(),
        };
        self.edit(i, edit, refused);
        if !refused {
            *old = new;
        }
    }
}

pub fn failed_run(seed: u64) -> FailedRun {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let repo = ["django", "sympy", "astropy", "pytest", "requests", "flask"][rng.below(6) as usize];
    let instance_id = format!("{repo}__{repo}-c{seed}");
    let (a, b) = (rng.pick(WORDS), rng.pick(WORDS));
    let core = format!("src/{repo}/{a}.py");
    let other = format!("src/{repo}/{b}_util.py");
    let gated = rng.below(3) == 0;
    let mut t = Trajectory { seed, steps: Vec::new(), edits: Vec::new() };
    let grep_hits = format!("{core}:12:def {a}_{b}(self, value=None):\n{other}:40:    return {a}_{b}(value)\n");
    t.push(format!("grep -rn {a}_{b} src"), grep_hits, None);
    let view_args = |p: &str| Some(format!("{{\"command\": \"view\", \"path\": \"/testbed/{p}\"}}"));
    t.push(format!("str_replace_editor view /testbed/{core}"), code_lines(&mut rng, 40, 1), view_args(&core));
    let n = 24 + rng.below(12) as usize;
    let mut old = format!("def {a}_{b}(self, value=None):\n    return value\n");
    while t.steps.len() < n {
        match rng.below(8) {
            0 => {
                t.push("python reproduce.py".into(), "Traceback (most recent call last):\nValueError: bad".into(), None)
            }
            1 => t.push(format!("python -m pytest tests/test_{a}.py -x"), "1 failed, 12 passed".into(), None),
            2 if rng.below(4) == 0 => {
                let big = format!(
                    "{}\n<response clipped><NOTE>Observations should not exceeded 100000 characters.",
                    code_lines(&mut rng, 600, 1)
                );
                t.push(format!("cat {other}"), big, None);
            }
            3 => t.push(
                format!("str_replace_editor view /testbed/{other}"),
                code_lines(&mut rng, 30, 30),
                view_args(&other),
            ),
            4 | 5 if gated => t.linted_edit(&mut rng, &core, &mut old, &format!("{a}_{b}")),
            4 | 5 => t.replace_edit(&mut rng, &core, &mut old),
            _ => t.push(format!("grep -n {} {core}", rng.pick(WORDS)), code_lines(&mut rng, 3, 7), None),
        }
    }
    t.push("submit".into(), String::new(), None);
    let Trajectory { steps, edits, .. } = t;
    let original = format!("def {a}_{b}(self, value=None):\n    return value\n");
    let submission = (old != original).then(|| diff_git(&core, &original, &old));
    let mut gold = diff_git(&core, &original, &format!("def {a}_{b}(self, value=None):\n    return value or 0\n"));
    if rng.below(3) == 0 {
        gold.push_str(&diff_git(
            &other,
            &format!("    return {a}_{b}(value)\n"),
            &format!("    return {a}_{b}(value=value)\n"),
        ));
    }
    let resolved = rng.below(10) == 0;
    let mut edits_all = edits;
    edits_all.extend(submission.as_deref().map(final_patch_edits).unwrap_or_default());
    let run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::SweAgent),
        agent: Some("swe-agent".into()),
        model: Some(["synthetic/model-a", "synthetic/model-b"][rng.below(2) as usize].into()),
        exit_status: Some(
            ["submitted", "submitted", "exit_cost", "submitted (exit_format)"][rng.below(4) as usize].into(),
        ),
        submission,
        steps,
        edits: edits_all,
        ..Run::default()
    };
    let task = Task {
        instance_id: instance_id.clone(),
        instruction: Some(prose(&mut rng, 60)),
        gold_patch: Some(gold),
        ..Task::default()
    };
    let outcome = TestOutcome {
        instance_id,
        format: Some(Format::SwebenchReport),
        model: None,
        resolved: Some(resolved),
        tests: vec![TestCase {
            name: format!("tests/test_{a}.py::test_{b}"),
            group: Some(TestGroup::FailToPass),
            passed: resolved,
            message: None,
        }],
        ..TestOutcome::default()
    };
    FailedRun { run, task, outcome }
}
