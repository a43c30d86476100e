//! How an ATIF step reads as trajan's model, shared by the reader (`ingest::atif`, which adds the
//! flags and edits) and the writer (`review::export::atif`, which writes under `extra.trajan`
//! what this reading would not give back).
//!
//! An agent step: the thought is its `reasoning_content` then its message; the action, each tool
//! call as text (its `command`, `cmd`, `keystrokes`, `code` or `script` argument, else its name
//! and its arguments as JSON), one per line; the tool, the first call's function; the arguments,
//! the only call's (several calls: a list of `{function_name, arguments}`); the observation, the
//! results' contents one per line (a subagent trajectory named by its path). Any other step is a
//! message of the history, its role the step's source.

use super::ext::KEY;
use super::{Content, ObservationResult, Step, ToolCall};
use crate::model::{self, Message};
use serde_json::{Map, Value};

/// One of several calls in a step's `args`.
#[derive(serde::Serialize)]
struct Call<'a> {
    arguments: &'a Value,
    function_name: &'a str,
}

/// The `extra.trajan` object of a root or a step (empty when absent).
pub fn ext(extra: Option<&Map<String, Value>>) -> Map<String, Value> {
    extra.and_then(|e| e.get(KEY)).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// An agent step as a trajan step (no flags: they depend on the reader), `extra.trajan` applied.
pub fn agent_step(s: &Step) -> model::Step {
    let calls: &[ToolCall] = s.tool_calls.as_deref().unwrap_or_default();
    let thought = [s.reasoning_content.clone().unwrap_or_default(), s.message.text()]
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let observation = s
        .observation
        .as_ref()
        .map(|o| o.results.iter().map(result_text).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default();
    let args = match calls {
        [] => None,
        [one] => Some(one.arguments.to_string()),
        // Written from the calls as they are (a copy of each as a JSON value would cost the
        // step's size again, twice): keys in the order a JSON object sorts them.
        many => serde_json::to_string(
            &many.iter().map(|c| Call { arguments: &c.arguments, function_name: &c.function_name }).collect::<Vec<_>>(),
        )
        .ok(),
    };
    let m = s.metrics.clone().unwrap_or_default();
    let mut step = model::Step {
        thought,
        action: calls.iter().map(call_text).collect::<Vec<_>>().join("\n"),
        observation,
        tool: calls.first().map(|c| c.function_name.clone()),
        args,
        tokens_in: m.prompt_tokens,
        tokens_out: m.completion_tokens,
        timestamp: s.timestamp.clone(),
        ..model::Step::default()
    };
    let e = ext(s.extra.as_ref());
    for (key, field) in
        [("thought", &mut step.thought), ("action", &mut step.action), ("observation", &mut step.observation)]
    {
        if let Some(v) = e.get(key).and_then(Value::as_str) {
            *field = v.to_string();
        }
    }
    set_text(&e, "response", &mut step.response);
    set_text(&e, "tool", &mut step.tool);
    set_text(&e, "args", &mut step.args);
    set_text(&e, "timestamp", &mut step.timestamp);
    set_text(&e, "open_file", &mut step.open_file);
    set_text(&e, "working_dir", &mut step.working_dir);
    set_amount(&e, "execution_time", &mut step.execution_time);
    set_count(&e, "tokens_in", &mut step.tokens_in);
    set_count(&e, "tokens_out", &mut step.tokens_out);
    if let Some(bits) = e.get("flags").and_then(Value::as_i64) {
        step.flags = model::StepFlags::from_bits(bits);
    }
    step
}

/// A system or user step as a message of the history (`extra.trajan` keeps another role).
pub fn message(s: &Step) -> Message {
    let e = ext(s.extra.as_ref());
    Message {
        role: e.get("role").and_then(Value::as_str).map_or_else(|| s.source.clone(), str::to_string),
        content: s.message.text(),
        extra: e.get("extra").and_then(Value::as_str).map(str::to_string),
    }
}

/// A tool call as the action text: its command-like argument, else its name and the file it
/// names, else its name and arguments.
pub fn call_text(c: &ToolCall) -> String {
    let decoded: Option<Value> = match &c.arguments {
        Value::String(s) => serde_json::from_str(s).ok(),
        _ => None,
    };
    let args = decoded.as_ref().unwrap_or(&c.arguments);
    if let Some(cmd) = ["command", "cmd", "keystrokes", "code", "script"].iter().find_map(|k| args.get(*k)?.as_str()) {
        // Terminus sends keystrokes ending in a newline (Enter): the command is the line.
        return cmd.strip_suffix('\n').unwrap_or(cmd).to_string();
    }
    // A file tool (`read_file`, `write_file`, `edit_file`): its name and the file; the whole
    // arguments are the step's `args`.
    let path = ["file_path", "path", "filePath", "filename", "file"].iter().find_map(|k| args.get(*k)?.as_str());
    match (args, path) {
        (_, Some(p)) if !p.trim().is_empty() && !p.contains('\n') => format!("{} {p}", c.function_name),
        (Value::Object(o), _) if o.is_empty() => c.function_name.clone(),
        (Value::Null, _) => c.function_name.clone(),
        (other, _) => format!("{} {other}", c.function_name),
    }
}

/// An observation result as text; a subagent trajectory is named.
pub fn result_text(r: &ObservationResult) -> String {
    let mut text = r.content.as_ref().map(Content::text).unwrap_or_default();
    for reference in r.subagent_trajectory_ref.iter().flatten() {
        let name = reference
            .trajectory_path
            .clone()
            .or_else(|| reference.trajectory_id.clone())
            .or_else(|| reference.session_id.clone())
            .unwrap_or_default();
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[subagent trajectory: {name}]"));
    }
    text
}

/// A present key overrides (a `null` clears); an absent key keeps the mapped value.
pub fn set_text(e: &Map<String, Value>, key: &str, field: &mut Option<String>) {
    if let Some(v) = e.get(key) {
        *field = v.as_str().map(str::to_string);
    }
}

pub fn set_i64(e: &Map<String, Value>, key: &str, field: &mut Option<i64>) {
    if let Some(v) = e.get(key) {
        *field = v.as_i64();
    }
}

/// A count (tokens, calls): a negative one is absent.
pub fn set_count(e: &Map<String, Value>, key: &str, field: &mut Option<i64>) {
    if let Some(v) = e.get(key) {
        *field = v.as_i64().filter(|&n| n >= 0);
    }
}

/// An amount (a cost, a duration): a negative one is absent.
pub fn set_amount(e: &Map<String, Value>, key: &str, field: &mut Option<f64>) {
    if let Some(v) = e.get(key) {
        *field = v.as_f64().filter(|&f| f >= 0.0);
    }
}
