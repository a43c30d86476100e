//! Runs' identities in PostgreSQL (`store::identity`): given to a label or a note as it is
//! written, and labels and notes pointed at the runs of a source just written.

use super::{Cells, Pg};
use crate::error::StoreError;
use crate::store::identity::FOLLOWERS;
use std::collections::HashMap;

/// A run's identity: its source's path, instance, attempt, and which of the source's runs with
/// that instance and attempt it is.
pub(super) struct Who {
    pub source: String,
    pub instance: String,
    pub attempt: Option<i64>,
    pub nth: i64,
}

/// The identities of these runs (those in the database), in one query.
pub(super) fn identities(pg: &Pg, runs: &[i64]) -> Result<HashMap<i64, Who>, StoreError> {
    pg.rows(
        "SELECT r.id, s.path, r.instance_id, r.attempt,
                (SELECT count(*) FROM runs o WHERE o.source_id = r.source_id AND o.instance_id = r.instance_id
                 AND o.attempt IS NOT DISTINCT FROM r.attempt
                 AND (o.position < r.position OR (o.position = r.position AND o.id < r.id)))
         FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.id = ANY($1)",
        &[&runs],
    )?
    .iter()
    .map(|r| Ok((r.int(0)?, Who { source: r.text(1)?, instance: r.text(2)?, attempt: r.opt_int(3)?, nth: r.int(4)? })))
    .collect()
}

/// Point the labels and notes of source `source_id`'s runs at those runs, by identity. Called in
/// the transaction that writes the source. A note that would land on a step that already has the
/// same reviewer's note on that run stays where it was (the note on the run wins).
pub(super) fn follow_runs(pg: &Pg, source_id: i64) -> Result<(), StoreError> {
    for table in FOLLOWERS {
        let named = pg.one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM {table} WHERE run_source = (SELECT path FROM sources WHERE id = $1))"
            ),
            &[&source_id],
        )?;
        if !named.flag(0)? {
            continue;
        }
        let keep_notes = if table == "notes" {
            "AND NOT EXISTS (SELECT 1 FROM notes o WHERE o.run_id = n.id AND o.step_idx = t.step_idx AND o.rater = t.rater)"
        } else {
            ""
        };
        pg.exec(
            &format!(
                "WITH n AS (
                     SELECT r.id, r.instance_id, r.attempt, s.path,
                            row_number() OVER (PARTITION BY r.instance_id, r.attempt ORDER BY r.position, r.id) - 1 AS nth
                     FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.source_id = $1)
                 UPDATE {table} t SET run_id = n.id FROM n
                 WHERE t.run_source = n.path AND t.run_instance = n.instance_id
                   AND t.run_attempt IS NOT DISTINCT FROM n.attempt AND t.run_nth = n.nth AND t.run_id <> n.id {keep_notes}"
            ),
            &[&source_id],
        )?;
    }
    Ok(())
}
