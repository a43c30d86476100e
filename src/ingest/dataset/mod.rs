//! Published trajectory datasets, as people download them: Parquet shards (a file, a folder of
//! them, the Hugging Face cache's `datasets--OWNER--NAME/snapshots/<rev>/data/*.parquet`) or
//! their JSON-lines export (`Dataset.to_json`), one row per run.
//!
//! A dataset is told by its columns ([`Kind::of_columns`]), the same rule for a shard's schema
//! and a JSON line's keys. Each row becomes a run with its steps (read by the adapter of its
//! dialect: SWE-agent's thought-action replies through `swe_agent::chat`, OpenAI chat messages
//! with tool calls and SWE-smith's `<function=...>` text through `ingest::atif`, see [`chat`]),
//! its verdict (an outcome tied to its row: [`ROW_VERDICT`]), its patch (the submission), its
//! model and the task its conversation states ([`task`]); the dataset's name, split, shard and
//! row are kept in the run's metadata under `dataset`. A shard is one source: re-ingesting it
//! unchanged adds nothing, a new revision replaces its runs (labels follow them, as for any
//! file).
//!
//! A row that cannot be read is named (shard, row group, row, column, why) in a warning and
//! counted; the rest of the shard is read ([`parquet`]).

pub mod chat;
pub mod nebius;
pub mod openswe;
pub mod parquet;
pub mod r2egym;
pub mod rebench;
pub mod row;
pub mod shred;
pub mod smith;
pub mod swegym;
pub mod swezero;
pub mod task;
pub mod terminal_bench;

pub use row::{Kind, ROW_VERDICT, RowAt, RowError, RowRun};

use crate::error::IngestError;
use crate::model::{Parsed, TestOutcome};
use row::{dataset_name, kind_of, rows_lost, split_name};
use serde_json::{Map, Value};
use std::path::Path;

/// Read one row of a dataset of kind `kind`.
pub fn read_row(kind: Kind, at: &RowAt<'_>, row: &Value) -> Result<RowRun, RowError> {
    if !row.is_object() {
        return Err(RowError::new("(row)", format!("expected a record, found {}", kind_of(row))));
    }
    match kind {
        Kind::Nebius => nebius::row(row),
        Kind::Rebench => rebench::row(at.shard, row),
        Kind::Smith => smith::row(at.shard, row, at.split),
        Kind::OpenSwe => openswe::row(at.shard, row),
        Kind::SweGym => swegym::row(at.shard, row),
        Kind::TerminalBench => terminal_bench::row(at.shard, row),
        Kind::SweZero => swezero::row(at.shard, row),
        Kind::R2eGym => r2egym::row(at.shard, row),
    }
}

/// Add a row's run (and its verdict) to `parsed`, or a warning naming why it could not be read.
/// True when the row was read.
pub fn add_row(kind: Kind, at: &RowAt<'_>, row: &Value, parsed: &mut Parsed) -> bool {
    let read = match read_row(kind, at, row) {
        Ok(r) => r,
        Err(e) => {
            parsed.warnings.push(e.text(at));
            return false;
        }
    };
    let RowRun { mut run, resolved, log, tests, notes, mut extra } = read;
    parsed.warnings.extend(notes.into_iter().map(|n| format!("{}: {n}", at.name())));
    parsed.tasks.extend(task::stated(&run));
    run.format = Some(kind.format());
    run.position = at.position as i64;
    let mut meta = Map::new();
    meta.insert("name".into(), at.dataset.into());
    if let Some(split) = at.split {
        meta.insert("split".into(), split.into());
    }
    if let Some(g) = at.group {
        meta.insert("row_group".into(), g.into());
    }
    meta.insert("row".into(), at.position.into());
    meta.append(&mut extra);
    let mut outer = Map::new();
    outer.insert("dataset".into(), Value::Object(meta));
    run.metadata = Some(Value::Object(outer).to_string());
    if resolved.is_some() || !tests.is_empty() {
        parsed.outcomes.push(TestOutcome {
            instance_id: run.instance_id.clone(),
            format: Some(kind.format()),
            model: run.model.clone(),
            run_label: Some(format!("{ROW_VERDICT}{}", at.position)),
            resolved,
            log,
            tests,
            patch: run.submission.clone(),
            ..TestOutcome::default()
        });
    }
    parsed.runs.push(run);
    true
}

/// A JSON line of a dataset's JSON-lines export (`Dataset.to_json`): one row, of `kind` when one
/// is given (the format its file was told or `--format` named), else of the dataset its keys tell.
pub fn parse_line(kind: Option<Kind>, path: &Path, line: usize, v: &Value) -> Result<Parsed, IngestError> {
    let keys: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let kind = kind.or_else(|| Kind::of_columns(&keys)).ok_or_else(|| {
        IngestError::parse(path, Some(crate::error::Location::Line(line)), "not a row of a known dataset")
    })?;
    let dataset = dataset_name(path, kind);
    let split = split_name(path);
    let at =
        RowAt { shard: path, dataset: &dataset, split: split.as_deref(), group: None, row: line, position: line - 1 };
    let mut parsed = Parsed::default();
    if add_row(kind, &at, v, &mut parsed) {
        Ok(parsed)
    } else {
        let why = parsed.warnings.pop().unwrap_or_default();
        Err(IngestError::parse(path, Some(crate::error::Location::Line(line)), why))
    }
}

/// A whole file of dataset rows: JSON lines (the export), or a JSON list of rows, or one row;
/// rows of `kind` (the format detected or named by `--format`), else of the dataset their keys
/// tell. Each task is kept once ([`task::Seen`]).
pub fn parse(path: &Path, text: &str, kind: Option<Kind>) -> Result<Parsed, IngestError> {
    let mut parsed = parse_rows(path, text, kind)?;
    task::Seen::default().keep_new(&mut parsed.tasks);
    Ok(parsed)
}

fn parse_rows(path: &Path, text: &str, kind: Option<Kind>) -> Result<Parsed, IngestError> {
    if path.extension().is_some_and(|e| e == "jsonl") || crate::ingest::detect::is_jsonl(text) {
        let mut parsed = Parsed::default();
        let mut warnings = Vec::new();
        crate::ingest::json::for_each_jsonl_line(path, text, &mut warnings, |line, v| {
            parsed.absorb(parse_line(kind, path, line, &v)?);
            Ok(())
        })?;
        parsed.warnings.splice(0..0, warnings);
        return Ok(parsed);
    }
    let v = crate::ingest::json::parse_value(path, text)?;
    let rows = match v {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut parsed = Parsed::default();
    let Some(kind) = kind.or_else(|| {
        rows.iter().find_map(|r| {
            let keys: Vec<String> = r.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            Kind::of_columns(&keys)
        })
    }) else {
        return Err(IngestError::shape(path, "no row of a known dataset"));
    };
    let dataset = dataset_name(path, kind);
    let split = split_name(path);
    let mut failed = 0usize;
    for (i, row) in rows.iter().enumerate() {
        let at =
            RowAt { shard: path, dataset: &dataset, split: split.as_deref(), group: None, row: i + 1, position: i };
        failed += usize::from(!add_row(kind, &at, row, &mut parsed));
    }
    if parsed.runs.is_empty() {
        let why = parsed.warnings.first().cloned().unwrap_or_else(|| "no row".into());
        return Err(IngestError::shape(path, format!("no row could be read ({why})")));
    }
    if failed > 0 {
        parsed.warnings.push(rows_lost(path, failed, rows.len()));
    }
    Ok(parsed)
}
