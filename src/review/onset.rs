//! Which onset and blame a run is shown with, of all its current labels: the reviewer's own,
//! else the reference's (an adjudication), else a classifier's (the LLM's before the
//! heuristic's). Under blind review the classifiers' are hidden as their modes are. One rule for
//! the run view, the run list, the comparison (and `compare --json`) and the HTML report.

use crate::label::{Blame, Label, Source};
use serde::Serialize;

/// A label as far as its onset and blame go.
pub trait Judges {
    fn source(&self) -> Source;
    fn rater(&self) -> &str;
    /// The decisive error step, when one was given.
    fn onset_step(&self) -> Option<usize>;
    /// Whose failure it is, when judged.
    fn blame(&self) -> Option<Blame>;
}

impl Judges for Label {
    fn source(&self) -> Source {
        self.source
    }
    fn rater(&self) -> &str {
        &self.rater
    }
    fn onset_step(&self) -> Option<usize> {
        self.judgement.onset.as_ref().and_then(|o| o.step)
    }
    fn blame(&self) -> Option<Blame> {
        self.judgement.blame.as_ref().and_then(|b| b.value)
    }
}

/// `Judges` for a type that keeps `source`, `rater`, `onset` and `blame` as fields.
macro_rules! judges_by_fields {
    ($($t:ty),*) => {$(
        impl Judges for $t {
            fn source(&self) -> Source {
                self.source
            }
            fn rater(&self) -> &str {
                &self.rater
            }
            fn onset_step(&self) -> Option<usize> {
                self.onset
            }
            fn blame(&self) -> Option<Blame> {
                self.blame
            }
        }
    )*};
}

/// One label's onset and blame, with whose label it is (`compare --json`'s `judgements`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    pub source: Source,
    pub rater: String,
    pub onset: Option<usize>,
    pub blame: Option<Blame>,
}

impl Judged {
    pub fn of(l: &impl Judges) -> Judged {
        Judged { source: l.source(), rater: l.rater().to_string(), onset: l.onset_step(), blame: l.blame() }
    }
}

judges_by_fields!(super::CurrentLabel, Judged);

/// Whose judgement a run is shown with, in the order they are preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum By {
    /// The reviewer's own label (or adjudication).
    Yours,
    /// The run's adjudication.
    Adjudication,
    Llm,
    Heuristic,
}

impl By {
    /// How the screens and the report name it: `yours`, `adjudication`, `llm`, `heuristic`.
    pub fn name(self) -> &'static str {
        match self {
            By::Yours => "yours",
            By::Adjudication => "adjudication",
            By::Llm => "llm",
            By::Heuristic => "heuristic",
        }
    }

    /// Whose label `source` by `rater` is, for the reviewer `me` (`None`: no reviewer); `None`
    /// for another reviewer's label, which is not the reference.
    fn of(source: Source, rater: &str, me: Option<&str>) -> Option<By> {
        match source {
            _ if source.is_human() && me.is_some_and(|m| !m.is_empty() && m == rater) => Some(By::Yours),
            Source::Adjudication => Some(By::Adjudication),
            Source::Llm => Some(By::Llm),
            Source::Heuristic => Some(By::Heuristic),
            Source::Human => None,
        }
    }
}

/// The label a run's onset and blame are shown from, of `labels` (oldest first: of two alike,
/// the later one counts), for the reviewer `me`; `blinded`: the classifiers' labels are hidden
/// from them. Only a label that gives an onset step or a blame counts.
pub fn pick<'a, T: Judges + 'a>(
    labels: impl IntoIterator<Item = &'a T>,
    me: Option<&str>,
    blinded: bool,
) -> Option<(By, &'a T)> {
    let mut best: Option<(By, &T)> = None;
    for l in labels {
        if l.onset_step().is_none() && l.blame().is_none() {
            continue;
        }
        let Some(by) = By::of(l.source(), l.rater(), me) else { continue };
        if blinded && !l.source().is_human() {
            continue;
        }
        if best.is_none_or(|(b, _)| by <= b) {
            best = Some((by, l));
        }
    }
    best
}

/// The onset as the run list shows it: `15/49` (step 15 of a run of 49 steps).
pub fn step_of(onset: Option<usize>, steps: i64) -> String {
    onset.map(|s| format!("{s}/{steps}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(source: Source, rater: &str, onset: Option<usize>, blame: Option<Blame>) -> Judged {
        Judged { source, rater: rater.into(), onset, blame }
    }

    #[test]
    fn yours_then_the_adjudication_then_the_llm_then_the_heuristic() {
        let heuristic = judged(Source::Heuristic, "heuristic", Some(4), Some(Blame::Agent));
        let llm = judged(Source::Llm, "gpt", None, Some(Blame::Task));
        let adjudication = judged(Source::Adjudication, "cat", Some(6), Some(Blame::Agent));
        let other = judged(Source::Human, "bob", Some(1), Some(Blame::Agent));
        let mine = judged(Source::Human, "ann", Some(2), None);
        let all = [heuristic.clone(), mine.clone(), llm.clone(), other.clone(), adjudication.clone()];
        let who = |labels: &[Judged], me: Option<&str>, blinded: bool| {
            pick(labels, me, blinded).map(|(by, l)| (by, l.rater.clone()))
        };
        assert_eq!(who(&all, Some("ann"), false), Some((By::Yours, "ann".into())));
        assert_eq!(who(&all, Some("bob"), false), Some((By::Yours, "bob".into())));
        assert_eq!(who(&all, Some("dan"), false), Some((By::Adjudication, "cat".into())));
        assert_eq!(who(&all, None, false), Some((By::Adjudication, "cat".into())));
        let classifiers = [heuristic.clone(), llm.clone(), other.clone()];
        assert_eq!(who(&classifiers, Some("dan"), false), Some((By::Llm, "gpt".into())));
        assert_eq!(who(&classifiers[..1], Some("dan"), false), Some((By::Heuristic, "heuristic".into())));
        // Blind: the classifiers are hidden; another reviewer's label is never the one shown.
        assert_eq!(who(&classifiers, Some("dan"), true), None);
        assert_eq!(who(&all, Some("dan"), true), Some((By::Adjudication, "cat".into())));
        // A label that judges nothing does not count; of two alike, the later.
        let silent = judged(Source::Human, "ann", None, None);
        assert_eq!(who(&[llm.clone(), silent], Some("ann"), false), Some((By::Llm, "gpt".into())));
        let later = judged(Source::Llm, "claude", Some(3), Some(Blame::Agent));
        assert_eq!(who(&[llm, later], None, false), Some((By::Llm, "claude".into())));
        // No reviewer named: a reviewer's label is nobody's own.
        assert_eq!(who(&[mine], Some(""), false), None);
    }

    #[test]
    fn the_list_writes_the_step_of_the_steps() {
        assert_eq!(step_of(Some(15), 49), "15/49");
        assert_eq!(step_of(None, 49), "");
    }
}
