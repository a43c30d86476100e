//! The statistics screen's state: the numbers (loaded by the driver) and what is selected.

use crate::agreement::AgreementReport;
use crate::review::stats::{By, Stats};

#[derive(Debug, Clone)]
pub struct StatsView {
    pub stats: Stats,
    /// Agreement of every rater with the reference, per mode; `None` before any label.
    pub report: Option<AgreementReport>,
    pub by: By,
    /// The mode whose confusion matrix is shown.
    pub mode: usize,
    /// The rater scored against the reference in the confusion matrix.
    pub rater: usize,
    /// Blind review: the numbers cover only the runs this reviewer labelled.
    pub blind: bool,
    /// Lines scrolled (a narrow screen shows every section in one column).
    pub scroll: usize,
}

/// The grouping after `by`.
pub fn next_by(by: By) -> By {
    match by {
        By::All => By::Model,
        By::Model => By::Agent,
        By::Agent => By::Benchmark,
        By::Benchmark => By::Exit,
        By::Exit => By::All,
    }
}
