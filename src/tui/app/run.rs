//! The run view: one run's steps, the step under the cursor, the panel on the right.

use super::{Effect, HSCROLL_STEP, Prompt, PromptKind, Screen, Status};
use crate::analysis::edits::{FilePatch, split_patch};
use crate::store::browse::{RunData, StepBody, StepLine};
use crate::tui::action::Command;
use crate::tui::diff::DiffMode;
use std::collections::VecDeque;

/// What the right-hand side shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Panel {
    /// Thought, action, observation and the step's diffs.
    Step,
    /// Files edited so far, rejections, open file, last edits, context ledger.
    State,
    /// Test outcome and task instruction.
    Tests,
    /// The final submission patch, one file at a time.
    FinalPatch,
    /// The gold patch, when known.
    GoldPatch,
    /// Failure-mode labels by source, with confidence, rationale and evidence steps.
    Labels,
}

impl Panel {
    pub fn title(self) -> &'static str {
        match self {
            Panel::Step => "step",
            Panel::State => "state",
            Panel::Tests => "tests & task",
            Panel::FinalPatch => "final patch",
            Panel::GoldPatch => "gold patch",
            Panel::Labels => "labels",
        }
    }

    pub fn cycle(self, forward: bool) -> Panel {
        use strum::IntoEnumIterator;
        let all: Vec<Panel> = Panel::iter().collect();
        let i = all.iter().position(|p| *p == self).unwrap_or(0);
        let n = all.len();
        all[if forward { (i + 1) % n } else { (i + n - 1) % n }]
    }
}

/// In-run search: the query and the steps that match it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Search {
    pub query: String,
    pub hits: Vec<i64>,
}

/// The `obs_chars` of a line standing for a step not read yet ([`RunView::extend_unread`]).
pub const UNREAD: i64 = -1;

/// How many step bodies are kept loaded (the current one and recently visited ones).
pub const BODY_CACHE: usize = 8;

#[derive(Debug)]
pub struct RunView {
    pub data: RunData,
    /// Position in `data.steps`.
    pub cursor: usize,
    /// First visible row of the step list (kept by the view).
    pub offset: usize,
    /// Bodies loaded on demand, most recent last; at most [`BODY_CACHE`].
    bodies: VecDeque<StepBody>,
    pub panel: Panel,
    /// Vertical scroll of the right-hand panel, in lines.
    pub scroll: usize,
    /// Columns the right-hand panel is scrolled sideways (long diff and code lines).
    pub hscroll: usize,
    /// Rows the focused panel showed in the last frame (what a page of it is).
    pub panel_rows: usize,
    /// Wrap long text lines (thought, action, observation); off, they are cut like diff lines
    /// and `hscroll` reaches them.
    pub wrap: bool,
    /// Show observations in full instead of head and tail.
    pub unfolded: bool,
    pub diff_mode: DiffMode,
    pub search: Option<Search>,
    /// A search (or `n`/`N`) just moved to a step: the step panel opens at the first line that
    /// matches, once the body is drawn (the view finds the line: `Viewport::match_scroll`).
    pub to_match: bool,
    /// File shown in a patch panel.
    pub file: usize,
    /// The submission and the gold patch split per file, once, when the run loads (`None`:
    /// no such patch).
    final_files: Option<Vec<FilePatch>>,
    gold_files: Option<Vec<FilePatch>>,
    /// Steps the labels cite, in step order, each with what it is evidence of.
    pub evidence: Vec<(i64, String)>,
    /// The reviewer's label being made.
    pub draft: super::Draft,
    /// The label as last saved (or empty): the draft differs from it until saved.
    pub saved_draft: super::Draft,
    /// Classifier labels held back by blind review.
    pub hidden_labels: usize,
    /// The taxonomy's modes in key order (1–9) and the reviewer, for the labels panel.
    pub label_modes: Vec<String>,
    pub rater: String,
    /// Steps stored since the run was loaded have been asked for (the run is being read).
    pub growing: bool,
    /// The last key was `G` (the last step): steps that arrive move the cursor on to the new last.
    pub follow_end: bool,
    /// Where `j`, `l` or a page down pressed past the steps known (the run being read, its file
    /// not skimmed yet) would have gone: the cursor goes there as the steps arrive.
    pub wanted: Option<usize>,
    /// The run is being read and its file was skimmed: the lines from here on are steps not yet
    /// stored (read from the file when the reviewer goes there, else placeholders).
    pub unread_from: Option<usize>,
    /// Steps whose body was read from the file, not the database.
    peeked: Vec<i64>,
    /// Loaded while its run was being read: its shell edits are not reconstructed yet.
    pub while_read: bool,
}

/// The steps the labels cite, in order, with "mode (rater): note" for the status line. A step
/// cited by several verdicts keeps its first citation.
fn cited_steps(labels: &[crate::store::labels::LabelRow]) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    for row in labels {
        let l = &row.label;
        for (assigned, verdicts) in [(true, &l.modes), (false, &l.considered)] {
            for m in verdicts {
                for e in &m.evidence {
                    let weighed = if assigned { "" } else { " weighed" };
                    let note = if e.note.is_empty() { String::new() } else { format!(": {}", e.note) };
                    out.push((e.step as i64, format!("{}{weighed} ({}){note}", m.mode, l.rater)));
                }
            }
        }
    }
    out.sort_by_key(|(s, _)| *s);
    out.dedup_by_key(|(s, _)| *s);
    out
}

impl RunView {
    /// A move of the cursor, the body's scroll or the patch file shown; whether `cmd` was one.
    fn moved(&mut self, cmd: Command, page: usize) -> bool {
        // Keys pressed while a move waits go on from where it would end.
        let from = self.wanted.take().unwrap_or(self.cursor);
        match cmd {
            Command::Down | Command::NextStep => self.go_down(from + 1),
            Command::Up | Command::PrevStep => self.go(self.cursor.saturating_sub(1)),
            Command::PageDown => self.go_down(from + page),
            Command::PageUp => self.go(self.cursor.saturating_sub(page)),
            Command::Top => self.go(0),
            Command::Bottom => self.go(usize::MAX),
            Command::ScrollDown => self.scroll += 3,
            Command::ScrollUp => self.scroll = self.scroll.saturating_sub(3),
            // A page less two lines, so the last lines seen stay in view.
            Command::BodyPageDown => self.scroll += self.panel_rows.saturating_sub(2).max(1),
            Command::BodyPageUp => self.scroll = self.scroll.saturating_sub(self.panel_rows.saturating_sub(2).max(1)),
            Command::LineStart => {
                self.scroll = 0;
                self.hscroll = 0;
            }
            Command::LineEnd => self.scroll = usize::MAX / 2,
            // Clamped to the longest line by the next viewport.
            Command::ScrollRight => self.hscroll += HSCROLL_STEP,
            Command::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(HSCROLL_STEP),
            Command::ToggleFold => self.unfolded = !self.unfolded,
            Command::NextFile if self.file + 1 < self.patch_files() => {
                self.file += 1;
                self.scroll = 0;
            }
            Command::PrevFile => {
                self.file = self.file.saturating_sub(1);
                self.scroll = 0;
            }
            _ => return false,
        }
        true
    }
    pub fn new(data: RunData) -> RunView {
        let final_files = data.submission.as_deref().map(split_patch);
        let gold_files = data.task.as_ref().and_then(|t| t.gold_patch.as_deref()).map(split_patch);
        let evidence = cited_steps(&data.labels);
        RunView {
            evidence,
            draft: super::Draft::default(),
            saved_draft: super::Draft::default(),
            hidden_labels: 0,
            label_modes: Vec::new(),
            rater: String::new(),
            final_files,
            gold_files,
            data,
            cursor: 0,
            offset: 0,
            bodies: VecDeque::new(),
            panel: Panel::Step,
            scroll: 0,
            hscroll: 0,
            panel_rows: 1,
            wrap: true,
            unfolded: false,
            diff_mode: DiffMode::Unified,
            search: None,
            to_match: false,
            file: 0,
            growing: false,
            follow_end: false,
            wanted: None,
            unread_from: None,
            peeked: Vec::new(),
            while_read: false,
        }
    }

    /// The same run loaded again: where the reviewer was and how the panel looked, and the
    /// step bodies already loaded (a reload does not change them).
    pub fn keep_from(&mut self, prev: RunView) {
        self.cursor = prev.cursor.min(self.data.steps.len().saturating_sub(1));
        self.offset = prev.offset;
        // Bodies loaded while the run was read lack the edits reconstructed at its end.
        if self.while_read || !prev.while_read {
            self.bodies = prev.bodies;
            self.peeked = prev.peeked;
        }
        self.panel = prev.panel;
        self.scroll = prev.scroll;
        self.hscroll = prev.hscroll;
        self.wrap = prev.wrap;
        self.unfolded = prev.unfolded;
        self.diff_mode = prev.diff_mode;
        self.file = prev.file;
        self.follow_end = prev.follow_end;
        self.wanted = prev.wanted;
        self.arrived();
    }

    /// Steps arrived (stored, or the file skimmed): a move that waited for them is made: the
    /// last step after `G`, the step `j` or a page down was pressed for.
    pub fn arrived(&mut self) {
        if self.follow_end {
            self.go(usize::MAX);
        } else if let Some(want) = self.wanted {
            self.go(want);
            if want < self.data.steps.len() {
                self.wanted = None;
            }
        }
    }

    /// Move down to `pos`; past the steps known while the run is read, the move waits for them.
    fn go_down(&mut self, pos: usize) {
        self.wanted = (self.while_read && pos >= self.data.steps.len()).then_some(pos);
        self.go(pos);
    }

    pub fn run_id(&self) -> i64 {
        self.data.summary.id
    }

    /// Index (the step's own number) of the step under the cursor.
    pub fn step_index(&self) -> Option<i64> {
        self.data.steps.get(self.cursor).map(|s| s.index)
    }

    pub fn body(&self) -> Option<&StepBody> {
        let idx = self.step_index()?;
        self.bodies.iter().find(|b| b.step.index == idx)
    }

    pub fn has_body(&self, index: i64) -> bool {
        self.bodies.iter().any(|b| b.step.index == index)
    }

    /// The run has `total` steps (its file skimmed while it is read): the steps not yet stored
    /// are listed, as placeholders until read.
    pub fn extend_unread(&mut self, total: usize) {
        let have = self.data.steps.len();
        if total <= have {
            return;
        }
        self.unread_from.get_or_insert(have);
        self.data.steps.extend((have..total).map(|i| StepLine {
            index: i as i64,
            tool: None,
            flags: crate::model::StepFlags::default(),
            obs_chars: UNREAD,
            action_head: String::new(),
            says: None,
            open_file: None,
            working_dir: None,
        }));
        self.data.summary.steps = total as i64;
    }

    /// Steps stored (the lines before the first not yet stored).
    pub fn stored_len(&self) -> usize {
        self.unread_from.unwrap_or(self.data.steps.len())
    }

    /// The line at `pos` is a step not yet stored.
    pub fn is_unread(&self, pos: usize) -> bool {
        self.unread_from.is_some_and(|u| pos >= u)
    }

    /// The step's body was read from the file, ahead of the reading.
    pub fn is_peeked(&self, index: i64) -> bool {
        self.peeked.contains(&index)
    }

    /// Lines of steps stored from `from` on: they take the places of those not yet stored. A
    /// body read ahead of them is dropped (the database's has the edits stored with it); true
    /// when that was the step under the cursor.
    pub fn store_lines(&mut self, from: usize, lines: Vec<StepLine>) -> bool {
        let end = from + lines.len();
        let replaced = end.min(self.data.steps.len()).saturating_sub(from);
        self.data.steps.splice(from..from + replaced, lines);
        self.unread_from = self.unread_from.filter(|_| end < self.data.steps.len()).map(|_| end);
        self.data.summary.steps = self.data.steps.len() as i64;
        let stored = |i: &i64| (from as i64..end as i64).contains(i);
        let forget: Vec<i64> = self.peeked.iter().copied().filter(stored).collect();
        self.peeked.retain(|i| !stored(i));
        self.bodies.retain(|b| !forget.contains(&b.step.index));
        self.step_index().is_some_and(|i| forget.contains(&i))
    }

    /// A step not yet stored, read from the file: its line and body.
    pub fn peeked(&mut self, line: StepLine, body: StepBody) {
        let Ok(pos) = usize::try_from(line.index) else { return };
        // Stored meanwhile: the database's body is the one to show.
        if !self.is_unread(pos) || self.data.steps.get(pos).is_none_or(|l| l.index != line.index) {
            return;
        }
        self.data.steps[pos] = line;
        let index = body.step.index;
        self.store_body(body);
        self.peeked.push(index);
    }

    pub fn store_body(&mut self, body: StepBody) {
        self.peeked.retain(|i| *i != body.step.index);
        self.bodies.retain(|b| b.step.index != body.step.index);
        self.bodies.push_back(body);
        while self.bodies.len() > BODY_CACHE {
            if let Some(gone) = self.bodies.pop_front() {
                self.peeked.retain(|i| *i != gone.step.index);
            }
        }
    }

    pub fn cached_bodies(&self) -> usize {
        self.bodies.len()
    }

    /// Move to a position in the step list; resets the panel scroll.
    pub fn go(&mut self, pos: usize) {
        let pos = pos.min(self.data.steps.len().saturating_sub(1));
        if pos != self.cursor {
            self.cursor = pos;
            self.scroll = 0;
        }
    }

    /// Move to the step with this number, if there is one.
    pub fn go_to_index(&mut self, index: i64) -> bool {
        match self.data.steps.iter().position(|s| s.index == index) {
            Some(p) => {
                self.go(p);
                true
            }
            None => false,
        }
    }

    /// The next (or previous) step after the cursor that satisfies `pred`.
    pub fn find(&self, forward: bool, pred: impl Fn(&crate::store::browse::StepLine) -> bool) -> Option<usize> {
        let steps = &self.data.steps;
        if forward {
            (self.cursor + 1..steps.len()).find(|&i| pred(&steps[i]))
        } else {
            (0..self.cursor).rev().find(|&i| pred(&steps[i]))
        }
    }

    /// The next (or previous) search hit relative to the cursor, wrapping around.
    pub fn next_hit(&self, forward: bool) -> Option<i64> {
        let hits = &self.search.as_ref()?.hits;
        let here = self.step_index()?;
        let found = if forward {
            hits.iter().find(|&&h| h > here).or_else(|| hits.first())
        } else {
            hits.iter().rev().find(|&&h| h < here).or_else(|| hits.last())
        };
        found.copied()
    }

    /// The next (or previous) cited step relative to the cursor, wrapping around.
    pub fn next_evidence(&self, forward: bool) -> Option<&(i64, String)> {
        let here = self.step_index()?;
        if forward {
            self.evidence.iter().find(|(s, _)| *s > here).or_else(|| self.evidence.first())
        } else {
            self.evidence.iter().rev().find(|(s, _)| *s < here).or_else(|| self.evidence.last())
        }
    }

    /// The next (or previous) step after the cursor with a reviewer's note, wrapping around, and
    /// the first note on it.
    pub fn next_note(&self, forward: bool) -> Option<&crate::store::notes::NoteRow> {
        let here = self.step_index()?;
        let mut notes: Vec<&crate::store::notes::NoteRow> = self.data.notes.iter().collect();
        notes.sort_by_key(|n| (n.step, n.id));
        if forward {
            notes.iter().find(|n| n.step > here).or_else(|| notes.first()).copied()
        } else {
            let before = notes.iter().rev().find(|n| n.step < here).or_else(|| notes.last()).map(|n| n.step)?;
            notes.into_iter().find(|n| n.step == before)
        }
    }

    /// The run's labels and notes replaced by newer ones (the evidence they cite with them).
    pub fn set_labels(
        &mut self,
        labels: Vec<crate::store::labels::LabelRow>,
        notes: Vec<crate::store::notes::NoteRow>,
    ) {
        self.evidence = cited_steps(&labels);
        self.data.labels = labels;
        self.data.notes = notes;
    }

    pub fn is_evidence(&self, index: i64) -> bool {
        self.evidence.binary_search_by_key(&index, |(s, _)| *s).is_ok()
    }

    /// Keep the cursor inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        self.offset = super::keep_in_view(self.cursor, self.offset, height, self.data.steps.len());
    }

    /// The patch a patch panel shows: the run's submission, or the task's gold patch.
    pub fn patch(&self, panel: Panel) -> Option<&[FilePatch]> {
        match panel {
            Panel::FinalPatch => self.final_files.as_deref(),
            Panel::GoldPatch => self.gold_files.as_deref(),
            _ => None,
        }
    }

    /// The reviewers' notes on a step.
    pub fn notes_of(&self, step: i64) -> impl Iterator<Item = &crate::store::notes::NoteRow> {
        self.data.notes.iter().filter(move |n| n.step == step)
    }

    pub fn patch_files(&self) -> usize {
        self.patch(self.panel).map_or(0, <[FilePatch]>::len)
    }
}

impl super::App {
    pub(super) fn run_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = self.rows;
        let Some(run) = self.run.as_mut() else {
            self.screen = Screen::List;
            return Vec::new();
        };
        // `G` on a run being read keeps to its last step as more come, until another key.
        run.follow_end = cmd == Command::Bottom;
        if run.moved(cmd, page) {
            return self.load_current_step();
        }
        match cmd {
            Command::Back if run.search.is_some() => {
                run.search = None;
                self.set_info("search ended".to_string());
                return Vec::new();
            }
            Command::Back if self.direct == Some(run.run_id()) && self.return_to.is_none() => {
                self.quit_or_warn();
                return Vec::new();
            }
            Command::Back => {
                self.screen = match self.return_to.take() {
                    Some(Screen::Compare) if self.compare.is_some() => Screen::Compare,
                    _ => Screen::List,
                };
                return Vec::new();
            }
            Command::Compare => {
                let id = run.run_id();
                return self.compare_command(Some(id));
            }
            Command::ExportReport => return self.export_report(),
            Command::ToggleWrap => {
                run.wrap = !run.wrap;
                let how = if run.wrap { "wrapped" } else { "cut (< > scroll sideways)" };
                self.set_info(format!("long lines {how}"));
            }
            Command::NextEdit | Command::PrevEdit => {
                let forward = cmd == Command::NextEdit;
                match run.find(forward, |s| s.flags.edit) {
                    Some(p) => run.go(p),
                    None => self.status = Some(Status { text: "no more edits".into(), error: false }),
                }
            }
            Command::NextProblem | Command::PrevProblem => {
                let forward = cmd == Command::NextProblem;
                match run.find(forward, |s| s.flags.error || s.flags.format_error || s.flags.edit_rejected) {
                    Some(p) => run.go(p),
                    None => {
                        self.status = Some(Status { text: "no more errors or rejected edits".into(), error: false })
                    }
                }
            }
            Command::NextRun | Command::PrevRun => {
                let delta = if cmd == Command::NextRun { 1 } else { -1 };
                let before = self.list.cursor;
                self.list.move_by(delta);
                self.list.scroll_into_view(page);
                return match self.list.selected().map(|r| r.id) {
                    Some(id) if self.list.cursor != before => vec![Effect::LoadRun(id)],
                    _ => {
                        self.set_info("no more runs in the list".into());
                        Vec::new()
                    }
                };
            }
            Command::Search => {
                let text = run.search.as_ref().map(|s| s.query.clone()).unwrap_or_default();
                self.prompt = Some(Prompt { kind: PromptKind::Search, text });
            }
            Command::SearchNext | Command::SearchPrev => match run.next_hit(cmd == Command::SearchNext) {
                Some(index) => {
                    run.go_to_index(index);
                    run.to_match = true;
                }
                None => self.set_info("no search hits (/ to search)".into()),
            },
            Command::GotoStep => self.prompt = Some(Prompt { kind: PromptKind::Goto, text: String::new() }),
            Command::DiffMode => {
                run.diff_mode = match run.diff_mode {
                    DiffMode::Unified => DiffMode::SideBySide,
                    DiffMode::SideBySide => DiffMode::Unified,
                };
            }
            Command::NextPanel | Command::PrevPanel => {
                run.panel = run.panel.cycle(cmd == Command::NextPanel);
                run.scroll = 0;
                run.file = 0;
            }
            Command::NextEvidence | Command::PrevEvidence => match run.next_evidence(cmd == Command::NextEvidence) {
                Some((index, why)) => {
                    let (index, why) = (*index, why.clone());
                    run.go_to_index(index);
                    self.set_info(format!("step {index}: evidence for {why}"));
                }
                None if run.hidden_labels > 0 => {
                    self.set_info("the classifiers' evidence is hidden until you save your label (blind review)".into())
                }
                None => self.set_info("no label cites a step (trajan classify makes labels)".into()),
            },
            Command::NextNote | Command::PrevNote => match run.next_note(cmd == Command::NextNote) {
                Some(note) => {
                    let (index, said) = (note.step, format!("{}: {}", note.rater, note.text));
                    run.go_to_index(index);
                    self.set_info(format!("step {index}: note by {said}"));
                }
                None => self.set_info("no step has a note (m writes one)".into()),
            },
            Command::Labels => {
                run.panel = if run.panel == Panel::Labels { Panel::Step } else { Panel::Labels };
                run.scroll = 0;
            }
            cmd if cmd.mode_index().is_some() => {
                let i = cmd.mode_index().unwrap_or(0);
                match self.review.taxonomy.modes.get(i) {
                    Some(mode) => run.draft.toggle_mode(&mode.id),
                    None => {
                        let n = self.review.taxonomy.modes.len();
                        self.set_error(format!("{} has {n} modes (keys 1 to {n})", self.review.taxonomy.stamp()));
                    }
                }
            }
            Command::Unclassified => run.draft.toggle_unclassified(),
            Command::ConfidenceUp | Command::ConfidenceDown => {
                run.draft.adjust_confidence(cmd == Command::ConfidenceUp)
            }
            Command::AttachEvidence if run.draft.unclassified => {
                self.set_error(
                    "an unclassified label cites no evidence: toggle a mode first, or write the steps in the note (c)"
                        .into(),
                );
            }
            Command::AttachEvidence => {
                if let Some(step) = run.step_index() {
                    let added = run.draft.toggle_evidence(step as usize);
                    let what = if added { "attached to" } else { "detached from" };
                    self.set_info(format!("step {step} {what} your label's evidence"));
                }
            }
            Command::GotoOnset => return self.goto_onset(),
            Command::MarkOnset => {
                if let Some(step) = run.step_index().and_then(|s| usize::try_from(s).ok()) {
                    let message = run.draft.toggle_onset(step);
                    self.set_info(message);
                }
            }
            Command::CycleBlame => {
                let message = run.draft.cycle_blame();
                self.set_info(message);
            }
            Command::Note => {
                let text = run.draft.note.clone();
                self.prompt = Some(Prompt { kind: PromptKind::Note, text });
            }
            Command::StepNote => self.step_note_prompt(),
            Command::SaveLabel | Command::SaveAdjudication => return self.save_label(cmd == Command::SaveAdjudication),
            Command::NextUnlabelled => return self.next_unlabelled(),
            Command::Copy => return self.copy_focused(),
            Command::CopyStep => return self.copy_step(),
            _ => {}
        }
        self.load_current_step()
    }

    /// The step shown (thought, action, observation, as read: a long text's head and tail), to
    /// the clipboard.
    fn copy_step(&mut self) -> Vec<Effect> {
        let Some(body) = self.run.as_ref().and_then(|r| r.body()) else { return Vec::new() };
        let s = &body.step;
        let text = format!(
            "step {}\n\nthought:\n{}\n\naction:\n{}\n\nobservation:\n{}\n",
            s.index,
            s.text_read(0),
            s.text_read(1),
            s.text_read(2)
        );
        let what = format!("step {}", s.index);
        self.copy(&what, &text)
    }

    /// The prompt for this reviewer's note on the step shown, holding the note they left there.
    fn step_note_prompt(&mut self) {
        let Some(run) = self.run.as_ref() else { return };
        let Some(step) = run.step_index() else { return };
        let rater = &self.review.rater;
        // A note typed before a name was given, on this step: offered again.
        let kept = match &self.waiting {
            Some(super::Waiting::StepNote { run: r, step: s, text }) if *r == run.run_id() && *s == step => {
                Some(text.clone())
            }
            _ => None,
        };
        let text = kept.unwrap_or_else(|| {
            run.notes_of(step).find(|n| &n.rater == rater).map(|n| n.text.clone()).unwrap_or_default()
        });
        self.prompt = Some(Prompt { kind: PromptKind::StepNote, text });
    }

    /// The text a reviewer most likely wants: the action of the step, or the patch file shown.
    pub(super) fn copy_focused(&mut self) -> Vec<Effect> {
        let Some(run) = self.run.as_ref() else { return Vec::new() };
        let text = match run.panel {
            Panel::FinalPatch | Panel::GoldPatch => {
                run.patch(run.panel).and_then(|files| files.get(run.file)).map(|f| f.diff.clone())
            }
            _ => run.body().map(|b| b.step.action.clone()),
        };
        match text {
            Some(t) if !t.is_empty() => {
                let what = if matches!(run.panel, Panel::FinalPatch | Panel::GoldPatch) {
                    "the patch file"
                } else {
                    "the action"
                };
                self.copy(what, &t)
            }
            _ => {
                self.set_info("nothing to copy here".into());
                Vec::new()
            }
        }
    }

    /// Ask for the current step's body unless it is loaded.
    pub(super) fn load_current_step(&mut self) -> Vec<Effect> {
        let rows = self.rows;
        let Some(run) = self.run.as_mut() else { return Vec::new() };
        run.scroll_into_view(rows);
        match run.step_index() {
            Some(index) if run.has_body(index) => Vec::new(),
            // Not stored yet: read from the file (once it is skimmed), else loaded once stored.
            Some(index) if run.is_unread(run.cursor) => match &self.indexed {
                Some(ix) if ix.run == run.run_id() => {
                    vec![Effect::PeekStep { run: ix.run, index, peek: ix.peek.clone() }]
                }
                _ => Vec::new(),
            },
            Some(index) => vec![Effect::LoadStep { run: run.run_id(), index }],
            None => Vec::new(),
        }
    }

    pub(super) fn search_done(&mut self, query: String, steps: Vec<i64>) -> Vec<Effect> {
        let Some(run) = self.run.as_mut() else { return Vec::new() };
        let count = steps.len();
        run.search = Some(Search { query: query.clone(), hits: steps });
        if count == 0 {
            self.set_info(format!("{query:?}: no step matches"));
            return Vec::new();
        }
        let here = run.step_index().unwrap_or(0);
        let on_hit = run.search.as_ref().is_some_and(|s| s.hits.contains(&here));
        if !on_hit && let Some(index) = run.next_hit(true) {
            run.go_to_index(index);
        }
        run.to_match = true;
        self.set_info(format!("{query:?}: {count} steps match (n/N next/previous)"));
        self.load_current_step()
    }
}
