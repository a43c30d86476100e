//! Runs of one task side by side: step signatures, an alignment of two or more runs' steps,
//! the points where they diverge, and their patches compared file by file.
//!
//! **The same step.** Each step is reduced to a [`Signature`]: its kind (viewed a file,
//! searched, edited, ran tests, ran another command, submitted), the file it looked at or
//! changed (its path in the repository, [`crate::analysis::paths::repo_relative`]:
//! `/testbed/src/a.py` and `src/a.py` are one file, `src/utils.py` and `lib/utils.py` two; a
//! bare name, `utils.py`, is the one file of that name with a folder the runs name, when there
//! is exactly one: [`unify_files`]; the tool that did it, `open`, `cat` or an editor, does not
//! matter), or, naming no file, the command word and target
//! of its action as [`crate::analysis::brief`] reads them. Two steps are *the same*
//! when their signatures are equal, and *similar* when they are of one kind and name the same
//! file, or (no file) run the same command word. Rows of the alignment pair same or similar
//! steps; a step with no counterpart leaves a gap in the other runs' columns.
//!
//! **The alignment** ([`align`]): a Myers diff (the `similar` crate, its heuristic mode, whose
//! work is bounded by the input's size, never by a clock) over the signatures finds the steps
//! that are the same, in order; between two such anchors the remaining steps are paired by a
//! weighted longest common subsequence over the similarity (Needleman-Wunsch with free gaps),
//! within a band around the diagonal when the block is large. The same runs give the same rows
//! on any machine. More than two runs are aligned progressively: each further run against the
//! rows so far, in an order of the runs' own (longest first), so the rows do not depend on the
//! order the runs were given in.
//!
//! **Divergences** ([`divergences`]): a stretch of rows where the runs do not all take the same
//! step, and one of them looks at or changes something (a view, a search, an edit, a test run).
//! Its first row is the divergence point.

pub(crate) mod align;
pub mod patches;
pub mod signature;

pub use align::{align, pair};
pub use patches::{FilePresence, HunkPresence, compare_patches};

pub use signature::{Kind, Row, SIMILAR, Signature, StepFacts, signature, similarity, unify_files};

use serde::Serialize;

/// A stretch of rows where the runs went different ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// The divergence point: the stretch's first row.
    pub row: usize,
    /// One past its last row.
    pub end: usize,
}

/// Whether every run took the same step on this row.
pub fn agreed(row: &[Option<usize>], runs: &[Vec<Signature>]) -> bool {
    let mut first: Option<&Signature> = None;
    for (cell, sigs) in row.iter().zip(runs) {
        let Some(sig) = cell.and_then(|i| sigs.get(i)) else { return false };
        match first {
            None => first = Some(sig),
            Some(f) if f != sig => return false,
            Some(_) => {}
        }
    }
    true
}

/// The stretches of rows where the runs do not all take the same step and one of them looks at
/// or changes something, in order.
pub fn divergences(rows: &[Row], runs: &[Vec<Signature>]) -> Vec<Divergence> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut matters = false;
    for (i, row) in rows.iter().enumerate() {
        if agreed(row, runs) {
            if let Some(s) = start.take()
                && matters
            {
                out.push(Divergence { row: s, end: i });
            }
            matters = false;
            continue;
        }
        start.get_or_insert(i);
        matters |= row
            .iter()
            .zip(runs)
            .any(|(cell, sigs)| cell.and_then(|i| sigs.get(i)).is_some_and(|s| s.kind.looks_or_changes()));
    }
    if let Some(s) = start
        && matters
    {
        out.push(Divergence { row: s, end: rows.len() });
    }
    out
}

#[cfg(test)]
mod tests;
