//! The CLI's reads (the run list, a run in full, a step's prompt), on either store.

use super::{Sql, args};
use crate::error::StoreError;
use crate::model::{FailedScope, Message};
use crate::store::backend::Reads;
use crate::store::browse::{EDIT_TEXT, EditText};
use crate::store::read::{
    EditRow, OutcomeRow, RunDetail, RunFilter, RunRow, RunSummary, SUMMARY_SELECT, StepRow, TaskRow, one_run,
    prompt_of, prompt_row, task_row, test_case,
};
use crate::store::texts::{self, ChunkCache};
use crate::store::unmatched::{Joined, Orphan};

/// The edits of run `?1`, or of its step `?2`: one statement each, so that one step's edits are
/// found by the index on both columns (with `?2 IS NULL OR step_idx = ?2` SQLite reads every
/// edit of the run). In step order, the final patch last.
pub(super) fn edits_of(step: Option<i64>) -> &'static str {
    match step {
        Some(_) => "WHERE run_id = ?1 AND step_idx = ?2 ORDER BY id",
        None => "WHERE run_id = ?1 AND CAST(?2 AS bigint) IS NULL ORDER BY step_idx IS NULL, step_idx, id",
    }
}

impl<S: Sql> Reads for S {
    fn count_runs(&self) -> Result<i64, StoreError> {
        self.one("SELECT count(*) FROM runs", &[], |r| r.int(0))
    }

    fn list_runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "{SUMMARY_SELECT} {} ORDER BY r.instance_id, r.id{}",
            match filter.failed {
                None => "",
                Some(FailedScope::Failed) => "WHERE o.resolved = 0",
                Some(FailedScope::WithUnknown) => "WHERE o.resolved IS NULL OR o.resolved = 0",
            },
            if filter.limit.is_some() { " LIMIT ?1" } else { "" }
        );
        match filter.limit {
            Some(limit) => self.rows(&sql, &args![limit as i64], RunSummary::from_row),
            None => self.rows(&sql, &[], RunSummary::from_row),
        }
    }

    fn run_row(&self, id: i64) -> Result<RunRow, StoreError> {
        self.opt(&format!("{SUMMARY_SELECT} WHERE r.id = ?1"), &args![id], RunRow::from_row)?
            .ok_or_else(|| StoreError::NoSuchRun(id.to_string()))
    }

    fn resolve_run(&self, query: &str) -> Result<i64, StoreError> {
        if let Ok(id) = query.parse::<i64>()
            && self.opt("SELECT id FROM runs WHERE id = ?1", &args![id], |r| r.int(0))?.is_some()
        {
            return Ok(id);
        }
        one_run(query, &self.runs_of_instance(query)?)
    }

    fn runs_of_instance(&self, instance_id: &str) -> Result<Vec<i64>, StoreError> {
        self.ints("SELECT id FROM runs WHERE instance_id = ?1 ORDER BY id", &args![instance_id])
    }

    fn runs_without_gold(&self) -> Result<Vec<i64>, StoreError> {
        self.ints(
            "SELECT r.id FROM runs r WHERE NOT EXISTS
               (SELECT 1 FROM tasks t WHERE t.instance_id = r.instance_id AND t.gold_patch IS NOT NULL)
             ORDER BY r.id",
            &[],
        )
    }

    fn run_detail(&self, id: i64, only_step: Option<i64>) -> Result<RunDetail, StoreError> {
        let RunRow { summary, usage } = self.run_row(id)?;
        let (submission, outcome_id, tests_id) =
            self.one("SELECT submission, outcome_id, tests_outcome_id FROM runs WHERE id = ?1", &args![id], |r| {
                Ok((r.opt_text(0)?, r.opt_int(1)?, r.opt_int(2)?))
            })?;
        Ok(RunDetail {
            usage,
            submission,
            outcome: outcome_id.map(|o| outcome(self, o, tests_id)).transpose()?,
            unjoined_evaluations: super::link::unjoined(self, id)?,
            task: task(self, &summary.instance_id)?,
            edit_list: edit_texts(self, id, only_step)?.into_iter().map(EditRow::from).collect(),
            step_list: steps(self, id, only_step, None)?,
            summary,
        })
    }

    /// Each step keeps a prefix of the previous stored prompt and appends its own messages.
    fn step_prompt(&self, run_id: i64, step: i64) -> Result<Vec<Message>, StoreError> {
        let rows = self.rows(
            "SELECT s.idx, s.query_keep, b.role, b.content, b.extra
             FROM steps s LEFT JOIN query_parts q ON q.step_id = s.id LEFT JOIN blobs b ON b.id = q.blob_id
             WHERE s.run_id = ?1 AND s.idx <= ?2 AND s.query_keep IS NOT NULL ORDER BY s.idx, q.pos",
            &args![run_id, step],
            prompt_row,
        )?;
        Ok(prompt_of(rows, step))
    }

    fn orphan_evaluations(&self) -> Result<Vec<Orphan>, StoreError> {
        super::link::orphans(self)
    }

    fn joined(&self) -> Result<Joined, StoreError> {
        super::link::joined(self)
    }
}

/// The columns of a step with its texts (`StepRow::from_row`, then `texts::of_row` from 10).
pub(in crate::store) const STEP_WITH_TEXTS: &str =
    "s.idx, s.tool, s.execution_time, s.tokens_in, s.tokens_out, s.timestamp,
    s.open_file, s.working_dir, s.flags, s.obs_chars,
    t.thought, t.action, t.observation, t.response, t.args, t.chunk_id, t.chunk_at";

/// The steps of a run, or its step `only`; their texts whole, or within `bound`.
pub(super) fn steps<S: Sql>(
    sql: &S,
    run_id: i64,
    only: Option<i64>,
    bound: Option<texts::Bound>,
) -> Result<Vec<StepRow>, StoreError> {
    // One statement for a step, one for the run: with `?2 IS NULL OR s.idx = ?2` SQLite reads
    // every step of the run to find one.
    let one = if only.is_some() { "s.idx = ?2" } else { "CAST(?2 AS bigint) IS NULL" };
    let query = format!(
        "SELECT {STEP_WITH_TEXTS} FROM steps s JOIN step_texts t ON t.step_id = s.id
         WHERE s.run_id = ?1 AND {one} ORDER BY s.idx"
    );
    if let Some(bound) = bound {
        return sql
            .rows(&query, &args![run_id, only], |r| StepRow::from_row(r, texts::within_of_row(r, 10, sql, bound)?));
    }
    // Whole texts: the rows first, then the chunks they name (fetched ahead where that saves
    // round trips).
    let rows = sql.rows(&query, &args![run_id, only], |r| match r.opt_int(15)? {
        None => Ok((StepRow::from_row(r, texts::of_row(r, 10, &mut ChunkCache::default(), sql)?)?, None)),
        Some(chunk) => Ok((StepRow::from_row(r, texts::Texts::default())?, Some((chunk, r.int(16)?)))),
    })?;
    let named = rows.iter().filter_map(|(_, at)| at.map(|(chunk, _)| chunk)).collect();
    sql.with_chunks(named, |chunks| {
        let mut cache = ChunkCache::default();
        rows.into_iter()
            .map(|(step, at)| match at {
                Some((chunk, at)) => Ok(step.with_texts(cache.texts(chunks, chunk, at)?)),
                None => Ok(step),
            })
            .collect()
    })
}

/// The edits of a run (or of one step) with their texts and diffs (decompressed here, for these
/// edits only).
pub(super) fn edit_texts<S: Sql>(sql: &S, run_id: i64, step: Option<i64>) -> Result<Vec<EditText>, StoreError> {
    let edits = sql.rows(
        &format!("SELECT {EDIT_TEXT} FROM edits {}", edits_of(step)),
        &args![run_id, step],
        EditText::from_row,
    )?;
    let named = edits.iter().filter_map(|(_, place)| place.chunk_id()).collect();
    sql.with_chunks(named, |chunks| {
        let mut cache = ChunkCache::default();
        edits.into_iter().map(|(edit, place)| edit.filled(place, &mut cache, chunks)).collect()
    })
}

/// The evaluation `id` (its verdict), with the tests of `tests_from` when another evaluation
/// gives them (`runs.tests_outcome_id`).
pub(super) fn outcome<S: Sql>(sql: &S, id: i64, tests_from: Option<i64>) -> Result<OutcomeRow, StoreError> {
    let tests = sql.rows(
        &format!(
            "SELECT name, grp, passed, message FROM tests WHERE outcome_id = ?1 ORDER BY grp NULLS FIRST, name, {}",
            S::ROW_ORDER
        ),
        &args![tests_from.unwrap_or(id)],
        test_case,
    )?;
    let other = match tests_from.filter(|t| *t != id) {
        Some(t) => Some(sql.one(
            "SELECT s.path, o.resolved FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
            &args![t],
            |r| Ok((r.text(0)?, r.opt_flag(1)?)),
        )?),
        None => None,
    };
    sql.one(
        "SELECT o.format, s.path, o.resolved, o.patch_applied, o.logged IS NOT NULL FROM outcomes o
         JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
        &args![id],
        |r| OutcomeRow::from_row(r, tests, other),
    )
}

pub(super) fn task<S: Sql>(sql: &S, instance_id: &str) -> Result<Option<TaskRow>, StoreError> {
    sql.opt(
        "SELECT instruction, gold_patch FROM tasks WHERE instance_id = ?1 ORDER BY gold_patch IS NULL, id DESC LIMIT 1",
        &args![instance_id],
        task_row,
    )
}
