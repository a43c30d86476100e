//! The TUI's reads (one screen at a time), on either store.

use super::read::{edit_texts, edits_of, outcome, steps, task};
use super::{Sql, args};
use crate::error::StoreError;
use crate::store::backend::{Browse, Labels, Notes, Reads};
use crate::store::browse::{EDIT_LINE, EditLine, RunData, STEP_LINE, StepBody, StepLine};
use crate::store::read::{RunSummary, SUMMARY_SELECT};
use crate::store::texts;

impl<S: Sql> Browse for S {
    fn run_data(&self, id: i64) -> Result<RunData, StoreError> {
        let summary = self.run_summary(id)?;
        let (submission, outcome_id, tests_id) =
            self.one("SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = ?1", &args![id], |r| {
                Ok((r.opt_text(0)?, r.opt_int(1)?, r.opt_int(2)?))
            })?;
        Ok(RunData {
            edits: self.rows(
                &format!("SELECT {EDIT_LINE} FROM edits {}", edits_of(None)),
                &args![id, None::<i64>],
                EditLine::from_row,
            )?,
            outcome: outcome_id.map(|o| outcome(self, o, tests_id)).transpose()?,
            task: task(self, &summary.instance_id)?,
            labels: self.labels(Some(id), true)?,
            notes: self.notes(Some(id))?,
            unjoined: super::link::unjoined(self, id)?,
            steps: self.step_lines(id, 0)?,
            submission,
            summary,
        })
    }

    fn step_lines(&self, run_id: i64, from: usize) -> Result<Vec<StepLine>, StoreError> {
        self.rows(
            &format!("SELECT {STEP_LINE} FROM steps WHERE run_id = ?1 AND idx >= ?2 ORDER BY idx"),
            &args![run_id, from as i64],
            StepLine::from_row,
        )
    }

    fn step_edit_lines(&self, run_id: i64, from: usize, until: usize) -> Result<Vec<EditLine>, StoreError> {
        self.rows(
            &format!(
                "SELECT {EDIT_LINE} FROM edits WHERE run_id = ?1 AND step_idx >= ?2 AND step_idx < ?3 ORDER BY step_idx, id"
            ),
            &args![run_id, from as i64, until as i64],
            EditLine::from_row,
        )
    }

    fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError> {
        let (step, edited) =
            self.shown_step(run_id, index)?.ok_or_else(|| StoreError::NoSuchRun(format!("{run_id} step {index}")))?;
        let edits = if edited { edit_texts(self, run_id, Some(index))? } else { Vec::new() };
        Ok(StepBody { run_id, step, edits })
    }

    fn runs_to_compare_with(&self, base: i64) -> Result<(String, Vec<RunSummary>), StoreError> {
        let instance = self.run_summary(base)?.instance_id;
        let runs = self.rows(
            &format!("{SUMMARY_SELECT} WHERE r.instance_id = ?1 AND r.id != ?2 ORDER BY r.id"),
            &args![&instance, base],
            RunSummary::from_row,
        )?;
        Ok((instance, runs))
    }
}

/// Step `index` of a run with its texts within [`texts::SHOWN`], and whether it may have edits:
/// [`Sql::shown_step`] where the backend has nothing faster.
pub(in crate::store) fn shown_step<S: Sql>(
    sql: &S,
    run_id: i64,
    index: i64,
) -> Result<Option<(crate::store::read::StepRow, bool)>, StoreError> {
    Ok(steps(sql, run_id, Some(index), Some(texts::SHOWN))?.into_iter().next().map(|step| (step, true)))
}
