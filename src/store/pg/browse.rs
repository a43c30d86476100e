//! The TUI's reads (one screen at a time) from PostgreSQL.

use super::read::edits_of;
use super::{Cells, Pg, enc};
use crate::error::StoreError;
use crate::store::backend::{Browse, Labels, Notes, Reads};
use crate::store::browse::{EDIT_LINE, EditLine, RunData, StepBody, StepLine};
use crate::store::read::{RunSummary, SUMMARY_SELECT};

impl Browse for Pg {
    fn run_data(&self, id: i64) -> Result<RunData, StoreError> {
        let summary = self.run_summary(id)?;
        let r = self.one("SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = $1", &[&id])?;
        let edits = self.rows(&format!("SELECT {EDIT_LINE} FROM edits {}", edits_of(None)), &[&id, &None::<i64>])?;
        Ok(RunData {
            edits: edits.iter().map(|r| EditLine::from_row(r)).collect::<Result<_, _>>()?,
            outcome: r.opt_int(1)?.map(|o| self.outcome(o, r.opt_int(2)?)).transpose()?,
            task: self.task(&summary.instance_id)?,
            labels: self.labels(Some(id), true)?,
            notes: self.notes(Some(id))?,
            unjoined: super::link::unjoined(self, id)?,
            steps: self.step_lines(id, 0)?,
            submission: r.opt_text(0)?,
            summary,
        })
    }

    fn step_lines(&self, run_id: i64, from: usize) -> Result<Vec<StepLine>, StoreError> {
        self.rows(
            "SELECT idx, tool, flags, obs_chars, action_head, open_file, working_dir
             FROM steps WHERE run_id = $1 AND idx >= $2 ORDER BY idx",
            &[&run_id, &(from as i64)],
        )?
        .iter()
        .map(|r| StepLine::from_row(r))
        .collect()
    }

    fn step_edit_lines(&self, run_id: i64, from: usize, until: usize) -> Result<Vec<EditLine>, StoreError> {
        self.rows(
            &format!(
                "SELECT {EDIT_LINE} FROM edits WHERE run_id = $1 AND step_idx >= $2 AND step_idx < $3 ORDER BY step_idx, id"
            ),
            &[&run_id, &(from as i64), &(until as i64)],
        )?
        .iter()
        .map(|r| EditLine::from_row(r))
        .collect()
    }

    fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError> {
        let step = self
            .steps(run_id, Some(index))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NoSuchRun(format!("{run_id} step {index}")))?;
        Ok(StepBody { run_id, step, edits: self.edit_texts(run_id, Some(index))? })
    }

    fn runs_to_compare_with(&self, base: i64) -> Result<(String, Vec<RunSummary>), StoreError> {
        let instance = self.run_summary(base)?.instance_id;
        let runs = self
            .rows(
                &format!("{SUMMARY_SELECT} WHERE r.instance_id = $1 AND r.id != $2 ORDER BY r.id"),
                &[&enc(&instance), &base],
            )?
            .iter()
            .map(|r| RunSummary::from_row(r))
            .collect::<Result<_, _>>()?;
        Ok((instance, runs))
    }
}
