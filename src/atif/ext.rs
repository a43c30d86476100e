//! What trajan keeps under `extra.trajan` of a trajectory it writes: the fields of a run and of a
//! step that ATIF has no place for, or that reading the standard fields would not give back. A
//! key present overrides what the standard fields say (`null` clears it); a key absent leaves it.
//! A message of the history keeps its role (`role`) and its extra fields (`extra`, JSON).

use crate::model::{CheckedBy, Edit, EditKind, EditStatus, EditTrace, HunkSource};
use serde::{Deserialize, Serialize};

/// The key under `extra`.
pub const KEY: &str = "trajan";

/// An edit of the run (`extra.trajan.edits`), with its verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EditExt {
    pub step: Option<usize>,
    pub path: String,
    pub kind: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lint_codes: Vec<String>,
    /// A reconstructed shell edit: how sure its diff is, and the rest of its trace
    /// (`model::EditTrace`); the final patch: the steps that made each hunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certainty: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The step whose view checked it, or -1: the submitted patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_at: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<HunkSource>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl EditExt {
    pub fn from_edit(e: &Edit) -> EditExt {
        EditExt {
            step: e.step,
            path: e.path.clone(),
            kind: e.kind.name().to_string(),
            status: e.status.name().to_string(),
            old_text: e.old_text.clone(),
            new_text: e.new_text.clone(),
            diff: e.diff.clone(),
            lint_codes: e.lint_codes.clone(),
            certainty: e.trace.certainty.map(|c| c.name().to_string()),
            command: e.trace.command.clone(),
            checked_at: e.trace.checked_by.map(CheckedBy::to_column),
            shown: e.trace.shown.clone(),
            undone_at: e.trace.undone_at,
            hunks: e.trace.hunks.clone(),
            partial: e.trace.partial,
        }
    }

    /// An unknown kind or status reads as a final patch / unknown verdict rather than failing.
    pub fn into_edit(self) -> Edit {
        Edit {
            step: self.step,
            path: self.path,
            kind: self.kind.parse().unwrap_or(EditKind::FinalPatch),
            status: self.status.parse().unwrap_or(EditStatus::Unknown),
            old_text: self.old_text,
            new_text: self.new_text,
            diff: self.diff,
            lint_codes: self.lint_codes,
            trace: EditTrace {
                certainty: self.certainty.and_then(|c| c.parse().ok()),
                command: self.command,
                checked_by: self.checked_at.map(CheckedBy::from_column),
                shown: self.shown,
                undone_at: self.undone_at,
                hunks: self.hunks,
                partial: self.partial,
                ..EditTrace::default()
            },
        }
    }
}
