//! Each step reduced to a [`Signature`] (its kind, the file it named, its command word) and how
//! alike two signatures are: what the alignment and the divergences read (see the parent
//! module's documentation).

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
