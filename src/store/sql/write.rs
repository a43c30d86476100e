//! What both stores' writes of a source do alike (`sqlite/write.rs`, `pg/write.rs` keep the
//! write path itself: rows prepared in a loop, or encoded for `COPY`): the sources' own rows read
//! back, and a source settled before it commits.

use super::{Sql, args};
use crate::error::StoreError;
use crate::model::Parsed;
use crate::store::write::{SourceWrite, json_list};
use std::collections::HashMap;

/// Every source path with its hash.
pub(in crate::store) fn source_hashes<S: Sql>(sql: &S) -> Result<HashMap<String, Vec<u8>>, StoreError> {
    Ok(sql.rows("SELECT path, hash FROM sources", &[], |r| Ok((r.text(0)?, r.bytes(1)?)))?.into_iter().collect())
}

/// The problems recorded when a source was ingested.
pub(in crate::store) fn source_warnings<S: Sql>(sql: &S, path: &str) -> Result<Vec<String>, StoreError> {
    let text = sql.opt("SELECT warnings FROM sources WHERE path = ?1", &args![path], |r| r.opt_text(0))?.flatten();
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default())
}

/// The size and hash a source was stored with, if it was.
pub(in crate::store) fn source_fingerprint<S: Sql>(sql: &S, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
    sql.opt("SELECT size, hash FROM sources WHERE path = ?1", &args![path], |r| {
        Ok((r.int(0)?.max(0) as u64, r.bytes(1)?))
    })
}

/// The runs of these sources (by path), in id order.
pub(in crate::store) fn runs_of_sources<S: Sql>(sql: &S, paths: &[String]) -> Result<Vec<i64>, StoreError> {
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
pub(in crate::store) fn settle_source<S: Sql>(sql: &S, w: &SourceWrite, parted: bool) -> Result<(), StoreError> {
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
pub(in crate::store) fn instances_of_source<S: Sql>(sql: &S, source_id: i64) -> Result<Vec<String>, StoreError> {
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
pub(in crate::store) fn append_evaluations<S: Sql>(
    sql: &S,
    w: &mut SourceWrite,
    parsed: &Parsed,
) -> Result<(), StoreError> {
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
