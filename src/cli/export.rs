//! `trajan export run RUN --format atif [-o FILE]` and `export runs|steps|edits|labels
//! --format csv|parquet` (printing and files; the formats are in `review::export`).

use super::output::emit;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use trajan::review::export::ExportedLabel;
use trajan::review::export::{self, atif, parquet, tables};
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::read::RunFilter;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// labels, notes, stats, runs, steps, edits, or run (one run, --format atif).
    pub what: String,
    /// With `run`: the run (numeric id or instance id).
    pub run: Option<String>,
    /// csv, json, jsonl or markdown; atif (`run`); parquet (runs, steps, edits, labels; -o DIR).
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Write here instead of standard output: a file is replaced whole (never half-written, its
    /// mode kept); a device or FIFO (/dev/stdout, a named pipe) is written into. Parquet: the
    /// folder that gets one file per table. ATIF: the labels go beside it, in FILE.labels.json.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Labels: only the current label per run, source, rater and taxonomy (default: all).
    #[arg(long)]
    pub current: bool,
    /// Stats: group by (all, model, agent, benchmark, exit).
    #[arg(long, default_value = "all")]
    pub by: String,
    /// Stats: whose labels.
    #[arg(long, default_value = "best")]
    pub source: String,
    #[arg(long)]
    pub taxonomy: Option<String>,
}

/// Every label (or the current ones), each with the run it is about.
pub fn exported_labels(store: &Store, run: Option<i64>, current: bool) -> Result<Vec<ExportedLabel>> {
    let runs: std::collections::HashMap<i64, trajan::store::read::RunSummary> =
        store.list_runs(RunFilter::default())?.into_iter().map(|r| (r.id, r)).collect();
    // A label whose run is gone has no instance id, and names no run.
    Ok(store
        .labels(run, current)?
        .iter()
        .map(|row| ExportedLabel::new(row, runs.get(&row.label.run_id).filter(|_| row.instance_id.is_some())))
        .collect())
}

pub fn run_atif(store: &Store, args: &ExportArgs) -> Result<i32> {
    if args.what != "run" || args.format != "atif" {
        bail!("ATIF is written for one run: trajan export run RUN --format atif [-o FILE]");
    }
    let Some(run) = &args.run else { bail!("export run: which run? (trajan export run RUN --format atif)") };
    let id = store.resolve_run(run)?;
    let detail = store.run_detail(id, None)?;
    let rest = store.run_rest(id)?;
    let trajectory = atif::trajectory(&detail, &rest);
    let text = atif::to_json(&trajectory)?;
    match &args.output {
        None => emit(&text)?,
        Some(path) => {
            export::write_file(path, &text)?;
            let labels = exported_labels(store, Some(id), args.current)?;
            let sidecar = atif::sidecar(&trajectory, &detail.summary.instance_id, &labels);
            let mut name = path.as_os_str().to_owned();
            name.push(".labels.json");
            let side = std::path::PathBuf::from(name);
            export::write_file(&side, &atif::to_json(&sidecar)?)?;
            eprintln!(
                "wrote {} ({} steps) and its labels {} ({} labels)",
                sanitize(&path.display().to_string()),
                trajectory.steps.len(),
                sanitize(&side.display().to_string()),
                labels.len()
            );
        }
    }
    Ok(0)
}

pub fn tables(store: &Store, args: &ExportArgs) -> Result<i32> {
    if args.run.is_some() {
        bail!("export {}: takes no run", args.what);
    }
    match args.format.as_str() {
        "parquet" => {
            let Some(dir) = &args.output else {
                bail!("--format parquet writes one file per table: give the folder with -o DIR")
            };
            let n = match args.what.as_str() {
                "runs" => {
                    parquet::write(dir, "runs", tables::RUN_COLUMNS, store.run_table()?.iter().map(tables::run_values))?
                }
                "edits" => parquet::write(
                    dir,
                    "edits",
                    tables::EDIT_COLUMNS,
                    store.edit_table()?.into_iter().map(tables::edit_values),
                )?,
                "labels" => {
                    let labels = exported_labels(store, None, args.current)?;
                    parquet::write(dir, "labels", tables::LABEL_KINDS, labels.iter().map(tables::label_values))?
                }
                "steps" => steps_parquet(store, dir)?,
                other => bail!("export {other:?} --format parquet: runs, steps, edits or labels"),
            };
            eprintln!(
                "wrote {} ({n} rows)",
                sanitize(&dir.join(format!("{}.parquet", args.what)).display().to_string())
            );
        }
        "csv" => {
            let text = match args.what.as_str() {
                "runs" => tables::csv(tables::RUN_COLUMNS, store.run_table()?.iter().map(tables::run_values))?,
                "edits" => tables::csv(tables::EDIT_COLUMNS, store.edit_table()?.into_iter().map(tables::edit_values))?,
                "steps" => {
                    let mut rows = Vec::new();
                    store.each_step(|r| {
                        rows.push(tables::step_values(r));
                        true
                    })?;
                    tables::csv(tables::STEP_COLUMNS, rows.into_iter())?
                }
                other => bail!("export {other:?} --format csv: runs, steps, edits, labels or stats"),
            };
            match &args.output {
                None => emit(&text)?,
                Some(path) => {
                    export::write_file(path, &text)?;
                    eprintln!("wrote {}", sanitize(&path.display().to_string()));
                }
            }
        }
        other => bail!("export {}: --format {other:?}: csv or parquet", args.what),
    }
    Ok(0)
}

/// Steps are read a row at a time and written a row group at a time: the texts of a large
/// database are never all in memory.
fn steps_parquet(store: &Store, dir: &std::path::Path) -> Result<u64> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1024);
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || parquet::write(dir, "steps", tables::STEP_COLUMNS, rx.into_iter()));
        let read = store.each_step(|r| tx.send(tables::step_values(r)).is_ok());
        drop(tx);
        let written = writer.join().map_err(|_| anyhow::anyhow!("the Parquet writer stopped"))?;
        read.context("reading the steps")?;
        Ok(written?)
    })
}
