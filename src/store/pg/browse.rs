//! The TUI's reads (one screen at a time) from PostgreSQL.

use super::read::edits_of;
use super::{Cells, Pg, enc};
use crate::error::StoreError;
use crate::store::backend::{Browse, Labels, Notes, Reads};
use crate::store::browse::{EDIT_LINE, EditLine, RunData, STEP_LINE, StepBody, StepLine};
use crate::store::read::StepRow;
use crate::store::read::{RunSummary, SUMMARY_SELECT};
use crate::store::texts;
use std::cell::RefCell;

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
            &format!("SELECT {STEP_LINE} FROM steps WHERE run_id = $1 AND idx >= $2 ORDER BY idx"),
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

    /// One round trip for most keys: the step, its chunk's body unless this connection holds
    /// it (`chunks.rs`), and whether it has edits (their texts are a second query only then).
    fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError> {
        let held = self.chunks.borrow().ids();
        let r = self
            .opt(
                "SELECT s.idx, s.tool, s.execution_time, s.tokens_in, s.tokens_out, s.timestamp, s.open_file,
                        s.working_dir, s.flags, s.obs_chars,
                        t.thought, t.action, t.observation, t.response, t.args, t.chunk_id, t.chunk_at,
                        CASE WHEN t.chunk_id = ANY($3) THEN NULL ELSE c.body END,
                        EXISTS (SELECT 1 FROM edits e WHERE e.run_id = s.run_id AND e.step_idx = s.idx)
                 FROM steps s JOIN step_texts t ON t.step_id = s.id LEFT JOIN text_chunks c ON c.id = t.chunk_id
                 WHERE s.run_id = $1 AND s.idx = $2",
                &[&run_id, &index, &held],
            )?
            .ok_or_else(|| StoreError::NoSuchRun(format!("{run_id} step {index}")))?;
        let body: Option<Vec<u8>> = r.try_get(17).map_err(super::column)?;
        let chunks = Given { pg: self, id: r.opt_int(15)?, body: RefCell::new(body) };
        if let (Some(id), Some(body)) = (chunks.id, chunks.body.borrow().as_deref()) {
            self.chunks.borrow_mut().keep(id, body);
        }
        let step = StepRow::from_row(&r, texts::within_of_row(&r, 10, &chunks, texts::SHOWN)?)?;
        let edits = if r.flag(18)? { self.edit_texts(run_id, Some(index))? } else { Vec::new() };
        Ok(StepBody { run_id, step, edits })
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

/// The server's chunks, one of which (`id`) a query already brought.
struct Given<'p> {
    pg: &'p Pg,
    id: Option<i64>,
    body: RefCell<Option<Vec<u8>>>,
}

impl texts::Chunks for Given<'_> {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        if self.id == Some(chunk_id)
            && let Some(body) = self.body.borrow_mut().take()
        {
            return Ok(body);
        }
        texts::Chunks::chunk(self.pg, chunk_id)
    }
}
