//! Files being read while the reviewer reads them (`trajan PATH`): the first run begun opens,
//! the open run's step list grows as its steps are stored, the status line says how far the
//! reading is; at the end the run is loaded again whole (or the list shows the runs read).

use super::{App, Effect, Screen, Status};
use crate::store::browse::{EditLine, StepLine};
use crate::tui::action::Feed;

/// How far the reading is, for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// What is read (a file name, or "N files").
    pub label: String,
    pub done: u64,
    pub total: u64,
    /// Steps stored so far, of every run being read.
    pub steps: usize,
    /// Steps stored of each run being read.
    pub runs: Vec<(i64, usize)>,
}

impl Reading {
    /// `XL.traj.json: 37% · 7,412 steps`
    pub fn describe(&self) -> String {
        let pct = (self.done.min(self.total) * 100).checked_div(self.total).unwrap_or(0);
        let steps = if self.runs.is_empty() { String::new() } else { format!(" · {} steps", thousands(self.steps)) };
        format!("reading {}: {pct}%{steps}", self.label)
    }

    /// Steps stored of run `id`, if it is being read.
    pub fn stored(&self, id: i64) -> Option<usize> {
        self.runs.iter().find(|(r, _)| *r == id).map(|(_, n)| *n)
    }
}

/// `7412` as `7,412`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl App {
    pub(super) fn feed(&mut self, feed: Feed) -> Vec<Effect> {
        match feed {
            Feed::Begun(id) => {
                // The first run read opens, unless the reviewer has opened one or is typing.
                if self.opened_from_feed || self.run.is_some() || self.screen != Screen::List || self.prompt.is_some() {
                    return Vec::new();
                }
                self.opened_from_feed = true;
                vec![Effect::LoadRun(id)]
            }
            Feed::Progress { label, done, total, runs } => {
                let steps = runs.iter().map(|(_, n)| n).sum();
                self.reading = Some(Reading { label, done, total, steps, runs });
                self.grow()
            }
            Feed::Done { runs, message, error } => {
                self.reading = None;
                self.status = Some(Status { text: message, error });
                let mut effects = vec![Effect::LoadAllRuns];
                if runs.len() > 1 {
                    // Several runs: the list shows them (the filter says so and can be edited).
                    let query = crate::tui::filter::ids_query(&runs);
                    if let Err(e) = self.list.set_filter(&query) {
                        self.set_error(e);
                    }
                }
                let open = self.run.as_ref().map(|r| r.run_id());
                match (runs.as_slice(), open) {
                    (_, Some(id)) if runs.contains(&id) => effects.push(Effect::RefreshRun(id)),
                    ([id], None) if self.screen == Screen::List && !self.opened_from_feed => {
                        self.opened_from_feed = true;
                        effects.push(Effect::LoadRun(*id));
                    }
                    _ => {}
                }
                effects
            }
        }
    }

    /// Steps arrived for run `run` from `from` on; more are asked for if more are stored.
    pub(super) fn steps_loaded(
        &mut self,
        run: i64,
        from: usize,
        steps: Vec<StepLine>,
        edits: Vec<EditLine>,
    ) -> Vec<Effect> {
        if let Some(view) = self.run.as_mut().filter(|v| v.run_id() == run) {
            view.growing = false;
            // A reload may have come first: only steps that follow the list are added.
            if from == view.data.steps.len() {
                view.data.summary.steps = (from + steps.len()) as i64;
                view.data.steps.extend(steps);
                let finals = view.data.edits.iter().position(|e| e.step.is_none()).unwrap_or(view.data.edits.len());
                view.data.edits.splice(finals..finals, edits);
            }
        }
        self.grow()
    }

    /// Ask for the open run's steps stored since it was loaded, one request at a time.
    pub(super) fn grow(&mut self) -> Vec<Effect> {
        let Some(view) = self.run.as_mut() else { return Vec::new() };
        let id = view.run_id();
        let stored = self.reading.as_ref().and_then(|r| r.stored(id)).unwrap_or(0);
        let have = view.data.steps.len();
        if view.growing || stored <= have {
            return Vec::new();
        }
        view.growing = true;
        vec![Effect::LoadSteps { run: id, from: have }]
    }
}
