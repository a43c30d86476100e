//! `export run RUN --format atif`: a run as an ATIF-v1.7 trajectory (Harbor RFC 0001), and its
//! labels as a sidecar keyed by trajectory and step.
//!
//! The history (system prompt, demonstrations, task) comes first as system and user steps, then
//! one agent step per trajan step: the thought as the message, the action as one tool call (its
//! structured arguments when the format kept them, else `{"command": action}`), the observation
//! as that call's result, the tokens as metrics. What ATIF has no place for, or what reading the
//! standard fields back (`atif::map`) would not give, goes under `extra.trajan`, so that
//! ingesting the file again gives the run it was.

use crate::atif::{self, Agent, Content, FinalMetrics, Metrics, Observation, ObservationResult, ToolCall, Trajectory};
use crate::model::Message;
use crate::store::export::RunRest;
use crate::store::read::{RunDetail, StepRow};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The trajectory of a run.
pub fn trajectory(run: &RunDetail, rest: &RunRest) -> Trajectory {
    let s = &run.summary;
    let id = format!("trajan-{}-{}", s.instance_id, s.id);
    let mut steps: Vec<atif::Step> = rest.history.iter().map(history_step).collect();
    steps.extend(run.step_list.iter().map(|row| agent_step(row, s.model.as_deref())));
    for (i, step) in steps.iter_mut().enumerate() {
        step.step_id = Some(i as i64 + 1);
    }
    let mut ext = Map::new();
    ext.insert("instance_id".into(), json!(s.instance_id));
    ext.insert("format".into(), json!(s.format));
    // Every field of the run, absent ones as null: a null says "none", where an absent key
    // would let the reading fill it in (a version from `schema_version`, tokens summed over steps).
    put(&mut ext, "format_version", &s.format_version);
    if s.agent.is_none() {
        ext.insert("agent".into(), Value::Null);
    }
    put(&mut ext, "exit_status", &s.exit_status);
    put(&mut ext, "submission", &run.submission);
    put(&mut ext, "cost", &s.cost);
    put(&mut ext, "tokens_sent", &run.usage.tokens_sent);
    put(&mut ext, "tokens_received", &run.usage.tokens_received);
    put(&mut ext, "api_calls", &run.usage.api_calls);
    put(&mut ext, "attempt", &s.attempt);
    put(&mut ext, "best_attempt", &rest.best_attempt);
    put(&mut ext, "metadata", &rest.metadata);
    ext.insert(
        "edits".into(),
        serde_json::to_value(rest.edits.iter().map(atif::ext::EditExt::from_edit).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    let mut extra = Map::new();
    extra.insert("instance_id".into(), json!(s.instance_id));
    if let Some(resolved) = s.resolved {
        extra.insert("resolved".into(), json!(resolved));
    }
    extra.insert(atif::ext::KEY.into(), Value::Object(ext));
    let total_steps = steps.len() as i64;
    Trajectory {
        schema_version: atif::SCHEMA_VERSION.to_string(),
        session_id: Some(id.clone()),
        trajectory_id: Some(id),
        agent: Agent {
            name: s.agent.clone().unwrap_or_else(|| "unknown".to_string()),
            version: s.format_version.clone().unwrap_or_default(),
            model_name: s.model.clone(),
            ..Agent::default()
        },
        steps,
        notes: Some(format!("Exported by trajan from a {} run ({}).", s.format, s.source)),
        final_metrics: Some(FinalMetrics {
            total_prompt_tokens: run.usage.tokens_sent,
            total_completion_tokens: run.usage.tokens_received,
            total_cost_usd: s.cost,
            total_steps: Some(total_steps),
            ..FinalMetrics::default()
        }),
        extra: Some(extra),
        ..Trajectory::default()
    }
}

fn put<T: Serialize>(map: &mut Map<String, Value>, key: &str, v: &Option<T>) {
    map.insert(key.into(), v.as_ref().and_then(|v| serde_json::to_value(v).ok()).unwrap_or(Value::Null));
}

fn history_step(m: &Message) -> atif::Step {
    let source = if m.role == "system" { "system" } else { "user" };
    let mut ext = Map::new();
    if m.role != source {
        ext.insert("role".into(), json!(m.role));
    }
    if let Some(extra) = &m.extra {
        ext.insert("extra".into(), json!(extra));
    }
    atif::Step {
        source: source.to_string(),
        message: Content::Text(m.content.clone()),
        extra: (!ext.is_empty()).then(|| Map::from_iter([(atif::ext::KEY.to_string(), Value::Object(ext))])),
        ..atif::Step::default()
    }
}

fn agent_step(row: &StepRow, model: Option<&str>) -> atif::Step {
    let call_id = format!("call_{}", row.index);
    let has_call = !row.action.is_empty() || row.tool.is_some();
    let arguments = match &row.args {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({ "command": row.action }),
    };
    let mut step = atif::Step {
        source: "agent".to_string(),
        timestamp: row.timestamp.clone().filter(|t| is_iso(t)),
        model_name: model.map(str::to_string),
        message: Content::Text(row.thought.clone()),
        tool_calls: has_call.then(|| {
            vec![ToolCall {
                tool_call_id: call_id.clone(),
                function_name: row.tool.clone().unwrap_or_else(|| "bash".to_string()),
                arguments,
                extra: None,
            }]
        }),
        observation: (has_call || !row.observation.is_empty()).then(|| Observation {
            results: vec![ObservationResult {
                source_call_id: has_call.then(|| call_id.clone()),
                content: Some(Content::Text(row.observation.clone())),
                ..ObservationResult::default()
            }],
        }),
        metrics: (row.tokens_in.is_some() || row.tokens_out.is_some()).then(|| Metrics {
            prompt_tokens: row.tokens_in,
            completion_tokens: row.tokens_out,
            ..Metrics::default()
        }),
        ..atif::Step::default()
    };
    // What reading the standard fields would give, against what the step is.
    let read = atif::map::agent_step(&step);
    let read_args = read.args.as_deref().and_then(|a| serde_json::from_str::<Value>(a).ok());
    let args = |a: Option<&Value>| a.map_or(Value::Null, |a| json!(a.to_string()));
    let fields = [
        ("thought", json!(read.thought), json!(row.thought)),
        ("action", json!(read.action), json!(row.action)),
        ("observation", json!(read.observation), json!(row.observation)),
        ("response", json!(read.response), json!(row.response)),
        ("tool", json!(read.tool), json!(row.tool)),
        ("args", args(read_args.as_ref()), args(row.args.as_ref())),
        ("timestamp", json!(read.timestamp), json!(row.timestamp)),
        ("open_file", json!(read.open_file), json!(row.open_file)),
        ("working_dir", json!(read.working_dir), json!(row.working_dir)),
        ("execution_time", json!(read.execution_time), json!(row.execution_time)),
    ];
    let mut ext: Map<String, Value> =
        fields.into_iter().filter(|(_, got, want)| got != want).map(|(k, _, want)| (k.to_string(), want)).collect();
    ext.insert("flags".into(), json!(row.flags.bits()));
    step.extra = Some(Map::from_iter([(atif::ext::KEY.to_string(), Value::Object(ext))]));
    step
}

/// An ISO 8601 time the RFC accepts (with or without a zone).
fn is_iso(t: &str) -> bool {
    use time::format_description::well_known::{Iso8601, Rfc3339};
    time::OffsetDateTime::parse(t, &Rfc3339).is_ok() || time::PrimitiveDateTime::parse(t, &Iso8601::DEFAULT).is_ok()
}

/// The labels sidecar: the trajectory it belongs to, each label whole, and each piece of evidence
/// keyed by the ATIF `step_id` it points at (and the trajan step index).
#[derive(Debug, Serialize)]
pub struct Sidecar<'a> {
    pub trajectory_id: Option<String>,
    pub session_id: Option<String>,
    pub instance_id: &'a str,
    pub labels: &'a [super::ExportedLabel],
    pub steps: Vec<StepLabel>,
}

#[derive(Debug, Serialize)]
pub struct StepLabel {
    pub step_id: i64,
    pub trajan_step: usize,
    pub label_id: i64,
    pub rater: String,
    pub mode: String,
    pub note: Option<String>,
}

pub fn sidecar<'a>(t: &Trajectory, instance_id: &'a str, labels: &'a [super::ExportedLabel]) -> Sidecar<'a> {
    // trajan step i is the i-th agent step.
    let ids: Vec<i64> = t.steps.iter().filter(|s| s.is_agent()).filter_map(|s| s.step_id).collect();
    let mut steps = Vec::new();
    for l in labels {
        for m in &l.label.modes {
            for e in &m.evidence {
                if let Some(step_id) = ids.get(e.step) {
                    steps.push(StepLabel {
                        step_id: *step_id,
                        trajan_step: e.step,
                        label_id: l.label_id,
                        rater: l.label.rater.clone(),
                        mode: m.mode.clone(),
                        note: Some(e.note.clone()).filter(|n| !n.is_empty()),
                    });
                }
            }
        }
    }
    steps.sort_by_key(|s| (s.step_id, s.label_id));
    Sidecar { trajectory_id: t.trajectory_id.clone(), session_id: t.session_id.clone(), instance_id, labels, steps }
}

/// The document as JSON text (C1 controls escaped, as every export).
pub fn to_json<T: Serialize>(v: &T) -> Result<String, super::ExportError> {
    super::json(v, true).map(|t| t + "\n")
}
