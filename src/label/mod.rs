//! A label: which failure modes a rater (the heuristic, an LLM, a human) gives a run, with the
//! confidence, the evidence steps and the rationale of each, and what produced it.

mod exit;
mod judgement;
mod rule;
pub mod taxonomy;

pub use exit::ExitCategory;
pub use judgement::{Blame, BlameVerdict, Judgement, Onset};
pub use rule::{NEEDS_GOLD, Rule};

use serde::{Deserialize, Serialize};

/// The answer when no mode fits. Not a mode of any taxonomy: a label with no modes.
pub const UNCLASSIFIED: &str = "unclassified";

/// Modes below this confidence are kept as "considered" (shown to reviewers with their
/// evidence) but not assigned: precision comes first.
pub const ASSIGN_THRESHOLD: f64 = 0.5;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Source {
    Heuristic,
    Llm,
    Human,
    /// A reviewer settling a disagreement: the reference for that run.
    Adjudication,
}

impl Source {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A person (a reviewer or an adjudicator), not a classifier.
    pub fn is_human(self) -> bool {
        matches!(self, Source::Human | Source::Adjudication)
    }
    pub fn from_name(s: &str) -> Option<Source> {
        s.parse().ok()
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
    #[serde(default)]
    pub considered: Vec<ModeVerdict>,
    /// How the run ended (cost, format, timeout, API, no patch...), independent of the modes.
    #[serde(default)]
    pub exit_category: String,
    /// One line for the run list.
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub provenance: Provenance,
    /// Onset and blame (every classifier judges both for a failed run; a reviewer may judge
    /// either or neither).
    #[serde(flatten)]
    pub judgement: Judgement,
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

/// What a reviewer says of a run: modes (with confidence), or unclassified, the steps that show
/// them, a note.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanVerdict {
    pub modes: Vec<String>,
    /// 0.0–1.0, the same for every mode given.
    pub confidence: f64,
    pub evidence: Vec<usize>,
    pub note: Option<String>,
    pub adjudication: bool,
    /// The decisive error step, when the reviewer marked one.
    pub onset: Option<usize>,
    /// Whose failure it is, when the reviewer said.
    pub blame: Option<Blame>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct VerdictError(pub String);

impl HumanVerdict {
    /// The label this verdict makes, checked against the taxonomy and the run's step count.
    pub fn into_label(
        self,
        run_id: i64,
        rater: &str,
        taxonomy: &taxonomy::Taxonomy,
        steps: usize,
        exit_category: String,
    ) -> Result<Label, VerdictError> {
        if self.modes.is_empty() && !self.evidence.is_empty() {
            return Err(VerdictError(
                "evidence steps belong to modes, and an unclassified label has none: put the steps in the note".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.confidence) {
            return Err(VerdictError(format!("confidence {} is outside 0.0 to 1.0", self.confidence)));
        }
        let mut modes: Vec<String> = self.modes;
        modes.sort();
        modes.dedup();
        let note = self.note.clone().unwrap_or_default();
        let verdicts = modes
            .iter()
            .map(|m| ModeVerdict {
                mode: m.clone(),
                confidence: self.confidence,
                evidence: self.evidence.iter().map(|&s| Evidence { step: s, note: String::new() }).collect(),
                rationale: note.clone(),
            })
            .collect::<Vec<_>>();
        let summary = if verdicts.is_empty() { "unclassified".to_string() } else { modes.join(", ") };
        let judgement = Judgement {
            onset: self.onset.map(|step| Onset {
                step: Some(step),
                evidence: vec![Evidence { step, note: String::new() }],
                confidence: self.confidence,
                rationale: String::new(),
                missing: Vec::new(),
            }),
            blame: self.blame.map(|b| BlameVerdict::of(b, String::new())),
        };
        let label = Label {
            run_id,
            source: if self.adjudication { Source::Adjudication } else { Source::Human },
            rater: rater.trim().to_string(),
            taxonomy: taxonomy.name.clone(),
            taxonomy_version: taxonomy.version.clone(),
            modes: verdicts,
            considered: Vec::new(),
            exit_category,
            summary,
            provenance: Provenance::default(),
            judgement,
        };
        label.check(taxonomy, steps)?;
        Ok(label)
    }
}

impl Label {
    /// Whether a reviewer's label is valid for a run of `steps` steps under `taxonomy`: its
    /// modes are the taxonomy's, confidences within 0.0 to 1.0, evidence steps within the run,
    /// and the rater has a name. One check for labels made here and labels imported.
    pub fn check(&self, taxonomy: &taxonomy::Taxonomy, steps: usize) -> Result<(), VerdictError> {
        for m in &self.modes {
            if taxonomy.mode(&m.mode).is_none() {
                let known: Vec<&str> = taxonomy.modes.iter().map(|m| m.id.as_str()).collect();
                return Err(VerdictError(format!(
                    "unknown mode {:?} in {}; the modes are: {}",
                    m.mode,
                    taxonomy.stamp(),
                    known.join(", ")
                )));
            }
            if !(0.0..=1.0).contains(&m.confidence) {
                return Err(VerdictError(format!("confidence {} is outside 0.0 to 1.0", m.confidence)));
            }
            if let Some(bad) = m.evidence.iter().map(|e| e.step).find(|&s| s >= steps) {
                return Err(VerdictError(match steps {
                    0 => format!("step {bad} is out of range: the run has no steps"),
                    n => format!("step {bad} is out of range: the run has steps 0 to {}", n - 1),
                }));
            }
        }
        self.judgement.check(steps)?;
        let rater = self.rater.trim();
        if rater.is_empty() || rater.chars().any(char::is_control) {
            return Err(VerdictError(
                "the rater has no valid name (one without control characters: --rater, [labels] rater, or $USER)"
                    .into(),
            ));
        }
        Ok(())
    }
}
