//! nebius/SWE-rebench-openhands-trajectories: one row per OpenHands (v0.54.0) run of
//! Qwen3-Coder-480B-A35B-Instruct on a SWE-rebench task. `trajectory` is the OpenAI chat
//! conversation (`system`, `user`, `assistant` with `tool_calls` whose `arguments` are JSON
//! strings, `tool` answers naming `tool_call_id` and the tool's `name`; every message carries
//! every field, null where it has none); `tools` the function definitions (not read);
//! `model_patch` the submission; `resolved` the verdict as an int64 (0/1);
//! `gen_tests_correct` and `pred_passes_gen_tests` (floats, often null) are kept in the
//! metadata. The model is not a column: the dataset card names it.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, kind_of, optional_str, required_list, required_str, verdict};
use serde_json::{Map, Value};
use std::path::Path;

/// The model every run of the dataset used (its card).
pub const MODEL: &str = "Qwen/Qwen3-Coder-480B-A35B-Instruct";

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let instance_id = required_str(row, "instance_id")?.to_string();
    let messages = required_list(row, "trajectory")?;
    if let Some((i, m)) = messages.iter().enumerate().find(|(_, m)| !m.is_object()) {
        return Err(RowError::new(&format!("trajectory[{i}]"), format!("expected a message, found {}", kind_of(m))));
    }
    let resolved = verdict(row, "resolved")?;
    let patch = optional_str(row, "model_patch")?.filter(|p| !p.trim().is_empty()).map(str::to_string);
    let exit_status = optional_str(row, "exit_status")?.filter(|s| !s.trim().is_empty()).map(str::to_string);
    let head = chat::Header {
        instance_id: &instance_id,
        agent: "openhands",
        model: Some(MODEL),
        submission: patch.as_deref(),
    };
    let mut run = chat::run(shard, &head, messages, Calls::Native);
    run.format_version = Some("0.54.0".into());
    run.exit_status = exit_status;
    let mut extra = Map::new();
    for key in ["trajectory_id", "repo", "gen_tests_correct", "pred_passes_gen_tests"] {
        if let Some(v) = row.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.into(), v.clone());
        }
    }
    Ok(RowRun { run, resolved, log: None, extra, ..RowRun::default() })
}
