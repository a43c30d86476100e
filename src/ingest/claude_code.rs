//! Claude Code session transcripts (`~/.claude/projects/<project>/<session-id>.jsonl`, Claude Code
//! 2.x): one JSON record per line, one session per file, one run.
//!
//! Conversation records (`user`, `assistant`, `system`) form a thread through `parentUuid`: the
//! run is the thread that ends at the last main-thread record, followed back to its root, not the
//! line order (a resumed or forked session leaves abandoned branches). Sub-agent turns
//! (`isSidechain: true`) are kept apart: not steps of the run, counted in its metadata. An
//! assistant response can be split over several records (one per content block): its thinking
//! and text are the thought of the tool call that follows, or a reply step when no call does;
//! its usage is counted once (by `requestId` or message id). A step is a `tool_use` with the
//! `tool_result` that answers it; `Edit` and `MultiEdit` old and new strings are edits with their
//! diffs, `Write` a whole-file write, `Bash` a shell command. `summary` records (titles of a
//! compacted conversation) go to the metadata; `file-history-snapshot` records are the editor's
//! backups. No verdict; the instance is the file's name when a harness renamed the file, else
//! the session id.

use crate::error::IngestError;
use crate::ingest::json::{at, compact, content_text, for_each_jsonl_line, i64_field, nonempty_str, str_field};
use crate::ingest::turns::{Pending, Ran, Turns, add, said_status};
use crate::model::{Format, Message, Parsed, Run, Step, Task};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    // First the thread, from each line's head alone; then each line read whole, one at a
    // time, kept only while it is read.
    let heads: Vec<Option<Head>> = text.lines().map(|l| serde_json::from_str(l).ok()).collect();
    let on_thread = thread(&heads);
    let mut s = Session {
        sidechain: heads.iter().flatten().filter(|h| h.conversation() && h.sidechain).count(),
        ..Session::default()
    };
    // Every record of the thread is a main-thread one: the rest of those are off it.
    s.dropped =
        heads.iter().flatten().filter(|h| h.conversation() && !h.sidechain).count().saturating_sub(on_thread.len());
    let mut warnings = Vec::new();
    for_each_jsonl_line(path, text, &mut warnings, |line, r| {
        match str_of(&r, "type") {
            Some("summary") => s.summaries.extend(nonempty_str(&r, "summary")),
            Some("assistant" | "user") if on_thread.contains(&(line - 1)) => s.record(&r),
            _ => {}
        }
        Ok(())
    })?;
    let mut parsed = s.into_parsed(path);
    parsed.warnings.splice(0..0, warnings);
    Ok(parsed)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// What the thread is made of: a record's type, id, parent and whether it is a sub-agent's.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "parentUuid")]
    parent: Option<Cow<'a, str>>,
    #[serde(default, rename = "isSidechain")]
    sidechain: bool,
}

impl Head<'_> {
    fn conversation(&self) -> bool {
        matches!(self.kind.as_deref(), Some("user" | "assistant" | "system")) && self.uuid.is_some()
    }
}

/// The lines (0-based) of the main thread's records: from the last main-thread record back
/// through `parentUuid` to the root. A sub-agent's record met on the way (a parent that is one)
/// is passed through, never part of the thread.
fn thread(heads: &[Option<Head>]) -> HashSet<usize> {
    let by_id: HashMap<&str, usize> = heads
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((h.as_ref().filter(|h| h.conversation())?.uuid.as_deref()?, i)))
        .collect();
    let mut seen = HashSet::new();
    let mut next = heads.iter().rposition(|h| h.as_ref().is_some_and(|h| h.conversation() && !h.sidechain));
    while let Some(i) = next {
        if !seen.insert(i) {
            break;
        }
        next = heads[i].as_ref().and_then(|h| h.parent.as_deref()).and_then(|p| by_id.get(p).copied());
    }
    seen.retain(|i| heads[*i].as_ref().is_some_and(|h| !h.sidechain));
    seen
}

/// A tool call waiting for its result.
struct Call {
    name: String,
    input: Value,
    thought: String,
    tokens: (Option<i64>, Option<i64>),
    timestamp: Option<String>,
}

#[derive(Default)]
struct Session {
    session_id: Option<String>,
    version: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    task: Option<String>,
    history: Vec<Message>,
    turns: Turns,
    pending: Pending<Call>,
    /// Thinking and text of the current response not yet given to a call.
    thought: Vec<String>,
    /// The current response's usage, for its first step.
    tokens: (Option<i64>, Option<i64>),
    responses: HashSet<String>,
    sent: Option<i64>,
    received: Option<i64>,
    summaries: Vec<String>,
    sidechain: usize,
    dropped: usize,
    last_timestamp: Option<String>,
}

impl Session {
    fn record(&mut self, r: &Value) {
        self.session_id = self.session_id.take().or_else(|| nonempty_str(r, "sessionId"));
        self.version = self.version.take().or_else(|| nonempty_str(r, "version"));
        self.cwd = self.cwd.take().or_else(|| nonempty_str(r, "cwd"));
        match str_of(r, "type") {
            Some("assistant") => self.assistant(r),
            _ => self.user(r),
        }
    }

    fn assistant(&mut self, r: &Value) {
        let message = r.get("message").unwrap_or(&Value::Null);
        if let Some(m) = nonempty_str(message, "model").filter(|m| m != "<synthetic>") {
            self.model.get_or_insert(m);
        }
        let response = nonempty_str(r, "requestId").or_else(|| nonempty_str(message, "id"));
        if response.as_ref().is_none_or(|id| self.responses.insert(id.clone())) {
            let usage = message.get("usage").unwrap_or(&Value::Null);
            let input = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
                .iter()
                .filter_map(|k| i64_field(usage, k))
                .reduce(i64::saturating_add);
            let output = i64_field(usage, "output_tokens");
            self.sent = add(self.sent, input);
            self.received = add(self.received, output);
            self.tokens = (input, output);
        }
        self.last_timestamp = str_field(r, "timestamp");
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(b)) => b.iter().collect(),
            Some(text @ Value::String(_)) => vec![text],
            _ => Vec::new(),
        };
        for b in blocks {
            match (b.as_str(), str_of(b, "type")) {
                (Some(text), _) => self.thought.push(text.to_string()),
                (_, Some("text")) => self.thought.extend(nonempty_str(b, "text")),
                (_, Some("thinking")) => self.thought.extend(nonempty_str(b, "thinking")),
                (_, Some("tool_use")) => {
                    let call = Call {
                        name: str_field(b, "name").unwrap_or_default(),
                        input: b.get("input").cloned().unwrap_or(Value::Null),
                        thought: std::mem::take(&mut self.thought).join("\n\n"),
                        tokens: std::mem::take(&mut self.tokens),
                        timestamp: str_field(r, "timestamp"),
                    };
                    self.pending.push(str_field(b, "id").unwrap_or_default(), call);
                }
                _ => {}
            }
        }
    }

    fn user(&mut self, r: &Value) {
        let content = at(r, &["message", "content"]).unwrap_or(&Value::Null);
        let results: Vec<&Value> = match content {
            Value::Array(blocks) => blocks.iter().filter(|b| str_of(b, "type") == Some("tool_result")).collect(),
            _ => Vec::new(),
        };
        if results.is_empty() {
            // A prompt: what the assistant said since is a reply.
            self.reply();
            let text = content_text(Some(content));
            if self.task.is_none() && !text.trim().is_empty() && !text.trim_start().starts_with('<') {
                self.task = Some(text.clone());
            }
            self.history.push(Message { role: "user".into(), content: text, extra: None });
            return;
        }
        for result in results {
            let id = str_of(result, "tool_use_id").unwrap_or_default();
            let call = match self.pending.take(id) {
                Some(call) => call,
                None => Call {
                    name: String::new(),
                    input: Value::Null,
                    thought: String::new(),
                    tokens: (None, None),
                    timestamp: None,
                },
            };
            let error = result.get("is_error").and_then(Value::as_bool);
            self.step(call, Some(content_text(result.get("content"))), error, r.get("toolUseResult"));
        }
    }

    /// Text said since the last call, with no call after it: a reply step.
    fn reply(&mut self) {
        for call in self.pending.drain() {
            self.step(call, None, None, None);
        }
        if self.thought.is_empty() {
            return;
        }
        let (tokens_in, tokens_out) = std::mem::take(&mut self.tokens);
        let step = Step {
            thought: std::mem::take(&mut self.thought).join("\n\n"),
            action: "message".into(),
            tool: Some("message".into()),
            tokens_in,
            tokens_out,
            timestamp: self.last_timestamp.clone(),
            ..Step::default()
        };
        self.turns.plain(step);
    }

    fn step(&mut self, call: Call, output: Option<String>, error: Option<bool>, structured: Option<&Value>) {
        let input = &call.input;
        let s = |k: &str| str_field(input, k).unwrap_or_default();
        let action = match call.name.as_str() {
            "Bash" => s("command"),
            "Read" => {
                let range = [i64_field(input, "offset"), i64_field(input, "limit")];
                match range {
                    [Some(o), Some(l)] => format!("view {} [{o}, {}]", s("file_path"), o + l),
                    _ => format!("view {}", s("file_path")),
                }
            }
            "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => format!("{} {}", call.name, s("file_path")),
            "Grep" | "Glob" => format!("{} {}", call.name, s("pattern")),
            "Task" => format!("Task {}", s("description")),
            "WebFetch" => format!("WebFetch {}", s("url")),
            name => format!("{name} {}", compact(Some(input)).unwrap_or_default()),
        };
        let observation = output.unwrap_or_default();
        let answered = !observation.is_empty() || error.is_some();
        let step = Step {
            thought: call.thought,
            action: action.trim().to_string(),
            observation,
            tool: Some(call.name.clone()),
            args: compact(Some(input)),
            tokens_in: call.tokens.0,
            tokens_out: call.tokens.1,
            timestamp: call.timestamp,
            working_dir: self.cwd.clone(),
            ..Step::default()
        };
        let ran = if call.name == "Bash" {
            Ran::Shell(error.map(i64::from).or_else(|| structured.and_then(|t| i64_field(t, "exitCode"))))
        } else {
            Ran::Tool(error.or(answered.then_some(false)))
        };
        // `Edit`, `MultiEdit`, `Write` and any other call that edits, by what its arguments do.
        self.turns.call(step, ran, input, said_status(error, answered));
    }

    fn into_parsed(mut self, path: &Path) -> Parsed {
        self.reply();
        let stem = crate::ingest::file_name::instance_from_file_name(path);
        // A harness that renamed the file named it for the task; the CLI names it for the session.
        let instance_id = match &self.session_id {
            Some(id) if *id != stem && !stem.is_empty() => stem,
            Some(id) => id.clone(),
            None => stem,
        };
        let last_is_reply = self.turns.steps.last().is_some_and(|s| s.tool.as_deref() == Some("message"));
        let mut meta = Map::new();
        for (k, v) in [
            ("session_id", self.session_id.clone().map(Value::from)),
            ("cwd", self.cwd.clone().map(Value::from)),
            ("summaries", (!self.summaries.is_empty()).then(|| Value::from(self.summaries.clone()))),
            ("sidechain_records", (self.sidechain > 0).then_some(Value::from(self.sidechain))),
            ("records_off_the_thread", (self.dropped > 0).then_some(Value::from(self.dropped))),
        ] {
            if let Some(v) = v {
                meta.insert(k.into(), v);
            }
        }
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::ClaudeCode),
            format_version: self.version,
            agent: Some("claude-code".into()),
            model: self.model,
            exit_status: Some(if last_is_reply { "finished" } else { "stopped" }.into()),
            tokens_sent: self.sent,
            tokens_received: self.received,
            history: self.history,
            metadata: Some(
                Value::Object(Map::from_iter([("claude_code".to_string(), Value::Object(meta))])).to_string(),
            ),
            ..Run::default()
        };
        self.turns.into_run(&mut run);
        let task = Task { instance_id, instruction: self.task, ..Task::default() };
        Parsed { runs: vec![run], tasks: vec![task], ..Parsed::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(kind: &str, uuid: &str, parent: Option<&str>, sidechain: bool, content: Value) -> String {
        let role = if kind == "assistant" { "assistant" } else { "user" };
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": sidechain, "sessionId": "s-1",
               "message": {"role": role, "content": content}})
        .to_string()
    }

    fn parse_lines(lines: &[String]) -> Parsed {
        parse(Path::new("s-1.jsonl"), &lines.join("\n")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn meta(p: &Parsed) -> Value {
        let text = p.runs[0].metadata.as_deref().unwrap_or("{}");
        serde_json::from_str::<Value>(text).unwrap_or_default()["claude_code"].clone()
    }

    /// Issue 42: 50,000 calls made at once behind one never answered, answered last first.
    /// Each answer searched the calls from the front (1.25 x 10^9 comparisons, and a shift of
    /// every call after it); by id it is one look-up. Same steps: each answered call with its
    /// result, the lost one at the end with none.
    #[test]
    fn answers_in_any_order_behind_a_lost_call_find_their_call_by_id() {
        const N: usize = 50_000;
        let use_block = |id: &str| json!({"type": "tool_use", "id": id, "name": "Grep", "input": {"pattern": id}});
        let calls: Vec<Value> =
            std::iter::once(use_block("lost")).chain((0..N).map(|i| use_block(&format!("toolu_{i:026}")))).collect();
        let results: Vec<Value> = (0..N)
            .rev()
            .map(|i| json!({"type": "tool_result", "tool_use_id": format!("toolu_{i:026}"), "content": format!("found {i}")}))
            .collect();
        let lines = [
            record("user", "u0", None, false, json!("find them")),
            record("assistant", "a1", Some("u0"), false, Value::Array(calls)),
            record("user", "u2", Some("a1"), false, Value::Array(results)),
        ];
        let run = &parse_lines(&lines).runs[0];
        assert_eq!(run.steps.len(), N + 1);
        assert!(run.steps.iter().take(N).enumerate().all(|(k, s)| {
            let i = N - 1 - k;
            s.action == format!("Grep toolu_{i:026}") && s.observation == format!("found {i}")
        }));
        let last = &run.steps[N];
        assert_eq!((last.action.as_str(), last.observation.as_str()), ("Grep lost", ""));
    }

    /// Issue 42: a main-thread record whose parent is a sub-agent's record. The thread went
    /// through the sub-agent's record and counted it as the main thread's: the count of records
    /// off the thread wrapped to 2^64 - 1 (a panic in a test build). The sub-agent's record is
    /// passed through, not a step.
    #[test]
    fn a_main_record_under_a_sidechain_record_counts_nothing_off_the_thread() {
        let lines = [
            record("user", "m1", None, false, json!("fix it")),
            record("assistant", "s1", Some("m1"), true, json!([{"type": "text", "text": "sub-agent says"}])),
            record("assistant", "m2", Some("s1"), false, json!([{"type": "text", "text": "done"}])),
        ];
        let p = parse_lines(&lines);
        let m = meta(&p);
        assert_eq!(m.get("records_off_the_thread"), None, "{m}");
        assert_eq!(m["sidechain_records"], 1);
        let thoughts: Vec<&str> = p.runs[0].steps.iter().map(|s| s.thought.as_str()).collect();
        assert_eq!(thoughts, ["done"]);
    }
}
