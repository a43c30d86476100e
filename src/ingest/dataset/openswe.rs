//! nvidia/Open-SWE-Traces: one row per run of OpenHands or SWE-agent (both with function calling)
//! driven by MiniMax-M2.5 or Qwen3.5-122B-A10B on a SWE-rebench-V2 task, in nine languages.
//! Columns (the dataset viewer): `instance_id`, `repo`, `license`, `language`, `trajectory_id`
//! (a UUID), `messages` (OpenAI chat messages, the first the agent's system prompt), `tools` (the
//! four function definitions, each a JSON string; not read), `resolved` (int32: 1, 0, or -1 when
//! the run was not judged), `metadata` (a struct: `category`, `reference_patch` (the task's gold
//! patch, not the run's), `teacher_model` (`name`, `enable_thinking`, `reasoning_effort`)) and
//! `hf_dataset_name` (the task's dataset, `nebius/SWE-rebench-V2`).
//!
//! The run's own patch is no column of the published schema: the run has no submission, its
//! edits are the ones its tool calls made. The agent is told by the system prompt (OpenHands
//! introduces itself), the model by `metadata.teacher_model.name`.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, kind_of, messages, optional_str, required_str};
use serde_json::{Map, Value};
use std::path::Path;

/// `resolved`: 1 resolved, 0 not, -1 not judged (no verdict); null is no verdict either.
pub fn verdict(row: &Value) -> Result<Option<bool>, RowError> {
    match row.get("resolved") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(1) => Ok(Some(true)),
            Some(0) => Ok(Some(false)),
            Some(-1) => Ok(None),
            _ => Err(RowError::new("resolved", format!("expected 1, 0 or -1, found {n}"))),
        },
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(RowError::new("resolved", format!("expected 1, 0 or -1, found {}", kind_of(other)))),
    }
}

/// The agent a conversation's system prompt names: OpenHands says "You are OpenHands agent";
/// the other harness of the dataset is SWE-agent.
pub fn agent(messages: &[Value]) -> &'static str {
    let system = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .map(|m| crate::model::flatten_content(m.get("content")))
        .unwrap_or_default();
    if system.contains("OpenHands") { "openhands" } else { "swe-agent" }
}

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let instance_id = required_str(row, "instance_id")?.to_string();
    let messages = messages(row, "messages")?;
    let resolved = verdict(row)?;
    let meta = match row.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => return Err(RowError::new("metadata", format!("expected a struct, found {}", kind_of(other)))),
    };
    let teacher = meta.and_then(|m| m.get("teacher_model"));
    let model = teacher.and_then(|t| t.get("name")).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let agent = agent(messages);
    let head = chat::Header { instance_id: &instance_id, agent, model, submission: None };
    let mut run = chat::run(shard, &head, messages, Calls::Native);
    run.model = model.map(str::to_string);
    let mut extra = Map::new();
    for key in ["trajectory_id", "repo", "language", "license", "hf_dataset_name"] {
        if let Some(v) = optional_str(row, key)? {
            extra.insert(key.into(), v.into());
        }
    }
    if let Some(c) = meta.and_then(|m| m.get("category")).filter(|v| !v.is_null()) {
        extra.insert("category".into(), c.clone());
    }
    if let Some(t) = teacher.filter(|v| !v.is_null()) {
        extra.insert("teacher_model".into(), t.clone());
    }
    if row.get("resolved").and_then(Value::as_i64) == Some(-1) {
        extra.insert("not_judged".into(), true.into());
    }
    Ok(RowRun { run, resolved, log: None, extra, ..RowRun::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn minus_one_is_no_verdict_and_other_numbers_are_errors() {
        assert_eq!(verdict(&json!({"resolved": 1})), Ok(Some(true)));
        assert_eq!(verdict(&json!({"resolved": 0})), Ok(Some(false)));
        assert_eq!(verdict(&json!({"resolved": -1})), Ok(None));
        assert_eq!(verdict(&json!({"resolved": null})), Ok(None));
        assert!(verdict(&json!({"resolved": 2})).is_err());
        assert!(verdict(&json!({"resolved": "1"})).is_err());
    }

    #[test]
    fn the_agent_is_told_by_the_system_prompt() {
        let oh = [json!({"role": "system", "content": "You are OpenHands agent, a helpful AI assistant"})];
        assert_eq!(agent(&oh), "openhands");
        let sa =
            [json!({"role": "system", "content": "You are a helpful assistant that can interact with a computer"})];
        assert_eq!(agent(&sa), "swe-agent");
    }
}
