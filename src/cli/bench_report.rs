//! `trajan bench report`: what charts and reports cost. Each chart rendered as SVG and as PNG
//! (in process, over the corpus's statistics); the HTML report of the corpus, of 1,000 runs of a
//! database of 100,000 synthetic runs (`--filter id:1-1000`), and of one synthetic run of 20,000
//! steps: the time `trajan export report` takes (the real binary), the file's size, and the time
//! headless Chromium takes to load it and draw its first screen (a screenshot), less the time it
//! takes on an empty page.

#[allow(dead_code)]
#[path = "../testkit/chromium.rs"]
mod chromium;

use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use strum::IntoEnumIterator;
use trajan::agreement::BootstrapOptions;
use trajan::label::taxonomy::Taxonomy;
use trajan::review::chart::{self, Kind};
use trajan::review::stats::{By, Pick};
use trajan::review::summary::{Ask, stats_report};
use trajan::store::Store;

/// The real binary on `db`; the time it took.
fn trajan(db: &Path, args: &[&str]) -> Result<Duration> {
    let started = Instant::now();
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .context("running trajan")?;
    if !out.status.success() {
        bail!("trajan {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(started.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Chromium's time to load `page` and draw its first screen, less an empty page's (median of 3).
fn load(page: &Path, empty: &Path, shot: &Path) -> Result<Duration> {
    let time = |file: &Path| -> Result<Duration> {
        let runs = (0..3)
            .map(|_| chromium::screenshot(file, shot, 1280, 900).map(|p| p.elapsed).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        Ok(median(runs))
    };
    let (full, base) = (time(page)?, time(empty)?);
    Ok(full.saturating_sub(base))
}

fn report_line(out: &mut String, what: &str, db: &Path, args: &[&str], dir: &Path) -> Result<()> {
    let page = dir.join("report.html");
    let page_arg = page.to_string_lossy().into_owned();
    let mut all: Vec<&str> = vec!["export", "report"];
    all.extend_from_slice(args);
    all.extend(["-o", &page_arg]);
    let write = median((0..3).map(|_| trajan(db, &all)).collect::<Result<Vec<_>>>()?);
    let size = std::fs::metadata(&page)?.len();
    let empty = dir.join("empty.html");
    std::fs::write(&empty, "<!DOCTYPE html><html><body></body></html>")?;
    let loaded = load(&page, &empty, &dir.join("shot.png"))?;
    let _ = writeln!(
        out,
        "{what:<44} {:>8.1} MB  write {:>7.0} ms  load in Chromium {:>6.0} ms",
        size as f64 / 1e6,
        ms(write),
        ms(loaded)
    );
    Ok(())
}

/// Every chart of the corpus's statistics (by model), `n` times each as SVG and as PNG.
fn charts(db: &Path, out: &mut String) -> Result<()> {
    let store = Store::open_read_only(db)?;
    let taxonomy = Taxonomy::preset("refactoring").context("the refactoring taxonomy")?;
    let ask = Ask {
        by: By::Model,
        pick: Pick::Best,
        scope: trajan::model::FailedScope::Failed,
        blind_rater: None,
        only: None,
    };
    let report = stats_report(&store, &taxonomy, &ask, Some(&BootstrapOptions::default()))?;
    let n = 20;
    let _ = writeln!(out, "chart (corpus, by model)   SVG ms   PNG ms   SVG KB   PNG KB");
    for kind in Kind::iter() {
        let fig = chart::figure(kind, &report, &taxonomy.mode_ids(), "2025-01-01");
        let started = Instant::now();
        let mut svg = String::new();
        for _ in 0..n {
            svg = chart::svg(&fig)?;
        }
        let svg_time = started.elapsed() / n;
        let started = Instant::now();
        let mut png = Vec::new();
        for _ in 0..n {
            png = chart::png(&fig)?;
        }
        let png_time = started.elapsed() / n;
        let _ = writeln!(
            out,
            "  {:<24} {:>6.2} {:>8.2} {:>8.1} {:>8.1}",
            kind.name(),
            ms(svg_time),
            ms(png_time),
            svg.len() as f64 / 1e3,
            png.len() as f64 / 1e3
        );
    }
    Ok(())
}

pub fn run(corpus: &Path, big: &Path, sizes: &super::bench_tui::Sizes) -> Result<i32> {
    chromium::require().map_err(anyhow::Error::msg)?;
    let dir = super::bench_scratch::Scratch::new()?;
    let db = dir.path().join("corpus.db");
    let corpus_arg = corpus.to_string_lossy();
    trajan(&db, &["ingest", &corpus_arg])?;
    trajan(&db, &["classify"])?;
    let mut out = String::new();
    charts(&db, &mut out)?;
    let _ = writeln!(out);
    report_line(&mut out, "report of the corpus (every run)", &db, &[], dir.path())?;
    super::bench_scratch::cached(big, |p| super::bench_tui::build(p, sizes))?;
    let runs = Store::open_read_only(big)?.list_runs(trajan::store::read::RunFilter::default())?.len();
    report_line(
        &mut out,
        &format!("1,000 of {runs} synthetic runs (id:1-1000)"),
        big,
        &["--filter", "id:1-1000"],
        dir.path(),
    )?;
    let long = Store::open_read_only(big)?.resolve_run(super::bench_tui::LONG_RUN)?.to_string();
    report_line(
        &mut out,
        &format!("one run of {} steps ({} B outputs)", sizes.steps, sizes.obs_bytes),
        big,
        &[&long],
        dir.path(),
    )?;
    super::output::emit(&out)?;
    Ok(0)
}
