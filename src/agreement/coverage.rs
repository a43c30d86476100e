//! Coverage: how often a rater names at least one mode.

use super::table::RatingTable;
use serde::Serialize;

/// One rater's coverage: of the items it rated, how many got at least one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    /// The rater.
    pub rater: String,
    /// Items the rater rated.
    pub rated: usize,
    /// Items whose rating names at least one mode.
    pub classified: usize,
    /// `classified / rated`; `None` when the rater rated nothing.
    pub share: Option<f64>,
}

/// The coverage of rater column `rater` (all zero and `None` if out of range).
pub fn coverage(table: &RatingTable, rater: usize) -> Coverage {
    let column = table.column(rater);
    let rated = column.iter().flatten().count();
    let classified = column.iter().flatten().filter(|r| !r.is_empty()).count();
    Coverage {
        rater: table.raters().get(rater).cloned().unwrap_or_default(),
        rated,
        classified,
        share: (rated > 0).then(|| classified as f64 / rated as f64),
    }
}
