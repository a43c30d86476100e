//! Onset and blame: where a failed run went wrong and whose failure it is (failure-modes.md,
//! "Failure onset and blame"), judged beside a label's modes by every rater.

use super::{Evidence, VerdictError};
use serde::{Deserialize, Serialize};

/// Whose failure a failed run is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Blame {
    /// The agent's own error: diagnosis, place, an unfinished change, its budget, its output.
    Agent,
    /// The task or its tests are defective.
    Task,
    /// The harness or infrastructure broke the run.
    Environment,
}

impl Blame {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(s: &str) -> Option<Blame> {
        s.parse().ok()
    }

    /// The three values in their order.
    pub const ALL: [Blame; 3] = [Blame::Agent, Blame::Task, Blame::Environment];
}

/// The decisive error step of a failed run: the earliest step whose action, or the reasoning
/// the action carried out, put the run on the path to its failure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Onset {
    /// `None`: no onset (the failure is not the agent's, or too little to go on: `rationale`
    /// says which).
    pub step: Option<usize>,
    /// The steps the onset rests on, with what to look at there.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// 0.0–1.0.
    #[serde(default)]
    pub confidence: f64,
    /// One line in the taxonomy's terms.
    #[serde(default)]
    pub rationale: String,
    /// Evidence the judgement could not use (no gold patch, no per-test results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// Whose failure it is, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlameVerdict {
    /// `None`: not a failure (a resolved run), or not known.
    pub value: Option<Blame>,
    #[serde(default)]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

impl BlameVerdict {
    pub fn of(value: Blame, reason: impl Into<String>) -> BlameVerdict {
        BlameVerdict { value: Some(value), reason: reason.into(), evidence: Vec::new() }
    }
}

/// Onset and blame as stored beside a label (one JSON value, either part absent when the rater
/// did not judge it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onset: Option<Onset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blame: Option<BlameVerdict>,
}

impl Judgement {
    pub fn is_empty(&self) -> bool {
        self.onset.is_none() && self.blame.is_none()
    }

    /// The stored text (`None` when nothing was judged).
    pub fn to_json(&self) -> Option<String> {
        (!self.is_empty()).then(|| serde_json::to_string(self).unwrap_or_else(|_| "{}".into()))
    }

    /// Read back from its stored text; text this trajan cannot read is nothing judged.
    pub fn from_json(text: Option<&str>) -> Judgement {
        text.and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default()
    }

    /// Whether onset and blame fit a run of `steps` steps: the onset step and evidence within
    /// the run, a confidence within 0.0 to 1.0, and an onset step only when the blame (if
    /// judged) is the agent's.
    pub fn check(&self, steps: usize) -> Result<(), VerdictError> {
        let out_of_range = |what: &str, bad: usize| {
            VerdictError(match steps {
                0 => format!("{what} {bad} is out of range: the run has no steps"),
                n => format!("{what} {bad} is out of range: the run has steps 0 to {}", n - 1),
            })
        };
        if let Some(o) = &self.onset {
            if let Some(s) = o.step.filter(|&s| s >= steps) {
                return Err(out_of_range("onset step", s));
            }
            if let Some(bad) = o.evidence.iter().map(|e| e.step).find(|&s| s >= steps) {
                return Err(out_of_range("onset evidence step", bad));
            }
            if !(0.0..=1.0).contains(&o.confidence) {
                return Err(VerdictError(format!("onset confidence {} is outside 0.0 to 1.0", o.confidence)));
            }
            let blamed = self.blame.as_ref().and_then(|b| b.value);
            if let (Some(s), Some(b @ (Blame::Task | Blame::Environment))) = (o.step, blamed) {
                return Err(VerdictError(format!(
                    "onset step {s} is given with blame {}: an onset is the agent's error, given only when the blame is the agent's",
                    b.name()
                )));
            }
        }
        if let Some(bad) = self.blame.iter().flat_map(|b| &b.evidence).map(|e| e.step).find(|&s| s >= steps) {
            return Err(out_of_range("blame evidence step", bad));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judgement_round_trips_and_nothing_judged_stores_nothing() {
        assert_eq!(Judgement::default().to_json(), None);
        let j = Judgement {
            onset: Some(Onset {
                step: Some(4),
                evidence: vec![Evidence { step: 4, note: "edit".into() }],
                confidence: 0.6,
                rationale: "the first edit in the wrong function".into(),
                missing: vec![],
            }),
            blame: Some(BlameVerdict::of(Blame::Agent, "its own edit")),
        };
        let text = j.to_json().unwrap_or_default();
        assert!(text.contains(r#""value":"agent""#), "{text}");
        assert_eq!(Judgement::from_json(Some(&text)), j);
        assert_eq!(Judgement::from_json(Some("not json")), Judgement::default());
    }

    #[test]
    fn checks_steps_confidence_and_that_an_onset_is_the_agents() {
        let onset = |step: usize| Onset { step: Some(step), confidence: 0.5, ..Onset::default() };
        let ok = Judgement { onset: Some(onset(2)), blame: Some(BlameVerdict::of(Blame::Agent, "")) };
        assert_eq!(ok.check(3), Ok(()));
        let e = ok.check(2).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(e, "onset step 2 is out of range: the run has steps 0 to 1");
        let task = Judgement { onset: Some(onset(1)), blame: Some(BlameVerdict::of(Blame::Task, "")) };
        assert!(task.check(3).is_err_and(|e| e.0.contains("only when the blame is the agent's")));
        let unknown =
            Judgement { onset: Some(Onset { step: None, ..onset(0) }), blame: Some(BlameVerdict::of(Blame::Task, "")) };
        assert_eq!(unknown.check(3), Ok(()));
        let bad = Judgement { onset: Some(Onset { confidence: 1.5, ..onset(0) }), blame: None };
        assert!(bad.check(3).is_err_and(|e| e.0.contains("outside")));
    }
}
