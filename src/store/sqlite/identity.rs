//! Runs' identities in SQLite (`store::identity`): a run's, and labels and notes pointed at the
//! runs of a source just written.

use crate::error::StoreError;
use crate::store::identity::{FOLLOWERS, Identity};
use rusqlite::{OptionalExtension, params};

/// The identity of run `run_id`, when it is in the database.
pub(super) fn of_run(conn: &rusqlite::Connection, run_id: i64) -> Result<Option<Identity>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT s.path, r.instance_id, r.attempt,
                    (SELECT count(*) FROM runs o WHERE o.source_id = r.source_id AND o.instance_id = r.instance_id
                     AND o.attempt IS r.attempt AND (o.position < r.position OR (o.position = r.position AND o.id < r.id)))
             FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.id = ?1",
        )?
        .query_row([run_id], |r| Ok(Identity { source: r.get(0)?, instance: r.get(1)?, attempt: r.get(2)?, nth: r.get(3)? }))
        .optional()?)
}

/// Point the labels and notes of source `source_id`'s runs at those runs, by identity. Called in
/// the transaction that writes the source. A note that would land on a step that already has the
/// same reviewer's note on that run stays where it was (the note on the run wins).
pub(super) fn follow_runs(conn: &rusqlite::Connection, source_id: i64) -> Result<(), StoreError> {
    let path: String = conn.query_row("SELECT path FROM sources WHERE id = ?1", [source_id], |r| r.get(0))?;
    let mut tables = Vec::new();
    for table in FOLLOWERS {
        let named: bool = conn
            .prepare_cached(&format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE run_source = ?1)"))?
            .query_row([&path], |r| r.get(0))?;
        if named {
            tables.push(table);
        }
    }
    if tables.is_empty() {
        return Ok(());
    }
    let mut stmt =
        conn.prepare_cached("SELECT id, instance_id, attempt FROM runs WHERE source_id = ?1 ORDER BY position, id")?;
    let runs: Vec<(i64, String, Option<i64>)> =
        stmt.query_map([source_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
    for table in tables {
        let mut point = conn.prepare_cached(&format!(
            "UPDATE OR IGNORE {table} SET run_id = ?1 WHERE run_source = ?2 AND run_instance = ?3
             AND run_attempt IS ?4 AND run_nth = ?5 AND run_id != ?1"
        ))?;
        for (id, instance, attempt, nth) in numbered(&runs) {
            point.execute(params![id, path, instance, attempt, nth])?;
        }
    }
    Ok(())
}

/// A source's runs (id, instance, attempt), in the order the source holds them, each with which
/// of the source's runs with its instance and attempt it is.
fn numbered(runs: &[(i64, String, Option<i64>)]) -> Vec<(i64, &str, Option<i64>, i64)> {
    let mut seen: std::collections::HashMap<(&str, Option<i64>), i64> = std::collections::HashMap::new();
    runs.iter()
        .map(|(id, instance, attempt)| {
            let nth = seen.entry((instance.as_str(), *attempt)).or_default();
            let here = *nth;
            *nth += 1;
            (*id, instance.as_str(), *attempt, here)
        })
        .collect()
}
