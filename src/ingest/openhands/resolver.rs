//! OpenHands resolver output (`openhands.resolver`, `output/output.jsonl`): one line per issue
//! or pull request it worked on: `issue` (`owner`, `repo`, `number`, `title`, `body`),
//! `issue_type`, `instruction`, `base_commit`, `git_patch`, `history` (events), `metrics`,
//! `success`, `comment_success`, `result_explanation`, `error`.
//!
//! `success` and `result_explanation` are the resolver's own judgement of its run: a model reads
//! the run and says whether the issue looks solved; no test runs. So they are not a test outcome
//! (the run's `resolved` stays unknown until an evaluation of it is ingested); they are kept in
//! the run's metadata under `resolver` (`success`, `comment_success`, `result_explanation`).
//! The instance is named `owner__repo-number`, as SWE-bench names the tasks it takes from GitHub.

use super::{Instance, events, exit_status, history_events, shape_at};
use crate::analysis::edits;
use crate::error::IngestError;
use crate::ingest::json::{at, f64_field, nonempty_str};
use crate::model::{Format, Parsed, Run, Task};
use serde_json::{Value, json};
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    super::parse_records(path, text, record)
}

/// One line of a resolver `output.jsonl` (for reading large files a line at a time).
pub fn parse_line(path: &Path, line: usize, v: &Value) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    record(path, v, line)?.into_parsed(&mut parsed);
    Ok(parsed)
}

fn record(path: &Path, v: &Value, line: usize) -> Result<Instance, IngestError> {
    if !v.is_object() {
        return Err(shape_at(path, line, "a resolver record is not a JSON object"));
    }
    let issue = v.get("issue").filter(|i| i.is_object()).ok_or_else(|| shape_at(path, line, "no `issue` object"))?;
    let instance_id = crate::ingest::predictions::pr_instance_id(issue, "owner").ok_or_else(|| {
        shape_at(path, line, "the `issue` names no `owner`, `repo` and `number` to name the instance by")
    })?;
    let history = history_events(v).map_err(|m| shape_at(path, line, &m))?;
    let t = events::timeline(&history);
    let prefix = match line {
        0 => format!("{}: ", path.display()),
        n => format!("{}: line {n}: ", path.display()),
    };
    let warnings = t.warnings.iter().map(|w| format!("{prefix}{w}")).collect();
    let metrics = v.get("metrics").unwrap_or(&Value::Null);
    let submission = nonempty_str(v, "git_patch").filter(|p| !p.trim().is_empty());
    let metadata = json!({
        "issue_type": v.get("issue_type"),
        "base_commit": v.get("base_commit"),
        "issue": {"owner": issue.get("owner"), "repo": issue.get("repo"), "number": issue.get("number"),
                  "title": issue.get("title")},
        "resolver": {
            "success": v.get("success"),
            "comment_success": v.get("comment_success"),
            "result_explanation": v.get("result_explanation"),
        },
    });
    let mut run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::OpenHandsResolver),
        format_version: t.version.clone(),
        agent: Some("openhands-resolver".to_string()),
        model: t.model.clone(),
        exit_status: Some(exit_status(nonempty_str(v, "error").as_deref(), &t)),
        submission: submission.clone(),
        cost: f64_field(metrics, "accumulated_cost").or(t.cost),
        tokens_sent: at(metrics, &["accumulated_token_usage", "prompt_tokens"])
            .and_then(Value::as_i64)
            .or(t.tokens_sent),
        tokens_received: at(metrics, &["accumulated_token_usage", "completion_tokens"])
            .and_then(Value::as_i64)
            .or(t.tokens_received),
        api_calls: metrics.get("costs").and_then(Value::as_array).map(|c| c.len() as i64),
        position: line as i64,
        metadata: Some(metadata.to_string()),
        steps: t.steps,
        edits: t.edits,
        history: t.history,
        ..Run::default()
    };
    if let Some(patch) = &submission {
        run.edits.extend(edits::final_patch_edits(patch));
    }
    let title_and_body = [nonempty_str(issue, "title"), nonempty_str(issue, "body")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    let task = Task {
        instance_id,
        instruction: nonempty_str(v, "instruction")
            .or_else(|| Some(title_and_body).filter(|t| !t.is_empty()))
            .or(t.first_user_message),
        ..Task::default()
    };
    Ok(Instance { run, task, outcome: None, warnings })
}
