//! OpenHands evaluation `output.jsonl`, event lists and `events/` folders.
//!
//! An `output.jsonl` line (or a single instance in a `.json` file) holds `instance_id`,
//! `instruction`, `history` (the event list), `test_result.git_patch`, `metrics`, `error`,
//! `instance` and `metadata`. OpenDevin's lines of 2024 name the instance `id`, keep the model in
//! `metadata.model_name` (only some lines carry `metadata`) and hold `history` as `[action,
//! observation]` pairs. Event lists (a JSON array of events, or one file per event in
//! `sessions/<sid>/events/<id>.json`) carry only the events: see `events`. The resolver's output
//! is read by `resolver`.

mod events;
pub mod resolver;
#[cfg(test)]
mod tests;
pub mod v1;

use crate::analysis::edits;
use crate::analysis::reconstruct::reconstruct;
use crate::error::{IngestError, Location};
use crate::ingest::file_name::instance_from_file_name;
use crate::ingest::json::{at, f64_field, for_each_jsonl_line, i64_field, nonempty_str, string_list};
use crate::model::{Format, Parsed, Run, Task, TestOutcome};
use serde_json::Value;
use std::path::Path;

pub(crate) use events::complete_events;

const MASK: &str = "**********";

/// Credentials OpenHands may write into `metadata.llm_config`.
const SECRET_KEYS: &[&str] = &["api_key", "aws_access_key_id", "aws_secret_access_key"];

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    parse_records(path, text, instance)
}

/// OpenHands V1 events as JSON lines (`events.jsonl`), or one event file alone.
pub fn parse_v1(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let mut conversation = v1::Conversation::default();
    let mut warnings = Vec::new();
    if path.extension().is_some_and(|e| e == "jsonl") || crate::ingest::detect::is_jsonl(text) {
        for_each_jsonl_line(path, text, &mut warnings, |_, v| {
            conversation.event(v);
            Ok(())
        })?;
    } else {
        conversation.event(crate::ingest::json::parse_value(path, text)?);
    }
    let mut parsed = conversation.finish(path, None);
    parsed.warnings.splice(0..0, warnings);
    Ok(parsed)
}

/// One line of an `output.jsonl` (for reading large files a line at a time).
pub fn parse_line(path: &Path, line: usize, v: &Value) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    instance(path, v, line)?.into_parsed(&mut parsed);
    Ok(parsed)
}

/// Reads one record (a line, an item of a list, a whole document) into an [`Instance`]; the
/// number is its 1-based line or item, 0 for a whole document.
type ReadRecord = fn(&Path, &Value, usize) -> Result<Instance, IngestError>;

/// Records as JSON lines, a JSON list of them, or one object (an event list is read as events).
fn parse_records(path: &Path, text: &str, read: ReadRecord) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    let jsonl = path.extension().is_some_and(|e| e == "jsonl") || crate::ingest::detect::is_jsonl(text);
    if !jsonl {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => {
                if items.iter().find(|i| i.is_object()).is_some_and(crate::ingest::detect::is_openhands_event) {
                    return parse_events(path, items);
                }
                for (i, item) in items.iter().enumerate() {
                    match read(path, item, i + 1) {
                        Ok(one) => one.into_parsed(&mut parsed),
                        Err(e) => parsed.warnings.push(e.to_string()),
                    }
                }
                if parsed.runs.is_empty() {
                    return Err(IngestError::shape(path, "OpenHands: no instance in the list could be read"));
                }
                return Ok(parsed);
            }
            Ok(v @ Value::Object(_)) => {
                read(path, &v, 0)?.into_parsed(&mut parsed);
                return Ok(parsed);
            }
            Ok(_) => return Err(IngestError::shape(path, "OpenHands: expected an instance object")),
            Err(e) => return Err(IngestError::json(path, &e)),
        }
    }
    let mut warnings = Vec::new();
    for_each_jsonl_line(path, text, &mut warnings, |line, v| {
        read(path, &v, line)?.into_parsed(&mut parsed);
        Ok(())
    })?;
    parsed.warnings.extend(warnings);
    Ok(parsed)
}

/// An event list: a JSON array of events, or the events of a session folder, sorted by id.
/// The instance id is the session folder's name (the parent of `events/`), else the file stem.
pub fn parse_events(path: &Path, events: Vec<Value>) -> Result<Parsed, IngestError> {
    if events.is_empty() {
        return Err(IngestError::shape(path, "OpenHands events: the event list is empty"));
    }
    let instance_id = session_id(path).unwrap_or_else(|| instance_from_file_name(path));
    let t = events::timeline(&events::normalize(&events));
    let mut parsed = Parsed::default();
    parsed.warnings.extend(t.warnings.iter().map(|w| format!("{}: {w}", path.display())));
    parsed.tasks.push(Task {
        instance_id: instance_id.clone(),
        instruction: t.first_user_message.clone().filter(|s| !s.trim().is_empty()),
        ..Task::default()
    });
    let exit_status = exit_status(None, &t);
    let mut run = Run {
        instance_id,
        format: Some(Format::OpenHandsEvents),
        format_version: t.version,
        agent: Some(events::agent_name(t.agent_class.as_deref())),
        model: t.model,
        exit_status: Some(exit_status),
        cost: t.cost,
        tokens_sent: t.tokens_sent,
        tokens_received: t.tokens_received,
        position: 0,
        steps: t.steps,
        edits: t.edits,
        history: t.history,
        ..Run::default()
    };
    reconstruct(&mut run, &t.exec);
    parsed.runs.push(run);
    Ok(parsed)
}

/// What one instance contributes.
struct Instance {
    run: Run,
    task: Task,
    outcome: Option<TestOutcome>,
    warnings: Vec<String>,
}

impl Instance {
    fn into_parsed(self, parsed: &mut Parsed) {
        parsed.runs.push(self.run);
        parsed.tasks.push(self.task);
        parsed.outcomes.extend(self.outcome);
        parsed.warnings.extend(self.warnings);
    }
}

fn shape_at(path: &Path, line: usize, message: &str) -> IngestError {
    let location = (line > 0).then_some(Location::Line(line));
    IngestError::parse(path, location, format!("OpenHands: {message}"))
}

/// One instance (an `output.jsonl` line). `line` is its 1-based line, 0 for a whole document.
fn instance(path: &Path, v: &Value, line: usize) -> Result<Instance, IngestError> {
    if !v.is_object() {
        return Err(shape_at(path, line, "an instance is not a JSON object"));
    }
    let history = history_events(v).map_err(|m| shape_at(path, line, &m))?;
    let inst = v.get("instance").filter(|i| i.is_object()).unwrap_or(&Value::Null);
    let metadata = v.get("metadata").filter(|m| m.is_object());
    let instance_id = nonempty_str(v, "instance_id")
        .or_else(|| nonempty_str(inst, "instance_id"))
        .or_else(|| id_text(v.get("id")))
        .unwrap_or_else(|| instance_from_file_name(path));
    let t = events::timeline(&history);
    let prefix = match line {
        0 => format!("{}: ", path.display()),
        n => format!("{}: line {n}: ", path.display()),
    };
    let warnings = t.warnings.iter().map(|w| format!("{prefix}{w}")).collect();

    let metrics = v.get("metrics").unwrap_or(&Value::Null);
    let usage = metrics.get("accumulated_token_usage").unwrap_or(&Value::Null);
    let submission = at(v, &["test_result", "git_patch"])
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_string);
    // A line without `metadata` names no model: it is left unknown, not borrowed from a
    // neighbouring line (OpenDevin wrote `metadata` on only some lines of a file).
    let model = metadata
        .and_then(|m| at(m, &["llm_config", "model"]).or_else(|| m.get("model_name")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(t.model.clone());
    let agent_class = metadata.and_then(|m| nonempty_str(m, "agent_class")).or(t.agent_class.clone());
    let error = nonempty_str(v, "error");
    let mut run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::OpenHands),
        format_version: t.version.clone(),
        agent: Some(events::agent_name(agent_class.as_deref())),
        model: model.clone(),
        exit_status: Some(exit_status(error.as_deref(), &t)),
        submission: submission.clone(),
        cost: f64_field(metrics, "accumulated_cost").or(t.cost),
        tokens_sent: i64_field(usage, "prompt_tokens").or(t.tokens_sent),
        tokens_received: i64_field(usage, "completion_tokens").or(t.tokens_received),
        api_calls: metrics.get("response_latencies").and_then(Value::as_array).map(|l| l.len() as i64),
        position: line as i64,
        metadata: metadata.map(|m| masked(m).to_string()),
        steps: t.steps,
        edits: t.edits,
        history: t.history,
        ..Run::default()
    };
    if let Some(patch) = &submission {
        run.edits.extend(edits::final_patch_edits(patch));
    }
    reconstruct(&mut run, &t.exec);
    let task = Task {
        instance_id: instance_id.clone(),
        instruction: nonempty_str(v, "instruction")
            .or_else(|| nonempty_str(inst, "problem_statement"))
            .or(t.first_user_message),
        gold_patch: nonempty_str(inst, "patch"),
        fail_to_pass: string_list(inst.get("FAIL_TO_PASS")),
        pass_to_pass: string_list(inst.get("PASS_TO_PASS")),
    };
    // The benchmark's grading: SWE-bench's report, or the `result` a 2024 benchmark script wrote
    // by comparing the final answer with the expected one.
    let verdict = at(v, &["test_result", "report", "resolved"])
        .or_else(|| at(v, &["test_result", "result"]))
        .and_then(Value::as_bool);
    let outcome = verdict.map(|resolved| TestOutcome {
        instance_id,
        format: Some(Format::OpenHands),
        model,
        resolved: Some(resolved),
        ..TestOutcome::default()
    });
    Ok(Instance { run, task, outcome, warnings })
}

/// The events of an instance's `history` (see [`events::normalize`]). A history that holds items
/// but no event is an error saying what it holds: reading it as no step would lose the run
/// without a word.
fn history_events(v: &Value) -> Result<std::borrow::Cow<'_, [Value]>, String> {
    let history = match v.get("history") {
        Some(Value::Array(h)) => h.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err("`history` is not a list of events".to_string()),
    };
    let events = events::normalize(history);
    if !history.is_empty() && !events.iter().any(events::is_event) {
        let first = match &history[0] {
            Value::Object(m) => {
                format!("an object with keys [{}]", m.keys().take(8).cloned().collect::<Vec<_>>().join(", "))
            }
            Value::Array(_) => "a list that holds no event".to_string(),
            other => format!("{other}").chars().take(40).collect(),
        };
        let items = match history.len() {
            1 => "1 item".to_string(),
            n => format!("{n} items"),
        };
        return Err(format!(
            "`history` holds {items} and none is an OpenHands event (an object with `action` or `observation`); the first is {first}"
        ));
    }
    Ok(events)
}

/// An id as text: a string, or a number.
fn id_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The run's `error` (its first line) when there is one; else "finished" after a `finish`
/// action; else the last agent state a session recorded; else "stopped".
fn exit_status(error: Option<&str>, t: &events::Timeline) -> String {
    if let Some(first) = error.and_then(|e| e.lines().map(str::trim).find(|l| !l.is_empty())) {
        return first.to_string();
    }
    if t.finished {
        return "finished".to_string();
    }
    t.agent_state.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "stopped".to_string())
}

/// `metadata` with the credentials in `llm_config` masked.
fn masked(metadata: &Value) -> Value {
    let mut m = metadata.clone();
    if let Some(Value::Object(cfg)) = m.get_mut("llm_config") {
        for key in SECRET_KEYS {
            match cfg.get_mut(*key) {
                Some(Value::Null) | None => {}
                Some(Value::String(s)) if s == MASK => {}
                Some(other) => *other = Value::String(MASK.to_string()),
            }
        }
    }
    m
}

/// `sessions/<sid>/events` (the folder unit) or `sessions/<sid>/events/<id>.json` -> `<sid>`.
fn session_id(path: &Path) -> Option<String> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let events_dir = if name(path).as_deref() == Some("events") {
        path
    } else {
        path.parent().filter(|p| name(p).as_deref() == Some("events"))?
    };
    events_dir.parent().and_then(name).filter(|s| !s.is_empty())
}
