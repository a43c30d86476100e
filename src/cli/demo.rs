//! `trajan demo`: the bundled fixtures, ingested into a temporary database and classified with
//! the heuristic, then opened in the TUI (or listed).

use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::path::Path;
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::interrupt;
use trajan::store::Store;
use trajan::store::read::RunFilter;

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// The demo in a temporary folder (about 11 MB) that is removed however the demo ends: `q`, an
/// error, or a stop signal (a closed terminal or SSH connection, `kill`, ctrl-c). A stop signal
/// is noticed between the steps and by the TUI's event loop, and the demo unwinds through its
/// normal exits; should it not within a second, the folder is removed by the signal watcher
/// (see `trajan::signals`). Either way it ends with 128 + the signal's number.
pub fn run(ui: &super::tui::UiArgs) -> Result<i32> {
    interrupt::catch().context("cannot set up signal handling")?;
    let tmp = tempfile::tempdir().context("cannot create a temporary folder for the demo")?;
    let folder = tmp.path().to_path_buf();
    let hook = interrupt::on_forced_exit(move || {
        let _ = std::fs::remove_dir_all(&folder);
    });
    let result = demo(tmp.path(), ui);
    drop(hook);
    let removed = tmp.close();
    if let Some(signal) = interrupt::caught() {
        return Ok(interrupt::exit_status(signal));
    }
    let code = result?;
    removed.context("cannot remove the demo's temporary folder")?;
    Ok(code)
}

fn demo(dir: &Path, ui: &super::tui::UiArgs) -> Result<i32> {
    let stopped = || interrupt::caught().is_some();
    let root = dir.join("fixtures");
    for (rel, bytes) in FIXTURES {
        if stopped() {
            return Ok(0);
        }
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    let db = dir.join("demo.db");
    let mut store = Store::open(&db)?;
    let report = pipeline::ingest(&mut store, &[root], &Options::default(), &Silent);
    if stopped() {
        return Ok(0);
    }
    if report.has_problems() {
        super::ingest::print_summary(&report, false);
    }
    // Labels for the runs not known to be resolved, so the TUI shows them (L, v).
    let taxonomy = super::settings::load_taxonomy(None)?;
    let user = trajan::config::UserConfig::load(|k| std::env::var(k).ok())?;
    let candidates = store.classify_candidates(Some(super::settings::scope(ui.include_unknown, &user)))?;
    trajan::classify::pipeline::classify_heuristic(&mut store, &taxonomy, &candidates, |_| {})?;
    if stopped() {
        return Ok(0);
    }
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return super::tui::run(&trajan::store::Location::File(db.clone()), store, super::tui::Start::List, ui);
    }
    super::ingest::print_summary(&report, false);
    let runs = store.list_runs(RunFilter::default())?;
    super::output::print_run_table(&runs)?;
    super::output::emit(
        "\nTry: trajan ingest PATH... then trajan runs / show RUN / search PHRASE / classify / labels (see README.md).\n",
    )?;
    Ok(super::ingest::exit_status(&report))
}
