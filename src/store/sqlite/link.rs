//! Joining runs to outcomes and predictions in SQLite: the rows `store::link` judges, and the
//! joins written back.

use crate::error::StoreError;
use crate::store::link::{Candidate, RunSide, Unjoined, home, joins};
use crate::store::unmatched::{self, Joined, ORPHAN_COLUMNS, Orphan};
use rusqlite::{Connection, OptionalExtension, params};

/// Grade the instance's test logs, then join each of its runs to the outcome and prediction that
/// fit it best (`store::link`).
pub fn relink_instance(tx: &Connection, instance_id: &str) -> Result<(), StoreError> {
    super::grade::regrade_instance(tx, instance_id)?;
    let runs = runs_of(tx, instance_id)?;
    if runs.is_empty() {
        return Ok(());
    }
    let outcomes = outcomes_of(tx, instance_id)?;
    let predictions = predictions_of(tx, instance_id)?;
    for j in joins(runs, &outcomes, &predictions) {
        tx.prepare_cached("UPDATE runs SET outcome_id = ?2, prediction_id = ?3, tests_outcome_id = ?4 WHERE id = ?1")?
            .execute(params![j.run, j.outcome, j.prediction, j.tests])?;
    }
    Ok(())
}

/// The evaluations of the run's instance that the run did not get, each with the reason.
pub fn unjoined(conn: &Connection, run_id: i64) -> Result<Vec<Unjoined>, StoreError> {
    type Joins = (String, Option<i64>, Option<i64>, Option<i64>);
    let Some((instance_id, joined, prediction, tests)): Option<Joins> = conn
        .query_row(
            "SELECT instance_id, outcome_id, prediction_id, tests_outcome_id FROM runs WHERE id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?
    else {
        return Ok(Vec::new());
    };
    let model = match prediction {
        Some(p) => {
            conn.query_row("SELECT model FROM predictions WHERE id = ?1", [p], |r| r.get(0)).optional()?.flatten()
        }
        None => None,
    };
    let runs = runs_of(conn, &instance_id)?;
    let outcomes = outcomes_of(conn, &instance_id)?;
    Ok(crate::store::link::unjoined(run_id, joined, tests, model, runs, &outcomes))
}

/// Every evaluation that matched no run, by instance and source (`store::unmatched`).
pub fn orphans(conn: &Connection) -> Result<Vec<Orphan>, StoreError> {
    // Every evaluation no run took, its `why` decided by `unmatched::orphans`. The outcomes
    // runs took are gathered once (SQLite builds an index of them): `NOT EXISTS` on either
    // column scanned every run per outcome (no index on them), minutes at 100,000 runs.
    let mut stmt = conn.prepare(&format!(
        "SELECT {ORPHAN_COLUMNS}
         FROM outcomes o JOIN sources s ON s.id = o.source_id
         WHERE o.id NOT IN (SELECT outcome_id FROM runs WHERE outcome_id IS NOT NULL
                            UNION SELECT tests_outcome_id FROM runs WHERE tests_outcome_id IS NOT NULL)
         ORDER BY o.instance_id, s.path, o.id"
    ))?;
    let mut candidates: Vec<Orphan> = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        candidates.push(Orphan::from_row(r)?);
    }
    unmatched::orphans(candidates, &mut |instance_id| {
        let mut runs = runs_of(conn, instance_id)?;
        for run in &mut runs {
            let model: Option<String> = conn
                .query_row(
                    "SELECT p.model FROM runs r JOIN predictions p ON p.id = r.prediction_id WHERE r.id = ?1",
                    params![run.id],
                    |r| r.get(0),
                )
                .optional()?
                .flatten();
            run.models.extend(model);
        }
        Ok((runs, outcomes_of(conn, instance_id)?))
    })
}

/// Runs, runs with a verdict, and the evaluations that matched no run by why.
pub fn joined(conn: &Connection) -> Result<Joined, StoreError> {
    let (runs, runs_with_verdict): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(o.resolved) FROM runs r LEFT JOIN outcomes o ON o.id = r.outcome_id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Joined::of(runs, runs_with_verdict, &orphans(conn)?))
}

fn runs_of(conn: &Connection, instance_id: &str) -> Result<Vec<RunSide>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT r.id, r.model, s.path, s.kind, r.submission, r.best_attempt, r.source_id, r.position FROM runs r
             JOIN sources s ON s.id = r.source_id WHERE r.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            let path: String = r.get(2)?;
            let kind: String = r.get(3)?;
            Ok(RunSide {
                id: r.get(0)?,
                unit: r.get(6)?,
                models: r.get::<_, Option<String>>(1)?.into_iter().collect(),
                home: home(&path, &kind, instance_id),
                submission: r.get(4)?,
                best_attempt: r.get(5)?,
                position: r.get(7)?,
            })
        })?
        .collect::<Result<_, _>>()?)
}

fn outcomes_of(conn: &Connection, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT o.id, o.model, o.run_label, s.path, s.kind, o.test_count + (o.log IS NOT NULL), o.patch,
                    o.resolved IS NOT NULL, o.source_id, o.format
             FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            let path: String = r.get(3)?;
            let kind: String = r.get(4)?;
            Ok(Candidate {
                id: r.get(0)?,
                model: r.get(1)?,
                label: r.get(2)?,
                home: home(&path, &kind, instance_id),
                detail: r.get(5)?,
                patch: r.get(6)?,
                verdict: r.get(7)?,
                unit: r.get(8)?,
                source: path,
                format: r.get(9)?,
            })
        })?
        .collect::<Result<_, _>>()?)
}

fn predictions_of(conn: &Connection, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT p.id, p.model, s.path, s.kind, p.patch, p.source_id FROM predictions p
             JOIN sources s ON s.id = p.source_id WHERE p.instance_id = ?1",
        )?
        .query_map([instance_id], |r| {
            let path: String = r.get(2)?;
            let kind: String = r.get(3)?;
            Ok(Candidate {
                id: r.get(0)?,
                model: r.get(1)?,
                label: None,
                home: home(&path, &kind, instance_id),
                detail: 0,
                verdict: false,
                patch: r.get(4)?,
                unit: r.get(5)?,
                source: path,
                format: String::new(),
            })
        })?
        .collect::<Result<_, _>>()?)
}
