//! `trajan ingest`: progress bar on a terminal, closing summary, exit status 1 on problems.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use trajan::ingest::pipeline::{self, Options, Progress, Report, UnitResult};
use trajan::model::Format;
use trajan::sanitize::sanitize;
use trajan::store::Store;

/// An indicatif bar (files, MB, MB/s) drawn on stderr only when it is a terminal.
struct Bar {
    bar: ProgressBar,
    total: AtomicUsize,
    done: AtomicUsize,
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
        Bar { bar, total: AtomicUsize::new(0), done: AtomicUsize::new(0) }
    }
}

impl Progress for Bar {
    fn start(&self, units: usize, bytes: u64) {
        self.bar.set_length(bytes);
        self.bar.set_message(format!("0/{units} files"));
        self.total.store(units, Ordering::Relaxed);
    }
    fn advance(&self, bytes: u64, _path: &Path) {
        self.bar.inc(bytes);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.total.load(Ordering::Relaxed);
        self.bar.set_message(format!("{done}/{total} files"));
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

pub fn run(store: &mut Store, paths: &[PathBuf], format: Option<Format>) -> Result<i32> {
    let bar = Bar::new();
    let opts = Options { forced: format, ..Options::default() };
    let report = pipeline::ingest(store, paths, &opts, &bar);
    print_summary(&report);
    Ok(if report.has_problems() { 1 } else { 0 })
}

pub fn print_summary(report: &Report) {
    let t = report.totals();
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    let mb = report.bytes as f64 / 1e6;
    eprintln!(
        "ingested {} (runs {}, steps {}, test outcomes {}, predictions {}), unchanged {}, skipped {} (not trajectories or logs), failed {}: {:.1} MB in {:.2} s ({:.1} MB/s)",
        report.ingested(),
        t.runs,
        t.steps,
        t.outcomes,
        t.predictions,
        report.unchanged(),
        report.skipped(),
        report.failures().count(),
        mb,
        secs,
        mb / secs
    );
    for r in &report.results {
        match r {
            UnitResult::Failed(e) => eprintln!("error: {}", sanitize(&e.to_string())),
            UnitResult::Ingested { warnings, .. } | UnitResult::Unchanged { warnings, .. } => {
                for w in warnings {
                    eprintln!("warning: {}", sanitize(w));
                }
            }
            UnitResult::Skipped { .. } => {}
        }
    }
}
