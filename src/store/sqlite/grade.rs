//! Grading an instance's test logs in SQLite (`store::grade` says how).

use crate::error::StoreError;
use crate::store::grade::{lists_of, regrade};
use rusqlite::{Connection, OptionalExtension, params};

/// Grade (or ungrade) every outcome of the instance that carries a test log without a verdict.
pub fn regrade_instance(tx: &Connection, instance_id: &str) -> Result<(), StoreError> {
    let logs: Vec<(i64, String, Option<bool>)> = tx
        .prepare_cached("SELECT id, logged, resolved FROM outcomes WHERE instance_id = ?1 AND logged IS NOT NULL")?
        .query_map([instance_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    if logs.is_empty() {
        return Ok(());
    }
    let row: Option<(Option<String>, Option<String>)> = tx
        .prepare_cached(
            "SELECT fail_to_pass, pass_to_pass FROM tasks WHERE instance_id = ?1
             AND (fail_to_pass IS NOT NULL OR pass_to_pass IS NOT NULL) ORDER BY id DESC LIMIT 1",
        )?
        .query_row([instance_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let lists = row.map(|(f2p, p2p)| lists_of(f2p, p2p));
    for (id, json, resolved) in logs {
        let Some((resolved, tests)) = regrade(&json, resolved, lists.as_ref()) else { continue };
        tx.prepare_cached("DELETE FROM tests WHERE outcome_id = ?1")?.execute([id])?;
        let mut insert = tx
            .prepare_cached("INSERT INTO tests (outcome_id, name, grp, passed, message) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for t in &tests {
            insert.execute(params![id, t.name, t.group.map(|g| g.name()), t.passed, t.message])?;
        }
        tx.prepare_cached("UPDATE outcomes SET resolved = ?2, test_count = ?3 WHERE id = ?1")?.execute(params![
            id,
            resolved,
            tests.len() as i64
        ])?;
    }
    Ok(())
}
