//! Labelling in the TUI: who is reviewing, the queues, blind review, and the label being made
//! (the draft) until it is saved.

use super::{Effect, RunView, Screen};
use crate::label::taxonomy::Taxonomy;
use crate::model::FailedScope;
use crate::review::{Queue, ReviewState};
use std::collections::{BTreeMap, BTreeSet};

/// The reviewer and what the list knows of every run's labels.
#[derive(Debug)]
pub struct Review {
    /// Empty: no reviewer known; saving says how to name one.
    pub rater: String,
    /// Hide classifier labels of a run until the reviewer has labelled it.
    pub blind: bool,
    pub taxonomy: Taxonomy,
    pub states: BTreeMap<i64, ReviewState>,
    pub queue: Queue,
    /// Which runs the queues, `]` and the statistics count as failed.
    pub scope: FailedScope,
}

impl Default for Review {
    fn default() -> Review {
        Review {
            rater: String::new(),
            blind: true,
            taxonomy: Taxonomy::preset(crate::label::taxonomy::DEFAULT)
                .unwrap_or_else(|| unreachable!("the default taxonomy is embedded")),
            states: BTreeMap::new(),
            queue: Queue::All,
            scope: FailedScope::Failed,
        }
    }
}

impl Review {
    /// Whether this reviewer has labelled the run.
    pub fn mine(&self, run: i64) -> bool {
        self.states.get(&run).is_some_and(|s| s.mine)
    }

    /// Whether classifier labels of the run are hidden from this reviewer.
    pub fn blinded(&self, run: i64) -> bool {
        self.blind && !self.mine(run)
    }

    /// Whether the run has classifier labels that blind review hides from this reviewer.
    pub fn hides_classifiers(&self, run: i64) -> bool {
        self.blinded(run) && self.states.get(&run).is_some_and(|s| s.labels.iter().any(|l| !l.source.is_human()))
    }

    /// What the run-list filter may read of the labels: blind review hides the classifiers'
    /// labels of runs this reviewer has not labelled from the filter too.
    pub fn label_index(&self) -> crate::review::filter::LabelIndex {
        crate::review::filter::label_index(&self.states, |run| self.blinded(run))
    }
}

/// Confidence steps of `+` / `-`.
pub const CONFIDENCE_STEP: f64 = 0.25;

/// The label being made for the open run.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub modes: BTreeSet<String>,
    pub unclassified: bool,
    pub confidence: f64,
    pub evidence: BTreeSet<usize>,
    pub note: String,
    /// The step the reviewer marked as the run's onset.
    pub onset: Option<usize>,
    /// Whose failure the reviewer says it is.
    pub blame: Option<crate::label::Blame>,
}

impl Default for Draft {
    fn default() -> Draft {
        Draft {
            modes: BTreeSet::new(),
            unclassified: false,
            confidence: 1.0,
            evidence: BTreeSet::new(),
            note: String::new(),
            onset: None,
            blame: None,
        }
    }
}

impl Draft {
    /// Something to save: modes, or unclassified.
    pub fn is_ready(&self) -> bool {
        self.unclassified || !self.modes.is_empty()
    }

    pub fn toggle_mode(&mut self, mode: &str) {
        if !self.modes.remove(mode) {
            self.modes.insert(mode.to_string());
            self.unclassified = false;
        }
    }

    pub fn toggle_unclassified(&mut self) {
        self.unclassified = !self.unclassified;
        if self.unclassified {
            self.modes.clear();
        }
    }

    pub fn toggle_evidence(&mut self, step: usize) -> bool {
        if self.evidence.remove(&step) {
            false
        } else {
            self.evidence.insert(step);
            true
        }
    }

    pub fn adjust_confidence(&mut self, up: bool) {
        let c = if up { self.confidence + CONFIDENCE_STEP } else { self.confidence - CONFIDENCE_STEP };
        self.confidence = c.clamp(0.0, 1.0);
    }
}

impl super::App {
    /// What to ask the driver for to know every run's review state.
    pub fn load_review(&self) -> Effect {
        let t = &self.review.taxonomy;
        Effect::LoadReview { taxonomy: t.name.clone(), version: t.version.clone(), rater: self.review.rater.clone() }
    }

    /// The label this reviewer last saved for the run, as the starting draft.
    pub(super) fn draft_from_labels(&self, labels: &[crate::store::labels::LabelRow]) -> Draft {
        let mine = labels.iter().rev().find(|l| l.label.source.is_human() && l.label.rater == self.review.rater);
        let Some(row) = mine else { return Draft::default() };
        let l = &row.label;
        Draft {
            modes: l.modes.iter().map(|m| m.mode.clone()).collect(),
            unclassified: l.modes.is_empty(),
            confidence: l.modes.first().map_or(1.0, |m| m.confidence),
            evidence: l.modes.iter().flat_map(|m| m.evidence.iter().map(|e| e.step)).collect(),
            note: row.note.clone().unwrap_or_default(),
            onset: l.judgement.onset.as_ref().and_then(|o| o.step),
            blame: l.judgement.blame.as_ref().and_then(|b| b.value),
        }
    }

    /// The draft as a label to save, or why it cannot be saved.
    pub(super) fn save_label(&mut self, adjudication: bool) -> Vec<Effect> {
        let Some(run) = self.run.as_ref() else { return Vec::new() };
        if self.review.rater.is_empty() {
            // The draft stays as it is; saved once the name is given.
            self.waiting = Some(super::Waiting::Label { adjudication });
            self.ask_rater();
            return Vec::new();
        }
        if !run.draft.is_ready() {
            self.set_error("nothing to save: toggle modes (1–9) or mark the run unclassified (u)".into());
            return Vec::new();
        }
        let d = &run.draft;
        let has_patch = run.data.submission.as_deref().is_some_and(|s| !s.trim().is_empty());
        let exit = crate::label::ExitCategory::classify(run.data.summary.exit_status.as_deref(), has_patch);
        let note = (!d.note.is_empty()).then(|| d.note.clone());
        let verdict = crate::label::HumanVerdict {
            modes: d.modes.iter().cloned().collect(),
            confidence: d.confidence,
            evidence: d.evidence.iter().copied().collect(),
            note: note.clone(),
            adjudication,
            onset: d.onset,
            blame: d.blame,
        };
        let steps = run.data.steps.len();
        match verdict.into_label(run.run_id(), &self.review.rater, &self.review.taxonomy, steps, exit.name().into()) {
            Ok(label) => vec![Effect::SaveLabel { label: Box::new(label), note }],
            Err(e) => {
                self.set_error(e.0);
                Vec::new()
            }
        }
    }

    /// Open the next failed run in the list (after the open one) this reviewer has not labelled.
    pub(super) fn next_unlabelled(&mut self) -> Vec<Effect> {
        let current = self.run.as_ref().map(RunView::run_id);
        let here = match (self.screen, current) {
            (Screen::Run, Some(id)) => {
                self.list.visible.iter().position(|&i| self.list.runs[i].id == id).map_or(0, |p| p + 1)
            }
            _ => self.list.cursor,
        };
        let n = self.list.visible.len();
        let found = (0..n)
            .map(|k| self.list.visible[(here + k) % n])
            .map(|i| &self.list.runs[i])
            .find(|r| self.review.scope.admits(r.resolved) && !self.review.mine(r.id) && Some(r.id) != current);
        match found.map(|r| r.id) {
            Some(id) => vec![Effect::LoadRun(id)],
            None => {
                let noun = self.review.scope.noun();
                let unknown = match self.review.scope {
                    crate::model::FailedScope::Failed => {
                        self.list.visible.iter().filter(|&&i| self.list.runs[i].resolved.is_none()).count()
                    }
                    crate::model::FailedScope::WithUnknown => 0,
                };
                let hint = match unknown {
                    0 => String::new(),
                    1 => "; 1 run with outcome unknown is not counted (--include-unknown)".to_string(),
                    n => format!("; {n} runs with outcome unknown are not counted (--include-unknown)"),
                };
                self.set_info(format!("every one of the {noun} in the list has your label{hint}"));
                Vec::new()
            }
        }
    }
}
