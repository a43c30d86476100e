//! Labelling in the TUI: who is reviewing, the queues, blind review, and the label being made
//! (the draft) until it is saved.

use crate::classify::taxonomy::Taxonomy;
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
            taxonomy: Taxonomy::preset(crate::classify::taxonomy::DEFAULT)
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

    /// What the run-list filter may read of the labels: blind review hides the classifiers'
    /// labels of runs this reviewer has not labelled from the filter too.
    pub fn label_index(&self) -> crate::tui::filter::LabelIndex {
        self.states
            .iter()
            .map(|(&run, state)| {
                let labels = state
                    .labels
                    .iter()
                    .filter(|(source, _, _)| source.is_human() || !self.blinded(run))
                    .map(|(source, rater, modes)| (source.name().to_string(), rater.clone(), modes.clone()))
                    .collect();
                (run, crate::tui::filter::RunLabels { labels, disputed: state.disagreement })
            })
            .collect()
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
}

impl Default for Draft {
    fn default() -> Draft {
        Draft {
            modes: BTreeSet::new(),
            unclassified: false,
            confidence: 1.0,
            evidence: BTreeSet::new(),
            note: String::new(),
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
