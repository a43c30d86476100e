//! SWE-bench/SWE-smith-trajectories: one row per SWE-agent run on a SWE-smith task, in three
//! splits that write the same runs three ways. `messages` is the conversation as a JSON
//! string: in `tool`, SWE-agent's own history (`content` a string for the system prompt, a list
//! of text parts otherwise; assistant messages with `thought`, `action` and `tool_calls`;
//! answers `role: "tool"` naming `tool_call_ids`); in `xml`, plain `{role, content}` with the
//! calls written as `<function=...>` text and answers as `user` messages; in `ticks`, the same
//! with the action in a fenced block (SWE-agent's thought-action format). The dialect is told
//! from the messages, not the split's name. `resolved` is the verdict, `patch` the submission,
//! `model` the model, `traj_id` the run's id.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, kind_of, optional_str, required_str, verdict};
use crate::analysis::edits;
use crate::ingest::swe_agent::chat::{self as swe_chat, ChatTurn};
use crate::model::{Message, Run, flatten_content};
use serde_json::{Map, Value};
use std::path::Path;

/// The dialect of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Tool,
    Xml,
    Ticks,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Tool => "tool",
            Dialect::Xml => "xml",
            Dialect::Ticks => "ticks",
        }
    }
}

/// The dialect the assistant messages write their calls in: `tool_calls` (tool), `<function=`
/// (xml), else fenced blocks (ticks).
pub fn dialect(messages: &[Value]) -> Dialect {
    let assistant = || messages.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    if assistant().any(|m| m.get("tool_calls").is_some_and(|c| c.as_array().is_some_and(|a| !a.is_empty())))
        || messages.iter().any(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
    {
        Dialect::Tool
    } else if assistant().any(|m| flatten_content(m.get("content")).contains("<function=")) {
        Dialect::Xml
    } else {
        Dialect::Ticks
    }
}

pub fn row(shard: &Path, row: &Value, split: Option<&str>) -> Result<RowRun, RowError> {
    let instance_id = required_str(row, "instance_id")?.to_string();
    let raw = required_str(row, "messages")?;
    let messages: Vec<Value> = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Array(items)) if items.is_empty() => {
            return Err(RowError::new("messages", "an empty list: no message"));
        }
        Ok(Value::Array(items)) => items,
        Ok(other) => {
            return Err(RowError::new(
                "messages",
                format!("expected a JSON list of messages, found {}", kind_of(&other)),
            ));
        }
        Err(e) => return Err(RowError::new("messages", format!("not JSON: {e}"))),
    };
    if let Some((i, m)) = messages.iter().enumerate().find(|(_, m)| !m.is_object()) {
        return Err(RowError::new(&format!("messages[{i}]"), format!("expected a message, found {}", kind_of(m))));
    }
    let resolved = verdict(row, "resolved")?;
    let model = optional_str(row, "model")?.filter(|m| !m.trim().is_empty()).map(str::to_string);
    let patch = optional_str(row, "patch")?.filter(|p| !p.trim().is_empty()).map(str::to_string);
    let dialect = dialect(&messages);
    let head = chat::Header {
        instance_id: &instance_id,
        agent: "swe-agent",
        model: model.as_deref(),
        submission: patch.as_deref(),
    };
    let mut run = match dialect {
        Dialect::Tool => chat::run(shard, &head, &messages, Calls::Native),
        Dialect::Xml => chat::run(shard, &head, &messages, Calls::Xml),
        Dialect::Ticks => ticks(&head, &messages),
    };
    run.agent = Some("swe-agent".into());
    run.format_version = Some(dialect.name().into());
    run.model = model;
    let mut extra = Map::new();
    extra.insert("dialect".into(), dialect.name().into());
    if let Some(id) = row.get("traj_id").filter(|v| !v.is_null()) {
        extra.insert("traj_id".into(), id.clone());
    }
    if split.is_some_and(|s| s != dialect.name()) {
        extra.insert("split_differs".into(), true.into());
    }
    Ok(RowRun { run, resolved, log: None, extra, ..RowRun::default() })
}

/// A `ticks` conversation: the system prompt and task are the history; each assistant reply
/// (thought, then the action in a fenced block) answered by the next user message.
fn ticks(head: &chat::Header<'_>, messages: &[Value]) -> Run {
    let mut history = Vec::new();
    let mut turns: Vec<ChatTurn> = Vec::new();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let text = flatten_content(m.get("content"));
        match (role, turns.last_mut()) {
            ("assistant", _) => turns.push(ChatTurn { reply: text, ..ChatTurn::default() }),
            ("user" | "tool", Some(t)) => {
                if !t.observation.is_empty() {
                    t.observation.push('\n');
                }
                t.observation.push_str(&text);
            }
            (role, _) => history.push(Message { role: role.to_string(), content: text, extra: None }),
        }
    }
    let mut run = Run {
        instance_id: head.instance_id.to_string(),
        model: head.model.map(str::to_string),
        submission: head.submission.map(str::to_string),
        history,
        ..Run::default()
    };
    if let Some(p) = head.submission {
        run.edits.extend(edits::final_patch_edits(p));
    }
    swe_chat::build(&mut run, turns);
    run
}
