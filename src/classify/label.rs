//! A label: which failure modes a rater (the heuristic, an LLM, a human) gives a run, with the
//! confidence, the evidence steps and the rationale of each, and what produced it.

use serde::{Deserialize, Serialize};

/// The answer when no mode fits. Not a mode of any taxonomy: a label with no modes.
pub const UNCLASSIFIED: &str = "unclassified";

/// Modes below this confidence are kept as "considered" (shown to reviewers with their
/// evidence) but not assigned: precision comes first.
pub const ASSIGN_THRESHOLD: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Heuristic,
    Llm,
    Human,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Heuristic, Source::Llm, Source::Human];
    pub fn name(self) -> &'static str {
        match self {
            Source::Heuristic => "heuristic",
            Source::Llm => "llm",
            Source::Human => "human",
        }
    }
    pub fn from_name(s: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// A step a verdict rests on, with what to look at there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub step: usize,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeVerdict {
    pub mode: String,
    /// 0.0–1.0.
    pub confidence: f64,
    pub evidence: Vec<Evidence>,
    pub rationale: String,
}

/// What produced a label, so it can be reproduced and costed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The LLM's model name; the classifier's version for the heuristic.
    pub model: Option<String>,
    /// blake3 of what the rater saw: the prompt (LLM) or the signals (heuristic). A label with
    /// the same hash is not made twice.
    pub input_hash: Option<String>,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    pub cost: Option<f64>,
    pub latency_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub run_id: i64,
    pub source: Source,
    /// Who: `heuristic`, the LLM's model, a reviewer's name.
    pub rater: String,
    pub taxonomy: String,
    pub taxonomy_version: String,
    /// Assigned modes (confidence at or above [`ASSIGN_THRESHOLD`]). Empty: unclassified.
    pub modes: Vec<ModeVerdict>,
    /// Modes weighed and not assigned, with the evidence that was not enough.
    pub considered: Vec<ModeVerdict>,
    /// How the run ended (cost, format, timeout, API, no patch...), independent of the modes.
    pub exit_category: String,
    /// One line for the run list.
    pub summary: String,
    pub provenance: Provenance,
}

impl Label {
    pub fn is_unclassified(&self) -> bool {
        self.modes.is_empty()
    }

    /// Every evidence step of the assigned modes, then of the considered ones, in step order,
    /// without repeats.
    pub fn evidence_steps(&self) -> Vec<usize> {
        let mut steps: Vec<usize> =
            self.modes.iter().chain(&self.considered).flat_map(|m| m.evidence.iter().map(|e| e.step)).collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }
}
