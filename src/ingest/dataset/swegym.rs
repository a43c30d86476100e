//! SWE-Gym/OpenHands-Sampled-Trajectories: one row per OpenHands (CodeActAgent with function
//! calling) run of gpt-4o-2024-08-06 or claude-3-5-sonnet-20241022 on a SWE-Gym task, in the
//! split `train.raw` (shards `train.raw-0000N-of-00003.parquet`). Columns: `instance_id`,
//! `run_id` (the sampling run: `<model>_maxiter_30_N_v2.1-no-hint-train-t04-run_1`), `resolved`
//! (bool), `messages` (OpenAI chat messages; every message carries `content`, `function_call`
//! (always null), `name`, `role`, `tool_call_id`, `tool_calls`, whose calls carry `index`;
//! answers start `OBSERVATION:`), `tools` (the function definitions; not read) and
//! `test_result` (the evaluation: a struct; its `git_patch` is the submission when it has one).
//! One instance is sampled several times: each row is its own run, with its own verdict.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, kind_of, messages, optional_str, required_str, verdict};
use serde_json::{Map, Value};
use std::path::Path;

/// The model a `run_id` names: the text before `_maxiter_` (`gpt-4o-2024-08-06_maxiter_30_N_...`).
pub fn model_of_run_id(run_id: &str) -> Option<&str> {
    run_id.split_once("_maxiter_").map(|(m, _)| m).filter(|m| !m.trim().is_empty())
}

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let instance_id = required_str(row, "instance_id")?.to_string();
    let messages = messages(row, "messages")?;
    let resolved = verdict(row, "resolved")?;
    let run_id = optional_str(row, "run_id")?;
    let test_result = match row.get("test_result") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => {
            return Err(RowError::new("test_result", format!("expected a struct, found {}", kind_of(other))));
        }
    };
    let patch = test_result
        .and_then(|t| t.get("git_patch"))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_string);
    let model = run_id.and_then(model_of_run_id);
    let head = chat::Header { instance_id: &instance_id, agent: "openhands", model, submission: patch.as_deref() };
    let mut run = chat::run(shard, &head, messages, Calls::Native);
    run.model = model.map(str::to_string);
    let mut extra = Map::new();
    if let Some(id) = run_id {
        extra.insert("run_id".into(), id.into());
    }
    Ok(RowRun { run, resolved, log: None, extra, ..RowRun::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_read_off_the_run_id() {
        assert_eq!(
            model_of_run_id("gpt-4o-2024-08-06_maxiter_30_N_v2.1-no-hint-train-t04-run_1"),
            Some("gpt-4o-2024-08-06")
        );
        assert_eq!(model_of_run_id("run_1"), None);
        assert_eq!(model_of_run_id("_maxiter_30"), None);
    }
}
