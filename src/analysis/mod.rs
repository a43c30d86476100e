//! Pure functions over trajectory text: edit verdicts and diffs, output markers,
//! actions in brief.
//! No IO, no SQL: adapters and (later) classifiers call these.

pub mod brief;
pub mod compare;
pub mod edit_blocks;
pub mod edits;
pub mod markers;
pub mod paths;
pub mod reconstruct;
pub mod snippet;
pub mod symbols;
pub mod syntax;
