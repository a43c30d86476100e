//! The alignment: Myers anchors on equal signatures, a weighted LCS between anchors, progressive
//! for more than two runs.

use super::{Row, SIMILAR, Signature, similarity};
use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
use std::time::{Duration, Instant};

/// The largest block of unanchored steps (rows × columns) paired by the weighted LCS; a larger
/// one (two runs that share almost nothing for thousands of steps) is left as gaps.
pub const MAX_CELLS: usize = 1 << 20;

/// How long the Myers diff of one pair may search for the shortest edit script before it
/// settles for a good one (similar's deadline): two runs that differ everywhere stay fast.
const DIFF_BUDGET: Duration = Duration::from_millis(300);

/// Two sequences of signatures paired in order: `(Some(i), Some(j))` puts `a[i]` and `b[j]` on
/// one row; `(Some(i), None)` and `(None, Some(j))` are steps with no counterpart.
pub fn pair(a: &[&Signature], b: &[&Signature]) -> Vec<(Option<usize>, Option<usize>)> {
    let deadline = Instant::now().checked_add(DIFF_BUDGET);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, a, b, deadline);
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

/// Steps between two anchors, paired when similar: the most similarity in order (a weighted
/// longest common subsequence, Needleman-Wunsch with free gaps).
fn similar_pairs(
    a: &[&Signature],
    b: &[&Signature],
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    out: &mut Vec<(Option<usize>, Option<usize>)>,
) {
    let (n, m) = (old.len(), new.len());
    if n.saturating_mul(m) > MAX_CELLS {
        out.extend(old.map(|i| (Some(i), None)));
        out.extend(new.map(|j| (None, Some(j))));
        return;
    }
    let w = m + 1;
    let mut score = vec![0f32; (n + 1) * w];
    let sim = |i: usize, j: usize| {
        let s = similarity(a[old.start + i], b[new.start + j]);
        (s >= SIMILAR).then_some(s as f32)
    };
    for i in 1..=n {
        for j in 1..=m {
            let mut best = score[(i - 1) * w + j].max(score[i * w + j - 1]);
            if let Some(s) = sim(i - 1, j - 1) {
                best = best.max(score[(i - 1) * w + j - 1] + s);
            }
            score[i * w + j] = best;
        }
    }
    let mut back = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = score[i * w + j];
        if i > 0 && j > 0 && sim(i - 1, j - 1).is_some_and(|s| here == score[(i - 1) * w + j - 1] + s) {
            back.push((Some(old.start + i - 1), Some(new.start + j - 1)));
            i -= 1;
            j -= 1;
        } else if j > 0 && (i == 0 || here == score[i * w + j - 1]) {
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
pub fn align(runs: &[Vec<Signature>]) -> Vec<Row> {
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
