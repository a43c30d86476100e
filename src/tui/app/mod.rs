//! The review state and its one transition function. No IO here: `update` returns effects as
//! data and the driver performs them, so every flow is a plain unit test.

mod compare;
mod export;
mod index;
mod list;
mod onset;
mod reading;
mod review;
mod run;
mod stats;
#[cfg(test)]
pub(crate) mod tests;

pub use compare::{ComparePanel, CompareSearch, CompareView, MAX_COLUMNS, MIN_COLUMN, Picker, visible_columns};
pub use list::ListState;
pub use onset::Shown;
pub use reading::{Reading, thousands};
pub use review::{CONFIDENCE_STEP, Draft, Review};
pub use run::{BODY_CACHE, Panel, RunView, Search, UNREAD};
pub use stats::StatsView;

use crate::review::summary::StatsReport;
use crate::store::browse::RunData;
use crate::tui::action::Viewport;
use crate::tui::action::{Action, Command};

/// The most text one copy sends (OSC 52 carries it base64-encoded, a third larger; tmux and
/// terminals drop sequences much larger than this).
pub const COPY_LIMIT: usize = 256 * 1024;

/// Columns `<` / `>` scroll long lines by.
pub const HSCROLL_STEP: usize = 8;

/// Work the driver does for the app; results come back as actions.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    LoadRun(i64),
    /// Ask the store for its labels' stamp (`Action::ReviewStamp`).
    CheckReview,
    /// Read the current labels and the notes of a run again (`Action::RunLabelsLoaded`).
    LoadRunLabels(i64),
    /// Load a run again (it was being read and is complete now): keys do not wait for it.
    RefreshRun(i64),
    /// Steps of a run being read, from `from` on.
    LoadSteps {
        run: i64,
        from: usize,
    },
    LoadStep {
        run: i64,
        index: i64,
    },
    /// A step of a run being read, from its file: it is not stored yet.
    PeekStep {
        run: i64,
        index: i64,
        peek: crate::tui::action::PeekStep,
    },
    Search {
        run: i64,
        query: String,
    },
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Write (or remove, when empty) a reviewer's note on a step.
    SaveNote {
        run: i64,
        step: i64,
        rater: String,
        text: String,
    },
    /// Append a reviewer's label.
    SaveLabel {
        label: Box<crate::label::Label>,
        note: Option<String>,
    },
    /// Read every run's review state for this reviewer under this taxonomy.
    LoadReview {
        taxonomy: String,
        version: String,
        rater: String,
    },
    /// Every run, for the list (the first screen came from a bounded query).
    LoadAllRuns,
    /// Statistics and agreement per mode, for the statistics screen.
    LoadStats {
        taxonomy: Box<crate::label::taxonomy::Taxonomy>,
        ask: crate::review::summary::Ask,
    },
    /// These runs read and compared (steps aligned, patches side by side).
    LoadCompare(Vec<i64>),
    /// The other runs of this run's instance, read from the store, for the picker.
    LoadPicker(i64),
    /// Search every compared run.
    SearchCompared {
        runs: Vec<i64>,
        query: String,
    },
    /// Add the runs waiting for the search index to it (slow lane; progress as
    /// [`Action::Indexing`], then [`Action::Indexed`]).
    BuildIndex,
    /// Write the chart of `kind` over the statistics `ask` asks for, as SVG, in `dir` (the
    /// agreement with its bootstrap intervals).
    ExportChart {
        taxonomy: Box<crate::label::taxonomy::Taxonomy>,
        ask: crate::review::summary::Ask,
        kind: crate::review::chart::Kind,
        dir: std::path::PathBuf,
    },
    /// Write these runs as an HTML report in `dir`.
    ExportReport {
        taxonomy: Box<crate::label::taxonomy::Taxonomy>,
        ask: crate::review::summary::Ask,
        runs: Vec<i64>,
        dir: std::path::PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    List,
    Run,
    Stats,
    Compare,
}

/// A one-line text prompt at the bottom of the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

/// Something typed that waits for the reviewer's name.
#[derive(Debug, Clone, PartialEq)]
pub enum Waiting {
    /// A note on a step of a run.
    StepNote { run: i64, step: i64, text: String },
    /// The label being made, to save (as an adjudication or not).
    Label { adjudication: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Filter,
    Search,
    Goto,
    /// The note of the label being made.
    Note,
    /// The reviewer's note on the step under the cursor.
    StepNote,
    /// The run list's sort column: one key picks it.
    Sort,
    /// Who is labelling, asked when a note or a label is to be saved and no name was given
    /// (`--rater`, config, `$USER`): what was typed waits for it ([`App::waiting`]).
    Rater,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Filter => "filter",
            PromptKind::Search => "search",
            PromptKind::Goto => "go to step",
            PromptKind::Note => "note",
            PromptKind::StepNote => "note on this step",
            PromptKind::Sort => "sort by",
            PromptKind::Rater => "who is labelling? your name",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

#[derive(Debug)]
pub struct App {
    pub screen: Screen,
    pub list: ListState,
    pub run: Option<RunView>,
    /// Where the reviewer was in each run opened this session (step list position), so
    /// coming back to a run comes back to the same step.
    places: std::collections::HashMap<i64, usize>,
    pub prompt: Option<Prompt>,
    /// The store's labels as last seen ([`Action::ReviewStamp`]); `None` until first asked.
    pub review_stamp: Option<String>,
    /// What waits for the reviewer's name ([`PromptKind::Rater`]): kept until it is given, and
    /// offered again by the prompt it came from when that prompt is given up.
    pub waiting: Option<Waiting>,
    /// Help overlay and its scroll.
    pub help: Option<usize>,
    pub status: Option<Status>,
    pub size: (u16, u16),
    /// Rows of the list the last frame showed (for paging); estimated until the first frame.
    pub rows: usize,
    pub quit: bool,
    /// The reviewer, the queues and blind review.
    pub review: Review,
    /// The statistics screen, once loaded.
    pub stats: Option<StatsView>,
    /// Unsaved label drafts of runs the reviewer left, kept until saved.
    drafts: std::collections::HashMap<i64, Draft>,
    /// The reviewer was told about unsaved drafts; the next quit quits.
    warned_drafts: bool,
    /// The screen to go back to from the statistics.
    stats_from: Screen,
    /// The comparison screen, once loaded, and the screen it was opened from.
    pub compare: Option<CompareView>,
    compare_from: Screen,
    /// Runs marked in the list for comparison.
    pub marked: std::collections::BTreeSet<i64>,
    /// The picker of a run to compare with, when open.
    pub picker: Option<Picker>,
    /// Where `Back` in the run view goes when not to the list (a run opened from a comparison).
    return_to: Option<Screen>,
    /// The search index being built in the background: runs indexed of runs waiting.
    pub indexing: Option<(i64, i64)>,
    /// Searches asked while the index is built, sent once it is.
    held_searches: Vec<Effect>,
    /// Files being read beside the TUI (`trajan PATH`): how far.
    pub reading: Option<Reading>,
    /// The file of the run being read was skimmed: how many steps it has, and how to read one
    /// before it is stored.
    pub indexed: Option<reading::Indexed>,
    /// A run was opened for the reading (the first one begun): no other is opened for it.
    opened_from_feed: bool,
    /// While files are read whole: the run list is being asked again (one request at a time),
    /// and how far the reading had got when it was last asked.
    listing: bool,
    listed_at: u64,
    /// Where charts and reports are written: the folder the TUI was started in.
    pub export_dir: std::path::PathBuf,
    /// The run the TUI was opened on (`trajan open RUN`, or the one run of a file read alone):
    /// leaving it quits, as a pager does, instead of showing a list of one run.
    pub direct: Option<i64>,
}

/// The first visible row of a list of `len` rows shown `height` at a time, so that `cursor` is
/// visible and the last page is full.
pub fn keep_in_view(cursor: usize, offset: usize, height: usize, len: usize) -> usize {
    let height = height.max(1);
    let offset = if cursor < offset {
        cursor
    } else if cursor >= offset + height {
        cursor + 1 - height
    } else {
        offset
    };
    offset.min(len.saturating_sub(height))
}

/// Rows the list and step list can show: the screen minus header, status line and borders.
pub fn body_rows(size: (u16, u16)) -> usize {
    usize::from(size.1.saturating_sub(4)).max(1)
}

impl App {
    pub fn new(size: (u16, u16)) -> App {
        App {
            screen: Screen::List,
            list: ListState::default(),
            run: None,
            places: std::collections::HashMap::new(),
            prompt: None,
            review_stamp: None,
            waiting: None,
            help: None,
            status: None,
            size,
            rows: body_rows(size),
            quit: false,
            review: Review::default(),
            stats: None,
            stats_from: Screen::List,
            drafts: std::collections::HashMap::new(),
            warned_drafts: false,
            compare: None,
            compare_from: Screen::List,
            marked: std::collections::BTreeSet::new(),
            picker: None,
            return_to: None,
            indexing: None,
            held_searches: Vec::new(),
            reading: None,
            indexed: None,
            opened_from_feed: false,
            listing: false,
            listed_at: 0,
            export_dir: std::path::PathBuf::from("."),
            direct: None,
        }
    }

    /// Apply an action; the effects it asks for (searches held while the index is built).
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let effects = self.react(action);
        self.hold_searches(effects)
    }

    fn react(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Indexing { done, total } => self.indexing_progress(done, total),
            Action::Indexed => self.indexed(),
            Action::Resize(w, h) => {
                self.size = (w, h);
                Vec::new()
            }
            Action::Viewport(v) => {
                self.apply_viewport(v);
                Vec::new()
            }
            Action::RunsLoaded { runs, complete, total } => {
                self.listing = false;
                self.list.set_runs(runs, complete);
                self.list.total = if complete { Some(self.list.runs.len() as i64) } else { total };
                self.apply_queue();
                Vec::new()
            }
            Action::ReviewLoaded(states) => {
                self.review.states = states;
                self.list.set_labels(self.review.label_index());
                self.apply_queue();
                Vec::new()
            }
            Action::StatsLoaded(report) => self.stats_loaded(*report),
            Action::NoteSaved { run, step, kept } => {
                let what = if kept { "saved the note on" } else { "removed the note from" };
                self.set_info(format!("{what} step {step} (trajan notes lists them)"));
                vec![Effect::RefreshRun(run)]
            }
            Action::LabelSaved { run, label_id } => self.label_saved(run, label_id),
            Action::Open(id) => vec![Effect::LoadRun(id)],
            Action::Compare(ids) => vec![Effect::LoadCompare(ids)],
            Action::CompareLoaded(data) => {
                self.compare_loaded(*data);
                Vec::new()
            }
            Action::PickerLoaded { base, instance, runs } => {
                self.picker_loaded(base, instance, runs);
                Vec::new()
            }
            Action::CompareSearchDone { query, steps } => {
                self.compare_search_done(query, steps);
                Vec::new()
            }
            Action::RunLoaded(data) => self.run_loaded(*data),
            Action::Tick => vec![Effect::CheckReview],
            Action::ReviewStamp(stamp) => match self.review_stamp.replace(stamp.clone()) {
                // Someone labelled or noted since: what is on screen is read again.
                Some(known) if known != stamp => self.refresh(),
                _ => Vec::new(),
            },
            Action::RunLabelsLoaded { run, labels, notes } => {
                self.run_labels_loaded(run, labels, notes);
                Vec::new()
            }
            Action::StepsLoaded { run, from, steps, edits } => self.steps_loaded(run, from, steps, edits),
            Action::Feed(feed) => self.feed(feed),
            Action::StepPeeked { run, line, body } => {
                let Some(view) = self.run.as_mut().filter(|r| r.run_id() == run) else { return Vec::new() };
                view.peeked(line, *body);
                // Steps are read ahead on a lane of their own: the step may have been stored
                // while it was read from the file, its stored body not asked for yet.
                self.load_current_step()
            }
            Action::StepLoaded(body) => {
                if let Some(run) = self.run.as_mut().filter(|r| r.run_id() == body.run_id) {
                    run.store_body(*body);
                }
                Vec::new()
            }
            Action::SearchDone { query, steps } => self.search_done(query, steps),
            Action::Failed(message) => {
                self.set_error(message);
                Vec::new()
            }
            Action::Exported(message) => {
                self.set_info(message);
                Vec::new()
            }
            Action::Input(c) if self.prompt.as_ref().is_some_and(|p| p.kind == PromptKind::Sort) => {
                self.prompt = None;
                self.pick_sort(c);
                Vec::new()
            }
            Action::Input(c) => {
                if let Some(p) = self.prompt.as_mut() {
                    p.text.push(c);
                }
                Vec::new()
            }
            Action::InputBackspace => {
                if let Some(p) = self.prompt.as_mut() {
                    p.text.pop();
                }
                Vec::new()
            }
            Action::InputClear => {
                if let Some(p) = self.prompt.as_mut() {
                    p.text.clear();
                }
                Vec::new()
            }
            Action::InputCancel => {
                if self.prompt.take().is_some_and(|p| p.kind == PromptKind::Rater) {
                    let what = match &self.waiting {
                        Some(Waiting::StepNote { step, .. }) => {
                            format!("the note on step {step} is kept, not saved: m shows it again")
                        }
                        _ => "your label is kept, not saved: w saves it once you give your name".to_string(),
                    };
                    self.set_info(what);
                }
                Vec::new()
            }
            Action::InputSubmit => self.submit_prompt(),
            Action::Command(cmd) => self.command(cmd),
        }
    }

    /// The statistics screen on a report, keeping where the reviewer was on it.
    fn stats_loaded(&mut self, report: StatsReport) -> Vec<Effect> {
        let keep = self.stats.as_ref().map(|s| (s.mode, s.rater, s.scroll, s.chart));
        let mut view = StatsView::new(report);
        if let Some((mode, rater, scroll, chart)) = keep {
            view.mode = mode;
            view.rater = rater;
            view.scroll = scroll;
            view.chart = chart;
        }
        self.stats = Some(view);
        if self.screen != Screen::Stats {
            self.stats_from = self.screen;
            self.screen = Screen::Stats;
        }
        Vec::new()
    }

    /// A label saved: the draft is gone, the run is no longer blind to this reviewer, both reloaded.
    fn label_saved(&mut self, run: i64, label_id: i64) -> Vec<Effect> {
        self.drafts.remove(&run);
        // Labelled by this reviewer now, whichever of the reloads below comes back first
        // (the run's labels are shown, no longer blind).
        self.review.states.entry(run).or_default().mine = true;
        // The reloaded run starts from the saved label, not the draft that made it.
        if let Some(view) = self.run.as_mut().filter(|v| v.run_id() == run) {
            view.saved_draft = view.draft.clone();
        }
        self.set_info(format!("saved label {label_id} for run {run}; the classifiers' labels are shown (L)"));
        vec![self.load_review(), Effect::LoadRun(run)]
    }

    /// A run on screen: blind review applied, the place, draft and search the reviewer left kept.
    fn run_loaded(&mut self, mut data: RunData) -> Vec<Effect> {
        let id = data.summary.id;
        // Blind review: the classifiers' labels stay hidden until this reviewer has
        // labelled the run (no anchoring).
        let before = data.labels.len();
        if self.review.blinded(id) {
            data.labels.retain(|l| l.label.source.is_human());
        }
        let hidden = before - data.labels.len();
        let saved_draft = self.draft_from_labels(&data.labels);
        if let Some(pos) = self.list.visible.iter().position(|&i| self.list.runs[i].id == id) {
            self.list.move_to(pos);
        }
        // Keep the search of the run we came from: reviewers compare runs.
        let previous = self.run.take();
        if let Some(prev) = &previous {
            self.places.insert(prev.run_id(), prev.cursor);
            // A draft left unsaved waits for the reviewer's return.
            if prev.run_id() != id && prev.draft != prev.saved_draft {
                self.drafts.insert(prev.run_id(), prev.draft.clone());
            }
        }
        let carried = previous.as_ref().and_then(|r| r.search.as_ref()).map(|s| s.query.clone());
        let mut view = RunView::new(data);
        view.while_read = self.being_read(id);
        if let Some(ix) = self.indexed.as_ref().filter(|ix| ix.run == id) {
            view.extend_unread(ix.steps);
        }
        // The same run again (reloaded after a label was saved, or once read whole): as
        // the reviewer left it.
        match previous.filter(|p| p.run_id() == id) {
            Some(prev) => view.keep_from(prev),
            None => {
                if let Some(&pos) = self.places.get(&id) {
                    view.go(pos);
                }
            }
        }
        view.hidden_labels = hidden;
        view.draft = self.drafts.remove(&id).unwrap_or_else(|| saved_draft.clone());
        view.saved_draft = saved_draft;
        view.label_modes = self.review.taxonomy.mode_ids();
        view.rater = self.review.rater.clone();
        self.run = Some(view);
        self.screen = Screen::Run;
        let mut effects = self.load_current_step();
        if let Some(query) = carried {
            effects.push(Effect::Search { run: id, query });
        }
        effects.extend(self.grow());
        effects
    }

    /// Sizes from the last frame: page length, and the scroll limit of the panel.
    fn apply_viewport(&mut self, v: Viewport) {
        if v.rows == 0 {
            // Nothing was laid out (a too-small terminal): keep scroll positions as they are.
            return;
        }
        self.rows = v.rows;
        if let (Some(scroll), Some(max)) = (self.help.as_mut(), v.help_max) {
            *scroll = (*scroll).min(max);
        }
        if self.screen == Screen::List {
            self.list.scroll_into_view(self.rows);
        }
        if let Some(stats) = self.stats.as_mut().filter(|_| self.screen == Screen::Stats) {
            stats.scroll = stats.scroll.min(v.panel_lines.saturating_sub(v.panel_rows));
        }
        if let Some(view) = self.compare.as_mut().filter(|_| self.screen == Screen::Compare) {
            view.scroll = view.scroll.min(v.panel_lines.saturating_sub(v.panel_rows));
            view.scroll_into_view(self.rows);
        }
        if let Some(run) = self.run.as_mut().filter(|_| self.screen == Screen::Run) {
            if let Some(at) = v.match_scroll.filter(|_| run.to_match) {
                run.scroll = at;
                run.to_match = false;
            }
            run.scroll = run.scroll.min(v.panel_lines.saturating_sub(v.panel_rows));
            run.panel_rows = v.panel_rows.max(1);
            // Past the longest visible line nothing is left to see; keep a whole step.
            run.hscroll = run.hscroll.min(v.panel_overflow.div_ceil(HSCROLL_STEP) * HSCROLL_STEP);
            run.scroll_into_view(self.rows);
        }
    }

    /// Quit, unless label drafts are unsaved and the reviewer has not been told yet (then the
    /// next quit, by `q` or ctrl-c, quits).
    pub(super) fn quit_or_warn(&mut self) {
        let unsaved = self.drafts.len() + self.run.as_ref().map_or(0, |r| usize::from(r.draft != r.saved_draft));
        if unsaved == 0 || self.warned_drafts {
            self.quit = true;
            return;
        }
        self.warned_drafts = true;
        let drafts =
            if unsaved == 1 { "1 unsaved label draft".to_string() } else { format!("{unsaved} unsaved label drafts") };
        self.set_error(format!("{drafts} (open the run, w saves); quit again to discard"));
    }

    fn set_error(&mut self, text: String) {
        self.status = Some(Status { text, error: true });
    }

    fn set_info(&mut self, text: String) {
        self.status = Some(Status { text, error: false });
    }

    fn command(&mut self, cmd: Command) -> Vec<Effect> {
        self.status = None;
        if let Some(scroll) = self.help.as_mut() {
            match cmd {
                Command::Down | Command::ScrollDown => *scroll += 1,
                Command::Up | Command::ScrollUp => *scroll = scroll.saturating_sub(1),
                Command::PageDown => *scroll += self.rows,
                Command::PageUp => *scroll = scroll.saturating_sub(self.rows),
                Command::Top => *scroll = 0,
                // Clamped to the last page by the next viewport.
                Command::Bottom => *scroll = usize::MAX / 2,
                Command::Quit => {
                    self.help = None;
                    self.quit_or_warn();
                }
                _ => self.help = None,
            }
            return Vec::new();
        }
        if self.picker.is_some() {
            return self.picker_command(cmd);
        }
        match cmd {
            Command::Quit => {
                self.quit_or_warn();
                Vec::new()
            }
            Command::Help => {
                self.help = Some(0);
                Vec::new()
            }
            Command::Refresh => {
                self.set_info("read again: runs, labels and notes".into());
                let mut effects = vec![Effect::LoadAllRuns];
                effects.extend(self.refresh());
                effects
            }
            Command::Stats if self.screen != Screen::Stats => {
                let by = self.stats.as_ref().map_or(crate::review::stats::By::All, |s| s.by);
                vec![self.load_stats(by)]
            }
            _ => match self.screen {
                Screen::List => self.list_command(cmd),
                Screen::Run => self.run_command(cmd),
                Screen::Stats => self.stats_command(cmd),
                Screen::Compare => self.compare_screen_command(cmd),
            },
        }
    }

    /// Put `raw` on the clipboard as the screen shows it: sanitized (what is pasted is what was
    /// read, never hidden escape sequences) and at most [`COPY_LIMIT`] bytes; the status line
    /// says what was sent, and where.
    fn copy(&mut self, what: &str, raw: &str) -> Vec<Effect> {
        let shown = crate::sanitize::sanitize(raw);
        let changed = shown != raw;
        let total = shown.len();
        let mut text = shown.into_owned();
        if total > COPY_LIMIT {
            let mut end = COPY_LIMIT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        let mut note = format!("sent {what} ({} chars) to the terminal's clipboard (OSC 52)", text.chars().count());
        if changed {
            note.push_str("; as shown, control sequences made visible");
        }
        if total > COPY_LIMIT {
            note.push_str(&format!("; cut to the first {} KiB of {} KiB", COPY_LIMIT / 1024, total.div_ceil(1024)));
        }
        self.set_info(note);
        vec![Effect::Copy(text)]
    }

    /// What the labels show, read again: every run's review state (the list's marks, the
    /// queues), the open run's labels and notes, the statistics when they are on screen. A draft
    /// being made is kept.
    fn refresh(&mut self) -> Vec<Effect> {
        let mut effects = vec![self.load_review()];
        if let Some(run) = self.run.as_ref() {
            effects.push(Effect::LoadRunLabels(run.run_id()));
        }
        if self.screen == Screen::Stats {
            let by = self.stats.as_ref().map_or(crate::review::stats::By::All, |s| s.by);
            effects.push(self.load_stats(by));
        }
        effects
    }

    /// The open run's labels and notes as the store has them now (blind review as when it was
    /// opened); the label being made stays when it differs from the saved one.
    fn run_labels_loaded(
        &mut self,
        id: i64,
        mut labels: Vec<crate::store::labels::LabelRow>,
        notes: Vec<crate::store::notes::NoteRow>,
    ) {
        if self.run.as_ref().is_none_or(|r| r.run_id() != id) {
            return;
        }
        let before = labels.len();
        if self.review.blinded(id) {
            labels.retain(|l| l.label.source.is_human());
        }
        let saved = self.draft_from_labels(&labels);
        let Some(view) = self.run.as_mut() else { return };
        view.hidden_labels = before - labels.len();
        view.set_labels(labels, notes);
        if view.draft == view.saved_draft {
            view.draft = saved.clone();
        }
        view.saved_draft = saved;
    }

    /// Ask who is labelling ([`PromptKind::Rater`]); what waits is in [`App::waiting`].
    fn ask_rater(&mut self) {
        self.prompt = Some(Prompt { kind: PromptKind::Rater, text: String::new() });
        self.set_info("no reviewer named (--rater, config.toml, $USER): type your name; what you typed is kept".into());
    }

    fn submit_prompt(&mut self) -> Vec<Effect> {
        let Some(prompt) = self.prompt.take() else { return Vec::new() };
        match prompt.kind {
            // A key picks the column (Enter alone keeps the sort).
            PromptKind::Sort => Vec::new(),
            PromptKind::Filter => {
                if let Err(e) = self.list.set_filter(prompt.text.trim()) {
                    self.set_error(e);
                }
                self.list.scroll_into_view(self.rows);
                Vec::new()
            }
            PromptKind::Search if self.screen == Screen::Compare => self.compare_search(prompt.text.trim().to_string()),
            PromptKind::Search => {
                let query = prompt.text.trim().to_string();
                let Some(run) = self.run.as_mut() else { return Vec::new() };
                if query.is_empty() {
                    run.search = None;
                    return Vec::new();
                }
                vec![Effect::Search { run: run.run_id(), query }]
            }
            PromptKind::Note => {
                if let Some(run) = self.run.as_mut() {
                    run.draft.note = prompt.text.trim().to_string();
                }
                Vec::new()
            }
            PromptKind::StepNote => {
                let Some(run) = self.run.as_ref() else { return Vec::new() };
                let Some(step) = run.step_index() else { return Vec::new() };
                let text = prompt.text.trim().to_string();
                if self.review.rater.is_empty() {
                    // The note is kept while the name is asked for.
                    self.waiting = Some(Waiting::StepNote { run: run.run_id(), step, text });
                    self.ask_rater();
                    return Vec::new();
                }
                self.waiting = None;
                vec![Effect::SaveNote { run: run.run_id(), step, rater: self.review.rater.clone(), text }]
            }
            PromptKind::Rater => {
                let name = prompt.text.trim().to_string();
                if name.is_empty() {
                    self.ask_rater();
                    return Vec::new();
                }
                self.review.rater = name.clone();
                self.set_info(format!(
                    "labelling as {name} until trajan ends (--rater, or rater under [labels] in config.toml, for good)"
                ));
                let mut effects = vec![self.load_review()];
                match self.waiting.take() {
                    Some(Waiting::StepNote { run, step, text }) => {
                        effects.push(Effect::SaveNote { run, step, rater: name, text });
                    }
                    Some(Waiting::Label { adjudication }) => effects.extend(self.save_label(adjudication)),
                    None => {}
                }
                effects
            }
            PromptKind::Goto => {
                let Some(run) = self.run.as_mut() else { return Vec::new() };
                match prompt.text.trim().parse::<i64>() {
                    Ok(n) if run.go_to_index(n) => self.load_current_step(),
                    _ => {
                        let message = match run.data.steps.last() {
                            Some(last) => format!("no step {:?} (steps 0 to {})", prompt.text.trim(), last.index),
                            None => "this run has no steps".to_string(),
                        };
                        self.set_error(message);
                        Vec::new()
                    }
                }
            }
        }
    }
}
