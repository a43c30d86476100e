//! Evaluations that matched no run, and what joined: a harness folder whose trajectories are
//! elsewhere (or lost), a run summary covering a whole benchmark beside a few trajectories, a
//! Harbor trial that kept no trajectory. They are listed (`runs --evaluations`), counted in the
//! ingest summary, and counted in the resolve rates of `stats` (those without a trajectory: the
//! others evaluated a run that is here, or another model's).
//!
//! An evaluation *matched* a run when the join's rules (`link::judge`) accept it for some run
//! of its instance, even if another evaluation fitted that run better (a summary beside a
//! harness folder): it is no orphan. The others are orphans, each with why: no run of its
//! instance is stored (no trajectory), it names another model, its patch differs from the
//! runs' submissions, or nothing ties it to one of several runs.

use super::link::{self, Reason};
use crate::error::StoreError;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use std::collections::HashMap;

/// Why an evaluation matched no run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// No run of its instance is stored.
    NoTrajectory,
    /// It names another model than every run of its instance.
    OtherModel,
    /// Its patch is none of the runs' submissions.
    PatchDiffers,
    /// Several runs share the instance and nothing ties it to one; or the run is a RetryAgent
    /// attempt not submitted.
    NothingTies,
}

impl Why {
    /// The words of the ingest summary and `runs --evaluations`.
    pub fn text(self) -> &'static str {
        match self {
            Why::NoTrajectory => "no trajectory",
            Why::OtherModel => "names another model",
            Why::PatchDiffers => "patch differs",
            Why::NothingTies => "nothing ties it to a run",
        }
    }
}

/// An evaluation that matched no run (`runs --evaluations --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Orphan {
    pub outcome_id: i64,
    pub instance_id: String,
    /// The model it names (a harness folder's, a trial's), if any.
    pub model: Option<String>,
    pub resolved: Option<bool>,
    pub tests: i64,
    pub format: String,
    pub source: String,
    pub why: Why,
}

/// What joined, over the whole database.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Joined {
    pub runs: i64,
    /// Runs whose joined evaluation has a verdict.
    pub runs_with_verdict: i64,
    /// Evaluations that matched no run, and by why.
    pub unmatched: usize,
    pub other_model: usize,
    pub patch_differs: usize,
    pub no_trajectory: usize,
    pub nothing_ties: usize,
}

/// Every evaluation that matched no run, by instance and source.
pub fn orphans(conn: &Connection) -> Result<Vec<Orphan>, StoreError> {
    // Every evaluation no run took, its `why` decided below.
    let candidates: Vec<Orphan> = conn
        .prepare(
            "SELECT o.id, o.instance_id, o.model, o.resolved, o.test_count, o.format, s.path
             FROM outcomes o JOIN sources s ON s.id = o.source_id
             WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.outcome_id = o.id OR r.tests_outcome_id = o.id)
             ORDER BY o.instance_id, s.path, o.id",
        )?
        .query_map([], |r| {
            Ok(Orphan {
                outcome_id: r.get(0)?,
                instance_id: r.get(1)?,
                model: r.get(2)?,
                resolved: r.get(3)?,
                tests: r.get(4)?,
                format: r.get(5)?,
                source: r.get(6)?,
                why: Why::NoTrajectory,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut judged: HashMap<String, HashMap<i64, Option<Why>>> = HashMap::new();
    let mut out = Vec::new();
    for mut orphan in candidates {
        if !judged.contains_key(&orphan.instance_id) {
            judged.insert(orphan.instance_id.clone(), judge_instance(conn, &orphan.instance_id)?);
        }
        let why = judged.get(&orphan.instance_id).and_then(|m| m.get(&orphan.outcome_id)).copied().flatten();
        if let Some(why) = why {
            orphan.why = why;
            out.push(orphan);
        }
    }
    Ok(out)
}

/// For each evaluation of the instance, why it matches no run (`None`: it matches one).
fn judge_instance(conn: &Connection, instance_id: &str) -> Result<HashMap<i64, Option<Why>>, StoreError> {
    let mut runs = link::runs_of(conn, instance_id)?;
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
    let shared = runs.iter().filter(|r| r.best_attempt != Some(false)).count();
    let outcomes = link::outcomes_of(conn, instance_id)?;
    Ok(outcomes
        .iter()
        .map(|c| {
            let reasons: Vec<Reason> = runs.iter().filter_map(|r| link::judge(r, c, shared).err()).collect();
            let why = if runs.is_empty() {
                Some(Why::NoTrajectory)
            } else if reasons.len() < runs.len() {
                None
            } else if reasons.iter().any(|r| matches!(r, Reason::OtherModel(_) | Reason::OtherLabel(_))) {
                Some(Why::OtherModel)
            } else if reasons.contains(&Reason::PatchDiffers) {
                Some(Why::PatchDiffers)
            } else {
                Some(Why::NothingTies)
            };
            (c.id, why)
        })
        .collect())
}

/// Runs, runs with a verdict, and the evaluations that matched no run by why.
pub fn joined(conn: &Connection) -> Result<Joined, StoreError> {
    let (runs, runs_with_verdict): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(o.resolved) FROM runs r LEFT JOIN outcomes o ON o.id = r.outcome_id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let orphans = orphans(conn)?;
    let count = |why: Why| orphans.iter().filter(|o| o.why == why).count();
    Ok(Joined {
        runs,
        runs_with_verdict,
        unmatched: orphans.len(),
        other_model: count(Why::OtherModel),
        patch_differs: count(Why::PatchDiffers),
        no_trajectory: count(Why::NoTrajectory),
        nothing_ties: count(Why::NothingTies),
    })
}

impl super::Store {
    /// The evaluations that matched no run (`runs --evaluations`).
    pub fn orphan_evaluations(&self) -> Result<Vec<Orphan>, StoreError> {
        orphans(&self.conn)
    }

    /// What joined (the ingest summary's verdict line).
    pub fn joined(&self) -> Result<Joined, StoreError> {
        joined(&self.conn)
    }
}
