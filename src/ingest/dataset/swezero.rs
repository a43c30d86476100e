//! nvidia/SWE-Zero-openhands-trajectories and nvidia/SWE-Hero-openhands-trajectories (one
//! schema, `data/*.parquet`, CC-BY-4.0): one row per OpenHands run of
//! Qwen3-Coder-480B-A35B-Instruct (the cards: 350k runs in SWE-Zero, 34k in SWE-Hero) on a task
//! of SWE-Gym, SWE-Gym-Raw, R2E-Gym-Subset, SWE-Fixer-Train-110K or SWE-rebench, the one the
//! `dataset` column names. Columns (the cards' `dataset_info`): `instance_id`, `repo`,
//! `license`, `trajectory_id`, `trajectory` (OpenAI chat messages with tool calls, `arguments`
//! as JSON strings, read as SWE-rebench's are: [`rebench::openhands`]), `model_patch` (the
//! submission), `dataset`. The card's first revision had no `name` and `tool_call_id` in a
//! message: a tool answer that names no call answers the call waiting for one.
//!
//! There is no verdict column (the runs were gathered for fine-tuning, not judged in the rows):
//! a run has no verdict, and none is made up. `dataset` (kept as `task_source`), `repo`,
//! `trajectory_id` and `license` go into the run's metadata.

use super::rebench;
use super::row::{RowError, RowRun, optional_str};
use serde_json::{Map, Value};
use std::path::Path;

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let run = rebench::openhands(shard, row)?;
    let mut extra = Map::new();
    for (column, key) in
        [("dataset", "task_source"), ("repo", "repo"), ("trajectory_id", "trajectory_id"), ("license", "license")]
    {
        if let Some(v) = optional_str(row, column)?.filter(|v| !v.trim().is_empty()) {
            extra.insert(key.into(), v.into());
        }
    }
    Ok(RowRun { run, extra, ..RowRun::default() })
}
