//! Runs' identities (`store::identity`): given to a label or a note as it is written, and labels
//! and notes pointed at the runs of a source just written.

use super::{Arg, Sql, args, id_list};
use crate::error::StoreError;
use crate::store::identity::{FOLLOWERS, Identity};
use std::collections::HashMap;

/// The identities of these runs (those in the database), in one query.
pub(in crate::store) fn of_runs<S: Sql>(sql: &S, runs: &[i64]) -> Result<HashMap<i64, Identity>, StoreError> {
    let (query, list);
    let args: &[Arg<'_>] = match runs {
        [one] => {
            query = "WHERE r.id = ?1".to_string();
            &[Arg::Int(*one)]
        }
        _ => {
            query = format!("WHERE r.id IN {}", S::in_list("?1"));
            list = id_list(runs);
            &[Arg::Text(&list)]
        }
    };
    sql.rows(
        &format!(
            "SELECT r.id, s.path, r.instance_id, r.attempt,
                    (SELECT count(*) FROM runs o WHERE o.source_id = r.source_id AND o.instance_id = r.instance_id
                     AND o.attempt IS NOT DISTINCT FROM r.attempt
                     AND (o.position < r.position OR (o.position = r.position AND o.id < r.id)))
             FROM runs r JOIN sources s ON s.id = r.source_id {query}"
        ),
        args,
        |r| {
            Ok((
                r.int(0)?,
                Identity { source: r.text(1)?, instance: r.text(2)?, attempt: r.opt_int(3)?, nth: r.int(4)? },
            ))
        },
    )
    .map(|rows| rows.into_iter().collect())
}

/// Point the labels and notes of source `source_id`'s runs at those runs, by identity. Called in
/// the transaction that writes the source. A note that would land on a step that already has the
/// same reviewer's note on that run stays where it was (the note on the run wins).
pub(in crate::store) fn follow_runs<S: Sql>(sql: &S, source_id: i64) -> Result<(), StoreError> {
    for table in FOLLOWERS {
        let named = sql.one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM {table} WHERE run_source = (SELECT path FROM sources WHERE id = ?1))"
            ),
            &args![source_id],
            |r| r.flag(0),
        )?;
        if !named {
            continue;
        }
        let keep_notes = if table == "notes" {
            "AND NOT EXISTS (SELECT 1 FROM notes o WHERE o.run_id = n.id AND o.step_idx = t.step_idx AND o.rater = t.rater)"
        } else {
            ""
        };
        sql.execute(
            &format!(
                "WITH n AS (
                     SELECT r.id, r.instance_id, r.attempt, s.path,
                            row_number() OVER (PARTITION BY r.instance_id, r.attempt ORDER BY r.position, r.id) - 1 AS nth
                     FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.source_id = ?1)
                 UPDATE {table} AS t SET run_id = n.id FROM n
                 WHERE t.run_source = n.path AND t.run_instance = n.instance_id
                   AND t.run_attempt IS NOT DISTINCT FROM n.attempt AND t.run_nth = n.nth AND t.run_id <> n.id {keep_notes}"
            ),
            &args![source_id],
        )?;
    }
    Ok(())
}
