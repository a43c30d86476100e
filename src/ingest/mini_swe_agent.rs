//! mini-swe-agent trajectories (`trajectory_format` "mini-swe-agent-1" and "mini-swe-agent-1.1").
//!
//! v1: hand-formatted messages. A step is one assistant message (a THOUGHT and one ```bash block)
//! plus the user message that answers it (`<returncode>N</returncode>` and the output).
//! v2 ("mini-swe-agent-1.1"): the model's native messages with an added `extra` (`actions`,
//! `returncode`, `timestamp`, `cost`); tool-call models answer with `role: "tool"` messages; the
//! run ends with a `role: "exit"` message whose `extra` holds `exit_status` and `submission`.
//! Before `trajectory_format` existed (before July 2025) runs were saved as a bare JSON list of
//! those messages, with no `info`: see [`bare_list_end`].
//!
//! The document is read a message at a time ([`doc`]), from memory or, for `trajan FILE`, from
//! disk.

mod doc;
#[cfg(test)]
mod tests;

pub(crate) use doc::MiniDoc;

use crate::analysis::markers;
use crate::analysis::reconstruct::Exec;
use crate::error::IngestError;
use crate::ingest::file_name::instance_from_file_name;
use crate::ingest::json::{at, content_text, f64_field, i64_field, maybe_nested_json, str_field};
use crate::ingest::stream_doc::ReadError;
use crate::model::{EditStatus, Parsed, Step, StepFlags};
use serde_json::Value;
use std::path::Path;

/// Action fences: v1 (and v2 configs that keep it) and the v2 default.
const FENCES: [&str; 2] = ["mswea_bash_command", "bash"];

/// Replies that mean "your message had no (or several) actions".
const FORMAT_ERROR_MARKERS: &[&str] = &["EXACTLY ONE action", "Format error", "Tool call error", "No tool calls found"];

/// Parse a whole file: the document is read as [`doc::MiniDoc`] reads it from disk, its steps
/// collected in memory.
pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    if text.trim_start().starts_with('[') && calls_tools(text) {
        let why = "a list of chat messages with tool calls: an LLM conversation, not a mini-swe-agent run \
                   (its lists of before `trajectory_format` hold no tool calls)";
        return Ok(Parsed { nothing: Some(why.into()), ..Parsed::default() });
    }
    doc::parse_text(path, text).map_err(|e| match e {
        ReadError::Invalid(e) => e,
        ReadError::Stopped | ReadError::Whole(_) => IngestError::shape(path, "mini-swe-agent: unexpected layout"),
    })
}

/// A bare list of messages some of which call tools (`tool_calls`, `role: "tool"`).
fn calls_tools(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Msg {
        role: Option<String>,
        tool_calls: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Vec<Msg>>(text)
        .is_ok_and(|list| list.iter().any(|m| m.tool_calls.is_some() || m.role.as_deref() == Some("tool")))
}

/// How a bare message list ended, when it says: mini-swe-agent ended a run when the output of a
/// command began with its final-output marker (`echo MINI_SWE_AGENT_FINAL_OUTPUT && git diff`;
/// `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` later), raising `Submitted` with the rest of the output
/// as the submission, and added that text as the last message. `Some(submission)` when the last
/// turn ran such a command and got its answer (`Some(None)`: an empty submission); `None` when
/// the list ends otherwise (the exit status is then unknown: the file does not say).
fn bare_list_end(last: &Turn) -> Option<Option<String>> {
    let command = last.actions.first()?;
    let marker = command.trim_start().strip_prefix("echo ")?.split_whitespace().next()?;
    if !marker.ends_with("_FINAL_OUTPUT") {
        return None;
    }
    let reply = last.replies.last()?;
    Some(Some(content_text(reply.get("content"))).filter(|s| !s.trim().is_empty()))
}

/// The instance of a bare message list: its file name (`<instance>.traj.json`, as batch runs
/// named them); the single-run `traj.json`, a name that names no instance, takes its folder's.
fn bare_instance_id(path: &Path) -> String {
    let stem = instance_from_file_name(path);
    if stem != "traj" {
        return stem;
    }
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or(stem)
}

/// How many messages of a list cut mid-write to keep (see `ingest::truncated`): all of them,
/// unless the last assistant message did not get all its replies (one, or one per tool call):
/// that turn's action would stand without its observation, so it goes with its partial replies.
pub(crate) fn complete_messages(messages: &[&str]) -> usize {
    let mut replies = 0;
    for (i, raw) in messages.iter().enumerate().rev() {
        let Ok(m) = serde_json::from_str::<Value>(raw) else { continue };
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let calls = m.get("tool_calls").and_then(Value::as_array).map_or(0, Vec::len);
                return if replies >= calls.max(1) { messages.len() } else { i };
            }
            Some("user" | "tool" | "exit") => replies += 1,
            _ => {}
        }
    }
    messages.len()
}

/// A turn's step read out of order (`stream_doc::index`): its assistant message, the replies
/// that follow it, and, for the last turn, the exit message (which answers a v2 submission). Built
/// with the run's final submission, so its flags are those a read to the end leaves (the
/// document's [`doc`] applies the same submission later, as a `Fixup`, when `info` comes after
/// the messages).
pub(crate) fn turn_step(
    assistant: &Value,
    replies: Vec<Value>,
    exit: Option<&Value>,
    submission: Option<&str>,
) -> Step {
    let mut turn = Turn::new(assistant);
    turn.replies = replies;
    let Built { mut step, .. } = turn.into_step(submission);
    if let Some(m) = exit
        && step.observation.is_empty()
    {
        step.observation = content_text(m.get("content"));
    }
    step
}

/// An assistant message and the messages that answered it.
struct Turn {
    content: String,
    /// The commands the message asked to run.
    actions: Vec<String>,
    /// Where the first fenced block starts, for text-style actions.
    fence_at: Option<usize>,
    tool_style: bool,
    tokens_in: Option<i64>,
    tokens_out: Option<i64>,
    cost: Option<f64>,
    timestamp: Option<String>,
    model: Option<String>,
    replies: Vec<Value>,
}

/// A step built from a turn, how its action ran, and whether its error flag was decided by
/// the submission (an observation that looks like an error is not one when it is the submitted
/// patch).
struct Built {
    step: Step,
    how: Exec,
    by_submission: bool,
}

impl Turn {
    fn new(m: &Value) -> Turn {
        let content = content_text(m.get("content"));
        let extra = m.get("extra").unwrap_or(&Value::Null);
        let blocks = fenced_blocks(&content);
        let fence_at = blocks.first().map(|(at, _)| *at);
        let tool_calls = m.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty());
        let listed: Vec<String> = extra
            .get("actions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| str_field(x, "command")).collect())
            .unwrap_or_default();
        let actions = if !listed.is_empty() {
            listed
        } else if let Some(calls) = tool_calls {
            calls.iter().filter_map(tool_call_command).collect()
        } else {
            blocks.into_iter().map(|(_, b)| b).collect()
        };
        let usage = at(extra, &["response", "usage"]).or_else(|| m.get("usage")).unwrap_or(&Value::Null);
        Turn {
            content,
            actions,
            fence_at,
            tool_style: tool_calls.is_some(),
            tokens_in: i64_field(usage, "prompt_tokens"),
            tokens_out: i64_field(usage, "completion_tokens"),
            cost: f64_field(extra, "cost"),
            timestamp: timestamp_of(extra),
            model: at(extra, &["response", "model"]).and_then(Value::as_str).map(str::to_string),
            replies: Vec::new(),
        }
    }

    /// The step, how its action ran (the shell, whose writes are applied when every command it
    /// ran returned 0), and whether the submission decided its error flag.
    fn into_step(self, submission: Option<&str>) -> Built {
        let observation = self.replies.iter().map(|r| content_text(r.get("content"))).collect::<Vec<_>>().join("\n");
        let returncodes: Vec<i64> = self.replies.iter().filter_map(returncode_of).collect();
        let format_reply = self.replies.iter().any(is_format_error_reply);
        let bad_count = if self.tool_style { self.actions.is_empty() } else { self.actions.len() != 1 };
        let format_error = format_reply && bad_count;
        // A message with no or several blocks was not executed: its "action" ran nothing.
        let action = if format_error { String::new() } else { self.actions.join("\n") };
        let thought = thought_of(&self.content, if self.tool_style { None } else { self.fence_at });
        let response =
            (self.actions.is_empty() || format_error).then(|| self.content.clone()).filter(|c| c.trim() != thought);

        let is_submission = submission.is_some_and(|s| !s.trim().is_empty() && observation.trim() == s.trim());
        let exception = self
            .replies
            .iter()
            .any(|r| at(r, &["extra", "exception_info"]).and_then(Value::as_str).is_some_and(|s| !s.is_empty()));
        let timed_out = observation.contains("timed out and has been killed");
        let by_submission = returncodes.is_empty()
            && !exception
            && !timed_out
            && !format_error
            && !observation.is_empty()
            && markers::looks_like_error(&observation);
        let error = if !returncodes.is_empty() {
            returncodes.iter().any(|c| *c != 0)
        } else {
            exception || timed_out || (by_submission && !is_submission)
        };
        let flags = StepFlags {
            error: error || exception || timed_out,
            output_clipped: markers::output_clipped(&observation),
            test_run: markers::runs_tests(&action),
            format_error,
            ..StepFlags::default()
        };

        let status = if !returncodes.is_empty() && returncodes.iter().all(|c| *c == 0) {
            EditStatus::Applied
        } else {
            EditStatus::Unknown
        };
        let how = if action.trim().is_empty() { Exec::Tool } else { Exec::Shell(status) };
        let step = Step {
            thought,
            action,
            observation,
            response,
            tool: Some("bash".to_string()),
            args: None,
            tokens_in: self.tokens_in,
            tokens_out: self.tokens_out,
            timestamp: self.timestamp,
            flags,
            ..Step::default()
        };
        Built { step, how, by_submission }
    }
}

/// The `command` argument of a tool call (`function.arguments` is JSON inside a string).
fn tool_call_command(call: &Value) -> Option<String> {
    let args = maybe_nested_json(at(call, &["function", "arguments"])?);
    str_field(&args, "command")
}

/// The reasoning before the action block, without a leading "THOUGHT:".
fn thought_of(content: &str, fence_at: Option<usize>) -> String {
    let head = fence_at.and_then(|i| content.get(..i)).unwrap_or(content).trim();
    head.strip_prefix("THOUGHT:").unwrap_or(head).trim().to_string()
}

/// The bodies of ```bash / ```mswea_bash_command blocks, with where each block starts. Mirrors
/// mini-swe-agent's `` ```bash\s*\n(.*?)\n``` `` (DOTALL), bodies trimmed.
fn fenced_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = text.get(from..).and_then(|t| t.find("```")) {
        let start = from + rel;
        let after_ticks = start + 3;
        from = after_ticks;
        let rest = &text[after_ticks..];
        let Some(lang) = FENCES.iter().find(|l| rest.starts_with(**l)) else {
            continue;
        };
        let after_lang = &rest[lang.len()..];
        let ws = &after_lang[..after_lang.len() - after_lang.trim_start().len()];
        let Some(nl) = ws.rfind('\n') else {
            continue;
        };
        // The newline that ends the opening line may also begin the closing fence (empty body).
        let newline_at = after_ticks + lang.len() + nl;
        let Some(close_rel) = text[newline_at..].find("\n```") else {
            break;
        };
        let close = newline_at + close_rel;
        let body = text.get(newline_at + 1..close).unwrap_or("").trim().to_string();
        out.push((start, body));
        from = close + 4;
    }
    out
}

/// The return code of an observation message: `extra.returncode` (v2), `<returncode>N</returncode>`
/// at the start (v1), or a trailing `[exit code N]`.
fn returncode_of(reply: &Value) -> Option<i64> {
    if let Some(c) = at(reply, &["extra", "returncode"]).and_then(Value::as_i64) {
        return Some(c);
    }
    let text = content_text(reply.get("content"));
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("<returncode>") {
        let end = rest.find("</returncode>")?;
        return rest[..end].trim().parse().ok();
    }
    let last = t.lines().last()?.trim();
    last.strip_prefix("[exit code ")?.strip_suffix(']')?.trim().parse().ok()
}

fn is_format_error_reply(reply: &Value) -> bool {
    if at(reply, &["extra", "interrupt_type"]).and_then(Value::as_str) == Some("FormatError") {
        return true;
    }
    let text = content_text(reply.get("content"));
    let head = text.get(..text.len().min(400)).unwrap_or(&text);
    FORMAT_ERROR_MARKERS.iter().any(|m| head.contains(m))
}

/// `extra.timestamp`: epoch seconds (v2) as an ISO time without zone (UTC), or a string as is.
fn timestamp_of(extra: &Value) -> Option<String> {
    match extra.get("timestamp")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => epoch_to_iso(n.as_f64()?),
        _ => None,
    }
}

fn epoch_to_iso(secs: f64) -> Option<String> {
    if !secs.is_finite() || !(0.0..1e11).contains(&secs) {
        return None;
    }
    let nanos = (secs * 1e6).round() as i128 * 1_000;
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()?;
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]");
    at.format(format).ok()
}

/// A running sum of token counts from the file: saturating rather than overflowing; `None`
/// until a count is seen.
fn add_i64(sum: Option<i64>, value: Option<i64>) -> Option<i64> {
    match value {
        Some(v) => Some(sum.unwrap_or(0i64).saturating_add(v)),
        None => sum,
    }
}

fn add_f64(sum: Option<f64>, value: Option<f64>) -> Option<f64> {
    match value {
        Some(v) => Some(sum.unwrap_or(0.0) + v),
        None => sum,
    }
}
