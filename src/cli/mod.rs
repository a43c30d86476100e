//! The command line: argument parsing and dispatch. Thin: each command calls the library and
//! prints.

mod agreement;
mod bench;
mod bench_classify;
mod bench_edits;
#[cfg(feature = "bench-llm")]
mod bench_llm;
mod bench_open;
mod bench_report;
mod bench_scratch;
mod bench_tui;
mod bench_validity;
/// The scripted chat-completions server of the tests, for `bench llm` (test support: not part of
/// the library, nor of a default build).
#[cfg(feature = "bench-llm")]
#[allow(dead_code)]
#[path = "../testkit/chat_server.rs"]
mod chat_server;
mod classify;
mod copy;
mod demo;
mod export;
mod ingest;
mod manual;
mod memory;
mod open;
mod output;
mod report;
mod review;
mod settings;
mod synth;
mod tui;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use trajan::config::UserConfig;
use trajan::error::StoreError;
use trajan::model::Format;
use trajan::store::read::RunFilter;
use trajan::store::{Location, Store};

#[derive(Parser)]
#[command(
    name = "trajan",
    version,
    about = "Review coding-agent trajectories: ingest, browse, search, classify failures.",
    long_about = "Review coding-agent trajectories: ingest, browse, search, classify failures.\n\n\
        `trajan PATH...` (files or folders) ingests them into the database and opens the review TUI \
        on them while they are read (the same as `trajan open PATH...`); `trajan` alone opens the TUI \
        on the database.",
    override_usage = "trajan [OPTIONS] [COMMAND]\n       trajan [OPTIONS] PATH..."
)]
pub struct Cli {
    /// The database: an SQLite file, or a PostgreSQL server shared by a team
    /// (`postgres://user@host/db`, `?sslmode=require` for TLS, or libpq's `host=... dbname=...`;
    /// the password is never shown).
    #[arg(long, global = true, env = "TRAJAN_DB", default_value = "trajan.db", hide_env_values = true)]
    db: PathBuf,
    #[command(flatten)]
    ui: UiFlags,
    /// Who is labelling, in `label` and the TUI (default: `rater` under [labels] in
    /// config.toml, else $USER, else $LOGNAME, else the PostgreSQL user of --db).
    #[arg(long, global = true)]
    rater: Option<String>,
    /// Count runs whose outcome is unknown (no evaluation ingested) as failed runs: in
    /// `runs --failed`, `classify`, `stats`, `export stats` and the TUI's queues, `]` and
    /// statistics (default: failed means the verdict is known and unresolved).
    #[arg(long, global = true)]
    include_unknown: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The TUI's own flags: taken by `trajan` alone and by the commands that open the TUI (`tui`,
/// `open`, `compare`, `demo`, `trajan PATH...`), and listed only in their help.
#[derive(clap::Args, Clone, Default)]
struct UiFlags {
    /// Theme of the TUI: dark, light, high-contrast, or the path of a theme file.
    #[arg(long)]
    theme: Option<String>,
    /// Capture the mouse in the TUI (wheel scrolls; off by default so text can be selected).
    #[arg(long)]
    mouse: bool,
    /// Colours of the TUI: truecolor, 256, 16, none; default from COLORTERM, TERM and NO_COLOR.
    #[arg(long)]
    color: Option<String>,
}

impl UiFlags {
    /// The command's own flags, else those given before it.
    fn or(self, before: &UiFlags) -> UiFlags {
        UiFlags {
            theme: self.theme.or_else(|| before.theme.clone()),
            mouse: self.mouse || before.mouse,
            color: self.color.or_else(|| before.color.clone()),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Ingest trajectories and test outputs from files or folders (recursively).
    ///
    /// Formats are told by content (`--format` forces one). Agents: SWE-agent `.traj` (0.x to
    /// 1.1, RetryAgent), mini-swe-agent (bare message lists, v1, v2), OpenHands (evaluation
    /// `output.jsonl` of 2024-2026, event lists, V0 file-store sessions `events/<id>.json`, the
    /// resolver's output; V1 conversations of the software-agent-sdk and OpenHands-CLI 1.x),
    /// Codex CLI rollouts (0.58), Claude Code session transcripts (2.x), aider chat histories
    /// (0.86), Moatless trajectories and tree-search dumps, Agentless localisation and repair
    /// outputs, ATIF trajectories (v1.0 to v1.8) and Harbor job folders (with OpenClaw sessions),
    /// Terminal-Bench 1 run folders (harness 0.2, asciinema recordings). Evaluations: the
    /// SWE-bench harness's reports, log folders, `*.eval.log` files and run summaries,
    /// SWE-bench/experiments results, unittest output. Datasets and predictions: SWE-bench,
    /// SWE-Bench Pro and multi-SWE-bench tasks, predictions. Every file under a folder is read,
    /// skipped with what it is (`--verbose` names each), or failed with the reason.
    Ingest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Read every file as this format instead of detecting it.
        #[arg(long, value_parser = parse_format)]
        format: Option<Format>,
        /// List every problem (not a few of each kind) and every skipped file with the reason.
        #[arg(long, short)]
        verbose: bool,
        /// Do not build the search index after the write: the first search builds it.
        #[arg(long)]
        no_index: bool,
        /// Print the summary's counts as JSON on standard output (files, runs, verdicts joined,
        /// evaluations that matched no run by why); the problems stay on standard error.
        #[arg(long)]
        json: bool,
    },
    /// List runs.
    Runs {
        /// Only failed runs: the test outcome is known and unresolved (with --include-unknown,
        /// also the runs whose outcome is unknown).
        #[arg(long)]
        failed: bool,
        /// Only the runs this query keeps, in the TUI's filter language (`/` in the run list):
        /// `model:qwen failed label:context_flooding`, `steps>100 -exit:submitted`,
        /// `patch:no`, `rater:ann disputed`; see docs/REVIEWING.md. Labels are the current ones
        /// of the taxonomy (--taxonomy, else the config's).
        #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
        filter: Option<String>,
        /// The taxonomy whose labels `label:`, `rater:`, `source:`, `disputed` and `unlabelled`
        /// read.
        #[arg(long, requires = "filter")]
        taxonomy: Option<String>,
        /// The evaluations that matched no run instead (no trajectory, another model, another
        /// patch), with their verdict and why.
        #[arg(long, conflicts_with_all = ["failed", "filter"])]
        evaluations: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show one run (numeric id, or an instance id naming one run).
    Show {
        run: String,
        /// Only this step (0-based).
        #[arg(long)]
        step: Option<i64>,
        /// With --step: the prompt the model saw at that step (formats that store it).
        #[arg(long, requires = "step")]
        prompt: bool,
        /// Only the task statement, whole (the run's overview shows its first 8 lines).
        #[arg(long, conflicts_with = "step")]
        task: bool,
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
    /// Classify failed runs into the taxonomy's failure modes, with evidence steps: the offline
    /// heuristic, or an LLM over any OpenAI-compatible endpoint.
    Classify(classify::ClassifyArgs),
    /// Labels: run, mode, source, confidence, evidence steps, rationale (latest per rater).
    Labels {
        /// Only this run.
        run: Option<String>,
        /// Every label ever made, not only the latest per run and rater.
        #[arg(long)]
        history: bool,
        #[arg(long)]
        json: bool,
    },
    /// A run's signals: what the classifiers read (files seen and edited, rejections, floods...).
    Signals {
        run: String,
        #[arg(long)]
        json: bool,
    },
    /// Label a run as a reviewer: its modes (or unclassified), evidence steps, a note.
    Label(review::LabelArgs),
    /// A reviewer's note on a step, a bookmark with text (not a label): one per run, step and
    /// reviewer; writing it again replaces it, `--delete` removes it.
    Note(review::NoteArgs),
    /// Reviewers' notes on steps: of one run, or of every run.
    Notes {
        /// Only this run.
        run: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Agreement between raters per mode: Cohen's kappa, Krippendorff's alpha,
    /// precision/recall/F1 against the reference, confusion, coverage, n, bootstrap 95% intervals.
    Agreement(agreement::AgreementArgs),
    /// Failure-mode distribution overall or by model, agent, benchmark or exit.
    Stats(review::StatsArgs),
    /// Export labels or statistics (csv, json, jsonl, markdown), the runs, steps, edits and labels
    /// tables (csv, parquet), or one run as an ATIF trajectory.
    Export(export::ExportArgs),
    /// Merge labels exported from another reviewer's database (JSON or JSON lines); conflicts
    /// are reported, never overwritten.
    ImportLabels {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// The local taxonomy the labels are checked against (default: the config's, else refactoring).
        #[arg(long)]
        taxonomy: Option<String>,
        /// Import adjudications too (by default the reference is settled here, and a file's
        /// adjudications are counted as skipped).
        #[arg(long)]
        adjudications: bool,
        /// With a labelled set (labels.json): its onset reference (onset.json), whose onset and
        /// blame each run's reference label then carries.
        #[arg(long, value_name = "ONSET_JSON")]
        onset: Option<PathBuf>,
    },
    /// Create or upgrade the schema: of a PostgreSQL database (as a role that owns it; no other
    /// command changes its schema, so reviewers' roles need no DDL), or of a file.
    Migrate,
    /// Copy a whole store into an empty one (SQLite to PostgreSQL and back), then compare every
    /// table of both.
    Copy {
        /// The store to copy: a file or a `postgres://` URL.
        #[arg(long)]
        from: PathBuf,
        /// The empty store to fill: a file (created) or a `postgres://` URL (migrated).
        #[arg(long)]
        to: PathBuf,
    },
    /// Open the review TUI (also what `trajan` alone does).
    Tui {
        #[command(flatten)]
        ui: UiFlags,
    },
    /// Open the review TUI on one run (numeric id, or an instance id naming one run), or on files
    /// and folders: they are ingested (as `ingest` does; an unchanged file is not read again)
    /// and shown while they are read. An argument is a path when it has a `/` in it or names an
    /// existing file or folder (`./12` is the file, `12` the run).
    Open {
        #[arg(required = true, value_name = "RUN|PATH")]
        targets: Vec<String>,
        #[command(flatten)]
        ui: UiFlags,
    },
    /// Compare runs of one task side by side: steps aligned, divergences, patches per file
    /// (opens the TUI; `--json` prints the comparison).
    Compare {
        /// Two or more runs (numeric ids, or instance ids naming one run each), or one instance
        /// id: every run of that instance.
        #[arg(required = true, num_args = 1..)]
        runs: Vec<String>,
        /// Print the alignment (rows of step indices, null for a gap), the divergences and the
        /// per-file patch comparison as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        ui: UiFlags,
    },
    /// The bundled demo fixtures in a temporary database, opened in the TUI (listed when not on
    /// a terminal).
    Demo {
        #[command(flatten)]
        ui: UiFlags,
    },
    /// Benchmarks (release mode): synthetic data, ingest, the TUI, the classifiers.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// Print the shell completion script for SHELL.
    ///
    /// Install it where your shell looks, e.g. for bash
    /// `trajan completions bash > ~/.local/share/bash-completion/completions/trajan`,
    /// for zsh a file `_trajan` in a folder of `$fpath`, for fish
    /// `~/.config/fish/completions/trajan.fish`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `trajan man > ~/.local/share/man/man1/trajan.1`.
    Man,
    /// `trajan PATH...`: what `trajan open PATH...` does.
    #[command(external_subcommand)]
    Paths(Vec<OsString>),
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = <Format as strum::IntoEnumIterator>::iter().map(Format::name).collect();
        format!("unknown format {s:?}; one of: {}", names.join(", "))
    })
}

/// Run the CLI; the returned code is the process exit status.
pub fn run() -> Result<i32> {
    let mut cli = Cli::parse();
    if let Some(Command::Paths(words)) = &cli.command {
        // `trajan PATH...`: read again as `trajan open PATH...`, so options after the paths are
        // read as options. A word that is no file or folder is a mistyped command.
        let Some(first) = words.first().map(|w| w.to_string_lossy().into_owned()) else { bail!("nothing to open") };
        if !open::is_path(&first) {
            bail!("unrecognized subcommand {first:?}, and no file or folder has that name (see trajan --help)");
        }
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let at = argv.len().saturating_sub(words.len());
        let mut again = argv[..at].to_vec();
        again.push("open".into());
        again.extend(words.iter().cloned());
        cli = Cli::parse_from(again);
    }
    // An empty TRAJAN_DB means unset, as for other variables.
    if cli.db.as_os_str().is_empty() {
        cli.db = PathBuf::from("trajan.db");
    }
    let db = Location::parse(cli.db.as_os_str())?;
    let ui_args = |own: Option<&UiFlags>| {
        let flags = own.cloned().unwrap_or_default().or(&cli.ui);
        tui::UiArgs {
            theme: flags.theme,
            mouse: flags.mouse,
            color: flags.color,
            rater: cli.rater.clone(),
            include_unknown: cli.include_unknown,
        }
    };
    let ui = ui_args(None);
    let Some(command) = cli.command else {
        return tui::run(&db, open(&db, Access::Read)?, tui::Start::List, &ui);
    };
    match command {
        Command::Tui { ui: own } => tui::run(&db, open(&db, Access::Read)?, tui::Start::List, &ui_args(Some(&own))),
        Command::Migrate => copy::migrate(&db),
        Command::Copy { from, to } => copy::run(&Location::parse(from.as_os_str())?, &Location::parse(to.as_os_str())?),
        Command::Open { targets, ui: own } => open_targets(&db, &targets, &ui_args(Some(&own))),
        Command::Paths(_) => bail!("nothing to open"),
        Command::Compare { runs, json, ui: own } => compare(&db, &runs, json, &ui_args(Some(&own))),
        Command::Ingest { paths, format, verbose, no_index, json } => {
            let mut store = open(&db, Access::Create)?;
            ingest::run(&mut store, &paths, format, ingest::Flags { verbose, index: !no_index, json })
        }
        Command::Runs { evaluations: true, json, .. } => {
            let orphans = open(&db, Access::Read)?.orphan_evaluations()?;
            if json {
                output::print_json(&orphans)?;
            } else {
                output::print_orphan_table(&orphans)?;
            }
            Ok(0)
        }
        Command::Runs { failed, filter, taxonomy, json, .. } => {
            let store = open(&db, Access::Read)?;
            let config = UserConfig::load(|k| std::env::var(k).ok())?;
            let scope = failed.then(|| settings::scope(cli.include_unknown, &config));
            let mut runs = store.list_runs(RunFilter { failed: scope, limit: None })?;
            if let Some(query) = filter {
                runs = review::filtered(&store, runs, &query, taxonomy.as_deref(), cli.rater.as_deref(), &config)?;
            }
            if json {
                output::print_json(&runs)?;
            } else {
                output::print_run_table(&runs)?;
            }
            Ok(0)
        }
        Command::Show { run, step, prompt, task, json } => show(&db, &run, step, prompt, task, json),
        Command::Search { query, run, limit, json } => {
            let store = open(&db, Access::Read)?;
            let run_id = run.map(|r| store.resolve_run(&r)).transpose()?;
            let hits = store.search(&query, run_id, limit)?;
            if json {
                output::print_json(&hits)?;
            } else {
                output::print_hits(&hits)?;
            }
            Ok(0)
        }
        Command::Classify(args) => {
            // `--dry-run` writes nothing.
            let access = if args.dry_run { Access::Read } else { Access::Write };
            classify::run(&mut open(&db, access)?, &db, &args, cli.include_unknown)
        }
        Command::Labels { run, history, json } => {
            let store = open(&db, Access::Read)?;
            let run_id = run.map(|r| store.resolve_run(&r)).transpose()?;
            let rows = store.labels(run_id, !history)?;
            if json {
                output::print_json(&rows)?;
            } else {
                classify::print_labels(&rows)?;
            }
            Ok(0)
        }
        Command::Signals { run, json } => {
            let store = open(&db, Access::Read)?;
            let id = store.resolve_run(&run)?;
            let (signals, _) = trajan::classify::pipeline::signals_of(&store, id)?;
            if json {
                output::print_json(&signals)?;
            } else {
                output::emit(&classify::signals_table(&signals))?;
            }
            Ok(0)
        }
        Command::Label(args) => review::label(&mut open(&db, Access::Write)?, &args, cli.rater.as_deref()),
        Command::Note(args) => review::note(&open(&db, Access::Write)?, &args, cli.rater.as_deref()),
        Command::Notes { run, json } => review::notes(&open(&db, Access::Read)?, run.as_deref(), json),
        Command::Agreement(args) => {
            let store = if args.table.is_some() { None } else { Some(open(&db, Access::Read)?) };
            agreement::agreement(store.as_ref(), &args)
        }
        Command::Stats(args) => review::stats(&open(&db, Access::Read)?, &args, cli.include_unknown),
        Command::Export(args) => {
            // Stopped (Ctrl-C, a closed terminal), an export removes the file it was writing.
            trajan::interrupt::catch()?;
            let store = open(&db, Access::Read)?;
            match args.what.as_str() {
                "chart" => export::chart(&store, &args, cli.include_unknown),
                "report" => report::run(&store, &args, cli.include_unknown),
                _ => review::export(&store, &args, cli.include_unknown),
            }
        }
        Command::ImportLabels { file, json, taxonomy, adjudications, onset } => {
            let args = review::ImportArgs {
                file: &file,
                onset: onset.as_deref(),
                json,
                taxonomy: taxonomy.as_deref(),
                adjudications,
            };
            review::import(&mut open(&db, Access::Write)?, &args)
        }
        Command::Demo { ui: own } => demo::run(&ui_args(Some(&own))),
        Command::Bench { what } => bench::run(what),
        Command::Completions { shell } => {
            output::emit_bytes(&manual::completions(shell))?;
            Ok(0)
        }
        Command::Man => {
            output::emit(&manual::man()?)?;
            Ok(0)
        }
    }
}

/// `trajan open`: one run of the database, or files and folders read into it.
fn open_targets(db: &Location, targets: &[String], ui: &tui::UiArgs) -> Result<i32> {
    match targets {
        [one] if !open::is_path(one) => tui::run(db, open(db, Access::Read)?, tui::Start::Run(one), ui),
        _ => {
            if let Some(run) = targets.iter().find(|t| !open::is_path(t)) {
                bail!("{run:?} is no file or folder: `open` takes one run (id or instance id), or files and folders");
            }
            let paths: Vec<PathBuf> = targets.iter().map(PathBuf::from).collect();
            open::run(db, &paths, ui)
        }
    }
}

/// `trajan compare`: runs side by side in the TUI, or as JSON.
fn compare(db: &Location, runs: &[String], json: bool, ui: &tui::UiArgs) -> Result<i32> {
    let store = open(db, Access::Read)?;
    let ids = match runs {
        [instance] => {
            let ids = store.runs_of_instance(instance)?;
            match ids.len() {
                0 if instance.parse::<i64>().is_ok() => {
                    bail!("compare needs two runs or more, or an instance id (run {instance} alone is one run)")
                }
                0 => bail!("no run of instance {}", trajan::sanitize::sanitize(instance)),
                1 => bail!(
                    "instance {} has one run ({}): nothing to compare it with",
                    trajan::sanitize::sanitize(instance),
                    ids[0]
                ),
                _ => ids,
            }
        }
        _ => runs.iter().map(|r| store.resolve_run(r)).collect::<Result<Vec<_>, _>>()?,
    };
    if let Some(warning) = trajan::review::compare::warning(&store, &ids)? {
        eprintln!("warning: {}", trajan::sanitize::sanitize(&warning));
    }
    if json {
        output::print_json(&trajan::review::compare::compare(&store, &ids)?)?;
        Ok(0)
    } else {
        tui::compare(db, store, ids, ui)
    }
}

/// `trajan show`: a run, one step of it, its task statement, or the prompt of a step.
fn show(db: &Location, run: &str, step: Option<i64>, prompt: bool, task: bool, json: bool) -> Result<i32> {
    let store = open(db, Access::Read)?;
    let id = store.resolve_run(run)?;
    if task {
        // No step is read (-1 names none).
        let detail = store.run_detail(id, Some(-1))?;
        let Some(task) = detail.task.filter(|t| t.instruction.is_some()) else {
            bail!("run {id} has no task statement");
        };
        if json {
            output::print_json(&task)?;
        } else {
            output::print_task(task.instruction.as_deref().unwrap_or_default())?;
        }
        return Ok(0);
    }
    let detail = store.run_detail(id, step)?;
    if let Some(n) = step
        && detail.step_list.is_empty()
    {
        match detail.summary.steps {
            0 => bail!("run {id} has no steps"),
            count => bail!("run {id} has no step {n} (its steps are 0 to {})", count - 1),
        }
    }
    if prompt {
        let Some(n) = step else { bail!("--prompt needs --step N") };
        let messages = store.step_prompt(id, n)?;
        if messages.is_empty() {
            bail!("this format does not store the prompt of each step (SWE-agent 1.x does)");
        }
        if json {
            output::print_json(&messages)?;
        } else {
            output::print_prompt(&messages)?;
        }
        return Ok(0);
    }
    if step.is_some() {
        if json {
            output::print_json(&detail)?
        } else {
            output::print_step(&detail)?
        }
        return Ok(0);
    }
    // The run's current labels (each with its onset and blame) come with the run as a whole.
    let labels = store.labels(Some(id), true)?;
    if json {
        let mut value = serde_json::to_value(&detail)?;
        value["labels"] = serde_json::to_value(&labels)?;
        output::print_json(&value)?;
    } else {
        output::print_run(&detail, &labels)?;
    }
    Ok(0)
}

/// How a command uses the database.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Reading commands and the TUI: the database must exist; opened read-only, never changed.
    Read,
    /// Commands that add to a database that must exist (classify, label, import-labels).
    Write,
    /// `ingest`: creates the database when it does not exist.
    Create,
}

fn open(db: &Location, access: Access) -> Result<Store> {
    let db = match db {
        Location::File(path) => path.as_path(),
        Location::Server(_) => return Ok(Store::open_at(db, access == Access::Read)?),
    };
    // A mistyped `--db` is an error, not an empty list.
    if access != Access::Create && !db.exists() {
        bail!("no database at {} (create one with: trajan --db {} ingest PATH...)", db.display(), db.display());
    }
    if db.is_dir() {
        bail!("{} is a folder, not a trajan database", db.display());
    }
    let opened = match access {
        Access::Read => Store::open_read_only(db),
        Access::Write | Access::Create => Store::open(db),
    };
    match opened {
        Ok(store) => Ok(store),
        // These name the file already.
        Err(
            e @ (StoreError::NotADatabase(_)
            | StoreError::NotTrajan(_)
            | StoreError::Empty(_)
            | StoreError::TooOld { .. }
            | StoreError::ReadOnly(_)
            | StoreError::WalUnreadable(_)),
        ) => Err(e.into()),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot open database {}", db.display()))),
    }
}
