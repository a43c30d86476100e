//! Reads for the TUI: what one screen needs, no more.

use crate::store::read::{OutcomeRow, RunSummary, TaskRow};

/// A run as the run view needs it: its summary, one line per step, the edits without their
/// texts, outcome and task. Step bodies are loaded one at a time ([`StepBody`]).
#[derive(Debug, Clone)]
pub struct RunData {
    pub summary: RunSummary,
    pub steps: Vec<StepLine>,
    pub edits: Vec<EditLine>,
    pub outcome: Option<OutcomeRow>,
    pub task: Option<TaskRow>,
    pub submission: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub index: i64,
    pub tool: Option<String>,
    pub flags: crate::model::StepFlags,
    pub obs_chars: i64,
    /// First line of the action, at most 200 characters (raw; sanitized when drawn).
    pub action_head: String,
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditLine {
    pub id: i64,
    pub step: Option<i64>,
    pub path: String,
    pub kind: String,
    pub status: String,
    pub lint_codes: Vec<String>,
}

/// One step in full, with the edits it made (texts and diffs).
#[derive(Debug, Clone)]
pub struct StepBody {
    pub run_id: i64,
    pub step: crate::store::read::StepRow,
    pub edits: Vec<EditText>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditText {
    pub line: EditLine,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    pub diff: Option<String>,
}
