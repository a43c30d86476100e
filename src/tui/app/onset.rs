//! Onset and blame in the run view: the judgement the run is shown with (the reviewer's own,
//! else the adjudication's, else a classifier's: `review::onset::pick`), `O` to its step, and the
//! reviewer's own, made in the draft and saved with the modes: `t` marks the step under the
//! cursor as the onset, `B` cycles the blame.

use super::{Draft, Effect, RunView};
use crate::label::Blame;
use crate::review::onset::{By, Judges, pick};

/// The onset and blame a run is shown with, and whose they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub by: By,
    pub onset: Option<usize>,
    pub blame: Option<Blame>,
}

/// "the task's": whose failure a blame says it is.
fn whose(blame: Blame) -> &'static str {
    match blame {
        Blame::Agent => "the agent's",
        Blame::Task => "the task's",
        Blame::Environment => "the environment's",
    }
}

impl Draft {
    /// Mark `step` as the onset, or unmark it when it is; what to tell the reviewer. An onset is
    /// the agent's error: marking one makes the blame the agent's.
    pub fn toggle_onset(&mut self, step: usize) -> String {
        if self.onset == Some(step) {
            self.onset = None;
            return format!("step {step} is no longer your onset");
        }
        let was = self.onset.replace(step).map(|s| format!(" (was {s})")).unwrap_or_default();
        match self.blame.replace(Blame::Agent) {
            Some(Blame::Agent) => format!("your onset: step {step}{was}"),
            None => format!("your onset: step {step}{was}; blame: agent"),
            Some(b) => {
                format!("your onset: step {step}{was}; blame: agent, not {} (an onset is the agent's)", b.name())
            }
        }
    }

    /// The next blame: agent, task, environment, none; what to tell the reviewer. The task's or
    /// the environment's failure has no onset: a marked one is cleared.
    pub fn cycle_blame(&mut self) -> String {
        self.blame = match self.blame {
            None => Some(Blame::Agent),
            Some(Blame::Agent) => Some(Blame::Task),
            Some(Blame::Task) => Some(Blame::Environment),
            Some(Blame::Environment) => None,
        };
        match (self.blame, self.onset) {
            (Some(b @ (Blame::Task | Blame::Environment)), Some(step)) => {
                self.onset = None;
                format!("your blame: {}; onset step {step} cleared (an onset is the agent's error)", b.name())
            }
            (Some(b), _) => format!("your blame: {} (the failure is {})", b.name(), whose(b)),
            (None, _) => "your label gives no blame (B again: agent)".to_string(),
        }
    }
}

impl RunView {
    /// The onset and blame the run is shown with: the reviewer's draft when it gives either,
    /// else the other labels' by `pick` (blind review has already held the classifiers' back
    /// from `data.labels`; the reviewer's own saved labels are the draft).
    pub fn shown_onset(&self) -> Option<Shown> {
        let d = &self.draft;
        if d.onset.is_some() || d.blame.is_some() {
            return Some(Shown { by: By::Yours, onset: d.onset, blame: d.blame });
        }
        let others =
            self.data.labels.iter().map(|r| &r.label).filter(|l| !(l.source.is_human() && l.rater == self.rater));
        pick(others, None, false).map(|(by, l)| Shown { by, onset: l.onset_step(), blame: l.blame() })
    }
}

impl super::App {
    /// `O`: to the onset step the run is shown with, or why there is none.
    pub(super) fn goto_onset(&mut self) -> Vec<Effect> {
        let Some(run) = self.run.as_mut() else { return Vec::new() };
        let shown = run.shown_onset();
        let message = match shown {
            Some(Shown { by, onset: Some(step), .. }) => {
                if run.go_to_index(step as i64) {
                    self.set_info(format!("step {step}: the onset ({})", by.name()));
                    return self.load_current_step();
                }
                let last = run.data.steps.last().map_or(0, |s| s.index);
                self.set_error(format!(
                    "the onset ({}) is step {step}, not in this run (steps 0 to {last})",
                    by.name()
                ));
                return Vec::new();
            }
            Some(Shown { by, blame: Some(b), .. }) => match b {
                Blame::Agent => format!("no onset step given: the failure is the agent's ({})", by.name()),
                _ => format!("no onset: the failure is {} ({})", whose(b), by.name()),
            },
            _ if run.hidden_labels > 0 => {
                "blind review: the classifiers' onset is hidden until you save your label".to_string()
            }
            _ => "no onset: no label judges this run (trajan classify does; t marks yours)".to_string(),
        };
        self.set_info(message);
        Vec::new()
    }
}
