//! The statistics and agreement a reader asks for, composed once for the CLI (`trajan stats`,
//! `export stats`, `agreement`) and the TUI's statistics screen: the runs and current labels are
//! read from the store, blind review leaves out what the reviewer may not see yet, and the
//! statistics and the agreement report are computed over what is left (`agreement`: on the modes,
//! and on onset and blame, `review::onset_agreement`).

use super::onset_agreement::{JudgementAgreement, judgement_agreement};
use super::stats::{By, Pick, Stats, stats};
use crate::agreement::{AgreementError, AgreementReport, BootstrapOptions, agreement_report};
use crate::error::StoreError;
use crate::label::taxonomy::Taxonomy;
use crate::model::FailedScope;
use crate::store::Store;
use crate::store::labels::LabelSet;
use crate::store::read::{RunFilter, RunSummary};
use std::collections::HashSet;

#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Agreement(#[from] AgreementError),
}

/// What to compute statistics over.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub by: By,
    pub pick: Pick,
    pub scope: FailedScope,
    /// Blind review: only the runs this reviewer has labelled (the numbers over the others would
    /// tell of the classifiers' labels of runs still to be judged).
    pub blind_rater: Option<String>,
    /// Only these runs (a report's), when given.
    pub only: Option<std::collections::BTreeSet<i64>>,
}

/// The statistics, and the agreement of every rater with the reference when any label exists.
#[derive(Debug, Clone)]
pub struct StatsReport {
    pub stats: Stats,
    pub agreement: Option<AgreementReport>,
    pub by: By,
    pub blind: bool,
}

/// The runs and the current labels of the taxonomy's version, blinded as `blind_rater` asks.
fn rows(
    store: &Store,
    taxonomy: &Taxonomy,
    blind_rater: Option<&str>,
    only: Option<&std::collections::BTreeSet<i64>>,
) -> Result<(Vec<RunSummary>, Vec<LabelSet>), StoreError> {
    let mut runs = store.list_runs(RunFilter::default())?;
    let mut sets = store.current_label_sets(&taxonomy.name, &taxonomy.version)?;
    if let Some(only) = only {
        runs.retain(|r| only.contains(&r.id));
        sets.retain(|l| only.contains(&l.run_id));
    }
    if let Some(rater) = blind_rater {
        let mine: HashSet<i64> =
            sets.iter().filter(|l| l.source.is_human() && l.rater == rater).map(|l| l.run_id).collect();
        runs.retain(|r| mine.contains(&r.id));
        sets.retain(|l| mine.contains(&l.run_id));
    }
    Ok((runs, sets))
}

/// The agreement report over `sets` (`None` without labels).
fn agreement_of(
    sets: &[LabelSet],
    taxonomy: &Taxonomy,
    bootstrap: &BootstrapOptions,
) -> Result<Option<AgreementReport>, AgreementError> {
    if sets.is_empty() {
        return Ok(None);
    }
    let modes = taxonomy.mode_ids();
    let (table, raters, reference) = super::agreement_inputs(sets, &modes);
    agreement_report(&table, &modes, &raters, &reference, bootstrap).map(Some)
}

/// Statistics as `ask` says; with `bootstrap`, the agreement report too (point estimates alone
/// with `resamples: 0`).
pub fn stats_report(
    store: &Store,
    taxonomy: &Taxonomy,
    ask: &Ask,
    bootstrap: Option<&BootstrapOptions>,
) -> Result<StatsReport, SummaryError> {
    let (runs, sets) = rows(store, taxonomy, ask.blind_rater.as_deref(), ask.only.as_ref())?;
    let agreement = match bootstrap {
        Some(b) => agreement_of(&sets, taxonomy, b)?,
        None => None,
    };
    let mut stats = stats(&runs, &sets, ask.by, ask.pick, &taxonomy.stamp(), ask.scope);
    let without: HashSet<i64> = store.runs_without_gold()?.into_iter().collect();
    stats.without_gold = runs.iter().filter(|r| ask.scope.admits(r.resolved) && without.contains(&r.id)).count();
    // Evaluations without a trajectory count in the resolve rates of the whole database (not of
    // a chosen subset of runs, nor of a blind reviewer's own runs).
    if ask.only.is_none() && ask.blind_rater.is_none() {
        super::stats::add_orphans(&mut stats, &store.orphan_evaluations()?, ask.by);
    }
    Ok(StatsReport { stats, agreement, by: ask.by, blind: ask.blind_rater.is_some() })
}

/// `trajan agreement` over the database: on the modes, and on onset and blame.
#[derive(Debug, Clone)]
pub struct Agreement {
    pub report: AgreementReport,
    pub onset_and_blame: JudgementAgreement,
}

/// The agreement of every rater under the taxonomy, on the modes and on onset and blame (`None`
/// without labels).
pub fn agreement(
    store: &Store,
    taxonomy: &Taxonomy,
    bootstrap: &BootstrapOptions,
) -> Result<Option<Agreement>, SummaryError> {
    let (_, sets) = rows(store, taxonomy, None, None)?;
    let Some(report) = agreement_of(&sets, taxonomy, bootstrap)? else { return Ok(None) };
    Ok(Some(Agreement { report, onset_and_blame: judgement_agreement(&sets, bootstrap)? }))
}
