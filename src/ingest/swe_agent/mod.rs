//! SWE-agent `.traj` files: 0.x, 1.0, 1.1+ and RetryAgent `attempts`.
//!
//! Parsed with typed structs that borrow from the file text. Each step's prompt (`messages` in
//! 1.0, `query` in 1.1+) is kept as raw JSON slices, hashed and delta-encoded against the
//! previous step's prompt, so the quadratic part of the file is never built as values.

mod actions;
mod args;
pub(crate) mod chat;
mod doc;

pub(crate) use doc::SweDoc;

use crate::analysis::reconstruct::Exec;
use crate::analysis::{edits, markers};
use crate::error::IngestError;
use crate::ingest::json::{content_text, f64_field, i64_field, str_field};
use crate::ingest::stream_doc::{Collect, Ending, ReadError, StepSink};
use crate::model::{EditStatus, Format, Message, Parsed, QueryDelta, QueryMessage, Run, Step, StepFlags, Task};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One step as the file writes it. `Q` is how a prompt message is held: a slice of the file's
/// text (`&RawValue`) when the whole file is in memory, a copy (`Box<RawValue>`) when it is read
/// from disk a step at a time.
#[derive(Deserialize)]
#[serde(bound(deserialize = "Q: Deserialize<'de>"))]
struct StepIn<Q> {
    #[serde(default, deserialize_with = "lenient_string")]
    action: String,
    #[serde(default, deserialize_with = "lenient_string")]
    observation: String,
    #[serde(default, deserialize_with = "lenient_string")]
    response: String,
    #[serde(default, deserialize_with = "lenient_string")]
    thought: String,
    #[serde(default, deserialize_with = "lenient_f64")]
    execution_time: Option<f64>,
    #[serde(default)]
    state: Option<Value>,
    #[serde(default)]
    query: Option<Vec<Q>>,
    #[serde(default)]
    messages: Option<Vec<Q>>,
}

/// A number that forks sometimes write as a string, or leave null.
fn lenient_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// A string field that may also be null, a number, or (in forks) a structured value.
fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// Parse a whole file: the document is read as [`doc::SweDoc`] reads it from disk, its steps
/// collected in memory.
pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let mut sink = Collect::default();
    let ending = read(path, text, &mut sink, |sink| *sink = Collect::default()).map_err(|e| match e {
        ReadError::Invalid(e) => e,
        ReadError::Stopped | ReadError::Whole(_) => IngestError::shape(path, "SWE-agent: unexpected layout"),
    })?;
    Ok(sink.finish(ending))
}

/// Read a whole file's text a step at a time into `sink`; what the document says at its end.
/// A top-level `trajectory` before a RetryAgent's `attempts` is read again without it (the
/// attempts are the runs): `restart` first makes the sink forget the steps it was handed.
pub fn read<S: StepSink>(
    path: &Path,
    text: &str,
    sink: &mut S,
    restart: impl FnOnce(&mut S),
) -> Result<Ending, ReadError> {
    match doc::read_text(path, text, false, sink) {
        Err(ReadError::Whole(_)) => {
            restart(sink);
            doc::read_text(path, text, true, sink)
        }
        other => other,
    }
}

/// A run's submission as its `info` gives it (none when blank).
fn submission_of(info: &Value) -> Option<String> {
    str_field(info, "submission").filter(|s| !s.trim().is_empty())
}

/// The submission of a document's one run, read from its `info` before its steps are (a skim
/// of `text` finds the member, wherever it is): what a reconstruction made as the steps come
/// assumes (`stream_doc::replay::Alongside`; the document's end then tells whether it holds).
/// `None` for a document of RetryAgent attempts, or none found.
pub fn submission_ahead(text: &str) -> Option<Option<String>> {
    let skim = crate::ingest::stream_doc::skim::skim_bytes(text.as_bytes(), &[]).ok()?;
    if skim.member("attempts").is_some() || skim.member("trajectory").is_none() {
        return None;
    }
    let Some(info) = skim.member("info") else { return Some(None) };
    let info = text.get(usize::try_from(info.start).ok()?..usize::try_from(info.end).ok()?)?;
    Some(submission_of(&serde_json::from_str(info).ok()?))
}

/// The model of a replay config: `agent.model.name`, or for a RetryAgent config
/// (`agent.type: retry`) the attempt's entry of `agent.agent_configs` (the first when the
/// attempts outnumber the configs, as SWE-agent cycles through them).
fn model_name(replay: Option<&Value>, attempt: Option<usize>) -> Option<String> {
    let agent = replay?.get("agent")?;
    let direct = agent.get("model").and_then(|m| m.get("name")).and_then(Value::as_str);
    let configs = agent.get("agent_configs").and_then(Value::as_array).filter(|c| !c.is_empty());
    let from_configs = configs.and_then(|c| {
        let i = attempt.unwrap_or(0) % c.len();
        c[i].get("model").and_then(|m| m.get("name")).and_then(Value::as_str)
    });
    direct.or(from_configs).map(str::to_string)
}

/// What a run is known by before its steps are read.
fn run_head(instance_id: &str, attempt: Option<usize>) -> Run {
    Run {
        instance_id: instance_id.to_string(),
        format: Some(Format::SweAgent),
        agent: Some("swe-agent".to_string()),
        attempt: attempt.map(|a| a as i64),
        position: attempt.unwrap_or(0) as i64,
        ..Run::default()
    }
}

/// A run's fields once its steps, history and info are read (its steps went to the sink); the
/// final patch's edits in `edits`.
fn run_fields(
    instance_id: &str,
    steps: &RunSteps,
    history: &History,
    info: &Value,
    model: Option<String>,
    attempt: Option<usize>,
) -> Run {
    let stats = info.get("model_stats").cloned().unwrap_or(Value::Null);
    let version = str_field(info, "swe_agent_version").unwrap_or_else(|| steps.version());
    let submission = submission_of(info);
    let mut run = Run {
        format_version: Some(version),
        model,
        // An interrupted run leaves an empty exit status: unknown, not "".
        exit_status: str_field(info, "exit_status").filter(|s| !s.trim().is_empty()),
        submission: submission.clone(),
        cost: f64_field(&stats, "instance_cost"),
        tokens_sent: i64_field(&stats, "tokens_sent"),
        tokens_received: i64_field(&stats, "tokens_received"),
        api_calls: i64_field(&stats, "api_calls"),
        // The conversation up to the first model turn (system prompt, demonstrations, the task);
        // later messages repeat the steps' text, and 1.x prompts keep them all anyway.
        history: history.prefix.clone(),
        ..run_head(instance_id, attempt)
    };
    if let Some(sub) = &submission {
        run.edits.extend(edits::final_patch_edits(sub));
    }
    run
}

/// A run's steps, built one at a time as they are read. A step is built once the next one is
/// read (or the list ends): 0.x records the state before the action, so a step's state is the
/// next step's, and an empty action is a format error unless it is the last step.
#[derive(Default)]
struct RunSteps {
    prompts: PromptDedup,
    /// Steps built so far.
    count: usize,
    /// Open file and working directory after the step built last.
    after: Option<(Option<String>, Option<String>)>,
    /// States are recorded before the action (0.x, a JSON string): decided by the first step
    /// that has a state.
    recorded_before: Option<bool>,
    /// Any step carries `query` (1.1), `messages` or `execution_time` (1.0).
    has_query: bool,
    has_messages_or_time: bool,
}

impl RunSteps {
    /// Note what the step tells of the version and of how states are recorded.
    fn observe<Q>(&mut self, s: &StepIn<Q>) {
        self.has_query |= s.query.is_some();
        self.has_messages_or_time |= s.messages.is_some() || s.execution_time.is_some();
        if self.recorded_before.is_none() && s.state.is_some() {
            self.recorded_before = Some(matches!(s.state, Some(Value::String(_))));
        }
    }

    /// The version when `info` does not name it.
    fn version(&self) -> String {
        if self.has_query {
            "1.1".to_string()
        } else if self.has_messages_or_time {
            "1.0".to_string()
        } else if self.recorded_before == Some(true) {
            "0.x".to_string()
        } else {
            "unknown".to_string()
        }
    }

    /// Build step `s`, the one after it being `next` (`None`: `s` is the last).
    fn build<Q: std::ops::Deref<Target = RawValue>>(
        &mut self,
        s: StepIn<Q>,
        next: Option<&StepIn<Q>>,
    ) -> (Step, Vec<crate::model::Edit>, Exec) {
        let idx = self.count;
        self.count += 1;
        let own = read_state(s.state.as_ref());
        let (open_file, working_dir) = match (self.recorded_before, next) {
            (Some(true), Some(n)) => read_state(n.state.as_ref()),
            _ => own,
        };
        let action = s.action.trim_end_matches('\n').to_string();
        // The file an edit applies to is the one open before the action ran.
        let open_before = match self.after.take() {
            None => open_file.clone(),
            Some((before, _)) => before.or_else(|| open_file.clone()),
        };
        let parsed_action = actions::parse_action(&action, open_before.as_deref(), working_dir.as_deref());
        let how = match parsed_action.tool.as_deref() {
            Some("bash") => Exec::Shell(actions::shell_status(&s.observation)),
            _ => Exec::Tool,
        };
        let mut flags = StepFlags {
            output_clipped: markers::output_clipped(&s.observation),
            test_run: markers::runs_tests(&action),
            ..StepFlags::default()
        };
        let is_exit = s.observation.starts_with("Exited") || s.response.starts_with("Exit due to");
        flags.format_error = action.trim().is_empty() && !is_exit && next.is_some();
        flags.error = !action.trim().is_empty() && markers::looks_like_error(&s.observation);
        let mut made = Vec::new();
        for proposed in parsed_action.edits {
            let status = proposed.status_from(&s.observation);
            flags.edit = true;
            flags.edit_rejected |= status.is_rejection();
            let lint =
                if status == EditStatus::RejectedByLinter { edits::lint_codes(&s.observation) } else { Vec::new() };
            let mut edit = edits::edit_from_texts(
                Some(idx),
                &proposed.path,
                proposed.kind,
                status,
                proposed.old_text,
                proposed.new_text,
                lint,
            );
            if let (Some((start, _)), Some(d)) = (proposed.lines, edit.diff.as_deref()) {
                edit.diff = Some(edits::diff_at_line(d, start));
            }
            edit.trace.lines = proposed.lines;
            made.push(edit);
        }
        let query = s.query.as_deref().or(s.messages.as_deref()).map(|q| self.prompts.delta(q));
        let response = (!s.response.is_empty() && s.response != s.thought).then_some(s.response);
        self.after = Some((open_file.clone(), working_dir.clone()));
        let step = Step {
            thought: s.thought,
            action,
            observation: s.observation,
            response,
            tool: parsed_action.tool,
            args: parsed_action.args.map(|a| a.to_string()),
            execution_time: s.execution_time,
            open_file,
            working_dir,
            flags,
            query,
            ..Step::default()
        };
        (step, made, how)
    }
}

/// Step `k` of a trajectory read out of order (`stream_doc::index`), from its element, the one
/// before it (the file open before its action) and the one after (a 0.x state, a format error).
/// `first_state`: the first element with a `state`, and whether that is a string (0.x), which
/// decides how states are recorded for every step built once that element is read.
pub(crate) fn step_between(
    prev: Option<&[u8]>,
    this: &[u8],
    next: Option<&[u8]>,
    k: usize,
    first_state: Option<(usize, bool)>,
) -> Result<(Step, Vec<crate::model::Edit>), serde_json::Error> {
    let parse = |t: &[u8]| serde_json::from_slice::<StepIn<Box<RawValue>>>(t);
    // As the reading decides it: from the steps read when step `j` is built (up to `j + 1`).
    let recorded_before = |j: usize| first_state.filter(|(at, _)| *at <= j + 1).map(|(_, string)| string);
    let this = parse(this)?;
    let next = next.map(parse).transpose()?;
    let mut steps = RunSteps::default();
    if let (Some(prev), Some(before)) = (prev, k.checked_sub(1)) {
        steps.count = before;
        steps.recorded_before = recorded_before(before);
        steps.build(parse(prev)?, Some(&this));
    }
    steps.count = k;
    steps.recorded_before = recorded_before(k);
    let (step, edits, _) = steps.build(this, next.as_ref());
    Ok((step, edits))
}

/// `state` is a JSON string in 0.x and a dict in 1.x; "n/a" means no open file.
fn read_state(state: Option<&Value>) -> (Option<String>, Option<String>) {
    let Some(state) = state else { return (None, None) };
    let state = crate::ingest::json::maybe_nested_json(state);
    let get = |k: &str| str_field(&state, k).map(|s| s.trim().to_string()).filter(|s| !s.is_empty() && s != "n/a");
    (get("open_file"), get("working_dir"))
}

fn history_message(m: &Value) -> Message {
    Message::from_value(m)
}

/// The task: the problem statement from `replay_config` when present, else the issue text cut
/// out of the first non-demonstration user message of the history.
fn task_of(instance_id: &str, history: &History, replay: Option<&Value>) -> Option<Task> {
    let from_replay = replay
        .and_then(|r| crate::ingest::json::at(r, &["problem_statement", "text"]))
        .and_then(Value::as_str)
        .map(str::to_string);
    let instruction =
        from_replay.or_else(|| history.first_user.as_ref().map(|m| extract_issue(&content_text(m.get("content")))))?;
    Some(Task { instance_id: instance_id.to_string(), instruction: Some(instruction), ..Task::default() })
}

/// What a run keeps of its `history` (read a message at a time): the messages before the first
/// model turn, and the first user message that is not a demonstration (the task).
#[derive(Default)]
struct History {
    prefix: Vec<Message>,
    /// An assistant message has been read: the prefix is complete.
    prefix_done: bool,
    first_user: Option<Value>,
}

impl History {
    fn push(&mut self, m: Value) {
        let role = m.get("role").and_then(Value::as_str);
        if !self.prefix_done {
            if role == Some("assistant") {
                self.prefix_done = true;
            } else {
                self.prefix.push(history_message(&m));
            }
        }
        if self.first_user.is_none() && role == Some("user") && m.get("is_demo").and_then(Value::as_bool) != Some(true)
        {
            self.first_user = Some(m);
        }
    }
}

fn extract_issue(prompt: &str) -> String {
    for (start, end) in [
        ("ISSUE:\n", "\n\nINSTRUCTIONS:"),
        ("<pr_description>\n", "\n</pr_description>"),
        ("<issue_description>\n", "\n</issue_description>"),
    ] {
        if let Some(a) = prompt.find(start) {
            let body = &prompt[a + start.len()..];
            return body.find(end).map(|b| &body[..b]).unwrap_or(body).trim().to_string();
        }
    }
    prompt.to_string()
}

/// Hashes prompt messages and encodes each step's prompt against the previous one.
#[derive(Default)]
struct PromptDedup {
    seen: HashMap<[u8; 16], Arc<str>>,
    previous: Vec<[u8; 16]>,
}

impl PromptDedup {
    fn delta<Q: std::ops::Deref<Target = RawValue>>(&mut self, messages: &[Q]) -> QueryDelta {
        let hashes: Vec<[u8; 16]> = messages.iter().map(|m| hash16(m.get())).collect();
        let keep = hashes.iter().zip(&self.previous).take_while(|(a, b)| a == b).count();
        let append = messages[keep..]
            .iter()
            .zip(&hashes[keep..])
            .map(|(m, h)| QueryMessage {
                hash: *h,
                raw: self.seen.entry(*h).or_insert_with(|| Arc::from(m.get())).clone(),
            })
            .collect();
        self.previous = hashes;
        QueryDelta { keep, append }
    }
}

pub fn hash16(text: &str) -> [u8; 16] {
    let full = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&full.as_bytes()[..16]);
    out
}

/// A path relative to the working directory, made absolute so edits to one file agree.
pub fn resolve(path: &str, working_dir: Option<&str>) -> String {
    match working_dir {
        Some(wd) if !path.starts_with('/') => {
            let p = path.trim_start_matches("./");
            format!("{}/{}", wd.trim_end_matches('/'), p)
        }
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests;
