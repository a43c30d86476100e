use super::*;
use crate::model::{Edit, EditKind, Format, Run};
use std::path::PathBuf;

const V1_FIXTURE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/mini-swe-agent-v1/demo__mini-1/demo__mini-1.traj.json");
const V2_FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/mini-swe-agent-v2/demo__mini-2.traj.json");

fn corpus(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/mini-swe-agent-1")).join(rel)
}

fn parse_path(path: &Path) -> Parsed {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(path, &text).unwrap_or_else(|e| panic!("{e}"))
}

fn only_run(p: &Parsed) -> &Run {
    assert_eq!(p.runs.len(), 1);
    &p.runs[0]
}

fn step_edits(run: &Run) -> Vec<&Edit> {
    run.edits.iter().filter(|e| e.step.is_some()).collect()
}

#[test]
fn v1_fixture_steps_flags_and_edits() {
    let p = parse_path(Path::new(V1_FIXTURE));
    let run = only_run(&p);
    assert_eq!(run.instance_id, "demo__mini-1");
    assert_eq!(run.format, Some(Format::MiniSweAgent));
    assert_eq!(run.format_version.as_deref(), Some("mini-swe-agent-1"));
    assert_eq!(run.agent.as_deref(), Some("mini-swe-agent"));
    assert_eq!(run.model.as_deref(), Some("demo/model-x"));
    assert_eq!(run.exit_status.as_deref(), Some("Submitted"));
    assert_eq!(run.cost, Some(0.0123));
    assert_eq!(run.api_calls, Some(8));
    assert_eq!(run.position, 0);
    // Every message is either a step's (assistant + reply) or kept in the history.
    assert_eq!(run.history.len() + 2 * run.steps.len(), 18);
    assert_eq!(run.history[0].role, "system");
    assert_eq!(run.steps.len(), 8);
    assert_eq!(run.tokens_sent, Some(10_000));
    assert_eq!(run.tokens_received, Some(360));

    let s0 = &run.steps[0];
    assert_eq!(s0.thought, "Let me find where greet is defined.");
    assert_eq!(s0.action, "grep -rn \"def greet\" .");
    assert!(s0.observation.starts_with("<returncode>0</returncode>"));
    assert_eq!(s0.tool.as_deref(), Some("bash"));
    assert_eq!((s0.tokens_in, s0.tokens_out), (Some(900), Some(40)));
    assert_eq!(s0.flags, StepFlags::default());

    // Two bash blocks and a format-error reply: nothing ran.
    let s2 = &run.steps[2];
    assert!(s2.flags.format_error);
    assert!(s2.action.is_empty());
    assert!(s2.response.as_deref().is_some_and(|r| r.contains("python -m pytest")));
    assert!(!s2.flags.edit, "the sed in a rejected message never ran");

    assert!(run.steps[3].flags.edit && !run.steps[3].flags.error);
    assert!(run.steps[4].flags.edit);
    let s5 = &run.steps[5];
    assert!(s5.flags.error && s5.flags.test_run);
    assert!(run.steps[6].flags.output_clipped);
    let last = &run.steps[7];
    assert!(last.action.contains("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"));
    assert_eq!(Some(last.observation.as_str()), run.submission.as_deref());
    assert!(!last.flags.error);

    let edits = step_edits(run);
    assert_eq!(edits.len(), 2);
    assert_eq!((edits[0].step, edits[0].path.as_str()), (Some(3), "demo/greet.py"));
    assert_eq!(edits[0].kind, EditKind::ShellWrite);
    assert_eq!(edits[0].status, EditStatus::Applied);
    assert_eq!(edits[1].path, "tests/test_greet_case.py");
    assert!(edits[1].new_text.as_deref().is_some_and(|t| t.contains("def test_case_kept")));
    let finals: Vec<_> = run.edits.iter().filter(|e| e.kind == EditKind::FinalPatch).collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0].path, "demo/greet.py");

    assert_eq!(p.tasks.len(), 1);
    assert_eq!(p.tasks[0].instance_id, "demo__mini-1");
    assert!(p.tasks[0].instruction.as_deref().is_some_and(|t| t.contains("greet()")));
    assert!(p.warnings.is_empty());
}

#[test]
fn v2_fixture_tool_calls_and_exit_message() {
    let p = parse_path(Path::new(V2_FIXTURE));
    let run = only_run(&p);
    assert_eq!(run.instance_id, "demo__mini-2");
    assert_eq!(run.format_version.as_deref(), Some("mini-swe-agent-1.1"));
    assert_eq!(run.model.as_deref(), Some("demo/model-y"));
    assert_eq!(run.exit_status.as_deref(), Some("Submitted"));
    assert!(run.submission.as_deref().is_some_and(|s| s.contains("demo/sum.py")));
    assert_eq!(run.steps.len(), 5);
    assert_eq!(run.history.last().map(|m| m.role.as_str()), Some("exit"));

    let s0 = &run.steps[0];
    assert_eq!(s0.action, "cat demo/sum.py\nls tests");
    assert!(s0.observation.contains("return sum(xs[1:])") && s0.observation.contains("test_sum.py"));
    assert_eq!(s0.thought, "Look at the file and its tests.");
    assert_eq!(s0.timestamp.as_deref(), Some("2026-01-01T00:00:10.000000"));
    assert!(!s0.flags.error);

    assert!(run.steps[1].flags.format_error);
    assert!(run.steps[1].action.is_empty());
    assert!(run.steps[2].flags.edit);
    assert!(run.steps[3].flags.error && run.steps[3].flags.test_run);
    // The submitting command is answered by the exit message.
    assert_eq!(Some(run.steps[4].observation.as_str()), run.submission.as_deref());
    assert!(!run.steps[4].flags.error);

    let edits = step_edits(run);
    assert_eq!(edits.len(), 1);
    assert_eq!((edits[0].step, edits[0].path.as_str(), edits[0].status), (Some(2), "demo/sum.py", EditStatus::Applied));
    assert_eq!(run.edits.iter().filter(|e| e.kind == EditKind::FinalPatch).count(), 1);
}

#[test]
fn v2_text_fence_and_exit_status_from_exit_message() {
    let text = r#"{"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "Fix it."}]},
        {"role": "assistant", "content": "THOUGHT: look\n\n```mswea_bash_command\nls -la\n```", "extra": {"actions": [{"command": "ls -la"}]}},
        {"role": "user", "content": "<returncode>2</returncode>\n<output>\nls: cannot access</output>", "extra": {"returncode": 2}},
        {"role": "assistant", "content": "THOUGHT: write\n```mswea_bash_command\necho 'x = 1' > a.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded", "submission": ""}}
    ]}"#;
    let p = parse(Path::new("/runs/demo__mini-3.traj.json"), text).unwrap_or_else(|e| panic!("{e}"));
    let run = only_run(&p);
    assert_eq!(run.instance_id, "demo__mini-3");
    assert_eq!(run.exit_status.as_deref(), Some("LimitsExceeded"));
    assert_eq!(run.submission, None);
    assert_eq!(run.steps.len(), 2);
    assert_eq!(run.steps[0].thought, "look");
    assert_eq!(run.steps[0].action, "ls -la");
    assert!(run.steps[0].flags.error);
    assert_eq!(run.steps[1].action, "echo 'x = 1' > a.py");
    let edits = step_edits(run);
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].new_text.as_deref(), Some("x = 1\n"));
    assert_eq!(p.tasks[0].instruction.as_deref(), Some("Fix it."));
}

#[test]
fn fenced_blocks_follow_the_action_regex() {
    let blocks = fenced_blocks("a\n```bash\nls\n```\nb\n```python\nx\n```\n```bash  \n\n  cat f \n```");
    let bodies: Vec<&str> = blocks.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(bodies, vec!["ls", "cat f"]);
    assert!(fenced_blocks("```bash ls```").is_empty());
    assert!(fenced_blocks("```bashrc\nx\n```").is_empty());
    assert_eq!(fenced_blocks("```bash\n\n```").len(), 1);
    assert!(fenced_blocks("```bash\nno close").is_empty());
    assert!(fenced_blocks("é```bash\né\n```é").iter().any(|(_, b)| b == "é"));
}

#[test]
fn epoch_times_become_iso() {
    assert_eq!(epoch_to_iso(0.0).as_deref(), Some("1970-01-01T00:00:00.000000"));
    assert_eq!(epoch_to_iso(951_782_400.5).as_deref(), Some("2000-02-29T00:00:00.500000"));
    assert_eq!(epoch_to_iso(f64::NAN), None);
}

#[test]
fn malformed_documents_are_errors_not_panics() {
    let p = Path::new("x.traj.json");
    let shape = parse(p, r#"{"trajectory_format": "mini-swe-agent-1", "messages": {"role": "user"}}"#);
    assert!(matches!(&shape, Err(e) if e.to_string().contains("`messages` is not a list")), "{shape:?}");
    assert!(parse(p, "[1, 2]").is_err());
    assert!(parse(p, r#"{"info": {}}"#).is_err());
    let bad = parse(p, "{\"messages\": [\n  {\"role\": ");
    assert!(matches!(&bad, Err(e) if e.to_string().contains("line 2")), "{bad:?}");

    // Odd members are skipped or ignored, never indexed blindly.
    let odd = r#"{"info": "not an object", "instance_id": 7, "messages": [
        3, {"role": "assistant"}, {"role": "assistant", "content": null, "extra": []},
        {"role": "tool", "content": {"weird": true}, "extra": {"returncode": "x"}},
        {"role": "exit"}
    ]}"#;
    let parsed = parse(p, odd).unwrap_or_else(|e| panic!("{e}"));
    let run = only_run(&parsed);
    assert_eq!(run.instance_id, "x");
    assert_eq!(run.steps.len(), 2);
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].contains("messages[0]"));
}

#[test]
fn corpus_django_11163() {
    let p = parse_path(&corpus("django__django-11163/django__django-11163.traj.json"));
    let run = only_run(&p);
    assert_eq!(run.instance_id, "django__django-11163");
    // Every message is either a step's (assistant + reply) or kept in the history.
    assert_eq!(run.history.len() + 2 * run.steps.len(), 28);
    assert_eq!(run.steps.len(), 13);
    assert_eq!(run.exit_status.as_deref(), Some("Submitted"));
    assert_eq!(run.model.as_deref(), Some("google/gemini-3-pro-preview"));
    assert_eq!(run.api_calls, Some(13));
    assert!(run.steps.iter().all(|s| !s.action.is_empty() && s.tokens_in.is_some()));
    assert!(run.steps.iter().all(|s| !s.flags.format_error));
    let finals: Vec<_> = run.edits.iter().filter(|e| e.kind == EditKind::FinalPatch).collect();
    assert!(finals.iter().any(|e| e.path == "django/forms/models.py"));
}

#[test]
fn corpus_astropy_13033_has_one_format_error() {
    let p = parse_path(&corpus("astropy__astropy-13033/astropy__astropy-13033.traj.json"));
    let run = only_run(&p);
    // Every message is either a step's (assistant + reply) or kept in the history.
    assert_eq!(run.history.len() + 2 * run.steps.len(), 66);
    assert_eq!(run.steps.len(), 32);
    assert_eq!(run.exit_status.as_deref(), Some("Submitted"));
    let format_errors: Vec<usize> = (0..run.steps.len()).filter(|i| run.steps[*i].flags.format_error).collect();
    assert_eq!(format_errors, vec![26]);
    assert!(run.steps.iter().any(|s| s.flags.output_clipped));
    assert!(run.steps.iter().any(|s| s.flags.test_run));
}

#[test]
fn corpus_django_16560_is_long_and_costly() {
    let p = parse_path(&corpus("django__django-16560/django__django-16560.traj.json"));
    let run = only_run(&p);
    // Every message is either a step's (assistant + reply) or kept in the history.
    assert_eq!(run.history.len() + 2 * run.steps.len(), 292);
    assert_eq!(run.steps.len(), 145);
    assert_eq!(run.exit_status.as_deref(), Some("Submitted"));
    assert!((run.cost.unwrap_or(0.0) - 1.44).abs() < 0.005, "{:?}", run.cost);
    assert_eq!(run.api_calls, Some(145));
    // Nine observations report a non-zero return code.
    assert_eq!(run.steps.iter().filter(|s| s.flags.error).count(), 9);
    assert!(run.submission.is_some());
}

/// The corpus's longest failed run edits `constraints.py` with 50 shell commands (`sed -i`
/// in every form, `sed 'Nr file'`, `cat f >> constraints.py`): each gets a diff drawn on what
/// the run showed, most are checked by the agent's own later `sed -n` views, none is
/// contradicted, and the submitted patch agrees with the edits hunk by hunk.
#[test]
fn corpus_django_16560_shell_edits_are_reconstructed_and_checked() {
    use crate::model::{Certainty, CheckedBy};
    let p = parse_path(&corpus("django__django-16560/django__django-16560.traj.json"));
    let run = only_run(&p);
    let shell: Vec<&Edit> = step_edits(run).into_iter().filter(|e| e.kind == EditKind::ShellWrite).collect();
    assert_eq!(shell.len(), 57);
    let constraints: Vec<&Edit> =
        shell.iter().copied().filter(|e| e.path == "django/db/models/constraints.py").collect();
    assert_eq!(constraints.len(), 50);
    let count = |c: Certainty| constraints.iter().filter(|e| e.trace.certainty == Some(c)).count();
    assert_eq!(count(Certainty::Contradicted), 0);
    // A diff for every edit that changed something; the rest provably changed nothing.
    assert!(constraints.iter().all(|e| e.diff.is_some() || e.trace.certainty == Some(Certainty::Unchanged)));
    let by_views = constraints
        .iter()
        .filter(|e| {
            e.trace.certainty == Some(Certainty::Verified) && matches!(e.trace.checked_by, Some(CheckedBy::Step(_)))
        })
        .count();
    assert!(by_views >= 40, "{by_views} verified by the agent's later views");
    // `25s/def __init__(self, \*args.../`: line 25 held the commented-out signature (step 90
    // printed it), so the agent's first two attempts changed nothing.
    let unchanged: Vec<usize> =
        constraints.iter().filter(|e| e.trace.certainty == Some(Certainty::Unchanged)).filter_map(|e| e.step).collect();
    assert!(unchanged.contains(&6) && unchanged.contains(&89) && unchanged.contains(&24), "{unchanged:?}");
    let at = |step: usize| constraints.iter().find(|e| e.step == Some(step)).copied();
    assert!(at(5).and_then(|e| e.diff.as_deref()).is_some_and(|d| d.contains("+    violation_error_code = None")));
    assert_eq!(
        at(5).map(|e| e.trace.command.as_deref()),
        Some(Some("sed -i '21a\\    violation_error_code = None' django/db/models/constraints.py"))
    );
    // `sed -i '/DEBUG:/d'` removes both debug lines the agent had added, at their lines then.
    let debug = at(130).and_then(|e| e.diff.clone()).unwrap_or_default();
    assert_eq!(debug.matches("\n-").count(), 2, "{debug}");
    // The submitted patch: every hunk traced to the steps that made it.
    let patch = run.edits.iter().find(|e| e.kind == EditKind::FinalPatch).expect("final patch");
    assert_eq!(patch.trace.hunks.len(), 11);
    assert!(patch.trace.hunks.iter().all(|h| h.explained && !h.steps.is_empty()), "{:#?}", patch.trace.hunks);
    assert!(patch.trace.hunks[0].steps.contains(&5) && patch.trace.hunks[0].steps.contains(&130));
    assert!(run.steps[5].flags.edit && !run.steps[4].flags.edit);
}

fn corpus0(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/mini-swe-agent-0")).join(name)
}

/// mini-swe-agent before `trajectory_format` (MANIFEST: github_issue and early-2025-07 22 messages
/// and 10 assistant turns, local 6 and 2): a bare list, read into the same steps.
#[test]
fn corpus_bare_message_lists_before_trajectory_format() {
    for (name, messages, turns) in
        [("github_issue.traj.json", 22, 10), ("early-2025-07.traj.json", 22, 10), ("local.traj.json", 6, 2)]
    {
        let path = corpus0(name);
        let p = parse_path(&path);
        let run = only_run(&p);
        assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings);
        assert_eq!(run.steps.len(), turns, "{name}");
        assert_eq!(run.history.len() + 2 * run.steps.len(), messages, "{name}");
        assert_eq!(run.format, Some(Format::MiniSweAgent));
        assert_eq!(run.format_version, None, "{name}: the file names no version");
        assert_eq!(run.instance_id, name.trim_end_matches(".traj.json"));
        assert_eq!(run.model, None, "{name}: a bare list names no model");
        // The last command printed the final-output marker: mini-swe-agent's `Submitted`.
        assert_eq!(run.exit_status.as_deref(), Some("Submitted"), "{name}");
        assert!(run.steps.iter().all(|s| !s.action.is_empty()), "{name}");
    }
    let run = only_run(&parse_path(&corpus0("github_issue.traj.json"))).clone();
    let submission = run.submission.as_deref().unwrap_or_default();
    assert!(submission.starts_with("diff --git a/tests/missing_colon.py"), "{submission}");
    assert!(run.edits.iter().any(|e| e.kind == EditKind::FinalPatch && e.path == "tests/missing_colon.py"));
    assert_eq!(run.steps[9].action, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached");
    // `local`'s submission was empty: Submitted, nothing submitted.
    let local = only_run(&parse_path(&corpus0("local.traj.json"))).clone();
    assert_eq!((local.exit_status.as_deref(), local.submission), (Some("Submitted"), None));
}

#[test]
fn a_bare_list_that_ends_otherwise_has_no_exit_status_and_traj_json_takes_its_folder() {
    let text = r#"[{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
        {"role": "assistant", "content": "look\n```bash\nls\n```"}, {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"}]"#;
    let p = parse(Path::new("/runs/psf__requests-1963/traj.json"), text).unwrap_or_else(|e| panic!("{e}"));
    let run = only_run(&p);
    assert_eq!(run.instance_id, "psf__requests-1963");
    assert_eq!((run.exit_status.as_deref(), run.submission.as_deref()), (None, None));
    assert_eq!(run.steps.len(), 1);
    let none = parse(Path::new("x.traj.json"), r#"[{"role": "system", "content": "s"}]"#);
    assert!(none.is_err_and(|e| e.to_string().contains("no assistant message")));
}
