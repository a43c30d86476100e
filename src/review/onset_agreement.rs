//! Agreement on onset and blame between every pair of raters who judged the same runs
//! (`trajan agreement`): the heuristic, each LLM, each reviewer, and the reference (the latest
//! adjudication, else the reviewers' majority: `review::blame`). A rater judged a run when its
//! current label of the run gives an onset or a blame. Over the runs both judged: onset
//! agreement where both gave a step (`agreement::onset`: exact, within 1 and 3 steps, the mean
//! distance), the runs only one gave a step counted apart; blame agreement where both gave a
//! value (kappa over the values and per value).

use super::blame::{reference_blame, reference_judged, reference_onset};
use super::{REFERENCE, by_run, rater_key, sort_raters};
use crate::agreement::{
    AgreementError, BlameAgreement, BootstrapOptions, OnsetAgreement, blame_agreement, onset_agreement,
};
use crate::label::Blame;
use crate::store::labels::LabelSet;
use serde::Serialize;
use std::collections::BTreeMap;

/// Two raters on the runs both judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgedPair {
    pub a: String,
    pub b: String,
    /// Runs both judged (gave an onset or a blame).
    pub runs: usize,
    pub onset: OnsetAgreement,
    pub blame: BlameAgreement,
}

/// Every pair of raters who judged some run both judged, among at most
/// [`PAIR_RATERS`](crate::agreement::PAIR_RATERS) raters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgementAgreement {
    /// The raters who judged onset or blame on some run, in the agreement table's order, and
    /// `reference` last when it judged any.
    pub raters: Vec<String>,
    /// Those whose pairs are compared: every rater up to `PAIR_RATERS`; beyond, `reference` and
    /// the raters who judged the most runs.
    pub pair_raters: Vec<String>,
    pub pairs: Vec<JudgedPair>,
}

/// What a rater said of a run.
#[derive(Debug, Clone, Copy)]
struct Judged {
    onset: Option<usize>,
    blame: Option<Blame>,
}

/// Each rater's judgement of each run it judged.
fn judgements(sets: &[LabelSet]) -> BTreeMap<String, BTreeMap<i64, Judged>> {
    let mut out: BTreeMap<String, BTreeMap<i64, Judged>> = BTreeMap::new();
    for (run, labels) in by_run(sets) {
        for l in labels.iter().filter(|l| l.judged) {
            if let Some(name) = rater_key(l) {
                out.entry(name).or_default().insert(run, Judged { onset: l.onset_step, blame: l.blame });
            }
        }
        if reference_judged(&labels) {
            let judged = Judged { onset: reference_onset(&labels), blame: reference_blame(&labels) };
            out.entry(REFERENCE.to_string()).or_default().insert(run, judged);
        }
    }
    out
}

/// Onset and blame agreement of every pair of raters over the runs both judged, bootstrapped
/// as `options` say.
pub fn judgement_agreement(
    sets: &[LabelSet],
    options: &BootstrapOptions,
) -> Result<JudgementAgreement, AgreementError> {
    let by_rater = judgements(sets);
    let mut raters: Vec<String> = by_rater.keys().filter(|r| *r != REFERENCE).cloned().collect();
    sort_raters(&mut raters);
    if by_rater.contains_key(REFERENCE) {
        raters.push(REFERENCE.to_string());
    }
    let values: Vec<(Blame, &str)> = Blame::ALL.iter().map(|b| (*b, b.name())).collect();
    let paired = pair_raters(&raters, &by_rater);
    let mut pairs = Vec::new();
    for (i, a) in paired.iter().enumerate() {
        for b in &paired[i + 1..] {
            let (Some(first), Some(second)) = (by_rater.get(a), by_rater.get(b)) else { continue };
            let both: Vec<(Judged, Judged)> =
                first.iter().filter_map(|(run, x)| second.get(run).map(|y| (*x, *y))).collect();
            if both.is_empty() {
                continue;
            }
            let steps: Vec<(usize, usize)> = both.iter().filter_map(|(x, y)| Some((x.onset?, y.onset?))).collect();
            let one_sided = both.iter().filter(|(x, y)| x.onset.is_some() != y.onset.is_some()).count();
            let blames: Vec<(Blame, Blame)> = both.iter().filter_map(|(x, y)| Some((x.blame?, y.blame?))).collect();
            pairs.push(JudgedPair {
                a: a.clone(),
                b: b.clone(),
                runs: both.len(),
                onset: onset_agreement(&steps, one_sided, options)?,
                blame: blame_agreement(&blames, &values, options)?,
            });
        }
    }
    Ok(JudgementAgreement { raters, pair_raters: paired, pairs })
}

/// The raters whose pairs are compared: all up to `PAIR_RATERS`; beyond, `reference` and the
/// raters who judged the most runs (the first in order among equals), in the order of `raters`.
fn pair_raters(raters: &[String], by_rater: &BTreeMap<String, BTreeMap<i64, Judged>>) -> Vec<String> {
    if raters.len() <= crate::agreement::PAIR_RATERS {
        return raters.to_vec();
    }
    let judged = |r: &String| by_rater.get(r).map_or(0, BTreeMap::len);
    let mut order: Vec<(usize, &String)> = raters.iter().enumerate().collect();
    order.sort_by_key(|&(k, r)| (r != REFERENCE, std::cmp::Reverse(judged(r)), k));
    order.truncate(crate::agreement::PAIR_RATERS);
    order.sort_unstable();
    order.into_iter().map(|(_, r)| r.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::Source;

    fn set(run: i64, source: Source, rater: &str, onset: Option<usize>, blame: Option<Blame>) -> LabelSet {
        LabelSet {
            run_id: run,
            source,
            rater: rater.into(),
            modes: Vec::new(),
            created_at: "1".into(),
            taxonomy_version: "1.0".into(),
            exit_category: String::new(),
            input_hash: None,
            judged: onset.is_some() || blame.is_some(),
            onset_step: onset,
            blame,
        }
    }

    #[test]
    fn every_pair_of_raters_over_the_runs_both_judged() {
        use Blame::{Agent, Task};
        let sets = vec![
            set(1, Source::Heuristic, "heuristic", Some(4), Some(Agent)),
            set(1, Source::Human, "ann", Some(5), Some(Agent)),
            set(2, Source::Heuristic, "heuristic", Some(2), Some(Agent)),
            set(2, Source::Human, "ann", None, Some(Task)),
            set(3, Source::Heuristic, "heuristic", Some(9), Some(Agent)),
            set(3, Source::Human, "ann", Some(9), Some(Agent)),
            // Bob judged nothing on run 3 (his label has modes only): not a judged run.
            set(3, Source::Human, "bob", None, None),
            set(4, Source::Llm, "gpt", Some(1), Some(Agent)),
        ];
        let none = BootstrapOptions { resamples: 0, ..BootstrapOptions::default() };
        let a = judgement_agreement(&sets, &none).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.raters, ["heuristic", "llm:gpt", "human:ann", "reference"], "bob judged nothing");
        let names: Vec<(&str, &str)> = a.pairs.iter().map(|p| (p.a.as_str(), p.b.as_str())).collect();
        // The LLM judged only run 4, which nobody else did.
        assert_eq!(names, [("heuristic", "human:ann"), ("heuristic", "reference"), ("human:ann", "reference")]);
        let p = &a.pairs[0];
        assert_eq!((p.runs, p.onset.n, p.onset.one_sided), (3, 2, 1));
        assert_eq!((p.onset.exact.value, p.onset.within_1.value), (Some(0.5), Some(1.0)));
        assert_eq!(p.onset.mean_distance.value, Some(0.5));
        assert_eq!((p.blame.n, p.blame.raw), (3, Some(2.0 / 3.0)));
        let task = p.blame.values.iter().find(|v| v.value == "task").map(|v| (v.first, v.second, v.both));
        assert_eq!(task, Some((0, 1, 0)));
        // Ann alone is the reference: they agree on everything.
        let r = &a.pairs[2];
        assert_eq!((r.onset.exact.value, r.blame.raw, r.onset.one_sided), (Some(1.0), Some(1.0), 0));
    }

    #[test]
    fn the_pairs_of_at_most_twenty_raters_are_compared() {
        // Forty reviewers; the last twenty judged more runs than the first twenty.
        let mut sets = Vec::new();
        for r in 0..40usize {
            for run in 0..if r < 20 { 2 } else { 4 } {
                sets.push(set(run, Source::Human, &format!("r{r:02}"), Some(r % 3), Some(Blame::Agent)));
            }
        }
        let none = BootstrapOptions { resamples: 0, ..BootstrapOptions::default() };
        let a = judgement_agreement(&sets, &none).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.raters.len(), 41, "forty and the reference");
        let mut kept: Vec<String> = (20..40).map(|r| format!("human:r{r:02}")).take(19).collect();
        kept.push(REFERENCE.to_string());
        assert_eq!(a.pair_raters, kept, "the reference, then those who judged most");
        assert_eq!(a.pairs.len(), 20 * 19 / 2);
    }
}
