//! `trajan demo`: the bundled fixtures, ingested into a temporary database and classified with
//! the heuristic, then opened in the TUI (or listed).

use anyhow::Result;
use std::io::IsTerminal;
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::store::Store;
use trajan::store::read::RunFilter;

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

pub fn run(ui: &super::tui::UiArgs) -> Result<i32> {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("fixtures");
    for (rel, bytes) in FIXTURES {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    let db = tmp.path().join("demo.db");
    let mut store = Store::open(&db)?;
    let report = pipeline::ingest(&mut store, &[root], &Options::default(), &Silent);
    if report.has_problems() {
        super::ingest::print_summary(&report);
    }
    // Labels for the runs not known to be resolved, so the TUI shows them (L, v).
    let taxonomy = super::classify::load_taxonomy(None)?;
    let user = trajan::config::UserConfig::load(|k| std::env::var(k).ok())?;
    let candidates = store.classify_candidates(Some(super::review::scope(ui.include_unknown, &user)))?;
    trajan::classify::pipeline::classify_heuristic(&mut store, &taxonomy, &candidates, |_| {})?;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return super::tui::run(&db, store, None, ui);
    }
    super::ingest::print_summary(&report);
    let runs = store.list_runs(RunFilter::default())?;
    super::output::print_run_table(&runs)?;
    super::output::emit(
        "\nTry: trajan ingest PATH... then trajan runs / show RUN / search PHRASE / classify / labels (see README.md).\n",
    )?;
    Ok(if report.has_problems() { 1 } else { 0 })
}
