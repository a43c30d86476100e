//! OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`): one
//! session, one run. Each line is `{timestamp, type, payload}` (older versions wrote the payload
//! alone): `session_meta` (the session id, the CLI version, the repository), `turn_context` (the
//! model), `response_item` (messages, reasoning summaries, function calls and their outputs) and
//! `event_msg` (the user's prompt, token counts; the rest repeats the response items and is not
//! counted again).
//!
//! A step is a function call with its output (joined by `call_id`), the reasoning summaries
//! before it as its thought; an assistant message is a reply step. A `shell` call's command is
//! the action (`bash -lc` unwrapped), its exit code from the output's metadata; an `apply_patch`
//! (a heredoc in a shell command, or a tool call) is read into one edit per hunk. No instance id
//! (the session id stands in) and no verdict.

use crate::analysis::{edit_blocks, tool_edits};
use crate::error::IngestError;
use crate::ingest::json::{
    at, compact, content_text, f64_field, for_each_jsonl_line, i64_field, nonempty_str, str_field,
};
use crate::ingest::turns::{Queue, Turns};
use crate::model::{EditStatus, Format, Message, Parsed, Run, Step, Task};
use serde_json::{Map, Value};
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let mut warnings = Vec::new();
    let mut s = Session::default();
    // A record at a time, none held: a call waits in the queue for its output.
    for_each_jsonl_line(path, text, &mut warnings, |_, v| {
        s.record(v);
        Ok(())
    })?;
    let mut parsed = s.into_parsed(path);
    parsed.warnings.splice(0..0, warnings);
    Ok(parsed)
}

/// A record's type and payload: the envelope's, or (older rollouts) the record itself.
fn unwrap(mut v: Value) -> (String, Value) {
    let kind = v.get("type").and_then(Value::as_str).map(str::to_string);
    match (kind, v.get_mut("payload").map(Value::take)) {
        (Some(t), Some(p)) => (t, p),
        (Some(_), None) => ("response_item".into(), v),
        (None, _) => ("session_meta".into(), v),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// What waits in the queue: a reply, or a call (its payload and the thought before it).
enum Item {
    Reply(Box<Step>),
    Call(Value, String),
}

#[derive(Default)]
struct Session {
    meta: Option<Value>,
    model: Option<String>,
    effort: Option<String>,
    task: Option<String>,
    tokens: Option<Value>,
    turns: Turns,
    queue: Queue<Item, Value>,
    history: Vec<Message>,
    /// Reasoning summaries since the last step: the next step's thought.
    thought: Vec<String>,
    /// The last item was a reply (not a tool call left without one).
    replied: bool,
    /// Edits of paths outside the working folder, said (the file's path is put before each).
    notes: Vec<String>,
}

impl Session {
    fn record(&mut self, v: Value) {
        let (kind, p) = unwrap(v);
        match kind.as_str() {
            "session_meta" => self.meta = Some(p),
            "turn_context" => {
                if self.model.is_none() {
                    self.model = nonempty_str(&p, "model");
                }
                self.effort = self.effort.take().or_else(|| nonempty_str(&p, "effort"));
            }
            "response_item" => self.item(p),
            "event_msg" => match str_of(&p, "type") {
                Some("user_message") if self.task.is_none() => self.task = nonempty_str(&p, "message"),
                Some("token_count") if p.get("info").is_some_and(Value::is_object) => {
                    self.tokens = at(&p, &["info", "total_token_usage"]).cloned();
                }
                _ => {}
            },
            _ => {}
        }
        for (item, output) in self.queue.ready() {
            self.step(item, output);
        }
    }

    fn item(&mut self, p: Value) {
        let kind = str_of(&p, "type").unwrap_or_default().to_string();
        match kind.as_str() {
            "message" => {
                let text = content_text(p.get("content"));
                if str_of(&p, "role") == Some("assistant") {
                    let step = Step {
                        thought: self.take_thought(&text),
                        action: "message".into(),
                        tool: Some("message".into()),
                        ..Step::default()
                    };
                    self.queue.now(Item::Reply(Box::new(step)));
                    self.replied = true;
                } else {
                    let injected = text.trim_start().starts_with('<');
                    if !injected && self.task.is_none() {
                        self.task = Some(text.clone());
                    }
                    self.history.push(Message {
                        role: str_of(&p, "role").unwrap_or("user").into(),
                        content: text,
                        extra: None,
                    });
                }
            }
            "reasoning" => {
                let summary = p.get("summary").and_then(Value::as_array).into_iter().flatten();
                self.thought.extend(summary.filter_map(|s| nonempty_str(s, "text")));
                if let Some(c) = p.get("content").filter(|c| !c.is_null()) {
                    self.thought.push(content_text(Some(c)));
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let thought = self.take_thought("");
                match str_field(&p, "call_id") {
                    Some(id) => self.queue.wait(id, Item::Call(p, thought)),
                    None => self.queue.now(Item::Call(p, thought)),
                }
                self.replied = false;
            }
            k if k.ends_with("_output") => {
                if let Some(id) = str_field(&p, "call_id") {
                    // An output of no call in the file is left out.
                    let _ = self.queue.answer(&id, p);
                }
            }
            _ => {}
        }
    }

    fn take_thought(&mut self, also: &str) -> String {
        let mut parts = std::mem::take(&mut self.thought);
        if !also.trim().is_empty() {
            parts.push(also.to_string());
        }
        parts.join("\n\n")
    }

    fn step(&mut self, item: Item, output: Option<Value>) {
        match item {
            Item::Reply(step) => {
                self.turns.plain(*step);
            }
            Item::Call(p, thought) => self.call(&p, thought, output.as_ref()),
        }
    }

    fn call(&mut self, p: &Value, thought: String, output: Option<&Value>) {
        let name = str_field(p, "name").unwrap_or_else(|| str_field(p, "type").unwrap_or_default());
        // Arguments: a JSON object in a string (function calls), raw text (custom tools), or an
        // `action` object (local shell calls).
        let raw = p.get("arguments").or_else(|| p.get("input")).or_else(|| p.get("action"));
        let args = raw.map(crate::ingest::json::maybe_nested_json).unwrap_or(Value::Null);
        let (text, exit_code, duration) = output_of(output);
        let command = shell_command(&args);
        // A shell `apply_patch <<'EOF'` is read here; any other shell write is the
        // reconstruction's.
        let shell_patch = command.as_ref().filter(|c| c.contains("*** Begin Patch")).cloned();
        let step = Step {
            thought,
            action: command.clone().unwrap_or_else(|| action_text(&name, &args)),
            observation: text.clone(),
            tool: Some(name.clone()),
            args: compact(Some(&args)),
            execution_time: duration,
            working_dir: str_field(&args, "workdir"),
            ..Step::default()
        };
        let idx = if command.is_some() {
            self.turns.shell(step, exit_code)
        } else {
            let error = exit_code.map(|c| c != 0);
            self.turns.tool(step, error.or(output.map(|_| false)))
        };
        let status = match exit_code {
            Some(0) => EditStatus::Applied,
            Some(_) => EditStatus::RefusedByTool,
            None if text.starts_with("Success.") => EditStatus::Applied,
            None => tool_edits::status(output.map(|_| text.as_str())),
        };
        let edits = match (&shell_patch, &command) {
            (Some(patch), _) => edit_blocks::apply_patch(patch).iter().map(|b| b.edit(idx, status)).collect(),
            (None, Some(_)) => Vec::new(),
            // `apply_patch` as a custom tool (the patch itself) or a function call (`{"input":
            // ...}`), and any other call that edits, by what its arguments do.
            (None, None) => tool_edits::call_edits(idx, &name, raw.unwrap_or(&Value::Null), status),
        };
        for edit in edits {
            if let Some(what) = edit_blocks::outside(&edit.path) {
                self.notes.push(format!(
                    "step {}: an edit of `{}`, {what}: stored as written, not resolved",
                    idx + 1,
                    crate::sanitize::sanitize(&edit.path)
                ));
            }
            self.turns.edit(idx, edit);
        }
    }

    fn into_parsed(mut self, path: &Path) -> Parsed {
        for (item, output) in self.queue.drain() {
            self.step(item, output);
        }
        let meta = self.meta.take().unwrap_or(Value::Null);
        let instance_id =
            nonempty_str(&meta, "id").unwrap_or_else(|| crate::ingest::file_name::instance_from_file_name(path));
        let tokens = self.tokens.take().unwrap_or(Value::Null);
        let mut codex = Map::new();
        for key in ["originator", "cwd", "source", "model_provider", "git"] {
            if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
                codex.insert(key.into(), v.clone());
            }
        }
        if let Some(e) = self.effort.take() {
            codex.insert("effort".into(), Value::from(e));
        }
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::CodexCli),
            format_version: nonempty_str(&meta, "cli_version"),
            agent: Some("codex-cli".into()),
            model: self.model.take(),
            // A rollout that ends on a tool's output was still open (or killed).
            exit_status: Some(if self.replied { "finished" } else { "stopped" }.into()),
            tokens_sent: i64_field(&tokens, "input_tokens"),
            tokens_received: i64_field(&tokens, "output_tokens"),
            history: std::mem::take(&mut self.history),
            metadata: (!codex.is_empty())
                .then(|| Value::Object(Map::from_iter([("codex".to_string(), Value::Object(codex))])).to_string()),
            ..Run::default()
        };
        self.turns.into_run(&mut run);
        let task = Task { instance_id, instruction: self.task, ..Task::default() };
        let warnings = self.notes.iter().map(|n| format!("{}: {n}", path.display())).collect();
        Parsed { runs: vec![run], tasks: vec![task], warnings, ..Parsed::default() }
    }
}

/// A function call's output: its text, exit code and duration (a JSON string
/// `{output, metadata: {exit_code, duration_seconds}}`, or plain text).
fn output_of(output: Option<&Value>) -> (String, Option<i64>, Option<f64>) {
    let Some(o) = output.and_then(|o| o.get("output")) else { return (String::new(), None, None) };
    let parsed = crate::ingest::json::maybe_nested_json(o);
    match &parsed {
        Value::Object(_) if parsed.get("output").is_some() => {
            let meta = parsed.get("metadata").unwrap_or(&Value::Null);
            (content_text(parsed.get("output")), i64_field(meta, "exit_code"), f64_field(meta, "duration_seconds"))
        }
        Value::String(s) => (s.clone(), None, None),
        other => (content_text(Some(other)), None, None),
    }
}

/// The command a shell call runs: `["bash", "-lc", "cmd"]` is `cmd`; another list is joined as
/// a shell would read it.
fn shell_command(args: &Value) -> Option<String> {
    match args.get("command")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, cmd] if shell.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') => {
                    Some(cmd.to_string())
                }
                _ => shlex::try_join(words.iter().copied()).ok(),
            }
        }
        _ => None,
    }
}

/// A call that is not a shell: its name and, for a plan, its steps.
fn action_text(name: &str, args: &Value) -> String {
    match name {
        "update_plan" => {
            let steps = args.get("plan").and_then(Value::as_array).map_or(0, Vec::len);
            format!("update_plan ({steps} steps)")
        }
        _ => format!("{name} {}", compact(Some(args)).unwrap_or_default()).trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus_rollout() -> Parsed {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/corpus/codex-cli/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
        ));
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        parse(path, &text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// MANIFEST: 39 function calls (shell 37, update_plan 2), 2 shells run `apply_patch` (2
    /// hunks that change lines), exit codes 1 ×1 and 2 ×2, the last token count, no assistant
    /// message.
    #[test]
    fn the_corpus_rollout_reads_as_the_manifest_says() {
        let p = corpus_rollout();
        let run = &p.runs[0];
        // Three `@@` sections, one of them context only (it narrows where the next applies).
        assert_eq!((run.steps.len(), run.edits.len()), (39, 2));
        assert_eq!(run.instance_id, "019a93b9-f380-7600-98ff-940e6b99603c");
        assert_eq!((run.model.as_deref(), run.format_version.as_deref()), (Some("gpt-5.1-codex"), Some("0.58.0")));
        assert_eq!((run.tokens_sent, run.tokens_received), (Some(1_099_261), Some(22_305)));
        assert_eq!(run.exit_status.as_deref(), Some("stopped"));
        let tools: Vec<&str> = run.steps.iter().filter_map(|s| s.tool.as_deref()).collect();
        assert_eq!(tools.iter().filter(|t| **t == "shell").count(), 37);
        assert_eq!(tools.iter().filter(|t| **t == "update_plan").count(), 2);
        assert_eq!(run.steps.iter().filter(|s| s.flags.error).count(), 3, "exit codes 1, 2, 2");
        assert!(run.steps[0].thought.contains("Planning repository inspection"), "{}", run.steps[0].thought);
        for e in &run.edits {
            assert_eq!((e.path.as_str(), e.status), ("components/chat/chat-helpers/index.ts", EditStatus::Applied));
            let diff = e.diff.as_deref().unwrap_or_default();
            assert!(diff.contains("\n+") && diff.contains("\n-"), "{diff}");
        }
        assert!(run.steps.iter().filter(|s| s.flags.edit).count() == 2);
        assert_eq!(p.tasks[0].instruction.as_deref().map(|t| t.starts_with("finish up the users work")), Some(true));
    }

    /// Issue 42: an `apply_patch` of a path outside the working folder was stored as text and
    /// said nothing. The path is stored as written; a note says what it is.
    #[test]
    fn edits_of_paths_outside_the_working_folder_are_noted() {
        let patch = "*** Begin Patch\n*** Add File: ../../etc/cron.d/job\n+* * * * * root sh /tmp/x\n*** Delete File: /etc/passwd\n*** End Patch\n";
        let call = serde_json::json!({"type": "response_item", "payload": {"type": "custom_tool_call",
            "name": "apply_patch", "input": patch, "call_id": "c1"}});
        let p = parse(Path::new("rollout.jsonl"), &call.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let paths: Vec<&str> = p.runs[0].edits.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["../../etc/cron.d/job", "/etc/passwd"]);
        assert_eq!(
            p.warnings,
            [
                "rollout.jsonl: step 1: an edit of `../../etc/cron.d/job`, a path that leaves the working folder (`..`): stored as written, not resolved",
                "rollout.jsonl: step 1: an edit of `/etc/passwd`, an absolute path: stored as written, not resolved",
            ]
        );
    }

    /// Issue 42: a crashed session's call never answered, then 50,000 calls each answered at
    /// once. Each output searched every call held behind the lost one (1.25 x 10^9 looks); by id
    /// it is one. Same steps, in the order of the calls, the lost one first with no output.
    #[test]
    fn outputs_behind_a_call_never_answered_find_their_call_by_id() {
        const N: usize = 50_000;
        let item =
            |payload: serde_json::Value| serde_json::json!({"type": "response_item", "payload": payload}).to_string();
        let call = |id: &str| {
            item(serde_json::json!({"type": "function_call", "name": "read_file", "call_id": id,
                "arguments": serde_json::json!({"path": id}).to_string()}))
        };
        let mut lines = vec![call("lost")];
        for i in 0..N {
            lines.push(call(&format!("call_{i:026}")));
            lines.push(item(serde_json::json!({"type": "function_call_output", "call_id": format!("call_{i:026}"), "output": format!("read {i}")})));
        }
        let p = parse(Path::new("rollout.jsonl"), &lines.join("\n")).unwrap_or_else(|e| panic!("{e}"));
        let steps = &p.runs[0].steps;
        assert_eq!(steps.len(), N + 1);
        assert_eq!((steps[0].tool.as_deref(), steps[0].observation.as_str()), (Some("read_file"), ""));
        assert!(steps[1..].iter().enumerate().all(|(i, s)| s.observation == format!("read {i}")));
    }

    /// `apply_patch` as a function call whose arguments are `{"input": PATCH}` (issue 42): its
    /// hunks are the step's edits, as the same patch in a shell heredoc or a custom tool's input.
    #[test]
    fn apply_patch_as_a_function_call_with_its_input_gives_its_edits() {
        let patch = "*** Begin Patch\n*** Update File: src/app.ts\n@@\n-const port = 3000;\n+const port = 8080;\n*** End Patch\n";
        let call = serde_json::json!({"timestamp": "2025-11-17T21:33:00.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "apply_patch",
            "arguments": serde_json::json!({"input": patch}).to_string(), "call_id": "call_1"}});
        let output = serde_json::json!({"timestamp": "2025-11-17T21:33:01.000Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1",
            "output": serde_json::json!({"output": "Success. Updated the following files:\nM src/app.ts\n", "metadata": {"exit_code": 0}}).to_string()}});
        let meta = r#"{"timestamp":"2025-11-17T21:30:28.664Z","type":"session_meta","payload":{"id":"s-1","cwd":"/w","cli_version":"0.58.0"}}"#;
        let text = format!("{meta}\n{call}\n{output}\n");
        let p = parse(Path::new("rollout.jsonl"), &text).unwrap_or_else(|e| panic!("{e}"));
        let edits: Vec<(&str, EditStatus)> = p.runs[0].edits.iter().map(|e| (e.path.as_str(), e.status)).collect();
        assert_eq!(edits, [("src/app.ts", EditStatus::Applied)]);
        assert!(p.runs[0].edits[0].diff.as_deref().is_some_and(|d| d.contains("+const port = 8080;")));
    }
}
