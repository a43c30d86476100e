//! The TUI without a terminal: the real app, keymap, views and effects, drawn into ratatui's
//! `TestBackend`. Snapshot tests and the TUI benchmark drive it with key events.

use super::action::Action;
use super::app::{App, Effect};
use super::driver::{first_page, settle, settle_effects, translate};
use super::keymap::Key;
use super::views::{self, ViewCtx};
use crate::error::StoreError;
use crate::store::Store;
use crate::store::read::RunFilter;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub struct Headless {
    pub store: Store,
    pub app: App,
    pub ctx: ViewCtx,
    pub terminal: Terminal<TestBackend>,
}

impl Headless {
    /// The first screen, as the driver builds it: a bounded first page of runs, then drawn.
    pub fn open(store: Store, ctx: ViewCtx, width: u16, height: u16) -> Result<Headless, String> {
        let mut app = App::new((width, height));
        app.update(first_page(&store, height).map_err(|e| e.to_string())?);
        let terminal = Terminal::new(TestBackend::new(width, height)).map_err(|e| e.to_string())?;
        let mut h = Headless { store, app, ctx, terminal };
        h.draw();
        Ok(h)
    }

    /// What the driver's background thread does: the whole run list.
    pub fn load_all_runs(&mut self) -> Result<(), StoreError> {
        let runs = self.store.list_runs(RunFilter::default())?;
        self.app.update(Action::RunsLoaded { runs, complete: true, total: None });
        self.draw();
        Ok(())
    }

    pub fn apply(&mut self, effects: Vec<Effect>) {
        settle_effects(&self.store, &mut self.app, effects);
    }

    /// Open a run as `trajan open RUN` does.
    pub fn open_run(&mut self, run: i64) {
        settle(&self.store, &mut self.app, Action::Open(run));
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
            settle(&self.store, &mut self.app, action);
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
