//! `trajan classify`, `trajan labels`, `trajan signals`.

use super::output::{emit, print_json};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::io::IsTerminal;
use trajan::classify::pipeline::{self, Report};
use trajan::classify::taxonomy::{self, Taxonomy};
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::labels::LabelRow;

#[derive(clap::Args)]
pub struct ClassifyArgs {
    /// The offline heuristic classifier (the default).
    #[arg(long, conflicts_with = "llm")]
    pub heuristic: bool,
    /// An LLM over any OpenAI-compatible chat-completions endpoint.
    #[arg(long)]
    pub llm: bool,
    /// The endpoint's base URL (e.g. http://127.0.0.1:8000/v1); default from the config file,
    /// else OpenAI's.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The model name the endpoint serves.
    #[arg(long)]
    pub model: Option<String>,
    /// The environment variable holding the API key (default OPENAI_API_KEY).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// LLM requests in flight at once.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Print the prompts with token and cost estimates; send nothing.
    #[arg(long, requires = "llm")]
    pub dry_run: bool,
    /// A built-in taxonomy (refactoring, bugfix) or a taxonomy file.
    #[arg(long)]
    pub taxonomy: Option<String>,
    /// Also runs known to be resolved (by default every run not known to be resolved).
    #[arg(long)]
    pub all: bool,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Only these runs (numeric ids or instance ids).
    pub runs: Vec<String>,
}

/// A progress bar on stderr, drawn only on a terminal.
pub fn progress_bar(len: usize, what: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr_with_hz(10)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len as u64), target);
    let template = format!("{{spinner}} {{elapsed}} [{{bar:20}}] {{pos}}/{{len}} {what} {{per_sec}} {{msg}}");
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> "),
    );
    bar
}

/// The runs named, or every candidate.
pub fn select_runs(store: &Store, named: &[String], all: bool) -> Result<Vec<i64>> {
    if named.is_empty() {
        return Ok(store.classify_candidates(all)?);
    }
    named.iter().map(|r| store.resolve_run(r).map_err(anyhow::Error::from)).collect()
}

pub fn load_taxonomy(name: Option<&str>) -> Result<Taxonomy> {
    Ok(Taxonomy::load(name.unwrap_or(taxonomy::DEFAULT))?)
}

pub fn run_heuristic(store: &mut Store, taxonomy: &Taxonomy, runs: &[i64], json: bool) -> Result<i32> {
    let bar = progress_bar(runs.len(), "runs");
    let started = std::time::Instant::now();
    let report = pipeline::classify_heuristic(store, taxonomy, runs, |n| bar.set_position(n as u64))
        .context("classification stopped")?;
    bar.finish_and_clear();
    if json {
        print_json(&report)?;
    } else {
        emit(&heuristic_summary(&report, taxonomy, runs.len(), started.elapsed()))?;
    }
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

fn heuristic_summary(r: &Report, taxonomy: &Taxonomy, total: usize, took: std::time::Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heuristic ({}) on {total} runs in {:.2} s: {} labelled ({} with modes, {} unclassified), {} unchanged",
        taxonomy.stamp(),
        took.as_secs_f64(),
        r.labelled,
        r.with_modes,
        r.labelled - r.with_modes,
        r.unchanged
    );
    for (mode, n) in &r.by_mode {
        let _ = writeln!(out, "  {mode:<36} {n}");
    }
    if !r.by_exit.is_empty() {
        let exits: Vec<String> = r.by_exit.iter().map(|(e, n)| format!("{e} {n}")).collect();
        let _ = writeln!(out, "  exit categories: {}", exits.join(", "));
    }
    for (run, e) in &r.errors {
        let _ = writeln!(out, "error: run {run}: {}", sanitize(e));
    }
    out
}

/// `trajan labels`: one line per label and mode, with evidence steps and rationale.
pub fn print_labels(rows: &[LabelRow]) -> std::io::Result<()> {
    let mut out = String::new();
    for row in rows {
        let l = &row.label;
        let instance =
            row.instance_id.as_deref().map(|i| sanitize(i).into_owned()).unwrap_or_else(|| "(run gone)".into());
        let who = if l.rater == l.source.name() {
            l.rater.clone()
        } else {
            format!("{} {}", l.source.name(), sanitize(&l.rater))
        };
        let _ = writeln!(
            out,
            "run {} {instance}  [{who}, {}@{}, exit {}]  {}",
            l.run_id,
            l.taxonomy,
            l.taxonomy_version,
            l.exit_category,
            sanitize(&l.summary)
        );
        if l.modes.is_empty() {
            let _ = writeln!(out, "  unclassified");
        }
        for (tag, verdicts) in [("", &l.modes), ("weighed, not assigned: ", &l.considered)] {
            for m in verdicts {
                let steps: Vec<String> = m.evidence.iter().map(|e| e.step.to_string()).collect();
                let _ = writeln!(
                    out,
                    "  {tag}{} {:.2}  steps {}",
                    m.mode,
                    m.confidence,
                    if steps.is_empty() { "-".into() } else { steps.join(",") }
                );
                let _ = writeln!(out, "    {}", sanitize(&m.rationale));
                for e in &m.evidence {
                    let _ = writeln!(out, "    step {:>4}: {}", e.step, sanitize(&e.note));
                }
            }
        }
        if let Some(note) = &row.note {
            let _ = writeln!(out, "  note: {}", sanitize(note));
        }
    }
    if rows.is_empty() {
        out.push_str("no labels yet (trajan classify makes them)\n");
    }
    emit(&out)
}

/// `trajan signals RUN`: the signals table, sanitized for the terminal.
pub fn signals_table(s: &trajan::classify::signals::Signals) -> String {
    sanitize(&trajan::classify::signals::table(s)).into_owned()
}
