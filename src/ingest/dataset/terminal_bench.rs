//! Terminal-Bench 2 trials published as rows: a Harbor job's trials flattened one a row, the
//! agent's ATIF trajectory in a column (`trajectory`: the `trajectory.json` as a JSON string in a
//! shard, a string or a struct in a JSON-lines export) beside what the trial's `result.json` and
//! verifier said: `reward` (the verdict, by Harbor's rule: [`harbor::resolved_by`]), `cost_usd`,
//! `test_report` (the verifier's `ctrf.json`, else its pytest output), and `task_name`,
//! `trial_name`, `agent_name`, `model_name`, `n_input_tokens`, `n_output_tokens`,
//! `exception_type` when the publisher kept them. The trajectory is read by `ingest::atif` as a
//! trial's is, so a row and the trial folder it came from are the same run.
//!
//! The task is `task_name`, else the task of `trial_name` (`<task>__<7 characters>`); a row with
//! neither cannot say which task it ran and is not read. Its instruction is the trajectory's
//! first user message, as for every row ([`super::task`]).

use super::row::{RowError, RowRun, count, kind_of, number, optional_str};
use crate::atif::Trajectory;
use crate::error::json_message;
use crate::ingest::atif::{self, Context, task_of_trial};
use crate::ingest::harbor;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let trajectory = trajectory(row)?;
    let trial = optional_str(row, "trial_name")?.map(str::trim).filter(|t| !t.is_empty());
    let task = match optional_str(row, "task_name")?.map(str::trim).filter(|t| !t.is_empty()) {
        Some(task) => task.to_string(),
        None => trial
            .map(task_of_trial)
            .ok_or_else(|| RowError::new("task_name", "missing, and no `trial_name` to take the task from"))?,
    };
    let reward = number(row, "reward")?;
    let exception = optional_str(row, "exception_type")?.filter(|e| !e.trim().is_empty());
    let mut trial_meta = Map::new();
    trial_meta.insert("task_name".into(), task.clone().into());
    if let Some(t) = trial {
        trial_meta.insert("trial_name".into(), t.into());
    }
    if let Some(r) = reward {
        trial_meta.insert("reward".into(), r.into());
    }
    let mut metadata = Map::new();
    metadata.insert("harbor".into(), Value::Object(trial_meta));
    let ctx = Context {
        instance_id: Some(task.clone()),
        model: optional_str(row, "model_name")?.filter(|m| !m.trim().is_empty()).map(str::to_string),
        exit_status: exception.map(str::to_string),
        cost: number(row, "cost_usd")?,
        tokens_sent: count(row, "n_input_tokens")?,
        tokens_received: count(row, "n_output_tokens")?,
        submission: None,
        metadata,
    };
    let mut notes = Vec::new();
    let (mut run, _) = atif::run_of(shard, &trajectory, &ctx, &mut notes);
    if run.agent.is_none() {
        run.agent = optional_str(row, "agent_name")?.filter(|a| !a.trim().is_empty()).map(str::to_string);
    }
    // The ATIF reader names what it found odd by the file; here the file is the shard, and
    // `add_row` names the row.
    let prefix = format!("{}: ", shard.display());
    for n in &mut notes {
        if let Some(rest) = n.strip_prefix(&prefix) {
            *n = rest.to_string();
        }
    }
    let report = optional_str(row, "test_report")?.filter(|r| !r.trim().is_empty());
    // A CTRF report is a JSON object; anything else is the verifier's output.
    let ctrf = report.filter(|r| r.trim_start().starts_with('{')).map(|r| ("column `test_report`".to_string(), r));
    let log = report.filter(|_| ctrf.is_none());
    let tests = harbor::verifier_tests(ctrf, log, &mut notes);
    let mut extra = Map::new();
    if let Some(t) = trial {
        extra.insert("trial_name".into(), t.into());
    }
    Ok(RowRun { run, resolved: reward.map(harbor::resolved_by), log: log.map(str::to_string), tests, notes, extra })
}

/// The trajectory column: ATIF as a JSON string (a shard) or a struct (a JSON-lines export).
fn trajectory(row: &Value) -> Result<Trajectory, RowError> {
    let bad = |why: String| RowError::new("trajectory", format!("not an ATIF trajectory: {why}"));
    match row.get("trajectory") {
        None | Some(Value::Null) => Err(RowError::new("trajectory", "missing (null)")),
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| bad(json_message(&e))),
        Some(v @ Value::Object(_)) => Trajectory::deserialize(v).map_err(|e| bad(e.to_string())),
        Some(other) => Err(RowError::new(
            "trajectory",
            format!("expected an ATIF trajectory (a JSON string or a struct), found {}", kind_of(other)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn atif() -> Value {
        json!({"schema_version": "ATIF-v1.5", "agent": {"name": "terminus-2", "version": "2.0.0"}, "steps": [
            {"step_id": 1, "source": "user", "message": "Print hello."},
            {"step_id": 2, "source": "agent", "message": "Plan: echo.", "tool_calls": [{"tool_call_id": "c1",
              "function_name": "bash_command", "arguments": {"keystrokes": "echo hello\n"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "hello\n"}]}}]})
    }

    #[test]
    fn the_trajectory_is_a_json_string_or_a_struct_and_the_reward_the_verdict() {
        let shard = Path::new("/d/train.parquet");
        for t in [Value::String(atif().to_string()), atif()] {
            let r = row(
                shard,
                &json!({"trial_name": "hello__Ab3dE5f", "trajectory": t, "reward": 0.5,
                "test_report": "FAILED tests/test_outputs.py::test_hello - assert 1 == 2\n"}),
            );
            let r = r.unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(r.run.instance_id, "hello", "the task of the trial's name");
            assert_eq!(r.resolved, Some(false), "a reward below 1 fails");
            assert_eq!(r.run.steps.len(), 1);
            assert_eq!(
                r.tests.iter().map(|t| (t.name.as_str(), t.passed)).collect::<Vec<_>>(),
                [("tests/test_outputs.py::test_hello", false)]
            );
            assert!(r.log.is_some(), "a report that is not CTRF is the verifier's output");
        }
    }

    #[test]
    fn columns_of_the_wrong_kind_are_named() {
        let shard = Path::new("/d/train.parquet");
        let base = json!({"task_name": "t", "trajectory": atif().to_string()});
        let cases = [
            ("trajectory", json!(3), "expected an ATIF trajectory"),
            ("trajectory", json!("{\"steps\": 1}"), "not an ATIF trajectory"),
            ("reward", json!("1.0"), "expected a number, found a string"),
            ("n_input_tokens", json!(-3), "expected a count"),
        ];
        for (column, value, why) in cases {
            let mut r = base.clone();
            r[column] = value;
            match row(shard, &r) {
                Err(e) => assert!(e.column == column && e.why.contains(why), "{column}: {e:?}"),
                Ok(_) => panic!("{column}: read"),
            }
        }
    }
}
