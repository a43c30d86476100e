//! The TUI's reads (one screen at a time) from SQLite.

use super::{Sqlite, collect};
use crate::error::StoreError;
use crate::store::backend::{Browse, Labels, Notes, Reads};
use crate::store::browse::{EDIT_LINE, EDIT_TEXT, EditLine, EditText, RunData, STEP_LINE, StepBody, StepLine};
use crate::store::read::{RunSummary, SUMMARY_SELECT};
use crate::store::texts;
use rusqlite::params;

/// The edits of run `?1`, or of its step `?2` when not null, in step order (final patch last).
/// The edits of run `?1`, or of its step `?2`: one statement each, so that one step's edits are
/// found by the index on both columns (with `?2 IS NULL OR step_idx = ?2` SQLite reads every
/// edit of the run).
fn edits_of(step: Option<i64>) -> &'static str {
    match step {
        Some(_) => "WHERE run_id = ?1 AND step_idx = ?2 ORDER BY id",
        None => "WHERE run_id = ?1 AND ?2 IS NULL ORDER BY step_idx IS NULL, step_idx, id",
    }
}

impl Browse for Sqlite {
    /// Everything the run view shows except step bodies.
    fn run_data(&self, id: i64) -> Result<RunData, StoreError> {
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
            notes: self.notes(Some(id))?,
            unjoined: super::link::unjoined(&self.conn, id)?,
            steps,
            submission,
            summary,
        })
    }

    /// One line per step of a run, from step `from` on (a run being read grows).
    fn step_lines(&self, run_id: i64, from: usize) -> Result<Vec<StepLine>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {STEP_LINE} FROM steps WHERE run_id = ?1 AND idx >= ?2 ORDER BY idx"))?;
        collect(&mut stmt, params![run_id, from as i64], StepLine::from_row)
    }

    /// The edits steps `from` to `until` (excluded) made, without their texts, in step order.
    fn step_edit_lines(&self, run_id: i64, from: usize, until: usize) -> Result<Vec<EditLine>, StoreError> {
        let sql = format!(
            "SELECT {EDIT_LINE} FROM edits WHERE run_id = ?1 AND step_idx >= ?2 AND step_idx < ?3 ORDER BY step_idx, id"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        collect(&mut stmt, params![run_id, from as i64, until as i64], EditLine::from_row)
    }

    /// One step in full, with its edits' texts and diffs.
    fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError> {
        let step = self
            .steps(run_id, Some(index), Some(texts::SHOWN))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NoSuchRun(format!("{run_id} step {index}")))?;
        Ok(StepBody { run_id, step, edits: self.edit_texts(run_id, Some(index))? })
    }

    /// The instance of run `base` and its other runs, by id: what the picker offers.
    fn runs_to_compare_with(&self, base: i64) -> Result<(String, Vec<RunSummary>), StoreError> {
        let instance = self.run_summary(base)?.instance_id;
        let sql = format!("{SUMMARY_SELECT} WHERE r.instance_id = ?1 AND r.id != ?2 ORDER BY r.id");
        let mut stmt = self.conn.prepare(&sql)?;
        let runs = collect(&mut stmt, params![instance, base], RunSummary::from_row)?;
        Ok((instance, runs))
    }
}

impl Sqlite {
    /// The edits of a run (or of one step), without their texts.
    fn edit_lines(&self, run_id: i64, step: Option<i64>) -> Result<Vec<EditLine>, StoreError> {
        let sql = format!("SELECT {EDIT_LINE} FROM edits {}", edits_of(step));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        collect(&mut stmt, params![run_id, step], EditLine::from_row)
    }

    /// The edits of a run (or of one step) with their texts and diffs (decompressed here, for
    /// these edits only).
    pub(super) fn edit_texts(&self, run_id: i64, step: Option<i64>) -> Result<Vec<EditText>, StoreError> {
        let sql = format!("SELECT {EDIT_TEXT} FROM edits {}", edits_of(step));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = collect(&mut stmt, params![run_id, step], EditText::from_row)?;
        let mut cache = texts::ChunkCache::default();
        rows.into_iter().map(|(edit, place)| edit.filled(place, &mut cache, &self.conn)).collect()
    }
}
