//! OpenHands event lists to steps: each agent action is a step, answered by the observation
//! whose `cause` names the action's `id`.

use crate::analysis::reconstruct::Exec;
use crate::analysis::{edits, markers};
use crate::ingest::json::{at, compact, content_text, f64_field, i64_field, nonempty_str, str_field};
use crate::model::{Edit, EditKind, EditStatus, Message, Step, StepFlags};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Actions that are not agent turns (prompt set-up, memory look-ups, state bookkeeping).
const NOT_STEPS: &[&str] = &["system", "recall", "change_agent_state", "condensation", "null"];

/// Observations that never answer a step (state changes, memory look-ups).
const NOT_ANSWERS: &[&str] = &["agent_state_changed", "recall", "null"];

/// What an event list says about a run.
#[derive(Debug, Default)]
pub(super) struct Timeline {
    pub steps: Vec<Step>,
    pub edits: Vec<Edit>,
    /// How each step's action ran (the reconstruction of shell edits reads it).
    pub exec: Vec<Exec>,
    pub history: Vec<Message>,
    pub finished: bool,
    /// The last `agent_state_changed` state.
    pub agent_state: Option<String>,
    pub first_user_message: Option<String>,
    /// The model named by the first model response.
    pub model: Option<String>,
    /// `openhands_version` / `agent_class` from the `system` action.
    pub version: Option<String>,
    pub agent_class: Option<String>,
    /// The last `llm_metrics` seen: accumulated cost and tokens.
    pub cost: Option<f64>,
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    pub warnings: Vec<String>,
    /// Whether each step got an observation.
    answered: Vec<bool>,
    last_response_id: Option<String>,
}

/// An event id: an integer, or a string holding one.
pub(super) fn event_id(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A history as [`timeline`] reads it. Three shapes are met:
/// - events (`id`, `source`, `action` or `observation`, `args` or `extras`): read as they are;
/// - OpenDevin's 2024 `[action, observation]` pairs: flattened, each observation answering the
///   action of its pair (an observation of kind `null` answers nothing);
/// - events serialized without `id`, `source` or `args` (the resolver's early output): an
///   action's arguments stand beside `action`, an observation's extras beside `observation`;
///   each observation answers the action before it, and a first `message` is the user's task.
///
/// Ids the events lack are given as negative numbers, which no real event has.
pub(super) fn normalize(history: &[Value]) -> Cow<'_, [Value]> {
    let pairs = history.iter().any(Value::is_array);
    if !pairs && !history.iter().any(is_flat) {
        return Cow::Borrowed(history);
    }
    let mut events: Vec<Value> = Vec::with_capacity(history.len() * 2);
    for item in history {
        match item {
            Value::Array(pair) => events.extend(pair.iter().cloned()),
            other => events.push(other.clone()),
        }
    }
    let mut latest_action: Option<i64> = None;
    let mut first = true;
    for (i, e) in events.iter_mut().enumerate() {
        let flat = is_flat(e);
        let Value::Object(map) = e else { continue };
        let synthetic = Value::from(-(i as i64) - 1);
        if let Some(action) = map.get("action").and_then(Value::as_str).map(str::to_string) {
            if flat {
                nest(map, "args", ACTION_FIELDS);
            }
            if !map.contains_key("source") {
                let source = if first && action == "message" { "user" } else { "agent" };
                map.insert("source".to_string(), Value::from(source));
            }
            if event_id(map.get("id")).is_none() {
                map.insert("id".to_string(), synthetic);
            }
            latest_action = event_id(map.get("id"));
            first = false;
        } else if let Some(kind) = map.get("observation").and_then(Value::as_str).map(str::to_string) {
            if flat {
                nest(map, "extras", OBSERVATION_FIELDS);
            }
            if event_id(map.get("id")).is_none() {
                map.insert("id".to_string(), synthetic);
            }
            if event_id(map.get("cause")).is_none()
                && !NOT_ANSWERS.contains(&kind.as_str())
                && let Some(cause) = latest_action.take()
            {
                map.insert("cause".to_string(), Value::from(cause));
            }
        }
    }
    Cow::Owned(events)
}

/// Event fields that stay at the top when an action's arguments are moved into `args`.
const ACTION_FIELDS: &[&str] =
    &["action", "id", "source", "timestamp", "message", "cause", "timeout", "llm_metrics", "tool_call_metadata"];
/// Event fields that stay at the top when an observation's extras are moved into `extras`.
const OBSERVATION_FIELDS: &[&str] =
    &["observation", "id", "source", "timestamp", "message", "cause", "content", "llm_metrics", "tool_call_metadata"];

/// An event serialized without `id` and without its `args` / `extras` object.
fn is_flat(e: &Value) -> bool {
    let Value::Object(map) = e else { return false };
    !map.contains_key("id")
        && ((map.contains_key("action") && !map.contains_key("args"))
            || (map.contains_key("observation") && !map.contains_key("extras")))
}

/// Move every field of `map` not in `keep` into a new object under `key`.
fn nest(map: &mut Map<String, Value>, key: &str, keep: &[&str]) {
    let moved: Vec<String> = map.keys().filter(|k| !keep.contains(&k.as_str())).cloned().collect();
    let mut inner = Map::new();
    for k in moved {
        if let Some(v) = map.remove(&k) {
            inner.insert(k, v);
        }
    }
    map.insert(key.to_string(), Value::Object(inner));
}

/// Whether a value is an event (an object with `action` or `observation`).
pub(super) fn is_event(e: &Value) -> bool {
    e.get("action").is_some_and(Value::is_string) || e.get("observation").is_some_and(Value::is_string)
}

pub(super) fn timeline(events: &[Value]) -> Timeline {
    let mut t = Timeline::default();
    let mut answer: HashMap<i64, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let Some(kind) = e.get("observation").and_then(Value::as_str) else {
            continue;
        };
        if let Some(cause) = event_id(e.get("cause")).filter(|_| !NOT_ANSWERS.contains(&kind)) {
            answer.entry(cause).or_insert(i);
        }
    }
    let mut used: HashSet<usize> = HashSet::new();
    for (i, e) in events.iter().enumerate() {
        if !e.is_object() {
            t.warnings.push(format!("event {i} is not a JSON object; skipped"));
            continue;
        }
        if let Some(action) = e.get("action").and_then(Value::as_str) {
            t.note(e, action);
            if !is_step(e, action) {
                continue;
            }
            let obs = event_id(e.get("id")).and_then(|id| answer.get(&id).copied()).filter(|j| *j != i).and_then(|j| {
                used.insert(j);
                events.get(j)
            });
            t.push_step(e, action, obs);
        } else if let Some(kind) = e.get("observation").and_then(Value::as_str) {
            match kind {
                "agent_state_changed" => {
                    t.agent_state = at(e, &["extras", "agent_state"]).and_then(Value::as_str).map(str::to_string);
                }
                "error" if !used.contains(&i) => t.attach_error(e),
                _ => {}
            }
        }
    }
    t
}

/// Agent actions that no observation answers.
const UNANSWERED: &[&str] = &["message", "finish", "reject"];

/// How many events of a list cut mid-write to keep (see `ingest::truncated`): all of them,
/// unless the last step's action waits for an observation that is not among them: that step
/// would stand without what its action showed, so it goes (with the events after it).
pub(crate) fn complete_events(events: &[&str]) -> usize {
    let mut causes = HashSet::new();
    for (i, raw) in events.iter().enumerate().rev() {
        let Ok(e) = serde_json::from_str::<Value>(raw) else { continue };
        if let Some(action) = e.get("action").and_then(Value::as_str) {
            if !is_step(&e, action) {
                continue;
            }
            let answered = event_id(e.get("id")).is_some_and(|id| causes.contains(&id));
            return if answered || UNANSWERED.contains(&action) { events.len() } else { i };
        }
        if e.get("observation").and_then(Value::as_str).is_some_and(|k| !NOT_ANSWERS.contains(&k)) {
            causes.extend(event_id(e.get("cause")));
        }
    }
    events.len()
}

fn is_step(e: &Value, action: &str) -> bool {
    let source = e.get("source").and_then(Value::as_str).unwrap_or("agent");
    source != "user" && source != "environment" && !NOT_STEPS.contains(&action)
}

/// Message text of an action: `args.content`, else the event `message`.
fn message_text(e: &Value) -> String {
    e.get("args").and_then(|a| nonempty_str(a, "content")).or_else(|| str_field(e, "message")).unwrap_or_default()
}

impl Timeline {
    /// Run-level facts every action may carry: history, metrics, version, finish.
    fn note(&mut self, e: &Value, action: &str) {
        if let Some(m) = e.get("llm_metrics") {
            self.cost = f64_field(m, "accumulated_cost").or(self.cost);
            if let Some(u) = m.get("accumulated_token_usage") {
                self.tokens_sent = i64_field(u, "prompt_tokens").or(self.tokens_sent);
                self.tokens_received = i64_field(u, "completion_tokens").or(self.tokens_received);
            }
        }
        let source = e.get("source").and_then(Value::as_str).unwrap_or("");
        let args = e.get("args").unwrap_or(&Value::Null);
        match action {
            "system" => {
                self.version = self.version.take().or_else(|| nonempty_str(args, "openhands_version"));
                self.agent_class = self.agent_class.take().or_else(|| nonempty_str(args, "agent_class"));
                self.history.push(Message { role: "system".to_string(), content: message_text(e), extra: None });
            }
            "message" => {
                let content = message_text(e);
                let role = if source == "user" { "user" } else { "assistant" };
                if role == "user" && self.first_user_message.is_none() {
                    self.first_user_message = Some(content.clone());
                }
                // Agent messages are steps; only what is not a step is kept as history.
                if role == "user" {
                    self.history.push(Message { role: role.to_string(), content, extra: None });
                }
            }
            "finish" => self.finished = true,
            _ => {}
        }
    }

    fn push_step(&mut self, e: &Value, action: &str, obs: Option<&Value>) {
        let idx = self.steps.len();
        let args = e.get("args").unwrap_or(&Value::Null);
        let meta = e.get("tool_call_metadata").unwrap_or(&Value::Null);
        let response = meta.get("model_response").unwrap_or(&Value::Null);
        if self.model.is_none() {
            self.model = nonempty_str(response, "model");
        }
        // Several tool calls of one model response repeat its usage: count it once.
        let response_id = nonempty_str(response, "id");
        let repeated = response_id.is_some() && response_id == self.last_response_id;
        self.last_response_id = response_id;
        let usage = response.get("usage").filter(|_| !repeated).unwrap_or(&Value::Null);

        let full_args = edit_args(e, action, args);
        let args = full_args.as_ref();
        let command = action_text(action, args);
        let observation = obs.map(|o| content_text(o.get("content"))).unwrap_or_default();
        let obs_kind = obs.and_then(|o| o.get("observation")).and_then(Value::as_str);
        let exit_code = obs
            .and_then(|o| at(o, &["extras", "metadata", "exit_code"]).or_else(|| at(o, &["extras", "exit_code"])))
            .and_then(Value::as_i64);
        let error = match (exit_code, obs_kind) {
            (Some(code), _) => code != 0,
            (None, Some("error")) => true,
            (None, Some("read")) => observation.trim_start().starts_with("ERROR:"),
            (None, Some("think")) | (None, None) => false,
            (None, Some(_)) => markers::looks_like_error(&observation),
        };
        let shell_like = matches!(action, "run" | "run_ipython");
        let mut flags = StepFlags {
            error,
            output_clipped: markers::output_clipped(&observation),
            test_run: shell_like && markers::runs_tests(&command),
            ..StepFlags::default()
        };
        let status = if exit_code == Some(0) { EditStatus::Applied } else { EditStatus::Unknown };
        self.exec.push(match action {
            "run" => Exec::Shell(status),
            "run_ipython" => Exec::Python(status),
            _ => Exec::Tool,
        });
        for edit in step_edits(idx, action, args, obs, &observation) {
            flags.edit = true;
            flags.edit_rejected |= edit.status.is_rejection();
            self.edits.push(edit);
        }
        let thought = match action {
            "message" => message_text(e),
            "finish" => [nonempty_str(args, "thought"), nonempty_str(args, "final_thought")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n\n"),
            _ => str_field(args, "thought").unwrap_or_default(),
        };
        self.steps.push(Step {
            thought,
            action: command,
            observation,
            tool: at(meta, &["function_name"])
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| Some(action.to_string())),
            args: compact(e.get("args")),
            tokens_in: i64_field(usage, "prompt_tokens"),
            tokens_out: i64_field(usage, "completion_tokens"),
            timestamp: str_field(e, "timestamp"),
            flags,
            ..Step::default()
        });
        self.answered.push(obs.is_some());
    }

    /// An `error` observation that answers no action (the model's call could not be turned
    /// into one): it belongs to the latest step, as its observation when that step has none,
    /// else after it. Only an error before any step becomes a step of its own.
    fn attach_error(&mut self, e: &Value) {
        let text = match content_text(e.get("content")) {
            t if t.is_empty() => str_field(e, "message").unwrap_or_default(),
            t => t,
        };
        let answered = self.answered.last().copied();
        match (self.steps.last_mut(), answered) {
            (Some(step), Some(false)) => step.observation = text,
            (Some(step), _) => {
                if !step.observation.is_empty() {
                    step.observation.push_str("\n\n");
                }
                step.observation.push_str(&text);
            }
            (None, _) => {
                self.steps.push(Step { observation: text, timestamp: str_field(e, "timestamp"), ..Step::default() });
                self.answered.push(true);
                self.exec.push(Exec::Tool);
            }
        }
        if let (Some(step), Some(done)) = (self.steps.last_mut(), self.answered.last_mut()) {
            step.flags.error = true;
            step.flags.output_clipped |= markers::output_clipped(&step.observation);
            *done = true;
        }
    }
}

/// An edit's arguments. Early `oh_aci` edits (OpenHands 0.2x, January 2025) kept only `path` and
/// an empty `content` in `args`; the command and its texts are in the model's tool call
/// (`tool_call_metadata.model_response.choices[].message.tool_calls[].function.arguments`, JSON in
/// a string), which is read then: the edit is then what the agent asked for (`create` and its
/// text), not an empty replacement.
fn edit_args<'a>(e: &'a Value, action: &str, args: &'a Value) -> Cow<'a, Value> {
    if action != "edit" || args.get("command").is_some() {
        return Cow::Borrowed(args);
    }
    let meta = e.get("tool_call_metadata").unwrap_or(&Value::Null);
    let call_id = meta.get("tool_call_id").and_then(Value::as_str);
    let calls = at(meta, &["model_response", "choices"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| at(c, &["message", "tool_calls"]).and_then(Value::as_array))
        .flatten();
    let mut chosen = None;
    for call in calls {
        if call_id.is_none() || call.get("id").and_then(Value::as_str) == call_id {
            chosen = Some(call);
            break;
        }
        chosen.get_or_insert(call);
    }
    let called = chosen
        .and_then(|c| at(c, &["function", "arguments"]))
        .map(crate::ingest::json::maybe_nested_json)
        .filter(|a| a.get("command").is_some());
    match (called, args) {
        (Some(Value::Object(called)), Value::Object(given)) => {
            let mut merged = given.clone();
            merged.extend(called);
            Cow::Owned(Value::Object(merged))
        }
        (Some(called @ Value::Object(_)), _) => Cow::Owned(called),
        _ => Cow::Borrowed(args),
    }
}

/// The action as one line of text: the command for `run`, "<command> <path>" for file tools.
fn action_text(action: &str, args: &Value) -> String {
    let s = |k: &str| str_field(args, k).unwrap_or_default();
    let text = match action {
        "run" => s("command"),
        "run_ipython" => s("code"),
        "read" => {
            let range = args.get("view_range").filter(|r| r.is_array()).map(|r| format!(" {r}"));
            format!("view {}{}", s("path"), range.unwrap_or_default())
        }
        "edit" => {
            let command = nonempty_str(args, "command").unwrap_or_else(|| "edit".to_string());
            format!("{command} {}", s("path"))
        }
        "write" => format!("write {}", s("path")),
        "browse" => format!("browse {}", s("url")),
        "browse_interactive" => s("browser_actions"),
        "delegate" => format!("delegate {}", s("agent")),
        other => other.to_string(),
    };
    text.trim().to_string()
}

/// The edits a step's `edit`/`write` tool call attempted. Shell writes in a `run` are
/// reconstructed from the whole run (`analysis::reconstruct`).
pub(super) fn step_edits(idx: usize, action: &str, args: &Value, obs: Option<&Value>, observation: &str) -> Vec<Edit> {
    match action {
        "edit" | "write" => {
            let command = str_field(args, "command").unwrap_or_default();
            if command == "view" {
                return Vec::new();
            }
            let kind = match (action, command.as_str()) {
                ("write", _) | (_, "create") => EditKind::Create,
                (_, "insert") => EditKind::Insert,
                _ => EditKind::StrReplace,
            };
            // An insert replaces nothing: drawn as added lines.
            let old = if kind == EditKind::Insert { Some(String::new()) } else { str_field(args, "old_str") };
            let new = match kind {
                EditKind::Create => str_field(args, "file_text").or_else(|| str_field(args, "content")),
                _ => str_field(args, "new_str").or_else(|| nonempty_str(args, "content")),
            };
            let diff =
                obs.and_then(|o| at(o, &["extras", "diff"])).and_then(Value::as_str).filter(|d| !d.trim().is_empty());
            // `oh_aci` observations show a diff as their content and the tool's own words here.
            let tool_output = obs
                .and_then(|o| at(o, &["extras", "formatted_output_and_error"]))
                .and_then(Value::as_str)
                .map(edits::edit_status)
                .unwrap_or(EditStatus::Unknown);
            let status = match (obs, edits::edit_status(observation)) {
                (None, _) => EditStatus::Unknown,
                (Some(_), EditStatus::Unknown) if tool_output != EditStatus::Unknown => tool_output,
                (Some(_), EditStatus::Unknown) if diff.is_some() => EditStatus::Applied,
                (Some(_), s) => s,
            };
            let lint = if status == EditStatus::RejectedByLinter { edits::lint_codes(observation) } else { Vec::new() };
            let path = str_field(args, "path").unwrap_or_default();
            let mut edit = edits::edit_from_texts(Some(idx), &path, kind, status, old, new, lint);
            if kind == EditKind::Insert {
                // Inserted after the line named: where the reconstruction places it, and where
                // its diff is numbered.
                let after =
                    args.get("insert_line").and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()));
                edit.trace.lines = after.map(|n| (n as usize + 1, n as usize));
                if let (Some(n), Some(d)) = (after, edit.diff.as_deref()) {
                    edit.diff = Some(edits::diff_at_line(d, n as usize + 1));
                }
            }
            if let Some(d) = diff {
                edit.diff = Some(d.to_string());
            }
            vec![edit]
        }
        _ => Vec::new(),
    }
}

/// The run's agent as trajan names it: `openhands/` and the agent's class (or kind, in V1).
pub(super) fn agent_name(class: Option<&str>) -> String {
    match class {
        Some(c) => format!("openhands/{c}"),
        None => "openhands".to_string(),
    }
}
