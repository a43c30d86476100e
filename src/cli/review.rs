//! `trajan label`, `note`, `notes`, `stats`, `export`, `import-labels` (`agreement`: `cli::agreement`).

use super::output::{emit, print_json};
use super::settings;
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::Path;
use trajan::config::UserConfig;
use trajan::label::ExitCategory;
use trajan::label::HumanVerdict;
use trajan::label::taxonomy::Taxonomy;
use trajan::model::FailedScope;
use trajan::review::export::{self, Format};
use trajan::review::import;
use trajan::review::stats;
use trajan::sanitize::sanitize;
use trajan::store::Store;

#[derive(clap::Args)]
pub struct NoteArgs {
    /// The run (numeric id, or an instance id naming one run).
    pub run: String,
    /// The step (0-based).
    #[arg(long)]
    pub step: i64,
    /// The note; replaces this reviewer's note on the step.
    #[arg(required_unless_present = "delete", conflicts_with = "delete")]
    pub text: Option<String>,
    /// Remove this reviewer's note on the step.
    #[arg(long)]
    pub delete: bool,
}

/// `trajan note RUN --step N TEXT`: write (or remove) the reviewer's note on a step.
pub fn note(store: &Store, args: &NoteArgs, rater_flag: Option<&str>) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let rater = settings::rater(rater_flag, &config, store.login())?;
    let id = store.resolve_run(&args.run)?;
    let text = args.text.as_deref().unwrap_or_default();
    let kept = store.set_note(id, args.step, &rater, if args.delete { "" } else { text })?;
    let what = if kept { "note" } else { "no note" };
    emit(&format!("{what} on run {id} step {} by {}\n", args.step, sanitize(&rater)))?;
    Ok(0)
}

/// `trajan notes [RUN]`: the notes on steps, by run and step.
pub fn notes(store: &Store, run: Option<&str>, json: bool) -> Result<i32> {
    let run_id = run.map(|r| store.resolve_run(r)).transpose()?;
    let rows = store.notes(run_id)?;
    if json {
        print_json(&rows)?;
        return Ok(0);
    }
    let mut out = String::new();
    for n in &rows {
        let instance = n.instance_id.as_deref().unwrap_or("(run gone)");
        let _ = writeln!(out, "run {} {} step {} · {}:", n.run_id, sanitize(instance), n.step, sanitize(&n.rater));
        for line in sanitize(&n.text).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "{} {}", rows.len(), if rows.len() == 1 { "note" } else { "notes" });
    emit(&out)?;
    Ok(0)
}

#[derive(clap::Args)]
pub struct LabelArgs {
    /// The run (numeric id or instance id).
    pub run: String,
    /// Modes the run shows (ids of the taxonomy).
    #[arg(long = "mode", num_args = 1.., conflicts_with = "unclassified")]
    pub modes: Vec<String>,
    /// The run fits none of the modes.
    #[arg(long)]
    pub unclassified: bool,
    #[arg(long)]
    pub note: Option<String>,
    /// Steps that show the modes.
    #[arg(long = "evidence", num_args = 1..)]
    pub evidence: Vec<usize>,
    /// 0.0–1.0 (default 1.0).
    #[arg(long, default_value_t = 1.0)]
    pub confidence: f64,
    /// Settle a disagreement: this label becomes the run's reference.
    #[arg(long)]
    pub adjudicate: bool,
    #[arg(long)]
    pub taxonomy: Option<String>,
    /// The run's onset: the decisive error step (given only when the failure is the agent's).
    #[arg(long)]
    pub onset: Option<usize>,
    /// Whose failure it is: agent, task or environment.
    #[arg(long, value_parser = parse_blame)]
    pub blame: Option<trajan::label::Blame>,
}

fn parse_blame(s: &str) -> Result<trajan::label::Blame, String> {
    trajan::label::Blame::from_name(s).ok_or_else(|| format!("{s:?} is not a blame: agent, task or environment"))
}

pub fn label(store: &mut Store, args: &LabelArgs, rater_flag: Option<&str>) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    if args.modes.is_empty() && !args.unclassified {
        bail!("give the modes (--mode MODE...) or --unclassified");
    }
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let rater = settings::rater(rater_flag, &config, store.login())?;
    let id = store.resolve_run(&args.run)?;
    let detail = store.run_detail(id, Some(-1))?;
    let has_patch = detail.submission.as_deref().is_some_and(|s| !s.trim().is_empty());
    let exit = ExitCategory::classify(detail.summary.exit_status.as_deref(), has_patch).name().to_string();
    let verdict = HumanVerdict {
        modes: args.modes.clone(),
        confidence: args.confidence,
        evidence: args.evidence.clone(),
        note: args.note.clone(),
        adjudication: args.adjudicate,
        onset: args.onset,
        blame: args.blame,
    };
    let label = verdict.into_label(id, &rater, &taxonomy, detail.summary.steps.max(0) as usize, exit)?;
    let label_id = store.add_label(&label, args.note.as_deref())?;
    let what = if label.modes.is_empty() { "unclassified".to_string() } else { label.summary.clone() };
    let kind = if args.adjudicate { "adjudication" } else { "label" };
    emit(&format!(
        "{kind} {label_id}: run {id} {} by {}: {what}\n",
        sanitize(&detail.summary.instance_id),
        sanitize(&rater)
    ))?;
    Ok(0)
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// Group by model, agent, benchmark, exit (or all).
    #[arg(long, default_value = "all")]
    pub by: String,
    /// Whose labels: best (reference, else LLM, else heuristic), heuristic, llm, human, reference.
    #[arg(long, default_value = "best")]
    pub source: String,
    #[arg(long)]
    pub taxonomy: Option<String>,
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    #[arg(long)]
    pub markdown: bool,
}

fn compute_stats(
    store: &Store,
    taxonomy: &Taxonomy,
    by: &str,
    source: &str,
    scope: FailedScope,
) -> Result<stats::Stats> {
    Ok(settings::stats_report(store, taxonomy, by, source, scope, None)?.stats)
}

pub fn stats(store: &Store, args: &StatsArgs, include_unknown: bool) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let s = compute_stats(store, &taxonomy, &args.by, &args.source, settings::scope(include_unknown, &config))?;
    let modes: Vec<String> = taxonomy.mode_ids();
    let format = if args.json {
        Format::Json
    } else if args.csv {
        Format::Csv
    } else {
        Format::Markdown
    };
    // The export's text is safe for a terminal as it is (`review::export`).
    emit(&export::stats(&s, &modes, format)?)?;
    Ok(0)
}

pub fn export(store: &Store, args: &super::export::ExportArgs, include_unknown: bool) -> Result<i32> {
    let format = args.format_or("csv");
    if args.what == "run" || format == "atif" {
        return super::export::run_atif(store, args);
    }
    if format == "parquet" || matches!(args.what.as_str(), "runs" | "steps" | "edits") {
        return super::export::tables(store, args);
    }
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let format = Format::parse(&format)
        .with_context(|| format!("--format {format:?}: csv, json, jsonl, markdown, atif or parquet"))?;
    if !args.items.is_empty() {
        bail!("export {}: takes no run (only `export run RUN --format atif` does)", args.what);
    }
    let text = match args.what.as_str() {
        "labels" => export::labels(&super::export::exported_labels(store, None, args.current)?, format)?,
        "stats" => {
            let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
            let s = compute_stats(store, &taxonomy, &args.by, &args.source, settings::scope(include_unknown, &config))?;
            let modes: Vec<String> = taxonomy.mode_ids();
            export::stats(&s, &modes, format)?
        }
        "notes" => export::notes(&store.notes(None)?, format)?,
        other => bail!("export {other:?}: labels, notes, stats, runs, steps, edits, run, chart or report"),
    };
    match &args.output {
        // Every format is safe for a terminal as it is: the same text as the file.
        None => emit(&text)?,
        Some(path) => {
            export::write_file(path, &text)?;
            eprintln!("wrote {}", sanitize(&path.display().to_string()));
        }
    }
    Ok(0)
}

/// `import-labels FILE [--onset ONSETS]`.
pub struct ImportArgs<'a> {
    pub file: &'a Path,
    /// An onset reference (onset.json) read with a labelled set.
    pub onset: Option<&'a Path>,
    pub json: bool,
    pub taxonomy: Option<&'a str>,
    pub adjudications: bool,
}

pub fn import(store: &mut Store, args: &ImportArgs<'_>) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let (path, json, adjudications) = (args.file, args.json, args.adjudications);
    let local = settings::taxonomy(args.taxonomy, &config)?;
    let text = trajan::files::read_regular(path, trajan::files::LABEL_EXPORT)?;
    let onsets = args.onset.map(|p| trajan::files::read_regular(p, trajan::files::LABEL_EXPORT)).transpose()?;
    let records = import::read_export(&text, onsets.as_deref()).with_context(|| path.display().to_string())?;
    let report = import::import(store, records, &local, adjudications)?;
    if json {
        print_json(&report)?;
    } else {
        let mut o = format!(
            "imported {}, already present {}, conflicts {}, unmatched {}, rejected {}, classifier labels skipped {}{}\n",
            report.imported,
            report.already_present,
            report.conflicts.len(),
            report.unmatched.len(),
            report.rejected.len(),
            report.skipped_classifier,
            match report.skipped_adjudications {
                0 => String::new(),
                n => format!(", adjudications skipped {n} (--adjudications imports them)"),
            }
        );
        for c in &report.conflicts {
            let _ = writeln!(o, "conflict (kept the local label): {}", sanitize(c));
        }
        for u in &report.unmatched {
            let _ = writeln!(o, "unmatched: {}", sanitize(u));
        }
        for r in &report.rejected {
            let _ = writeln!(o, "rejected: {}", sanitize(r));
        }
        emit(&o)?;
    }
    Ok(if report.clean() { 0 } else { 1 })
}

/// `runs --filter EXPR`: the runs the query keeps, in the run list's order (best fuzzy matches
/// first when it has free words). Not blind: a script sees every current label.
pub fn filtered(
    store: &Store,
    runs: Vec<trajan::store::read::RunSummary>,
    query: &str,
    taxonomy: Option<&str>,
    rater: Option<&str>,
    config: &UserConfig,
) -> Result<Vec<trajan::store::read::RunSummary>> {
    use trajan::review::filter;
    let parsed = filter::parse(query).with_context(|| format!("--filter {query:?}"))?;
    let taxonomy = settings::taxonomy(taxonomy, config)?;
    let sets = store.current_label_sets(&taxonomy.name, &taxonomy.version)?;
    let rater = settings::rater(rater, config, store.login()).unwrap_or_default();
    let labels = filter::label_index(&trajan::review::states(&sets, &rater), |_| false);
    let keep = filter::apply(&runs, &labels, &parsed, filter::Sort::default());
    let mut slots: Vec<Option<trajan::store::read::RunSummary>> = runs.into_iter().map(Some).collect();
    Ok(keep.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)).collect())
}
