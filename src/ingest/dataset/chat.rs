//! A dataset row's conversation of tool calls, read as the ATIF reader reads a trajectory: each
//! assistant message an agent step (its calls the action, their edits read by what the
//! arguments do), each tool answer the observation of the call it names, system and user
//! messages the history. Two dialects come in:
//! - OpenAI chat messages (`role`, `content` as text or parts, `tool_calls` with `arguments` as
//!   a JSON string; answers `role: "tool"` naming `tool_call_id`, or SWE-agent's
//!   `tool_call_ids` list): SWE-rebench's OpenHands runs, SWE-smith's `tool` split;
//! - SWE-agent's XML function calls written in the reply's text (`<function=bash>` then
//!   `<parameter=command>...</parameter>` and `</function>`), answered by the next `user`
//!   message: SWE-smith's `xml` split ([`xml_calls`]).

use crate::atif::{self, Agent, Content, Observation, ObservationResult, ToolCall, Trajectory};
use crate::ingest::atif::{Context, run_of};
use crate::model::{Run, flatten_content};
use serde_json::{Map, Value};
use std::path::Path;

/// How the conversation writes its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// `tool_calls` on assistant messages.
    Native,
    /// `<function=...>` blocks in the assistant's text.
    Xml,
}

/// Who ran a conversation and what it submitted.
pub struct Header<'a> {
    pub instance_id: &'a str,
    pub agent: &'a str,
    pub model: Option<&'a str>,
    pub submission: Option<&'a str>,
}

/// The run a conversation describes, its submission its final patch (no verdict or metadata).
pub fn run(shard: &Path, head: &Header<'_>, messages: &[Value], calls: Calls) -> Run {
    let t = Trajectory {
        agent: Agent { name: head.agent.to_string(), model_name: head.model.map(str::to_string), ..Agent::default() },
        steps: steps(messages, calls),
        ..Trajectory::default()
    };
    let ctx = Context {
        instance_id: Some(head.instance_id.to_string()),
        submission: head.submission.map(str::to_string),
        ..Context::default()
    };
    let (run, _) = run_of(shard, &t, &ctx, &mut Vec::new());
    run
}

fn steps(messages: &[Value], calls: Calls) -> Vec<atif::Step> {
    let mut out: Vec<atif::Step> = Vec::with_capacity(messages.len());
    // The agent step whose calls wait for answers, if any.
    let mut waiting: Option<usize> = None;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let text = flatten_content(m.get("content"));
        match role {
            "assistant" => {
                let (thought, tool_calls) = match calls {
                    Calls::Native => (text, native_calls(m, i)),
                    Calls::Xml => xml_calls(&text, i),
                };
                waiting = (!tool_calls.is_empty()).then_some(out.len());
                out.push(atif::Step {
                    source: "agent".into(),
                    message: Content::Text(thought),
                    tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
                    ..atif::Step::default()
                });
            }
            "tool" => {
                let ids: Vec<String> = match m.get("tool_call_id").and_then(Value::as_str) {
                    Some(id) => vec![id.to_string()],
                    None => m
                        .get("tool_call_ids")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                        .unwrap_or_default(),
                };
                // The step that made the call, else the one waiting.
                let target = out
                    .iter()
                    .rposition(|s| s.tool_calls.iter().flatten().any(|c| ids.contains(&c.tool_call_id)))
                    .or(waiting)
                    .or_else(|| out.iter().rposition(atif::Step::is_agent));
                match target.and_then(|t| out.get_mut(t)) {
                    Some(step) => answer(step, ids.into_iter().next(), text),
                    None => out.push(message("user", text)),
                }
            }
            "user" if calls == Calls::Xml && waiting.is_some() => {
                if let Some(step) = waiting.take().and_then(|t| out.get_mut(t)) {
                    let id = step.tool_calls.iter().flatten().next().map(|c| c.tool_call_id.clone());
                    answer(step, id, text);
                }
            }
            "system" | "user" => {
                waiting = None;
                out.push(message(role, text));
            }
            _ => out.push(message("user", text)),
        }
    }
    out
}

fn message(source: &str, text: String) -> atif::Step {
    atif::Step { source: source.into(), message: Content::Text(text), ..atif::Step::default() }
}

fn answer(step: &mut atif::Step, id: Option<String>, text: String) {
    let results = &mut step.observation.get_or_insert_with(Observation::default).results;
    results.push(ObservationResult {
        source_call_id: id,
        content: Some(Content::Text(text)),
        ..ObservationResult::default()
    });
}

/// An assistant message's `tool_calls` (`{id, type, function: {name, arguments}}`), the
/// arguments read from their JSON string (kept as the string when they are not JSON).
fn native_calls(m: &Value, i: usize) -> Vec<ToolCall> {
    let Some(list) = m.get("tool_calls").and_then(Value::as_array) else { return Vec::new() };
    list.iter()
        .enumerate()
        .map(|(k, c)| {
            let f = c.get("function").unwrap_or(&Value::Null);
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
                Some(v) if !v.is_null() => v.clone(),
                _ => Value::Object(Map::new()),
            };
            ToolCall {
                tool_call_id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("call_{i}_{k}"), str::to_string),
                function_name: f.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                arguments,
                extra: None,
            }
        })
        .collect()
}

/// SWE-agent's XML function calls in a reply: the text before the first `<function=` is the
/// thought; each `<function=NAME>` block up to `</function>` a call whose arguments are its
/// `<parameter=KEY>VALUE</parameter>` pairs (one newline around a value, as SWE-smith writes
/// `old_str`, `new_str` and `file_text`, is not part of it). A block never closed ends at the
/// reply's end.
pub fn xml_calls(reply: &str, i: usize) -> (String, Vec<ToolCall>) {
    let Some(first) = reply.find("<function=") else { return (reply.trim().to_string(), Vec::new()) };
    let thought = reply[..first].trim().to_string();
    let mut calls = Vec::new();
    for (k, block) in reply[first..].split("<function=").skip(1).enumerate() {
        let Some(close) = block.find('>') else { continue };
        let name = block[..close].trim().to_string();
        let body = &block[close + 1..];
        let body = body.find("</function>").map_or(body, |e| &body[..e]);
        let mut args = Map::new();
        for p in body.split("<parameter=").skip(1) {
            let Some(close) = p.find('>') else { continue };
            let key = p[..close].trim().to_string();
            let value = &p[close + 1..];
            let value = value.find("</parameter>").map_or(value, |e| &value[..e]);
            let value = value.strip_prefix('\n').unwrap_or(value);
            let value = value.strip_suffix('\n').unwrap_or(value);
            args.insert(key, Value::String(value.to_string()));
        }
        calls.push(ToolCall {
            tool_call_id: format!("call_{i}_{k}"),
            function_name: name,
            arguments: Value::Object(args),
            extra: None,
        });
    }
    (thought, calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_calls_are_read_with_their_parameters() {
        let reply = "Let me fix it.\n\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/a.py</parameter>\n<parameter=old_str>\nx = 1\n</parameter>\n<parameter=new_str>\nx = 2\n</parameter>\n</function>";
        let (thought, calls) = xml_calls(reply, 3);
        assert_eq!(thought, "Let me fix it.");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].function_name, "str_replace_editor");
        assert_eq!(calls[0].arguments["old_str"], "x = 1");
        assert_eq!(calls[0].arguments["new_str"], "x = 2");
        assert_eq!(calls[0].arguments["command"], "str_replace");
        let (_, calls) = xml_calls("\n\n<function=submit>\n</function>", 0);
        assert_eq!(
            (calls[0].function_name.as_str(), calls[0].arguments.as_object().map(Map::len)),
            ("submit", Some(0))
        );
        assert!(xml_calls("no call", 0).1.is_empty());
    }
}
