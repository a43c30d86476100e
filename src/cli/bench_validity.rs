//! `trajan bench validity`: ingest a labelled set into a temporary database, classify every run
//! (the heuristic, or an LLM with `--llm`), and score the labels against the set's reference
//! judgements (`review::validity`).

use super::classify::{LlmFlags, llm_client, llm_options, progress_bar};
use super::output::{emit, print_json};
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use trajan::agreement::{BootstrapOptions, Estimate};
use trajan::classify::{heuristic, llm::pipeline::classify_llm, pipeline::classify_heuristic};
use trajan::config::UserConfig;
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::label::{Label, Source, taxonomy::Taxonomy};
use trajan::review::onset_reference::{self, OnsetEntry};
use trajan::review::onset_validity::{BlameScore, OnsetCase, OnsetScore, out_of_range, score_blame, score_onset};
use trajan::review::reference_set::{self, Entry};
use trajan::review::validity::{Case, Side, Validity, score};
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::read::RunFilter;

/// The development set in a checkout.
pub const DEFAULT_REFERENCE: &str = "fixtures/labelled/labels.json";

#[derive(clap::Args)]
pub struct ValidityArgs {
    /// The reference labels (a labels.json beside the runs, reports and tasks it judges).
    #[arg(long, default_value = DEFAULT_REFERENCE)]
    pub reference: PathBuf,
    /// Score an LLM (any OpenAI-compatible endpoint) instead of the offline heuristic.
    #[arg(long)]
    pub llm: bool,
    #[command(flatten)]
    pub endpoint: LlmFlags,
    /// Bootstrap resamples for the 95% intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The reference onsets and blame (the shape of `onset.json`: one entry per run with
    /// `onset.step`, `onset.also_acceptable`, `blame.value`); default: `onset.json` beside the
    /// reference labels, when there is one.
    #[arg(long)]
    pub onset: Option<PathBuf>,
    /// Keep the database at this path (it must not exist yet) to browse the set after.
    #[arg(long)]
    pub keep_db: Option<PathBuf>,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What could not be scored: an entry whose run was not found or not labelled.
struct Missing {
    file: String,
    why: String,
}

fn entries(path: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!("cannot read the reference set {} (run from a checkout, or give --reference FILE)", path.display())
    })?;
    let items: Vec<serde_json::Value> =
        serde_json::from_str(&text).with_context(|| format!("{}: not a JSON array", path.display()))?;
    if !reference_set::is_reference(&items) {
        bail!("{}: not a reference set (entries with `file` and `modes` of judgements)", path.display());
    }
    reference_set::read(items)
        .into_iter()
        .map(|(at, entry)| entry.map_err(|e| anyhow::anyhow!("{}: {at}: {e}", path.display())))
        .collect()
}

pub fn run(args: &ValidityArgs) -> Result<i32> {
    let entries = entries(&args.reference)?;
    let folder = args.reference.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = super::bench_scratch::Scratch::new()?;
    let db = args.keep_db.clone().unwrap_or_else(|| tmp.path().join("validity.db"));
    if db.exists() {
        bail!("{} exists; the measure needs a fresh database", db.display());
    }
    let mut store = Store::open(&db)?;
    let ingest = pipeline::ingest(&mut store, &[folder.to_path_buf()], &Options::default(), &Silent);
    let failed: Vec<String> = ingest.failures().map(|e| sanitize(&e.to_string()).into_owned()).collect();
    let runs = store.list_runs(RunFilter::default())?;
    let taxonomy =
        Taxonomy::preset(reference_set::TAXONOMY.0).context("the reference set's taxonomy is not built in")?;
    let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    let (source, rater) = if args.llm {
        let config = UserConfig::load(|k| std::env::var(k).ok())?;
        let client = llm_client(&args.endpoint, &config)?;
        let bar = progress_bar(ids.len(), "runs");
        classify_llm(&mut store, &taxonomy, &ids, &client, &llm_options(&args.endpoint, &config), |n| {
            bar.set_position(n as u64)
        })?;
        bar.finish_and_clear();
        (Source::Llm, client.settings().model.clone())
    } else {
        classify_heuristic(&mut store, &taxonomy, &ids, |_| {})?;
        (Source::Heuristic, heuristic::RATER.to_string())
    };
    let mut cases = Vec::new();
    let mut missing = Vec::new();
    for entry in entries {
        let mut of_file = runs.iter().filter(|r| Path::new(&r.source).ends_with(&entry.file));
        let Some(run) = of_file.next() else {
            missing.push(Missing { file: entry.file.clone(), why: "no run was read from this file".into() });
            continue;
        };
        let label = current_label(&store, run.id, source, &rater)?;
        if label.is_none() {
            let why = store.classify_errors(Some(run.id))?.pop().map(|e| e.error).unwrap_or_else(|| "no label".into());
            missing.push(Missing { file: entry.file.clone(), why });
        }
        cases.push(Case { run_id: run.id, entry, label });
    }
    let onset = match onset_file(args) {
        Some(path) => Some(onsets(&path, &runs, &store, source, &rater)?),
        None => None,
    };
    let modes = taxonomy.mode_ids();
    let bootstrap = BootstrapOptions { resamples: args.resamples, seed: args.seed, ..BootstrapOptions::default() };
    let validity = score(&cases, &modes, taxonomy.assign_threshold, &bootstrap)?;
    let who = if args.llm { format!("llm {rater}") } else { format!("heuristic ({})", heuristic::VERSION) };
    if args.json {
        let missing: Vec<_> = missing.iter().map(|m| serde_json::json!({"file": m.file, "why": m.why})).collect();
        print_json(&serde_json::json!({
            "classifier": who,
            "taxonomy": taxonomy.stamp(),
            "reference": args.reference,
            "threshold": taxonomy.assign_threshold,
            "ingest_failures": failed,
            "not_scored": missing,
            "validity": validity,
            "onset": onset.as_ref().map(|o| serde_json::json!({
                "reference": o.path,
                "problems": o.problems,
                "onset": o.onset,
                "blame": o.blame,
            })),
        }))?;
    } else {
        let head = format!(
            "validity of {who} under {} against {} ({} entries)",
            taxonomy.stamp(),
            args.reference.display(),
            cases.len() + missing.iter().filter(|m| !cases.iter().any(|c| c.entry.file == m.file)).count()
        );
        let mut out = text(&head, &validity, &missing, &failed, &bootstrap);
        if let Some(o) = &onset {
            out.push_str(&onset_text(o));
        }
        emit(&out)?;
    }
    let clean = onset.as_ref().is_none_or(|o| o.problems.is_empty());
    Ok(if missing.is_empty() && failed.is_empty() && clean { 0 } else { 1 })
}

/// The onset reference to score: the one given, else `onset.json` beside the reference labels.
fn onset_file(args: &ValidityArgs) -> Option<PathBuf> {
    if let Some(p) = &args.onset {
        return Some(p.clone());
    }
    let beside = args.reference.with_file_name("onset.json");
    beside.is_file().then_some(beside)
}

/// The onset and blame scores, and the entries that could not be scored (entry by entry).
struct Onsets {
    path: PathBuf,
    problems: Vec<String>,
    onset: OnsetScore,
    blame: BlameScore,
}

fn onsets(
    path: &Path,
    runs: &[trajan::store::read::RunSummary],
    store: &Store,
    source: Source,
    rater: &str,
) -> Result<Onsets> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the onset reference {}", path.display()))?;
    let items: Vec<serde_json::Value> =
        serde_json::from_str(&text).with_context(|| format!("{}: not a JSON array", path.display()))?;
    if !onset_reference::is_onset_reference(&items) {
        bail!("{}: not an onset reference (entries with `file`, `onset` and `blame` objects)", path.display());
    }
    let mut problems = Vec::new();
    let mut cases = Vec::new();
    for (at, entry) in onset_reference::read(items) {
        let entry: OnsetEntry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("{at}: {e}"));
                continue;
            }
        };
        let Some(run) = runs.iter().find(|r| Path::new(&r.source).ends_with(&entry.file)) else {
            problems.push(format!("{at}: {}: no run was read from this file", entry.file));
            continue;
        };
        let steps = run.steps.max(0) as usize;
        if let Some(why) = out_of_range(&entry, steps) {
            problems.push(format!("{at}: {why}"));
            continue;
        }
        let label = current_label(store, run.id, source, rater)?;
        cases.push(OnsetCase { run_id: run.id, steps, entry, label });
    }
    Ok(Onsets { path: path.to_path_buf(), problems, onset: score_onset(&cases), blame: score_blame(&cases) })
}

fn ratio(n: usize, d: usize) -> String {
    if d == 0 { "—".into() } else { format!("{n} of {d} ({:.1}%)", n as f64 * 100.0 / d as f64) }
}

fn onset_text(o: &Onsets) -> String {
    let mut out = String::new();
    let s = &o.onset;
    let _ = writeln!(
        out,
        "
onset against {} ({} agent-blamed runs scored)",
        o.path.display(),
        s.runs
    );
    let _ = writeln!(out, "  an onset given:                         {}", ratio(s.given, s.runs));
    let _ = writeln!(out, "  the reference's step or an acceptable:  {}", ratio(s.accepted, s.runs));
    let _ = writeln!(out, "  within 2 steps of the reference's:      {}", ratio(s.near, s.runs));
    let _ = writeln!(out, "  within tolerance (either):              {}", ratio(s.within, s.runs));
    let mean = s.mean_distance.map_or_else(|| "—".into(), |d| format!("{d:.1} steps"));
    let _ = writeln!(out, "  mean distance to the reference's step:  {mean}");
    let _ = writeln!(out, "  by rule (onsets given; within tolerance):");
    for g in &s.by_rule {
        let _ = writeln!(out, "    {:<28} {}", g.name, ratio(g.within, g.runs));
    }
    let _ = writeln!(out, "  reliability by the onset's confidence (within tolerance):");
    for g in s.by_confidence.iter().filter(|g| g.runs > 0) {
        let _ = writeln!(out, "    {:<12} {}", g.name, ratio(g.within, g.runs));
    }
    for m in &s.misses {
        let given = m.classifier.map_or_else(|| "none".into(), |c| c.to_string());
        let _ = writeln!(
            out,
            "  missed: run {} {}: reference {} (also {}), classifier {given}: {}",
            m.run_id,
            sanitize(&m.file),
            m.reference.map_or_else(|| "none".into(), |r| r.to_string()),
            steps(&m.acceptable),
            sanitize(&m.rationale)
        );
    }
    let b = &o.blame;
    let _ = writeln!(
        out,
        "
blame ({} failed runs scored)",
        b.runs
    );
    let _ =
        writeln!(out, "  {:<12} {:>3} {:>3} {:>3}  {:<10} {:<10}", "value", "tp", "fp", "fn", "precision", "recall");
    let p = |x: Option<f64>| x.map_or_else(|| "—".into(), |x| format!("{x:.2}"));
    for v in &b.values {
        let _ = writeln!(
            out,
            "  {:<12} {:>3} {:>3} {:>3}  {:<10} {:<10}",
            v.value,
            v.tp,
            v.fp,
            v.fn_,
            p(v.precision),
            p(v.recall)
        );
    }
    for d in &b.disagreements {
        let _ = writeln!(
            out,
            "  differs: run {} {}: reference {}, classifier {}: {}",
            d.run_id,
            sanitize(&d.file),
            d.reference,
            d.classifier,
            sanitize(&d.reason)
        );
    }
    for problem in &o.problems {
        let _ = writeln!(out, "not scored (onset): {}", sanitize(problem));
    }
    out
}

fn current_label(store: &Store, run: i64, source: Source, rater: &str) -> Result<Option<Label>> {
    let rows = store.labels(Some(run), true)?;
    Ok(rows.into_iter().rev().map(|r| r.label).find(|l| l.source == source && l.rater == rater))
}

fn est(e: &Estimate) -> String {
    match (e.value, &e.ci) {
        (None, _) => "—".into(),
        (Some(v), Some(ci)) => format!("{v:.2} [{:.2}, {:.2}]", ci.low, ci.high),
        (Some(v), None) => format!("{v:.2}"),
    }
}

fn share(x: Option<f64>) -> String {
    x.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_else(|| "—".into())
}

/// The goal of the development set: precision >= 0.85 at recall >= 0.8 on every mode with at
/// least 3 reference positives.
const GOAL: (f64, f64, usize) = (0.85, 0.8, 3);

fn text(head: &str, v: &Validity, missing: &[Missing], failed: &[String], b: &BootstrapOptions) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", sanitize(head));
    let intervals = if b.resamples == 0 {
        "no intervals".to_string()
    } else {
        format!("95% bootstrap intervals in brackets ({} resamples, seed {})", b.resamples, b.seed)
    };
    let _ = writeln!(o, "{} runs scored; {intervals}\n", v.runs);
    let _ = writeln!(
        o,
        "{:<36} {:>4} {:>3} {:>3} {:>3}  {:<20} {:<20} {:<20}",
        "mode", "pos", "tp", "fp", "fn", "precision", "recall", "F1"
    );
    for (m, (_, pos)) in v.agreement.modes.iter().zip(&v.positives) {
        let Some(c) = m.against_reference.first() else { continue };
        let f = &c.confusion;
        let _ = writeln!(
            o,
            "{:<36} {pos:>4} {:>3} {:>3} {:>3}  {:<20} {:<20} {:<20}",
            m.mode,
            f.tp,
            f.fp,
            f.fn_,
            est(&c.precision),
            est(&c.recall),
            est(&c.f1)
        );
    }
    if let Some(micro) = v.agreement.micro.first() {
        let f = &micro.confusion;
        let p = |x: Option<f64>| x.map(|x| format!("{x:.2}")).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            o,
            "{:<36} {:>4} {:>3} {:>3} {:>3}  {:<20} {:<20} {:<20}",
            "all modes (micro)",
            v.positives.iter().map(|(_, n)| n).sum::<usize>(),
            f.tp,
            f.fp,
            f.fn_,
            p(micro.precision),
            p(micro.recall),
            p(micro.f1)
        );
    }
    let cover: Vec<String> =
        v.coverage.iter().map(|c| format!("{} {} of {}", c.rater, share(c.share), c.rated)).collect();
    let _ = writeln!(o, "\ncoverage (runs with any mode): {}", cover.join("; "));
    let (p_goal, r_goal, min_pos) = GOAL;
    for (m, (_, pos)) in v.agreement.modes.iter().zip(&v.positives) {
        let Some(c) = m.against_reference.first() else { continue };
        if *pos < min_pos {
            continue;
        }
        let met = c.precision.value.is_some_and(|p| p >= p_goal) && c.recall.value.is_some_and(|r| r >= r_goal);
        let _ = writeln!(
            o,
            "goal P >= {p_goal} at R >= {r_goal} ({pos} positives): {} {}",
            m.mode,
            if met { "met" } else { "not met" }
        );
    }
    let _ = writeln!(o, "\nreliability: every verdict (assigned, or weighed below the threshold) by its confidence");
    for band in &v.reliability {
        let close = if band.high >= 1.0 { ']' } else { ')' };
        let _ = writeln!(
            o,
            "  [{:.1}, {:.1}{close}  {:>3} verdicts, {:>3} right  {:>6}  {}",
            band.low,
            band.high,
            band.verdicts,
            band.right,
            share(band.share),
            if band.assigned { "assigned" } else { "weighed" }
        );
    }
    let _ = writeln!(o, "\ndisagreements ({}):", v.disagreements.len());
    for d in &v.disagreements {
        let what = match (d.side, d.weighed) {
            (Side::ClassifierOnly, _) => "the classifier assigns it, the reference does not",
            (Side::ReferenceOnly, true) => "the reference has it, the classifier only weighed it",
            (Side::ReferenceOnly, false) => "the reference has it, the classifier does not",
        };
        let _ =
            writeln!(o, "run {} {} ({}): {}: {what}", d.run_id, sanitize(&d.file), sanitize(&d.instance_id), d.mode);
        if let Some(c) = &d.classifier {
            let _ = writeln!(o, "  classifier {} steps {}: {}", c.confidence, steps(&c.steps), sanitize(&c.rationale));
        }
        let r = &d.reference;
        let _ = writeln!(
            o,
            "  reference  {} steps {}: {}",
            sanitize(&r.confidence),
            steps(&r.steps),
            sanitize(&r.rationale)
        );
    }
    for m in missing {
        let _ = writeln!(o, "not scored: {}: {}", sanitize(&m.file), sanitize(&m.why));
    }
    for f in failed {
        let _ = writeln!(o, "ingest failed: {f}");
    }
    o
}

fn steps(s: &[usize]) -> String {
    if s.is_empty() { "-".into() } else { s.iter().map(usize::to_string).collect::<Vec<_>>().join(",") }
}
