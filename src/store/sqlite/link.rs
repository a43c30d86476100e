//! Joining runs to outcomes and predictions in SQLite: the rows `store::link` judges, and the
//! joins written back.

use crate::error::StoreError;
use crate::store::link::{Candidate, RunSide, Unjoined, home, joins};
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
        tx.prepare_cached("UPDATE runs SET outcome_id = ?2, prediction_id = ?3 WHERE id = ?1")?.execute(params![
            j.run,
            j.outcome,
            j.prediction
        ])?;
    }
    Ok(())
}

/// The evaluations of the run's instance that the run did not get, each with the reason.
pub fn unjoined(conn: &Connection, run_id: i64) -> Result<Vec<Unjoined>, StoreError> {
    let Some((instance_id, joined, prediction)): Option<(String, Option<i64>, Option<i64>)> = conn
        .query_row("SELECT instance_id, outcome_id, prediction_id FROM runs WHERE id = ?1", [run_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
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
    Ok(crate::store::link::unjoined(run_id, joined, model, runs, &outcomes))
}

fn runs_of(conn: &Connection, instance_id: &str) -> Result<Vec<RunSide>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT r.id, r.model, s.path, s.kind, r.submission, r.best_attempt, r.source_id FROM runs r
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
