//! The command line: argument parsing and dispatch. Thin: each command calls the library and
//! prints.

mod bench;
mod demo;
mod ingest;
mod output;
mod tui;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use trajan::model::Format;
use trajan::store::Store;
use trajan::store::read::RunFilter;

#[derive(Parser)]
#[command(name = "trajan", version, about = "Review coding-agent trajectories: ingest, browse, search.")]
pub struct Cli {
    /// Database file.
    #[arg(long, global = true, env = "TRAJAN_DB", default_value = "trajan.db")]
    db: PathBuf,
    /// Theme of the TUI: dark, light, high-contrast, or the path of a theme file.
    #[arg(long, global = true)]
    theme: Option<String>,
    /// Capture the mouse in the TUI (wheel scrolls; off by default so text can be selected).
    #[arg(long, global = true)]
    mouse: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Ingest trajectories and test outputs from files or folders (recursively).
    Ingest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Read every file as this format instead of detecting it.
        #[arg(long, value_parser = parse_format)]
        format: Option<Format>,
    },
    /// List runs.
    Runs {
        /// Only runs whose test outcome is known and unresolved.
        #[arg(long)]
        failed: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show one run (numeric id, or an instance id naming one run).
    Show {
        run: String,
        /// Only this step (0-based).
        #[arg(long)]
        step: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Full-text search over thoughts, actions and observations (phrase match).
    Search {
        query: String,
        /// Only within this run.
        #[arg(long)]
        run: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Open the review TUI (also what `trajan` alone does).
    Tui,
    /// Open the review TUI on one run (numeric id, or an instance id naming one run).
    Open { run: String },
    /// The bundled demo fixtures in a temporary database, opened in the TUI (listed when not on
    /// a terminal).
    Demo,
    /// Benchmarks (release mode): synthetic data generation and ingest throughput.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("unknown format {s:?}; one of: {}", names.join(", "))
    })
}

/// Run the CLI; the returned code is the process exit status.
pub fn run() -> Result<i32> {
    let cli = Cli::parse();
    let ui = tui::UiArgs { theme: cli.theme.clone(), mouse: cli.mouse };
    let Some(command) = cli.command else {
        return tui::run(&cli.db, open(&cli.db)?, None, &ui);
    };
    match command {
        Command::Tui => tui::run(&cli.db, open(&cli.db)?, None, &ui),
        Command::Open { run } => tui::run(&cli.db, open(&cli.db)?, Some(&run), &ui),
        Command::Ingest { paths, format } => {
            let mut store = open(&cli.db)?;
            ingest::run(&mut store, &paths, format)
        }
        Command::Runs { failed, json } => {
            let store = open(&cli.db)?;
            let runs = store.list_runs(RunFilter { failed_only: failed, limit: None })?;
            if json {
                output::print_json(&runs)?;
            } else {
                output::print_run_table(&runs)?;
            }
            Ok(0)
        }
        Command::Show { run, step, json } => {
            let store = open(&cli.db)?;
            let id = store.resolve_run(&run)?;
            let detail = store.run_detail(id, step)?;
            if json {
                output::print_json(&detail)?;
            } else {
                output::print_run(&detail, step.is_some())?;
            }
            Ok(0)
        }
        Command::Search { query, run, limit, json } => {
            let store = open(&cli.db)?;
            let run_id = run.map(|r| store.resolve_run(&r)).transpose()?;
            let hits = store.search(&query, run_id, limit)?;
            if json {
                output::print_json(&hits)?;
            } else {
                output::print_hits(&hits)?;
            }
            Ok(0)
        }
        Command::Demo => demo::run(&ui),
        Command::Bench { what } => bench::run(what),
    }
}

fn open(db: &std::path::Path) -> Result<Store> {
    Store::open(db).with_context(|| format!("cannot open database {}", db.display()))
}
