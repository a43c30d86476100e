//! Reads for the exports: a run whole (`export run`: history, metadata, edits with their texts)
//! and the tables `export steps|edits` write, a row at a time (`export runs` writes
//! [`crate::store::read::RunRow`]s).

use crate::error::StoreError;
use crate::model::{Edit, EditTrace, Message, StepFlags};
use crate::store::browse::EditText;
use crate::store::cells::Cells;
use crate::store::texts::{self, Texts};

/// What `run_detail` leaves out of a run and an export needs.
#[derive(Debug, Clone, Default)]
pub struct RunRest {
    /// The conversation messages that are not steps (system prompt, demonstrations, task).
    pub history: Vec<Message>,
    pub metadata: Option<String>,
    pub best_attempt: Option<bool>,
    /// Every edit with its texts, in order.
    pub edits: Vec<Edit>,
}

/// One row of `export steps`.
#[derive(Debug, Clone)]
pub struct StepTableRow {
    pub run_id: i64,
    pub instance_id: String,
    pub step: i64,
    pub tool: Option<String>,
    pub flags: StepFlags,
    pub observation_chars: i64,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub execution_time: Option<f64>,
    pub timestamp: Option<String>,
    pub thought: String,
    pub action: String,
    pub observation: String,
}

/// One row of `export edits`.
#[derive(Debug, Clone)]
pub struct EditTableRow {
    pub run_id: i64,
    pub instance_id: String,
    pub step: Option<i64>,
    pub path: String,
    pub kind: String,
    pub status: String,
    pub lint_codes: String,
    pub diff: Option<String>,
}

/// A stored edit (read as the run view reads it) as the model's edit, for `export run`.
pub fn edit_of(e: EditText) -> Edit {
    let line = e.line;
    Edit {
        step: line.step.and_then(|s| usize::try_from(s).ok()),
        path: line.path,
        kind: line.kind,
        status: line.status,
        old_text: e.old_text,
        new_text: e.new_text,
        diff: e.diff,
        lint_codes: line.lint_codes.into_iter().filter(|c| !c.is_empty()).collect(),
        trace: EditTrace {
            certainty: line.certainty,
            command: e.command,
            checked_by: e.checked_by,
            undone_at: line.undone_at.and_then(|s| usize::try_from(s).ok()),
            partial: e.partial,
            shown: e.shown,
            hunks: e.hunks,
            ..EditTrace::default()
        },
    }
}

/// The columns of a [`StepTableRow`] (steps `s`, runs `r`, step texts `t`), texts last.
pub const STEP_TABLE_ROW: &str = "s.run_id, r.instance_id, s.idx, s.tool, s.flags, s.obs_chars, s.tokens_in,
    s.tokens_out, s.execution_time, s.timestamp, t.thought, t.action, t.observation, t.response, t.args,
    t.chunk_id, t.chunk_at";

impl StepTableRow {
    /// A row of the [`STEP_TABLE_ROW`] columns, its texts read through `cache`.
    pub fn from_row(
        r: &dyn Cells,
        cache: &mut texts::ChunkCache,
        chunks: &dyn texts::Chunks,
    ) -> Result<StepTableRow, StoreError> {
        let Texts { thought, action, observation, .. } = texts::of_row(r, 10, cache, chunks)?;
        Ok(StepTableRow {
            run_id: r.int(0)?,
            instance_id: r.text(1)?,
            step: r.int(2)?,
            tool: r.opt_text(3)?,
            flags: StepFlags::from_bits(r.int(4)?),
            observation_chars: r.int(5)?,
            tokens_in: r.opt_int(6)?,
            tokens_out: r.opt_int(7)?,
            execution_time: r.opt_real(8)?,
            timestamp: r.opt_text(9)?,
            thought,
            action,
            observation,
        })
    }
}

/// The columns of an [`EditTableRow`] (edits `e`, runs `r`), the texts as the row holds them last.
pub const EDIT_TABLE_ROW: &str = "e.run_id, r.instance_id, e.step_idx, e.path, e.kind, e.status, e.lint_codes,
    e.old_text, e.new_text, e.diff, e.shown, e.hunks, e.chunk_id, e.chunk_at";

impl EditTableRow {
    /// A row of the [`EDIT_TABLE_ROW`] columns, and where its texts are.
    pub fn from_row(r: &dyn Cells) -> Result<(EditTableRow, texts::EditPlace), StoreError> {
        let row = EditTableRow {
            run_id: r.int(0)?,
            instance_id: r.text(1)?,
            step: r.opt_int(2)?,
            path: r.text(3)?,
            kind: r.text(4)?,
            status: r.text(5)?,
            lint_codes: r.opt_text(6)?.unwrap_or_default(),
            diff: None,
        };
        Ok((row, texts::edit_place(r, 7)?))
    }
}
