//! The event loop: terminal events and the worker's results become actions, `App::update` turns
//! them into effects, the worker performs them off this thread (database reads and writes; the
//! clipboard is written here) and its results are fed back. Input is drained before each frame,
//! so a burst of keys costs one draw; no key waits for the database.

use super::action::{Action, Command};
use super::app::{App, Effect};
use super::keymap::{Context, Keymap};
use super::terminal::{self, Guard};
use super::views::{self, ViewCtx};
use super::worker::Worker;
use crate::error::StoreError;
use crate::store::read::RunFilter;
use crate::store::{Location, Store};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct Options {
    pub db: Location,
    /// Open this run first (`trajan open RUN`).
    pub open: Option<i64>,
    /// Open on these runs compared (`trajan compare RUN RUN...`).
    pub compare: Vec<i64>,
    pub mouse: bool,
    /// The reviewer, blind review, the taxonomy labels are made under.
    pub review: super::app::Review,
    /// News from files being read beside the TUI (`trajan PATH`): [`Action::Feed`] and the like.
    pub feed: Option<std::sync::mpsc::Receiver<Action>>,
}

/// Run the TUI until the reviewer quits. The terminal is restored however this returns.
pub fn run(store: Store, ctx: ViewCtx, opts: Options) -> Result<(), TuiError> {
    let mut guard = Guard::enter(opts.mouse)?;
    let size = guard.terminal.size()?;
    let mut app = App::new((size.width, size.height));
    if let Ok(dir) = std::env::current_dir() {
        app.export_dir = dir;
    }
    app.review = opts.review;
    let mut ctx = ctx;
    let mut worker = Worker::start(&opts.db);
    // Files read beside the TUI (`trajan PATH`) keep the index for the first search: building it
    // would contend with their writer.
    let reading = opts.feed.is_some();
    if let Some(feed) = opts.feed {
        worker.follow(feed);
    }

    // The first screen from a bounded query; the rest (every run, every run's labels, the run
    // to open) from the worker while the reviewer reads it.
    let first = first_page(&store, size.height)?;
    let unindexed = if reading { 0 } else { store.search_pending().unwrap_or(0) };
    drop(store);
    let complete = matches!(first, Action::RunsLoaded { complete: true, .. });
    dispatch(&mut worker, &mut app, first);
    let review = app.load_review();
    send(&mut worker, &mut app, vec![review]);
    if !complete {
        send(&mut worker, &mut app, vec![Effect::LoadAllRuns]);
    }
    // Runs waiting for the search index (`trajan ingest --no-index`, an earlier `trajan PATH`):
    // built in the background, after the run list; searches wait for it from now on.
    if unindexed > 0 {
        dispatch(&mut worker, &mut app, Action::Indexing { done: 0, total: unindexed });
        send(&mut worker, &mut app, vec![Effect::BuildIndex]);
    }
    // `trajan open RUN` opens a run of the database: q comes back to its list. (A run read
    // from a file, `trajan FILE`, is the only thing open: q quits; see `App::feed`.)
    if let Some(id) = opts.open {
        dispatch(&mut worker, &mut app, Action::Open(id));
    }
    if !opts.compare.is_empty() {
        dispatch(&mut worker, &mut app, Action::Compare(opts.compare));
    }

    // Draw only when something changed: an idle screen sends nothing over SSH.
    let mut dirty = true;
    // Other reviewers label the same store: every few seconds the store is asked whether its
    // labels changed (a count and a maximum), and what is on screen is read again when they did.
    let mut last_check = std::time::Instant::now();
    let mut typed: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
    loop {
        // A stop signal (closed terminal, kill) ends the TUI like `q`: the guard restores the
        // terminal and the caller's temporary files are removed on the way out.
        if app.quit || crate::interrupt::caught().is_some() {
            return Ok(());
        }
        if dirty {
            draw(&mut guard, &mut app, &mut ctx)?;
            dirty = false;
        }
        // Deferred work runs only while no key is waiting.
        if !event::poll(Duration::ZERO)? && ctx.idle() {
            dirty = true;
            continue;
        }
        // Wait for a key or the worker, then take everything that is queued before drawing
        // again. Each event is translated against the state the previous one left (a key that
        // opens a prompt changes what the next key means). While effects are out, the wait is
        // short so their results are drawn as they come.
        let wait = if worker.busy() { Duration::from_millis(4) } else { Duration::from_millis(100) };
        if event::poll(wait)? {
            loop {
                typed.push_back(event::read()?);
                if !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
        loop {
            for action in worker.ready() {
                dispatch(&mut worker, &mut app, action);
                dirty = true;
            }
            // Keys typed while a run opens are read once it is open, against the screen they
            // were typed for.
            if worker.opening() || app.quit {
                break;
            }
            let Some(event) = typed.pop_front() else { break };
            if let Some(action) = translate(event, &app, &ctx.keymap) {
                dispatch(&mut worker, &mut app, action);
                dirty = true;
            }
        }
        if last_check.elapsed() >= REVIEW_POLL && !worker.busy() {
            last_check = std::time::Instant::now();
            dispatch(&mut worker, &mut app, Action::Tick);
        }
    }
}

/// How often an open TUI asks the store whether its labels changed.
const REVIEW_POLL: Duration = Duration::from_secs(2);

/// Apply an action; its effects go to the worker (the clipboard is written here, on the
/// terminal's thread).
fn dispatch(worker: &mut Worker, app: &mut App, action: Action) {
    let effects = app.update(action);
    send(worker, app, effects);
}

fn send(worker: &mut Worker, app: &mut App, effects: Vec<Effect>) {
    for effect in effects {
        match effect {
            Effect::Copy(text) => {
                if let Err(e) = terminal::copy_to_clipboard(&text) {
                    let more = app.update(Action::Failed(format!("copy: {e}")));
                    send(worker, app, more);
                }
            }
            other => worker.send(other),
        }
    }
}

fn draw(guard: &mut Guard, app: &mut App, ctx: &mut ViewCtx) -> Result<(), TuiError> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    use crossterm::{execute, queue};
    let mut viewport = crate::tui::action::Viewport::default();
    // Into the frame's buffer: the frame and its start go out in one write when `draw` flushes.
    queue!(guard.terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let drawn = guard.terminal.draw(|f| viewport = views::draw(f, app, ctx)).map(|_| ());
    execute!(guard.terminal.backend_mut(), EndSynchronizedUpdate)?;
    drawn?;
    // The views report what they laid out; paging and scroll limits follow it.
    let effects = app.update(Action::Viewport(viewport));
    debug_assert!(effects.is_empty());
    Ok(())
}

/// The runs of the first screen (two screens' worth, in the list's order) and the total.
pub fn first_page(store: &Store, height: u16) -> Result<Action, StoreError> {
    let runs = store.list_runs(RunFilter { failed: None, limit: Some(usize::from(height) * 2) })?;
    let total = store.count_runs()?;
    let complete = runs.len() as i64 >= total;
    Ok(Action::RunsLoaded { runs, complete, total: Some(total) })
}

/// A terminal event as an action: keys go to the prompt when one is open, else through the
/// keymap of the current screen.
pub fn translate(event: Event, app: &App, keymap: &Keymap) -> Option<Action> {
    match event {
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::Key(key) if key.kind == KeyEventKind::Press => translate_key(key, app, keymap),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => Some(Action::Command(Command::ScrollDown)),
            MouseEventKind::ScrollUp => Some(Action::Command(Command::ScrollUp)),
            _ => None,
        },
        _ => None,
    }
}

fn translate_key(key: KeyEvent, app: &App, keymap: &Keymap) -> Option<Action> {
    if app.prompt.is_some() {
        return match key.code {
            KeyCode::Enter => Some(Action::InputSubmit),
            KeyCode::Esc => Some(Action::InputCancel),
            KeyCode::Backspace => Some(Action::InputBackspace),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(Action::InputCancel),
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(Action::InputClear),
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => Some(Action::Input(c)),
            _ => None,
        };
    }
    let context = if app.help.is_some() {
        Context::Help
    } else if app.picker.is_some() {
        Context::Pick
    } else {
        super::views::context(app.screen)
    };
    keymap.lookup(context, key).map(Action::Command)
}
