//! Whose failure a run is, as the statistics read it (failure-modes.md, "Failure onset and
//! blame"): a run blamed on the task or the environment keeps its modes but is set apart from
//! the agent's failure-mode statistics. Its blame comes from the same labels as its modes (the
//! statistics' source: `best`, `heuristic`, `llm`, `human`, `reference`), so the numbers never
//! mix one rater's modes with another's blame. Where those are the reviewers', the blame is the
//! reference's: the latest adjudication's, else the value more than half of the reviewers who
//! judged blame gave (a tie: none). The reference's onset is read the same way.

use super::adjudication;
use crate::label::{Blame, Source};
use crate::store::labels::LabelSet;

/// The value more than half of `values` are; `None` without one (none given, or a tie).
fn majority<T: PartialEq + Copy>(values: &[T]) -> Option<T> {
    values.iter().copied().find(|v| values.iter().filter(|w| *w == v).count() * 2 > values.len())
}

fn reviewers<'a>(labels: &'a [&'a LabelSet]) -> impl Iterator<Item = &'a LabelSet> {
    labels.iter().copied().filter(|l| l.source == Source::Human)
}

/// The reference's blame of a run: its latest adjudication's (none when the adjudicator judged
/// none), else the reviewers' majority among those who judged blame.
pub fn reference_blame(labels: &[&LabelSet]) -> Option<Blame> {
    if let Some(adj) = adjudication(labels) {
        return adj.blame;
    }
    majority(&reviewers(labels).filter_map(|l| l.blame).collect::<Vec<_>>())
}

/// The reference's onset step of a run: its latest adjudication's, else the step more than half
/// of the reviewers who gave one gave.
pub fn reference_onset(labels: &[&LabelSet]) -> Option<usize> {
    if let Some(adj) = adjudication(labels) {
        return adj.onset_step;
    }
    majority(&reviewers(labels).filter_map(|l| l.onset_step).collect::<Vec<_>>())
}

/// Whether the reference judged onset or blame at all (an adjudication that did, else any
/// reviewer who did).
pub fn reference_judged(labels: &[&LabelSet]) -> bool {
    match adjudication(labels) {
        Some(adj) => adj.judged,
        None => reviewers(labels).any(|l| l.judged),
    }
}

fn runs(n: usize) -> &'static str {
    if n == 1 { "run" } else { "runs" }
}

/// What the statistics say of blame, under their table: how many failed runs were set apart
/// (`task`, `environment`) and why, whose blame it is (`source`'s), and the labelled runs whose
/// labels judged no blame (`unjudged`).
pub fn note(task: usize, environment: usize, unjudged: usize, source: &str) -> String {
    let mut out = match task + environment {
        0 => "No failed run is blamed on the task or the environment".to_string(),
        n => format!(
            "{n} failed {} set apart, blamed on the task ({task}) or the environment ({environment}): they keep \
             their modes but are not counted in runs, labelled, coverage, agreement or the modes",
            runs(n)
        ),
    };
    out.push_str(&format!("; a run's blame comes from the labels its modes come from (source {source})"));
    match unjudged {
        0 => {}
        1 => out.push_str("; 1 labelled run whose labels judge no blame counts as the agent's"),
        n => out.push_str(&format!("; {n} labelled runs whose labels judge no blame count as the agent's")),
    }
    out.push('.');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(source: Source, rater: &str, blame: Option<Blame>, onset: Option<usize>, at: &str) -> LabelSet {
        LabelSet {
            run_id: 1,
            source,
            rater: rater.into(),
            modes: Vec::new(),
            created_at: at.into(),
            taxonomy_version: "1.0".into(),
            exit_category: String::new(),
            input_hash: None,
            judged: blame.is_some() || onset.is_some(),
            onset_step: onset,
            blame,
        }
    }

    #[test]
    fn the_reference_blame_is_the_adjudications_else_the_judging_reviewers_majority() {
        let ann = set(Source::Human, "ann", Some(Blame::Task), None, "1");
        let bob = set(Source::Human, "bob", Some(Blame::Agent), Some(4), "2");
        let cat = set(Source::Human, "cat", Some(Blame::Task), None, "3");
        let dan = set(Source::Human, "dan", None, None, "3");
        assert_eq!(reference_blame(&[&ann, &bob]), None, "a tie");
        assert_eq!(reference_blame(&[&ann, &bob, &cat]), Some(Blame::Task));
        assert_eq!(reference_blame(&[&ann, &dan]), Some(Blame::Task), "a reviewer who judged none is no vote");
        assert_eq!(reference_onset(&[&ann, &bob, &cat]), Some(4), "the one reviewer who gave a step");
        let llm = set(Source::Llm, "gpt", Some(Blame::Environment), Some(1), "1");
        assert_eq!(reference_blame(&[&llm]), None, "classifiers are not the reference");
        assert!(!reference_judged(&[&llm, &dan]));
        let adj = set(Source::Adjudication, "eve", Some(Blame::Environment), None, "4");
        assert_eq!(reference_blame(&[&ann, &bob, &cat, &adj]), Some(Blame::Environment), "it settles it");
        assert_eq!(reference_onset(&[&bob, &adj]), None, "the adjudication's onset: none");
        assert!(reference_judged(&[&dan, &adj]));
    }

    #[test]
    fn the_note_says_how_many_were_set_apart_why_and_by_whose_blame() {
        let n = note(2, 1, 1, "best");
        assert!(n.starts_with("3 failed runs set apart, blamed on the task (2) or the environment (1)"), "{n}");
        assert!(n.contains("labels its modes come from (source best)") && n.contains("1 labelled run whose"), "{n}");
        let none = note(0, 0, 0, "human");
        assert!(none.starts_with("No failed run is blamed") && !none.contains("judge no blame"), "{none}");
    }
}
