//! Cohen's kappa and raw agreement between two raters, nominal categories.

use std::collections::BTreeMap;

/// Cohen's kappa (unweighted) of two raters over the pairs `(rating of a, rating of b)` of the
/// items both rated.
///
/// `kappa = 1 - observed disagreement / expected disagreement`, the expected one from the two
/// raters' marginals, as `sklearn.metrics.cohen_kappa_score` computes it. `None` when there is
/// no pair (sklearn raises) or the expected disagreement is 0, i.e. both raters gave one and the
/// same category to every item (sklearn returns NaN). Two constant raters that differ give 0.
pub fn cohen_kappa<L: Ord>(pairs: &[(L, L)]) -> Option<f64> {
    let mut index: BTreeMap<&L, usize> = BTreeMap::new();
    for (a, b) in pairs {
        index.entry(a).or_insert(0);
        index.entry(b).or_insert(0);
    }
    for (k, v) in index.values_mut().enumerate() {
        *v = k;
    }
    let k = index.len();
    let mut matrix = vec![0u64; k * k];
    for (a, b) in pairs {
        if let (Some(&i), Some(&j)) = (index.get(a), index.get(b)) {
            matrix[i * k + j] += 1;
        }
    }
    cohen_kappa_from_matrix(&matrix, k)
}

/// Cohen's kappa from a `k × k` confusion matrix of counts, row-major: `matrix[i * k + j]` items
/// that rater a put in category i and rater b in category j. `None` when the matrix is not
/// `k × k`, holds no item, or the expected disagreement is 0 (see [`cohen_kappa`]).
pub fn cohen_kappa_from_matrix(matrix: &[u64], k: usize) -> Option<f64> {
    if k == 0 || matrix.len() != k.checked_mul(k)? {
        return None;
    }
    let mut rows = vec![0u128; k];
    let mut cols = vec![0u128; k];
    let mut n: u128 = 0;
    let mut agree: u128 = 0;
    for i in 0..k {
        for j in 0..k {
            let c = u128::from(matrix[i * k + j]);
            rows[i] += c;
            cols[j] += c;
            n += c;
            if i == j {
                agree += c;
            }
        }
    }
    if n == 0 {
        return None;
    }
    // Expected disagreement × n: Σ_{i≠j} rows_i cols_j = n² − Σ_i rows_i cols_i (exact).
    let chance_agree: u128 = rows.iter().zip(&cols).map(|(r, c)| r * c).sum();
    let expected = n * n - chance_agree;
    if expected == 0 {
        return None;
    }
    let observed = n - agree;
    Some(1.0 - (observed as f64 * n as f64) / expected as f64)
}

/// Raw (percent) agreement of two raters: the share, in [0, 1], of the pairs on which they gave
/// the same rating. `None` when there is no pair. Reported beside kappa only: it ignores chance.
pub fn raw_agreement<L: PartialEq>(pairs: &[(L, L)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let same = pairs.iter().filter(|(a, b)| a == b).count();
    Some(same as f64 / pairs.len() as f64)
}
