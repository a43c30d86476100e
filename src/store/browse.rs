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
    /// The latest label of each source and rater (heuristic, LLM, reviewers).
    pub labels: Vec<crate::store::labels::LabelRow>,
    /// Evaluations of the instance the run did not get, each with why.
    pub unjoined: Vec<super::Unjoined>,
    /// Reviewers' notes on its steps, by step.
    pub notes: Vec<super::notes::NoteRow>,
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
    pub kind: crate::model::EditKind,
    pub status: crate::model::EditStatus,
    pub lint_codes: Vec<String>,
    /// Reconstructed (shell) edits: how sure their diff is.
    pub certainty: Option<crate::model::Certainty>,
    /// The step whose `git checkout`/`restore`/`stash` undid it.
    pub undone_at: Option<i64>,
}

impl EditLine {
    /// Rejected by the linter or refused by the tool: not applied.
    pub fn is_rejected(&self) -> bool {
        self.status.is_rejection()
    }

    /// A reconstructed edit that changed nothing (its pattern or address matched no line).
    pub fn changed_nothing(&self) -> bool {
        self.certainty == Some(crate::model::Certainty::Unchanged)
    }
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
    /// The shell command that made it.
    pub command: Option<String>,
    pub checked_by: Option<crate::model::CheckedBy>,
    /// Contradicted: what the later view showed, as a diff from the reconstructed lines.
    pub shown: Option<String>,
    /// Final patch: the steps that made each hunk.
    pub hunks: Vec<crate::model::HunkSource>,
    /// The diff shows the lines the run had shown; others may have changed too.
    pub partial: bool,
}

use super::{Store, texts};

/// The columns of an [`EditLine`], in the order [`edit_line`] reads them.
const EDIT_LINE: &str = "id, step_idx, path, kind, status, lint_codes, certainty, undone_at";
/// The edits of run `?1`, or of its step `?2` when not null, in step order (final patch last).
const EDITS_OF: &str = "WHERE run_id = ?1 AND (?2 IS NULL OR step_idx = ?2) ORDER BY step_idx IS NULL, step_idx, id";

fn edit_line(r: &rusqlite::Row<'_>) -> rusqlite::Result<EditLine> {
    let codes: Option<String> = r.get(5)?;
    Ok(EditLine {
        id: r.get(0)?,
        step: r.get(1)?,
        path: r.get(2)?,
        kind: r.get(3)?,
        status: r.get(4)?,
        lint_codes: codes.map(|c| c.split(',').map(str::to_string).collect()).unwrap_or_default(),
        certainty: r.get(6)?,
        undone_at: r.get(7)?,
    })
}
use crate::error::StoreError;
use crate::model::StepFlags;
use rusqlite::params;

impl Store {
    pub fn count_runs(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?)
    }

    /// Everything the run view shows except step bodies.
    pub fn run_data(&self, id: i64) -> Result<RunData, StoreError> {
        let summary = self.run_summary(id)?;
        let (submission, outcome_id, tests_id): (Option<String>, Option<i64>, Option<i64>) = self.conn.query_row(
            "SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let steps = self.step_lines(id, 0)?;
        Ok(RunData {
            edits: self.edit_lines(id, None)?,
            outcome: outcome_id.map(|o| self.outcome(o, tests_id)).transpose()?,
            task: self.task(&summary.instance_id)?,
            labels: self.labels(Some(id), true)?,
            unjoined: super::link::unjoined(&self.conn, id)?,
            notes: self.notes(Some(id))?,
            steps,
            submission,
            summary,
        })
    }

    /// One line per step of a run, from step `from` on (a run being read grows).
    pub fn step_lines(&self, run_id: i64, from: usize) -> Result<Vec<StepLine>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT idx, tool, flags, obs_chars, action_head, open_file, working_dir
             FROM steps WHERE run_id = ?1 AND idx >= ?2 ORDER BY idx",
        )?;
        let steps = stmt
            .query_map(params![run_id, from as i64], |r| {
                Ok(StepLine {
                    index: r.get(0)?,
                    tool: r.get(1)?,
                    flags: StepFlags::from_bits(r.get(2)?),
                    obs_chars: r.get(3)?,
                    action_head: r.get(4)?,
                    open_file: r.get(5)?,
                    working_dir: r.get(6)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(steps)
    }

    /// The edits steps `from` to `until` (excluded) made, without their texts, in step order.
    pub fn step_edit_lines(&self, run_id: i64, from: usize, until: usize) -> Result<Vec<EditLine>, StoreError> {
        let sql = format!(
            "SELECT {EDIT_LINE} FROM edits WHERE run_id = ?1 AND step_idx >= ?2 AND step_idx < ?3 ORDER BY step_idx, id"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![run_id, from as i64, until as i64], edit_line)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The edits of a run (or of one step), without their texts.
    fn edit_lines(&self, run_id: i64, step: Option<i64>) -> Result<Vec<EditLine>, StoreError> {
        let sql = format!("SELECT {EDIT_LINE} FROM edits {EDITS_OF}");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![run_id, step], edit_line)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The edits of a run (or of one step) with their texts and diffs (decompressed here, for
    /// these edits only).
    pub(super) fn edit_texts(&self, run_id: i64, step: Option<i64>) -> Result<Vec<EditText>, StoreError> {
        let sql =
            format!("SELECT {EDIT_LINE}, command, checked_at, partial, {} FROM edits {EDITS_OF}", texts::EDIT_TEXTS);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt
            .query_map(params![run_id, step], |r| {
                let edit = EditText {
                    line: edit_line(r)?,
                    old_text: None,
                    new_text: None,
                    diff: None,
                    command: r.get(8)?,
                    checked_by: r.get::<_, Option<i64>>(9)?.map(crate::model::CheckedBy::from_column),
                    shown: None,
                    hunks: Vec::new(),
                    partial: r.get::<_, Option<i64>>(10)?.is_some_and(|p| p != 0),
                };
                Ok((edit, texts::EditPlace::from_row(r, 11)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut chunks = texts::ChunkCache::default();
        rows.into_iter()
            .map(|(mut edit, place)| {
                let t = chunks.edit(&self.conn, place)?;
                edit.old_text = t.old_text;
                edit.new_text = t.new_text;
                edit.diff = t.diff;
                edit.shown = t.shown;
                edit.hunks = t.hunks.and_then(|h| serde_json::from_str(&h).ok()).unwrap_or_default();
                Ok(edit)
            })
            .collect()
    }

    /// One step in full, with its edits' texts and diffs.
    pub fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError> {
        let step = self
            .steps(run_id, Some(index))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NoSuchRun(format!("{run_id} step {index}")))?;
        Ok(StepBody { run_id, step, edits: self.edit_texts(run_id, Some(index))? })
    }

    /// Steps of one run whose thought, action or observation contain the phrase.
    pub fn search_run(&self, run_id: i64, phrase: &str) -> Result<Vec<i64>, StoreError> {
        let Some(fts_query) = super::read::fts_phrase(phrase) else { return Ok(Vec::new()) };
        self.ensure_search_index()?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.idx FROM {} JOIN steps s ON s.id = m.step_id WHERE s.run_id = ?2 ORDER BY s.idx",
            self.matched_steps()
        ))?;
        let rows = stmt.query_map(params![fts_query, run_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Edit kinds and verdicts are stored by name.
macro_rules! from_name_column {
    ($($t:ty),*) => {$(
        impl rusqlite::types::FromSql for $t {
            fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                value.as_str()?.parse().map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
            }
        }
    )*};
}
from_name_column!(crate::model::EditKind, crate::model::EditStatus, crate::model::Certainty);
