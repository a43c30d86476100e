//! How far a classifier's labels can be trusted: its labels of a labelled set's runs scored
//! against the set's reference judgements (`bench validity`). Per mode precision, recall and F1
//! with bootstrap intervals, coverage, a reliability table by confidence band, and every
//! disagreement with both sides' evidence. Pure: the caller ingests, classifies and matches.

use super::reference_set::Entry;
use crate::agreement::{
    AgreementError, AgreementReport, BootstrapOptions, Coverage, RatingTable, Reference, Table, agreement_report,
};
use crate::label::{Label, ModeVerdict};
use serde::Serialize;

/// The scored rater's column in the agreement table.
pub const CLASSIFIER: &str = "classifier";

/// One run of the set: the reviewer's entry and the classifier's label of the run it names.
#[derive(Debug, Clone)]
pub struct Case {
    pub run_id: i64,
    pub entry: Entry,
    /// `None`: the classifier gave no label (an error, reported beside).
    pub label: Option<Label>,
}

/// Confidence bands of the reliability table: `[low, high)`, the last one closed.
pub const BANDS: [(f64, f64); 5] = [(0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0)];

/// How often the classifier's verdicts in one confidence band name a mode the reference has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub low: f64,
    pub high: f64,
    /// Verdicts in the band (assigned and weighed).
    pub verdicts: usize,
    /// Of those, the ones the reference has present.
    pub right: usize,
    /// `right / verdicts`.
    pub share: Option<f64>,
    /// Whether the band is at or above the assignment threshold (its verdicts are assigned).
    pub assigned: bool,
}

/// Which side named the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Assigned by the classifier, absent in the reference (a false positive).
    ClassifierOnly,
    /// Present in the reference, not assigned by the classifier (a miss).
    ReferenceOnly,
}

/// One side's view of a mode on a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    /// high/medium/low for the reference; 0..1 for the classifier.
    pub confidence: String,
    pub steps: Vec<usize>,
    pub rationale: String,
}

/// A run and mode on which the classifier and the reference differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    pub run_id: i64,
    pub file: String,
    pub instance_id: String,
    pub mode: String,
    pub side: Side,
    /// The classifier's verdict on the mode: assigned, or weighed below the threshold (a miss
    /// may have been weighed), or none.
    pub classifier: Option<View>,
    /// Whether the classifier's verdict was only weighed.
    pub weighed: bool,
    pub reference: View,
}

/// The validity report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validity {
    /// Runs scored (the set's entries with a label).
    pub runs: usize,
    /// Per mode and across modes, from the agreement report (classifier vs reference).
    pub agreement: AgreementReport,
    /// Reference positives per mode, in the agreement report's order.
    pub positives: Vec<(String, usize)>,
    pub coverage: Vec<Coverage>,
    pub reliability: Vec<Band>,
    pub disagreements: Vec<Disagreement>,
}

fn view(v: &ModeVerdict) -> View {
    View {
        confidence: format!("{:.2}", v.confidence),
        steps: v.evidence.iter().map(|e| e.step).collect(),
        rationale: v.rationale.clone(),
    }
}

/// Scores the labelled cases on `modes`. Cases without a label are left out (the caller reports
/// them); `threshold` marks the bands whose verdicts are assigned.
pub fn score(
    cases: &[Case],
    modes: &[String],
    threshold: f64,
    bootstrap: &BootstrapOptions,
) -> Result<Validity, AgreementError> {
    let labelled: Vec<(&Case, &Label)> = cases.iter().filter_map(|c| c.label.as_ref().map(|l| (c, l))).collect();
    let items: Vec<String> = labelled.iter().map(|(c, _)| c.entry.file.clone()).collect();
    let raters = vec![CLASSIFIER.to_string(), super::REFERENCE.to_string()];
    let mut table: RatingTable = Table::new(items, raters.clone())?;
    for (i, (case, label)) in labelled.iter().enumerate() {
        let assigned = label.modes.iter().map(|m| m.mode.clone()).filter(|m| modes.contains(m)).collect();
        let reference = case.entry.present().map(str::to_string).filter(|m| modes.contains(m)).collect();
        table.set(i, 0, Some(assigned))?;
        table.set(i, 1, Some(reference))?;
    }
    let agreement = agreement_report(&table, modes, &raters, &Reference::Rater(super::REFERENCE.into()), bootstrap)?;
    let positives = modes
        .iter()
        .map(|m| (m.clone(), labelled.iter().filter(|(c, _)| c.entry.present().any(|p| p == m)).count()))
        .collect();
    Ok(Validity {
        runs: labelled.len(),
        positives,
        coverage: agreement.coverage.clone(),
        agreement,
        reliability: reliability(&labelled, modes, threshold),
        disagreements: disagreements(&labelled, modes),
    })
}

fn reliability(labelled: &[(&Case, &Label)], modes: &[String], threshold: f64) -> Vec<Band> {
    let mut bands: Vec<Band> = BANDS
        .iter()
        .map(|&(low, high)| Band { low, high, verdicts: 0, right: 0, share: None, assigned: low >= threshold })
        .collect();
    for (case, label) in labelled {
        for v in label.modes.iter().chain(&label.considered).filter(|v| modes.contains(&v.mode)) {
            let last = bands.len() - 1;
            let i = bands.iter().position(|b| v.confidence < b.high).unwrap_or(last);
            if let Some(b) = bands.get_mut(i) {
                b.verdicts += 1;
                b.right += usize::from(case.entry.present().any(|p| p == v.mode));
            }
        }
    }
    for b in &mut bands {
        b.share = (b.verdicts > 0).then(|| b.right as f64 / b.verdicts as f64);
    }
    bands
}

fn disagreements(labelled: &[(&Case, &Label)], modes: &[String]) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (case, label) in labelled {
        for mode in modes {
            let assigned = label.modes.iter().find(|v| &v.mode == mode);
            let weighed = label.considered.iter().find(|v| &v.mode == mode);
            let Some(judgement) = case.entry.modes.get(mode) else { continue };
            let side = match (assigned.is_some(), judgement.present) {
                (true, false) => Side::ClassifierOnly,
                (false, true) => Side::ReferenceOnly,
                _ => continue,
            };
            out.push(Disagreement {
                run_id: case.run_id,
                file: case.entry.file.clone(),
                instance_id: case.entry.instance_id.clone(),
                mode: mode.clone(),
                side,
                classifier: assigned.or(weighed).map(view),
                weighed: assigned.is_none() && weighed.is_some(),
                reference: View {
                    confidence: judgement.confidence.clone(),
                    steps: judgement.evidence_steps.clone(),
                    rationale: judgement.rationale.clone(),
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::{Evidence, Source};

    fn entry(file: &str, present: &[&str]) -> Entry {
        let modes = ["a", "b"]
            .iter()
            .map(|m| {
                let j = serde_json::json!({"present": present.contains(m), "confidence": "high",
                                           "evidence_steps": [2], "rationale": format!("why {m}")});
                (m.to_string(), serde_json::from_value(j).unwrap_or_else(|e| panic!("{e}")))
            })
            .collect();
        Entry {
            file: file.into(),
            instance_id: format!("i-{file}"),
            model: None,
            steps: None,
            resolved: Some(false),
            modes,
            unclassified_reason: None,
            exit_category: None,
        }
    }

    fn verdict(mode: &str, confidence: f64) -> ModeVerdict {
        ModeVerdict {
            mode: mode.into(),
            confidence,
            evidence: vec![Evidence { step: 7, note: String::new() }],
            rationale: format!("rule for {mode}"),
        }
    }

    fn label(modes: Vec<ModeVerdict>, considered: Vec<ModeVerdict>) -> Label {
        Label {
            run_id: 0,
            source: Source::Heuristic,
            rater: "heuristic".into(),
            taxonomy: "t".into(),
            taxonomy_version: "1".into(),
            modes,
            considered,
            exit_category: String::new(),
            summary: String::new(),
            provenance: Default::default(),
            judgement: Default::default(),
        }
    }

    #[test]
    fn precision_recall_bands_and_disagreements_follow_the_reference() {
        let cases = vec![
            // a: right; b: a false positive.
            Case {
                run_id: 1,
                entry: entry("x", &["a"]),
                label: Some(label(vec![verdict("a", 0.8), verdict("b", 0.6)], vec![])),
            },
            // a: missed (weighed at 0.4).
            Case { run_id: 2, entry: entry("y", &["a"]), label: Some(label(vec![], vec![verdict("a", 0.4)])) },
            // nothing on either side.
            Case { run_id: 3, entry: entry("z", &[]), label: Some(label(vec![], vec![])) },
            // no label: left out.
            Case { run_id: 4, entry: entry("w", &["b"]), label: None },
        ];
        let modes = vec!["a".to_string(), "b".to_string()];
        let opts = BootstrapOptions { resamples: 0, ..BootstrapOptions::default() };
        let v = score(&cases, &modes, 0.5, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.runs, 3);
        let a = &v.agreement.modes[0].against_reference[0];
        assert_eq!((a.confusion.tp, a.confusion.fp, a.confusion.fn_, a.confusion.tn), (1, 0, 1, 1));
        assert_eq!(a.precision.value, Some(1.0));
        assert_eq!(a.recall.value, Some(0.5));
        let b = &v.agreement.modes[1].against_reference[0];
        assert_eq!(b.precision.value, Some(0.0));
        assert_eq!(v.positives, vec![("a".to_string(), 2), ("b".to_string(), 0)]);
        // Bands: 0.4 wrong-way weighed but right, 0.6 wrong, 0.8 right.
        let shares: Vec<(usize, usize, bool)> =
            v.reliability.iter().map(|b| (b.verdicts, b.right, b.assigned)).collect();
        assert_eq!(shares, vec![(0, 0, false), (1, 1, false), (1, 0, true), (1, 1, true), (0, 0, true)]);
        let d: Vec<(i64, &str, Side, bool)> =
            v.disagreements.iter().map(|d| (d.run_id, d.mode.as_str(), d.side, d.weighed)).collect();
        assert_eq!(d, vec![(1, "b", Side::ClassifierOnly, false), (2, "a", Side::ReferenceOnly, true)]);
        assert_eq!(v.disagreements[1].reference.rationale, "why a");
        assert_eq!(v.disagreements[1].classifier.as_ref().map(|c| c.steps.clone()), Some(vec![7]));
    }
}
