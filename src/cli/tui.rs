//! `trajan`, `trajan tui`, `trajan open RUN`, `trajan PATH...`: configuration, theme and keymap,
//! then the TUI.

use anyhow::{Context as _, Result, bail};
use std::io::IsTerminal;
use std::sync::mpsc::Receiver;
use trajan::interrupt;
use trajan::store::{Location, Store};
use trajan::tui::action::Action;
use trajan::tui::config;
use trajan::tui::driver::{self, Options};
use trajan::tui::theme::{ColorDepth, Theme};
use trajan::tui::views::ViewCtx;

pub struct UiArgs {
    pub theme: Option<String>,
    pub mouse: bool,
    pub color: Option<String>,
    /// The reviewer (`--rater`), before the config file and `$USER`.
    pub rater: Option<String>,
    pub include_unknown: bool,
}

/// What the TUI shows first.
pub enum Start<'a> {
    /// The run list.
    List,
    /// This run (numeric id or instance id).
    Run(&'a str),
    /// The run list while files are read beside it; their runs open as they come.
    Reading(Receiver<Action>),
}

/// Whether the TUI can run here (standard input and output are a terminal).
pub fn on_terminal() -> bool {
    std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

pub fn run(db: &Location, store: Store, start: Start<'_>, args: &UiArgs) -> Result<i32> {
    if !on_terminal() {
        bail!("the review TUI needs a terminal; use `trajan runs`, `show` or `search` in scripts");
    }
    let (open, feed) = match start {
        Start::List => (None, None),
        Start::Run(r) => (Some(store.resolve_run(r)?), None),
        Start::Reading(feed) => (None, Some(feed)),
    };
    launch(db, store, First { open, compare: Vec::new(), feed }, args)
}

/// `trajan compare RUN RUN...` on a terminal: the TUI opens on the comparison.
pub fn compare(db: &Location, store: Store, runs: Vec<i64>, args: &UiArgs) -> Result<i32> {
    if !on_terminal() {
        bail!("the comparison view needs a terminal; `trajan compare --json` prints the comparison for scripts");
    }
    launch(db, store, First { open: None, compare: runs, feed: None }, args)
}

/// What the TUI opens on: a run, a comparison, or the list while files are read.
struct First {
    open: Option<i64>,
    compare: Vec<i64>,
    feed: Option<Receiver<Action>>,
}

fn launch(db: &Location, store: Store, first: First, args: &UiArgs) -> Result<i32> {
    let First { open, compare, feed } = first;
    let env = |k: &str| std::env::var(k).ok();
    let (cfg, keymap) = config::load_ui(env)?;
    let depth = match &args.color {
        Some(c) => c.parse::<ColorDepth>().map_err(|e| anyhow::anyhow!("--color {c}: {e}"))?,
        None => ColorDepth::detect(env),
    };
    let theme_name = args.theme.clone().or(cfg.theme.clone()).unwrap_or_else(|| "dark".to_string());
    let theme = Theme::load(&theme_name, depth)?;
    let source = match db {
        Location::File(path) => {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
        }
        // The server and database: the whole URL (user, options) would push the filter and the
        // queue out of an 80-column header.
        Location::Server(url) => url.short().to_string(),
    };
    let ctx = ViewCtx::new(theme, keymap, source);
    let user = trajan::config::UserConfig::load(env)?;
    let review = trajan::tui::app::Review {
        rater: super::settings::rater(args.rater.as_deref(), &user, db.login()).unwrap_or_default(),
        blind: user.labels.blind.unwrap_or(true),
        taxonomy: super::settings::taxonomy(None, &user)?,
        scope: super::settings::scope(args.include_unknown, &user),
        ..trajan::tui::app::Review::default()
    };
    let opts = Options { db: db.clone(), open, compare, mouse: args.mouse || cfg.mouse, review, feed };
    // A closed terminal or a `kill` restores the terminal instead of leaving it raw: the event
    // loop returns, or, should it not in time, the signal watcher restores it.
    interrupt::catch().context("cannot set up signal handling")?;
    let restore = interrupt::on_forced_exit(trajan::tui::terminal::restore);
    let ran = driver::run(store, ctx, opts);
    drop(restore);
    // After a stop signal the terminal may be gone (reads fail): the signal is what happened.
    if let Some(signal) = interrupt::caught() {
        return Ok(interrupt::exit_status(signal));
    }
    ran.context("the TUI stopped")?;
    Ok(0)
}
