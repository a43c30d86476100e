use super::*;
use crate::model::{EditKind, EditStatus};
use std::path::PathBuf;

fn corpus(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus")).join(rel)
}

fn parse_file(path: &Path) -> Parsed {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(path, &text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn pydicom_0x_has_three_lint_rejections_then_an_applied_edit() {
    let p = parse_file(&corpus("swe-agent-0.x/pydicom__pydicom-1458.traj"));
    let run = &p.runs[0];
    assert_eq!(run.instance_id, "pydicom__pydicom-1458");
    assert_eq!(run.steps.len(), 12);
    assert_eq!(run.exit_status.as_deref(), Some("submitted"));
    assert!(run.submission.is_some());
    assert_eq!(run.format_version.as_deref(), Some("0.x"));
    assert!((run.cost.unwrap_or(0.0) - 1.26719).abs() < 1e-9);
    assert_eq!(run.tokens_sent, Some(122_612));
    // 0.x records the state before each action: the edits at steps 5-8 apply to the file opened
    // at step 4.
    let numpy_edits: Vec<_> = run
        .edits
        .iter()
        .filter(|e| e.kind == EditKind::WindowedEdit && e.path.ends_with("pixel_data_handlers/numpy_handler.py"))
        .map(|e| (e.step, e.status))
        .collect();
    assert_eq!(
        numpy_edits,
        vec![
            (Some(5), EditStatus::RejectedByLinter),
            (Some(6), EditStatus::RejectedByLinter),
            (Some(7), EditStatus::RejectedByLinter),
            (Some(8), EditStatus::Applied),
        ]
    );
    let rejected = run.edits.iter().find(|e| e.step == Some(5)).map(|e| e.lint_codes.clone());
    assert_eq!(rejected, Some(vec!["E999".to_string()]));
    // `edit 287:295`: the diffs, rejected or applied, are numbered at the file's lines.
    for step in 5..=8 {
        let diff = run.edits.iter().find(|e| e.step == Some(step)).and_then(|e| e.diff.clone()).unwrap_or_default();
        assert!(diff.contains("@@ -287,"), "step {step}: {diff}");
    }
    assert!(run.steps[5].flags.edit_rejected && run.steps[8].flags.edit && !run.steps[8].flags.edit_rejected);
    // The edit is drawn against the lines the agent had seen at step 4.
    let applied = run.edits.iter().find(|e| e.step == Some(8)).and_then(|e| e.diff.clone());
    assert!(applied.is_some_and(|d| d.contains("-        'BitsAllocated', 'Rows', 'Columns', 'PixelRepresentation',")));
    assert!(
        run.edits
            .iter()
            .any(|e| e.kind == EditKind::FinalPatch && e.path == "pydicom/pixel_data_handlers/numpy_handler.py")
    );
    let task = &p.tasks[0];
    assert!(
        task.instruction.as_deref().is_some_and(|i| i.starts_with("Pixel Representation attribute should be optional"))
    );
}

#[test]
fn marshmallow_1_0_reads_dict_state_timing_and_search_replace_edits() {
    let p = parse_file(&corpus("swe-agent-1.0/marshmallow-code__marshmallow-1867.traj"));
    let run = &p.runs[0];
    assert_eq!(run.steps.len(), 13);
    assert_eq!(run.exit_status.as_deref(), Some("submitted"));
    assert!(run.steps.iter().any(|s| s.observation.contains("\r\n")));
    assert!(run.steps.iter().all(|s| s.execution_time.is_some()));
    assert_eq!(run.steps[1].open_file.as_deref(), Some("/testbed/setup.py"));
    let e = run.edits.iter().find(|e| e.step == Some(9)).unwrap_or_else(|| panic!("no edit at step 9"));
    assert_eq!(e.kind, EditKind::WindowedEdit);
    assert_eq!(e.path, "/testbed/src/marshmallow/fields.py");
    assert_eq!(e.status, EditStatus::Applied);
    // messages are delta-encoded, never the whole prompt per step
    assert!(run.steps.iter().filter_map(|s| s.query.as_ref()).all(|q| q.append.len() < 20));
}

#[test]
fn small_1_0_run() {
    let p = parse_file(&corpus("swe-agent-1.0/6e44b9__sweagenttestrepo-1c2844.traj"));
    assert_eq!(p.runs[0].steps.len(), 5);
    assert_eq!(p.runs[0].exit_status.as_deref(), Some("submitted"));
    assert_eq!(p.runs[0].edits.iter().filter(|e| e.step.is_some()).count(), 1);
}

#[test]
fn pytest_1_1_query_is_stored_as_deltas() {
    let p = parse_file(&corpus("swe-agent-1.1/pytest-dev__pytest-6202.traj"));
    let run = &p.runs[0];
    assert_eq!(run.steps.len(), 56);
    assert_eq!(run.exit_status.as_deref(), Some("submitted (exit_format)"));
    assert!(run.submission.is_some());
    assert_eq!(run.model.as_deref(), Some("openrouter/deepseek/deepseek-v3.2"));
    assert_eq!(run.format_version.as_deref(), Some("1.1.0"));
    let appended: usize = run.steps.iter().filter_map(|s| s.query.as_ref()).map(|q| q.append.len()).sum();
    let full: usize = run.steps.iter().filter_map(|s| s.query.as_ref()).map(|q| q.keep + q.append.len()).sum();
    assert!(appended * 5 < full, "appended {appended} of {full} prompt messages");
    // the create of reproduce_issue.py is an applied str_replace_editor edit
    let create = run.edits.iter().find(|e| e.kind == EditKind::Create).unwrap_or_else(|| panic!("no create"));
    assert_eq!(create.path, "/testbed/reproduce_issue.py");
    assert_eq!(create.status, EditStatus::Applied);
    // empty-action requery steps are format errors
    assert!(run.steps[2].flags.format_error);
    assert!(!run.steps[55].flags.format_error);
}

#[test]
fn pylint_1_1_single_exit_step() {
    let p = parse_file(&corpus("swe-agent-1.1/pylint-dev__pylint-4604.traj"));
    let run = &p.runs[0];
    assert_eq!(run.steps.len(), 1);
    assert_eq!(run.exit_status.as_deref(), Some("exit_error"));
    assert!(run.submission.is_none());
    assert!(!run.steps[0].flags.format_error);
}

#[test]
fn retry_agent_attempts_become_runs() {
    let text = r#"{"attempts": [
        {"trajectory": [{"action": "ls", "observation": "a.py", "thought": "look", "response": "look"}],
         "history": [], "info": {"exit_status": "exit_cost"}},
        {"trajectory": [{"action": "submit", "observation": "", "thought": "done", "response": "done"}],
         "history": [], "info": {"exit_status": "submitted", "submission": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"}}
      ], "info": {"best_attempt_idx": 1}}"#;
    let p = parse(Path::new("/x/demo__retry-1.traj"), text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[1].attempt, Some(1));
    assert_eq!(p.runs[1].best_attempt, Some(true));
    assert_eq!(p.runs[0].best_attempt, Some(false));
    assert_eq!(p.runs[1].edits.len(), 1);
}

#[test]
fn retry_agent_models_come_from_the_agent_configs() {
    let text = r#"{"attempts": [{"trajectory": [], "history": [], "info": {}}, {"trajectory": [], "history": [], "info": {}}],
        "info": {"best_attempt_idx": 0},
        "replay_config": "{\"agent\": {\"type\": \"retry\", \"agent_configs\": [{\"model\": {\"name\": \"a/m1\"}}, {\"model\": {\"name\": \"b/m2\"}}]}}"}"#;
    let p = parse(Path::new("/x/demo__retry-2.traj"), text).unwrap_or_else(|e| panic!("{e}"));
    let models: Vec<_> = p.runs.iter().map(|r| r.model.clone()).collect();
    assert_eq!(models, vec![Some("a/m1".to_string()), Some("b/m2".to_string())]);
}

#[test]
fn wrong_shapes_are_errors_with_positions() {
    let err = parse(Path::new("t.traj"), r#"{"trajectory": 5}"#).err().map(|e| e.to_string());
    assert!(err.as_deref().is_some_and(|e| e.contains("t.traj: line 1")), "{err:?}");
    let err = parse(Path::new("t.traj"), r#"{"info": {}}"#).err().map(|e| e.to_string());
    assert!(err.as_deref().is_some_and(|e| e.contains("neither")), "{err:?}");
    let err = parse(Path::new("t.traj"), r#"{"trajectory": [{"action": "ls""#).err().map(|e| e.to_string());
    assert!(err.as_deref().is_some_and(|e| e.contains("EOF")), "{err:?}");
}
