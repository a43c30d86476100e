//! Joining runs to outcomes and predictions, and grading test logs, on either store: the rows
//! `store::link` and `store::grade` decide on, and what they decide written back.

use super::{Sql, args};
use crate::error::StoreError;
use crate::model::TestCase;
use crate::store::grade::{lists_of, regrade};
use crate::store::link::{Candidate, RunSide, Unjoined, home, joins};
use crate::store::unmatched::{self, Joined, ORPHAN_COLUMNS, Orphan};
use std::collections::HashMap;

/// Grade the instance's test logs, then join each of its runs to the outcome and prediction that
/// fit it best (`store::link`).
pub(in crate::store) fn relink_instance<S: Sql>(sql: &S, instance_id: &str) -> Result<(), StoreError> {
    regrade_instance(sql, instance_id)?;
    let runs = runs_of(sql, instance_id)?;
    if runs.is_empty() {
        return Ok(());
    }
    let outcomes = outcomes_of(sql, instance_id)?;
    let predictions = predictions_of(sql, instance_id)?;
    for j in joins(runs, &outcomes, &predictions) {
        sql.execute(
            "UPDATE runs SET outcome_id = ?2, prediction_id = ?3, tests_outcome_id = ?4 WHERE id = ?1
             AND (outcome_id IS DISTINCT FROM ?2 OR prediction_id IS DISTINCT FROM ?3
                  OR tests_outcome_id IS DISTINCT FROM ?4)",
            &args![j.run, j.outcome, j.prediction, j.tests],
        )?;
    }
    Ok(())
}

/// The evaluations of the run's instance that the run did not get, each with the reason.
pub(super) fn unjoined<S: Sql>(sql: &S, run_id: i64) -> Result<Vec<Unjoined>, StoreError> {
    let Some((instance_id, joined, model, tests)) = sql.opt(
        "SELECT r.instance_id, r.outcome_id, p.model, r.tests_outcome_id FROM runs r
         LEFT JOIN predictions p ON p.id = r.prediction_id WHERE r.id = ?1",
        &args![run_id],
        |r| Ok((r.text(0)?, r.opt_int(1)?, r.opt_text(2)?, r.opt_int(3)?)),
    )?
    else {
        return Ok(Vec::new());
    };
    let runs = runs_of(sql, &instance_id)?;
    let outcomes = outcomes_of(sql, &instance_id)?;
    Ok(crate::store::link::unjoined(run_id, joined, tests, model, runs, &outcomes))
}

/// Every evaluation that matched no run, by instance and source (`store::unmatched`).
pub(super) fn orphans<S: Sql>(sql: &S) -> Result<Vec<Orphan>, StoreError> {
    // Every evaluation no run took (as its verdict or its tests), its `why` decided by
    // `unmatched::orphans`. The outcomes runs took are gathered once (a hashed set): `NOT EXISTS`
    // on either column scanned every run per outcome in SQLite (no index on them), minutes at
    // 100,000 runs.
    let candidates = sql.rows(
        &format!(
            "SELECT {ORPHAN_COLUMNS}
             FROM outcomes o JOIN sources s ON s.id = o.source_id
             WHERE o.id NOT IN (SELECT outcome_id FROM runs WHERE outcome_id IS NOT NULL
                                UNION SELECT tests_outcome_id FROM runs WHERE tests_outcome_id IS NOT NULL)
             ORDER BY o.instance_id, s.path, o.id"
        ),
        &[],
        Orphan::from_row,
    )?;
    unmatched::orphans(candidates, &mut |instance_id| {
        let mut runs = runs_of(sql, instance_id)?;
        let models: HashMap<i64, String> = sql
            .rows(
                "SELECT r.id, p.model FROM runs r JOIN predictions p ON p.id = r.prediction_id
                 WHERE r.instance_id = ?1 AND p.model IS NOT NULL",
                &args![instance_id],
                |r| Ok((r.int(0)?, r.text(1)?)),
            )?
            .into_iter()
            .collect();
        for run in &mut runs {
            run.models.extend(models.get(&run.id).cloned());
        }
        Ok((runs, outcomes_of(sql, instance_id)?))
    })
}

/// Runs, runs with a verdict, and the evaluations that matched no run by why.
pub(super) fn joined<S: Sql>(sql: &S) -> Result<Joined, StoreError> {
    let (runs, with_verdict) = sql.one(
        "SELECT count(*), count(o.resolved) FROM runs r LEFT JOIN outcomes o ON o.id = r.outcome_id",
        &[],
        |r| Ok((r.int(0)?, r.int(1)?)),
    )?;
    Ok(Joined::of(runs, with_verdict, &orphans(sql)?))
}

fn runs_of<S: Sql>(sql: &S, instance_id: &str) -> Result<Vec<RunSide>, StoreError> {
    sql.rows(
        "SELECT r.id, r.model, s.path, s.kind, r.submission, r.best_attempt, r.source_id, r.position FROM runs r
         JOIN sources s ON s.id = r.source_id WHERE r.instance_id = ?1 ORDER BY r.id",
        &args![instance_id],
        |r| {
            Ok(RunSide {
                id: r.int(0)?,
                unit: r.int(6)?,
                models: r.opt_text(1)?.into_iter().collect(),
                home: home(&r.text(2)?, &r.text(3)?, instance_id),
                submission: r.opt_text(4)?,
                best_attempt: r.opt_flag(5)?,
                position: r.int(7)?,
            })
        },
    )
}

fn outcomes_of<S: Sql>(sql: &S, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    sql.rows(
        "SELECT o.id, o.model, o.run_label, s.path, s.kind, o.test_count + CASE WHEN o.log IS NULL THEN 0 ELSE 1 END,
                o.patch, o.resolved IS NOT NULL, o.source_id, o.format
         FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.instance_id = ?1 ORDER BY o.id",
        &args![instance_id],
        |r| {
            let path = r.text(3)?;
            Ok(Candidate {
                id: r.int(0)?,
                model: r.opt_text(1)?,
                label: r.opt_text(2)?,
                home: home(&path, &r.text(4)?, instance_id),
                detail: r.int(5)?,
                patch: r.opt_text(6)?,
                verdict: r.flag(7)?,
                unit: r.int(8)?,
                source: path,
                format: r.text(9)?,
            })
        },
    )
}

fn predictions_of<S: Sql>(sql: &S, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    sql.rows(
        "SELECT p.id, p.model, s.path, s.kind, p.patch, p.source_id FROM predictions p
         JOIN sources s ON s.id = p.source_id WHERE p.instance_id = ?1 ORDER BY p.id",
        &args![instance_id],
        |r| {
            let path = r.text(2)?;
            Ok(Candidate {
                id: r.int(0)?,
                model: r.opt_text(1)?,
                label: None,
                home: home(&path, &r.text(3)?, instance_id),
                detail: 0,
                verdict: false,
                patch: r.opt_text(4)?,
                unit: r.int(5)?,
                source: path,
                format: String::new(),
            })
        },
    )
}

/// Grade (or ungrade) every outcome of the instance that carries a test log without a verdict.
fn regrade_instance<S: Sql>(sql: &S, instance_id: &str) -> Result<(), StoreError> {
    let logs = sql.rows(
        "SELECT id, logged, resolved FROM outcomes WHERE instance_id = ?1 AND logged IS NOT NULL",
        &args![instance_id],
        |r| Ok((r.int(0)?, r.text(1)?, r.opt_flag(2)?)),
    )?;
    if logs.is_empty() {
        return Ok(());
    }
    let lists = sql.opt(
        "SELECT fail_to_pass, pass_to_pass FROM tasks WHERE instance_id = ?1
         AND (fail_to_pass IS NOT NULL OR pass_to_pass IS NOT NULL) ORDER BY id DESC LIMIT 1",
        &args![instance_id],
        |r| Ok(lists_of(r.opt_text(0)?, r.opt_text(1)?)),
    )?;
    for (id, logged, resolved) in logs {
        let Some((resolved, tests)) = regrade(&logged, resolved, lists.as_ref()) else { continue };
        sql.execute("DELETE FROM tests WHERE outcome_id = ?1", &args![id])?;
        insert_tests(sql, id, &tests)?;
        sql.execute(
            "UPDATE outcomes SET resolved = ?2, test_count = ?3 WHERE id = ?1",
            &args![id, resolved, tests.len() as i64],
        )?;
    }
    Ok(())
}

/// An outcome's test rows.
pub(in crate::store) fn insert_tests<S: Sql>(sql: &S, outcome_id: i64, tests: &[TestCase]) -> Result<(), StoreError> {
    let mut cells = Vec::with_capacity(tests.len() * 5);
    for t in tests {
        cells.extend(args![outcome_id, &t.name, t.group.map(|g| g.name()), t.passed, t.message.as_deref()]);
    }
    sql.bulk("tests", &["outcome_id", "name", "grp", "passed", "message"], &cells)
}
