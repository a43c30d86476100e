//! Joining runs to outcomes and predictions, and grading test logs, in PostgreSQL: the rows
//! `store::link` and `store::grade` decide on, and what they decide written back.

use super::copy::CopyRows;
use super::{Cells, Pg, enc};
use crate::error::StoreError;
use crate::model::TestCase;
use crate::store::grade::{lists_of, regrade};
use crate::store::link::{Candidate, RunSide, Unjoined, home, joins};
use crate::store::unmatched::{self, Joined, ORPHAN_COLUMNS, Orphan};
use std::collections::HashMap;

/// Grade the instance's test logs, then join each of its runs to the outcome and prediction that
/// fit it best.
pub fn relink_instance(pg: &Pg, instance_id: &str) -> Result<(), StoreError> {
    regrade_instance(pg, instance_id)?;
    let runs = runs_of(pg, instance_id)?;
    if runs.is_empty() {
        return Ok(());
    }
    let outcomes = outcomes_of(pg, instance_id)?;
    let predictions = predictions_of(pg, instance_id)?;
    for j in joins(runs, &outcomes, &predictions) {
        pg.exec(
            "UPDATE runs SET outcome_id = $2, prediction_id = $3, tests_outcome_id = $4 WHERE id = $1
             AND (outcome_id IS DISTINCT FROM $2 OR prediction_id IS DISTINCT FROM $3
                  OR tests_outcome_id IS DISTINCT FROM $4)",
            &[&j.run, &j.outcome, &j.prediction, &j.tests],
        )?;
    }
    Ok(())
}

/// The evaluations of the run's instance that the run did not get, each with the reason.
pub fn unjoined(pg: &Pg, run_id: i64) -> Result<Vec<Unjoined>, StoreError> {
    let Some(row) = pg.opt(
        "SELECT r.instance_id, r.outcome_id, p.model, r.tests_outcome_id FROM runs r
         LEFT JOIN predictions p ON p.id = r.prediction_id WHERE r.id = $1",
        &[&run_id],
    )?
    else {
        return Ok(Vec::new());
    };
    let (instance_id, joined, model, tests) = (row.text(0)?, row.opt_int(1)?, row.opt_text(2)?, row.opt_int(3)?);
    let runs = runs_of(pg, &instance_id)?;
    let outcomes = outcomes_of(pg, &instance_id)?;
    Ok(crate::store::link::unjoined(run_id, joined, tests, model, runs, &outcomes))
}

/// Every evaluation that matched no run, by instance and source (`store::unmatched`).
pub fn orphans(pg: &Pg) -> Result<Vec<Orphan>, StoreError> {
    // Every evaluation no run took (as its verdict or its tests), its `why` decided by
    // `unmatched::orphans`.
    let candidates = pg
        .rows(
            &format!(
                "SELECT {ORPHAN_COLUMNS}
                 FROM outcomes o JOIN sources s ON s.id = o.source_id
                 WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.outcome_id = o.id)
                   AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.tests_outcome_id = o.id)
                 ORDER BY o.instance_id, s.path, o.id"
            ),
            &[],
        )?
        .iter()
        .map(|r| Orphan::from_row(r))
        .collect::<Result<Vec<_>, StoreError>>()?;
    unmatched::orphans(candidates, &mut |instance_id| {
        let mut runs = runs_of(pg, instance_id)?;
        let models: HashMap<i64, String> = pg
            .rows(
                "SELECT r.id, p.model FROM runs r JOIN predictions p ON p.id = r.prediction_id
                 WHERE r.instance_id = $1 AND p.model IS NOT NULL",
                &[&enc(instance_id)],
            )?
            .iter()
            .map(|r| Ok((r.int(0)?, r.text(1)?)))
            .collect::<Result<_, StoreError>>()?;
        for run in &mut runs {
            run.models.extend(models.get(&run.id).cloned());
        }
        Ok((runs, outcomes_of(pg, instance_id)?))
    })
}

/// Runs, runs with a verdict, and the evaluations that matched no run by why.
pub fn joined(pg: &Pg) -> Result<Joined, StoreError> {
    let r =
        pg.one("SELECT COUNT(*), COUNT(o.resolved) FROM runs r LEFT JOIN outcomes o ON o.id = r.outcome_id", &[])?;
    Ok(Joined::of(r.int(0)?, r.int(1)?, &orphans(pg)?))
}

fn runs_of(pg: &Pg, instance_id: &str) -> Result<Vec<RunSide>, StoreError> {
    pg.rows(
        "SELECT r.id, r.model, s.path, s.kind, r.submission, r.best_attempt, r.source_id, r.position FROM runs r
         JOIN sources s ON s.id = r.source_id WHERE r.instance_id = $1 ORDER BY r.id",
        &[&enc(instance_id)],
    )?
    .iter()
    .map(|r| {
        Ok(RunSide {
            id: r.int(0)?,
            unit: r.int(6)?,
            models: r.opt_text(1)?.into_iter().collect(),
            home: home(&r.text(2)?, &r.text(3)?, instance_id),
            submission: r.opt_text(4)?,
            best_attempt: r.opt_flag(5)?,
            position: r.int(7)?,
        })
    })
    .collect()
}

fn outcomes_of(pg: &Pg, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    pg.rows(
        "SELECT o.id, o.model, o.run_label, s.path, s.kind, o.test_count + (o.log IS NOT NULL)::int, o.patch,
                o.resolved IS NOT NULL, o.source_id, o.format
         FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.instance_id = $1 ORDER BY o.id",
        &[&enc(instance_id)],
    )?
    .iter()
    .map(|r| {
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
    })
    .collect()
}

fn predictions_of(pg: &Pg, instance_id: &str) -> Result<Vec<Candidate>, StoreError> {
    pg.rows(
        "SELECT p.id, p.model, s.path, s.kind, p.patch, p.source_id FROM predictions p
         JOIN sources s ON s.id = p.source_id WHERE p.instance_id = $1 ORDER BY p.id",
        &[&enc(instance_id)],
    )?
    .iter()
    .map(|r| {
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
    })
    .collect()
}

/// Grade (or ungrade) every outcome of the instance that carries a test log without a verdict.
fn regrade_instance(pg: &Pg, instance_id: &str) -> Result<(), StoreError> {
    let logs = pg.rows(
        "SELECT id, logged, resolved FROM outcomes WHERE instance_id = $1 AND logged IS NOT NULL",
        &[&enc(instance_id)],
    )?;
    if logs.is_empty() {
        return Ok(());
    }
    let lists = pg
        .opt(
            "SELECT fail_to_pass, pass_to_pass FROM tasks WHERE instance_id = $1
             AND (fail_to_pass IS NOT NULL OR pass_to_pass IS NOT NULL) ORDER BY id DESC LIMIT 1",
            &[&enc(instance_id)],
        )?
        .map(|r| Ok::<_, StoreError>(lists_of(r.opt_text(0)?, r.opt_text(1)?)))
        .transpose()?;
    for row in logs {
        let id = row.int(0)?;
        let Some((resolved, tests)) = regrade(&row.text(1)?, row.opt_flag(2)?, lists.as_ref()) else { continue };
        pg.exec("DELETE FROM tests WHERE outcome_id = $1", &[&id])?;
        insert_tests(pg, id, &tests)?;
        pg.exec(
            "UPDATE outcomes SET resolved = $2, test_count = $3 WHERE id = $1",
            &[&id, &resolved.map(i64::from), &(tests.len() as i64)],
        )?;
    }
    Ok(())
}

/// An outcome's test rows.
pub(super) fn insert_tests(pg: &Pg, outcome_id: i64, tests: &[TestCase]) -> Result<(), StoreError> {
    if tests.is_empty() {
        return Ok(());
    }
    let mut rows = CopyRows::default();
    for t in tests {
        rows.int(outcome_id)
            .text(&t.name)
            .opt_text(t.group.map(|g| g.name()))
            .int(i64::from(t.passed))
            .opt_text(t.message.as_deref())
            .end();
    }
    pg.copy_in("COPY tests (outcome_id, name, grp, passed, message) FROM STDIN", rows.data())
}
