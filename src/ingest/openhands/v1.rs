//! OpenHands V1 conversations (software-agent-sdk, OpenHands-CLI): events with a `kind` (the
//! event class) and a uuid `id`, one per line of an `events.jsonl` or one per
//! `event-NNNNN-<uuid>.json` file beside the conversation's `base_state.json`.
//!
//! A step is an `ActionEvent` with the `ObservationEvent` (or `UserRejectObservation`) whose
//! `action_id` is its `id`; an observation whose action is not in the file (a slice of a log)
//! is a step of its own; an agent `MessageEvent` is a reply step, an `AgentErrorEvent` an error
//! step. User messages and the system prompt are the history (the first user message is the
//! task). Model, tokens and cost are not on the events: the last `stats` state update (summed
//! over its usage ids) or `base_state.json`'s; the exit is the last `execution_status` (or
//! "finished" after a `FinishAction`). File editor edits carry their old and new strings, as
//! V0's do.

use super::events;
use crate::ingest::json::{at, compact, content_text, f64_field, i64_field, nonempty_str, str_field};
use crate::ingest::turns::{Queue, Turns, add};
use crate::model::{Format, Message, Parsed, Run, Step, Task};
use serde_json::{Map, Value};
use std::path::Path;

/// A conversation read an event at a time (`event`), none held longer than its step needs:
/// an action waits in a queue for the observation that answers it.
#[derive(Default)]
pub struct Conversation {
    turns: Turns,
    queue: Queue<Event, Value>,
    history: Vec<Message>,
    task: Option<String>,
    finished: bool,
    status: Option<String>,
    error: Option<String>,
    stats: Option<Value>,
    condensations: usize,
    risks: Map<String, Value>,
}

/// What waits in the queue: an action (for its answer), or a step that needs none.
enum Event {
    Action(Value),
    Orphan(Value),
    Reply(Value),
    Error(Value),
}

impl Conversation {
    /// The next event, in the conversation's order.
    pub fn event(&mut self, e: Value) {
        match kind(&e) {
            "ActionEvent" => match id(&e).map(str::to_string) {
                Some(id) => self.queue.wait(id, Event::Action(e)),
                None => self.queue.now(Event::Action(e)),
            },
            "ObservationEvent" | "UserRejectObservation" => match str_of(&e, "action_id").map(str::to_string) {
                // An observation whose action is not in the file is a step of its own.
                Some(action) => {
                    if let Err(e) = self.queue.answer(&action, e) {
                        self.queue.now(Event::Orphan(e));
                    }
                }
                None => self.queue.now(Event::Orphan(e)),
            },
            "MessageEvent" if str_of(&e, "source") == Some("agent") => self.queue.now(Event::Reply(e)),
            "MessageEvent" => {
                let text = content_text(at(&e, &["llm_message", "content"]));
                if self.task.is_none() {
                    self.task = Some(text.clone());
                }
                self.history.push(Message { role: "user".into(), content: text, extra: None });
            }
            "SystemPromptEvent" => self.history.push(Message {
                role: "system".into(),
                content: str_field(&e, "system_prompt")
                    .unwrap_or_else(|| content_text(at(&e, &["system_prompt", "text"]).or(e.get("system_prompt")))),
                extra: None,
            }),
            "AgentErrorEvent" => self.queue.now(Event::Error(e)),
            "ConversationStateUpdateEvent" => self.state_update(e),
            "ConversationErrorEvent" => {
                self.error = [str_field(&e, "code"), str_field(&e, "detail")].into_iter().flatten().next();
            }
            "Condensation" | "CondensationSummaryEvent" => self.condensations += 1,
            _ => {}
        }
        for (event, answer) in self.queue.ready() {
            self.step(event, answer);
        }
    }

    fn step(&mut self, event: Event, answer: Option<Value>) {
        match event {
            Event::Action(e) => self.action(&e, answer.as_ref()),
            Event::Orphan(e) => self.orphan(&e),
            Event::Reply(e) => {
                let step = Step {
                    thought: content_text(at(&e, &["llm_message", "content"])),
                    action: "message".into(),
                    tool: Some("message".into()),
                    timestamp: str_field(&e, "timestamp"),
                    ..Step::default()
                };
                self.turns.plain(step);
            }
            Event::Error(e) => {
                let step = Step {
                    action: str_field(&e, "tool_name").unwrap_or_default(),
                    observation: str_field(&e, "error").unwrap_or_default(),
                    tool: str_field(&e, "tool_name"),
                    timestamp: str_field(&e, "timestamp"),
                    ..Step::default()
                };
                self.turns.tool(step, Some(true));
            }
        }
    }
}

fn kind(e: &Value) -> &str {
    e.get("kind").and_then(Value::as_str).unwrap_or_default()
}

fn id(e: &Value) -> Option<&str> {
    str_of(e, "id")
}

fn str_of<'a>(e: &'a Value, key: &str) -> Option<&'a str> {
    e.get(key).and_then(Value::as_str)
}

impl Conversation {
    fn action(&mut self, e: &Value, answer: Option<&Value>) {
        let action = e.get("action").unwrap_or(&Value::Null);
        let akind = kind(action);
        let tool = str_field(e, "tool_name");
        let obs = answer.and_then(|a| a.get("observation"));
        let mut observation = match answer {
            Some(a) if kind(a) == "UserRejectObservation" => {
                format!("rejected by the user: {}", str_field(a, "rejection_reason").unwrap_or_default())
            }
            _ => obs.map(|o| content_text(o.get("content"))).unwrap_or_default(),
        };
        let rejected = answer.is_some_and(|a| kind(a) == "UserRejectObservation");
        let is_error = obs.and_then(|o| o.get("is_error")).and_then(Value::as_bool).map(|e| e || rejected);
        let mut thought = thought_of(e);
        if let Some(risk) = str_field(e, "security_risk").filter(|r| r != "UNKNOWN") {
            let n = self.risks.entry(risk).or_insert(Value::from(0));
            *n = Value::from(n.as_i64().unwrap_or(0) + 1);
        }
        let s = |k: &str| str_field(action, k).unwrap_or_default();
        let text = match akind {
            "TerminalAction" => s("command"),
            "FileEditorAction" | "StrReplaceEditorAction" => {
                let range = action.get("view_range").filter(|r| r.is_array()).map(|r| format!(" {r}"));
                format!("{} {}{}", s("command"), s("path"), range.unwrap_or_default())
            }
            "FinishAction" => {
                self.finished = true;
                if let Some(m) = nonempty_str(action, "message") {
                    if !thought.is_empty() {
                        thought.push_str("\n\n");
                    }
                    thought.push_str(&m);
                }
                "finish".to_string()
            }
            "ThinkAction" => {
                thought =
                    [thought, s("thought")].into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n");
                "think".to_string()
            }
            "TaskTrackerAction" => format!("task_tracker {}", s("command")),
            _ => format!(
                "{} {}",
                tool.clone().unwrap_or_else(|| akind.to_string()),
                compact(Some(action)).unwrap_or_default()
            ),
        };
        if rejected && observation.is_empty() {
            observation = "rejected by the user".into();
        }
        let step = Step {
            thought,
            action: text.trim().to_string(),
            observation,
            tool: tool.clone(),
            args: compact(Some(action)),
            timestamp: str_field(e, "timestamp"),
            ..Step::default()
        };
        let idx = if akind == "TerminalAction" && !rejected {
            let code = obs.and_then(|o| {
                o.get("exit_code").and_then(Value::as_i64).or_else(|| i64_field(&o["metadata"], "exit_code"))
            });
            let code = code.or(if is_error == Some(true) { Some(-1) } else { None });
            self.turns.shell(step, code)
        } else {
            self.turns.tool(step, is_error.or(Some(false)).filter(|_| answer.is_some()))
        };
        if matches!(akind, "FileEditorAction" | "StrReplaceEditorAction") {
            let observation = self.turns.steps[idx].observation.clone();
            let mut found = events::step_edits(idx, "edit", action, answer, &observation);
            if rejected || is_error == Some(true) {
                for edit in &mut found {
                    edit.status = crate::model::EditStatus::RefusedByTool;
                }
            }
            for edit in found {
                self.turns.edit(idx, edit);
            }
        }
    }

    /// An observation whose action is not among the events: a step of its own.
    fn orphan(&mut self, e: &Value) {
        let obs = e.get("observation").unwrap_or(&Value::Null);
        let step = Step {
            action: str_field(obs, "command").or_else(|| str_field(e, "tool_name")).unwrap_or_default(),
            observation: content_text(obs.get("content")),
            tool: str_field(e, "tool_name"),
            timestamp: str_field(e, "timestamp"),
            ..Step::default()
        };
        let is_error = obs.get("is_error").and_then(Value::as_bool);
        if kind(obs) == "TerminalObservation" {
            let code =
                obs.get("exit_code").and_then(Value::as_i64).or_else(|| i64_field(&obs["metadata"], "exit_code"));
            self.turns.shell(step, code.or(if is_error == Some(true) { Some(-1) } else { None }));
        } else {
            self.turns.tool(step, is_error);
        }
    }

    fn state_update(&mut self, e: Value) {
        match str_of(&e, "key") {
            Some("stats") => self.stats = e.get("value").cloned(),
            Some("execution_status") => self.status = str_field(&e, "value"),
            _ => {}
        }
    }

    /// The run, once every event was read; `path` is the unit (the events folder, or the
    /// `events.jsonl` file).
    pub fn finish(mut self, path: &Path, state: Option<&Value>) -> Parsed {
        for (event, answer) in self.queue.drain() {
            self.step(event, answer);
        }
        let state = state.unwrap_or(&Value::Null);
        let stats = self.stats.as_ref().or_else(|| state.get("stats")).unwrap_or(&Value::Null);
        let usage = Usage::of(stats);
        let instance_id = nonempty_str(state, "id").unwrap_or_else(|| conversation_name(path));
        let exit = if self.finished {
            "finished".to_string()
        } else if let Some(e) = self.error {
            e
        } else {
            self.status.or_else(|| nonempty_str(state, "execution_status")).unwrap_or_else(|| "stopped".into())
        };
        let mut meta = Map::new();
        if self.condensations > 0 {
            meta.insert("condensations".into(), Value::from(self.condensations));
        }
        if !self.risks.is_empty() {
            meta.insert("security_risk".into(), Value::Object(self.risks));
        }
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::OpenHandsV1),
            agent: Some(events::agent_name(nonempty_str(&state["agent"], "kind").as_deref())),
            model: usage
                .model
                .or_else(|| at(state, &["agent", "llm", "model"]).and_then(Value::as_str).map(str::to_string)),
            exit_status: Some(exit),
            cost: usage.cost,
            tokens_sent: usage.prompt,
            tokens_received: usage.completion,
            history: self.history,
            metadata: (!meta.is_empty()).then(|| {
                Value::Object(Map::from_iter([("openhands_v1".to_string(), Value::Object(meta))])).to_string()
            }),
            ..Run::default()
        };
        self.turns.into_run(&mut run);
        let task = Task { instance_id, instruction: self.task.filter(|t| !t.trim().is_empty()), ..Task::default() };
        Parsed { runs: vec![run], tasks: vec![task], ..Parsed::default() }
    }
}

/// The thought of an action: its `thought` text parts, else its `reasoning_content`, else its
/// thinking blocks.
fn thought_of(e: &Value) -> String {
    let parts = content_text(e.get("thought"));
    if !parts.trim().is_empty() {
        return parts;
    }
    if let Some(r) = nonempty_str(e, "reasoning_content") {
        return r;
    }
    e.get("thinking_blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| str_field(b, "thinking"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Model, tokens and cost of a `stats` value: summed over its usage ids (`default`, `condenser`);
/// the model is `default`'s, else the first named.
#[derive(Default)]
struct Usage {
    model: Option<String>,
    cost: Option<f64>,
    prompt: Option<i64>,
    completion: Option<i64>,
}

impl Usage {
    fn of(stats: &Value) -> Usage {
        let mut u = Usage::default();
        let Some(metrics) = stats.get("usage_to_metrics").and_then(Value::as_object) else { return u };
        for (usage_id, m) in metrics {
            let tokens = m.get("accumulated_token_usage").unwrap_or(&Value::Null);
            u.cost = add(u.cost, f64_field(m, "accumulated_cost"));
            u.prompt = add(u.prompt, i64_field(tokens, "prompt_tokens"));
            u.completion = add(u.completion, i64_field(tokens, "completion_tokens"));
            if usage_id == "default" || u.model.is_none() {
                u.model = nonempty_str(m, "model_name").or(u.model.take());
            }
        }
        u
    }
}

/// The conversation a unit is named for: the folder of its events (the folder holding `events/`),
/// or the folder of an `events.jsonl`.
fn conversation_name(path: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let folder = match name(path).as_deref() {
        Some("events") => path.parent(),
        _ if path.extension().is_some_and(|e| e == "jsonl" || e == "json") => path.parent(),
        _ => Some(path),
    };
    folder.and_then(name).unwrap_or_else(|| crate::ingest::file_name::instance_from_file_name(path))
}
