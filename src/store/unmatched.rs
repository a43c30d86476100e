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
//!
//! Each backend reads the rows (the evaluations no run took; an instance's runs, each with its
//! prediction's model, and its evaluations); what is decided of them is decided here.

use super::link::{self, Candidate, Reason, RunSide};
use crate::error::StoreError;
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
    /// Its evaluation run id or summary's file name (which may name the model), if any.
    pub label: Option<String>,
    pub resolved: Option<bool>,
    pub tests: i64,
    pub format: String,
    pub source: String,
    pub why: Why,
}

/// The columns of an [`Orphan`] candidate (outcomes `o` joined to their sources `s`), in the
/// order [`Orphan::from_row`] reads them.
pub const ORPHAN_COLUMNS: &str =
    "o.id, o.instance_id, o.model, o.resolved, o.test_count, o.format, s.path, o.run_label";

impl Orphan {
    /// A row of [`ORPHAN_COLUMNS`], its `why` to be decided.
    pub fn from_row(r: &dyn super::cells::Cells) -> Result<Orphan, StoreError> {
        Ok(Orphan {
            outcome_id: r.int(0)?,
            instance_id: r.text(1)?,
            model: r.opt_text(2)?,
            resolved: r.opt_flag(3)?,
            tests: r.int(4)?,
            format: r.text(5)?,
            source: r.text(6)?,
            label: r.opt_text(7)?,
            why: Why::NoTrajectory,
        })
    }
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

/// An instance's runs (each with its prediction's model among its models) and its evaluations.
pub(super) type Instance = (Vec<RunSide>, Vec<Candidate>);

/// Of the evaluations no run took (`candidates`, by instance and source), those that matched no
/// run, each with why; `instance(id)` reads an instance's runs (each with its prediction's model
/// among its models) and evaluations.
pub(super) fn orphans(
    candidates: Vec<Orphan>,
    instance: &mut dyn FnMut(&str) -> Result<Instance, StoreError>,
) -> Result<Vec<Orphan>, StoreError> {
    let mut judged: HashMap<String, HashMap<i64, Option<Why>>> = HashMap::new();
    let mut out = Vec::new();
    for mut orphan in candidates {
        if !judged.contains_key(&orphan.instance_id) {
            let (runs, outcomes) = instance(&orphan.instance_id)?;
            judged.insert(orphan.instance_id.clone(), judge_instance(&runs, &outcomes));
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
fn judge_instance(runs: &[RunSide], outcomes: &[Candidate]) -> HashMap<i64, Option<Why>> {
    let shared = runs.iter().filter(|r| r.best_attempt != Some(false)).count();
    outcomes
        .iter()
        .map(|c| {
            let reasons: Vec<Reason> = runs.iter().filter_map(|r| link::judge(r, c, shared).err()).collect();
            let every_other_trial = !reasons.is_empty() && reasons.iter().all(|r| *r == Reason::OtherTrial);
            let why = if runs.is_empty() || every_other_trial {
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
        .collect()
}

impl Joined {
    /// The counts of `runs`, `runs_with_verdict` and the evaluations that matched no run.
    pub(super) fn of(runs: i64, runs_with_verdict: i64, orphans: &[Orphan]) -> Joined {
        let count = |why: Why| orphans.iter().filter(|o| o.why == why).count();
        Joined {
            runs,
            runs_with_verdict,
            unmatched: orphans.len(),
            other_model: count(Why::OtherModel),
            patch_differs: count(Why::PatchDiffers),
            no_trajectory: count(Why::NoTrajectory),
            nothing_ties: count(Why::NothingTies),
        }
    }
}
