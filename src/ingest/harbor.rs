//! Harbor job folders (Terminal-Bench 2.0, Harbor-run SWE-bench): `<job>/<task>__<id>/` is one
//! trial, read as one unit: `result.json` (the trial: task, agent, tokens, cost, the verifier's
//! rewards, an exception), `agent/trajectory.json` (ATIF, `ingest::atif`), and the verifier's
//! `reward.txt` / `reward.json`, `test-stdout.txt` and `ctrf.json`. The trial becomes a run (when
//! the agent wrote a trajectory) and an evaluation whose verdict is the reward: resolved when it
//! is 1 (or more), failed below; its tests are the verifier's per-test report (`ctrf.json`, with
//! each failure's message), else the pytest lines of `test-stdout.txt`. The job's own
//! `result.json`, `config.json` and `lock.json` are not inputs.
//! Everything else under a trial (episode logs, recordings, subagent trajectories, artifacts) is
//! the agent's working material, not read.
//!
//! Harbor 0.6.x trials of agents that declare artifacts have no `agent/` folder: the trajectory
//! is `artifacts/trajectory.json`. A trial is told by its own files wherever it sits (published
//! results regroup trials into `passed_13/`, `agent_timeout_4/`): a `result.json` beside an
//! `agent/`, `artifacts/` or `verifier/` folder, or one naming `task_name` and `trial_name`. A
//! trial without a trajectory (timed out, crashed, or none copied) is an evaluation without a
//! run; `verifier_result: null` with no `reward.txt` is a verdict unknown. The instance is
//! `task_name`, never the folder name (truncated for long task names).

use super::atif::{self, Context, task_of_trial};
use super::json::{at, f64_field, i64_field, parse_value, str_field};
use crate::error::IngestError;
use crate::model::{Format, Parsed, TestCase, TestOutcome, TestStatus};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A trial folder's files, in the order they are read (those present).
const MEMBERS: [&str; 7] = [
    "result.json",
    "agent/trajectory.json",
    "artifacts/trajectory.json",
    "verifier/reward.txt",
    "verifier/reward.json",
    "verifier/test-stdout.txt",
    "verifier/ctrf.json",
];

/// Where a trial's trajectory may be, in the order looked at.
const TRAJECTORIES: [&str; 2] = ["agent/trajectory.json", "artifacts/trajectory.json"];

/// A trial's `result.json` is read to tell it only when it is at most this large.
const MAX_TRIAL_RESULT: u64 = 16 << 20;

/// The files of the trial a folder is, in order: a `result.json` beside an `agent/`,
/// `artifacts/` or `verifier/` folder, or naming `task_name` and `trial_name`.
pub fn trial_members(dir: &Path) -> Option<Vec<PathBuf>> {
    let result = dir.join("result.json");
    if !result.is_file() {
        return None;
    }
    let beside = ["agent", "artifacts", "verifier"].iter().any(|d| dir.join(d).is_dir());
    if !beside && !names_a_trial(&result) {
        return None;
    }
    let mut members: Vec<PathBuf> = MEMBERS.iter().map(|m| dir.join(m)).filter(|p| p.is_file()).collect();
    members.extend(super::openclaw::sessions_in(&dir.join("agent")));
    Some(members)
}

/// A `result.json` whose top-level keys are a trial's (`task_name`, `trial_name`).
fn names_a_trial(result: &Path) -> bool {
    if !std::fs::metadata(result).is_ok_and(|m| m.len() <= MAX_TRIAL_RESULT) {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(result) else { return false };
    match super::detect::shape(&text) {
        super::detect::Shape::Object(keys) => ["task_name", "trial_name"].iter().all(|k| keys.iter().any(|x| x == k)),
        _ => false,
    }
}

/// A job folder's own files (its `result.json`, `config.json`, `lock.json`, `job.log`), when
/// `dir` holds trials: they summarize the trials and are not read.
pub fn job_files(dir: &Path) -> Vec<PathBuf> {
    let holds_trials = std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().any(|e| e.file_type().is_ok_and(|t| t.is_dir()) && trial_members(&e.path()).is_some())
        })
        .unwrap_or(false);
    if !holds_trials {
        return Vec::new();
    }
    ["result.json", "config.json", "lock.json", "job.log"].iter().map(|n| dir.join(n)).collect()
}

/// Why a file of a trial that is not one of its members is not read: the harness's own files
/// (the trial's configuration, its log, the exception's traceback) or the agent's working
/// material (episode logs, recordings, artifacts).
pub fn unread_reason(path: &Path) -> &'static str {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_trial_root = path.parent().is_some_and(|p| p.join("result.json").is_file());
    match name {
        "config.json" if in_trial_root => "a Harbor trial's configuration (result.json holds what it says)",
        "trial.log" | "exception.txt" => "the Harbor harness's log of the trial (result.json names its exception)",
        "docker-compose-mounts.json" | "manifest.json" => "a Harbor trial's environment files",
        _ => "part of a Harbor trial, not read (the agent's working material)",
    }
}

/// Parse a trial from its member files (path, text).
pub fn parse_trial(dir: &Path, files: &[(PathBuf, String)]) -> Result<Parsed, IngestError> {
    let file = |name: &str| files.iter().find(|(p, _)| p.ends_with(name));
    let Some((result_path, result_text)) = file("result.json") else {
        return Err(IngestError::shape(dir, "Harbor trial: no result.json"));
    };
    let result = parse_value(result_path, result_text)?;
    if !result.is_object() {
        return Err(IngestError::shape(result_path, "Harbor trial: result.json is not a JSON object"));
    }
    let trial = str_field(&result, "trial_name")
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let task = str_field(&result, "task_name").filter(|t| !t.is_empty()).unwrap_or_else(|| task_of_trial(&trial));
    let agent_result = result.get("agent_result").unwrap_or(&Value::Null);
    let model = trial_model(&result, dir);
    let exception = result.get("exception_info").filter(|e| e.is_object());
    let mut parsed = Parsed::default();
    let (reward, rewards) = match reward_of(&result, &file, &mut parsed.warnings) {
        Some((r, all)) => (Some(r), all),
        None => (None, Value::Null),
    };

    let mut harbor = Map::new();
    for (k, v) in [
        ("trial_name", Value::String(trial.clone())),
        ("task_name", Value::String(task.clone())),
        ("source", result.get("source").cloned().unwrap_or(Value::Null)),
        ("reward", reward.map_or(Value::Null, Value::from)),
        ("rewards", rewards),
        ("agent", result.get("agent_info").cloned().unwrap_or(Value::Null)),
        ("exception", exception.cloned().map(without_traceback).unwrap_or(Value::Null)),
        ("started_at", result.get("started_at").cloned().unwrap_or(Value::Null)),
        ("finished_at", result.get("finished_at").cloned().unwrap_or(Value::Null)),
    ] {
        if !v.is_null() {
            harbor.insert(k.into(), v);
        }
    }
    // An agent-native log beside the trajectory (OpenClaw's session) is the trial's raw log.
    let session = files.iter().find(|(p, _)| p.extension().is_some_and(|e| e == "jsonl"));
    if let Some((p, _)) = session {
        let shown = p.strip_prefix(dir).unwrap_or(p).display().to_string();
        harbor.insert("raw_log".into(), Value::String(shown));
    }
    let mut metadata = Map::new();
    metadata.insert("harbor".into(), Value::Object(harbor));
    let ctx = Context {
        instance_id: Some(task.clone()),
        model: model.clone(),
        exit_status: exception.and_then(|e| str_field(e, "exception_type")),
        cost: f64_field(agent_result, "cost_usd"),
        tokens_sent: i64_field(agent_result, "n_input_tokens"),
        tokens_received: i64_field(agent_result, "n_output_tokens"),
        submission: None,
        metadata,
    };
    let mut run_model = model;
    match (TRAJECTORIES.iter().find_map(|t| file(t)), session) {
        (Some((path, text)), _) => {
            let trajectory = atif::read(path, text)?;
            let (run, task_row) = atif::run_of(path, &trajectory, &ctx, &mut parsed.warnings);
            run_model = run.model.clone().or(run_model);
            parsed.tasks.extend(task_row);
            parsed.runs.push(run);
        }
        // No trajectory: the run is read from the agent's own session.
        (None, Some((path, text))) => {
            let (mut run, task_row, warnings) = super::openclaw::read(path, text)?;
            parsed.warnings.extend(warnings);
            run.instance_id = task.clone();
            run.model = run.model.or(ctx.model.clone());
            run.metadata = Some(Value::Object(ctx.metadata.clone()).to_string());
            run_model = run.model.clone();
            parsed.tasks.extend(task_row.map(|t| crate::model::Task { instance_id: task.clone(), ..t }));
            parsed.runs.push(run);
        }
        (None, None) => parsed.warnings.push(format!(
            "{}: no trajectory (agent/trajectory.json, artifacts/trajectory.json): an evaluation without a run",
            dir.display()
        )),
    }
    let log = file("verifier/test-stdout.txt").map(|(_, t)| t.clone());
    let ctrf = file("verifier/ctrf.json").map(|(p, t)| (p.display().to_string(), t.as_str()));
    let tests = verifier_tests(ctrf, log.as_deref(), &mut parsed.warnings);
    if reward.is_some() || log.is_some() || !tests.is_empty() {
        parsed.outcomes.push(TestOutcome {
            instance_id: task,
            format: Some(Format::Atif),
            model: run_model,
            run_label: Some(trial),
            resolved: reward.map(resolved_by),
            log,
            tests,
            ..TestOutcome::default()
        });
    }
    Ok(parsed)
}

/// Whether a trial's reward resolves its task: 1 (or more) does, anything below fails.
pub fn resolved_by(reward: f64) -> bool {
    reward >= 1.0
}

/// The verifier's tests: its CTRF report (where it is, for the warning when it cannot be read,
/// and its text), else the pytest lines of its output. A skipped test is neither passed nor
/// failed, and is not listed.
pub fn verifier_tests(ctrf: Option<(String, &str)>, log: Option<&str>, warnings: &mut Vec<String>) -> Vec<TestCase> {
    let from_log = || log.map(super::harness::log_parsers::pytest_tests).unwrap_or_default();
    let logged = match ctrf {
        Some((at, text)) => match super::ctrf::read(text) {
            Ok(tests) => tests,
            Err(e) => {
                warnings.push(format!("{at}: {e}; the tests are read from the verifier's output"));
                from_log()
            }
        },
        None => from_log(),
    };
    logged
        .into_iter()
        .filter(|t| t.status != TestStatus::Skipped)
        .map(|t| TestCase {
            name: t.name,
            group: None,
            passed: matches!(t.status, TestStatus::Passed | TestStatus::Xfail),
            message: t.message,
        })
        .collect()
}

/// The model a trial ran: as its configuration names it (`config.agent.model_name`, the name the
/// agent's trajectory gives too: `anthropic/claude-...`), else as its agent reports it
/// (`agent_info.model_info`: `provider/name`), else as the job's `config.json` names its one
/// agent's model (a trial that failed before its agent started names none of its own).
fn trial_model(result: &Value, dir: &Path) -> Option<String> {
    let text =
        |v: Option<&Value>| v.and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    if let Some(m) = text(at(result, &["config", "agent", "model_name"])) {
        return Some(m);
    }
    if let Some(name) = text(at(result, &["agent_info", "model_info", "name"])) {
        return Some(match text(at(result, &["agent_info", "model_info", "provider"])) {
            Some(p) if !name.contains('/') => format!("{p}/{name}"),
            _ => name,
        });
    }
    let job = dir.parent()?.join("config.json");
    if !std::fs::metadata(&job).is_ok_and(|m| m.is_file() && m.len() <= MAX_TRIAL_RESULT) {
        return None;
    }
    let config: Value = serde_json::from_str(&std::fs::read_to_string(job).ok()?).ok()?;
    match config.get("agents").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) => text(only.get("model_name")),
        _ => None,
    }
}

/// The trial's reward and all its rewards: `verifier_result.rewards` of result.json (its `reward`,
/// or its only value), else `verifier/reward.json`, else `verifier/reward.txt`.
fn reward_of<'a>(
    result: &Value,
    file: &impl Fn(&str) -> Option<&'a (PathBuf, String)>,
    warnings: &mut Vec<String>,
) -> Option<(f64, Value)> {
    let pick = |rewards: &Value| -> Option<f64> {
        let map = rewards.as_object()?;
        map.get("reward").and_then(Value::as_f64).or_else(|| match map.values().collect::<Vec<_>>().as_slice() {
            [only] => only.as_f64(),
            _ => None,
        })
    };
    if let Some(rewards) = at(result, &["verifier_result", "rewards"]).filter(|r| r.is_object())
        && let Some(r) = pick(rewards)
    {
        return Some((r, rewards.clone()));
    }
    if let Some((path, text)) = file("verifier/reward.json") {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                if let Some(r) = pick(&v) {
                    return Some((r, v));
                }
            }
            Err(e) => warnings.push(format!("{}: {}", path.display(), crate::error::json_message(&e))),
        }
    }
    let (path, text) = file("verifier/reward.txt")?;
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() => Some((r, serde_json::json!({ "reward": r }))),
        _ => {
            warnings.push(format!("{}: not a number: {:?}", path.display(), text.trim()));
            None
        }
    }
}

/// An exception without its traceback (long, and the run's own steps say more).
fn without_traceback(mut e: Value) -> Value {
    if let Some(o) = e.as_object_mut() {
        o.remove("exception_traceback");
    }
    e
}

#[cfg(test)]
mod tests {

    #[test]
    fn trial_names_give_their_task() {
        use super::super::atif::task_of_trial;
        assert_eq!(task_of_trial("hello-world__aBc12D3"), "hello-world");
        assert_eq!(task_of_trial("django__django-11099__Xy7pQ2w"), "django__django-11099");
        assert_eq!(task_of_trial("django__django-11099"), "django__django-11099");
    }
}
