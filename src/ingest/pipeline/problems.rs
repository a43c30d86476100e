//! The problems of an ingest, by kind: files that failed, content that was lost from files that
//! were read (lines, records or events skipped, a cut file's tail, replaced bytes and values),
//! and notes that lose nothing. Only failures and lost content change the exit status.
//!
//! Warnings are text (they are stored with their source and repeated when it is unchanged), so
//! their kind is told from the words every adapter uses; the tests below produce each kind from
//! the code that writes it, so a change of wording fails there.

use super::{Report, UnitResult};
use crate::error::IngestError;
use std::path::Path;

/// A kind of problem. Declared in the order the summary lists them (failures first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::EnumIter)]
pub enum ProblemKind {
    /// A file that could not be read at all (permissions, a dangling link, a FIFO).
    Unreadable,
    /// An input file (by its name) with nothing in it.
    Empty,
    /// Larger than a document read whole may be.
    TooLarge,
    /// Binary content in a file named as an input.
    Binary,
    /// Cut before its first complete step.
    Truncated,
    /// A trajectory (by its name) of no format trajan reads.
    UnknownFormat,
    /// Not readable as the format it has (broken JSON, a field of the wrong type).
    Malformed,
    /// The database refused the write.
    Database,
    /// A cut file: its complete steps were kept, the rest lost.
    TruncatedKept,
    /// JSON-lines lines that could not be read and were skipped.
    LineSkipped,
    /// Records, messages or events inside a file that could not be read and were skipped.
    PartSkipped,
    /// Bytes or values replaced (invalid UTF-8, NaN, numbers out of range, lone surrogates).
    Replaced,
    /// A remark that loses nothing (an evaluation marked as not run properly, an older schema).
    Note,
}

impl ProblemKind {
    /// The file failed: nothing of it was stored.
    pub fn is_failure(self) -> bool {
        self < ProblemKind::TruncatedKept
    }

    /// The kinds that are failures.
    pub fn iter_failures() -> impl Iterator<Item = ProblemKind> {
        use strum::IntoEnumIterator;
        ProblemKind::iter().filter(|k| k.is_failure())
    }

    /// Content of the file is not in the database as the file holds it. Failures too.
    pub fn loses_content(self) -> bool {
        self != ProblemKind::Note
    }

    /// The heading of the group in the summary.
    pub fn heading(self) -> &'static str {
        match self {
            ProblemKind::Unreadable => "could not be read",
            ProblemKind::Empty => "empty input files",
            ProblemKind::TooLarge => "too large to read",
            ProblemKind::Binary => "binary content in input files",
            ProblemKind::Truncated => "cut before their first complete step",
            ProblemKind::UnknownFormat => "trajectories of no known format",
            ProblemKind::Malformed => "not readable as their format",
            ProblemKind::Database => "database errors",
            ProblemKind::TruncatedKept => "cut mid-write (the complete steps were kept)",
            ProblemKind::LineSkipped => "JSON-lines lines skipped",
            ProblemKind::PartSkipped => "records, messages or events skipped",
            ProblemKind::Replaced => "bytes or values replaced",
            ProblemKind::Note => "notes",
        }
    }

    /// The kind of a failure.
    pub fn of_error(e: &IngestError) -> ProblemKind {
        match e {
            IngestError::Io { .. } => ProblemKind::Unreadable,
            IngestError::Empty { .. } => ProblemKind::Empty,
            IngestError::UnknownFormat { .. } => ProblemKind::UnknownFormat,
            IngestError::Store { .. } => ProblemKind::Database,
            IngestError::Parse { message, .. } => {
                if message.contains("is over the limit") {
                    ProblemKind::TooLarge
                } else if message.starts_with("binary content") {
                    ProblemKind::Binary
                } else if message.contains("the file is truncated at byte") {
                    ProblemKind::Truncated
                } else {
                    ProblemKind::Malformed
                }
            }
        }
    }

    /// The kind of a warning about the file at `path`.
    pub fn of_warning(path: &Path, warning: &str) -> ProblemKind {
        let prefix = format!("{}: ", path.display());
        let w = warning.strip_prefix(&prefix).unwrap_or(warning);
        let any = |parts: &[&str]| parts.iter().any(|p| w.contains(p));
        if any(NOTES) {
            ProblemKind::Note
        } else if any(&["invalid UTF-8 replaced", "read as null", "read as U+FFFD"]) {
            ProblemKind::Replaced
        } else if w.contains("truncated at byte") {
            ProblemKind::TruncatedKept
        } else if any(&["the line is skipped", "the line is not kept"]) {
            ProblemKind::LineSkipped
        } else if any(&["skipped", "ignored", "left empty", "left out", "keeps only"]) {
            ProblemKind::PartSkipped
        } else if w.starts_with("line ") {
            // A JSON-lines line that is not JSON, or not a record of the format.
            ProblemKind::LineSkipped
        } else {
            ProblemKind::PartSkipped
        }
    }
}

/// Warnings that lose nothing: how a verdict or a version was read.
const NOTES: &[&str] = &[
    "infra_failure is set",
    "read as version 2",
    "line after `Ran N tests`",
    "have no prompt (aborted at the banner)",
    "no stage ran for",
    "an evaluation without a run",
    "a trailing comma before a closing bracket, dropped",
    "only the resolved ids are read",
    "the evaluation timed out",
    "stored as written, not resolved",
];

/// One problem: its kind, the file, and the message (which names the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem<'a> {
    pub kind: ProblemKind,
    pub path: &'a Path,
    pub message: String,
}

impl Report {
    /// Every problem, in the order of the results (failures and warnings of each file).
    pub fn problems(&self) -> Vec<Problem<'_>> {
        let mut out = Vec::new();
        for r in &self.results {
            match r {
                UnitResult::Failed(e) => {
                    out.push(Problem { kind: ProblemKind::of_error(e), path: e.path(), message: e.to_string() })
                }
                UnitResult::Ingested { path, warnings, .. } | UnitResult::Unchanged { path, warnings } => {
                    out.extend(warnings.iter().map(|w| Problem {
                        kind: ProblemKind::of_warning(path, w),
                        path,
                        message: w.clone(),
                    }))
                }
                UnitResult::Skipped { .. } => {}
            }
        }
        out
    }

    /// A file failed, or lost content: the exit status says so.
    pub fn has_problems(&self) -> bool {
        self.problems().iter().any(|p| p.kind.loses_content())
    }
}

#[cfg(test)]
mod tests;
