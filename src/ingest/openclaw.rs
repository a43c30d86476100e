//! OpenClaw session JSONL (the agent-native log of the OpenClaw agent under Harbor:
//! `agent/openclaw-sessions/<session uuid>.jsonl`): one record per line, a tree through
//! `parentId`, opened by a `session` header (`version`, the session id, `cwd`).
//!
//! The run is the branch that ends at the last message, followed back to the root. An assistant
//! message's thinking and text are the thought of its tool calls (or a reply step when it calls
//! none); a `toolResult` message answers a call by `toolCallId`. `exec` is a shell command, `read`
//! a view, `write` a whole-file write and `edit` replacements (`oldText`, `newText`) with their
//! diffs. Tokens and cost are summed over the assistant messages (a cost of 0 is no cost
//! reported). No instance id and no verdict: beside a Harbor trial's ATIF trajectory the session
//! is the trial's raw log, not a second run (`ingest::harbor`); a trial without a trajectory
//! reads its run from the session.

use crate::error::IngestError;
use crate::ingest::json::{compact, content_text, f64_field, for_each_jsonl_line, i64_field, nonempty_str, str_field};
use crate::ingest::turns::{Pending, Ran, Turns, add, said_status};
use crate::model::{Format, Message, Parsed, Run, Step, Task};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let (run, task, warnings) = read(path, text)?;
    Ok(Parsed { runs: vec![run], tasks: task.into_iter().collect(), warnings, ..Parsed::default() })
}

/// The sessions a Harbor trial's `agent/` folder holds: `openclaw-sessions/*.jsonl` (not the
/// `.checkpoint.` prefix copies), else the `openclaw-session.jsonl` copy.
pub fn sessions_in(agent: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(agent.join("openclaw-sessions"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    name.ends_with(".jsonl") && !name.contains(".checkpoint.") && !name.starts_with('.')
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    if found.is_empty() && agent.join("openclaw-session.jsonl").is_file() {
        found.push(agent.join("openclaw-session.jsonl"));
    }
    found
}

/// The run of a session (its instance the session id), its task, and the warnings of its lines.
pub fn read(path: &Path, text: &str) -> Result<(Run, Option<Task>, Vec<String>), IngestError> {
    // First the branch, from each line's head alone; then each line read whole, one at a time.
    let heads: Vec<Option<Head>> = text.lines().map(|l| serde_json::from_str(l).ok()).collect();
    let on_branch = branch(&heads);
    let mut warnings = Vec::new();
    let mut s = Session::default();
    for_each_jsonl_line(path, text, &mut warnings, |line, r| {
        match r.get("type").and_then(Value::as_str) {
            Some("session") => {
                s.id = nonempty_str(&r, "id");
                s.version = r.get("version").map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
                s.cwd = nonempty_str(&r, "cwd");
            }
            Some("model_change") => {
                let model: Vec<String> =
                    [nonempty_str(&r, "provider"), nonempty_str(&r, "modelId")].into_iter().flatten().collect();
                if !model.is_empty() {
                    s.model = Some(model.join("/"));
                }
            }
            Some("message") if on_branch.contains(&(line - 1)) => s.message(&r),
            _ => {}
        }
        Ok(())
    })?;
    let (run, task) = s.finish(path);
    Ok((run, task, warnings))
}

/// What the tree is made of: a record's type, id and parent.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "parentId")]
    parent: Option<Cow<'a, str>>,
}

/// The lines (0-based) of the messages of the branch that ends at the last message.
fn branch(heads: &[Option<Head>]) -> HashSet<usize> {
    let by_id: HashMap<&str, usize> =
        heads.iter().enumerate().filter_map(|(i, h)| Some((h.as_ref()?.id.as_deref()?, i))).collect();
    let is_message = |i: usize| heads[i].as_ref().is_some_and(|h| h.kind.as_deref() == Some("message"));
    let mut seen = HashSet::new();
    let mut next = (0..heads.len()).rev().find(|i| is_message(*i));
    while let Some(i) = next {
        if !seen.insert(i) {
            break;
        }
        next = heads[i].as_ref().and_then(|h| h.parent.as_deref()).and_then(|p| by_id.get(p).copied());
    }
    seen.retain(|i| is_message(*i));
    seen
}

struct Call {
    name: String,
    args: Value,
    thought: String,
    tokens: (Option<i64>, Option<i64>),
    timestamp: Option<String>,
}

#[derive(Default)]
struct Session {
    id: Option<String>,
    version: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    task: Option<String>,
    history: Vec<Message>,
    turns: Turns,
    pending: Pending<Call>,
    sent: Option<i64>,
    received: Option<i64>,
    cost: Option<f64>,
    stop: Option<String>,
}

impl Session {
    fn message(&mut self, r: &Value) {
        let m = r.get("message").unwrap_or(&Value::Null);
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => self.assistant(r, m),
            Some("toolResult") => {
                let id = str_field(m, "toolCallId").unwrap_or_default();
                let call = match self.pending.take(&id) {
                    Some(call) => call,
                    None => Call {
                        name: str_field(m, "toolName").unwrap_or_default(),
                        args: Value::Null,
                        thought: String::new(),
                        tokens: (None, None),
                        timestamp: str_field(r, "timestamp"),
                    },
                };
                let error = m.get("isError").and_then(Value::as_bool);
                self.step(call, content_text(m.get("content")), error);
            }
            _ => {
                let text = content_text(m.get("content"));
                if self.task.is_none() && !text.trim().is_empty() {
                    self.task = Some(text.clone());
                }
                self.history.push(Message { role: "user".into(), content: text, extra: None });
            }
        }
    }

    fn assistant(&mut self, r: &Value, m: &Value) {
        if let Some(model) = nonempty_str(m, "model") {
            let provider = nonempty_str(m, "provider").map(|p| format!("{p}/")).unwrap_or_default();
            self.model = Some(format!("{provider}{model}"));
        }
        self.stop = nonempty_str(m, "stopReason");
        let usage = m.get("usage").unwrap_or(&Value::Null);
        let tokens = (i64_field(usage, "input"), i64_field(usage, "output"));
        self.sent = add(self.sent, tokens.0);
        self.received = add(self.received, tokens.1);
        self.cost = add(self.cost, usage.get("cost").and_then(|c| f64_field(c, "total")));
        let parts: Vec<&Value> = m.get("content").and_then(Value::as_array).into_iter().flatten().collect();
        let thought: Vec<String> = parts
            .iter()
            .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                Some("thinking") => nonempty_str(p, "thinking"),
                Some("text") => nonempty_str(p, "text"),
                _ => None,
            })
            .collect();
        let calls: Vec<&&Value> =
            parts.iter().filter(|p| p.get("type").and_then(Value::as_str) == Some("toolCall")).collect();
        if calls.is_empty() {
            let step = Step {
                thought: thought.join("\n\n"),
                action: "message".into(),
                tool: Some("message".into()),
                tokens_in: tokens.0,
                tokens_out: tokens.1,
                timestamp: str_field(r, "timestamp"),
                ..Step::default()
            };
            self.turns.plain(step);
            return;
        }
        let mut thought = thought.join("\n\n");
        let mut tokens = tokens;
        for c in calls {
            self.pending.push(
                str_field(c, "id").unwrap_or_default(),
                Call {
                    name: str_field(c, "name").unwrap_or_default(),
                    args: crate::ingest::json::maybe_nested_json(c.get("arguments").unwrap_or(&Value::Null)),
                    thought: std::mem::take(&mut thought),
                    tokens: std::mem::take(&mut tokens),
                    timestamp: str_field(r, "timestamp"),
                },
            );
        }
    }

    fn step(&mut self, call: Call, output: String, error: Option<bool>) {
        let args = &call.args;
        let s = |k: &str| str_field(args, k).unwrap_or_default();
        let action = match call.name.as_str() {
            "exec" => s("command"),
            "read" => format!("view {}", s("path")),
            "write" | "edit" => format!("{} {}", call.name, s("path")),
            name => format!("{name} {}", compact(Some(args)).unwrap_or_default()),
        };
        let answered = !output.is_empty() || error.is_some();
        let step = Step {
            thought: call.thought,
            action: action.trim().to_string(),
            observation: output,
            tool: Some(call.name.clone()),
            args: compact(Some(args)),
            tokens_in: call.tokens.0,
            tokens_out: call.tokens.1,
            timestamp: call.timestamp,
            working_dir: self.cwd.clone(),
            ..Step::default()
        };
        let ran = if call.name == "exec" {
            Ran::Shell(error.map(i64::from))
        } else {
            Ran::Tool(error.or(answered.then_some(false)))
        };
        // `write`, `edit` (a list of `oldText`/`newText`) and any other call that edits.
        self.turns.call(step, ran, args, said_status(error, answered));
    }

    fn finish(mut self, path: &Path) -> (Run, Option<Task>) {
        for call in self.pending.drain() {
            self.step(call, String::new(), None);
        }
        let instance_id = self.id.clone().unwrap_or_else(|| crate::ingest::file_name::instance_from_file_name(path));
        let exit = match self.stop.as_deref() {
            Some("stop") => "finished",
            Some("error") => "error",
            _ => "stopped",
        };
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::OpenClaw),
            format_version: self.version,
            agent: Some("openclaw".into()),
            model: self.model,
            exit_status: Some(exit.into()),
            cost: self.cost.filter(|c| *c > 0.0),
            tokens_sent: self.sent,
            tokens_received: self.received,
            history: self.history,
            ..Run::default()
        };
        self.turns.into_run(&mut run);
        let task = self.task.map(|t| Task { instance_id, instruction: Some(t), ..Task::default() });
        (run, task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 42: 50,000 calls made at once behind one never answered, answered last first: each
    /// answer searched the calls from the front (1.25 x 10^9 comparisons); by id it is one look-up.
    /// Same steps: each answered call with its result, the lost one at the end with none.
    #[test]
    fn answers_in_any_order_behind_a_lost_call_find_their_call_by_id() {
        const N: usize = 50_000;
        let call = |id: &str| json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": id}});
        let calls: Vec<Value> =
            std::iter::once(call("lost")).chain((0..N).map(|i| call(&format!("toolu_{i:026}")))).collect();
        let mut lines = vec![
            json!({"type": "session", "version": 3, "id": "sess-1", "cwd": "/w"}),
            json!({"type": "message", "id": "m0", "parentId": null, "message": {"role": "user", "content": "read them"}}),
            json!({"type": "message", "id": "m1", "parentId": "m0", "message": {"role": "assistant", "content": calls}}),
        ];
        let mut parent = "m1".to_string();
        for i in (0..N).rev() {
            let id = format!("r{i}");
            lines.push(json!({"type": "message", "id": id, "parentId": parent, "message": {
                "role": "toolResult", "toolCallId": format!("toolu_{i:026}"), "content": format!("text {i}")}}));
            parent = id;
        }
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        let p = parse(Path::new("sess-1.jsonl"), &text.join("\n")).unwrap_or_else(|e| panic!("{e}"));
        let run = &p.runs[0];
        assert_eq!(run.steps.len(), N + 1);
        assert!(run.steps.iter().take(N).enumerate().all(|(k, s)| {
            let i = N - 1 - k;
            s.action == format!("view toolu_{i:026}") && s.observation == format!("text {i}")
        }));
        assert_eq!((run.steps[N].action.as_str(), run.steps[N].observation.as_str()), ("view lost", ""));
    }
}
