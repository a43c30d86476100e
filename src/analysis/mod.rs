//! Pure functions over trajectory text: edit verdicts and diffs, shell writes, output markers.
//! No IO, no SQL: adapters and (later) classifiers call these.

pub mod edits;
pub mod markers;
pub mod shell;
pub mod snippet;
