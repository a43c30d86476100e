//! Agreement statistics between the raters of failed runs: the heuristic classifier, an LLM and
//! human reviewers.
//!
//! Pure functions over a [`Table`] of ratings (items × raters; a cell is `None` when that rater
//! did not rate that item). A [`Rating`] is a set of failure-mode ids, the empty set meaning
//! "unclassified"; per mode, [`Table::one_vs_rest`] projects it to a binary table.
//!
//! - [`kappa`]: Cohen's kappa and raw agreement between two raters;
//! - [`alpha`]: Krippendorff's alpha (nominal) over any number of raters, missing ratings allowed;
//! - [`classification`]: the 2×2 confusion of a rater against a reference, precision, recall, F1;
//! - [`coverage`](mod@coverage): the share of a rater's ratings that name at least one mode;
//! - [`consensus`]: a per-mode majority of given raters (e.g. the humans);
//! - [`onset`](mod@onset): onset (steps within 0, 1, 3; mean distance) and blame (kappa) agreement;
//! - [`bootstrap`]: percentile intervals by resampling items, deterministic for a seed;
//! - [`report`]: all of it per mode, serializable for the CLI.
//!
//! Every statistic that can be undefined returns `Option<f64>`: `None` wherever scikit-learn
//! returns NaN or raises, or the `krippendorff` package raises or returns NaN. The values are
//! checked against both on the tables in `tests/agreement/` (see `scripts/agreement_reference.py`).

pub mod alpha;
pub mod bootstrap;
pub mod classification;
pub mod consensus;
pub mod coverage;
pub mod kappa;
pub mod onset;
pub mod report;
pub mod table;

#[cfg(test)]
mod tests;

pub use alpha::{AlphaCounts, krippendorff_alpha, krippendorff_alpha_counts};
pub use bootstrap::{BootstrapOptions, Interval, bootstrap_intervals};
pub use classification::Confusion;
pub use consensus::{consensus_column, human_consensus, majority};
pub use coverage::{Coverage, coverage};
pub use kappa::{cohen_kappa, cohen_kappa_from_matrix, raw_agreement};
pub use onset::{BlameAgreement, OnsetAgreement, ValueAgreement, blame_agreement, onset_agreement};
pub use report::{
    AgreementReport, AlphaScore, ClassifierScore, Estimate, MicroScore, ModeAgreement, PAIR_RATERS, PairAgreement,
    Reference, agreement_report,
};
pub use table::{Rating, RatingTable, Table};

/// What can go wrong building a table or a report. Statistics themselves never fail: an undefined
/// value is `None`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgreementError {
    /// Two items or two raters share a name.
    #[error("duplicate {kind} {name:?}")]
    Duplicate { kind: &'static str, name: String },
    /// The same (item, rater) cell was given twice.
    #[error("item {item:?} rated twice by {rater:?}")]
    DuplicateCell { item: String, rater: String },
    /// Rows or cells do not match the items and raters.
    #[error("table shape: {0}")]
    Shape(String),
    /// A rater named in a request is not in the table.
    #[error("unknown rater {0:?}")]
    UnknownRater(String),
    /// An option out of range (e.g. a confidence level not strictly between 0 and 1).
    #[error("invalid option: {0}")]
    InvalidOption(String),
}
