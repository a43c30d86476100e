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

pub use align::{align, pair};
pub use patches::{FilePresence, HunkPresence, compare_patches};

use crate::analysis::brief::brief;
use crate::analysis::paths::repo_relative;
use crate::model::StepFlags;
use serde::Serialize;

/// What a step did, for alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Looked at a file (`open`, `view`, `cat`, `sed -n`...).
    View,
    /// Looked for something (`grep`, `find`, `search_dir`, `ls`).
    Search,
    /// Changed a file (an edit tool, a shell write).
    Edit,
    /// Ran tests.
    Test,
    /// Any other command.
    Run,
    /// Ended the run (`submit`, `finish`).
    Submit,
}

impl Kind {
    /// Steps that look at or change something: where a divergence matters.
    pub fn looks_or_changes(self) -> bool {
        matches!(self, Kind::View | Kind::Search | Kind::Edit | Kind::Test)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::View => "view",
            Kind::Search => "search",
            Kind::Edit => "edit",
            Kind::Test => "test",
            Kind::Run => "run",
            Kind::Submit => "submit",
        }
    }
}

/// A step reduced to what it did: equal signatures are the same step.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Signature {
    pub kind: Kind,
    /// The file looked at or changed: its path in the repository (or a bare name).
    pub file: Option<String>,
    /// The command word (`grep`, `python`), when the step names no file.
    pub command: String,
    /// Its main argument when it is not the file (a search pattern, a script).
    pub target: Option<String>,
}

/// What the alignment reads of one step.
#[derive(Debug, Clone, Copy)]
pub struct StepFacts<'a> {
    /// The tool the format names (`bash`, `str_replace_editor`, `finish`), if any.
    pub tool: Option<&'a str>,
    /// The action's first line.
    pub head: &'a str,
    pub flags: StepFlags,
    /// A file the step's edits changed, if it edited one.
    pub edited: Option<&'a str>,
}

const VIEW: &[&str] =
    &["open", "goto", "view", "cat", "nl", "head", "tail", "less", "more", "scroll_up", "scroll_down", "bat"];
const SEARCH: &[&str] =
    &["grep", "rg", "ag", "find", "find_file", "search_dir", "search_file", "ls", "tree", "fd", "locate", "egrep"];
const EDIT: &[&str] = &["edit", "create", "str_replace", "insert", "undo_edit", "append", "touch"];
const TEST: &[&str] = &["pytest", "tox", "nosetests", "unittest", "test", "runtests.py"];
const SUBMIT: &[&str] = &["submit", "finish", "exit", "task_complete"];

/// The repository path of a file a step names (`/testbed/src/a.py` → `src/a.py`).
fn file_path(path: &str) -> String {
    repo_relative(path, None)
}

/// Bare file names (`utils.py`, no folder) made the path of the one file of that name the
/// runs name with a folder (`src/utils.py`), so that a run that opened `utils.py` from the
/// repository's folder and one that opened `/testbed/src/utils.py` took the same step. A bare
/// name stays bare when no such path is named, or more than one (`src/utils.py` and
/// `lib/utils.py`: which one it was, the runs do not tell).
pub fn unify_files(runs: &mut [Vec<Signature>]) {
    use std::collections::HashMap;
    let mut by_name: HashMap<String, Option<String>> = HashMap::new();
    for file in runs.iter().flatten().filter_map(|s| s.file.as_ref()) {
        if let Some((_, name)) = file.rsplit_once('/') {
            by_name
                .entry(name.to_string())
                .and_modify(|one| {
                    if one.as_deref() != Some(file.as_str()) {
                        *one = None;
                    }
                })
                .or_insert_with(|| Some(file.clone()));
        }
    }
    for sig in runs.iter_mut().flatten() {
        if let Some(file) = sig.file.as_mut().filter(|f| !f.contains('/'))
            && let Some(Some(path)) = by_name.get(file.as_str())
        {
            *file = path.clone();
        }
    }
}

/// The signature of one step.
pub fn signature(step: &StepFacts<'_>) -> Signature {
    let b = brief(step.head);
    let command = b.command.clone();
    let tool = step.tool.unwrap_or_default();
    let is = |words: &[&str]| words.contains(&command.as_str()) || words.contains(&tool);
    let kind = if is(SUBMIT) {
        Kind::Submit
    } else if step.flags.edit || step.edited.is_some() || is(EDIT) {
        Kind::Edit
    } else if step.flags.test_run || is(TEST) {
        Kind::Test
    } else if is(VIEW) || (command == "sed" && step.head.contains(" -n")) {
        Kind::View
    } else if is(SEARCH) || (command == "git" && b.target.as_deref() == Some("grep")) {
        Kind::Search
    } else {
        Kind::Run
    };
    let file = match kind {
        Kind::Edit => step.edited.or(b.path.as_deref()).map(file_path),
        Kind::View | Kind::Test => b.path.as_deref().map(file_path),
        _ => None,
    };
    let target = match kind {
        Kind::Search | Kind::Run => b.target.clone(),
        _ => None,
    };
    // A file names the step: how it was viewed or edited (`open`, `cat`, `str_replace_editor`,
    // `edit 5:6`) is the agent's tool set, not what it did.
    let command = if file.is_some() { String::new() } else { command };
    Signature { kind, file, command, target }
}

/// How alike two steps are: 1 the same step, 0.5 or more similar (they may share a row),
/// below that different.
pub fn similarity(a: &Signature, b: &Signature) -> f64 {
    if a == b {
        return 1.0;
    }
    if a.kind != b.kind {
        return 0.0;
    }
    match (&a.file, &b.file) {
        (Some(x), Some(y)) if x == y => 0.8,
        (Some(_), Some(_)) => 0.2,
        _ if a.command == b.command && !a.command.is_empty() => 0.6,
        _ => 0.2,
    }
}

/// Steps at least this similar may share a row.
pub const SIMILAR: f64 = 0.5;

/// One row of an alignment: per run, the position of its step in the run's step list, or a gap.
pub type Row = Vec<Option<usize>>;

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
