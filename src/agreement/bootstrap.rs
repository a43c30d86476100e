//! Percentile bootstrap intervals: resample the items with replacement, recompute the statistic,
//! take the quantiles. Deterministic for a seed (a hand-written SplitMix64, no dependency).

use super::AgreementError;
use serde::Serialize;

/// How to bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapOptions {
    /// Number of resamples B (0: no interval).
    pub resamples: usize,
    /// Seed of the generator: the same seed, data and statistic give the same interval.
    pub seed: u64,
    /// Confidence level, strictly between 0 and 1 (0.95: the 2.5th and 97.5th percentiles).
    pub level: f64,
    /// Least share of the resamples in which the statistic must be defined, in [0, 1]; below it
    /// the interval is `None`.
    pub min_defined: f64,
}

impl Default for BootstrapOptions {
    /// B = 1000, level 0.95, at least half of the resamples defined, a fixed seed.
    fn default() -> Self {
        BootstrapOptions { resamples: 1000, seed: 0x7472_616a_616e, level: 0.95, min_defined: 0.5 }
    }
}

impl BootstrapOptions {
    /// Checks the ranges of `level` and `min_defined`.
    pub fn validate(&self) -> Result<(), AgreementError> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(AgreementError::InvalidOption(format!("level {} not in (0, 1)", self.level)));
        }
        if !(0.0..=1.0).contains(&self.min_defined) {
            return Err(AgreementError::InvalidOption(format!("min_defined {} not in [0, 1]", self.min_defined)));
        }
        Ok(())
    }
}

/// A percentile interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The (1 − level)/2 quantile of the resampled values.
    pub low: f64,
    /// The (1 + level)/2 quantile.
    pub high: f64,
    /// Resamples in which the statistic was defined (the others are skipped).
    pub defined: usize,
}

/// Percentile intervals for `K` statistics computed on the same resamples.
///
/// There are `n` items; each resample draws `n` item indices uniformly with replacement and
/// `stat` computes the `K` statistics from them (an index may repeat; the caller indexes its own
/// data). A statistic that is `None` (or not finite) in a resample is skipped for that resample;
/// its interval is `None` when it is defined in fewer than `max(1, ⌈min_defined · B⌉)` resamples,
/// or when `n` or B is 0. Quantiles interpolate linearly between order statistics (numpy's
/// default). Errors only on invalid options.
pub fn bootstrap_intervals<const K: usize>(
    n: usize,
    options: &BootstrapOptions,
    mut stat: impl FnMut(&[usize]) -> [Option<f64>; K],
) -> Result<[Option<Interval>; K], AgreementError> {
    options.validate()?;
    if n == 0 || options.resamples == 0 {
        return Ok([None; K]);
    }
    let mut rng = SplitMix64::new(options.seed);
    let mut indices = vec![0usize; n];
    let mut values: [Vec<f64>; K] = std::array::from_fn(|_| Vec::with_capacity(options.resamples));
    for _ in 0..options.resamples {
        for ix in indices.iter_mut() {
            *ix = rng.below(n);
        }
        for (acc, v) in values.iter_mut().zip(stat(&indices)) {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                acc.push(v);
            }
        }
    }
    let needed = ((options.min_defined * options.resamples as f64).ceil() as usize).max(1);
    let tail = (1.0 - options.level) / 2.0;
    Ok(values.map(|mut v| {
        if v.len() < needed {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Interval { low: quantile(&v, tail)?, high: quantile(&v, 1.0 - tail)?, defined: v.len() })
    }))
}

/// Linear-interpolation quantile of sorted values (numpy's default, "type 7").
fn quantile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * p.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let (a, b) = (*sorted.get(lo)?, *sorted.get(hi)?);
    Some(a + (h - lo as f64) * (b - a))
}

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and good enough to draw bootstrap indices.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0) by multiply-shift; the bias, below n / 2⁶⁴, is negligible here.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}
