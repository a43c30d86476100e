//! Reference labels in the shape of a labelled development set (`fixtures/labelled/labels.json`):
//! one entry per run, naming its file, and for every mode of the taxonomy whether it is present,
//! how sure the reviewer is (high, medium, low), the evidence steps and a rationale. Read here for
//! `import-labels` (as the human rater `reference`) and for `bench validity`, which scores a
//! classifier against it.

use super::export::ExportedLabel;
use crate::label::{Evidence, ExitCategory, Label, ModeVerdict, Provenance, Source};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The rater reference labels are imported as.
pub const RATER: &str = "reference";
/// The taxonomy the reference labels: the four built-in modes.
pub const TAXONOMY: (&str, &str) = ("refactoring", "1.0");
/// No time is given in the file: the labels are dated at the epoch (so importing the file again
/// finds them present).
const UNDATED: &str = "1970-01-01T00:00:00.000Z";
/// A run's label with the onset and blame of an onset reference is dated a second later: the
/// next label of the rater's history, after the one of its modes alone (so a database that
/// imported the set without them takes them as that rater's newer label).
const JUDGED: &str = "1970-01-01T00:00:01.000Z";

/// One run of the set, as the reviewer labelled it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    /// The run's file, relative to the set's folder.
    pub file: String,
    pub instance_id: String,
    /// The model as the set's folders spell it (`openrouter_qwen_qwen3-coder`).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub steps: Option<usize>,
    #[serde(default)]
    pub resolved: Option<bool>,
    /// Every mode of the taxonomy, present or not.
    pub modes: BTreeMap<String, Judgement>,
    #[serde(default)]
    pub unclassified_reason: Option<String>,
    #[serde(default)]
    pub exit_category: Option<String>,
}

/// The reviewer's judgement of one mode on one run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Judgement {
    pub present: bool,
    /// high, medium or low.
    pub confidence: String,
    #[serde(default)]
    pub evidence_steps: Vec<usize>,
    #[serde(default)]
    pub rationale: String,
}

/// A confidence as a number: high 0.9, medium 0.6, low (or anything else) 0.3.
pub fn weight(confidence: &str) -> f64 {
    match confidence.to_ascii_lowercase().as_str() {
        "high" => 0.9,
        "medium" => 0.6,
        _ => 0.3,
    }
}

impl Judgement {
    /// The confidence as a number ([`weight`]).
    pub fn weight(&self) -> f64 {
        weight(&self.confidence)
    }
}

impl Entry {
    /// The modes the reviewer found present.
    pub fn present(&self) -> impl Iterator<Item = &str> {
        self.modes.iter().filter(|(_, j)| j.present).map(|(m, _)| m.as_str())
    }

    /// The entry as a reviewer's label of the run it names (`run_id` set on import).
    pub fn label(&self) -> Label {
        let modes: Vec<ModeVerdict> = self
            .modes
            .iter()
            .filter(|(_, j)| j.present)
            .map(|(mode, j)| ModeVerdict {
                mode: mode.clone(),
                confidence: j.weight(),
                evidence: j.evidence_steps.iter().map(|&step| Evidence { step, note: String::new() }).collect(),
                rationale: j.rationale.clone(),
            })
            .collect();
        let summary = match (&self.unclassified_reason, modes.is_empty()) {
            (Some(why), true) => why.clone(),
            _ => modes.iter().map(|m| m.mode.clone()).collect::<Vec<_>>().join(", "),
        };
        Label {
            run_id: 0,
            source: Source::Human,
            rater: RATER.into(),
            taxonomy: TAXONOMY.0.into(),
            taxonomy_version: TAXONOMY.1.into(),
            modes,
            considered: Vec::new(),
            exit_category: ExitCategory::classify(self.exit_category.as_deref(), true).name().into(),
            summary,
            provenance: Provenance::default(),
            judgement: Default::default(),
        }
    }

    /// The entry as a record of a label export, for `import-labels`: matched to its run by
    /// instance and model (folder spellings of a model, `org_model`, match `org/model`).
    pub fn record(&self, position: usize) -> ExportedLabel {
        ExportedLabel {
            format_version: 1,
            label_id: position as i64 + 1,
            instance_id: Some(self.instance_id.clone()),
            run_model: self.model.clone(),
            run_agent: None,
            run_attempt: None,
            created_at: UNDATED.into(),
            note: None,
            current: true,
            label: self.label(),
        }
    }

    /// [`Entry::record`] with the onset and blame of an onset reference, dated a second later
    /// ([`JUDGED`]).
    pub fn record_judged(&self, position: usize, judgement: crate::label::Judgement) -> ExportedLabel {
        let mut r = self.record(position);
        r.created_at = JUDGED.into();
        r.label.judgement = judgement;
        r
    }
}

/// Whether a JSON value is a reference set: an array of entries whose `modes` are objects of
/// judgements (`present`, `confidence`) and which name their `file`.
pub fn is_reference(items: &[serde_json::Value]) -> bool {
    items.first().is_some_and(|e| {
        e.get("file").is_some_and(serde_json::Value::is_string)
            && e.get("modes")
                .and_then(serde_json::Value::as_object)
                .is_some_and(|m| m.values().all(|j| j.get("present").is_some_and(serde_json::Value::is_boolean)))
    })
}

/// Every entry of a reference set, each read on its own (`item N: why` for one that is not).
pub fn read(items: Vec<serde_json::Value>) -> Vec<(String, Result<Entry, String>)> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| (format!("item {}", i + 1), serde_json::from_value::<Entry>(v).map_err(|e| e.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_becomes_a_reviewers_label_of_its_present_modes() {
        let v = serde_json::json!([{
            "file": "runs/m/x.traj", "instance_id": "a__b-1", "model": "org_model", "steps": 4,
            "modes": {
                "missed_edit_location": {"present": true, "confidence": "medium", "evidence_steps": [1, 3],
                                         "rationale": "never opened b.py"},
                "context_flooding": {"present": false, "confidence": "high", "evidence_steps": [], "rationale": "no"}
            },
            "unclassified_reason": null, "exit_category": "Submitted"
        }]);
        let items = v.as_array().cloned().unwrap_or_default();
        assert!(is_reference(&items));
        let entries = read(items);
        let Ok(e) = &entries[0].1 else { panic!("{:?}", entries[0]) };
        let l = e.label();
        assert_eq!((l.source, l.rater.as_str()), (Source::Human, RATER));
        assert_eq!(l.modes.len(), 1);
        assert_eq!((l.modes[0].mode.as_str(), l.modes[0].confidence), ("missed_edit_location", 0.6));
        assert_eq!(l.modes[0].evidence.iter().map(|e| e.step).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(e.record(0).run_model.as_deref(), Some("org_model"));
        // A label export is not a reference set.
        assert!(!is_reference(&[serde_json::json!({"label_id": 1, "modes": []})]));
    }
}
