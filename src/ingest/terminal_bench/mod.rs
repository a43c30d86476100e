//! Terminal-Bench 1 run folders (terminal-bench harness, leaderboard submissions for
//! terminal-bench-core 0.1.x): `<run_id>/` holds `results.json` (every trial's results),
//! `run_metadata.json` (agent, model), `tb.lock`, `run.log`, and per task
//! `<task_id>/<task_id>.<k>-of-<n>.<run_id>/` trial folders.
//!
//! A trial folder is one unit (`trial_members`): its `results.json` gives the verdict
//! (`is_resolved`; `null` with a failure mode, `test_timeout` say, is unresolved as the harness's
//! summary counts it, and without one a verdict unknown; the failure mode is kept as the run's
//! exit), its tests (`parser_results`) and tokens; `sessions/agent.cast` (the asciinema
//! recording, `cast`) gives the steps, a command typed at each prompt and what the screen
//! printed until the next (without a recording, `commands.txt`'s keystrokes, with no output);
//! `panes/post-test.txt` is the test run's screen; the run's `run_metadata.json` and `tb.lock`
//! name the agent and the model. The run's own `results.json` and `run.log` repeat the trials
//! and are not read when the trials are there; alone, a run `results.json` gives each trial's
//! verdict.

pub mod cast;

use super::layout::Beside;
use super::skip::Skip;
use crate::error::IngestError;
use crate::ingest::json::{at, i64_field, nonempty_str, parse_value};
use crate::ingest::turns::Turns;
use crate::model::{Format, Parsed, Run, Step, Task, TestCase, TestOutcome};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Files of a trial folder beyond `results.json`, in the order read, when present.
const TRIAL_FILES: [&str; 3] = ["sessions/agent.cast", "commands.txt", "panes/post-test.txt"];
/// The run's files that name the agent and model, read with each trial.
const RUN_FILES: [&str; 2] = ["run_metadata.json", "tb.lock"];

/// Whether a `results.json` is a trial's (`is_resolved` and `failure_mode` or `trial_name`).
fn is_trial_results(path: &Path) -> bool {
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() < 16 << 20);
    let Some(text) = small.then(|| std::fs::read_to_string(path).ok()).flatten() else { return false };
    match crate::ingest::detect::shape(&text) {
        crate::ingest::detect::Shape::Object(keys) => {
            let has = |k: &str| keys.iter().any(|x| x == k);
            has("is_resolved") && (has("failure_mode") || has("trial_name"))
        }
        _ => false,
    }
}

/// The files of the trial a folder is: `results.json`, the recording, the keystrokes, the test
/// screen, and the run's metadata (one or two folders up).
pub fn trial_members(dir: &Path) -> Option<Vec<PathBuf>> {
    let results = dir.join("results.json");
    if !is_trial_results(&results) {
        return None;
    }
    let mut members = vec![results];
    members.extend(TRIAL_FILES.iter().map(|f| dir.join(f)).filter(|p| p.is_file()));
    if let Some(run) = dir.ancestors().skip(1).take(2).find(|up| RUN_FILES.iter().any(|f| up.join(f).is_file())) {
        members.extend(RUN_FILES.iter().map(|f| run.join(f)).filter(|p| p.is_file()));
    }
    Some(members)
}

/// A run folder holding trials: its metadata is read with each trial; its summary and log are
/// not read.
pub fn run_folder(dir: &Path, beside: &mut Beside) {
    let own = ["results.json", "run.log"].into_iter().chain(RUN_FILES).map(|f| dir.join(f)).filter(|p| p.is_file());
    let own: Vec<PathBuf> = own.collect();
    if own.is_empty() || !holds_trials(dir) {
        return;
    }
    for p in own {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("results.json") => beside
                .passed
                .push((p, Skip::not_read("a Terminal-Bench run's results: its trials' results.json are read"))),
            Some("run.log") => {
                beside.passed.push((p, Skip::not_read("a Terminal-Bench run's log (tables and progress)")))
            }
            _ => beside.members.push(p),
        }
    }
}

fn holds_trials(dir: &Path) -> bool {
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d).map(|e| e.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default()
    };
    subdirs(dir).iter().any(|task| subdirs(task).iter().any(|trial| trial_members(trial).is_some()))
}

/// A trial folder from its members (path, text).
pub fn parse_trial(dir: &Path, files: &[(PathBuf, String)]) -> Result<Parsed, IngestError> {
    let file = |name: &str| files.iter().find(|(p, _)| p.ends_with(name));
    let Some((results_path, results_text)) = file("results.json") else {
        return Err(IngestError::shape(dir, "Terminal-Bench trial: no results.json"));
    };
    let results = parse_value(results_path, results_text)?;
    let mut parsed = Parsed::default();
    let json = |name: &str, parsed: &mut Parsed| match file(name).map(|(p, t)| parse_value(p, t)) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            parsed.warnings.push(e.to_string());
            Value::Null
        }
        None => Value::Null,
    };
    let meta = json("run_metadata.json", &mut parsed);
    let lock = json("tb.lock", &mut parsed);
    let who = Who {
        agent: nonempty_str(&meta, "agent_name")
            .or_else(|| at(&lock, &["agent", "name"]).and_then(Value::as_str).map(str::to_string)),
        model: nonempty_str(&meta, "model_name")
            .or_else(|| at(&lock, &["agent", "model_name"]).and_then(Value::as_str).map(str::to_string)),
        version: at(&lock, &["harness", "version"]).and_then(Value::as_str).map(str::to_string),
    };
    let log = file("panes/post-test.txt").map(|(_, t)| t.clone());
    let trial = trial(&results, &who, log).map_err(|e| IngestError::shape(results_path, e))?;
    let mut turns = Turns::default();
    if let Some((path, text)) = file("sessions/agent.cast") {
        let rec = cast::read(text);
        parsed.warnings.extend(rec.warnings.iter().map(|w| format!("{}: {w}", path.display())));
        for t in rec.turns {
            let step = Step {
                action: t.command,
                observation: t.output,
                execution_time: Some(t.duration),
                timestamp: rec.started.and_then(|s| iso(s, t.at)),
                tool: Some("terminal".into()),
                ..Step::default()
            };
            turns.terminal(step);
        }
    } else if let Some((_, text)) = file("commands.txt") {
        for keys in text.lines().filter_map(keystrokes) {
            turns.terminal(Step { action: keys, tool: Some("terminal".into()), ..Step::default() });
        }
    } else {
        parsed.warnings.push(format!(
            "{}: no sessions/agent.cast and no commands.txt (the trial kept nothing the agent did): an evaluation without a run",
            dir.display()
        ));
    }
    parsed.outcomes.push(trial.outcome);
    parsed.tasks.extend(trial.task);
    if !turns.steps.is_empty() {
        let mut run = trial.run;
        turns.into_run(&mut run);
        parsed.runs.push(run);
    }
    Ok(parsed)
}

/// A `results.json` read alone: a trial's (its verdict), or a run's (each trial's verdict).
pub fn parse_results(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let v = parse_value(path, text)?;
    let mut parsed = Parsed::default();
    let who = Who::default();
    let trials: Vec<&Value> = match v.get("results").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None => vec![&v],
    };
    for t in trials {
        match trial(t, &who, None) {
            Ok(tr) => {
                parsed.outcomes.push(tr.outcome);
                parsed.tasks.extend(tr.task);
            }
            Err(e) => parsed.warnings.push(format!("{}: {e}", path.display())),
        }
    }
    if parsed.outcomes.is_empty() {
        return Err(IngestError::shape(path, "Terminal-Bench results: no trial with a `task_id`"));
    }
    Ok(parsed)
}

/// Who ran a trial: from the run's metadata and lock file.
#[derive(Default)]
struct Who {
    agent: Option<String>,
    model: Option<String>,
    version: Option<String>,
}

struct Trial {
    run: Run,
    outcome: TestOutcome,
    task: Option<Task>,
}

/// A trial's results: the run (without steps), the outcome, the task.
fn trial(r: &Value, who: &Who, log: Option<String>) -> Result<Trial, String> {
    let task_id = nonempty_str(r, "task_id").ok_or_else(|| "a trial without a `task_id`".to_string())?;
    let trial_name = nonempty_str(r, "trial_name");
    let failure = nonempty_str(r, "failure_mode").filter(|f| f != "unset");
    // `null` with a failure mode (`test_timeout`, `agent_timeout`, `parse_error`): unresolved,
    // as the harness's own summary counts it (`not is_resolved`), the failure mode its reason.
    let resolved = r.get("is_resolved").and_then(Value::as_bool).or(failure.as_ref().map(|_| false));
    let tests: Vec<TestCase> = r
        .get("parser_results")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, status)| TestCase {
            name: name.clone(),
            group: None,
            passed: status.as_str() == Some("passed"),
            message: None,
        })
        .collect();
    let mut tb = Map::new();
    for key in [
        "trial_name",
        "is_resolved",
        "failure_mode",
        "agent_started_at",
        "agent_ended_at",
        "test_started_at",
        "test_ended_at",
    ] {
        if let Some(x) = r.get(key).filter(|x| !x.is_null()) {
            tb.insert(key.into(), x.clone());
        }
    }
    let run = Run {
        instance_id: task_id.clone(),
        format: Some(Format::TerminalBench),
        format_version: who.version.clone(),
        agent: who.agent.clone(),
        model: who.model.clone(),
        exit_status: Some(failure.clone().unwrap_or_else(|| "finished".into())),
        tokens_sent: i64_field(r, "total_input_tokens"),
        tokens_received: i64_field(r, "total_output_tokens"),
        metadata: Some(Value::Object(Map::from_iter([("terminal_bench".to_string(), Value::Object(tb))])).to_string()),
        ..Run::default()
    };
    let outcome = TestOutcome {
        instance_id: task_id.clone(),
        format: Some(Format::TerminalBench),
        model: who.model.clone(),
        run_label: trial_name,
        resolved,
        tests,
        log,
        ..TestOutcome::default()
    };
    let task =
        nonempty_str(r, "instruction").map(|i| Task { instance_id: task_id, instruction: Some(i), ..Task::default() });
    Ok(Trial { run, outcome, task })
}

/// A recording's time: its start (Unix seconds) plus `offset` seconds, as RFC 3339.
fn iso(started: i64, offset: f64) -> Option<String> {
    let nanos = i128::from(started) * 1_000_000_000 + (offset * 1e9) as i128;
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()?;
    t.format(&time::format_description::well_known::Rfc3339).ok()
}

/// One line of `commands.txt`: a Python list of the keys sent to tmux (`['ls -la', 'Enter']`),
/// as what was typed.
fn keystrokes(line: &str) -> Option<String> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut keys = Vec::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' && c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(d) = chars.next() {
            match d {
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(other) => s.push(other),
                    None => {}
                },
                d if d == c => break,
                d => s.push(d),
            }
        }
        keys.push(match s.as_str() {
            "Enter" | "C-m" => "\n".to_string(),
            "C-c" => "^C".to_string(),
            "C-d" => "^D".to_string(),
            "Escape" => "^[".to_string(),
            _ => s,
        });
    }
    let typed = keys.concat();
    (!typed.trim().is_empty()).then(|| typed.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystroke_lines_are_python_lists() {
        assert_eq!(keystrokes("['ls -la', 'Enter']").as_deref(), Some("ls -la"));
        assert_eq!(keystrokes(r#"["echo 'it''s'", 'Enter']"#).as_deref(), Some("echo 'it''s'"));
        assert_eq!(keystrokes("['C-c']").as_deref(), Some("^C"));
        assert_eq!(
            keystrokes("['cat > a.py << EOF\\nprint(1)\\nEOF', 'Enter']").as_deref(),
            Some("cat > a.py << EOF\nprint(1)\nEOF")
        );
        assert_eq!(keystrokes("not a list"), None);
    }

    #[test]
    fn recording_times_are_dates() {
        assert_eq!(iso(1757115251, 1.5).as_deref(), Some("2025-09-05T23:34:12.5Z"));
    }
}
