//! `trajan export run RUN --format atif [-o FILE]` and `export runs|steps|edits|labels
//! --format csv|parquet` (printing and files; the formats are in `review::export`).

use super::output::emit;
use super::settings;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use strum::IntoEnumIterator;
use trajan::agreement::BootstrapOptions;
use trajan::config::UserConfig;
use trajan::label::Blame;
use trajan::review::chart::{self, Kind};
use trajan::review::export::ExportedLabel;
use trajan::review::export::{self, atif, parquet, tables};
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::read::RunFilter;

/// What `trajan export --help` says of every kind of export and its formats.
const FORMATS: &str = "\
What, and in which formats (--format; default first):
  labels          every label (--current: the current ones): csv, json, jsonl, markdown, parquet (-o DIR)
  notes           reviewers' notes: csv, json, jsonl, markdown
  stats           failure modes per group (--by, --source): csv, json, jsonl, markdown
  runs|steps|edits  the tables: csv, parquet (-o DIR); runs end with each run's blame, read as
                  `stats --source S` reads it (the labels its modes come from)
  run RUN         one run as an ATIF trajectory: atif (-o FILE also writes FILE.labels.json)
  chart KIND      a chart of the numbers `stats --json` and `agreement --json` print: svg, png
                  (png when -o ends in .png); KIND is one of
                    modes      labelled failed runs per failure mode, a bar per group (--by)
                    agreement  per mode, alpha over every rater and each rater's kappa against
                               the reference, with bootstrap 95% intervals and n
                    coverage   share of labelled failed runs given a mode, per group
                    resolve    resolve rate per group (runs with a verdict)
                    steps      steps of failed and resolved runs (box plots), per group
                    cost       cost of failed and resolved runs (box plots), per group
                  stamped with the taxonomy and version, whose labels, the runs counted, the date
  report [RUN...]  one self-contained HTML page (no network: scripts, styles, charts inline; a
                  strict Content-Security-Policy): the statistics and charts, the run list, and a
                  page per run (steps, diffs of every edit, state, tests and verdict, labels with
                  their evidence steps); the runs named, those --filter keeps, or every run: html

Text from trajectories is made safe for what reads each format: escaped in HTML and SVG,
control characters shown in CSV and Markdown, CSV cells never start a formula.";

#[derive(clap::Args)]
#[command(after_long_help = FORMATS)]
pub struct ExportArgs {
    /// labels, notes, stats, runs, steps, edits, run, chart or report (see --help for the formats).
    pub what: String,
    /// `run`: the run (numeric id or instance id); `chart`: the kind of chart; `report`: the runs.
    #[arg(value_name = "RUN|KIND")]
    pub items: Vec<String>,
    /// csv, json, jsonl or markdown; atif (`run`); parquet (runs, steps, edits, labels; -o DIR);
    /// svg or png (`chart`); html (`report`). Default: csv, svg or html.
    #[arg(long)]
    pub format: Option<String>,
    /// Write here instead of standard output: a file is replaced whole (never half-written, its
    /// mode kept); a device or FIFO (/dev/stdout, a named pipe) is written into. Parquet: the
    /// folder that gets one file per table. ATIF: the labels go beside it, in FILE.labels.json.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Labels: only the current label per run, source, rater and taxonomy (default: all).
    #[arg(long)]
    pub current: bool,
    /// Stats, chart, report: group by (all, model, agent, benchmark, exit).
    #[arg(long, default_value = "all")]
    pub by: String,
    /// Stats, chart, report: whose labels; runs: whose blame the `blame` column gives.
    #[arg(long, default_value = "best")]
    pub source: String,
    #[arg(long)]
    pub taxonomy: Option<String>,
    /// Report: the runs the run list's filter keeps (the TUI's `/` language: `model:gpt
    /// resolved:no steps>50 label:context`).
    #[arg(long, conflicts_with = "items")]
    pub filter: Option<String>,
    /// Report: how many of its runs get their page of steps (the first, in the run list's
    /// order); the statistics count every run. A page of 100,000 runs' steps is gigabytes no
    /// browser opens: choose runs with --filter, or raise this.
    #[arg(long, default_value_t = trajan::review::export::report::PAGES)]
    pub pages: usize,
    /// Chart and report: bootstrap resamples for the agreement's 95% intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

impl ExportArgs {
    /// The format asked for, else `default`.
    pub fn format_or(&self, default: &str) -> String {
        self.format.clone().unwrap_or_else(|| default.to_string())
    }

    /// The one item a kind of export takes (`None` without one); more is an error.
    pub fn item(&self) -> Result<Option<&str>> {
        match self.items.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            _ => bail!("export {}: takes one {}", self.what, if self.what == "chart" { "kind" } else { "run" }),
        }
    }
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
    if args.what != "run" || args.format_or("atif") != "atif" {
        bail!("ATIF is written for one run: trajan export run RUN --format atif [-o FILE]");
    }
    let Some(run) = args.item()? else { bail!("export run: which run? (trajan export run RUN --format atif)") };
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

/// Each labelled run's blame as `stats --source S` reads it (the labels its modes come from),
/// under the taxonomy in use.
fn run_blames(store: &Store, args: &ExportArgs) -> Result<BTreeMap<i64, Blame>> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let pick = settings::pick(&args.source)?;
    Ok(trajan::review::stats::run_blames(&store.current_label_sets(&taxonomy.name, &taxonomy.version)?, pick))
}

fn run_values(r: &trajan::store::read::RunRow, blames: &BTreeMap<i64, Blame>) -> Vec<tables::Value> {
    tables::run_values(r, blames.get(&r.summary.id).copied())
}

pub fn tables(store: &Store, args: &ExportArgs) -> Result<i32> {
    if !args.items.is_empty() {
        bail!("export {}: takes no run", args.what);
    }
    match args.format_or("csv").as_str() {
        "parquet" => {
            let Some(dir) = &args.output else {
                bail!("--format parquet writes one file per table: give the folder with -o DIR")
            };
            let n = match args.what.as_str() {
                "runs" => {
                    let blames = run_blames(store, args)?;
                    let rows = store.run_table()?;
                    parquet::write(dir, "runs", tables::RUN_COLUMNS, rows.iter().map(|r| run_values(r, &blames)))?
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
                "runs" => {
                    let blames = run_blames(store, args)?;
                    tables::csv(tables::RUN_COLUMNS, store.run_table()?.iter().map(|r| run_values(r, &blames)))?
                }
                "edits" => tables::csv(tables::EDIT_COLUMNS, store.edit_table()?.into_iter().map(tables::edit_values))?,
                "steps" => {
                    let mut rows = Vec::new();
                    store.each_step(&mut |r| {
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
        let read = store.each_step(&mut |r| tx.send(tables::step_values(r)).is_ok());
        drop(tx);
        let written = writer.join().map_err(|_| anyhow::anyhow!("the Parquet writer stopped"))?;
        read.context("reading the steps")?;
        Ok(written?)
    })
}

/// The agreement's bootstrap as `--resamples` and `--seed` say (the defaults of `agreement`).
pub fn bootstrap(args: &ExportArgs) -> BootstrapOptions {
    BootstrapOptions { resamples: args.resamples, seed: args.seed, ..BootstrapOptions::default() }
}

/// `export chart KIND`: the figure of the statistics `--by` and `--source` ask for.
pub fn chart(store: &Store, args: &ExportArgs, include_unknown: bool) -> Result<i32> {
    let kinds = || Kind::iter().map(Kind::name).collect::<Vec<_>>().join(", ");
    let Some(name) = args.item()? else { bail!("export chart: which chart? one of {}", kinds()) };
    let Some(kind) = Kind::parse(name) else { bail!("export chart {name:?}: one of {}", kinds()) };
    let by_name = args.output.as_ref().and_then(|p| p.extension()).is_some_and(|x| x.eq_ignore_ascii_case("png"));
    let format = args.format_or(if by_name { "png" } else { "svg" });
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let scope = settings::scope(include_unknown, &config);
    let boot = (kind == Kind::Agreement).then(|| bootstrap(args));
    let report = settings::stats_report(store, &taxonomy, &args.by, &args.source, scope, boot.as_ref())?;
    let figure = chart::figure(kind, &report, &taxonomy.mode_ids(), &export::today());
    let bytes = match format.as_str() {
        "svg" => chart::svg(&figure)?.into_bytes(),
        "png" => chart::png(&figure)?,
        other => bail!("export chart: --format {other:?}: svg or png"),
    };
    match &args.output {
        None if format == "png" && std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            bail!("a PNG is no text for a terminal: give the file with -o FILE.png")
        }
        None => super::output::emit_bytes(&bytes)?,
        Some(path) => {
            export::write_file(path, &bytes)?;
            eprintln!("wrote {} ({} chart, {format})", sanitize(&path.display().to_string()), kind.name());
        }
    }
    Ok(0)
}
