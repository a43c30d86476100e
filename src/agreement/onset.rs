//! Agreement on where a run went wrong and whose failure it is, between two raters of the same
//! runs (failure-modes.md, "Failure onset and blame"): for onset, the share of runs whose steps
//! are within 0, 1 and 3 steps of each other and the mean distance; for blame, Cohen's kappa
//! over the values and per value (one against the rest), with raw agreement beside it. Bootstrap
//! intervals resample the runs.

use super::AgreementError;
use super::bootstrap::{BootstrapOptions, bootstrap_intervals};
use super::classification::Confusion;
use super::kappa::{cohen_kappa, raw_agreement};
use super::report::Estimate;
use serde::Serialize;

/// Two raters' onsets over the runs both gave one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnsetAgreement {
    /// Runs both raters gave an onset step.
    pub n: usize,
    /// Runs one rater gave a step and the other none (it blamed the task or the environment, or
    /// found no onset): not in the shares.
    pub one_sided: usize,
    /// The same step.
    pub exact: Estimate,
    pub within_1: Estimate,
    pub within_3: Estimate,
    /// The mean distance in steps.
    pub mean_distance: Estimate,
}

fn share(pairs: &[(usize, usize)], idx: &[usize], k: usize) -> Option<f64> {
    (!idx.is_empty())
        .then(|| idx.iter().filter(|&&i| pairs[i].0.abs_diff(pairs[i].1) <= k).count() as f64 / idx.len() as f64)
}

fn mean(pairs: &[(usize, usize)], idx: &[usize]) -> Option<f64> {
    (!idx.is_empty())
        .then(|| idx.iter().map(|&i| pairs[i].0.abs_diff(pairs[i].1) as f64).sum::<f64>() / idx.len() as f64)
}

/// Onset agreement over `pairs` (each run's two steps) and `one_sided` runs only one rater gave
/// a step.
pub fn onset_agreement(
    pairs: &[(usize, usize)],
    one_sided: usize,
    options: &BootstrapOptions,
) -> Result<OnsetAgreement, AgreementError> {
    let all: Vec<usize> = (0..pairs.len()).collect();
    let stats = |idx: &[usize]| [share(pairs, idx, 0), share(pairs, idx, 1), share(pairs, idx, 3), mean(pairs, idx)];
    let values = stats(&all);
    let cis = bootstrap_intervals(pairs.len(), options, stats)?;
    let est = |i: usize| Estimate { value: values[i], ci: cis[i] };
    Ok(OnsetAgreement {
        n: pairs.len(),
        one_sided,
        exact: est(0),
        within_1: est(1),
        within_3: est(2),
        mean_distance: est(3),
    })
}

/// Two raters' blame on one value, one against the rest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueAgreement {
    pub value: String,
    /// Runs each rater gave this value, and both.
    pub first: usize,
    pub second: usize,
    pub both: usize,
    pub kappa: Estimate,
}

/// Two raters' blame over the runs both judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlameAgreement {
    pub n: usize,
    /// Cohen's kappa over all the values.
    pub kappa: Estimate,
    /// Raw agreement, shown only beside kappa.
    pub raw: Option<f64>,
    pub values: Vec<ValueAgreement>,
}

/// Blame agreement over `pairs` (each run's two values), per value of `values` (each with its
/// name) and over all of them.
pub fn blame_agreement<L: Ord + Copy>(
    pairs: &[(L, L)],
    values: &[(L, &str)],
    options: &BootstrapOptions,
) -> Result<BlameAgreement, AgreementError> {
    let kappa_of = |idx: &[usize]| {
        let picked: Vec<(L, L)> = idx.iter().map(|&i| pairs[i]).collect();
        cohen_kappa(&picked)
    };
    let all: Vec<usize> = (0..pairs.len()).collect();
    let [ci] = bootstrap_intervals(pairs.len(), options, |idx| [kappa_of(idx)])?;
    let kappa = Estimate { value: kappa_of(&all), ci };
    let mut out = Vec::new();
    for &(v, name) in values {
        let binary = |idx: &[usize]| {
            let mut c = Confusion::default();
            for &i in idx {
                c.count(pairs[i].0 == v, pairs[i].1 == v);
            }
            c.kappa()
        };
        let [ci] = bootstrap_intervals(pairs.len(), options, |idx| [binary(idx)])?;
        out.push(ValueAgreement {
            value: name.to_string(),
            first: pairs.iter().filter(|p| p.0 == v).count(),
            second: pairs.iter().filter(|p| p.1 == v).count(),
            both: pairs.iter().filter(|p| p.0 == v && p.1 == v).count(),
            kappa: Estimate { value: binary(&all), ci },
        });
    }
    Ok(BlameAgreement { n: pairs.len(), kappa, raw: raw_agreement(pairs), values: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onset_shares_and_distance() {
        let pairs = [(3, 3), (10, 11), (20, 23), (5, 30)];
        let none = BootstrapOptions { resamples: 0, ..BootstrapOptions::default() };
        let a = onset_agreement(&pairs, 2, &none).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.n, a.one_sided), (4, 2));
        assert_eq!(a.exact.value, Some(0.25));
        assert_eq!(a.within_1.value, Some(0.5));
        assert_eq!(a.within_3.value, Some(0.75));
        assert_eq!(a.mean_distance.value, Some((0.0 + 1.0 + 3.0 + 25.0) / 4.0));
        let with = onset_agreement(&pairs, 0, &BootstrapOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let ci = with.within_3.ci.unwrap_or_else(|| panic!("an interval"));
        assert!(ci.low <= 0.75 && 0.75 <= ci.high, "{ci:?}");
        let empty = onset_agreement(&[], 0, &none).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(empty.exact.value, None, "undefined, not zero");
    }

    #[test]
    fn blame_kappa_overall_and_per_value() {
        // a, a, a, t / a, a, t, t: one disagreement.
        let pairs = [(0, 0), (0, 0), (0, 1), (1, 1)];
        let none = BootstrapOptions { resamples: 0, ..BootstrapOptions::default() };
        let b = blame_agreement(&pairs, &[(0, "agent"), (1, "task"), (2, "environment")], &none)
            .unwrap_or_else(|e| panic!("{e}"));
        // p_o = 3/4; p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2; kappa = 0.5.
        assert_eq!(b.kappa.value, Some(0.5));
        assert_eq!(b.raw, Some(0.75));
        assert_eq!((b.values[1].first, b.values[1].second, b.values[1].both), (1, 2, 1));
        assert_eq!(b.values[1].kappa.value, Some(0.5));
        assert_eq!(b.values[2].kappa.value, None, "no rater used it: undefined");
    }
}
