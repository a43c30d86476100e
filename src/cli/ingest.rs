//! `trajan ingest`: progress bar on a terminal, the problems by kind, the closing summary, the
//! search index built after the write (its own phase, progress line and summary line; not with
//! `--no-index`), and the exit status (see [`exit_status`]).

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use trajan::ingest::pipeline::problems::{Problem, ProblemKind};
use trajan::ingest::pipeline::{self, Options, Progress, Report, UnitResult};
use trajan::model::Format;
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::{IndexStats, Joined};

/// An indicatif bar (files, MB, MB/s) drawn on stderr only when it is a terminal.
struct Bar {
    bar: ProgressBar,
    total: AtomicUsize,
    done: AtomicUsize,
    /// The file being read or written now, as shown.
    current: std::sync::Mutex<String>,
}

impl Bar {
    fn new() -> Bar {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        let style = ProgressStyle::with_template(
            "{spinner} {elapsed} [{bar:20}] {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        Bar {
            bar,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            current: std::sync::Mutex::new(String::new()),
        }
    }

    /// `done/total files`, and the file being worked on.
    fn message(&self) {
        let (done, total) = (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
        let current = self.current.lock().map(|c| c.clone()).unwrap_or_default();
        let at = if current.is_empty() || done >= total { String::new() } else { format!(" · {current}") };
        self.bar.set_message(format!("{done}/{total} files{at}"));
    }
}

impl Progress for Bar {
    fn start(&self, units: usize, bytes: u64) {
        self.bar.set_length(bytes);
        self.total.store(units, Ordering::Relaxed);
        self.message();
        // The spinner and the clock move while a slow file is read.
        self.bar.enable_steady_tick(std::time::Duration::from_millis(100));
    }
    fn advance(&self, bytes: u64, _path: &Path) {
        self.bar.inc(bytes);
        self.done.fetch_add(1, Ordering::Relaxed);
        self.message();
    }
    fn current(&self, path: &Path) {
        let name = path.file_name().map(|n| sanitize(&n.to_string_lossy()).into_owned()).unwrap_or_default();
        if let Ok(mut c) = self.current.lock() {
            *c = name;
        }
        self.message();
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// How `trajan ingest` runs.
pub struct Flags {
    /// List every problem and skipped file.
    pub verbose: bool,
    /// Build the search index after the write (not with `--no-index`).
    pub index: bool,
    /// The counts as JSON on standard output.
    pub json: bool,
}

pub fn run(store: &mut Store, paths: &[PathBuf], format: Option<Format>, flags: Flags) -> Result<i32> {
    // A stop signal while files are written ends the process within a second (`signals`: the
    // watcher removes archives' unpacked folders, SQLite rolls back the transaction open); while
    // the index is built, it ends it between batches.
    trajan::interrupt::catch()?;
    let bar = Bar::new();
    let opts = Options { forced: format, ..Options::default() };
    let report = pipeline::ingest(store, paths, &opts, &bar);
    print_totals(&report, flags.verbose);
    let joined = store.joined()?;
    eprintln!("{}", verdict_line(&joined));
    if flags.json {
        super::output::print_json(&summary_json(&report, &joined))?;
    }
    let mut status = exit_status(&report);
    if report.ingested() > 0
        && let Err(e) = store.after_ingest()
    {
        // What was written stays: only the first searches are slower.
        eprintln!("warning: {}: the statistics of the new rows were not updated: {e}", store.location());
    }
    if flags.index
        && let Some(indexed) = build_index(store)?
    {
        print_index_summary(&report, &indexed);
        if indexed.failed.is_some() {
            status = status.max(1);
        }
        if let Some(signal) = indexed.stopped_by {
            status = trajan::interrupt::exit_status(signal);
        }
    }
    print_skipped(&report);
    Ok(status)
}

/// What the index phase of `trajan ingest` did.
struct Indexed {
    stats: IndexStats,
    elapsed: Duration,
    /// Runs left for the first search.
    left: i64,
    /// The stop signal (Ctrl-C) that ended the phase early.
    stopped_by: Option<i32>,
    /// Why the index could not be written (a full disk): the runs stay stored, and listed.
    failed: Option<String>,
}

/// The search index, built after the write as a phase of its own with its own progress line
/// (runs indexed). A stop signal ends it between batches: the batches done stay indexed, the
/// rest waits for the first search (a database never holds a half-indexed run). So does the
/// rest when the index cannot be written (a full disk): said, and the exit status is 1. `None`
/// when no run waits for the index.
fn build_index(store: &Store) -> Result<Option<Indexed>> {
    let started = Instant::now();
    let total = store.search_pending()?;
    if total == 0 {
        return Ok(None);
    }
    // A stop signal is noticed between batches (a second one ends the process at once, which
    // leaves the database as consistent).
    let bar = index_bar(total);
    let stats = store
        .build_search_index_until(&mut |done, _| bar.set_position(u64::try_from(done).unwrap_or(0)), &|| {
            trajan::interrupt::caught().is_some()
        });
    bar.finish_and_clear();
    let (stats, failed) = match stats {
        Ok(stats) => (stats, None),
        Err(e) => (IndexStats::default(), Some(e.to_string())),
    };
    Ok(Some(Indexed {
        stats,
        elapsed: started.elapsed(),
        left: store.search_pending()?,
        stopped_by: trajan::interrupt::caught(),
        failed,
    }))
}

fn index_bar(runs: i64) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr_with_hz(10)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(u64::try_from(runs).unwrap_or(0)), target);
    let style = ProgressStyle::with_template("{spinner} {elapsed} [{bar:20}] indexing for search: {pos}/{len} runs")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// The index phase's line, and the whole ingest's "stored and searchable" rate.
fn print_index_summary(report: &Report, indexed: &Indexed) {
    if let Some(why) = &indexed.failed {
        let runs = if indexed.left == 1 { "run" } else { "runs" };
        eprintln!(
            "search index: not written: {why}; every file stays stored, and the {} {runs} left are indexed by the first search (in memory while the database cannot be written)",
            indexed.left
        );
        return;
    }
    let secs = indexed.elapsed.as_secs_f64();
    let text_mb = indexed.stats.bytes as f64 / 1e6;
    let mut line = format!(
        "search index: {} runs, {} steps, {:.1} MB of text in {:.2} s ({:.1} MB/s)",
        indexed.stats.runs,
        indexed.stats.steps,
        text_mb,
        secs,
        text_mb / secs.max(1e-9)
    );
    if indexed.left > 0 {
        line.push_str(&format!(
            "; interrupted, {} {} left for the first search",
            indexed.left,
            if indexed.left == 1 { "run" } else { "runs" }
        ));
    } else {
        let all = report.elapsed.as_secs_f64() + secs;
        line.push_str(&format!(
            "; stored and searchable: {:.1} MB in {:.2} s ({:.1} MB/s)",
            report.bytes as f64 / 1e6,
            all,
            report.bytes as f64 / 1e6 / all.max(1e-9)
        ));
    }
    eprintln!("{line}");
}

/// 0: every file of a supported format was read whole (notes may be printed); 1: a file of a
/// supported format could not be read, or lost content (lines, records or a cut file's tail
/// skipped, bytes or values replaced), or the search index could not be written after the
/// files were (`run`). Files that are no input are skipped and change nothing.
pub fn exit_status(report: &Report) -> i32 {
    if report.has_problems() { 1 } else { 0 }
}

/// Problems shown per kind unless `--verbose`.
const EXAMPLES: usize = 3;

/// The problems grouped by kind (a few of each, or all with `verbose`; with `verbose` the skipped
/// files and why), then the summary last, where a terminal leaves it in view.
pub fn print_summary(report: &Report, verbose: bool) {
    print_totals(report, verbose);
    print_skipped(report);
}

/// The problems, then the summary's totals line.
fn print_totals(report: &Report, verbose: bool) {
    let problems = report.problems();
    let mut kinds: Vec<ProblemKind> = problems.iter().map(|p| p.kind).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let group: Vec<&Problem> = problems.iter().filter(|p| p.kind == kind).collect();
        let mut files: Vec<&Path> = group.iter().map(|p| p.path).collect();
        files.sort();
        files.dedup();
        let count = if kind.is_failure() {
            format!("{} {}", group.len(), if group.len() == 1 { "file" } else { "files" })
        } else {
            let n = files.len();
            format!("{} in {n} {}", group.len(), if n == 1 { "file" } else { "files" })
        };
        eprintln!("{} ({count}):", kind.heading());
        let label = match kind {
            k if k.is_failure() => "error",
            ProblemKind::Note => "note",
            _ => "warning",
        };
        let shown = if verbose { group.len() } else { EXAMPLES };
        for p in group.iter().take(shown) {
            eprintln!("{label}: {}", sanitize(&p.message));
        }
        if group.len() > shown {
            eprintln!("  … {} more (ingest --verbose lists them all)", group.len() - shown);
        }
    }
    if verbose {
        for r in &report.results {
            if let UnitResult::Skipped { path, skip } = r {
                eprintln!("skipped: {}: {}", sanitize(&path.display().to_string()), sanitize(&skip.reason));
            }
        }
    }
    let t = report.totals();
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    let mb = report.bytes as f64 / 1e6;
    eprintln!(
        "ingested {} {} (runs {}, steps {}, test outcomes {}, predictions {}, dataset tasks {}), unchanged {}, skipped {}, failed {}: {:.1} MB in {:.2} s ({:.1} MB/s)",
        report.ingested(),
        if report.ingested() == 1 { "file" } else { "files" },
        t.runs,
        t.steps,
        t.outcomes,
        t.predictions,
        t.tasks,
        report.unchanged(),
        report.skipped(),
        report.failures().count(),
        mb,
        secs,
        mb / secs
    );
}

/// "verdicts: X of Y runs; evaluations that matched no run: Z (names another model: a, patch
/// differs: b, no trajectory: c)", over the whole database.
fn verdict_line(j: &Joined) -> String {
    let mut why = format!(
        "names another model: {}, patch differs: {}, no trajectory: {}",
        j.other_model, j.patch_differs, j.no_trajectory
    );
    if j.nothing_ties > 0 {
        why.push_str(&format!(", nothing ties it to a run: {}", j.nothing_ties));
    }
    format!(
        "verdicts: {} of {} {}; evaluations that matched no run: {} ({why})",
        j.runs_with_verdict,
        j.runs,
        if j.runs == 1 { "run" } else { "runs" },
        j.unmatched
    )
}

/// `ingest --json`: the summary's counts.
fn summary_json(report: &Report, joined: &Joined) -> serde_json::Value {
    let t = report.totals();
    serde_json::json!({
        "ingested": report.ingested(),
        "unchanged": report.unchanged(),
        "skipped": report.skipped(),
        "failed": report.failures().count(),
        "runs": t.runs,
        "steps": t.steps,
        "test_outcomes": t.outcomes,
        "predictions": t.predictions,
        "dataset_tasks": t.tasks,
        "bytes": report.bytes,
        "exit_status": exit_status(report),
        "verdicts": joined,
    })
}

/// The summary's last line: the files skipped, by kind.
fn print_skipped(report: &Report) {
    let skipped = report.skipped_by_kind();
    if !skipped.is_empty() {
        let parts: Vec<String> = skipped.iter().map(|(kind, n)| format!("{n} {}", kind.noun(*n))).collect();
        eprintln!("skipped, not inputs: {}", parts.join(", "));
    }
}
