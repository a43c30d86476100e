//! The one way the review state changes. Keys (through the keymap), timers and background
//! results all become an [`Action`]; `App::update` is the only consumer.

use crate::store::browse::{RunData, StepBody};
use crate::store::read::RunSummary;

/// User intents that keys can be bound to. The names (snake_case) are the keymap's vocabulary.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::EnumIter, strum::IntoStaticStr, strum::EnumString,
)]
#[strum(serialize_all = "snake_case")]
pub enum Command {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Scroll the panel to its top / bottom (`0` / `$`).
    LineStart,
    LineEnd,
    PrevStep,
    NextStep,
    PrevRun,
    NextRun,
    NextEdit,
    PrevEdit,
    /// Next error or rejected edit.
    NextProblem,
    PrevProblem,
    Search,
    SearchNext,
    SearchPrev,
    GotoStep,
    /// Unified / side by side.
    DiffMode,
    /// Full observation instead of the folded one.
    ToggleFold,
    /// Cycle the right-hand panel: step, state, tests and task, final patch, gold patch.
    NextPanel,
    PrevPanel,
    /// Scroll the step body a few lines.
    ScrollDown,
    ScrollUp,
    /// Scroll the step body a page (what it shows less two lines).
    BodyPageDown,
    BodyPageUp,
    /// Scroll long lines sideways.
    ScrollRight,
    ScrollLeft,
    /// Wrap long lines, or cut them (and scroll sideways).
    ToggleWrap,
    Copy,
    /// Copy the whole step (thought, action, observation) as text.
    CopyStep,
    Help,
    Open,
    Back,
    Quit,
    /// Read again what others may have changed: the run list, every run's labels, the open
    /// run's labels and notes (the TUI also does it by itself when the store's labels change).
    Refresh,
    Filter,
    SortNext,
    SortReverse,
    /// Sort by a column picked with one key.
    SortPick,
    /// Previous / next file in a patch panel.
    PrevFile,
    NextFile,
    /// Next / previous step a label cites as evidence.
    NextEvidence,
    PrevEvidence,
    /// Next / previous step with a reviewer's note (`m` writes one).
    NextNote,
    PrevNote,
    /// Show the labels panel.
    Labels,
    /// Toggle the n-th mode of the taxonomy in the label being made.
    ToggleMode1,
    ToggleMode2,
    ToggleMode3,
    ToggleMode4,
    ToggleMode5,
    ToggleMode6,
    ToggleMode7,
    ToggleMode8,
    ToggleMode9,
    /// The run fits no mode.
    Unclassified,
    ConfidenceUp,
    ConfidenceDown,
    /// Attach (or detach) the step under the cursor as evidence.
    AttachEvidence,
    /// Go to the step of the run's onset (the one the run is shown with).
    GotoOnset,
    /// Mark (or unmark) the step under the cursor as the onset in the label being made.
    MarkOnset,
    /// The blame of the label being made: agent, task, environment, none.
    CycleBlame,
    /// Write the label's note.
    Note,
    /// Write (or clear) the reviewer's note on the step under the cursor: a bookmark with text.
    StepNote,
    SaveLabel,
    /// Save the label as an adjudication (the run's reference).
    SaveAdjudication,
    /// Open the next failed run this reviewer has not labelled.
    NextUnlabelled,
    /// Run list: all runs, unlabelled by me, labelled by me, disagreements.
    NextQueue,
    /// The statistics screen.
    Stats,
    /// Compare runs: the marked ones, or one picked among the other runs of the instance.
    Compare,
    /// Mark (or unmark) the run under the cursor for comparison.
    Mark,
    /// Next / previous divergence of the compared runs (search match while a search is on).
    NextDivergence,
    PrevDivergence,
    /// The statistics screen's next chart: modes, agreement, coverage, resolve rate, steps, cost.
    NextChart,
    /// Write the chart on screen as SVG in the current folder.
    ExportChart,
    /// Write the marked runs (else the run under the cursor, or open) as an HTML report.
    ExportReport,
}

impl Command {
    /// The mode position (0-based) a `ToggleModeN` command toggles.
    pub fn mode_index(self) -> Option<usize> {
        const MODES: [Command; 9] = [
            Command::ToggleMode1,
            Command::ToggleMode2,
            Command::ToggleMode3,
            Command::ToggleMode4,
            Command::ToggleMode5,
            Command::ToggleMode6,
            Command::ToggleMode7,
            Command::ToggleMode8,
            Command::ToggleMode9,
        ];
        MODES.iter().position(|m| *m == self)
    }
}

/// Everything that can change the state.
#[derive(Debug, Clone)]
pub enum Action {
    Command(Command),
    /// A character typed into the active text prompt (filter, search, go-to).
    Input(char),
    InputBackspace,
    /// Clear the prompt's text (ctrl-u).
    InputClear,
    InputSubmit,
    InputCancel,
    Resize(u16, u16),
    /// What the last frame laid out (list rows, panel lines and rows).
    Viewport(Viewport),
    /// The first page of runs, then the whole list; `total` when the database said how many.
    RunsLoaded {
        runs: Vec<RunSummary>,
        complete: bool,
        total: Option<i64>,
    },
    /// Open a run (`trajan open RUN`).
    Open(i64),
    RunLoaded(Box<RunData>),
    /// Every few seconds (the driver's clock): time to ask whether the labels changed.
    Tick,
    /// The store's labels and notes, stamped ([`crate::store::backend::Notes::review_stamp`]).
    ReviewStamp(String),
    /// The current labels and the notes of a run, read again (someone may have labelled it).
    RunLabelsLoaded {
        run: i64,
        labels: Vec<crate::store::labels::LabelRow>,
        notes: Vec<crate::store::notes::NoteRow>,
    },
    StepLoaded(Box<StepBody>),
    SearchDone {
        query: String,
        steps: Vec<i64>,
    },
    /// A background task failed; shown in the status line.
    Failed(String),
    /// A chart or report was written: what, and where.
    Exported(String),
    /// The review state of every labelled run (at start and after each saved label).
    ReviewLoaded(std::collections::BTreeMap<i64, crate::review::ReviewState>),
    /// A label was saved (its id) for this run.
    LabelSaved {
        run: i64,
        label_id: i64,
    },
    /// A note on a step was written (`kept`) or removed.
    NoteSaved {
        run: i64,
        step: i64,
        kept: bool,
    },
    /// Statistics and agreement for the statistics screen.
    StatsLoaded(Box<crate::review::summary::StatsReport>),
    /// Compare these runs (`trajan compare RUN RUN...`).
    Compare(Vec<i64>),
    /// Runs compared, for the comparison screen.
    CompareLoaded(Box<crate::review::compare::Comparison>),
    /// The other runs of `base`'s instance, for the picker.
    PickerLoaded {
        base: i64,
        instance: String,
        runs: Vec<crate::store::read::RunSummary>,
    },
    /// A search over the compared runs: per run, its matching steps.
    CompareSearchDone {
        query: String,
        steps: Vec<Vec<i64>>,
    },
    /// Steps of a run from `from` on, and the edits they made: a run being read grows.
    StepsLoaded {
        run: i64,
        from: usize,
        steps: Vec<crate::store::browse::StepLine>,
        edits: Vec<crate::store::browse::EditLine>,
    },
    /// The search index is being built in the background: runs indexed of runs waiting.
    Indexing {
        done: i64,
        total: i64,
    },
    /// The search index is up to date (or could not be built here: a search then indexes the
    /// waiting runs for itself).
    Indexed,
    /// How the reading of the files `trajan PATH` names goes (it runs beside the TUI).
    Feed(Feed),
    /// A step of a run being read, read from the file before it is stored: its line and body.
    StepPeeked {
        run: i64,
        line: crate::store::browse::StepLine,
        body: Box<StepBody>,
    },
}

/// Reads step `index` of a run being read from its file, before the reading stores it: its
/// line and body as they will be stored (without edits), or why not.
pub type PeekFn = dyn Fn(i64) -> Result<(crate::store::browse::StepLine, StepBody), String> + Send + Sync;

/// A [`PeekFn`] to hand around (equal when it is the same one).
#[derive(Clone)]
pub struct PeekStep(pub std::sync::Arc<PeekFn>);

impl PartialEq for PeekStep {
    fn eq(&self, other: &PeekStep) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for PeekStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeekStep")
    }
}

/// News from the reading of the files `trajan PATH` names.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed {
    /// A run's first steps are stored: the first one begun is opened, unless the reviewer has
    /// opened a run already.
    Begun(i64),
    /// How far the reading is: what is read (`label`), `done` of `total` bytes, and the steps
    /// stored so far of each run being read.
    Progress { label: String, done: u64, total: u64, runs: Vec<(i64, usize)> },
    /// The file of run `run` was skimmed: it has `steps` steps, any of which `peek` reads before
    /// the reading stores it.
    Indexed { run: i64, steps: usize, peek: PeekStep },
    /// The reading is over: the runs of the named paths (one is opened, several are the run
    /// list's filter) and what to say about it (an error when `error`).
    Done { runs: Vec<i64>, message: String, error: bool },
}

/// What the last frame laid out, fed back to the app so paging and scrolling know the sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    /// Rows of the run list or step list.
    pub rows: usize,
    /// Lines of the right-hand panel's content and the rows it had.
    pub panel_lines: usize,
    pub panel_rows: usize,
    /// How far the panel's visible lines reach past its right edge (sideways scroll limit).
    pub panel_overflow: usize,
    /// The help overlay's largest useful scroll, when it is open.
    pub help_max: Option<usize>,
    /// The step panel's scroll that shows the search's first match, once the step's body is
    /// drawn while [`crate::tui::app::run::RunView::to_match`] asks for it.
    pub match_scroll: Option<usize>,
}
