//! R2E-Gym/R2EGym-SFT-Trajectories: 3,231 runs of R2E-Gym's own scaffold driven by
//! Claude 3.5 Sonnet on R2E-Gym's tasks, in one shard (`data/train-00000-of-00001.parquet`) of
//! one column, `messages`: `{role, content}` (the card is empty; the schema is the one public
//! scripts reading the shard use). The system prompt lists the functions (`file_editor`,
//! `execute_bash`, `search`, `finish`); the first user message wraps the issue in
//! `<github_issue>...</github_issue>`; each assistant reply writes its call as
//! `<function=NAME><parameter=KEY>VALUE</parameter></function>` text
//! ([`chat::xml_calls`]), answered by the next `user` message (`Execution output of [NAME]:`,
//! after `Exit code: N` for a shell command).
//!
//! No verdict: the paper kept only successful runs for fine-tuning, but no column says so, and
//! a verdict is never inferred. No instance id either: the task is named by its issue,
//! `r2e-gym-` and the first 12 hex digits of the blake3 hash of the `<github_issue>` text
//! (trimmed), so the runs of one task group together; a row whose first user message wraps no
//! issue cannot say which task it ran and is not read. No patch column: the run's edits are
//! the ones its calls made.

use super::chat::{self, Calls};
use super::row::{RowError, RowRun, messages};
use super::task::between;
use serde_json::Value;
use std::path::Path;

/// The model of the runs: Claude 3.5 Sonnet (the paper), its October 2024 release
/// ("Claude-Sonnet-3.5-v2" in nebius' comparison of fine-tuning datasets).
pub const MODEL: &str = "claude-3-5-sonnet-20241022";

/// The instance a task's issue names: `r2e-gym-` and 12 hex digits of its hash.
pub fn instance_of(issue: &str) -> String {
    format!("r2e-gym-{}", &blake3::hash(issue.trim().as_bytes()).to_hex()[..12])
}

pub fn row(shard: &Path, row: &Value) -> Result<RowRun, RowError> {
    let messages = messages(row, "messages")?;
    let first = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| crate::model::flatten_content(m.get("content")))
        .ok_or_else(|| RowError::new("messages", "no user message: the task's issue is not stated"))?;
    let issue = between(&first, "<github_issue>", "</github_issue>").filter(|i| !i.is_empty()).ok_or_else(|| {
        RowError::new(
            "messages",
            "the first user message wraps no issue in <github_issue>...</github_issue>: the task cannot be named (the dataset has no instance id)",
        )
    })?;
    let instance_id = instance_of(issue);
    let head = chat::Header { instance_id: &instance_id, agent: "r2e-gym", model: Some(MODEL), submission: None };
    let run = chat::run(shard, &head, messages, Calls::Xml);
    Ok(RowRun { run, ..RowRun::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_instance_is_named_by_the_issue() {
        let shard = Path::new("/d/train-00000-of-00001.parquet");
        let msgs = |issue: &str| {
            json!({"messages": [
                {"role": "system", "content": "You are a programming agent."},
                {"role": "user", "content": format!("Consider the following github issue:\n<github_issue>\n{issue}\n</github_issue>\n")},
                {"role": "assistant", "content": "Look.\n<function=execute_bash>\n<parameter=cmd>ls /testbed</parameter>\n</function>"},
                {"role": "user", "content": "Exit code: 0\nExecution output of [execute_bash]:\nsetup.py"}]})
        };
        let a = row(shard, &msgs("It breaks.")).unwrap_or_else(|e| panic!("{e:?}"));
        let b = row(shard, &msgs("  It breaks.  ")).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(a.run.instance_id, b.run.instance_id, "the trimmed issue names the task");
        assert_eq!(a.run.instance_id, instance_of("It breaks."));
        assert!(a.run.instance_id.starts_with("r2e-gym-") && a.run.instance_id.len() == "r2e-gym-".len() + 12);
        assert_ne!(row(shard, &msgs("It hangs.")).map(|r| r.run.instance_id).ok(), Some(a.run.instance_id.clone()));
        assert_eq!(a.run.steps.len(), 1);
        assert_eq!(a.run.steps[0].action, "ls /testbed");
        assert!(a.run.steps[0].observation.contains("setup.py"));
        assert_eq!(a.resolved, None);
        let none = json!({"messages": [{"role": "user", "content": "Fix it."}]});
        match row(shard, &none) {
            Err(e) => assert!(e.column == "messages" && e.why.contains("<github_issue>"), "{e:?}"),
            Ok(_) => panic!("read without an issue"),
        }
    }
}
