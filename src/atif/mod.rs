//! ATIF, the Agent Trajectory Interchange Format (Harbor RFC 0001): the serde model trajan reads
//! (`ingest::atif`) and writes (`review::export::atif`), and the checks of a document against the
//! RFC (`validate`).
//!
//! Reading is lenient: every field but the few the RFC requires is optional, unknown fields are
//! ignored, counts written as floats (`12.0`) are read, and a message may be a string or a list
//! of content parts (v1.6; audio parts, v1.8, are named, not read). Writing emits ATIF-v1.7 and
//! leaves out every field that has no value.

pub mod ext;
pub mod map;
pub mod validate;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The version trajan writes.
pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

/// The versions documented by the RFC (v1.0 to v1.8).
pub const KNOWN_VERSIONS: &[&str] = &[
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
];

/// The root object.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Trajectory {
    #[serde(default)]
    pub schema_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// v1.7: names this trajectory among the subagent trajectories embedded beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(default)]
    pub agent: Agent,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_metrics: Option<FinalMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_trajectory_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
    /// v1.7: subagent trajectories embedded whole (kept as JSON: trajan reads the main one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_trajectories: Option<Vec<Value>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Agent {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_definitions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// Who a step comes from.
pub const SOURCES: [&str; 3] = ["system", "user", "agent"];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Step {
    #[serde(default, deserialize_with = "lenient_count")]
    pub step_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Value>,
    /// Required by the RFC, possibly empty.
    #[serde(default)]
    pub message: Content,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// v1.5: a step copied from a parent trajectory as context (its metrics counted there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_copied_context: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

impl Step {
    pub fn is_agent(&self) -> bool {
        self.source == "agent"
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ToolCall {
    #[serde(default)]
    pub tool_call_id: String,
    #[serde(default)]
    pub function_name: String,
    /// A JSON object (possibly empty); some writers store a JSON string, read as it is.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Observation {
    #[serde(default)]
    pub results: Vec<ObservationResult>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ObservationResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_trajectory_ref: Option<Vec<SubagentRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SubagentRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_number", skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FinalMetrics {
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub total_prompt_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub total_completion_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub total_cached_tokens: Option<i64>,
    #[serde(default, deserialize_with = "lenient_number", skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "lenient_count", skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// A message or an observation's content: a string, or (v1.6) a list of content parts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
    /// `null` or anything else a writer put there.
    Other(Value),
}

impl Default for Content {
    fn default() -> Content {
        Content::Text(String::new())
    }
}

impl Content {
    /// The content as text: parts joined by newlines; an image or audio part is named by its
    /// kind and file (`[image: shot.png]`), never dropped silently.
    pub fn text(&self) -> String {
        match self {
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => parts.iter().map(Part::text).collect::<Vec<_>>().join("\n"),
            Content::Other(Value::Null) => String::new(),
            Content::Other(v) => v.to_string(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Part {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
}

impl Part {
    fn text(&self) -> String {
        match (&self.text, self.kind.as_str()) {
            (Some(t), _) => t.clone(),
            (None, kind) => {
                let kind = if kind.is_empty() { "non-text" } else { kind };
                match self.source.as_ref().and_then(|s| s.get("path")).and_then(Value::as_str) {
                    Some(path) => format!("[{kind}: {path}]"),
                    None => format!("[{kind} part]"),
                }
            }
        }
    }
}

/// A count: an integer, or a float with no fraction (`12.0`), not negative; anything else is
/// absent.
fn lenient_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let count = match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9e15).map(|f| f as i64))
        }
        _ => None,
    };
    Ok(count.filter(|&n| n >= 0))
}

/// An amount: a number, not negative; a string or anything else is absent.
fn lenient_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => n.as_f64().filter(|f| f.is_finite() && *f >= 0.0),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_fields_read_and_absent_fields_are_not_written() {
        let text = r#"{"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1.0, "source": "user", "message": [{"type": "text", "text": "hi"},
            {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}}]},
            {"step_id": 2, "source": "agent", "message": null, "metrics": {"prompt_tokens": 12.0, "cost_usd": "n/a"}}]}"#;
        let t: Trajectory = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.steps[0].step_id, Some(1));
        assert_eq!(t.steps[0].message.text(), "hi\n[image: shot.png]");
        assert_eq!(t.steps[1].message.text(), "");
        let m = t.steps[1].metrics.clone().unwrap_or_default();
        assert_eq!((m.prompt_tokens, m.cost_usd), (Some(12), None));
        let out = serde_json::to_value(&t.steps[1]).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.get("reasoning_content").is_none() && out.get("tool_calls").is_none(), "{out}");
    }
}
