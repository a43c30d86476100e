//! Failure-mode statistics: the distribution of modes over failed runs, overall or by model,
//! agent, benchmark or exit category, with coverage and agreement with the reference.

use super::blame::reference_blame;
use super::outcomes::{OutcomeRow, outcome_row};
use super::{by_run, reference};
use crate::agreement::Rating;
use crate::label::ExitCategory;
use crate::label::{Blame, Source};
use crate::model::FailedScope;
use crate::store::labels::LabelSet;
use crate::store::read::RunSummary;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How runs are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum By {
    All,
    Model,
    Agent,
    Benchmark,
    Exit,
}

impl By {
    pub fn parse(s: &str) -> Option<By> {
        s.parse().ok()
    }
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// Whose labels count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Pick {
    Heuristic,
    Llm,
    /// The reviewers' consensus (adjudications aside).
    Human,
    /// Adjudication, else the reviewers' consensus.
    Reference,
    /// The reference, else the LLM, else the heuristic.
    Best,
}

impl Pick {
    pub fn parse(s: &str) -> Option<Pick> {
        s.parse().ok()
    }
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The benchmark a run belongs to: the published dataset it is a row of (its name, as
/// `metadata.dataset.name` holds it), else [`benchmark`] of its instance id.
pub fn run_benchmark(run: &RunSummary) -> String {
    run.dataset.clone().unwrap_or_else(|| benchmark(&run.instance_id).into())
}

/// The benchmark an instance id names: RefactorBench tasks, the
/// project's fixtures, SWE-bench style `owner__repo-NUMBER`, else `other`.
pub fn benchmark(instance_id: &str) -> &'static str {
    if instance_id.contains("refactor") {
        "refactorbench"
    } else if instance_id.starts_with("demo__") || instance_id.starts_with("classify__") {
        "fixtures"
    } else if instance_id.split_once("__").is_some_and(|(_, rest)| {
        rest.rsplit_once('-').is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    }) {
        "swe-bench"
    } else {
        "other"
    }
}

/// One group's numbers. Column names are stable (docs/LABELLING.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    pub group: String,
    /// Failed runs (of the scope the statistics were asked for) in the group counted as the
    /// agent's: not blamed on the task or the environment.
    pub runs: usize,
    /// Of those, runs with a label from the chosen source.
    pub labelled: usize,
    /// Labelled runs with at least one mode.
    pub with_mode: usize,
    /// with_mode / labelled.
    pub coverage: Option<f64>,
    /// Labelled runs per mode (a run may count under several).
    pub modes: BTreeMap<String, usize>,
    /// Runs with both a chosen label and a reference.
    pub compared: usize,
    /// Share of those whose modes equal the reference's (not for `reference` or `best`, which
    /// are the reference where there is one).
    pub agreement: Option<f64>,
    /// Failed runs set apart: their labels (the source's, as for their modes) blame the task.
    pub blamed_task: usize,
    /// Failed runs set apart: their labels blame the environment.
    pub blamed_environment: usize,
    /// Labelled runs counted as the agent's whose labels judge no blame.
    pub blame_unjudged: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// `name@version` of the taxonomy the labels were made under.
    pub taxonomy: String,
    pub source: String,
    pub by: String,
    /// LLM models whose labels were read, with how many distinct prompts each.
    pub llm_models: BTreeMap<String, usize>,
    pub rows: Vec<Row>,
    pub total: Row,
    /// Whether runs whose outcome is unknown count (`failed`, `failed_or_unknown`).
    pub scope: &'static str,
    /// Runs whose outcome is unknown that were left out (0 when they count).
    pub outcome_unknown_left_out: usize,
    /// Every run of each group (resolved, failed or unknown, labelled or not): the resolve rate,
    /// steps and cost; the groups of `rows` and more (groups without a failed run too).
    pub outcomes: Vec<OutcomeRow>,
    pub outcomes_total: OutcomeRow,
    /// How many failed runs were set apart as the task's or the environment's, and whose blame
    /// the statistics go by ([`super::blame::note`]).
    pub blame_note: String,
    /// Of the failed runs counted, those whose task has no gold patch known: the heuristic's
    /// rules that need one ([`crate::label::NEEDS_GOLD`] names them) did not run on
    /// them, so their modes may be undercounted (`gold_note` says so).
    pub without_gold: usize,
}

fn group_of(run: &RunSummary, by: By, exit: Option<&str>) -> String {
    match by {
        By::All => "all".into(),
        By::Model => run.model.clone().unwrap_or_else(|| "unknown".into()),
        By::Agent => run.agent.clone().unwrap_or_else(|| "unknown".into()),
        By::Benchmark => run_benchmark(run),
        By::Exit => exit
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| ExitCategory::classify(run.exit_status.as_deref(), true).name().into()),
    }
}

/// The group of evaluations without a trajectory that name no model the runs have, nor any
/// model at all: counted apart, and said so by its name.
pub const NO_MODEL: &str = "no model named";

/// Count the evaluations that matched no run for want of a trajectory in the resolve rates
/// (`outcomes`), under the group their own files name: by model, the runs' model it names (as
/// the join reads names: `org/model` is `model`), or that its summary's file name names, else
/// its own model, else [`NO_MODEL`]; by benchmark, its instance's; by agent, `unknown`; by exit,
/// `no trajectory`. The others evaluated another model's or patch's run: not counted.
pub fn add_orphans(stats: &mut Stats, orphans: &[crate::store::Orphan], by: By) {
    let models: Vec<String> =
        if by == By::Model { stats.outcomes.iter().map(|r| r.group.clone()).collect() } else { Vec::new() };
    for o in orphans.iter().filter(|o| o.why == crate::store::Why::NoTrajectory) {
        let group = match by {
            By::All => "all".to_string(),
            By::Model => model_group(o, &models),
            By::Agent => "unknown".into(),
            By::Benchmark => benchmark(&o.instance_id).into(),
            By::Exit => "no trajectory".into(),
        };
        let at = match stats.outcomes.iter().position(|r| r.group == group) {
            Some(at) => at,
            None => {
                let at = stats.outcomes.partition_point(|r| r.group < group);
                stats.outcomes.insert(at, outcome_row(group, &[]));
                at
            }
        };
        if let Some(row) = stats.outcomes.get_mut(at) {
            row.add_without_trajectory(o.resolved);
        }
        stats.outcomes_total.add_without_trajectory(o.resolved);
    }
}

/// The model group an evaluation without a trajectory belongs to, among the runs' `models`.
fn model_group(o: &crate::store::Orphan, models: &[String]) -> String {
    let known = |m: &&String| m.as_str() != "unknown" && m.as_str() != NO_MODEL;
    if let Some(model) = o.model.as_deref().filter(|m| !m.trim().is_empty()) {
        let same = models.iter().filter(known).find(|g| crate::store::same_model(g, model));
        return same.cloned().unwrap_or_else(|| model.to_string());
    }
    let named = o
        .label
        .as_deref()
        .and_then(|l| models.iter().filter(known).find(|g| crate::store::label_names_model(l, g)).cloned());
    named.unwrap_or_else(|| NO_MODEL.to_string())
}

/// A run's modes and blame, from the same labels.
struct Chosen {
    modes: Rating,
    blame: Option<Blame>,
}

fn chosen(labels: &[&LabelSet], pick: Pick) -> Option<Chosen> {
    let latest = |source: Source| {
        labels
            .iter()
            .filter(|l| l.source == source)
            .max_by(|a, b| a.created_at.cmp(&b.created_at))
            .map(|l| Chosen { modes: l.modes.iter().cloned().collect(), blame: l.blame })
    };
    let referenced =
        |labels: &[&LabelSet]| reference(labels).map(|modes| Chosen { modes, blame: reference_blame(labels) });
    match pick {
        Pick::Heuristic => latest(Source::Heuristic),
        Pick::Llm => latest(Source::Llm),
        Pick::Human => {
            let humans: Vec<&LabelSet> = labels.iter().copied().filter(|l| l.source == Source::Human).collect();
            referenced(&humans)
        }
        Pick::Reference => referenced(labels),
        Pick::Best => referenced(labels).or_else(|| latest(Source::Llm)).or_else(|| latest(Source::Heuristic)),
    }
}

/// The blame a run's statistics go by under `pick`: that of the labels its modes come from.
pub fn run_blame(labels: &[&LabelSet], pick: Pick) -> Option<Blame> {
    chosen(labels, pick).and_then(|c| c.blame)
}

/// [`run_blame`] of every labelled run of `sets` that has one.
pub fn run_blames(sets: &[LabelSet], pick: Pick) -> BTreeMap<i64, Blame> {
    by_run(sets).into_iter().filter_map(|(run, labels)| Some((run, run_blame(&labels, pick)?))).collect()
}

/// Count a failed run in a row: set apart when its labels blame the task or the environment,
/// else among the agent's.
fn count(row: &mut Row, choice: Option<&Chosen>, reference: Option<&Rating>, pick: Pick) {
    match choice.and_then(|c| c.blame) {
        Some(Blame::Task) => row.blamed_task += 1,
        Some(Blame::Environment) => row.blamed_environment += 1,
        blame => {
            if choice.is_some() && blame.is_none() {
                row.blame_unjudged += 1;
            }
            add(row, choice.map(|c| &c.modes), reference, pick);
        }
    }
}

fn add(row: &mut Row, rating: Option<&Rating>, reference: Option<&Rating>, pick: Pick) {
    row.runs += 1;
    let Some(r) = rating else { return };
    row.labelled += 1;
    if !r.is_empty() {
        row.with_mode += 1;
    }
    for m in r {
        *row.modes.entry(m.clone()).or_default() += 1;
    }
    // Against the reference it is drawn from, a source would agree with itself.
    if !matches!(pick, Pick::Reference | Pick::Best)
        && let Some(reference) = reference
    {
        row.compared += 1;
        row.agreement = Some(row.agreement.unwrap_or(0.0) + f64::from(u8::from(r == reference)));
    }
}

/// Why the statistics have no agreement column, in one sentence the CLI and the TUI both print
/// (each adds where to look), or `None` when some run is compared. Labels `reference` and `best`
/// are the reference where there is one: against it they would agree with themselves, so they are
/// never compared, however many raters labelled a run; raters are compared with each other (and
/// with the reference) by `trajan agreement` and the statistics screen's confusion panel.
pub fn agreement_note(s: &Stats) -> Option<String> {
    if s.rows.iter().chain(std::iter::once(&s.total)).any(|r| r.compared > 0) {
        return None;
    }
    Some(match Pick::parse(&s.source) {
        Some(Pick::Reference | Pick::Best) => format!(
            "agreement: the labels counted ({}) are the reference where there is one, so not compared \
             with it; raters compared:",
            s.source
        ),
        _ => format!(
            "agreement: no run has both a label of {} and a reference (two reviewers' labels, or an \
             adjudication) to compare yet;",
            s.source
        ),
    })
}

fn finish(row: &mut Row) {
    row.coverage = (row.labelled > 0).then(|| row.with_mode as f64 / row.labelled as f64);
    row.agreement = row.agreement.map(|agreeing| agreeing / row.compared as f64);
}

/// Statistics over the failed runs of `scope` among `runs`, from the current labels `sets`.
pub fn stats(runs: &[RunSummary], sets: &[LabelSet], by: By, pick: Pick, taxonomy: &str, scope: FailedScope) -> Stats {
    let labels = by_run(sets);
    let mut groups: BTreeMap<String, Row> = BTreeMap::new();
    let mut every: BTreeMap<String, Vec<&RunSummary>> = BTreeMap::new();
    let mut total = Row { group: "total".into(), ..Row::default() };
    for run in runs {
        let mine: Vec<&LabelSet> = labels.get(&run.id).cloned().unwrap_or_default();
        let exit = mine.iter().map(|l| l.exit_category.as_str()).find(|e| !e.is_empty());
        let g = group_of(run, by, exit);
        every.entry(g.clone()).or_default().push(run);
        if !scope.admits(run.resolved) {
            continue;
        }
        let choice = chosen(&mine, pick);
        let reference = reference(&mine);
        let row = groups.entry(g.clone()).or_insert_with(|| Row { group: g, ..Row::default() });
        count(row, choice.as_ref(), reference.as_ref(), pick);
        count(&mut total, choice.as_ref(), reference.as_ref(), pick);
    }
    let mut rows: Vec<Row> = groups.into_values().collect();
    rows.iter_mut().for_each(finish);
    finish(&mut total);
    let blame_note = super::blame::note(total.blamed_task, total.blamed_environment, total.blame_unjudged, pick.name());
    let mut llm_models: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for l in sets.iter().filter(|l| l.source == Source::Llm) {
        llm_models.entry(l.rater.clone()).or_default().insert(l.input_hash.as_deref().unwrap_or(""));
    }
    Stats {
        taxonomy: taxonomy.to_string(),
        source: pick.name().into(),
        by: by.name().into(),
        llm_models: llm_models.into_iter().map(|(m, p)| (m, p.len())).collect(),
        rows,
        total,
        scope: match scope {
            FailedScope::Failed => "failed",
            FailedScope::WithUnknown => "failed_or_unknown",
        },
        outcome_unknown_left_out: runs.iter().filter(|r| r.resolved.is_none() && !scope.admits(None)).count(),
        outcomes: every.iter().map(|(g, runs)| outcome_row(g.clone(), runs)).collect(),
        outcomes_total: outcome_row("total".into(), &runs.iter().collect::<Vec<_>>()),
        blame_note,
        without_gold: 0,
    }
}

/// The footnote for failed runs without a gold patch (`None` when every one has it), as the
/// CLI, the exports and the TUI print it.
pub fn gold_note(s: &Stats) -> Option<String> {
    let failed = s.total.runs + s.total.blamed_task + s.total.blamed_environment;
    let rules: Vec<&str> = crate::label::NEEDS_GOLD.iter().map(|r| r.name()).collect();
    (s.without_gold > 0).then(|| {
        format!(
            "{} of {failed} failed runs without a gold patch: the heuristic's {} did not run on them \
             (ingest the tasks' dataset file to give them one)",
            s.without_gold,
            rules.join(", ")
        )
    })
}
