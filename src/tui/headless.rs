//! The TUI without a terminal: the real app, keymap, views and effects, drawn into ratatui's
//! `TestBackend`. Snapshot tests and the TUI benchmark drive it with key events.

use super::action::Action;
use super::app::{App, Effect};
use super::driver::{first_page, translate};
use super::keymap::Key;
use super::perform::perform_all;
use super::views::{self, ViewCtx};
use super::worker::Worker;
use crate::store::Store;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub struct Headless {
    pub store: Store,
    pub app: App,
    pub ctx: ViewCtx,
    pub terminal: Terminal<TestBackend>,
    /// Effects performed off this thread, as the driver does; `None`: in line (deterministic).
    worker: Option<Worker>,
}

impl Headless {
    /// The first screen, as the driver builds it: a bounded first page of runs, then drawn.
    pub fn open(store: Store, ctx: ViewCtx, width: u16, height: u16) -> Result<Headless, String> {
        let mut app = App::new((width, height));
        app.update(first_page(&store, height).map_err(|e| e.to_string())?);
        let terminal = Terminal::new(TestBackend::new(width, height)).map_err(|e| e.to_string())?;
        let mut h = Headless { store, app, ctx, terminal, worker: None };
        h.draw();
        Ok(h)
    }

    /// What the driver asks its worker for after the first screen: the whole run list.
    pub fn load_all_runs(&mut self) {
        self.apply(vec![Effect::LoadAllRuns]);
        self.draw();
    }

    /// From now on effects are performed by a worker on `db` (as the driver does): a key is
    /// handled and drawn without waiting for them; [`Headless::settle`] takes their results.
    pub fn start_worker(&mut self, db: &crate::store::Location) {
        self.worker = Some(Worker::start(db));
    }

    /// Also take the news `feed` sends (files read beside the TUI), as the driver does with
    /// `trajan PATH`. Needs the worker ([`Headless::start_worker`]).
    pub fn follow(&mut self, feed: std::sync::mpsc::Receiver<Action>) {
        if let Some(worker) = self.worker.as_mut() {
            worker.follow(feed);
        }
    }

    /// Apply the worker's results that have arrived (and send the effects they ask for), without
    /// waiting, as the event loop does between keys.
    pub fn poll(&mut self) {
        let Some(worker) = self.worker.as_mut() else { return };
        let actions = worker.ready();
        for action in actions {
            let effects = self.app.update(action);
            self.apply(effects);
        }
    }

    /// Wait for the worker's results and apply them (and the effects they ask for) until it is
    /// idle, then draw.
    pub fn settle(&mut self) {
        while let Some(worker) = self.worker.as_mut().filter(|w| w.busy()) {
            let actions = worker.wait();
            for action in actions {
                let effects = self.app.update(action);
                self.apply(effects);
            }
        }
        self.draw();
    }

    pub fn apply(&mut self, effects: Vec<Effect>) {
        match self.worker.as_mut() {
            Some(worker) => effects.into_iter().for_each(|e| worker.send(e)),
            None => perform_all(&self.store, &mut self.app, effects),
        }
    }

    /// Open a run as `trajan open RUN` does.
    pub fn open_run(&mut self, run: i64) {
        let effects = self.app.update(Action::Open(run));
        self.apply(effects);
        self.draw();
    }

    pub fn draw(&mut self) {
        let mut viewport = crate::tui::action::Viewport::default();
        let (app, ctx) = (&self.app, &mut self.ctx);
        if self.terminal.draw(|f| viewport = views::draw(f, app, ctx)).is_ok() {
            self.app.update(Action::Viewport(viewport));
        }
    }

    fn event(&mut self, event: Event) {
        if let Some(action) = translate(event, &self.app, &self.ctx.keymap) {
            let effects = self.app.update(action);
            self.apply(effects);
        }
    }

    /// Press keys written as the keymap writes them, separated by spaces (`"j j Enter"`),
    /// drawing after each as the driver does.
    pub fn press(&mut self, keys: &str) -> Result<(), String> {
        for k in keys.split_whitespace() {
            let key = Key::parse(k)?;
            self.event(Event::Key(KeyEvent::new(key.code, key.modifiers)));
            self.draw();
        }
        Ok(())
    }

    /// Type text into the open prompt.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.event(Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        }
        self.draw();
    }

    pub fn screen(&self) -> String {
        self.terminal.backend().to_string()
    }
}

/// A headless app, in the default colourless theme and keymap, over a fresh database in a
/// temporary folder (named `db`, as the header shows it) holding `folder` ingested (the snapshot tests' start). The folder lives as
/// long as the returned guard.
#[cfg(test)]
pub fn over_ingested(folder: &std::path::Path, db: &str, width: u16, height: u16) -> (tempfile::TempDir, Headless) {
    use crate::ingest::pipeline::{self, Options, Silent};
    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }
    let dir = ok(tempfile::tempdir());
    let mut store = ok(Store::open(&dir.path().join(db)));
    let report = pipeline::ingest(&mut store, &[folder.to_path_buf()], &Options::default(), &Silent);
    assert!(!report.has_problems(), "{:?}", report.results);
    // Snapshots hold characters: the structure must not depend on colour.
    let ctx = ViewCtx::new(super::theme::Theme::default(), super::keymap::Keymap::default_map(), db.into());
    let ui = ok(Headless::open(store, ctx, width, height));
    (dir, ui)
}
