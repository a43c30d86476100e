//! Krippendorff's alpha, nominal metric, through the coincidence matrix.

use std::collections::BTreeMap;

/// Krippendorff's alpha (nominal) of a table of units (items): `units[u][rater]` is that rater's
/// value for unit u, `None` if missing. Any number of raters; units with fewer than two values are
/// not pairable and ignored.
///
/// `alpha = 1 − D_o / D_e` with the observed and expected disagreements from the coincidence
/// matrix, as `krippendorff.alpha(..., level_of_measurement='nominal')` computes it. `None` when
/// no unit has two values or fewer than two distinct values are pairable (the package raises
/// ValueError, or returns NaN when the expected disagreement is 0).
pub fn krippendorff_alpha<L: Ord>(units: &[Vec<Option<L>>]) -> Option<f64> {
    let counts = AlphaCounts::from_units(units);
    krippendorff_alpha_counts(&counts.units, counts.categories)
}

/// Per-unit value counts: the input of alpha and of its bootstrap (resampling units is cheap on
/// counts).
#[derive(Debug, Clone, PartialEq)]
pub struct AlphaCounts {
    /// Number of distinct values (categories).
    pub categories: usize,
    /// For each pairable unit (at least two values), how many raters gave each category
    /// (`categories` entries each). Units with fewer than two values are dropped.
    pub units: Vec<Vec<u64>>,
}

impl AlphaCounts {
    /// Counts of a table of units (see [`krippendorff_alpha`]).
    pub fn from_units<L: Ord>(units: &[Vec<Option<L>>]) -> AlphaCounts {
        let mut index: BTreeMap<&L, usize> = BTreeMap::new();
        for v in units.iter().flatten().flatten() {
            index.entry(v).or_insert(0);
        }
        for (k, v) in index.values_mut().enumerate() {
            *v = k;
        }
        let categories = index.len();
        let counts = units
            .iter()
            .filter_map(|unit| {
                let mut c = vec![0u64; categories];
                for v in unit.iter().flatten() {
                    if let Some(&k) = index.get(v) {
                        c[k] += 1;
                    }
                }
                (c.iter().sum::<u64>() >= 2).then_some(c)
            })
            .collect();
        AlphaCounts { categories, units: counts }
    }

    /// Number of pairable values (ratings in pairable units).
    pub fn pairable_values(&self) -> u64 {
        self.units.iter().flatten().sum()
    }
}

/// Krippendorff's alpha (nominal) from per-unit value counts (`units[u][c]`: raters that gave unit
/// u category c; each row `categories` long). Units with fewer than two values are ignored. See
/// [`krippendorff_alpha`] for `None`.
pub fn krippendorff_alpha_counts(units: &[Vec<u64>], categories: usize) -> Option<f64> {
    let mut acc = Coincidences::new(categories);
    for unit in units {
        acc.add(unit);
    }
    acc.alpha()
}

/// The coincidence matrix, summed unit by unit. Only its row sums (n_c) and its off-diagonal total
/// matter for the nominal metric.
pub(crate) struct Coincidences {
    /// n_c = Σ_k o_ck, which for the nominal metric is the number of pairable values c.
    marginals: Vec<u64>,
    /// Σ_{c≠k} o_ck.
    disagreement: f64,
}

impl Coincidences {
    pub(crate) fn new(categories: usize) -> Self {
        Coincidences { marginals: vec![0; categories], disagreement: 0.0 }
    }

    /// Adds one unit's counts (ignored if it has fewer than two values or the wrong length).
    pub(crate) fn add(&mut self, unit: &[u64]) {
        if unit.len() != self.marginals.len() {
            return;
        }
        let m: u64 = unit.iter().sum();
        if m < 2 {
            return;
        }
        // o_ck += n_uc n_uk / (m − 1) for c ≠ k, n_uc (n_uc − 1) / (m − 1) on the diagonal; so
        // each n_c grows by n_uc, and the off-diagonal total by (m² − Σ n_uc²) / (m − 1).
        let m = u128::from(m);
        let sq: u128 = unit.iter().map(|&c| u128::from(c) * u128::from(c)).sum();
        for (acc, &c) in self.marginals.iter_mut().zip(unit) {
            *acc = acc.saturating_add(c);
        }
        self.disagreement += (m * m - sq) as f64 / (m - 1) as f64;
    }

    pub(crate) fn alpha(&self) -> Option<f64> {
        // Fewer than two pairable categories: the expected disagreement is 0.
        if self.marginals.iter().filter(|&&c| c > 0).count() < 2 {
            return None;
        }
        let n: u128 = self.marginals.iter().map(|&c| u128::from(c)).sum();
        let sq: u128 = self.marginals.iter().map(|&c| u128::from(c) * u128::from(c)).sum();
        // Σ_{c≠k} n_c n_k / (n − 1); n ≥ 2 and n² > Σ n_c² here.
        let expected = (n * n - sq) as f64 / (n - 1) as f64;
        Some(1.0 - self.disagreement / expected)
    }
}
