//! A source's own row and what it holds, alike for both stores (`sql/write.rs` orchestrates the
//! write; each backend writes the runs' other rows itself): the source found or made when its
//! write begins, its old contents removed, its runs' own rows, its evaluations, and the source
//! settled before it commits; the sources' rows read back.

use super::write_path::WritePath;
use super::{Arg, Sql, args};
use crate::error::StoreError;
use crate::model::{Parsed, Run};
use crate::store::write::{RunCounts, SourceRecord, SourceWrite, json_list, run_format};
use std::collections::HashMap;

/// The source's row, found by its path (its old contents removed, runs' ids kept to be given
/// back) or made, in the transaction just begun.
pub(super) fn open_source<S: WritePath>(s: &mut S, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
    // Writers of one file wait for each other until the transaction ends.
    s.lock_path(src.path)?;
    let existing = s.opt("SELECT id FROM sources WHERE path = ?1", &args![src.path], |r| r.int(0))?;
    let mut w = SourceWrite { path: src.path.to_string(), hash: src.hash.to_vec(), ..SourceWrite::default() };
    let (size, hash) = (src.size as i64, &src.hash[..]);
    w.source_id = match existing {
        Some(id) => {
            w.instances.extend(instances_of_source(s, id)?);
            // Runs keep their ids across a replace when they are the same run (same place in the
            // source, instance and attempt), so what refers to them stays attached.
            let kept =
                s.rows("SELECT position, instance_id, attempt, id FROM runs WHERE source_id = ?1", &args![id], |r| {
                    Ok(((r.int(0)?, r.text(1)?, r.opt_int(2)?), r.int(3)?))
                })?;
            w.old_ids.extend(kept);
            delete_contents(s, id)?;
            s.execute(
                &format!(
                    "UPDATE sources SET kind = ?2, format = ?3, size = ?4, hash = ?5, warnings = NULL,
                     ingested_at = {} WHERE id = ?1",
                    ingested_at::<S>()
                ),
                &args![id, src.kind, src.format, size, hash],
            )?;
            w.stats.replaced = true;
            id
        }
        None => s.one(
            &format!(
                "INSERT INTO sources (path, kind, format, size, hash, warnings, ingested_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, {}) RETURNING id",
                ingested_at::<S>()
            ),
            &args![src.path, src.kind, src.format, size, hash],
            |r| r.int(0),
        )?,
    };
    Ok(w)
}

/// The time now as a source's `ingested_at` keeps it: to the second (`2024-05-01 12:00:00`).
fn ingested_at<S: Sql>() -> String {
    format!("replace(substr({}, 1, 19), 'T', ' ')", S::NOW)
}

/// Remove a source and everything it contributed, in the open transaction; the instances it
/// touched are joined again. False when there is no such source.
pub(super) fn remove<S: WritePath>(s: &mut S, path: &str) -> Result<bool, StoreError> {
    s.lock_path(path)?;
    let Some(id) = s.opt("SELECT id FROM sources WHERE path = ?1", &args![path], |r| r.int(0))? else {
        return Ok(false);
    };
    let instances = instances_of_source(s, id)?;
    delete_contents(s, id)?;
    s.execute("DELETE FROM sources WHERE id = ?1", &args![id])?;
    for instance in &instances {
        super::link::relink_instance(s, instance)?;
    }
    Ok(true)
}

/// Remove the source written in parts whose write failed, in a transaction of its own (should
/// that fail, the placeholder hash has the next ingest write the file again).
pub(super) fn remove_parts<S: WritePath>(s: &mut S, source_id: i64) {
    let mut remove = || -> Result<(), StoreError> {
        s.begin()?;
        delete_contents(s, source_id)?;
        s.execute("DELETE FROM sources WHERE id = ?1", &args![source_id])?;
        s.commit()
    };
    if remove().is_err() {
        s.rollback();
    }
}

/// Remove everything a source contributed (its runs' rows cascade), and the messages no longer
/// used: those in a savepoint of their own, as another writer may have just taken one of them
/// (then they stay).
fn delete_contents<S: WritePath>(s: &mut S, source_id: i64) -> Result<(), StoreError> {
    s.drop_source(source_id)?;
    let blobs = s.ints(
        "SELECT h.blob_id FROM history h JOIN runs r ON r.id = h.run_id WHERE r.source_id = ?1
         UNION SELECT q.blob_id FROM query_parts q JOIN steps t ON t.id = q.step_id
               JOIN runs r ON r.id = t.run_id WHERE r.source_id = ?1",
        &args![source_id],
    )?;
    for table in ["runs", "outcomes", "predictions", "tasks"] {
        s.execute(&format!("DELETE FROM {table} WHERE source_id = ?1"), &args![source_id])?;
    }
    if blobs.is_empty() {
        return Ok(());
    }
    s.run("SAVEPOINT blobs")?;
    let deleted = s.execute(
        &format!(
            "DELETE FROM blobs WHERE id IN {}
             AND NOT EXISTS (SELECT 1 FROM history WHERE blob_id = blobs.id)
             AND NOT EXISTS (SELECT 1 FROM query_parts WHERE blob_id = blobs.id)",
            S::in_list("?1")
        ),
        &args![&super::id_list(&blobs)],
    );
    s.run(if deleted.is_ok() { "RELEASE blobs" } else { "ROLLBACK TO blobs; RELEASE blobs" })
}

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
pub(super) fn insert_run_row<S: Sql>(
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
pub(super) fn update_run_row<S: Sql>(sql: &S, id: i64, run: &Run, counts: RunCounts) -> Result<(), StoreError> {
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

/// Every source path with its hash.
pub(super) fn source_hashes<S: Sql>(sql: &S) -> Result<HashMap<String, Vec<u8>>, StoreError> {
    Ok(sql.rows("SELECT path, hash FROM sources", &[], |r| Ok((r.text(0)?, r.bytes(1)?)))?.into_iter().collect())
}

/// The problems recorded when a source was ingested.
pub(super) fn source_warnings<S: Sql>(sql: &S, path: &str) -> Result<Vec<String>, StoreError> {
    let text = sql.opt("SELECT warnings FROM sources WHERE path = ?1", &args![path], |r| r.opt_text(0))?.flatten();
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default())
}

/// The size and hash a source was stored with, if it was.
pub(super) fn source_fingerprint<S: Sql>(sql: &S, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
    sql.opt("SELECT size, hash FROM sources WHERE path = ?1", &args![path], |r| {
        Ok((r.int(0)?.max(0) as u64, r.bytes(1)?))
    })
}

/// The runs of these sources (by path), in id order.
pub(super) fn runs_of_sources<S: Sql>(sql: &S, paths: &[String]) -> Result<Vec<i64>, StoreError> {
    let mut ids = Vec::new();
    for path in paths {
        ids.extend(
            sql.ints("SELECT r.id FROM runs r JOIN sources s ON s.id = r.source_id WHERE s.path = ?1", &args![path])?,
        );
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// A source written, before its transaction commits: its touched instances joined (and graded)
/// again, labels and notes pointed at its runs, its warnings recorded, and for one written in
/// parts (`parted`), the file's hash in place of the placeholder.
pub(super) fn settle_source<S: Sql>(sql: &S, w: &SourceWrite, parted: bool) -> Result<(), StoreError> {
    for id in &w.instances {
        super::link::relink_instance(sql, id)?;
    }
    super::identity::follow_runs(sql, w.source_id)?;
    let warnings = (!w.warnings.is_empty()).then(|| serde_json::Value::from(w.warnings.clone()).to_string());
    sql.execute("UPDATE sources SET warnings = ?2 WHERE id = ?1", &args![w.source_id, warnings.as_deref()])?;
    if parted {
        sql.execute("UPDATE sources SET hash = ?2 WHERE id = ?1", &args![w.source_id, w.hash.as_slice()])?;
    }
    Ok(())
}

/// The instances a source holds anything of: joined again when it is replaced or removed.
fn instances_of_source<S: Sql>(sql: &S, source_id: i64) -> Result<Vec<String>, StoreError> {
    sql.rows(
        "SELECT instance_id FROM runs WHERE source_id = ?1
         UNION SELECT instance_id FROM outcomes WHERE source_id = ?1
         UNION SELECT instance_id FROM predictions WHERE source_id = ?1
         UNION SELECT instance_id FROM tasks WHERE source_id = ?1",
        &args![source_id],
        |r| r.text(0),
    )
}

/// What a unit holds beside its runs: evaluations with their tests, predictions, tasks, and its
/// warnings; the instances they name are joined when the source is settled.
pub(super) fn append_evaluations<S: Sql>(sql: &S, w: &mut SourceWrite, parsed: &Parsed) -> Result<(), StoreError> {
    for o in &parsed.outcomes {
        let logged = o.logged.as_ref().and_then(|l| serde_json::to_string(l).ok());
        let id = sql.one(
            "INSERT INTO outcomes (source_id, instance_id, format, model, run_label, resolved,
                patch_applied, patch_exists, test_count, log, patch, logged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
            &args![
                w.source_id,
                &o.instance_id,
                o.format.map(|f| f.name()).unwrap_or("unknown"),
                o.model.as_deref(),
                o.run_label.as_deref(),
                o.resolved,
                o.patch_applied,
                o.patch_exists,
                o.tests.len() as i64,
                o.log.as_deref(),
                o.patch.as_deref(),
                logged.as_deref(),
            ],
            |r| r.int(0),
        )?;
        super::link::insert_tests(sql, id, &o.tests)?;
        w.instances.insert(o.instance_id.clone());
        w.stats.outcomes += 1;
    }
    for p in &parsed.predictions {
        sql.execute(
            "INSERT INTO predictions (source_id, instance_id, model, patch) VALUES (?1, ?2, ?3, ?4)",
            &args![w.source_id, &p.instance_id, p.model.as_deref(), p.patch.as_deref()],
        )?;
        w.instances.insert(p.instance_id.clone());
        w.stats.predictions += 1;
    }
    for t in &parsed.tasks {
        let (f2p, p2p) = (json_list(&t.fail_to_pass), json_list(&t.pass_to_pass));
        sql.execute(
            "INSERT INTO tasks (source_id, instance_id, instruction, gold_patch, fail_to_pass, pass_to_pass)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &args![
                w.source_id,
                &t.instance_id,
                t.instruction.as_deref(),
                t.gold_patch.as_deref(),
                f2p.as_deref(),
                p2p.as_deref()
            ],
        )?;
        if t.gold_patch.is_some() || !t.fail_to_pass.is_empty() || !t.pass_to_pass.is_empty() {
            w.stats.tasks += 1;
        }
        // A task's lists grade the test logs of its instance (`link`).
        w.instances.insert(t.instance_id.clone());
    }
    w.warnings.extend(parsed.warnings.iter().cloned());
    Ok(())
}
