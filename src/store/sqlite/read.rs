//! The CLI's reads (the run list, a run in full, a step's prompt) from SQLite.

use super::{Sqlite, collect};
use crate::error::StoreError;
use crate::model::{FailedScope, Message};
use crate::store::backend::Reads;
use crate::store::read::{
    EditRow, OutcomeRow, RunDetail, RunFilter, RunRow, RunSummary, SUMMARY_SELECT, StepRow, TaskRow, one_run,
    prompt_of, prompt_row, task_row, test_case,
};
use crate::store::texts;
use crate::store::unmatched::{Joined, Orphan};
use rusqlite::{OptionalExtension, params};

impl Reads for Sqlite {
    fn count_runs(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?)
    }

    fn list_runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "{SUMMARY_SELECT} {} ORDER BY r.instance_id, r.id LIMIT ?1",
            match filter.failed {
                None => "",
                Some(FailedScope::Failed) => "WHERE o.resolved = 0",
                Some(FailedScope::WithUnknown) => "WHERE o.resolved IS NULL OR o.resolved = 0",
            }
        );
        let limit = filter.limit.map_or(-1, |l| l as i64);
        let mut stmt = self.conn.prepare(&sql)?;
        collect(&mut stmt, [limit], RunSummary::from_row)
    }

    fn run_row(&self, id: i64) -> Result<RunRow, StoreError> {
        let sql = format!("{SUMMARY_SELECT} WHERE r.id = ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        collect(&mut stmt, [id], RunRow::from_row)?.pop().ok_or_else(|| StoreError::NoSuchRun(id.to_string()))
    }

    /// A run named by numeric id, or by an instance id that names exactly one run.
    fn resolve_run(&self, query: &str) -> Result<i64, StoreError> {
        if let Ok(id) = query.parse::<i64>() {
            let found: Option<i64> =
                self.conn.query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0)).optional()?;
            if let Some(id) = found {
                return Ok(id);
            }
        }
        let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE instance_id = ?1 ORDER BY id")?;
        let ids: Vec<i64> = stmt.query_map([query], |r| r.get(0))?.collect::<Result<_, _>>()?;
        one_run(query, &ids)
    }

    fn runs_of_instance(&self, instance_id: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE instance_id = ?1 ORDER BY id")?;
        let ids = stmt.query_map([instance_id], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    fn runs_without_gold(&self) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id FROM runs r WHERE NOT EXISTS
               (SELECT 1 FROM tasks t WHERE t.instance_id = r.instance_id AND t.gold_patch IS NOT NULL)
             ORDER BY r.id",
        )?;
        let ids = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// A run with its steps (all, or only `only_step`), edits, outcome and task.
    fn run_detail(&self, id: i64, only_step: Option<i64>) -> Result<RunDetail, StoreError> {
        let RunRow { summary, usage } = self.run_row(id)?;
        let (mut detail, outcome_id, tests_id) = self.conn.query_row(
            "SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = ?1",
            [id],
            |r| {
                let detail = RunDetail {
                    submission: r.get(0)?,
                    outcome: None,
                    unjoined_evaluations: Vec::new(),
                    task: None,
                    edit_list: Vec::new(),
                    step_list: Vec::new(),
                    summary: summary.clone(),
                    usage,
                };
                Ok((detail, r.get::<_, Option<i64>>(1)?, r.get::<_, Option<i64>>(2)?))
            },
        )?;
        detail.outcome = outcome_id.map(|o| self.outcome(o, tests_id)).transpose()?;
        detail.unjoined_evaluations = super::link::unjoined(&self.conn, id)?;
        detail.task = self.task(&summary.instance_id)?;
        detail.edit_list = self.edits(id, only_step)?;
        detail.step_list = self.steps(id, only_step, None)?;
        Ok(detail)
    }

    /// The prompt the model saw at a step, rebuilt from the stored deltas (empty when the
    /// format does not store prompts). Each step keeps a prefix of the previous stored prompt
    /// and appends its own messages.
    fn step_prompt(&self, run_id: i64, step: i64) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.idx, s.query_keep, b.role, b.content, b.extra
             FROM steps s LEFT JOIN query_parts q ON q.step_id = s.id LEFT JOIN blobs b ON b.id = q.blob_id
             WHERE s.run_id = ?1 AND s.idx <= ?2 AND s.query_keep IS NOT NULL ORDER BY s.idx, q.pos",
        )?;
        Ok(prompt_of(collect(&mut stmt, params![run_id, step], prompt_row)?, step))
    }

    fn orphan_evaluations(&self) -> Result<Vec<Orphan>, StoreError> {
        super::link::orphans(&self.conn)
    }

    fn joined(&self) -> Result<Joined, StoreError> {
        super::link::joined(&self.conn)
    }
}

impl Sqlite {
    /// The steps of a run, or its step `only`; their texts whole, or within `bound`.
    pub(super) fn steps(
        &self,
        run_id: i64,
        only: Option<i64>,
        bound: Option<texts::Bound>,
    ) -> Result<Vec<StepRow>, StoreError> {
        // One statement for a step, one for the run: with `?2 IS NULL OR s.idx = ?2` SQLite reads
        // every step of the run to find one.
        let one = if only.is_some() { "s.idx = ?2" } else { "?2 IS NULL" };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.idx, s.tool, s.execution_time, s.tokens_in, s.tokens_out, s.timestamp, s.open_file,
                    s.working_dir, s.flags, s.obs_chars,
                    t.thought, t.action, t.observation, t.response, t.args, t.chunk_id, t.chunk_at
             FROM steps s JOIN step_texts t ON t.step_id = s.id
             WHERE s.run_id = ?1 AND {one} ORDER BY s.idx"
        ))?;
        let mut cache = texts::ChunkCache::default();
        collect(&mut stmt, params![run_id, only], |r| {
            let texts = match bound {
                Some(bound) => texts::within_of_row(r, 10, &self.conn, bound)?,
                None => texts::of_row(r, 10, &mut cache, &self.conn)?,
            };
            StepRow::from_row(r, texts)
        })
    }

    pub(super) fn edits(&self, run_id: i64, only: Option<i64>) -> Result<Vec<EditRow>, StoreError> {
        Ok(self.edit_texts(run_id, only)?.into_iter().map(EditRow::from).collect())
    }

    /// The evaluation `id` (its verdict), with the tests of `tests_from` when another evaluation
    /// gives them (`runs.tests_outcome_id`).
    pub(super) fn outcome(&self, id: i64, tests_from: Option<i64>) -> Result<OutcomeRow, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, grp, passed, message FROM tests WHERE outcome_id = ?1 ORDER BY grp, name")?;
        let tests = collect(&mut stmt, [tests_from.unwrap_or(id)], test_case)?;
        let other = match tests_from.filter(|t| *t != id) {
            Some(t) => Some(self.conn.query_row(
                "SELECT s.path, o.resolved FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
                [t],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?),
            None => None,
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT o.format, s.path, o.resolved, o.patch_applied, o.logged IS NOT NULL FROM outcomes o
             JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
        )?;
        let mut rows = stmt.query([id])?;
        let r = rows.next()?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        OutcomeRow::from_row(r, tests, other)
    }

    pub(super) fn task(&self, instance_id: &str) -> Result<Option<TaskRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT instruction, gold_patch FROM tasks WHERE instance_id = ?1 ORDER BY gold_patch IS NULL, id DESC LIMIT 1",
        )?;
        Ok(collect(&mut stmt, [instance_id], task_row)?.pop())
    }
}
