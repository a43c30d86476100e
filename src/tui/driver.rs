//! The event loop: terminal events and background results become actions, `App::update` turns
//! them into effects, effects are performed here (database reads, clipboard) and their results
//! fed back. Input is drained before each frame, so a burst of keys costs one draw.

use super::action::{Action, Command};
use super::app::{App, Effect};
use super::keymap::{Context, Keymap};
use super::terminal::{self, Guard};
use super::views::{self, ViewCtx};
use crate::error::StoreError;
use crate::store::Store;
use crate::store::read::RunFilter;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct Options {
    pub db: PathBuf,
    /// Open this run first (`trajan open RUN`).
    pub open: Option<i64>,
    pub mouse: bool,
    /// The reviewer, blind review, the taxonomy labels are made under.
    pub review: super::app::Review,
}

/// Run the TUI until the reviewer quits. The terminal is restored however this returns.
pub fn run(store: Store, ctx: ViewCtx, opts: Options) -> Result<(), TuiError> {
    let mut guard = Guard::enter(opts.mouse)?;
    let size = guard.terminal.size()?;
    let mut app = App::new((size.width, size.height));
    app.review = opts.review;
    let mut ctx = ctx;
    let (tx, rx) = mpsc::channel::<Action>();

    // The first screen from a bounded query; the whole list in the background.
    let first = first_page(&store, size.height)?;
    let complete = matches!(first, Action::RunsLoaded { complete: true, .. });
    settle(&store, &mut app, first);
    let review = app.load_review();
    settle_effects(&store, &mut app, vec![review]);
    if !complete {
        load_all_runs(opts.db.clone(), tx.clone());
    }
    if let Some(id) = opts.open {
        settle(&store, &mut app, Action::Open(id));
    }

    // Draw only when something changed: an idle screen sends nothing over SSH.
    let mut dirty = true;
    loop {
        // A stop signal (closed terminal, kill) ends the TUI like `q`: the guard restores the
        // terminal and the caller's temporary files are removed on the way out.
        if app.quit || crate::signals::caught().is_some() {
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
        // Wait for something to happen, then take everything that is queued before drawing
        // again. Each event is translated against the state the previous one left (a key that
        // opens a prompt changes what the next key means).
        if event::poll(Duration::from_millis(100))? {
            loop {
                if let Some(action) = translate(event::read()?, &app, &ctx.keymap) {
                    settle(&store, &mut app, action);
                    dirty = true;
                }
                if app.quit || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
        for action in rx.try_iter() {
            settle(&store, &mut app, action);
            dirty = true;
        }
    }
}

/// Apply an action and perform the effects it asks for (and theirs) until none is left.
pub(crate) fn settle(store: &Store, app: &mut App, action: Action) {
    let effects = app.update(action);
    settle_effects(store, app, effects);
}

pub(crate) fn settle_effects(store: &Store, app: &mut App, mut effects: Vec<Effect>) {
    while !effects.is_empty() {
        let actions: Vec<Action> = effects.drain(..).filter_map(|e| perform(store, e)).collect();
        for a in actions {
            effects.extend(app.update(a));
        }
    }
}

fn draw(guard: &mut Guard, app: &mut App, ctx: &mut ViewCtx) -> Result<(), TuiError> {
    use crossterm::execute;
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    let mut viewport = crate::tui::action::Viewport::default();
    execute!(std::io::stdout(), BeginSynchronizedUpdate)?;
    let drawn = guard.terminal.draw(|f| viewport = views::draw(f, app, ctx));
    execute!(std::io::stdout(), EndSynchronizedUpdate)?;
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

fn load_all_runs(db: PathBuf, tx: mpsc::Sender<Action>) {
    std::thread::spawn(move || {
        // A panic here must not reach the panic hook, which would restore the terminal under
        // the running TUI: it becomes a message in the status line.
        let loaded =
            std::panic::catch_unwind(|| Store::open_read_only(&db).and_then(|s| s.list_runs(RunFilter::default())));
        let action = match loaded {
            Ok(Ok(runs)) => Action::RunsLoaded { runs, complete: true, total: None },
            Ok(Err(e)) => Action::Failed(format!("loading the run list: {e}")),
            Err(_) => Action::Failed("loading the run list failed (internal error)".to_string()),
        };
        let _ = tx.send(action);
    });
}

pub(crate) fn perform(store: &Store, effect: Effect) -> Option<Action> {
    Some(match effect {
        Effect::LoadRun(id) => match store.run_data(id) {
            Ok(data) => Action::RunLoaded(Box::new(data)),
            Err(e) => Action::Failed(format!("run {id}: {e}")),
        },
        Effect::LoadStep { run, index } => match store.step_body(run, index) {
            Ok(body) => Action::StepLoaded(Box::new(body)),
            Err(e) => Action::Failed(format!("step {index}: {e}")),
        },
        Effect::Search { run, query } => match store.search_run(run, &query) {
            Ok(steps) => Action::SearchDone { query, steps },
            Err(e) => Action::Failed(format!("search: {e}")),
        },
        // The TUI reads read-only; the first label saved opens the database to write.
        Effect::SaveLabel { label, note } => match store.writer().and_then(|w| w.add_label(&label, note.as_deref())) {
            Ok(label_id) => Action::LabelSaved { run: label.run_id, label_id },
            Err(e) => Action::Failed(format!("saving the label: {e}")),
        },
        Effect::LoadReview { taxonomy, version, rater } => match store.current_label_sets(&taxonomy, &version) {
            Ok(sets) => Action::ReviewLoaded(crate::review::states(&sets, &rater)),
            Err(e) => Action::Failed(format!("reading the labels: {e}")),
        },
        Effect::LoadStats { taxonomy, ask } => {
            // Point estimates: `trajan agreement` gives the bootstrap intervals.
            let once = crate::agreement::BootstrapOptions { resamples: 0, ..Default::default() };
            match crate::review::summary::stats_report(store, &taxonomy, &ask, Some(&once)) {
                Ok(report) => Action::StatsLoaded(Box::new(report)),
                Err(e) => Action::Failed(format!("statistics: {e}")),
            }
        }
        Effect::Copy(text) => match terminal::copy_to_clipboard(&text) {
            Ok(()) => return None,
            Err(e) => Action::Failed(format!("copy: {e}")),
        },
    })
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
    let context = if app.help.is_some() { Context::Help } else { super::views::context(app.screen) };
    keymap.lookup(context, key).map(Action::Command)
}
