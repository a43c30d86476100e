//! nebius/SWE-rebench-openhands-trajectories: one row per OpenHands (v0.54.0) run of
//! Qwen3-Coder-480B-A35B-Instruct on a SWE-rebench task. `trajectory` is the OpenAI chat
//! conversation (`system`, `user`, `assistant` with `tool_calls` whose `arguments` are JSON
//! strings, `tool` answers naming `tool_call_id` and the tool's `name`; every message carries
//! every field, null where it has none); `tools` the function definitions (not read);
//! `model_patch` the submission; `resolved` the verdict as an int64 (0/1);
//! `gen_tests_correct` and `pred_passes_gen_tests` (floats, often null) are kept in the
//! metadata. The model is not a column: the dataset card names it.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, messages, optional_str, required_str, verdict};
use crate::model::Run;
use serde_json::{Map, Value};
use std::path::Path;

/// The model every run of the dataset used (its card; SWE-Zero's and SWE-Hero's cards too).
pub const MODEL: &str = "Qwen/Qwen3-Coder-480B-A35B-Instruct";

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let mut run = openhands(shard, row)?;
    let resolved = verdict(row, "resolved")?;
    run.format_version = Some("0.54.0".into());
    run.exit_status = optional_str(row, "exit_status")?.filter(|s| !s.trim().is_empty()).map(str::to_string);
    let mut extra = Map::new();
    for key in ["trajectory_id", "repo", "gen_tests_correct", "pred_passes_gen_tests"] {
        if let Some(v) = row.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.into(), v.clone());
        }
    }
    Ok(RowRun { run, resolved, log: None, extra, ..RowRun::default() })
}

/// What SWE-rebench's rows and SWE-Zero's share: `instance_id`, `trajectory`'s OpenHands
/// conversation read as steps, `model_patch` the submission, the model the cards name.
pub fn openhands(shard: &Path, row: &Value) -> Result<Run, RowError> {
    let instance_id = required_str(row, "instance_id")?;
    let messages = messages(row, "trajectory")?;
    let patch = optional_str(row, "model_patch")?.filter(|p| !p.trim().is_empty());
    let head = chat::Header { instance_id, agent: "openhands", model: Some(MODEL), submission: patch };
    Ok(chat::run(shard, &head, messages, Calls::Native))
}
