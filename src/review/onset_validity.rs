//! How far a classifier's onsets and blame can be trusted (`bench validity`): its labels of a
//! labelled set's runs scored against the set's reference onsets and blame
//! ([`super::onset_reference`]). Onset over the runs the reference blames on the agent: the
//! share given the reference's step or one it also accepts, the share within 2 steps of it,
//! the mean distance, by the classifier's rule and by its confidence; blame per value,
//! precision and recall. Pure: the caller ingests, classifies and matches.

use super::onset_reference::OnsetEntry;
use super::validity::BANDS;
use crate::label::{Blame, Label};
use serde::Serialize;

/// One run of the set: the reference entry, the classifier's label of the run, its step count.
#[derive(Debug, Clone)]
pub struct OnsetCase {
    pub run_id: i64,
    pub steps: usize,
    pub entry: OnsetEntry,
    /// `None`: the classifier gave no label.
    pub label: Option<Label>,
}

/// How far one onset is from the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The reference's step or one it also accepts.
    pub accepted: bool,
    /// Within 2 steps of the reference's step.
    pub near: bool,
}

impl Hit {
    /// Within the goal's tolerance: accepted, or near.
    pub fn within(self) -> bool {
        self.accepted || self.near
    }

    pub fn of(step: usize, entry: &OnsetEntry) -> Hit {
        let reference = entry.step;
        Hit {
            accepted: reference == Some(step) || entry.acceptable.contains(&step),
            near: reference.is_some_and(|r| r.abs_diff(step) <= 2),
        }
    }
}

/// Onsets of one kind (the rule in a rationale's brackets) or one confidence band.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub name: String,
    pub runs: usize,
    pub accepted: usize,
    pub within: usize,
}

/// A run the classifier's onset misses (outside the tolerance, or none given).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnsetMiss {
    pub run_id: i64,
    pub file: String,
    pub reference: Option<usize>,
    pub acceptable: Vec<usize>,
    pub classifier: Option<usize>,
    pub rationale: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnsetScore {
    /// Runs the reference blames on the agent with an onset step, and labelled.
    pub runs: usize,
    /// Of those, the ones the classifier gave a step.
    pub given: usize,
    pub accepted: usize,
    pub near: usize,
    pub within: usize,
    /// Mean distance to the reference's step over the runs given a step.
    pub mean_distance: Option<f64>,
    pub by_rule: Vec<Group>,
    pub by_confidence: Vec<Group>,
    pub misses: Vec<OnsetMiss>,
}

/// Blame on one value: the classifier against the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueScore {
    pub value: String,
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlameMiss {
    pub run_id: i64,
    pub file: String,
    pub reference: String,
    pub classifier: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlameScore {
    /// Failed runs the reference blames and the classifier labelled.
    pub runs: usize,
    pub values: Vec<ValueScore>,
    pub disagreements: Vec<BlameMiss>,
}

/// The rule that gave an onset: the bracketed name its rationale starts with.
pub fn rule_of(rationale: &str) -> &str {
    rationale.strip_prefix('[').and_then(|r| r.split_once(']')).map_or("-", |(name, _)| name)
}

/// Scores the onsets of `cases`; a step out of the run's range is reported, never scored.
pub fn score_onset(cases: &[OnsetCase]) -> OnsetScore {
    let mut s = OnsetScore {
        runs: 0,
        given: 0,
        accepted: 0,
        near: 0,
        within: 0,
        mean_distance: None,
        by_rule: Vec::new(),
        by_confidence: BANDS
            .iter()
            .map(|(lo, hi)| Group { name: format!("[{lo:.1}, {hi:.1})"), runs: 0, accepted: 0, within: 0 })
            .collect(),
        misses: Vec::new(),
    };
    let mut distance = 0usize;
    for c in cases {
        let (Some(label), Some(reference), Some(Blame::Agent)) = (&c.label, c.entry.step, c.entry.blame) else {
            continue;
        };
        s.runs += 1;
        let onset = label.judgement.onset.as_ref();
        let step = onset.and_then(|o| o.step);
        let rationale = onset.map(|o| o.rationale.clone()).unwrap_or_default();
        let hit = step.map(|st| Hit::of(st, &c.entry));
        if let (Some(st), Some(h)) = (step, hit) {
            s.given += 1;
            s.accepted += usize::from(h.accepted);
            s.near += usize::from(h.near);
            s.within += usize::from(h.within());
            distance += st.abs_diff(reference);
            let rule = rule_of(&rationale).to_string();
            let g = match s.by_rule.iter_mut().position(|g| g.name == rule) {
                Some(i) => &mut s.by_rule[i],
                None => {
                    s.by_rule.push(Group { name: rule, runs: 0, accepted: 0, within: 0 });
                    let last = s.by_rule.len() - 1;
                    &mut s.by_rule[last]
                }
            };
            g.runs += 1;
            g.accepted += usize::from(h.accepted);
            g.within += usize::from(h.within());
            let confidence = onset.map_or(0.0, |o| o.confidence);
            let band = BANDS.iter().position(|&(_, hi)| confidence < hi).unwrap_or(BANDS.len() - 1);
            if let Some(b) = s.by_confidence.get_mut(band) {
                b.runs += 1;
                b.accepted += usize::from(h.accepted);
                b.within += usize::from(h.within());
            }
        }
        if !hit.is_some_and(Hit::within) {
            s.misses.push(OnsetMiss {
                run_id: c.run_id,
                file: c.entry.file.clone(),
                reference: Some(reference),
                acceptable: c.entry.acceptable.clone(),
                classifier: step,
                rationale,
            });
        }
    }
    s.mean_distance = (s.given > 0).then(|| distance as f64 / s.given as f64);
    s
}

fn name(b: Option<Blame>) -> String {
    b.map_or_else(|| "none".to_string(), |b| b.name().to_string())
}

/// Scores the blame of the failed runs of `cases` (the reference blames them).
pub fn score_blame(cases: &[OnsetCase]) -> BlameScore {
    let judged: Vec<(&OnsetCase, Option<Blame>, Blame)> = cases
        .iter()
        .filter_map(|c| {
            let reference = c.entry.blame?;
            let label = c.label.as_ref()?;
            Some((c, label.judgement.blame.as_ref().and_then(|b| b.value), reference))
        })
        .collect();
    let values = Blame::ALL
        .iter()
        .map(|&v| {
            let tp = judged.iter().filter(|(_, c, r)| *c == Some(v) && *r == v).count();
            let fp = judged.iter().filter(|(_, c, r)| *c == Some(v) && *r != v).count();
            let fn_ = judged.iter().filter(|(_, c, r)| *c != Some(v) && *r == v).count();
            let ratio = |n: usize, d: usize| (d > 0).then(|| n as f64 / d as f64);
            ValueScore {
                value: v.name().to_string(),
                tp,
                fp,
                fn_,
                precision: ratio(tp, tp + fp),
                recall: ratio(tp, tp + fn_),
            }
        })
        .collect();
    let disagreements = judged
        .iter()
        .filter(|(_, c, r)| *c != Some(*r))
        .map(|(case, c, r)| BlameMiss {
            run_id: case.run_id,
            file: case.entry.file.clone(),
            reference: r.name().to_string(),
            classifier: name(*c),
            reason: case
                .label
                .as_ref()
                .and_then(|l| l.judgement.blame.as_ref())
                .map(|b| b.reason.clone())
                .unwrap_or_default(),
        })
        .collect();
    BlameScore { runs: judged.len(), values, disagreements }
}

/// The steps an entry names that its run does not have, as a message (`None`: all in range).
pub fn out_of_range(entry: &OnsetEntry, steps: usize) -> Option<String> {
    let bad: Vec<String> = entry.steps().filter(|&s| s >= steps).map(|s| s.to_string()).collect();
    (!bad.is_empty()).then(|| {
        format!(
            "{}: step {} out of range: the run has {}",
            entry.file,
            bad.join(", "),
            match steps {
                0 => "no steps".to_string(),
                n => format!("steps 0 to {}", n - 1),
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::{BlameVerdict, Judgement, Onset, Source};

    fn entry(file: &str, step: Option<usize>, acceptable: &[usize], blame: Blame) -> OnsetEntry {
        OnsetEntry {
            file: file.into(),
            instance_id: file.into(),
            step,
            acceptable: acceptable.to_vec(),
            confidence: None,
            rationale: String::new(),
            blame: Some(blame),
            reason: String::new(),
        }
    }

    fn label(step: Option<usize>, confidence: f64, rule: &str, blame: Blame) -> Label {
        Label {
            run_id: 0,
            source: Source::Heuristic,
            rater: "heuristic".into(),
            taxonomy: "t".into(),
            taxonomy_version: "1".into(),
            modes: Vec::new(),
            considered: Vec::new(),
            exit_category: String::new(),
            summary: String::new(),
            provenance: Default::default(),
            judgement: Judgement {
                onset: Some(Onset { step, confidence, rationale: format!("[{rule}] why"), ..Onset::default() }),
                blame: Some(BlameVerdict::of(blame, "because")),
            },
        }
    }

    fn case(run_id: i64, entry: OnsetEntry, label: Label) -> OnsetCase {
        OnsetCase { run_id, steps: 50, entry, label: Some(label) }
    }

    #[test]
    fn onsets_within_the_tolerance_by_rule_and_band() {
        let cases = vec![
            // An acceptable step, 6 away from the reference's.
            case(1, entry("a", Some(9), &[11, 15], Blame::Agent), label(Some(15), 0.6, "origin", Blame::Agent)),
            // 2 away: near, not accepted.
            case(2, entry("b", Some(20), &[], Blame::Agent), label(Some(22), 0.65, "format_streak", Blame::Agent)),
            // Far.
            case(3, entry("c", Some(5), &[6], Blame::Agent), label(Some(30), 0.45, "origin", Blame::Agent)),
            // None given.
            case(4, entry("d", Some(7), &[], Blame::Agent), label(None, 0.0, "none", Blame::Task)),
            // The reference blames the task: no onset to score.
            case(5, entry("e", None, &[3], Blame::Task), label(Some(3), 0.5, "origin", Blame::Agent)),
        ];
        let s = score_onset(&cases);
        assert_eq!((s.runs, s.given, s.accepted, s.near, s.within), (4, 3, 1, 1, 2));
        assert_eq!(s.mean_distance, Some((6.0 + 2.0 + 25.0) / 3.0));
        let origin = s.by_rule.iter().find(|g| g.name == "origin").map(|g| (g.runs, g.within));
        assert_eq!(origin, Some((2, 1)));
        let bands: Vec<usize> = s.by_confidence.iter().map(|b| b.runs).collect();
        assert_eq!(bands, [0, 1, 2, 0, 0]);
        let missed: Vec<i64> = s.misses.iter().map(|m| m.run_id).collect();
        assert_eq!(missed, [3, 4]);

        let b = score_blame(&cases);
        assert_eq!(b.runs, 5);
        let task = &b.values[1];
        assert_eq!((task.tp, task.fp, task.fn_), (0, 1, 1));
        assert_eq!(task.precision, Some(0.0));
        let agent = &b.values[0];
        assert_eq!((agent.tp, agent.fp, agent.fn_), (3, 1, 1));
        assert_eq!(b.disagreements.len(), 2);
    }

    #[test]
    fn steps_out_of_a_runs_range_are_named() {
        let e = entry("runs/x.traj", Some(9), &[40], Blame::Agent);
        assert_eq!(out_of_range(&e, 41), None);
        assert_eq!(
            out_of_range(&e, 30).as_deref(),
            Some("runs/x.traj: step 40 out of range: the run has steps 0 to 29")
        );
        assert_eq!(rule_of("[format_streak] the first"), "format_streak");
        assert_eq!(rule_of("no brackets"), "-");
    }
}
