//! Files being read while the reviewer reads them (`trajan PATH`): the first run begun opens,
//! the open run's step list grows as its steps are stored, the status line says how far the
//! reading is; at the end the run is loaded again whole (or the list shows the runs read).

use super::{App, Effect, Screen, Status};
use crate::store::browse::{EditLine, StepLine};
use crate::tui::action::{Feed, PeekStep};

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

/// The file of the run being read, skimmed: its steps can be read before they are stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    pub run: i64,
    /// How many steps the run has.
    pub steps: usize,
    pub peek: PeekStep,
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
    /// Run `id` is being read (its shell edits are not reconstructed yet).
    pub(super) fn being_read(&self, id: i64) -> bool {
        self.reading.as_ref().is_some_and(|r| r.stored(id).is_some())
            || self.indexed.as_ref().is_some_and(|ix| ix.run == id)
    }

    pub(super) fn feed(&mut self, feed: Feed) -> Vec<Effect> {
        match feed {
            Feed::Indexed { run, steps, peek } => {
                self.indexed = Some(Indexed { run, steps, peek });
                let Some(view) = self.run.as_mut().filter(|v| v.run_id() == run) else { return Vec::new() };
                view.while_read = true;
                view.extend_unread(steps);
                // `G` or `j` pressed before the file was skimmed: the step is known now.
                view.arrived();
                self.load_current_step()
            }
            Feed::Begun(id) => {
                // The first run read opens, unless the reviewer has opened one or is typing.
                if self.opened_from_feed || self.run.is_some() || self.screen != Screen::List || self.prompt.is_some() {
                    return Vec::new();
                }
                self.opened_from_feed = true;
                self.direct = Some(id);
                vec![Effect::LoadRun(id)]
            }
            Feed::Progress { label, done, total, runs } => {
                if runs.len() > 1 {
                    // Several runs are read: leaving one shows the list of them.
                    self.direct = None;
                }
                // Files read whole (a folder, several paths): the list shows the runs stored so
                // far, asked again as files are done, one request at a time.
                let relist = runs.is_empty() && done > self.listed_at && !self.listing;
                let steps = runs.iter().map(|(_, n)| n).sum();
                if let Some(view) = self.run.as_mut().filter(|v| runs.iter().any(|(id, _)| *id == v.run_id())) {
                    view.while_read = true;
                }
                self.reading = Some(Reading { label, done, total, steps, runs });
                let mut effects = self.grow();
                if relist {
                    self.listing = true;
                    self.listed_at = done;
                    effects.push(Effect::LoadAllRuns);
                }
                effects
            }
            Feed::Done { runs, message, error } => {
                self.reading = None;
                self.indexed = None;
                if runs.len() > 1 {
                    self.direct = None;
                }
                self.status = Some(Status { text: message, error });
                let mut effects = vec![Effect::LoadAllRuns];
                if runs.len() > 1 {
                    // Several runs: the list shows them (the filter says so and can be edited).
                    let query = crate::review::filter::ids_query(&runs);
                    if let Err(e) = self.list.set_filter(&query) {
                        self.set_error(e);
                    }
                }
                let open = self.run.as_ref().map(|r| r.run_id());
                match (runs.as_slice(), open) {
                    // Before the whole list, in the same lane: the run comes back as soon as
                    // it would have in the quick lane.
                    (_, Some(id)) if runs.contains(&id) => effects.insert(0, Effect::RefreshRun(id)),
                    ([id], None) if self.screen == Screen::List && !self.opened_from_feed => {
                        self.opened_from_feed = true;
                        self.direct = Some(*id);
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
        let mut effects = Vec::new();
        if let Some(view) = self.run.as_mut().filter(|v| v.run_id() == run) {
            view.growing = false;
            // A reload may have come first: only steps that follow those stored are added (in
            // the places of steps listed but not stored yet).
            if from == view.stored_len() && !steps.is_empty() {
                let forgot = view.store_lines(from, steps);
                let finals = view.data.edits.iter().position(|e| e.step.is_none()).unwrap_or(view.data.edits.len());
                view.data.edits.splice(finals..finals, edits);
                let before = view.cursor;
                view.arrived();
                if view.follow_end || view.cursor != before || forgot {
                    effects = self.load_current_step();
                }
            }
        }
        effects.extend(self.grow());
        effects
    }

    /// Ask for the open run's steps stored since it was loaded, one request at a time.
    pub(super) fn grow(&mut self) -> Vec<Effect> {
        let Some(view) = self.run.as_mut() else { return Vec::new() };
        let id = view.run_id();
        let stored = self.reading.as_ref().and_then(|r| r.stored(id)).unwrap_or(0);
        let have = view.stored_len();
        if view.growing || stored <= have {
            return Vec::new();
        }
        view.growing = true;
        vec![Effect::LoadSteps { run: id, from: have }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::UNREAD;
    use super::super::tests::{body, run_data, summary};
    use super::*;
    use crate::tui::action::{Action, Command};

    fn progress(runs: &[(i64, usize)]) -> Action {
        Action::Feed(Feed::Progress { label: "x.traj".into(), done: 50, total: 100, runs: runs.to_vec() })
    }

    fn lines(from: i64, to: i64) -> Vec<StepLine> {
        run_data(0, to).steps.into_iter().skip(from as usize).collect()
    }

    #[test]
    fn the_first_run_read_opens_its_steps_grow_and_it_is_loaded_again_at_the_end() {
        let mut app = App::new((100, 30));
        assert_eq!(app.update(Action::Feed(Feed::Begun(7))), vec![Effect::LoadRun(7)]);
        // Only the first run begun opens (RetryAgent attempts begin one after another).
        assert_eq!(app.update(Action::Feed(Feed::Begun(8))), Vec::new());
        app.update(Action::RunLoaded(Box::new(run_data(7, 5))));
        app.update(Action::StepLoaded(Box::new(body(7, 0))));
        // More steps stored than shown: asked for, once at a time.
        assert_eq!(app.update(progress(&[(7, 12)])), vec![Effect::LoadSteps { run: 7, from: 5 }]);
        assert_eq!(app.update(progress(&[(7, 20)])), Vec::new());
        assert_eq!(app.reading.as_ref().map(Reading::describe).as_deref(), Some("reading x.traj: 50% · 20 steps"));
        let effects = app.update(Action::StepsLoaded { run: 7, from: 5, steps: lines(5, 12), edits: Vec::new() });
        assert_eq!(effects, vec![Effect::LoadSteps { run: 7, from: 12 }]);
        let view = app.run.as_ref().map(|r| (r.data.steps.len(), r.data.summary.steps));
        assert_eq!(view, Some((12, 12)));
        // Steps from a load that a reload overtook are not added twice.
        app.update(Action::StepsLoaded { run: 7, from: 3, steps: lines(3, 9), edits: Vec::new() });
        assert_eq!(app.run.as_ref().map(|r| r.data.steps.len()), Some(12));
        // The reviewer reads on meanwhile.
        app.update(Action::Command(Command::Bottom));
        app.update(Action::Command(Command::Up));
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(10));
        // The end: the run is loaded again whole, where the reviewer is; the list reloads.
        let done = Feed::Done { runs: vec![7], message: "read x.traj".into(), error: false };
        assert_eq!(app.update(Action::Feed(done)), vec![Effect::RefreshRun(7), Effect::LoadAllRuns]);
        assert!(app.reading.is_none() && app.status.as_ref().is_some_and(|s| s.text == "read x.traj"));
        app.update(Action::StepLoaded(Box::new(body(7, 10))));
        let effects = app.update(Action::RunLoaded(Box::new(run_data(7, 20))));
        let view = app.run.as_ref().map(|r| (r.cursor, r.data.steps.len(), r.has_body(10)));
        assert_eq!(view, Some((10, 20, false)), "the cursor stays");
        // The body loaded while the run was read lacks the shell edits reconstructed at its end.
        assert_eq!(effects, vec![Effect::LoadStep { run: 7, index: 10 }]);
    }

    #[test]
    fn several_runs_read_become_the_list_filter_and_one_unchanged_run_opens_at_the_end() {
        let mut app = App::new((100, 30));
        let runs: Vec<_> = [3, 4, 5, 9, 11].iter().map(|&i| summary(i, &format!("i{i}"), None, 2)).collect();
        app.update(Action::RunsLoaded { runs, complete: true, total: None });
        let done = Feed::Done { runs: vec![3, 4, 5, 9], message: "read 2 paths".into(), error: false };
        assert_eq!(app.update(Action::Feed(done)), vec![Effect::LoadAllRuns]);
        assert_eq!(app.list.filter_text, "id:3-5,9");
        assert_eq!(app.list.visible.len(), 4);
        assert_eq!(app.screen, Screen::List);
        // A file stored before is not read: no run begins, the one run opens at the end.
        let mut app = App::new((100, 30));
        let done = Feed::Done { runs: vec![4], message: "unchanged".into(), error: false };
        assert_eq!(app.update(Action::Feed(done)), vec![Effect::LoadAllRuns, Effect::LoadRun(4)]);
    }

    /// Issue 24: `trajan DIR` listed "0 of 0 runs" until the whole folder was read.
    #[test]
    fn runs_of_files_read_whole_are_listed_as_they_are_stored() {
        let mut app = App::new((100, 30));
        let units = |done| {
            Action::Feed(Feed::Progress { label: "runs, 1 of 3 files".into(), done, total: 300, runs: Vec::new() })
        };
        assert_eq!(app.update(units(0)), Vec::new(), "nothing stored yet");
        assert_eq!(app.update(units(100)), vec![Effect::LoadAllRuns]);
        assert_eq!(app.update(units(200)), Vec::new(), "one request at a time");
        app.update(Action::RunsLoaded { runs: vec![summary(1, "a", None, 2)], complete: true, total: None });
        assert_eq!(app.list.runs.len(), 1);
        assert_eq!(app.update(units(200)), vec![Effect::LoadAllRuns], "asked again once answered");
        app.update(Action::RunsLoaded { runs: vec![summary(1, "a", None, 2)], complete: true, total: None });
        assert_eq!(app.update(units(200)), Vec::new(), "nothing more stored");
        // A file read a step at a time grows its run instead.
        assert!(!app.update(progress(&[(7, 3)])).contains(&Effect::LoadAllRuns));
    }

    #[test]
    fn a_reviewer_who_opened_another_run_stays_there() {
        let mut app = App::new((100, 30));
        app.update(Action::RunLoaded(Box::new(run_data(2, 5))));
        assert_eq!(app.update(Action::Feed(Feed::Begun(7))), Vec::new());
        assert_eq!(app.update(progress(&[(7, 40)])), Vec::new(), "another run's steps are not loaded");
        let done = Feed::Done { runs: vec![7], message: "read".into(), error: false };
        assert_eq!(app.update(Action::Feed(done)), vec![Effect::LoadAllRuns]);
        assert_eq!(app.run.as_ref().map(|r| r.run_id()), Some(2));
    }

    #[test]
    fn the_last_step_is_followed_as_steps_arrive_until_another_key() {
        let mut app = App::new((100, 30));
        app.update(Action::Feed(Feed::Begun(7)));
        app.update(Action::RunLoaded(Box::new(run_data(7, 5))));
        app.update(Action::Command(Command::Bottom));
        app.update(progress(&[(7, 9)]));
        let effects = app.update(Action::StepsLoaded { run: 7, from: 5, steps: lines(5, 9), edits: Vec::new() });
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(8), "on the new last step");
        assert!(effects.contains(&Effect::LoadStep { run: 7, index: 8 }), "{effects:?}");
        // Another key: the cursor stays where the reviewer put it.
        app.update(Action::Command(Command::Up));
        app.update(progress(&[(7, 12)]));
        app.update(Action::StepsLoaded { run: 7, from: 9, steps: lines(9, 12), edits: Vec::new() });
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(7));
        // `G` again, then the run loaded whole at the end: on its last step.
        app.update(Action::Command(Command::Bottom));
        app.update(Action::Feed(Feed::Done { runs: vec![7], message: "read".into(), error: false }));
        app.update(Action::RunLoaded(Box::new(run_data(7, 15))));
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(14));
    }

    /// Issue 26: the file skimmed, every step is listed; `G` and `:N` read steps not stored yet
    /// from the file, and the stored ones take their places as they come.
    #[test]
    fn a_skimmed_file_lists_every_step_and_steps_not_stored_are_read_from_it() {
        let mut app = App::new((100, 30));
        app.update(Action::Feed(Feed::Begun(7)));
        app.update(progress(&[(7, 5)]));
        app.update(Action::RunLoaded(Box::new(run_data(7, 5))));
        app.update(Action::StepLoaded(Box::new(body(7, 0))));
        // `G` before the skim ends: the last step stored, for now.
        app.update(Action::Command(Command::Bottom));
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(4));
        let peek = PeekStep(std::sync::Arc::new(|i| Err(format!("step {i}"))));
        let effects = app.update(Action::Feed(Feed::Indexed { run: 7, steps: 100, peek: peek.clone() }));
        assert_eq!(effects, vec![Effect::PeekStep { run: 7, index: 99, peek: peek.clone() }], "the last step, read");
        let view = app.run.as_ref().map(|r| (r.data.steps.len(), r.cursor, r.stored_len(), r.while_read));
        assert_eq!(view, Some((100, 99, 5, true)));
        assert_eq!(app.run.as_ref().map(|r| r.data.steps[50].obs_chars), Some(UNREAD), "listed, not read");
        let line = |i: i64| lines(0, i + 1).remove(i as usize);
        app.update(Action::StepPeeked { run: 7, line: line(99), body: Box::new(body(7, 99)) });
        let view = app.run.as_ref().map(|r| (r.has_body(99), r.is_peeked(99), r.data.steps[99].obs_chars));
        assert_eq!(view, Some((true, true, 990)));
        // `:50`: read from the file too; a step stored is loaded from the database.
        app.update(Action::Command(Command::GotoStep));
        app.update(Action::Input('5'));
        app.update(Action::Input('0'));
        assert_eq!(app.update(Action::InputSubmit), vec![Effect::PeekStep { run: 7, index: 50, peek: peek.clone() }]);
        app.update(Action::Command(Command::Top));
        assert_eq!(app.update(Action::Command(Command::Down)), vec![Effect::LoadStep { run: 7, index: 1 }]);
        // Stored steps take the places of the listed ones; the body read early of a step stored
        // since is dropped (the stored one has its edits) and loaded when it is shown.
        app.update(Action::Command(Command::GotoStep));
        app.update(Action::Input('9'));
        app.update(Action::Input('9'));
        assert_eq!(app.update(Action::InputSubmit), Vec::new(), "read already");
        assert_eq!(app.update(progress(&[(7, 100)])), vec![Effect::LoadSteps { run: 7, from: 5 }]);
        let effects = app.update(Action::StepsLoaded { run: 7, from: 5, steps: lines(5, 60), edits: Vec::new() });
        assert_eq!(effects, vec![Effect::LoadSteps { run: 7, from: 60 }]);
        let view = app.run.as_ref().map(|r| (r.data.steps.len(), r.stored_len(), r.is_peeked(99)));
        assert_eq!(view, Some((100, 60, true)));
        // The answer to a read of a step stored meanwhile is not kept.
        app.update(Action::StepPeeked { run: 7, line: line(50), body: Box::new(body(7, 50)) });
        assert_eq!(app.run.as_ref().map(|r| r.is_peeked(50)), Some(false));
        let effects = app.update(Action::StepsLoaded { run: 7, from: 60, steps: lines(60, 100), edits: Vec::new() });
        assert_eq!(effects, vec![Effect::LoadStep { run: 7, index: 99 }]);
        let view = app.run.as_ref().map(|r| (r.data.steps.len(), r.stored_len(), r.unread_from, r.has_body(99)));
        assert_eq!(view, Some((100, 100, None, false)));
        // The end: the run loaded again; the bodies loaded while it was read lack its shell
        // edits, so the step shown is loaded again.
        app.update(Action::StepLoaded(Box::new(body(7, 99))));
        app.update(Action::Feed(Feed::Done { runs: vec![7], message: "read".into(), error: false }));
        assert!(app.indexed.is_none());
        let effects = app.update(Action::RunLoaded(Box::new(run_data(7, 100))));
        assert_eq!(effects, vec![Effect::LoadStep { run: 7, index: 99 }]);
        assert_eq!(app.run.as_ref().map(|r| (r.cursor, r.while_read)), Some((99, false)));
    }

    /// `j` (and `l`, a page down) on the last step known, the run being read and its file not
    /// skimmed yet: the move waits for the steps, and keys pressed meanwhile add to it; another
    /// key drops it. (`bench tui --open-only` pressed `l` on a first screen of one step, and the
    /// key was lost.)
    #[test]
    fn a_move_past_the_steps_known_while_the_run_is_read_is_made_when_they_come() {
        let mut app = App::new((100, 30));
        app.update(Action::Feed(Feed::Begun(7)));
        app.update(progress(&[(7, 1)]));
        app.update(Action::RunLoaded(Box::new(run_data(7, 1))));
        app.update(Action::Command(Command::NextStep));
        app.update(Action::Command(Command::Down));
        assert_eq!(app.run.as_ref().map(|r| (r.cursor, r.wanted)), Some((0, Some(2))));
        let effects = app.update(Action::StepsLoaded { run: 7, from: 1, steps: lines(1, 5), edits: Vec::new() });
        assert!(effects.contains(&Effect::LoadStep { run: 7, index: 2 }), "{effects:?}");
        assert_eq!(app.run.as_ref().map(|r| (r.cursor, r.wanted)), Some((2, None)));
        // Past the end again, then the file skimmed: made then.
        app.update(Action::Command(Command::PageDown));
        assert_eq!(app.run.as_ref().map(|r| r.cursor), Some(4));
        let peek = PeekStep(std::sync::Arc::new(|i| Err(format!("step {i}"))));
        app.update(Action::Feed(Feed::Indexed { run: 7, steps: 100, peek }));
        let page = app.rows;
        assert_eq!(app.run.as_ref().map(|r| (r.cursor, r.wanted)), Some(((2 + page).min(99), None)));
        // Past the end, then `k`: the wait is dropped.
        app.update(Action::Command(Command::Bottom));
        app.update(Action::Command(Command::Down));
        app.update(Action::Command(Command::Up));
        assert_eq!(app.run.as_ref().map(|r| (r.cursor, r.wanted)), Some((98, None)));
    }

    /// Steps are read ahead on a lane of their own: the step shown may be stored before its read
    /// from the file answers, and is then loaded from the database (it was left without a body).
    #[test]
    fn a_step_stored_while_it_was_read_ahead_is_loaded_when_the_read_answers() {
        let mut app = App::new((100, 30));
        app.update(Action::Feed(Feed::Begun(7)));
        app.update(progress(&[(7, 5)]));
        app.update(Action::RunLoaded(Box::new(run_data(7, 5))));
        app.update(Action::StepLoaded(Box::new(body(7, 0))));
        let peek = PeekStep(std::sync::Arc::new(|i| Err(format!("step {i}"))));
        app.update(Action::Feed(Feed::Indexed { run: 7, steps: 100, peek: peek.clone() }));
        app.update(Action::Command(Command::GotoStep));
        app.update(Action::Input('5'));
        app.update(Action::Input('0'));
        assert_eq!(app.update(Action::InputSubmit), vec![Effect::PeekStep { run: 7, index: 50, peek }]);
        app.update(progress(&[(7, 100)]));
        let effects = app.update(Action::StepsLoaded { run: 7, from: 5, steps: lines(5, 60), edits: Vec::new() });
        assert_eq!(effects, vec![Effect::LoadSteps { run: 7, from: 60 }]);
        let line = lines(50, 51).remove(0);
        let effects = app.update(Action::StepPeeked { run: 7, line, body: Box::new(body(7, 50)) });
        assert_eq!(effects, vec![Effect::LoadStep { run: 7, index: 50 }]);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(7412), "7,412");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
