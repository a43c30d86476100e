//! `trajan classify`, `trajan labels`, `trajan signals`.

use super::output::{emit, print_json};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::io::IsTerminal;
use trajan::classify::llm::client::{LlmClient, LlmSettings, max_reply_from_mb, timeout_from_secs};
use trajan::classify::llm::pipeline::{self as llm_pipeline, LlmOptions, LlmReport};
use trajan::classify::pipeline::{self, Report};
use trajan::config::UserConfig;
use trajan::label::taxonomy::Taxonomy;
use trajan::model::FailedScope;
use trajan::sanitize::sanitize;
use trajan::store::labels::LabelRow;
use trajan::store::{Location, Store};

#[derive(clap::Args)]
pub struct ClassifyArgs {
    /// The offline heuristic classifier (the default).
    #[arg(long, conflicts_with = "llm")]
    pub heuristic: bool,
    /// An LLM over any OpenAI-compatible chat-completions endpoint.
    #[arg(long)]
    pub llm: bool,
    #[command(flatten)]
    pub endpoint: LlmFlags,
    /// Print the prompts with token and cost estimates; send nothing.
    #[arg(long, requires = "llm")]
    pub dry_run: bool,
    /// A built-in taxonomy (refactoring, bugfix) or a taxonomy file.
    #[arg(long)]
    pub taxonomy: Option<String>,
    /// Every run, resolved ones too (by default the failed runs: verdict known and unresolved;
    /// --include-unknown adds the runs whose outcome is unknown).
    #[arg(long)]
    pub all: bool,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Only these runs (numeric ids or instance ids).
    pub runs: Vec<String>,
}

/// Where and how to reach an LLM (shared by `classify --llm` and `bench validity --llm`).
#[derive(clap::Args, Clone, Default)]
pub struct LlmFlags {
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
    /// LLM requests in flight at once (default 4).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Seconds before one LLM request times out (default 120, at most 86400: a day).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// The largest LLM reply read, in MB (default 4): a longer one fails its run.
    #[arg(long)]
    pub max_reply_mb: Option<f64>,
    /// Prompt budget in estimated tokens (default 24000).
    #[arg(long)]
    pub max_prompt_tokens: Option<usize>,
    /// Dollars per million prompt tokens (for cost); with --price-out.
    #[arg(long, requires = "price_out")]
    pub price_in: Option<f64>,
    /// Dollars per million completion tokens.
    #[arg(long, requires = "price_in")]
    pub price_out: Option<f64>,
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

/// The runs named, or every candidate: all runs, or the failed runs of `scope`.
pub fn select_runs(store: &Store, named: &[String], all: bool, scope: FailedScope) -> Result<Vec<i64>> {
    if named.is_empty() {
        return Ok(store.classify_candidates((!all).then_some(scope))?);
    }
    let mut ids: Vec<i64> = Vec::with_capacity(named.len());
    for r in named {
        let id = store.resolve_run(r)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

fn run_heuristic(store: &mut Store, db: &Location, taxonomy: &Taxonomy, runs: &[i64], json: bool) -> Result<i32> {
    let bar = progress_bar(runs.len(), "runs");
    let started = std::time::Instant::now();
    let report = pipeline::classify_heuristic_reading(store, readers(db, runs.len()), taxonomy, runs, |n| {
        bar.set_position(n as u64)
    })
    .context("classification stopped")?;
    bar.finish_and_clear();
    if json {
        print_json(&report)?;
    } else {
        emit(&heuristic_summary(&report, taxonomy, runs.len(), started.elapsed()))?;
    }
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

/// A read-only store of `db` per core, for the workers to read the runs they classify; none
/// (the runs read on one thread) for a few runs, or when one cannot be opened.
fn readers(db: &Location, runs: usize) -> Vec<Store> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if runs < 64 || cores < 2 {
        return Vec::new();
    }
    (0..cores).map(|_| Store::open_at(db, true)).collect::<Result<Vec<_>, _>>().unwrap_or_default()
}

fn heuristic_summary(r: &Report, taxonomy: &Taxonomy, total: usize, took: std::time::Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heuristic ({}) on {total} runs in {:.2} s: {} labelled ({} with modes, {} unclassified), {} unchanged",
        sanitize(&taxonomy.stamp()),
        took.as_secs_f64(),
        r.labelled,
        r.with_modes,
        r.labelled - r.with_modes,
        r.unchanged
    );
    for (mode, n) in &r.by_mode {
        let _ = writeln!(out, "  {mode:<36} {n}");
    }
    if r.without_gold > 0 {
        let rules: Vec<&str> = trajan::classify::rules::NEEDS_GOLD.iter().map(|r| r.name()).collect();
        let _ = writeln!(
            out,
            "  {} of the labelled runs have no gold patch: {} did not run on them",
            r.without_gold,
            rules.join(", ")
        );
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
            sanitize(&l.taxonomy),
            sanitize(&l.taxonomy_version),
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

/// The LLM pipeline's options: flags, then the config file's `[llm]`, then defaults.
pub fn llm_options(args: &LlmFlags, config: &UserConfig) -> LlmOptions {
    let llm = &config.llm;
    LlmOptions {
        concurrency: args.concurrency.or(llm.concurrency).unwrap_or(4).max(1),
        budget_tokens: args.max_prompt_tokens.or(llm.max_prompt_tokens).unwrap_or(24_000),
        price_in: args.price_in.or(llm.price_in_per_mtok),
        price_out: args.price_out.or(llm.price_out_per_mtok),
    }
}

/// The LLM client: flags, then the config file's `[llm]`, then defaults.
pub fn llm_client(args: &LlmFlags, config: &UserConfig) -> Result<LlmClient> {
    let llm = &config.llm;
    let base_url = args.base_url.clone().or_else(|| llm.base_url.clone()).unwrap_or_else(|| OPENAI.into());
    let Some(model) = args.model.clone().or_else(|| llm.model.clone()) else {
        anyhow::bail!("--llm needs a model: --model NAME, or `model` in the [llm] section of config.toml");
    };
    let key_var =
        args.api_key_env.clone().or_else(|| llm.api_key_env.clone()).unwrap_or_else(|| "OPENAI_API_KEY".into());
    let api_key = std::env::var(&key_var).ok().filter(|k| !k.is_empty());
    if api_key.is_none() && base_url == OPENAI {
        anyhow::bail!("{key_var} is not set (OpenAI needs a key; a local server given with --base-url may not)");
    }
    let mut settings = LlmSettings::new(base_url, model);
    settings.api_key = api_key;
    settings.api_key_env = Some(key_var);
    settings.timeout = match (args.timeout, llm.timeout_secs) {
        (Some(secs), _) => timeout_from_secs(secs, "--timeout")?,
        (None, Some(secs)) => timeout_from_secs(secs, "timeout_secs in the [llm] section of config.toml")?,
        (None, None) => std::time::Duration::from_secs(120),
    };
    if let Some(r) = llm.max_retries {
        settings.max_retries = r;
    }
    settings.max_reply = match (args.max_reply_mb, llm.max_reply_mb) {
        (Some(mb), _) => max_reply_from_mb(mb, "--max-reply-mb")?,
        (None, Some(mb)) => max_reply_from_mb(mb, "max_reply_mb in the [llm] section of config.toml")?,
        (None, None) => settings.max_reply,
    };
    settings.temperature = llm.temperature.or(Some(0.0));
    settings.json_mode = llm.json_mode.unwrap_or(false);
    Ok(LlmClient::new(settings)?)
}

/// OpenAI's endpoint, used when no base URL is given.
const OPENAI: &str = "https://api.openai.com/v1";

/// `trajan classify`: the heuristic, or with `--llm` the LLM (settings: flags, then the config
/// file's `[llm]`, then defaults).
pub fn run(store: &mut Store, db: &Location, args: &ClassifyArgs, include_unknown: bool) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = super::settings::load_taxonomy(args.taxonomy.as_deref().or(config.classify.taxonomy.as_deref()))?;
    let scope = super::settings::scope(include_unknown, &config);
    let runs = select_runs(store, &args.runs, args.all, scope)?;
    if args.runs.is_empty() && !args.all && scope == FailedScope::Failed && !args.json {
        let unknown = store.classify_candidates(Some(FailedScope::WithUnknown))?.len() - runs.len();
        if unknown > 0 {
            let runs_word = if unknown == 1 { "run has" } else { "runs have" };
            eprintln!(
                "note: {unknown} {runs_word} no known outcome and are not classified (failed runs are those with a known, unresolved verdict); --include-unknown classifies them too"
            );
        }
    }
    if !args.llm {
        return run_heuristic(store, db, &taxonomy, &runs, args.json);
    }
    let opts = llm_options(&args.endpoint, &config);
    if args.dry_run {
        return dry_run(store, &taxonomy, &runs, &opts);
    }
    let client = llm_client(&args.endpoint, &config)?;
    let bar = progress_bar(runs.len(), "runs");
    let started = std::time::Instant::now();
    let report = llm_pipeline::classify_llm(store, &taxonomy, &runs, &client, &opts, |n| bar.set_position(n as u64))?;
    bar.finish_and_clear();
    if args.json {
        print_json(&report)?;
    } else {
        emit(&llm_summary(&report, &client.settings().model, &taxonomy, runs.len(), started.elapsed()))?;
    }
    Ok(if report.failed.is_empty() { 0 } else { 1 })
}

fn llm_summary(r: &LlmReport, model: &str, taxonomy: &Taxonomy, total: usize, took: std::time::Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "llm {} ({}) on {total} runs in {:.2} s: {} labelled, {} from the cache, {} unchanged, {} failed; {} with modes",
        sanitize(model),
        sanitize(&taxonomy.stamp()),
        took.as_secs_f64(),
        r.labelled,
        r.from_cache,
        r.unchanged,
        r.failed.len(),
        r.with_modes
    );
    let cost = r.cost.map(|c| format!(", ${c:.4}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "  tokens {} in, {} out{cost}; {} replies repaired after a validation error",
        r.tokens_in, r.tokens_out, r.repaired
    );
    for (mode, n) in &r.by_mode {
        let _ = writeln!(out, "  {mode:<36} {n}");
    }
    // Each distinct error once: a refused connection fails every run the same way.
    for group in &r.failed_grouped {
        let error = sanitize(&group.error);
        match group.runs.as_slice() {
            [run] => {
                let _ = writeln!(out, "error: run {run}: {error}");
            }
            runs => {
                let mut ids: Vec<String> = runs.iter().take(MAX_RUN_IDS).map(i64::to_string).collect();
                if runs.len() > MAX_RUN_IDS {
                    ids.push("…".into());
                }
                let _ = writeln!(out, "error: {error} — {} runs ({})", runs.len(), ids.join(", "));
            }
        }
    }
    out
}

/// Run ids listed after an error that hit several runs.
const MAX_RUN_IDS: usize = 10;

/// `--dry-run`: the prompts, with token and cost estimates; nothing is sent or written.
fn dry_run(store: &Store, taxonomy: &Taxonomy, runs: &[i64], opts: &LlmOptions) -> Result<i32> {
    let mut out = String::new();
    let mut total_tokens = 0usize;
    let _ =
        writeln!(out, "=== system prompt (sent with every run)\n{}", sanitize(&llm_pipeline::system_prompt(taxonomy)));
    for &id in runs {
        let p = llm_pipeline::prepare(store, taxonomy, id, opts.budget_tokens)?;
        total_tokens += p.prompt.est_tokens;
        let cost = opts
            .cost(Some(p.prompt.est_tokens as u64), Some(300))
            .map(|c| format!(", about ${c:.4}"))
            .unwrap_or_default();
        let over = if p.prompt.over_budget { " OVER THE BUDGET (raise --max-prompt-tokens)" } else { "" };
        let _ = writeln!(
            out,
            "=== run {id}: about {} tokens{over} (observations cut to {} chars per step, {} steps left out){cost}; prompt {}\n{}",
            p.prompt.est_tokens,
            p.prompt.obs_chars_per_step,
            p.prompt.steps_omitted,
            p.prompt.hash,
            sanitize(&p.prompt.user)
        );
    }
    let cost = opts
        .cost(Some(total_tokens as u64), Some(300 * runs.len() as u64))
        .map(|c| format!(", about ${c:.2} (300 completion tokens per run assumed)"))
        .unwrap_or_else(|| " (give --price-in and --price-out for a cost estimate)".into());
    let _ = writeln!(out, "=== {} runs, about {total_tokens} prompt tokens{cost}; nothing was sent", runs.len());
    emit(&out)?;
    Ok(0)
}
