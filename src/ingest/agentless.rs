//! Agentless outputs (OpenAutoCoder/Agentless and forks): a pipeline, not an agent loop, so a
//! run's steps are its stages, each step one LLM call of a stage.
//!
//! Localisation: `results/<dataset>/<stage>/loc_outputs.jsonl`, one instance per line; each
//! stage copies the earlier stages' fields, so the latest stage's file carries them all (an
//! earlier stage's file beside it is skipped, named). A line's stages: file level (`file_traj`,
//! giving `found_files`), related elements (`related_loc_traj`, `found_related_locs`), edit
//! locations (`edit_loc_traj`, one response per sample, `found_edit_locs`); a stage that did
//! not run leaves `{}`, `[]` or null. Repair: `output_<N>.jsonl` lines (`raw_output`, `traj`,
//! `try_count`), a step per generation, the SEARCH/REPLACE blocks of its output as edits; the
//! processed outputs (`model_patch`) are predictions. The model is named only in the stage's
//! `args.json`, read with the stage's outputs (`UnitKind::AgentlessStage`). No verdict.

use super::layout::Beside;
use super::skip::Skip;
use crate::analysis::edit_blocks;
use crate::error::IngestError;
use crate::ingest::json::{for_each_jsonl_line, i64_field, nonempty_str, parse_value};
use crate::ingest::turns::{Turns, add};
use crate::model::{EditStatus, Format, Parsed, Run, Step, Task};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Localisation stages in pipeline order (Agentless' folder names).
const STAGES: &[&str] = &[
    "file_level",
    "file_level_irrelevant",
    "retrievel_embedding",
    "file_level_combined",
    "related_elements",
    "related_level",
    "edit_location_samples",
    "edit_location_individual",
];

fn stage_rank(dir: &Path) -> Option<usize> {
    let name = dir.file_name()?.to_str()?;
    STAGES.iter().position(|s| *s == name)
}

fn outputs(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    name.ends_with(".jsonl") && (name.starts_with("loc_outputs") || is_raw_repair_output(name))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// `output_<N>.jsonl` (not the `_processed` or `_normalized` copies).
fn is_raw_repair_output(name: &str) -> bool {
    name.strip_prefix("output_")
        .and_then(|r| r.strip_suffix(".jsonl"))
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// The later localisation stage beside `dir` whose outputs carry this stage's whole.
fn superseded_by(dir: &Path) -> Option<PathBuf> {
    let rank = stage_rank(dir)?;
    let parent = dir.parent()?;
    STAGES[rank + 1..].iter().rev().map(|s| parent.join(s)).find(|later| !outputs(later).is_empty())
}

/// The files of the Agentless stage a folder is: its `args.json` and its outputs, unless a later
/// stage beside it carries them.
pub fn stage_members(dir: &Path) -> Option<Vec<PathBuf>> {
    let args = dir.join("args.json");
    let found = outputs(dir);
    if !args.is_file() || found.is_empty() || superseded_by(dir).is_some() {
        return None;
    }
    Some(std::iter::once(args).chain(found).collect())
}

/// Earlier localisation stages under `dir` that a later stage carries whole: their outputs and
/// arguments are not read.
pub fn superseded(dir: &Path, beside: &mut Beside) {
    for stage in STAGES {
        let stage_dir = dir.join(stage);
        let Some(later) = superseded_by(&stage_dir) else { continue };
        let later = later.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for p in outputs(&stage_dir).into_iter().chain([stage_dir.join("args.json")]).filter(|p| p.is_file()) {
            let what =
                format!("an earlier Agentless stage ({stage}): {later}/ carries its localisation whole, and is read");
            beside.passed.push((p, Skip::not_read(what)));
        }
    }
}

/// A stage folder: `args.json` (the model) and its outputs.
pub fn parse_stage(dir: &Path, files: &[(PathBuf, String)]) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    let args = files.iter().find(|(p, _)| p.ends_with("args.json"));
    let args = match args.map(|(p, t)| parse_value(p, t)) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            parsed.warnings.push(e.to_string());
            Value::Null
        }
        None => Value::Null,
    };
    let stage = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    for (path, text) in files.iter().filter(|(p, _)| !p.ends_with("args.json")) {
        match read(path, text, &args, stage.as_deref()) {
            Ok(p) => parsed.absorb(p),
            Err(e) => parsed.warnings.push(e.to_string()),
        }
    }
    if parsed.runs.is_empty() {
        return Err(IngestError::shape(dir, "Agentless stage: no output line could be read"));
    }
    Ok(parsed)
}

/// An output file alone (no `args.json`: the model is unknown).
pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let stage = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    read(path, text, &Value::Null, stage.as_deref())
}

fn read(path: &Path, text: &str, args: &Value, stage: Option<&str>) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    let mut warnings = Vec::new();
    let mut empty = Vec::new();
    for_each_jsonl_line(path, text, &mut warnings, |line, v| {
        let run = if v.get("raw_output").is_some() { repair(&v, args, stage) } else { localisation(&v, args, stage) };
        let Some(mut run) = run else {
            return Err(IngestError::parse(
                path,
                Some(crate::error::Location::Line(line)),
                "Agentless: no `instance_id`",
            ));
        };
        if run.steps.is_empty() {
            empty.push(run.instance_id);
            return Ok(());
        }
        run.position = line as i64;
        parsed.tasks.push(Task { instance_id: run.instance_id.clone(), ..Task::default() });
        parsed.runs.push(run);
        Ok(())
    })?;
    parsed.warnings.extend(warnings);
    if !empty.is_empty() {
        parsed.warnings.push(format!(
            "{}: no stage ran for {} (no LLM call recorded): no run for them",
            path.display(),
            empty.join(", ")
        ));
    }
    if parsed.runs.is_empty() {
        parsed.nothing = Some("Agentless output in which no stage ran for any instance".into());
    }
    Ok(parsed)
}

fn new_run(v: &Value, args: &Value, version: Option<&str>) -> Option<Run> {
    Some(Run {
        instance_id: nonempty_str(v, "instance_id")?,
        format: Some(Format::Agentless),
        format_version: version.map(str::to_string),
        agent: Some("agentless".into()),
        model: nonempty_str(args, "model"),
        exit_status: Some("finished".into()),
        ..Run::default()
    })
}

/// One LLM call of a stage: its response the thought, what the stage found the observation.
fn call_step(stage: &str, call: &Value, response: String, found: String) -> Step {
    let usage = call.get("usage").unwrap_or(&Value::Null);
    Step {
        thought: response,
        action: stage.to_string(),
        observation: found,
        tool: Some(stage.to_string()),
        args: nonempty_str(call, "prompt")
            .map(|p| Value::from_iter([("prompt".to_string(), Value::from(p))]).to_string()),
        tokens_in: i64_field(usage, "prompt_tokens"),
        tokens_out: i64_field(usage, "completion_tokens"),
        ..Step::default()
    }
}

/// Locations as text: `path` and its `function: X` / `line: N` entries.
fn locations(v: Option<&Value>) -> String {
    match v {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(path, locs)| {
                let items: Vec<String> = match locs {
                    Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
                    other => vec![crate::ingest::json::content_text(Some(other))],
                };
                format!("{path}\n  {}", items.join("\n").replace('\n', "\n  "))
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// A call's response: a string, or one per sample.
fn responses(call: &Value) -> Vec<String> {
    match call.get("response") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().map(|r| crate::ingest::json::content_text(Some(r))).collect(),
        _ => Vec::new(),
    }
}

fn localisation(v: &Value, args: &Value, stage: Option<&str>) -> Option<Run> {
    let mut run = new_run(v, args, Some(stage.unwrap_or("localisation")))?;
    let mut turns = Turns::default();
    let (mut sent, mut received) = (None, None);
    let mut push = |turns: &mut Turns, step: Step| {
        sent = add(sent, step.tokens_in);
        received = add(received, step.tokens_out);
        turns.plain(step);
    };
    let file = v.get("file_traj").filter(|t| t.get("response").is_some()).cloned().unwrap_or(Value::Null);
    for r in responses(&file) {
        push(&mut turns, call_step("file-level localisation", &file, r, locations(v.get("found_files"))));
    }
    let related: Vec<Value> = match v.get("related_loc_traj") {
        Some(Value::Array(a)) => a.clone(),
        Some(o @ Value::Object(_)) => vec![o.clone()],
        _ => Vec::new(),
    };
    for call in &related {
        for r in responses(call) {
            push(&mut turns, call_step("related elements", call, r, locations(v.get("found_related_locs"))));
        }
    }
    let edit = v.get("edit_loc_traj").cloned().unwrap_or(Value::Null);
    let found: Vec<Value> = match v.get("found_edit_locs") {
        Some(Value::Array(a)) => a.clone(),
        Some(o) => vec![o.clone()],
        None => Vec::new(),
    };
    for (k, r) in responses(&edit).into_iter().enumerate() {
        let stage = format!("edit locations (sample {})", k + 1);
        push(&mut turns, call_step(&stage, &edit, r, locations(found.get(k))));
    }
    run.tokens_sent = sent;
    run.tokens_received = received;
    turns.into_run(&mut run);
    Some(run)
}

fn repair(v: &Value, args: &Value, stage: Option<&str>) -> Option<Run> {
    let mut run = new_run(v, args, Some(stage.unwrap_or("repair")))?;
    let mut turns = Turns::default();
    let calls: Vec<&Value> = v.get("traj").and_then(Value::as_array).into_iter().flatten().collect();
    let outputs: Vec<String> = match v.get("raw_output") {
        Some(Value::Array(a)) => a.iter().map(|o| crate::ingest::json::content_text(Some(o))).collect(),
        Some(o) => vec![crate::ingest::json::content_text(Some(o))],
        None => Vec::new(),
    };
    for (k, call) in calls.iter().enumerate() {
        let response = responses(call).join("\n\n");
        let output = outputs.get(k).cloned().unwrap_or_default();
        let step = call_step(&format!("repair (generation {})", k + 1), call, response.clone(), output);
        run.tokens_sent = add(run.tokens_sent, step.tokens_in);
        run.tokens_received = add(run.tokens_received, step.tokens_out);
        let idx = turns.plain(step);
        for block in edit_blocks::search_replace(&response) {
            turns.edit(idx, block.edit(idx, EditStatus::Unknown));
        }
    }
    turns.into_run(&mut run);
    Some(run)
}
