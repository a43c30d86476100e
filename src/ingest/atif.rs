//! ATIF trajectories (Harbor RFC 0001, v1.0 to v1.8): one `trajectory.json` is one run.
//!
//! An agent step is a trajan step: its message (after its `reasoning_content`, when there is one)
//! is the thought, its tool calls the action (a call's `command`, `cmd`, `keystrokes` or `code`
//! argument, else the function's name and its arguments as JSON), its observation results the
//! observation, its metrics the tokens. System and user steps are the conversation history; the
//! first user message is the task. Context management (v1.7: `extra.context_management`, system
//! steps that hand off to a summarizing subagent, steps copied as context) is kept in the run's
//! metadata, `atif.context_management` and `atif.compactions` (each with the index of the
//! trajan step it came before), where the classifier reads it.
//!
//! A trajectory trajan wrote (`export run --format atif`) carries, under `extra.trajan`, the
//! fields ATIF has no place for and those its own mapping would not give back, so it reads back
//! as the run it was.

use crate::analysis::reconstruct::{Exec, reconstruct};
use crate::analysis::{markers, streams, tool_edits};
use crate::atif::map::{self, ext, set_amount, set_count, set_i64, set_text};
use crate::atif::{self, Trajectory};
use crate::error::IngestError;
use crate::ingest::json::parse_value;
use crate::model::{Format, Parsed, Run, Step, StepFlags, Task};
use serde_json::{Map, Value};
use std::path::Path;

/// What the folder around a trajectory says about its run (a Harbor trial's `result.json`).
#[derive(Debug, Default, Clone)]
pub struct Context {
    pub instance_id: Option<String>,
    pub model: Option<String>,
    pub exit_status: Option<String>,
    pub cost: Option<f64>,
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    /// The run's submitted patch, when the source keeps it beside the trajectory (a published
    /// dataset's row): the run's final patch, known before its shell edits are reconstructed.
    pub submission: Option<String>,
    /// Merged into the run's metadata (`harbor`: the trial, its rewards, its exception).
    pub metadata: Map<String, Value>,
}

/// A trajectory file on its own.
pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let trajectory = read(path, text)?;
    let mut parsed = Parsed::default();
    let (run, task) = run_of(path, &trajectory, &Context::default(), &mut parsed.warnings);
    parsed.tasks.extend(task);
    parsed.runs.push(run);
    Ok(parsed)
}

/// Read the document: JSON errors name their line and column, a wrong shape names the field.
pub fn read(path: &Path, text: &str) -> Result<Trajectory, IngestError> {
    // Straight into the model: a JSON value first would cost the document's size several times
    // over (a map per tool call); the value is read only to name what is wrong.
    if let Ok(t) = serde_json::from_str::<Trajectory>(text) {
        return Ok(t);
    }
    let value = parse_value(path, text)?;
    if !value.get("steps").is_some_and(Value::is_array) {
        return Err(IngestError::shape(path, "ATIF: no `steps` list"));
    }
    serde_json::from_value(value).map_err(|e| IngestError::shape(path, format!("ATIF: {e}")))
}

/// The run a trajectory describes, and the task its first user message states.
pub fn run_of(path: &Path, t: &Trajectory, ctx: &Context, warnings: &mut Vec<String>) -> (Run, Option<Task>) {
    let root_ext = ext(t.extra.as_ref());
    let root_extra = t.extra.clone().unwrap_or_default();
    let instance_id = text_of(&root_ext, "instance_id")
        .or_else(|| ctx.instance_id.clone())
        .or_else(|| ["instance_id", "task_name", "task_id"].iter().find_map(|k| nonempty(root_extra.get(*k))))
        .unwrap_or_else(|| instance_from_path(path));
    let model = t
        .agent
        .model_name
        .clone()
        .filter(|m| !m.is_empty())
        .or_else(|| t.steps.iter().find_map(|s| s.model_name.clone().filter(|m| !m.is_empty())))
        .or_else(|| ctx.model.clone());

    let mut run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::Atif),
        format_version: Some(t.schema_version.clone()).filter(|v| !v.is_empty()),
        agent: Some(t.agent.name.clone()).filter(|n| !n.is_empty()),
        model,
        exit_status: ctx.exit_status.clone(),
        submission: ctx.submission.clone(),
        ..Run::default()
    };
    if let Some(patch) = &run.submission {
        run.edits.extend(crate::analysis::edits::final_patch_edits(patch));
    }
    let mut task: Option<String> = None;
    let mut compactions = Vec::new();
    let mut copied = 0usize;
    let (mut step_cost, mut step_in, mut step_out) = (None::<f64>, None::<i64>, None::<i64>);
    let mut exec = Vec::new();
    for (i, s) in t.steps.iter().enumerate() {
        let step_ext = ext(s.extra.as_ref());
        copied += usize::from(s.is_copied_context == Some(true));
        if let Some(kind) = compaction(s) {
            compactions.push(serde_json::json!({
                "step_id": s.step_id.unwrap_or(i as i64 + 1),
                "before_step": run.steps.len(),
                "kind": kind,
                "detail": s.extra.as_ref().and_then(|e| e.get("context_management")).cloned().unwrap_or(Value::Null),
            }));
        }
        if !s.is_agent() {
            let message = map::message(s);
            if s.source == "user" && task.is_none() && !message.content.trim().is_empty() {
                task = Some(message.content.clone());
            }
            run.history.push(message);
            continue;
        }
        let m = s.metrics.clone().unwrap_or_default();
        step_cost = add(step_cost, m.cost_usd, |a, b| a + b);
        step_in = add(step_in, m.prompt_tokens, i64::saturating_add);
        step_out = add(step_out, m.completion_tokens, i64::saturating_add);
        let (mut step, how) = agent_step(s, &step_ext);
        exec.push(how);
        let edits = call_edits(s, run.steps.len());
        if !edits.is_empty() && step_ext.get("flags").is_none() {
            step.flags.edit = true;
            step.flags.edit_rejected = edits.iter().any(|e| e.status.is_rejection());
        }
        run.edits.extend(edits);
        run.steps.push(step);
    }
    let fm = t.final_metrics.clone().unwrap_or_default();
    // Costs that add up past any number (1e308 twice) give no total, rather than infinity.
    if step_cost.is_some_and(|c| !c.is_finite()) {
        warnings.push(format!("{}: ATIF: the steps' costs add up past any number; no cost kept", path.display()));
        step_cost = None;
    }
    run.cost = fm.total_cost_usd.or(step_cost).or(ctx.cost);
    run.tokens_sent = fm.total_prompt_tokens.or(step_in).or(ctx.tokens_sent);
    run.tokens_received = fm.total_completion_tokens.or(step_out).or(ctx.tokens_received);

    let mut meta = Map::new();
    let mut atif_meta = Map::new();
    for (k, v) in [
        ("schema_version", Some(t.schema_version.clone())),
        ("session_id", t.session_id.clone()),
        ("trajectory_id", t.trajectory_id.clone()),
        ("agent_version", Some(t.agent.version.clone()).filter(|v| !v.is_empty())),
        ("notes", t.notes.clone()),
        ("continued_trajectory_ref", t.continued_trajectory_ref.clone()),
    ] {
        if let Some(v) = v {
            atif_meta.insert(k.into(), Value::String(v));
        }
    }
    if let Some(cm) = root_extra.get("context_management") {
        atif_meta.insert("context_management".into(), cm.clone());
    }
    if !compactions.is_empty() {
        atif_meta.insert("compactions".into(), Value::Array(compactions));
    }
    if copied > 0 {
        atif_meta.insert("copied_context_steps".into(), copied.into());
    }
    if let Some(subs) = &t.subagent_trajectories {
        atif_meta.insert("subagent_trajectories".into(), subs.len().into());
    }
    meta.insert("atif".into(), Value::Object(atif_meta));
    meta.extend(ctx.metadata.clone());
    run.metadata = Some(Value::Object(meta).to_string());

    // What shell commands did to files, unless trajan wrote the file and kept its edits.
    if !apply_run_ext(&mut run, &root_ext, warnings, path) {
        reconstruct(&mut run, &exec);
    }
    let task = task.map(|instruction| Task { instance_id, instruction: Some(instruction), ..Task::default() });
    (run, task)
}

/// Why a step marks context management, if it does.
fn compaction(s: &atif::Step) -> Option<&'static str> {
    if s.extra.as_ref().is_some_and(|e| e.contains_key("context_management")) {
        return Some("context_management");
    }
    let delegates = s
        .observation
        .as_ref()
        .is_some_and(|o| o.results.iter().any(|r| r.subagent_trajectory_ref.as_ref().is_some_and(|v| !v.is_empty())));
    let summarizes = s.message.text().to_ascii_lowercase().contains("summariz");
    (s.source == "system" && delegates && summarizes).then_some("summarization")
}

/// The edits a step's tool calls make, read by what each call does (`analysis::tool_edits`),
/// each applied or refused as its result says.
fn call_edits(s: &atif::Step, idx: usize) -> Vec<crate::model::Edit> {
    let results: &[atif::ObservationResult] = s.observation.as_ref().map(|o| o.results.as_slice()).unwrap_or_default();
    let calls: &[atif::ToolCall] = s.tool_calls.as_deref().unwrap_or_default();
    let mut out = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        // A result names its call; without names, the calls' results come in their order.
        let named = results.iter().find(|r| r.source_call_id.as_deref() == Some(c.tool_call_id.as_str()));
        let result = named.or_else(|| results.get(i).filter(|r| r.source_call_id.is_none()));
        let answer = result.map(|r| decoded(map::result_text(r)));
        let status = tool_edits::status(answer.as_deref());
        out.extend(tool_edits::call_edits(idx, &c.function_name, &c.arguments, status));
    }
    out
}

/// A result's text, a JSON object of streams read as its streams.
fn decoded(text: String) -> String {
    streams::decode(&text).unwrap_or(text)
}

/// The step, and how its action ran (a shell command's writes are reconstructed; their verdict
/// is unknown: ATIF carries no exit status).
fn agent_step(s: &atif::Step, e: &Map<String, Value>) -> (Step, Exec) {
    let mut step = map::agent_step(s);
    if !e.contains_key("observation") {
        let results = s.observation.iter().flat_map(|o| &o.results);
        step.observation = results.map(|r| decoded(map::result_text(r))).collect::<Vec<_>>().join("\n");
    }
    let mut how = Exec::Tool;
    if e.get("flags").is_none() {
        step.flags = StepFlags {
            error: !step.observation.is_empty() && markers::looks_like_error(&step.observation),
            output_clipped: markers::output_clipped(&step.observation),
            test_run: markers::runs_tests(&step.action),
            ..StepFlags::default()
        };
        if is_shell(step.tool.as_deref()) {
            // Terminus types keystrokes into tmux: what comes back is the screen.
            let typed = s.tool_calls.iter().flatten().any(|c| c.arguments.get("keystrokes").is_some());
            let status = crate::model::EditStatus::Unknown;
            how = if typed { Exec::Terminal(status) } else { Exec::Shell(status) };
        }
    }
    (step, how)
}

/// Tools whose action text is a shell command.
fn is_shell(tool: Option<&str>) -> bool {
    tool.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        ["bash", "shell", "exec", "terminal", "run_command", "execute_command", "command"].iter().any(|k| t.contains(k))
    })
}

fn text_of(e: &Map<String, Value>, key: &str) -> Option<String> {
    e.get(key).and_then(Value::as_str).map(str::to_string)
}

fn nonempty(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// Whether the edits were read from it.
fn apply_run_ext(run: &mut Run, e: &Map<String, Value>, warnings: &mut Vec<String>, path: &Path) -> bool {
    if e.is_empty() {
        return false;
    }
    if let Some(f) = e.get("format").and_then(Value::as_str) {
        run.format = Format::from_name(f).or(run.format);
    }
    set_text(e, "format_version", &mut run.format_version);
    set_text(e, "agent", &mut run.agent);
    set_text(e, "model", &mut run.model);
    set_text(e, "exit_status", &mut run.exit_status);
    set_text(e, "submission", &mut run.submission);
    set_text(e, "metadata", &mut run.metadata);
    set_amount(e, "cost", &mut run.cost);
    set_count(e, "tokens_sent", &mut run.tokens_sent);
    set_count(e, "tokens_received", &mut run.tokens_received);
    set_count(e, "api_calls", &mut run.api_calls);
    set_i64(e, "attempt", &mut run.attempt);
    if let Some(v) = e.get("best_attempt") {
        run.best_attempt = v.as_bool();
    }
    if let Some(list) = e.get("edits") {
        let read = serde_json::from_value::<Vec<atif::ext::EditExt>>(list.clone()).map_err(|e| e.to_string());
        match read.and_then(|list| steps_exist(list, run.steps.len())) {
            Ok(list) => {
                run.edits = list.into_iter().map(atif::ext::EditExt::into_edit).collect();
                return true;
            }
            Err(err) => warnings.push(format!("{}: extra.trajan.edits: {err}; edits derived instead", path.display())),
        }
    }
    false
}

/// Edits whose steps (where made, checked, undone, which made each hunk) are steps of the run:
/// a forged list naming a step the file does not have is refused whole.
fn steps_exist(list: Vec<atif::ext::EditExt>, steps: usize) -> Result<Vec<atif::ext::EditExt>, String> {
    for (i, e) in list.iter().enumerate() {
        let named = e.step.into_iter().chain(e.undone_at).chain(e.checked_at.and_then(|s| usize::try_from(s).ok()));
        let hunks = e.hunks.iter().flat_map(|h| h.steps.iter().copied());
        if let Some(bad) = named.chain(hunks).find(|&s| s >= steps) {
            return Err(format!("edit {i} names step {bad}, and the run has {steps} steps"));
        }
    }
    Ok(list)
}

/// A sum over steps that report the value (counts from the file saturate rather than overflow).
fn add<T>(acc: Option<T>, v: Option<T>, plus: impl Fn(T, T) -> T) -> Option<T> {
    match (acc, v) {
        (Some(a), Some(b)) => Some(plus(a, b)),
        (a, b) => a.or(b),
    }
}

/// `<job>/<task>__<id>/agent/trajectory.json` names its task by the trial folder; any other file
/// by its own name.
fn instance_from_path(path: &Path) -> String {
    let parent = path.parent();
    if parent.and_then(Path::file_name).is_some_and(|n| n == "agent")
        && let Some(trial) = parent.and_then(Path::parent).and_then(Path::file_name).and_then(|n| n.to_str())
    {
        return task_of_trial(trial);
    }
    super::file_name::instance_from_file_name(path)
}

/// The task of a Harbor trial folder's name: Harbor names trials `<task>__<7 characters>`.
pub fn task_of_trial(name: &str) -> String {
    match name.rsplit_once("__") {
        Some((task, id)) if id.len() == 7 && id.chars().all(|c| c.is_ascii_alphanumeric()) => task.to_string(),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ATIF trajectory of two agent steps with these metrics and this root `extra`.
    fn doc(metrics: [Value; 2], extra: Value) -> String {
        let step = |id: i64, m: &Value| {
            serde_json::json!({"step_id": id, "source": "agent", "message": "look",
                "tool_calls": [{"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "ls"}}],
                "observation": {"results": [{"content": "a.py"}]}, "metrics": m})
        };
        serde_json::json!({"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "fix it"}, step(2, &metrics[0]), step(3, &metrics[1])],
            "extra": extra})
        .to_string()
    }

    fn parsed(text: &str) -> Parsed {
        parse(Path::new("t/trajectory.json"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn costs_past_any_number_and_negative_counts_are_not_kept() {
        let huge = serde_json::json!({"cost_usd": 1e308, "prompt_tokens": -5, "completion_tokens": 7});
        let p = parsed(&doc([huge.clone(), huge], Value::Null));
        let run = &p.runs[0];
        assert_eq!(run.cost, None, "1e308 twice is no cost, not infinity");
        assert!(p.warnings.iter().any(|w| w.contains("past any number")), "{:?}", p.warnings);
        assert_eq!((run.steps[0].tokens_in, run.steps[0].tokens_out), (None, Some(7)));
        assert_eq!((run.tokens_sent, run.tokens_received), (None, Some(14)));
        let negative = serde_json::json!({"cost_usd": -3.0});
        let extra = serde_json::json!({"trajan": {"tokens_sent": -1, "cost": -2.5, "api_calls": -4}});
        let run = &parsed(&doc([negative.clone(), negative], extra)).runs[0];
        assert_eq!((run.cost, run.tokens_sent, run.api_calls), (None, None, None));
    }

    #[test]
    fn edits_that_name_steps_the_run_lacks_are_not_read() {
        let edit = |step: u64| {
            serde_json::json!({"trajan": {"edits": [{"step": step, "path": "a.py", "kind": "create", "status": "applied",
                "new_text": "x = 1\n"}]}})
        };
        let p = parsed(&doc([Value::Null, Value::Null], edit(1)));
        assert_eq!(p.runs[0].edits.len(), 1, "step 1 of two is kept: {:?}", p.warnings);
        let p = parsed(&doc([Value::Null, Value::Null], edit(1_000_000_000_000_000_000)));
        assert!(p.runs[0].edits.iter().all(|e| e.step.is_none_or(|s| s < 2)), "{:?}", p.runs[0].edits);
        assert!(p.warnings.iter().any(|w| w.contains("names step 1000000000000000000")), "{:?}", p.warnings);
        let forged = serde_json::json!({"trajan": {"edits": [{"step": 0, "path": "a.py", "kind": "create",
            "status": "applied", "undone_at": 9, "hunks": [{"hunk": "@@", "steps": [0], "explained": true}]}]}});
        let p = parsed(&doc([Value::Null, Value::Null], forged));
        assert!(p.warnings.iter().any(|w| w.contains("names step 9")), "{:?}", p.warnings);
    }
}
