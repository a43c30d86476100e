//! Bounds on what a chart draws, whatever the number of groups, raters or modes (a PNG of 5,000
//! models took 4.35 GB; of 20,000, an allocation of 8.6 GB aborted): at most [`SERIES`] series
//! (the palette's colours), [`CATEGORIES`] categories and [`BARS`] bars. The groups past them
//! are summed as one where their numbers add up (counts, and shares of counts), and left out
//! where they do not (quartiles, agreement coefficients: the total row counts them); a figure
//! says on it what was summed or left out (`Figure::note`).

use crate::review::outcomes::OutcomeRow;
use crate::review::stats::{Row, Stats};
use std::borrow::Cow;

/// Series a chart draws at most: the palette's colours.
pub const SERIES: usize = super::PALETTE.len();
/// Categories (rows of bars, or groups of boxes) a chart draws at most.
pub const CATEGORIES: usize = 30;
/// Bars a chart draws at most (categories times series).
pub const BARS: usize = 160;

/// The `keep` items of most `weight` in their order, and the rest (in theirs).
pub fn split<T>(items: Vec<T>, keep: usize, weight: impl Fn(&T) -> usize) -> (Vec<T>, Vec<T>) {
    if items.len() <= keep {
        return (items, Vec::new());
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|i| std::cmp::Reverse(weight(&items[*i])));
    let mut kept = vec![false; items.len()];
    for i in order.into_iter().take(keep) {
        kept[i] = true;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, item) in items.into_iter().enumerate() {
        if kept[i] { a.push(item) } else { b.push(item) }
    }
    (a, b)
}

/// How many categories a chart of `series` series may draw.
pub fn categories(series: usize) -> usize {
    (BARS / series.max(1)).clamp(1, CATEGORIES)
}

/// The statistics a chart of `kind` draws: the groups past its bound summed or left out, and
/// what the figure says of it.
pub fn stats(kind: super::Kind, s: &Stats) -> (Cow<'_, Stats>, Option<String>) {
    use super::Kind;
    // The total row is drawn beside the groups of the charts of one series.
    let (keep, outcomes, summed) = match kind {
        Kind::Modes => (SERIES - 1, false, true),
        Kind::Coverage => (CATEGORIES - 2, false, true),
        Kind::Resolve => (CATEGORIES - 2, true, true),
        Kind::Steps | Kind::Cost => (CATEGORIES / 2 - 1, true, false),
        Kind::Agreement => return (Cow::Borrowed(s), None),
    };
    let groups = if outcomes { s.outcomes.len() } else { s.rows.len() };
    if groups <= keep + usize::from(summed) {
        return (Cow::Borrowed(s), None);
    }
    let mut b = s.clone();
    let plural = format!("{}s", s.by);
    let (n, note) = if outcomes {
        let (kept, rest) = split(std::mem::take(&mut b.outcomes), keep, |o| o.runs);
        b.outcomes = kept;
        if summed {
            b.outcomes.push(outcome_sum(format!("{} other {plural}, summed", rest.len()), &rest));
        }
        (rest.len(), summed)
    } else {
        let (kept, rest) = split(std::mem::take(&mut b.rows), keep, |r| r.labelled);
        b.rows = kept;
        b.rows.push(row_sum(format!("{} other {plural}, summed", rest.len()), &rest));
        (rest.len(), true)
    };
    let most = if outcomes { "runs" } else { "labelled failed runs" };
    let note = if note {
        format!("the {keep} {plural} with the most {most} drawn; the other {n} summed as one")
    } else {
        format!(
            "the {keep} {plural} with the most {most} drawn; the other {n} not (quartiles do not add up: the total counts them)"
        )
    };
    (Cow::Owned(b), Some(note))
}

/// Rows of groups as one: their counts summed, the shares of the sums.
fn row_sum(group: String, rows: &[Row]) -> Row {
    let mut sum = Row { group, ..Row::default() };
    for r in rows {
        sum.runs += r.runs;
        sum.labelled += r.labelled;
        sum.with_mode += r.with_mode;
        sum.compared += r.compared;
        sum.blamed_task += r.blamed_task;
        sum.blamed_environment += r.blamed_environment;
        sum.blame_unjudged += r.blame_unjudged;
        for (mode, n) in &r.modes {
            *sum.modes.entry(mode.clone()).or_default() += n;
        }
    }
    sum.coverage = (sum.labelled > 0).then(|| sum.with_mode as f64 / sum.labelled as f64);
    sum
}

/// Groups' runs by verdict as one: counts summed, the resolve rate of the sums (no spreads).
fn outcome_sum(group: String, rows: &[OutcomeRow]) -> OutcomeRow {
    let mut sum = OutcomeRow { group, ..OutcomeRow::default() };
    for o in rows {
        sum.runs += o.runs;
        sum.resolved += o.resolved;
        sum.failed += o.failed;
        sum.unknown += o.unknown;
        sum.no_trajectory += o.no_trajectory;
        sum.no_trajectory_resolved += o.no_trajectory_resolved;
        sum.no_trajectory_failed += o.no_trajectory_failed;
    }
    let (resolved, verdicts) = sum.verdicts();
    sum.resolve_rate = (verdicts > 0).then(|| resolved as f64 / verdicts as f64);
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heaviest_are_kept_in_their_order() {
        let (kept, rest) = split(vec![5, 1, 9, 3, 9], 3, |x| *x);
        assert_eq!((kept, rest), (vec![5, 9, 9], vec![1, 3]));
        assert_eq!(categories(1), CATEGORIES);
        assert_eq!(categories(8), 20);
        assert_eq!(categories(10_000), 1);
    }
}
