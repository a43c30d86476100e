//! The agreement report: per mode, every rater pair's kappa, alpha over all raters, and each
//! rater scored against a reference; coverage per rater. Serializable for `--json`.

use super::AgreementError;
use super::alpha::{AlphaCounts, Coincidences};
use super::bootstrap::{BootstrapOptions, Interval, bootstrap_intervals};
use super::classification::Confusion;
use super::consensus::consensus_column;
use super::coverage::{Coverage, coverage};
use super::table::{RatingTable, Table};
use serde::Serialize;

/// What the raters are scored against (precision, recall, F1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// One rater of the table (e.g. a human reviewer).
    Rater(String),
    /// The per-mode majority of these raters (see [`super::majority`]); items where they tie or
    /// none rated are skipped. The raters that make up the consensus are not scored against it.
    Consensus(Vec<String>),
    /// A reference built outside the table, per mode one value per item (`None`: no reference
    /// for that item and mode), and the raters scored against it (those it was not made from).
    Given {
        name: String,
        scored: Vec<String>,
        #[serde(skip)]
        columns: std::collections::BTreeMap<String, Vec<Option<bool>>>,
    },
}

/// A statistic and its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The value on all the data; `None` where undefined.
    pub value: Option<f64>,
    /// The percentile interval; `None` when bootstrapping is off or too few resamples were
    /// defined.
    pub ci: Option<Interval>,
}

/// Two raters on one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairAgreement {
    /// First rater.
    pub a: String,
    /// Second rater.
    pub b: String,
    /// Items both rated.
    pub n: usize,
    /// Share of those items on which they agree (ignores chance; beside kappa only).
    pub raw_agreement: Option<f64>,
    /// Cohen's kappa, bootstrapped over the items both rated.
    pub kappa: Estimate,
}

/// Krippendorff's alpha over all the report's raters on one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlphaScore {
    /// Pairable units: items rated by at least two raters.
    pub units: usize,
    /// Ratings in those units.
    pub values: u64,
    /// Alpha, bootstrapped over the pairable units.
    pub alpha: Estimate,
}

/// One rater scored against the reference as a binary classifier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassifierScore {
    /// The rater.
    pub rater: String,
    /// Items that both the rater and the reference rated.
    pub n: u64,
    /// The confusion (rater = predicted, reference = actual).
    pub confusion: Confusion,
    /// tp / (tp + fp).
    pub precision: Estimate,
    /// tp / (tp + fn).
    pub recall: Estimate,
    /// 2tp / (2tp + fp + fn).
    pub f1: Estimate,
    /// Cohen's kappa of rater and reference.
    pub kappa: Estimate,
}

/// Everything about one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeAgreement {
    /// The mode id.
    pub mode: String,
    /// Every pair of the report's pair raters ([`AgreementReport::pair_raters`]), in rater order.
    pub pairs: Vec<PairAgreement>,
    /// Alpha over all the report's raters.
    pub alpha: AlphaScore,
    /// The scored raters against the reference.
    pub against_reference: Vec<ClassifierScore>,
}

/// Across modes, one scored rater: the confusions summed over the modes (micro average).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MicroScore {
    /// The rater.
    pub rater: String,
    /// Sum over the modes of the per-mode confusions.
    pub confusion: Confusion,
    /// Micro-averaged precision.
    pub precision: Option<f64>,
    /// Micro-averaged recall.
    pub recall: Option<f64>,
    /// Micro-averaged F1.
    pub f1: Option<f64>,
}

/// Rater pairs are listed (kappa, raw agreement) among at most this many raters: the number of
/// pairs grows with the square of the raters (300 raters make 44,850 pairs a mode), each
/// bootstrapped. With more raters, the pairs listed are those of the reference rater (when one
/// is named) and the raters who rated the most items; alpha, coverage and the scores against
/// the reference still cover every rater.
pub const PAIR_RATERS: usize = 20;

/// The report of [`agreement_report`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementReport {
    /// Items in the table.
    pub items: usize,
    /// The raters compared, in order.
    pub raters: Vec<String>,
    /// The raters whose pairs are listed ([`PAIR_RATERS`] at most), in order.
    pub pair_raters: Vec<String>,
    /// Pairs of raters per mode not listed (a rater beyond [`PAIR_RATERS`] in them).
    pub pairs_left_out: usize,
    /// What they are scored against.
    pub reference: Reference,
    /// How the intervals were computed.
    pub bootstrap: BootstrapOptions,
    /// Coverage per rater (share of rated items with at least one mode).
    pub coverage: Vec<Coverage>,
    /// Per mode, in the order given.
    pub modes: Vec<ModeAgreement>,
    /// Per scored rater, across all the modes.
    pub micro: Vec<MicroScore>,
}

/// The agreement report of `raters` (names of table columns, in the order to report) on `modes`.
///
/// Per mode (one-vs-rest): kappa and raw agreement for every pair of `raters` (of at most
/// [`PAIR_RATERS`] of them: [`pair_columns`]); alpha over all of them; and each rater that is not the reference (nor part of a consensus reference) scored
/// against `reference`. Intervals per [`BootstrapOptions`]: kappa, precision, recall and F1
/// resample the items both sides rated, alpha the pairable items. Every interval uses the same
/// seed, so they are reproducible one by one.
pub fn agreement_report(
    table: &RatingTable,
    modes: &[String],
    raters: &[String],
    reference: &Reference,
    bootstrap: &BootstrapOptions,
) -> Result<AgreementReport, AgreementError> {
    bootstrap.validate()?;
    let columns = indices(table, raters)?;
    // Reject duplicate raters early.
    table.select_raters(&columns)?;
    let (reference_columns, scored): (Vec<usize>, Vec<usize>) = match reference {
        Reference::Rater(name) => {
            let r = indices(table, std::slice::from_ref(name))?;
            (r.clone(), others(&columns, &r))
        }
        Reference::Consensus(names) => {
            let r = indices(table, names)?;
            (r.clone(), others(&columns, &r))
        }
        Reference::Given { scored, .. } => (Vec::new(), indices(table, scored)?),
    };

    let paired = pair_columns(table, &columns, reference);
    let mut micro: Vec<Confusion> = vec![Confusion::default(); scored.len()];
    let mut mode_reports = Vec::with_capacity(modes.len());
    for mode in modes {
        let binary = table.one_vs_rest(mode);
        let mut pairs = Vec::new();
        for (i, &a) in paired.iter().enumerate() {
            for &b in &paired[i + 1..] {
                pairs.push(pair_agreement(&binary, a, b, bootstrap)?);
            }
        }
        let alpha = alpha_score(&binary, &columns, bootstrap)?;
        let reference_column: Vec<Option<bool>> = match reference {
            Reference::Rater(_) => binary
                .rows()
                .iter()
                .map(|row| reference_columns.first().and_then(|&r| row.get(r).copied().flatten()))
                .collect(),
            Reference::Consensus(_) => consensus_column(&binary, &reference_columns),
            Reference::Given { columns, .. } => {
                columns.get(mode).cloned().unwrap_or_else(|| vec![None; table.items().len()])
            }
        };
        let mut against_reference = Vec::with_capacity(scored.len());
        for (k, &r) in scored.iter().enumerate() {
            let score = classifier_score(&binary, r, &reference_column, bootstrap)?;
            micro[k] += score.confusion;
            against_reference.push(score);
        }
        mode_reports.push(ModeAgreement { mode: mode.clone(), pairs, alpha, against_reference });
    }

    Ok(AgreementReport {
        items: table.items().len(),
        raters: columns.iter().filter_map(|&c| table.raters().get(c).cloned()).collect(),
        pair_raters: paired.iter().filter_map(|&c| table.raters().get(c).cloned()).collect(),
        pairs_left_out: pairs_of(columns.len()) - pairs_of(paired.len()),
        reference: reference.clone(),
        bootstrap: *bootstrap,
        coverage: columns.iter().map(|&c| coverage(table, c)).collect(),
        modes: mode_reports,
        micro: scored
            .iter()
            .zip(micro)
            .map(|(&r, c)| MicroScore {
                rater: table.raters().get(r).cloned().unwrap_or_default(),
                confusion: c,
                precision: c.precision(),
                recall: c.recall(),
                f1: c.f1(),
            })
            .collect(),
    })
}

/// Pairs among `n` raters.
fn pairs_of(n: usize) -> usize {
    n * n.saturating_sub(1) / 2
}

/// The columns whose pairs are listed: all of them up to [`PAIR_RATERS`]; beyond, the reference
/// rater (when one is named) and the raters who rated the most items (the first in order among
/// equals), in the order of `columns`.
fn pair_columns(table: &RatingTable, columns: &[usize], reference: &Reference) -> Vec<usize> {
    if columns.len() <= PAIR_RATERS {
        return columns.to_vec();
    }
    let named = match reference {
        Reference::Rater(name) => table.rater_index(name),
        _ => None,
    };
    let mut rated = vec![0usize; table.raters().len()];
    for row in table.rows() {
        for (c, cell) in row.iter().enumerate() {
            rated[c] += usize::from(cell.is_some());
        }
    }
    let mut order: Vec<(usize, usize)> = columns.iter().copied().enumerate().collect();
    order.sort_by_key(|&(k, c)| (Some(c) != named, std::cmp::Reverse(rated.get(c).copied().unwrap_or(0)), k));
    order.truncate(PAIR_RATERS);
    order.sort_unstable();
    order.into_iter().map(|(_, c)| c).collect()
}

fn indices(table: &RatingTable, names: &[String]) -> Result<Vec<usize>, AgreementError> {
    let at: std::collections::HashMap<&str, usize> =
        table.raters().iter().enumerate().map(|(i, r)| (r.as_str(), i)).rev().collect();
    names.iter().map(|n| at.get(n.as_str()).copied().ok_or_else(|| AgreementError::UnknownRater(n.clone()))).collect()
}

/// `columns` without those of `reference`.
fn others(columns: &[usize], reference: &[usize]) -> Vec<usize> {
    let taken: std::collections::HashSet<usize> = reference.iter().copied().collect();
    columns.iter().copied().filter(|c| !taken.contains(c)).collect()
}

fn confusion_of(pairs: &[(bool, bool)], indices: &[usize]) -> Confusion {
    let mut c = Confusion::default();
    for &i in indices {
        if let Some(&(p, r)) = pairs.get(i) {
            c.count(p, r);
        }
    }
    c
}

fn pair_agreement(
    binary: &Table<bool>,
    a: usize,
    b: usize,
    options: &BootstrapOptions,
) -> Result<PairAgreement, AgreementError> {
    let pairs = binary.pairs(a, b);
    let all = Confusion::from_pairs(&pairs);
    let [ci] = bootstrap_intervals(pairs.len(), options, |ix| [confusion_of(&pairs, ix).kappa()])?;
    Ok(PairAgreement {
        a: binary.raters().get(a).cloned().unwrap_or_default(),
        b: binary.raters().get(b).cloned().unwrap_or_default(),
        n: pairs.len(),
        raw_agreement: all.raw_agreement(),
        kappa: Estimate { value: all.kappa(), ci },
    })
}

fn alpha_score(
    binary: &Table<bool>,
    columns: &[usize],
    options: &BootstrapOptions,
) -> Result<AlphaScore, AgreementError> {
    let units: Vec<Vec<Option<bool>>> =
        binary.rows().iter().map(|row| columns.iter().map(|&c| row.get(c).copied().flatten()).collect()).collect();
    let counts = AlphaCounts::from_units(&units);
    let alpha_of = |ix: &mut dyn Iterator<Item = &Vec<u64>>| {
        let mut acc = Coincidences::new(counts.categories);
        for u in ix {
            acc.add(u);
        }
        acc.alpha()
    };
    let value = alpha_of(&mut counts.units.iter());
    let [ci] = bootstrap_intervals(counts.units.len(), options, |ix| {
        [alpha_of(&mut ix.iter().filter_map(|&i| counts.units.get(i)))]
    })?;
    Ok(AlphaScore { units: counts.units.len(), values: counts.pairable_values(), alpha: Estimate { value, ci } })
}

fn classifier_score(
    binary: &Table<bool>,
    rater: usize,
    reference: &[Option<bool>],
    options: &BootstrapOptions,
) -> Result<ClassifierScore, AgreementError> {
    let pairs: Vec<(bool, bool)> = binary
        .rows()
        .iter()
        .zip(reference)
        .filter_map(|(row, r)| Some((row.get(rater).copied().flatten()?, (*r)?)))
        .collect();
    let c = Confusion::from_pairs(&pairs);
    let [p, r, f, k] = bootstrap_intervals(pairs.len(), options, |ix| {
        let c = confusion_of(&pairs, ix);
        [c.precision(), c.recall(), c.f1(), c.kappa()]
    })?;
    Ok(ClassifierScore {
        rater: binary.raters().get(rater).cloned().unwrap_or_default(),
        n: c.n(),
        confusion: c,
        precision: Estimate { value: c.precision(), ci: p },
        recall: Estimate { value: c.recall(), ci: r },
        f1: Estimate { value: c.f1(), ci: f },
        kappa: Estimate { value: c.kappa(), ci: k },
    })
}
