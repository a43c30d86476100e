//! Runs compared, composed once for the CLI (`trajan compare`, `--json`) and the TUI's
//! comparison screen: the runs are read from the store as the run view reads them; the
//! alignment, the divergences and the patches come from [`crate::analysis::compare`]; what each
//! run did in sum (files viewed and edited, tests run, labels) from the runs' lines.

use super::onset::{Judged, Judges};
use crate::analysis::compare::{self, Divergence, FilePresence, Kind, Row, Signature, StepFacts};
use crate::analysis::paths::repo_relative;
use crate::error::StoreError;
use crate::store::Store;
use crate::store::browse::{EditLine, RunData, StepLine};
use crate::store::read::RunSummary;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// The runs `ids`, in this order, read and compared.
pub fn compare(store: &Store, ids: &[i64]) -> Result<Comparison, StoreError> {
    let runs = ids.iter().map(|&id| store.run_data(id)).collect::<Result<Vec<_>, _>>()?;
    Ok(Comparison::build(runs))
}

/// The warning when the runs `ids` are not all of one task ([`instances_warning`]).
pub fn warning(store: &Store, ids: &[i64]) -> Result<Option<String>, StoreError> {
    let summaries = ids.iter().map(|&id| store.run_summary(id)).collect::<Result<Vec<_>, _>>()?;
    Ok(instances_warning(summaries.iter().map(|s| s.instance_id.as_str())))
}

/// Runs side by side; the stable shape of `compare --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<ComparedRun>,
    /// One row per aligned step: per run, the step's index, or null where the run took no
    /// such step.
    pub rows: Vec<Vec<Option<i64>>>,
    /// Stretches of rows where the runs went different ways (`row` the divergence point, `end`
    /// one past the stretch).
    pub divergences: Vec<Divergence>,
    /// Whether the task's gold patch is known (and compared in `patches`).
    pub gold_patch: bool,
    /// Per file any patch touches: which runs' submissions (and the gold patch) touch it, and
    /// each distinct hunk with who made it.
    pub patches: Vec<FilePresence>,
    /// The rows as positions in each run's step list (what the views index).
    #[serde(skip)]
    pub positions: Vec<Row>,
    /// Per row: every run took the same step.
    #[serde(skip)]
    pub agreed: Vec<bool>,
}

impl Comparison {
    /// The warning when the runs are not all of one task ([`instances_warning`]).
    pub fn instances_warning(&self) -> Option<String> {
        instances_warning(self.runs.iter().map(|r| r.summary.instance_id.as_str()))
    }

    /// The divergence whose stretch holds `row`.
    pub fn divergence_of(&self, row: usize) -> Option<&Divergence> {
        let at = self.divergences.partition_point(|d| d.end <= row);
        self.divergences.get(at).filter(|d| d.row <= row)
    }
}

/// One run of a comparison: its summary row.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedRun {
    #[serde(flatten)]
    pub summary: RunSummary,
    /// Files it looked at (paths in the repository), in order first seen.
    pub files_viewed: Vec<String>,
    /// Files its applied edits changed (paths in the repository), in order first changed.
    pub files_edited: Vec<String>,
    /// Steps that ran tests.
    pub tests_run: usize,
    /// Modes of the classifiers' latest labels (heuristic, LLM).
    pub classifier_modes: Vec<String>,
    /// Modes of the reviewers' latest labels and adjudications.
    pub reviewer_modes: Vec<String>,
    /// The run's onset step and blame, from its adjudication, else its LLM label, else its
    /// heuristic label ([`super::onset::pick`] with no reviewer); `judged_by` names that label
    /// (`heuristic`, `llm:MODEL`, `adjudication:NAME`).
    pub onset: Option<usize>,
    pub blame: Option<crate::label::Blame>,
    pub judged_by: Option<String>,
    /// Every current label's onset and blame (oldest first), the reviewers' too.
    pub judgements: Vec<Judged>,
    #[serde(skip)]
    pub steps: Vec<StepLine>,
    #[serde(skip)]
    pub edits: Vec<EditLine>,
    #[serde(skip)]
    pub signatures: Vec<Signature>,
}

/// When runs of more than one instance are compared: which, and that the gold patch is left
/// out (whose task's would it be?). Raw instance ids: sanitize before a terminal.
pub fn instances_warning<'a>(instance_ids: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut distinct: Vec<&str> = Vec::new();
    for id in instance_ids {
        if !distinct.contains(&id) {
            distinct.push(id);
        }
    }
    (distinct.len() > 1).then(|| {
        format!("runs of {} different instances, the gold patch is left out: {}", distinct.len(), distinct.join(", "))
    })
}

impl Comparison {
    /// Compare runs already read.
    pub fn build(runs: Vec<RunData>) -> Comparison {
        let mut signatures: Vec<Vec<Signature>> = runs.iter().map(signatures).collect();
        compare::unify_files(&mut signatures);
        let positions = compare::align(&signatures);
        let divergences = compare::divergences(&positions, &signatures);
        let agreed = positions.iter().map(|row| compare::agreed(row, &signatures)).collect();
        let rows = positions
            .iter()
            .map(|row| {
                row.iter().zip(&runs).map(|(cell, run)| cell.and_then(|i| run.steps.get(i)).map(|s| s.index)).collect()
            })
            .collect();
        // The gold patch only when every run is of one task.
        let one_task = runs.windows(2).all(|w| w[0].summary.instance_id == w[1].summary.instance_id);
        let gold = runs
            .first()
            .filter(|_| one_task)
            .and_then(|r| r.task.as_ref())
            .and_then(|t| t.gold_patch.as_deref())
            .filter(|g| !g.trim().is_empty());
        let submissions: Vec<Option<&str>> =
            runs.iter().map(|r| r.submission.as_deref().filter(|s| !s.trim().is_empty())).collect();
        let patches = compare::compare_patches(&submissions, gold);
        let gold_patch = gold.is_some();
        let compared = runs.into_iter().zip(signatures).map(|(run, sigs)| compared(run, sigs)).collect();
        Comparison { runs: compared, rows, divergences, gold_patch, patches, positions, agreed }
    }
}

/// Each step's signature, with the file its edits changed.
fn signatures(run: &RunData) -> Vec<Signature> {
    let mut edited: HashMap<i64, &str> = HashMap::new();
    for e in &run.edits {
        if let Some(step) = e.step {
            edited.entry(step).or_insert(e.path.as_str());
        }
    }
    run.steps
        .iter()
        .map(|s| {
            compare::signature(&StepFacts {
                tool: s.tool.as_deref(),
                head: &s.action_head,
                flags: s.flags,
                edited: edited.get(&s.index).copied(),
            })
        })
        .collect()
}

fn compared(run: RunData, signatures: Vec<Signature>) -> ComparedRun {
    let mut viewed: Vec<String> = Vec::new();
    for s in signatures.iter().filter(|s| s.kind == Kind::View) {
        if let Some(f) = s.file.as_ref().filter(|f| !viewed.contains(f)) {
            viewed.push(f.clone());
        }
    }
    let mut edited: Vec<String> = Vec::new();
    for e in run.edits.iter().filter(|e| e.step.is_some() && !e.is_rejected()) {
        let name = repo_relative(&e.path, None);
        if !edited.contains(&name) {
            edited.push(name);
        }
    }
    let modes = |human: bool| -> Vec<String> {
        let set: BTreeSet<String> = run
            .labels
            .iter()
            .filter(|l| l.label.source.is_human() == human)
            .flat_map(|l| l.label.modes.iter().map(|m| m.mode.clone()))
            .collect();
        set.into_iter().collect()
    };
    let judgements: Vec<Judged> = run.labels.iter().map(|l| Judged::of(&l.label)).collect();
    let picked = super::onset::pick(&judgements, None, false);
    let judged_by = picked.map(|(_, l)| match l.source.name() {
        name if name == l.rater => name.to_string(),
        name => format!("{name}:{}", l.rater),
    });
    ComparedRun {
        onset: picked.and_then(|(_, l)| l.onset_step()),
        blame: picked.and_then(|(_, l)| l.blame()),
        judged_by,
        judgements,
        files_viewed: viewed,
        files_edited: edited,
        tests_run: run.steps.iter().filter(|s| s.flags.test_run).count(),
        classifier_modes: modes(false),
        reviewer_modes: modes(true),
        summary: run.summary,
        steps: run.steps,
        edits: run.edits,
        signatures,
    }
}
