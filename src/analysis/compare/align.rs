//! The alignment: Myers anchors on equal signatures, a weighted LCS between anchors (within a
//! band around the diagonal when the block is large), progressive for more than two runs.
//!
//! Deterministic: no step of it reads the clock. The Myers diff is `similar`'s default,
//! heuristic one, whose work is bounded by the input's size (a Git-style cost limit on the
//! middle-snake search: on runs that differ almost everywhere it settles for a good split
//! rather than the shortest edit script); the LCS between anchors is bounded by [`MAX_CELLS`].
//! The same runs give the same rows on any machine.

use super::signature::{Row, SIMILAR, Signature, similarity};
use similar::{Algorithm, DiffTag, capture_diff_slices};

/// The most cells (rows × columns) the weighted LCS fills for one block of unanchored steps: a
/// larger block (two runs that share almost nothing for thousands of steps) is paired within a
/// band around its diagonal, as wide as this budget allows.
pub const MAX_CELLS: usize = 1 << 20;

/// Two sequences of signatures paired in order: `(Some(i), Some(j))` puts `a[i]` and `b[j]` on
/// one row; `(Some(i), None)` and `(None, Some(j))` are steps with no counterpart.
pub fn pair(a: &[&Signature], b: &[&Signature]) -> Vec<(Option<usize>, Option<usize>)> {
    let ops = capture_diff_slices(Algorithm::Myers, a, b);
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => out.extend(old.zip(new).map(|(i, j)| (Some(i), Some(j)))),
            DiffTag::Delete => out.extend(old.map(|i| (Some(i), None))),
            DiffTag::Insert => out.extend(new.map(|j| (None, Some(j)))),
            DiffTag::Replace => similar_pairs(a, b, old, new, &mut out),
        }
    }
    out
}

/// The cells of the LCS table that are filled: per row `i` (steps of `a` taken), the columns
/// `lo(i)..=hi(i)` (steps of `b` taken). The whole table when it fits [`MAX_CELLS`]; else a band
/// of `half` columns either side of the diagonal from `(0, 0)` to `(n, m)`. Each row's band
/// reaches the next row's start, so `(n, m)` is reachable from `(0, 0)`.
struct Band {
    n: usize,
    m: usize,
    half: usize,
}

impl Band {
    fn new(n: usize, m: usize) -> Band {
        let half = if n.saturating_mul(m) <= MAX_CELLS { m } else { (MAX_CELLS / (2 * (n + 1))).max(1) };
        Band { n, m, half }
    }

    fn lo(&self, i: usize) -> usize {
        (i * self.m / self.n).saturating_sub(self.half)
    }

    fn hi(&self, i: usize) -> usize {
        ((i + 1) * self.m / self.n).saturating_add(self.half).min(self.m)
    }
}

/// Steps between two anchors, paired when similar: the most similarity in order (a weighted
/// longest common subsequence, Needleman-Wunsch with free gaps), within a [`Band`].
fn similar_pairs(
    a: &[&Signature],
    b: &[&Signature],
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    out: &mut Vec<(Option<usize>, Option<usize>)>,
) {
    let (n, m) = (old.len(), new.len());
    if n == 0 || m == 0 {
        out.extend(old.map(|i| (Some(i), None)));
        out.extend(new.map(|j| (None, Some(j))));
        return;
    }
    let band = Band::new(n, m);
    // Row i's cells start at starts[i] in `score`; column j of row i is score[starts[i] + j - lo(i)].
    let mut starts = Vec::with_capacity(n + 2);
    let mut total = 0;
    for i in 0..=n {
        starts.push(total);
        total += band.hi(i) - band.lo(i) + 1;
    }
    let mut score = vec![0f32; total];
    let get = |score: &[f32], i: usize, j: usize| -> f32 {
        if j < band.lo(i) || j > band.hi(i) { f32::NEG_INFINITY } else { score[starts[i] + j - band.lo(i)] }
    };
    let sim = |i: usize, j: usize| {
        let s = similarity(a[old.start + i], b[new.start + j]);
        (s >= SIMILAR).then_some(s as f32)
    };
    for i in 1..=n {
        for j in band.lo(i)..=band.hi(i) {
            let mut best = get(&score, i - 1, j);
            if j > 0 {
                best = best.max(get(&score, i, j - 1));
                if let Some(s) = sim(i - 1, j - 1) {
                    best = best.max(get(&score, i - 1, j - 1) + s);
                }
            }
            score[starts[i] + j - band.lo(i)] = best;
        }
    }
    let mut back = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = get(&score, i, j);
        if i > 0 && j > 0 && sim(i - 1, j - 1).is_some_and(|s| here == get(&score, i - 1, j - 1) + s) {
            back.push((Some(old.start + i - 1), Some(new.start + j - 1)));
            i -= 1;
            j -= 1;
        } else if j > 0 && (i == 0 || here == get(&score, i, j - 1)) {
            // Read backwards: a run's own steps come first, then the other's.
            back.push((None, Some(new.start + j - 1)));
            j -= 1;
        } else {
            back.push((Some(old.start + i - 1), None));
            i -= 1;
        }
    }
    out.extend(back.into_iter().rev());
}

/// Rows for every run's steps (`runs[k][i]` the signature of run `k`'s `i`-th step). Each row
/// holds the position of one step per run, or a gap; every step is on exactly one row, and each
/// run's steps are in order down the rows.
///
/// More than two runs are aligned progressively: each further run against the rows so far, a row
/// standing for the step of the first run (in the order below) that has one on it. That order is
/// the runs' own, not the order they were given in (longest first, then by their signatures), so
/// the rows do not depend on it: runs given in another order give the same rows, their cells
/// permuted the same way. (Only runs whose signatures are all equal keep their given order among
/// themselves; they are the same sequence, so their columns read alike.) Two runs pair the same
/// steps either way and keep the given order, which only decides whose unpaired steps between
/// two rows are listed first (the first run's).
pub fn align(runs: &[Vec<Signature>]) -> Vec<Row> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    if runs.len() < 3 {
        let given: Vec<&[Signature]> = runs.iter().map(Vec::as_slice).collect();
        return align_in_order(&given);
    }
    order.sort_by(|&x, &y| runs[y].len().cmp(&runs[x].len()).then_with(|| runs[x].cmp(&runs[y])));
    let sorted: Vec<&[Signature]> = order.iter().map(|&k| runs[k].as_slice()).collect();
    align_in_order(&sorted)
        .into_iter()
        .map(|row| {
            let mut out = vec![None; runs.len()];
            for (cell, &k) in row.into_iter().zip(&order) {
                out[k] = cell;
            }
            out
        })
        .collect()
}

/// The progressive alignment of runs in the order given.
fn align_in_order(runs: &[&[Signature]]) -> Vec<Row> {
    let Some(first) = runs.first() else { return Vec::new() };
    let width = runs.len();
    let mut rows: Vec<Row> = (0..first.len())
        .map(|i| {
            let mut r = vec![None; width];
            r[0] = Some(i);
            r
        })
        .collect();
    for (k, run) in runs.iter().enumerate().skip(1) {
        // A row stands for the step of its first run.
        let reps: Vec<&Signature> = rows
            .iter()
            .filter_map(|row| row.iter().enumerate().find_map(|(r, c)| c.and_then(|i| runs[r].get(i))))
            .collect();
        let steps: Vec<&Signature> = run.iter().collect();
        let mut next = Vec::with_capacity(rows.len().max(run.len()));
        let mut old = rows.into_iter();
        for (ra, rb) in pair(&reps, &steps) {
            let mut row = match ra {
                Some(_) => old.next().unwrap_or_else(|| vec![None; width]),
                None => vec![None; width],
            };
            row[k] = rb;
            next.push(row);
        }
        rows = next;
    }
    rows
}
