//! What each effect does against the store, and the action it gives back. The worker's lanes
//! call it off the UI thread; the headless app (snapshots, benchmarks) calls it in line.

use super::action::Action;
use super::app::Effect;
use crate::agreement::BootstrapOptions;
use crate::label::taxonomy::Taxonomy;
use crate::review::chart::{self, Kind};
use crate::review::export;
use crate::review::summary::{Ask, stats_report};
use crate::sanitize::sanitize;
use crate::store::Store;
use crate::store::read::RunFilter;
use std::path::{Path, PathBuf};

/// Perform `effect`; `None` when it gives no action.
pub fn perform(store: &Store, effect: Effect) -> Option<Action> {
    perform_with_progress(store, effect, &mut |_| {})
}

/// [`perform`], with the actions that report progress (building the search index) given to
/// `progress` as they come.
pub fn perform_with_progress(store: &Store, effect: Effect, progress: &mut dyn FnMut(Action)) -> Option<Action> {
    Some(match effect {
        Effect::BuildIndex => build_index(store, progress),
        Effect::CheckReview => match store.review_stamp() {
            Ok(stamp) => Action::ReviewStamp(stamp),
            // Said once the store answers again; a check that fails says nothing.
            Err(_) => return None,
        },
        Effect::LoadRunLabels(run) => {
            match store.labels(Some(run), true).and_then(|l| Ok((l, store.notes(Some(run))?))) {
                Ok((labels, notes)) => Action::RunLabelsLoaded { run, labels, notes },
                Err(e) => Action::Failed(format!("run {run}'s labels: {e}")),
            }
        }
        Effect::LoadRun(id) | Effect::RefreshRun(id) => match store.run_data(id) {
            Ok(data) => Action::RunLoaded(Box::new(data)),
            Err(e) => Action::Failed(format!("run {id}: {e}")),
        },
        Effect::LoadSteps { run, from } => {
            // The edits of the steps read, not of steps stored since.
            let read = store.step_lines(run, from).and_then(|steps| {
                let edits = store.step_edit_lines(run, from, from + steps.len())?;
                Ok((steps, edits))
            });
            match read {
                Ok((steps, edits)) => Action::StepsLoaded { run, from, steps, edits },
                Err(e) => Action::Failed(format!("run {run}: {e}")),
            }
        }
        Effect::LoadStep { run, index } => match store.step_body(run, index) {
            Ok(body) => Action::StepLoaded(Box::new(body)),
            Err(e) => Action::Failed(format!("step {index}: {e}")),
        },
        Effect::PeekStep { run, index, peek } => peek_step(run, index, &peek),
        Effect::Search { run, query } => match store.search_run(run, &query) {
            Ok(steps) => Action::SearchDone { query, steps },
            Err(e) => Action::Failed(format!("search: {e}")),
        },
        // The TUI reads read-only; the first label saved opens the database to write.
        Effect::SaveLabel { label, note } => match store.writer().and_then(|w| w.add_label(&label, note.as_deref())) {
            Ok(label_id) => Action::LabelSaved { run: label.run_id, label_id },
            Err(e) => Action::Failed(format!("saving the label: {e}")),
        },
        Effect::SaveNote { run, step, rater, text } => {
            match store.writer().and_then(|w| w.set_note(run, step, &rater, &text)) {
                Ok(kept) => Action::NoteSaved { run, step, kept },
                Err(e) => Action::Failed(format!("saving the note: {e}")),
            }
        }
        Effect::LoadReview { taxonomy, version, rater } => {
            // The labels' stamp before they are read: a label written meanwhile changes the next
            // stamp, and is read then (the first check would otherwise take it as known).
            if let Ok(stamp) = store.review_stamp() {
                progress(Action::ReviewStamp(stamp));
            }
            match store.current_label_sets(&taxonomy, &version) {
                Ok(sets) => Action::ReviewLoaded(crate::review::states(&sets, &rater)),
                Err(e) => Action::Failed(format!("reading the labels: {e}")),
            }
        }
        Effect::LoadStats { taxonomy, ask } => {
            // Point estimates: `trajan agreement` gives the bootstrap intervals.
            let once = crate::agreement::BootstrapOptions { resamples: 0, ..Default::default() };
            match crate::review::summary::stats_report(store, &taxonomy, &ask, Some(&once)) {
                Ok(report) => Action::StatsLoaded(Box::new(report)),
                Err(e) => Action::Failed(format!("statistics: {e}")),
            }
        }
        Effect::LoadCompare(ids) => match crate::review::compare::compare(store, &ids) {
            Ok(data) => Action::CompareLoaded(Box::new(data)),
            Err(e) => Action::Failed(format!("comparing runs: {e}")),
        },
        Effect::LoadPicker(base) => match store.runs_to_compare_with(base) {
            Ok((instance, runs)) => Action::PickerLoaded { base, instance, runs },
            Err(e) => Action::Failed(format!("runs to compare with: {e}")),
        },
        Effect::SearchCompared { runs, query } => {
            match runs.iter().map(|&r| store.search_run(r, &query)).collect::<Result<Vec<_>, _>>() {
                Ok(steps) => Action::CompareSearchDone { query, steps },
                Err(e) => Action::Failed(format!("search: {e}")),
            }
        }
        // The terminal's business: the event loop writes it (a headless app has no clipboard).
        Effect::Copy(_) => return None,
        Effect::LoadAllRuns => match store.list_runs(RunFilter::default()) {
            Ok(runs) => Action::RunsLoaded { runs, complete: true, total: None },
            Err(e) => Action::Failed(format!("loading the run list: {e}")),
        },
        Effect::ExportChart { taxonomy, ask, kind, dir } => match export_chart(store, &taxonomy, &ask, kind, &dir) {
            Ok(path) => Action::Exported(format!("wrote {}", sanitize(&path.display().to_string()))),
            Err(e) => Action::Failed(format!("the {} chart: {e}", kind.name())),
        },
        Effect::ExportReport { taxonomy, ask, runs, dir } => match export_report(store, &taxonomy, &ask, &runs, &dir) {
            Ok(path) => Action::Exported(format!(
                "wrote {} ({} run{})",
                sanitize(&path.display().to_string()),
                runs.len(),
                if runs.len() == 1 { "" } else { "s" }
            )),
            Err(e) => Action::Failed(format!("the report: {e}")),
        },
    })
}

/// Step `index` of run `run` read from its file ahead of the reading (no store needed: the
/// worker gives it a lane of its own).
pub(crate) fn peek_step(run: i64, index: i64, peek: &crate::tui::action::PeekStep) -> Action {
    match (peek.0)(index) {
        Ok((line, body)) => Action::StepPeeked { run, line, body: Box::new(body) },
        Err(e) => Action::Failed(format!("step {index}: {e}")),
    }
}

/// The chart as `trajan export chart` writes it (the agreement with bootstrap intervals).
fn export_chart(store: &Store, taxonomy: &Taxonomy, ask: &Ask, kind: Kind, dir: &Path) -> Result<PathBuf, String> {
    let boot = BootstrapOptions::default();
    let report = stats_report(store, taxonomy, ask, Some(&boot)).map_err(|e| e.to_string())?;
    let date = export::today();
    let svg = chart::svg(&chart::figure(kind, &report, &taxonomy.mode_ids(), &date)).map_err(|e| e.to_string())?;
    let stem = format!("trajan-{}-by-{}-{date}", kind.name(), ask.by.name());
    export::write_new(dir, &stem, "svg", svg.as_bytes()).map_err(|e| e.to_string())
}

/// The runs as `trajan export report RUN...` writes them.
fn export_report(store: &Store, taxonomy: &Taxonomy, ask: &Ask, ids: &[i64], dir: &Path) -> Result<PathBuf, String> {
    let runs = ids.iter().map(|&id| store.run_summary(id)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    let date = export::today();
    let pages = export::report::PAGES;
    let page = export::report::report(store, taxonomy, ask, &runs, pages, &BootstrapOptions::default(), &date)
        .map_err(|e| e.to_string())?;
    let stem = match ids {
        [one] => format!("trajan-report-run-{one}-{date}"),
        many => format!("trajan-report-{}-runs-{date}", many.len()),
    };
    export::write_new(dir, &stem, "html", page.as_bytes()).map_err(|e| e.to_string())
}

/// The runs waiting for the search index added to it, through a connection that may write.
/// Where the database cannot be written, nothing is built: a search then indexes the waiting
/// runs for itself (`Store::ensure_search_index`).
fn build_index(store: &Store, progress: &mut dyn FnMut(Action)) -> Action {
    match store.search_pending() {
        Ok(0) => return Action::Indexed,
        Ok(total) => progress(Action::Indexing { done: 0, total }),
        Err(e) => return Action::Failed(format!("search index: {e}")),
    }
    let Ok(writer) = store.writer() else { return Action::Indexed };
    match writer.build_search_index(&mut |done, total| progress(Action::Indexing { done, total })) {
        Ok(_) => Action::Indexed,
        Err(e) => Action::Failed(format!("search index: {e}")),
    }
}

/// Perform effects in line, and those their actions ask for, until none is left: the headless
/// app's way (snapshots, benchmarks), deterministic.
pub(crate) fn perform_all(store: &Store, app: &mut super::app::App, mut effects: Vec<Effect>) {
    while !effects.is_empty() {
        let actions: Vec<Action> = effects.drain(..).filter_map(|e| perform(store, e)).collect();
        for a in actions {
            effects.extend(app.update(a));
        }
    }
}
