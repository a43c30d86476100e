//! `trajan PATH...` and `trajan open PATH...`: the files and folders are ingested into the
//! database (as `trajan ingest` would; a file stored before with the same content is not read
//! again) while the TUI shows them. A trajectory file is read a step at a time on a thread of its
//! own (`trajan::ingest::open`): its run opens as soon as its first steps are stored, and its step
//! list grows while the reviewer reads it. When the reading is over, one run is shown, several
//! are the run list's filter (`id:...`). Not on a terminal, the paths are ingested and their
//! runs listed.

use super::tui::{self, Start, UiArgs};
use super::{Access, output};
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use trajan::ingest::open::{self as reading, Event, Opened, Options};
use trajan::ingest::pipeline::UnitResult;
use trajan::sanitize::sanitize;
use trajan::store::Location;
use trajan::store::browse::{StepBody, StepLine};
use trajan::store::read::RunFilter;
use trajan::tui::action::{Action, Feed, PeekStep};

/// Database pages the writing connection keeps in memory while a large file goes through it
/// (the default, 128 MB, would be most of the memory `trajan FILE` may use).
const WRITER_CACHE_KIB: i64 = 16 * 1024;

/// How long quitting waits for the reading to stop (a file read whole finishes its unit first:
/// past this, what it had not committed is rolled back by SQLite when the process ends).
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Whether a command-line argument names a file or folder rather than a run: it has a `/` in
/// it, or a file or folder of that name exists here. (`./12` is the file `12`, `12` the run.)
pub fn is_path(arg: &str) -> bool {
    arg.contains('/') || std::fs::symlink_metadata(arg).is_ok()
}

pub fn run(db: &Location, paths: &[PathBuf], ui: &UiArgs) -> Result<i32> {
    if let Some(missing) = paths.iter().find(|p| std::fs::symlink_metadata(p).is_err()) {
        bail!("{}: no such file or folder", missing.display());
    }
    let created = match db {
        Location::File(path) => std::fs::symlink_metadata(path).is_err(),
        Location::Server(_) => false,
    };
    let place = stored_in(db, created);
    let mut store = super::open(db, Access::Create)?;
    store.limit_cache(WRITER_CACHE_KIB)?;
    let opts = Options { after_first: Some(yield_to_keys), ..Options::default() };
    if !tui::on_terminal() {
        let opened = reading::open(&mut store, paths, &opts, &|_| {}, &AtomicBool::new(false));
        super::ingest::print_summary(&opened.report, false);
        eprintln!("{place}");
        let mut runs = store.list_runs(RunFilter::default())?;
        runs.retain(|r| opened.runs.binary_search(&r.id).is_ok());
        output::print_run_table(&runs)?;
        fold_log(&store);
        return Ok(super::ingest::exit_status(&opened.report));
    }
    let screen = super::open(db, Access::Read)?;
    let label = label(paths);
    let (tx, rx) = mpsc::channel::<Action>();
    let cancel = Arc::new(AtomicBool::new(false));
    let reader = {
        let (paths, cancel, label, place) = (paths.to_vec(), Arc::clone(&cancel), label.clone(), place.clone());
        std::thread::spawn(move || {
            let started = Instant::now();
            let tell = |e: Event| {
                let _ = tx.send(Action::Feed(feed(e, &label)));
            };
            // A panic while reading (a bug) ends the reading with a message, not a screen that
            // says it is reading forever (the worker would also notice the closed news).
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                reading::open(&mut store, &paths, &opts, &tell, &cancel)
            }));
            let (opened, news) = match read {
                Ok(opened) => {
                    let news = done(&opened, &label, &place, started.elapsed());
                    (Some(opened), news)
                }
                Err(panic) => {
                    let message = format!(
                        "reading {label} stopped: internal error (please report it): {}",
                        trajan::error::panic_text(&panic)
                    );
                    (None, Feed::Done { runs: Vec::new(), message, error: true })
                }
            };
            let _ = tx.send(Action::Feed(news));
            opened
        })
    };
    let ran = tui::run(db, screen, Start::Reading(rx), ui);
    cancel.store(true, Ordering::Relaxed);
    let deadline = Instant::now() + STOP_WAIT;
    while !reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let opened = if reader.is_finished() { reader.join().ok().flatten() } else { None };
    // The TUI's worker may keep its connections open until the process ends, so the close of
    // the last one, which would checkpoint, never comes: fold the log in now.
    if matches!(db, Location::File(_))
        && let Ok(store) = super::open(db, Access::Write)
    {
        fold_log(&store);
    }
    let code = ran?;
    // What went wrong is said again where it stays: on the terminal once the TUI is gone.
    if let Some(opened) = opened.filter(|o| !o.cancelled && o.report.has_problems()) {
        super::ingest::print_summary(&opened.report, false);
        return Ok(code.max(1));
    }
    Ok(code)
}

/// What the reading wrote, moved from SQLite's write-ahead log into the database file (and the
/// log emptied), so that the `.db` alone holds it: a copy of the file, a backup that leaves the
/// `-wal` behind. Nothing to do on PostgreSQL. A failure (another process reading at that
/// moment) is said and leaves the data where SQLite reads it anyway, in the log.
fn fold_log(store: &trajan::store::Store) {
    if let Err(e) = store.checkpoint() {
        eprintln!("warning: the database's log was not folded into the file: {e}");
    }
}

/// Once the first screen is there, the threads reading and writing the file run at a lower
/// priority than the TUI, so keys are handled first when the cores are busy. Linux keeps the
/// nice value per thread; elsewhere it is the whole process's, and left alone.
pub(super) fn yield_to_keys() {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::setpriority_process(None, READING_NICE);
    }
}

/// The nice value of the reading threads (the TUI's stays 0).
#[cfg(target_os = "linux")]
const READING_NICE: i32 = 10;

/// What the status line calls the paths: a file's or folder's name, or how many.
fn label(paths: &[PathBuf]) -> String {
    match paths {
        [one] => {
            let name =
                one.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| one.display().to_string());
            sanitize(&name).into_owned()
        }
        many => format!("{} paths", many.len()),
    }
}

/// An event of the reading as news for the TUI.
pub(super) fn feed(event: Event, label: &str) -> Feed {
    match event {
        Event::Begun(id) => Feed::Begun(id),
        Event::Grown { bytes, size, runs } => {
            Feed::Progress { label: label.to_string(), done: bytes, total: size, runs }
        }
        Event::Edits { bytes, size, runs } => {
            Feed::Progress { label: format!("{label}, shell edits"), done: bytes, total: size, runs }
        }
        Event::Units { done, units, bytes, size } => {
            let label = if units == 1 { label.to_string() } else { format!("{label}, {done} of {units} files") };
            Feed::Progress { label, done: bytes, total: size, runs: Vec::new() }
        }
        Event::Indexed { run, peek } => Feed::Indexed { run, steps: peek.steps(), peek: peek_step(run, peek) },
        Event::Whole(why) => {
            let label = format!("{label} whole ({})", sanitize(&why));
            Feed::Progress { label, done: 0, total: 0, runs: Vec::new() }
        }
    }
}

/// The TUI's reading of a step not yet stored: the step read from the file, as it will be stored.
fn peek_step(run: i64, peek: reading::Peek) -> PeekStep {
    PeekStep(Arc::new(move |index: i64| {
        let k = usize::try_from(index).map_err(|_| format!("no step {index}"))?;
        let step = peek.step(k).map_err(|e| sanitize(&e.to_string()).into_owned())?;
        Ok((StepLine::unstored(index, &step), StepBody::unstored(run, index, &step)))
    }))
}

/// Where the runs are stored, said once (the status line at the end of the reading, or after the
/// summary): `trajan FILE` creates `./trajan.db` unless `--db` or `TRAJAN_DB` names another.
fn stored_in(db: &Location, created: bool) -> String {
    let name = sanitize(&db.shown()).into_owned();
    match created {
        true => format!("stored in {name} (a new database; --db FILE or TRAJAN_DB chooses another)"),
        false => format!("stored in {name}"),
    }
}

/// The end of the reading: its runs, and a line for the status bar (ending with where the runs
/// are stored).
pub(super) fn done(opened: &Opened, label: &str, place: &str, took: Duration) -> Feed {
    let report = &opened.report;
    let problems = report.failures().count() + report.warnings().count();
    let later = match problems {
        0 => String::new(),
        1 => " (printed again when you quit)".to_string(),
        n => format!(" ({n} problems, printed when you quit)"),
    };
    let (message, error) = if let Some(first) = report.failures().next() {
        (format!("{}{later}", sanitize(&first.to_string())), true)
    } else if report.results.iter().all(|r| matches!(r, UnitResult::Unchanged { .. })) && !report.results.is_empty() {
        (format!("{label}: unchanged since it was ingested, not read again · {place}{later}"), problems > 0)
    } else {
        let t = report.totals();
        let runs = if t.runs == 1 { "1 run".to_string() } else { format!("{} runs", t.runs) };
        let steps = trajan::tui::app::thousands(t.steps);
        let warned = if problems > 0 { format!(" with warnings{later}") } else { String::new() };
        let took = took.as_secs_f64();
        (format!("read {label}: {runs}, {steps} steps in {took:.1} s · {place}{warned}"), problems > 0)
    };
    Feed::Done { runs: opened.runs.clone(), message, error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_reading_is_told_as_the_shell_edits_with_the_runs_still_read() {
        let told = feed(Event::Edits { bytes: 5, size: 10, runs: vec![(1, 3)] }, "x.traj");
        let want = Feed::Progress { label: "x.traj, shell edits".into(), done: 5, total: 10, runs: vec![(1, 3)] };
        assert_eq!(told, want);
    }
}
