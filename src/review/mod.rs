//! Human review over the stored labels, as pure functions: who the raters are, the reference
//! a run is judged by (an adjudication, else the reviewers' consensus), disagreements, the review
//! queues, the agreement table, statistics and exports; and runs compared side by side.

pub mod blame;
pub mod chart;
pub mod compare;
pub mod export;
pub mod filter;
pub mod import;
pub mod onset;
pub mod onset_agreement;
pub mod onset_reference;
pub mod onset_validity;
pub mod order;
pub mod outcomes;
pub mod reference_set;
pub mod stats;
pub mod summary;
pub mod validity;

use crate::agreement::{Rating, RatingTable, Reference, Table};
use crate::label::{Blame, Source};
use crate::store::labels::LabelSet;
use std::collections::{BTreeMap, BTreeSet};

/// The column the reference is put in, in agreement tables.
pub const REFERENCE: &str = "reference";

/// A rater's name in agreement tables and statistics: `heuristic`, `llm:<model>`,
/// `human:<reviewer>`; adjudications make the reference, not a rater.
pub fn rater_key(l: &LabelSet) -> Option<String> {
    match l.source {
        Source::Heuristic => Some("heuristic".into()),
        Source::Llm => Some(format!("llm:{}", l.rater)),
        Source::Human => Some(format!("human:{}", l.rater)),
        Source::Adjudication => None,
    }
}

fn set(l: &LabelSet) -> Rating {
    l.modes.iter().cloned().collect()
}

/// The current labels of each run.
pub fn by_run(sets: &[LabelSet]) -> BTreeMap<i64, Vec<&LabelSet>> {
    let mut out: BTreeMap<i64, Vec<&LabelSet>> = BTreeMap::new();
    for s in sets {
        out.entry(s.run_id).or_default().push(s);
    }
    out
}

/// The run's latest adjudication, if any.
fn adjudication<'a>(labels: &[&'a LabelSet]) -> Option<&'a LabelSet> {
    labels.iter().copied().filter(|l| l.source == Source::Adjudication).max_by(|a, b| a.created_at.cmp(&b.created_at))
}

/// What a run is judged by, as a whole mode set: its latest adjudication, else the modes the
/// reviewers' majority gives ([`reference_on`]); `None` when no reviewer labelled it, or they
/// tie on some mode.
pub fn reference(labels: &[&LabelSet]) -> Option<Rating> {
    if let Some(adj) = adjudication(labels) {
        return Some(set(adj));
    }
    let given: BTreeSet<&String> = labels.iter().filter(|l| l.source == Source::Human).flat_map(|l| &l.modes).collect();
    if !labels.iter().any(|l| l.source == Source::Human) {
        return None;
    }
    let mut out = Rating::new();
    for m in given {
        if reference_on(labels, m)? {
            out.insert(m.clone());
        }
    }
    Some(out)
}

/// Reviewers disagree on the run (different mode sets) and no adjudication came after them.
pub fn disagreement(labels: &[&LabelSet]) -> bool {
    let humans: Vec<&&LabelSet> = labels.iter().filter(|l| l.source == Source::Human).collect();
    let differ = humans.windows(2).any(|w| w[0].modes != w[1].modes);
    let latest_human = humans.iter().map(|l| l.created_at.as_str()).max().unwrap_or("");
    let settled = adjudication(labels).is_some_and(|a| a.created_at.as_str() >= latest_human);
    differ && !settled
}

/// Whether `rater` has labelled the run (as a reviewer or an adjudicator).
pub fn labelled_by(labels: &[&LabelSet], rater: &str) -> bool {
    labels.iter().any(|l| l.source.is_human() && l.rater == rater)
}

/// The review queues of the run list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Queue {
    All,
    /// Failed runs this rater has not labelled.
    Unlabelled,
    /// Runs this rater labelled.
    Mine,
    /// Runs whose reviewers disagree, for adjudication.
    Disagreements,
}

impl Queue {
    pub fn name(self) -> &'static str {
        match self {
            Queue::All => "all runs",
            Queue::Unlabelled => "unlabelled by me",
            Queue::Mine => "labelled by me",
            Queue::Disagreements => "disagreements",
        }
    }
    pub fn next(self) -> Queue {
        use strum::IntoEnumIterator;
        Queue::iter().skip_while(|q| *q != self).nth(1).unwrap_or(Queue::All)
    }
}

/// One current label of a run, as the run list and its filter read it.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentLabel {
    pub source: Source,
    pub rater: String,
    /// Assigned modes, sorted; empty: unclassified.
    pub modes: Vec<String>,
    /// The onset step it gives, if any.
    pub onset: Option<usize>,
    /// The blame it gives, if judged.
    pub blame: Option<Blame>,
}

/// What the run list needs to know of a run's labels for the queues.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewState {
    pub mine: bool,
    pub disagreement: bool,
    /// The reference's modes, when there is one.
    pub reference: Option<Vec<String>>,
    /// Every current label of the run.
    pub labels: Vec<CurrentLabel>,
}

/// The review state of every labelled run, for `rater`.
pub fn states(sets: &[LabelSet], rater: &str) -> BTreeMap<i64, ReviewState> {
    by_run(sets)
        .into_iter()
        .map(|(run, labels)| {
            let state = ReviewState {
                mine: labelled_by(&labels, rater),
                disagreement: disagreement(&labels),
                reference: reference(&labels).map(|r| r.into_iter().collect()),
                labels: labels
                    .iter()
                    .map(|l| CurrentLabel {
                        source: l.source,
                        rater: l.rater.clone(),
                        modes: l.modes.clone(),
                        onset: l.onset_step,
                        blame: l.blame,
                    })
                    .collect(),
            };
            (run, state)
        })
        .collect()
}

/// Whether a run belongs in a queue. `failed`: it is a failed run of the review's
/// [`crate::model::FailedScope`].
pub fn in_queue(queue: Queue, state: Option<&ReviewState>, failed: bool) -> bool {
    match queue {
        Queue::All => true,
        Queue::Unlabelled => failed && !state.is_some_and(|s| s.mine),
        Queue::Mine => state.is_some_and(|s| s.mine),
        Queue::Disagreements => state.is_some_and(|s| s.disagreement),
    }
}

/// Per mode, what the reference says of a run: the latest adjudication's verdict, else the
/// reviewers' majority on that mode (`None` on a tie, or when no reviewer labelled the run).
pub fn reference_on(labels: &[&LabelSet], mode: &str) -> Option<bool> {
    if let Some(adj) = adjudication(labels) {
        return Some(adj.modes.iter().any(|m| m == mode));
    }
    let humans: Vec<&&LabelSet> = labels.iter().filter(|l| l.source == Source::Human).collect();
    let yes = humans.iter().filter(|l| l.modes.iter().any(|m| m == mode)).count();
    match (yes * 2).cmp(&humans.len()) {
        _ if humans.is_empty() => None,
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => None,
    }
}

/// Raters in the order agreement tables list them: the heuristic, the LLMs, the reviewers.
pub fn sort_raters(raters: &mut [String]) {
    raters.sort_by_key(|r| (!r.starts_with("heuristic"), !r.starts_with("llm:"), r.clone()));
}

/// The agreement inputs of the current labels: a table with one item per run and one rater per
/// classifier and reviewer, the rater names, and the reference, per mode ([`reference_on`]).
pub fn agreement_inputs(sets: &[LabelSet], modes: &[String]) -> (RatingTable, Vec<String>, Reference) {
    let runs = by_run(sets);
    let mut raters: Vec<String> = sets.iter().filter_map(rater_key).collect::<BTreeSet<_>>().into_iter().collect();
    sort_raters(&mut raters);
    let items: Vec<String> = runs.keys().map(|r| r.to_string()).collect();
    let cells = runs
        .values()
        .map(|labels| {
            // A rater's first label of the run (one lookup a rater: raters may be thousands).
            let mut of: std::collections::HashMap<String, &LabelSet> = std::collections::HashMap::new();
            for l in labels {
                if let Some(key) = rater_key(l) {
                    of.entry(key).or_insert(l);
                }
            }
            raters.iter().map(|name| of.get(name).map(|l| set(l))).collect()
        })
        .collect();
    let table = Table::from_rows(items, raters.clone(), cells)
        .unwrap_or_else(|_| unreachable!("rows are built to the table's shape"));
    let columns =
        modes.iter().map(|m| (m.clone(), runs.values().map(|labels| reference_on(labels, m)).collect())).collect();
    // Every rater is scored against it: the classifiers, and each reviewer (who is part of the
    // majority; their kappa with each other reviewer is the unbiased figure).
    let scored = raters.clone();
    (table, raters, Reference::Given { name: REFERENCE.into(), scored, columns })
}

#[cfg(test)]
mod tests;
