//! SWE-agent `.traj` files: 0.x, 1.0, 1.1+ and RetryAgent `attempts`.
//!
//! Parsed with typed structs that borrow from the file text. Each step's prompt (`messages` in
//! 1.0, `query` in 1.1+) is kept as raw JSON slices, hashed and delta-encoded against the
//! previous step's prompt, so the quadratic part of the file is never built as values.

mod actions;
mod args;

use crate::analysis::reconstruct::{Exec, reconstruct};
use crate::analysis::{edits, markers};
use crate::error::IngestError;
use crate::ingest::instance_from_file_name;
use crate::ingest::json::{content_text, f64_field, i64_field, str_field};
use crate::model::{EditStatus, Format, Message, Parsed, QueryDelta, QueryMessage, Run, Step, StepFlags, Task};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

#[derive(Deserialize)]
struct TrajFile<'a> {
    #[serde(default, borrow)]
    trajectory: Option<Vec<StepIn<'a>>>,
    #[serde(default)]
    history: Option<Vec<Value>>,
    #[serde(default)]
    info: Option<Value>,
    #[serde(default)]
    replay_config: Option<Value>,
    #[serde(default, borrow)]
    attempts: Option<Vec<Attempt<'a>>>,
}

#[derive(Deserialize)]
struct Attempt<'a> {
    #[serde(default, borrow)]
    trajectory: Option<Vec<StepIn<'a>>>,
    #[serde(default)]
    history: Option<Vec<Value>>,
    #[serde(default)]
    info: Option<Value>,
    /// Some RetryAgent versions keep each attempt's own configuration.
    #[serde(default)]
    replay_config: Option<Value>,
}

#[derive(Deserialize)]
struct StepIn<'a> {
    #[serde(default, deserialize_with = "lenient_string")]
    action: String,
    #[serde(default, deserialize_with = "lenient_string")]
    observation: String,
    #[serde(default, deserialize_with = "lenient_string")]
    response: String,
    #[serde(default, deserialize_with = "lenient_string")]
    thought: String,
    #[serde(default, deserialize_with = "lenient_f64")]
    execution_time: Option<f64>,
    #[serde(default)]
    state: Option<Value>,
    #[serde(default, borrow)]
    query: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    messages: Option<Vec<&'a RawValue>>,
}

/// A number that forks sometimes write as a string, or leave null.
fn lenient_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// A string field that may also be null, a number, or (in forks) a structured value.
fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    })
}

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let file: TrajFile = serde_json::from_str(text).map_err(|e| IngestError::json(path, &e))?;
    let instance_id = instance_from_file_name(path);
    let replay = file.replay_config.as_ref().map(crate::ingest::json::maybe_nested_json);
    let model = model_name(replay.as_ref(), None);
    let top_info = file.info.unwrap_or(Value::Null);
    let mut parsed = Parsed::default();

    let attempts = file.attempts.unwrap_or_default();
    if attempts.is_empty() {
        let steps = file
            .trajectory
            .ok_or_else(|| IngestError::shape(path, "SWE-agent file has neither a `trajectory` nor any `attempts`"))?;
        let history = file.history.unwrap_or_default();
        let run = build_run(&instance_id, steps, &history, &top_info, model.clone(), None)?;
        parsed.tasks.extend(task_of(&instance_id, &history, replay.as_ref()));
        parsed.runs.push(run);
    } else {
        let best = i64_field(&top_info, "best_attempt_idx");
        for (i, a) in attempts.into_iter().enumerate() {
            let history = a.history.unwrap_or_default();
            let info = a.info.unwrap_or(Value::Null);
            let steps = a.trajectory.unwrap_or_default();
            let own = a.replay_config.as_ref().map(crate::ingest::json::maybe_nested_json);
            let model = model_name(own.as_ref(), None).or_else(|| model_name(replay.as_ref(), Some(i)));
            let mut run = build_run(&instance_id, steps, &history, &info, model, Some(i))?;
            run.best_attempt = best.map(|b| b == i as i64);
            if i == 0 {
                parsed.tasks.extend(task_of(&instance_id, &history, replay.as_ref()));
            }
            parsed.runs.push(run);
        }
    }
    if let Some(r) = replay {
        for run in &mut parsed.runs {
            run.metadata = Some(r.to_string());
        }
    }
    // 0.x names no model in the file: its run folder's `args.yaml` does.
    if parsed.runs.iter().any(|r| r.model.is_none())
        && let Some(model) = args::model_beside(path)
    {
        for run in parsed.runs.iter_mut().filter(|r| r.model.is_none()) {
            run.model = Some(model.clone());
        }
    }
    Ok(parsed)
}

/// The model of a replay config: `agent.model.name`, or for a RetryAgent config
/// (`agent.type: retry`) the attempt's entry of `agent.agent_configs` (the first when the
/// attempts outnumber the configs, as SWE-agent cycles through them).
fn model_name(replay: Option<&Value>, attempt: Option<usize>) -> Option<String> {
    let agent = replay?.get("agent")?;
    let direct = agent.get("model").and_then(|m| m.get("name")).and_then(Value::as_str);
    let configs = agent.get("agent_configs").and_then(Value::as_array).filter(|c| !c.is_empty());
    let from_configs = configs.and_then(|c| {
        let i = attempt.unwrap_or(0) % c.len();
        c[i].get("model").and_then(|m| m.get("name")).and_then(Value::as_str)
    });
    direct.or(from_configs).map(str::to_string)
}

fn build_run(
    instance_id: &str,
    steps_in: Vec<StepIn<'_>>,
    history: &[Value],
    info: &Value,
    model: Option<String>,
    attempt: Option<usize>,
) -> Result<Run, IngestError> {
    let stats = info.get("model_stats").cloned().unwrap_or(Value::Null);
    let version = str_field(info, "swe_agent_version").unwrap_or_else(|| guess_version(&steps_in));
    let submission = str_field(info, "submission").filter(|s| !s.trim().is_empty());
    let mut run = Run {
        instance_id: instance_id.to_string(),
        format: Some(Format::SweAgent),
        format_version: Some(version),
        agent: Some("swe-agent".to_string()),
        model,
        // An interrupted run leaves an empty exit status: unknown, not "".
        exit_status: str_field(info, "exit_status").filter(|s| !s.trim().is_empty()),
        submission: submission.clone(),
        cost: f64_field(&stats, "instance_cost"),
        tokens_sent: i64_field(&stats, "tokens_sent"),
        tokens_received: i64_field(&stats, "tokens_received"),
        api_calls: i64_field(&stats, "api_calls"),
        attempt: attempt.map(|a| a as i64),
        position: attempt.unwrap_or(0) as i64,
        ..Run::default()
    };
    // The conversation up to the first model turn (system prompt, demonstrations, the task);
    // later messages repeat the steps' text, and 1.x prompts keep them all anyway.
    run.history = history
        .iter()
        .take_while(|m| m.get("role").and_then(Value::as_str) != Some("assistant"))
        .map(history_message)
        .collect();

    let mut prompts = PromptDedup::default();
    let mut exec = Vec::with_capacity(steps_in.len());
    let states = states_after(&steps_in);
    let count = steps_in.len();
    for (idx, s) in steps_in.into_iter().enumerate() {
        let (open_file, working_dir) = states[idx].clone();
        let action = s.action.trim_end_matches('\n').to_string();
        // The file an edit applies to is the one open before the action ran.
        let open_before = match idx {
            0 => open_file.clone(),
            _ => states[idx - 1].0.clone().or_else(|| open_file.clone()),
        };
        let parsed_action = actions::parse_action(&action, open_before.as_deref(), working_dir.as_deref());
        exec.push(match parsed_action.tool.as_deref() {
            Some("bash") => Exec::Shell(actions::shell_status(&s.observation)),
            _ => Exec::Tool,
        });
        let mut flags = StepFlags {
            output_clipped: markers::output_clipped(&s.observation),
            test_run: markers::runs_tests(&action),
            ..StepFlags::default()
        };
        let is_exit = s.observation.starts_with("Exited") || s.response.starts_with("Exit due to");
        flags.format_error = action.trim().is_empty() && !is_exit && idx + 1 < count;
        flags.error = !action.trim().is_empty() && markers::looks_like_error(&s.observation);
        for proposed in parsed_action.edits {
            let status = proposed.status_from(&s.observation);
            flags.edit = true;
            flags.edit_rejected |= status.is_rejection();
            let lint =
                if status == EditStatus::RejectedByLinter { edits::lint_codes(&s.observation) } else { Vec::new() };
            let mut edit = edits::edit_from_texts(
                Some(idx),
                &proposed.path,
                proposed.kind,
                status,
                proposed.old_text,
                proposed.new_text,
                lint,
            );
            if let (Some((start, _)), Some(d)) = (proposed.lines, edit.diff.as_deref()) {
                edit.diff = Some(edits::diff_at_line(d, start));
            }
            edit.trace.lines = proposed.lines;
            run.edits.push(edit);
        }
        let query = s.query.as_deref().or(s.messages.as_deref()).map(|q| prompts.delta(q));
        let response = (!s.response.is_empty() && s.response != s.thought).then_some(s.response);
        run.steps.push(Step {
            thought: s.thought,
            action,
            observation: s.observation,
            response,
            tool: parsed_action.tool,
            args: parsed_action.args.map(|a| a.to_string()),
            execution_time: s.execution_time,
            open_file: open_file.clone(),
            working_dir: working_dir.clone(),
            flags,
            query,
            ..Step::default()
        });
    }
    if let Some(sub) = &submission {
        run.edits.extend(edits::final_patch_edits(sub));
    }
    reconstruct(&mut run, &exec);
    Ok(run)
}

fn guess_version(steps: &[StepIn<'_>]) -> String {
    let first = steps.iter().find(|s| s.state.is_some());
    if steps.iter().any(|s| s.query.is_some()) {
        "1.1".to_string()
    } else if steps.iter().any(|s| s.messages.is_some() || s.execution_time.is_some()) {
        "1.0".to_string()
    } else if first.is_some_and(|s| matches!(s.state, Some(Value::String(_)))) {
        "0.x".to_string()
    } else {
        "unknown".to_string()
    }
}

/// Open file and working directory after each step's action. 0.x records the state the
/// action was chosen in (a JSON string), 1.x the state after it ran (a dict): 0.x states are
/// shifted by one so both mean "after".
fn states_after(steps: &[StepIn<'_>]) -> Vec<(Option<String>, Option<String>)> {
    let states: Vec<_> = steps.iter().map(|s| read_state(s.state.as_ref())).collect();
    let recorded_before = steps.iter().any(|s| matches!(s.state, Some(Value::String(_))));
    if !recorded_before {
        return states;
    }
    (0..states.len()).map(|i| states.get(i + 1).unwrap_or(&states[i]).clone()).collect()
}

/// `state` is a JSON string in 0.x and a dict in 1.x; "n/a" means no open file.
fn read_state(state: Option<&Value>) -> (Option<String>, Option<String>) {
    let Some(state) = state else { return (None, None) };
    let state = crate::ingest::json::maybe_nested_json(state);
    let get = |k: &str| str_field(&state, k).map(|s| s.trim().to_string()).filter(|s| !s.is_empty() && s != "n/a");
    (get("open_file"), get("working_dir"))
}

fn history_message(m: &Value) -> Message {
    Message::from_value(m)
}

/// The task: the problem statement from `replay_config` when present, else the issue text cut
/// out of the first non-demonstration user message.
fn task_of(instance_id: &str, history: &[Value], replay: Option<&Value>) -> Option<Task> {
    let from_replay = replay
        .and_then(|r| crate::ingest::json::at(r, &["problem_statement", "text"]))
        .and_then(Value::as_str)
        .map(str::to_string);
    let instruction = from_replay.or_else(|| {
        history
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .find(|m| m.get("is_demo").and_then(Value::as_bool) != Some(true))
            .map(|m| extract_issue(&content_text(m.get("content"))))
    })?;
    Some(Task { instance_id: instance_id.to_string(), instruction: Some(instruction), ..Task::default() })
}

fn extract_issue(prompt: &str) -> String {
    for (start, end) in [
        ("ISSUE:\n", "\n\nINSTRUCTIONS:"),
        ("<pr_description>\n", "\n</pr_description>"),
        ("<issue_description>\n", "\n</issue_description>"),
    ] {
        if let Some(a) = prompt.find(start) {
            let body = &prompt[a + start.len()..];
            return body.find(end).map(|b| &body[..b]).unwrap_or(body).trim().to_string();
        }
    }
    prompt.to_string()
}

/// Hashes prompt messages and encodes each step's prompt against the previous one.
#[derive(Default)]
struct PromptDedup {
    seen: HashMap<[u8; 16], Arc<str>>,
    previous: Vec<[u8; 16]>,
}

impl PromptDedup {
    fn delta(&mut self, messages: &[&RawValue]) -> QueryDelta {
        let hashes: Vec<[u8; 16]> = messages.iter().map(|m| hash16(m.get())).collect();
        let keep = hashes.iter().zip(&self.previous).take_while(|(a, b)| a == b).count();
        let append = messages[keep..]
            .iter()
            .zip(&hashes[keep..])
            .map(|(m, h)| QueryMessage {
                hash: *h,
                raw: self.seen.entry(*h).or_insert_with(|| Arc::from(m.get())).clone(),
            })
            .collect();
        self.previous = hashes;
        QueryDelta { keep, append }
    }
}

pub fn hash16(text: &str) -> [u8; 16] {
    let full = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&full.as_bytes()[..16]);
    out
}

/// A path relative to the working directory, made absolute so edits to one file agree.
pub fn resolve(path: &str, working_dir: Option<&str>) -> String {
    match working_dir {
        Some(wd) if !path.starts_with('/') => {
            let p = path.trim_start_matches("./");
            format!("{}/{}", wd.trim_end_matches('/'), p)
        }
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests;
