//! The CLI's reads (the run list, a run in full, a step's prompt) from PostgreSQL: the SQLite
//! backend's queries in PostgreSQL's dialect, rows made into the same read models.

use super::ahead::Ahead;
use super::{Cells, Pg, enc};
use crate::error::StoreError;
use crate::model::{FailedScope, Message};
use crate::store::backend::Reads;
use crate::store::browse::{EDIT_TEXT, EditText};
use crate::store::read::{
    EditRow, OutcomeRow, RunDetail, RunFilter, RunRow, RunSummary, SUMMARY_SELECT, StepRow, TaskRow, one_run,
    prompt_of, prompt_row, task_row, test_case,
};
use crate::store::texts;
use crate::store::unmatched::{Joined, Orphan};

/// The edits of run `$1`, or of its step `$2`, in step order (final patch last): one statement
/// each, as on SQLite, so one step's edits are found by the index on both columns.
pub(super) fn edits_of(step: Option<i64>) -> &'static str {
    match step {
        Some(_) => "WHERE run_id = $1 AND step_idx = $2 ORDER BY id",
        None => "WHERE run_id = $1 AND $2::bigint IS NULL ORDER BY step_idx IS NULL, step_idx, id",
    }
}

impl Reads for Pg {
    fn count_runs(&self) -> Result<i64, StoreError> {
        self.one("SELECT count(*) FROM runs", &[])?.int(0)
    }

    fn list_runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "{SUMMARY_SELECT} {} ORDER BY r.instance_id, r.id LIMIT $1",
            match filter.failed {
                None => "",
                Some(FailedScope::Failed) => "WHERE o.resolved = 0",
                Some(FailedScope::WithUnknown) => "WHERE o.resolved IS NULL OR o.resolved = 0",
            }
        );
        let limit = filter.limit.map(|l| l as i64);
        self.rows(&sql, &[&limit])?.iter().map(|r| RunSummary::from_row(r)).collect()
    }

    fn run_row(&self, id: i64) -> Result<RunRow, StoreError> {
        let row = self.opt(&format!("{SUMMARY_SELECT} WHERE r.id = $1"), &[&id])?;
        RunRow::from_row(&row.ok_or_else(|| StoreError::NoSuchRun(id.to_string()))?)
    }

    fn resolve_run(&self, query: &str) -> Result<i64, StoreError> {
        if let Ok(id) = query.parse::<i64>()
            && self.opt("SELECT id FROM runs WHERE id = $1", &[&id])?.is_some()
        {
            return Ok(id);
        }
        let ids: Vec<i64> = self
            .rows("SELECT id FROM runs WHERE instance_id = $1 ORDER BY id", &[&enc(query)])?
            .iter()
            .map(|r| r.int(0))
            .collect::<Result<_, _>>()?;
        one_run(query, &ids)
    }

    fn runs_of_instance(&self, instance_id: &str) -> Result<Vec<i64>, StoreError> {
        self.rows("SELECT id FROM runs WHERE instance_id = $1 ORDER BY id", &[&enc(instance_id)])?
            .iter()
            .map(|r| r.int(0))
            .collect()
    }

    fn runs_without_gold(&self) -> Result<Vec<i64>, StoreError> {
        self.rows(
            "SELECT r.id FROM runs r WHERE NOT EXISTS
               (SELECT 1 FROM tasks t WHERE t.instance_id = r.instance_id AND t.gold_patch IS NOT NULL)
             ORDER BY r.id",
            &[],
        )?
        .iter()
        .map(|r| r.int(0))
        .collect()
    }

    fn run_detail(&self, id: i64, only_step: Option<i64>) -> Result<RunDetail, StoreError> {
        let RunRow { summary, usage } = self.run_row(id)?;
        let r = self.one("SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = $1", &[&id])?;
        Ok(RunDetail {
            usage,
            submission: r.opt_text(0)?,
            outcome: r.opt_int(1)?.map(|o| self.outcome(o, r.opt_int(2)?)).transpose()?,
            unjoined_evaluations: super::link::unjoined(self, id)?,
            task: self.task(&summary.instance_id)?,
            edit_list: self.edit_texts(id, only_step)?.into_iter().map(EditRow::from).collect(),
            step_list: self.steps(id, only_step, None)?,
            summary,
        })
    }

    fn step_prompt(&self, run_id: i64, step: i64) -> Result<Vec<Message>, StoreError> {
        let rows = self.rows(
            "SELECT s.idx, s.query_keep, b.role, b.content, b.extra
             FROM steps s LEFT JOIN query_parts q ON q.step_id = s.id LEFT JOIN blobs b ON b.id = q.blob_id
             WHERE s.run_id = $1 AND s.idx <= $2 AND s.query_keep IS NOT NULL ORDER BY s.idx, q.pos",
            &[&run_id, &step],
        )?;
        let rows = rows.iter().map(|r| prompt_row(r)).collect::<Result<Vec<_>, _>>()?;
        Ok(prompt_of(rows, step))
    }

    fn orphan_evaluations(&self) -> Result<Vec<Orphan>, StoreError> {
        super::link::orphans(self)
    }

    fn joined(&self) -> Result<Joined, StoreError> {
        super::link::joined(self)
    }
}

impl Pg {
    /// The steps of a run, or its step `only`; their texts whole, or within `bound`.
    pub(super) fn steps(
        &self,
        run_id: i64,
        only: Option<i64>,
        bound: Option<texts::Bound>,
    ) -> Result<Vec<StepRow>, StoreError> {
        let one = if only.is_some() { "s.idx = $2" } else { "$2::bigint IS NULL" };
        let rows = self.rows(
            &format!(
                "SELECT s.idx, s.tool, s.execution_time, s.tokens_in, s.tokens_out, s.timestamp, s.open_file,
                        s.working_dir, s.flags, s.obs_chars,
                        t.thought, t.action, t.observation, t.response, t.args, t.chunk_id, t.chunk_at
                 FROM steps s JOIN step_texts t ON t.step_id = s.id
                 WHERE s.run_id = $1 AND {one} ORDER BY s.idx"
            ),
            &[&run_id, &only],
        )?;
        let mut cache = texts::ChunkCache::default();
        // Whole texts: the chunks the rows name fetched in batches, not a round trip each.
        let ahead = Ahead::new(self, rows.iter().filter_map(|r| r.opt_int(15).ok().flatten()));
        rows.iter()
            .map(|r| {
                let texts = match bound {
                    Some(bound) => texts::within_of_row(r, 10, self, bound)?,
                    None => texts::of_row(r, 10, &mut cache, &ahead)?,
                };
                StepRow::from_row(r, texts)
            })
            .collect()
    }

    /// The edits of a run (or of one step) with their texts.
    pub(super) fn edit_texts(&self, run_id: i64, step: Option<i64>) -> Result<Vec<EditText>, StoreError> {
        let rows = self.rows(&format!("SELECT {EDIT_TEXT} FROM edits {}", edits_of(step)), &[&run_id, &step])?;
        let edits = rows.iter().map(|r| EditText::from_row(r)).collect::<Result<Vec<_>, _>>()?;
        let ahead = Ahead::new(self, edits.iter().filter_map(|(_, place)| place.chunk_id()));
        let mut cache = texts::ChunkCache::default();
        edits.into_iter().map(|(edit, place)| edit.filled(place, &mut cache, &ahead)).collect()
    }

    /// The evaluation `id` (its verdict), with the tests of `tests_from` when another evaluation
    /// gives them (`runs.tests_outcome_id`).
    pub(super) fn outcome(&self, id: i64, tests_from: Option<i64>) -> Result<OutcomeRow, StoreError> {
        let tests = self
            .rows(
                "SELECT name, grp, passed, message FROM tests WHERE outcome_id = $1 ORDER BY grp NULLS FIRST, name, id",
                &[&tests_from.unwrap_or(id)],
            )?
            .iter()
            .map(|r| test_case(r))
            .collect::<Result<_, _>>()?;
        let r = self.one(
            "SELECT o.format, s.path, o.resolved, o.patch_applied, o.logged IS NOT NULL FROM outcomes o
             JOIN sources s ON s.id = o.source_id WHERE o.id = $1",
            &[&id],
        )?;
        let other = match tests_from.filter(|t| *t != id) {
            Some(t) => {
                let o = self.one(
                    "SELECT s.path, o.resolved FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.id = $1",
                    &[&t],
                )?;
                Some((o.text(0)?, o.opt_flag(1)?))
            }
            None => None,
        };
        OutcomeRow::from_row(&r, tests, other)
    }

    pub(super) fn task(&self, instance_id: &str) -> Result<Option<TaskRow>, StoreError> {
        self.opt(
            "SELECT instruction, gold_patch FROM tasks WHERE instance_id = $1 ORDER BY gold_patch IS NULL, id DESC LIMIT 1",
            &[&enc(instance_id)],
        )?
        .map(|r| task_row(&r))
        .transpose()
    }
}
