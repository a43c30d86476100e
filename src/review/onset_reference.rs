//! Reference onsets and blame in the shape of a labelled set's `onset.json`
//! (`fixtures/labelled/onset.json`): one entry per run, naming its file, with the decisive
//! error step (or none), the steps a careful reviewer could also defend, and whose failure it
//! is. Read entry by entry: an entry that is not of this shape, names a value that is not a
//! blame, or gives an onset to a failure that is not the agent's is reported with its position,
//! and the others are still read.

use crate::label::{Blame, BlameVerdict, Evidence, Judgement, Onset};
use serde::Deserialize;

/// One run's reference onset and blame.
#[derive(Debug, Clone, PartialEq)]
pub struct OnsetEntry {
    /// The run's file, relative to the set's folder.
    pub file: String,
    pub instance_id: String,
    /// The decisive error step; `None` when the failure is not the agent's (or the run passed).
    pub step: Option<usize>,
    /// Other steps a careful reviewer could defend.
    pub acceptable: Vec<usize>,
    /// high, medium or low.
    pub confidence: Option<String>,
    pub rationale: String,
    /// `None`: a resolved run (no failure to blame).
    pub blame: Option<Blame>,
    pub reason: String,
}

impl OnsetEntry {
    /// Every step the entry names (its onset and the acceptable ones).
    pub fn steps(&self) -> impl Iterator<Item = usize> + '_ {
        self.step.into_iter().chain(self.acceptable.iter().copied())
    }

    /// The entry as a label's onset and blame: the acceptable steps are the onset's evidence
    /// (`also acceptable`), the confidence a number as the labelled set's (high 0.9, medium
    /// 0.6, low 0.3; none given: 0).
    pub fn judgement(&self) -> Judgement {
        let evidence = self.acceptable.iter().map(|&step| Evidence { step, note: "also acceptable".into() }).collect();
        Judgement {
            onset: Some(Onset {
                step: self.step,
                evidence,
                confidence: self.confidence.as_deref().map_or(0.0, super::reference_set::weight),
                rationale: self.rationale.clone(),
                missing: Vec::new(),
            }),
            blame: Some(BlameVerdict { value: self.blame, reason: self.reason.clone(), evidence: Vec::new() }),
        }
    }
}

#[derive(Deserialize)]
struct RawEntry {
    file: String,
    instance_id: String,
    onset: RawOnset,
    blame: RawBlame,
}

#[derive(Deserialize)]
struct RawOnset {
    step: Option<usize>,
    #[serde(default)]
    also_acceptable: Vec<usize>,
    #[serde(default)]
    confidence: Option<String>,
    #[serde(default)]
    rationale: Option<String>,
}

#[derive(Deserialize)]
struct RawBlame {
    value: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

/// Whether a JSON array is an onset reference: its first entry names its `file` and has an
/// `onset` object and a `blame` object.
pub fn is_onset_reference(items: &[serde_json::Value]) -> bool {
    items.first().is_some_and(|e| {
        e.get("file").is_some_and(serde_json::Value::is_string)
            && e.get("onset").is_some_and(serde_json::Value::is_object)
            && e.get("blame").is_some_and(serde_json::Value::is_object)
    })
}

/// Every entry of an onset reference, each read on its own (`item N: why` for one that is not
/// an entry).
pub fn read(items: Vec<serde_json::Value>) -> Vec<(String, Result<OnsetEntry, String>)> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let at = format!("item {}", i + 1);
            let entry = serde_json::from_value::<RawEntry>(v).map_err(|e| e.to_string()).and_then(entry);
            (at, entry)
        })
        .collect()
}

fn entry(raw: RawEntry) -> Result<OnsetEntry, String> {
    let blame = match raw.blame.value.as_deref() {
        None => None,
        Some(v) => Some(Blame::from_name(v).ok_or_else(|| {
            format!("{}: blame {v:?} is none of agent, task, environment (or null for a resolved run)", raw.file)
        })?),
    };
    if let (Some(step), Some(b @ (Blame::Task | Blame::Environment))) = (raw.onset.step, blame) {
        return Err(format!(
            "{}: onset step {step} is given with blame {}: an onset is given only when the blame is the agent's",
            raw.file,
            b.name()
        ));
    }
    Ok(OnsetEntry {
        file: raw.file,
        instance_id: raw.instance_id,
        step: raw.onset.step,
        acceptable: raw.onset.also_acceptable,
        confidence: raw.onset.confidence,
        rationale: raw.onset.rationale.unwrap_or_default(),
        blame,
        reason: raw.blame.reason.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_one_by_one_and_bad_ones_named() {
        let v = serde_json::json!([
            {"file": "runs/a.traj", "instance_id": "a", "resolved": false,
             "onset": {"step": 9, "also_acceptable": [11, 14], "confidence": "medium", "rationale": "r", "why": null},
             "blame": {"value": "agent", "reason": "its diagnosis"}},
            {"file": "runs/b.traj", "instance_id": "b", "onset": {"step": null, "also_acceptable": [3]},
             "blame": {"value": "task", "reason": "a test id that does not exist"}},
            {"file": "runs/c.traj", "instance_id": "c", "onset": {"step": 2}, "blame": {"value": "agnet"}},
            {"file": "runs/d.traj", "instance_id": "d", "onset": {"step": 4}, "blame": {"value": "environment"}},
            {"file": "runs/e.traj", "instance_id": "e", "onset": {"step": -1}, "blame": {"value": "agent"}},
            {"file": "runs/f.traj", "instance_id": "f", "onset": {"step": null}, "blame": {"value": null}}
        ]);
        let items = v.as_array().cloned().unwrap_or_default();
        assert!(is_onset_reference(&items));
        let read = read(items);
        let ok: Vec<&OnsetEntry> = read.iter().filter_map(|(_, e)| e.as_ref().ok()).collect();
        assert_eq!(ok.len(), 3);
        assert_eq!(
            (ok[0].step, ok[0].steps().collect::<Vec<_>>(), ok[0].blame),
            (Some(9), vec![9, 11, 14], Some(Blame::Agent))
        );
        assert_eq!((ok[1].step, ok[1].blame), (None, Some(Blame::Task)));
        assert_eq!(ok[2].blame, None, "a resolved run");
        let errors: Vec<String> =
            read.iter().filter_map(|(at, e)| e.as_ref().err().map(|e| format!("{at}: {e}"))).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].starts_with("item 3: runs/c.traj: blame \"agnet\" is none of"), "{errors:?}");
        assert!(errors[1].contains("item 4: runs/d.traj: onset step 4 is given with blame environment"), "{errors:?}");
        assert!(errors[2].starts_with("item 5: ") && errors[2].contains("-1"), "{errors:?}");
        assert!(!is_onset_reference(&[serde_json::json!({"file": "x", "modes": {}})]), "a labels.json is not");
    }
}
