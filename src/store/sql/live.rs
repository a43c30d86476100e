//! What both stores' live writes (`trajan PATH`, `LiveWrites`) do alike around their step rows:
//! a run's own row written when it begins and again when its document ends, the counts each
//! commit makes visible, and the end's steps' flags and source row. The step rows themselves are
//! each backend's (`sqlite/live.rs`, `pg/live.rs`).

use super::{Arg, Sql, args, id_list};
use crate::error::StoreError;
use crate::model::Run;
use crate::store::write::{FlagChange, LiveRun, RunCounts, SourceRecord, run_format};

/// A run row's fields after its keys: `position, instance_id, format, format_version, agent,
/// model, exit_status, submission, cost, tokens_sent, tokens_received, api_calls, attempt,
/// best_attempt, step_count, edit_count, rejected_count, metadata`.
fn run_fields(run: &Run, counts: RunCounts) -> Result<[Arg<'_>; 18], StoreError> {
    Ok(args![
        run.position,
        &run.instance_id,
        run_format(run)?,
        run.format_version.as_deref(),
        run.agent.as_deref(),
        run.model.as_deref(),
        run.exit_status.as_deref(),
        run.submission.as_deref(),
        crate::model::kept_cost(run.cost),
        run.tokens_sent,
        run.tokens_received,
        run.api_calls,
        run.attempt,
        run.best_attempt,
        counts.steps as i64,
        counts.edits as i64,
        counts.rejected as i64,
        run.metadata.as_deref(),
    ])
}

/// The run's own row (no steps, history or edits), with id `id`.
pub(in crate::store) fn insert_run_row<S: Sql>(
    sql: &S,
    source_id: i64,
    id: i64,
    run: &Run,
    counts: RunCounts,
) -> Result<(), StoreError> {
    let mut values = Vec::with_capacity(20);
    values.extend(args![id, source_id]);
    values.extend(run_fields(run, counts)?);
    sql.execute(
        "INSERT INTO runs (id, source_id, position, instance_id, format, format_version, agent, model,
            exit_status, submission, cost, tokens_sent, tokens_received, api_calls, attempt,
            best_attempt, step_count, edit_count, rejected_count, metadata)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        &values,
    )?;
    Ok(())
}

/// A run's row once its document has been read to the end.
pub(in crate::store) fn update_run_row<S: Sql>(
    sql: &S,
    id: i64,
    run: &Run,
    counts: RunCounts,
) -> Result<(), StoreError> {
    let mut values = Vec::with_capacity(19);
    values.push(Arg::Int(id));
    values.extend(run_fields(run, counts)?);
    sql.execute(
        "UPDATE runs SET position = ?2, instance_id = ?3, format = ?4, format_version = ?5, agent = ?6,
            model = ?7, exit_status = ?8, submission = ?9, cost = ?10, tokens_sent = ?11,
            tokens_received = ?12, api_calls = ?13, attempt = ?14, best_attempt = ?15, step_count = ?16,
            edit_count = ?17, rejected_count = ?18, metadata = ?19
         WHERE id = ?1",
        &values,
    )?;
    Ok(())
}

/// The warning a source carries until its live write ends.
pub(in crate::store) fn note_unfinished<S: Sql>(sql: &S, source_id: i64, note: &str) -> Result<(), StoreError> {
    let warnings = serde_json::Value::from(vec![note.to_string()]).to_string();
    sql.execute("UPDATE sources SET warnings = ?2 WHERE id = ?1", &args![source_id, &warnings])?;
    Ok(())
}

/// The counts of the runs that grew since the last commit, for the commit to show.
pub(in crate::store) fn store_counts<S: Sql>(sql: &S, runs: &mut [LiveRun]) -> Result<(), StoreError> {
    for run in runs.iter_mut().filter(|r| r.changed) {
        let c = run.counts;
        sql.execute(
            "UPDATE runs SET step_count = ?2, edit_count = ?3, rejected_count = ?4 WHERE id = ?1",
            &args![run.id, c.steps as i64, c.edits as i64, c.rejected as i64],
        )?;
        run.changed = false;
    }
    Ok(())
}

/// The path of the source being written, when it is still there.
pub(in crate::store) fn path_of<S: Sql>(sql: &S, source_id: i64) -> Result<Option<String>, StoreError> {
    sql.opt("SELECT path FROM sources WHERE id = ?1", &args![source_id], |r| r.text(0))
}

/// The edits written with the runs' steps go: the end writes them all again, in the order (and so
/// with the ids) a whole write gives them.
pub(in crate::store) fn drop_live_edits<S: Sql>(sql: &S, runs: &[LiveRun]) -> Result<(), StoreError> {
    for live in runs {
        sql.execute("DELETE FROM edits WHERE run_id = ?1", &args![live.id])?;
    }
    Ok(())
}

/// Steps whose flags changed once the document was read (run, step, change, in order): the steps
/// of a run that change alike in one statement (a run may have thousands of edited steps), a flag
/// added after it was set.
pub(in crate::store) fn change_flags<S: Sql>(sql: &S, changes: &[(i64, i64, FlagChange)]) -> Result<(), StoreError> {
    let (set, add) = (
        format!("UPDATE steps SET flags = ?3 WHERE run_id = ?1 AND idx IN {}", S::in_list("?2")),
        format!("UPDATE steps SET flags = flags | ?3 WHERE run_id = ?1 AND idx IN {}", S::in_list("?2")),
    );
    for alike in changes.chunk_by(|a, b| (a.0, a.2) == (b.0, b.2)) {
        let (run_id, change) = (alike[0].0, alike[0].2);
        let steps: Vec<i64> = alike.iter().map(|c| c.1).collect();
        let (statement, bits) = match change {
            FlagChange::Set(bits) => (&set, bits),
            FlagChange::Add(bits) => (&add, bits),
        };
        sql.execute(statement, &args![run_id, &id_list(&steps), bits])?;
    }
    Ok(())
}

/// The source's row once its document is read: its format, real size and hash, no warning.
pub(in crate::store) fn finish_source<S: Sql>(
    sql: &S,
    source_id: i64,
    record: &SourceRecord<'_>,
) -> Result<(), StoreError> {
    sql.execute(
        "UPDATE sources SET format = ?2, size = ?3, hash = ?4, warnings = NULL WHERE id = ?1",
        &args![source_id, record.format, record.size as i64, &record.hash[..]],
    )?;
    Ok(())
}
