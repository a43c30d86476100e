//! A consensus reference: the per-mode majority of given raters (e.g. the human reviewers).

use super::AgreementError;
use super::table::{RatingTable, Table};
use std::collections::BTreeMap;

/// The majority of binary votes: `Some(true)` if more say yes than no, `Some(false)` if more say
/// no, `None` on a tie or without any vote.
pub fn majority<I: IntoIterator<Item = bool>>(votes: I) -> Option<bool> {
    let (mut yes, mut no) = (0usize, 0usize);
    for v in votes {
        if v {
            yes += 1;
        } else {
            no += 1;
        }
    }
    match yes.cmp(&no) {
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => None,
    }
}

/// Per item, the [`majority`] of the given rater columns of a binary (one mode) table; raters
/// that did not rate the item do not vote. Out-of-range columns are ignored.
pub fn consensus_column(table: &Table<bool>, raters: &[usize]) -> Vec<Option<bool>> {
    table.rows().iter().map(|row| majority(raters.iter().filter_map(|&r| row.get(r).copied().flatten()))).collect()
}

/// The consensus of the named raters for each mode: `mode → per item (row order)` majority, `None`
/// where they tie or none of them rated the item.
pub fn human_consensus(
    table: &RatingTable,
    raters: &[String],
    modes: &[String],
) -> Result<BTreeMap<String, Vec<Option<bool>>>, AgreementError> {
    let columns = raters
        .iter()
        .map(|name| table.rater_index(name).ok_or_else(|| AgreementError::UnknownRater(name.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(modes.iter().map(|m| (m.clone(), consensus_column(&table.one_vs_rest(m), &columns))).collect())
}
