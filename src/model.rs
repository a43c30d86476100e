//! The normalized model every input format maps to.
//!
//! Ingest adapters produce a [`Parsed`] bundle per source; the store writes it in one transaction.
//! Nothing here knows about SQL or about any particular input format.

use serde::Serialize;

/// Which adapter produced a run or outcome. Stored, serialized and shown as its `name()` string.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    strum::Display,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Format {
    SweAgent,
    SweAgentPreds,
    MiniSweAgent,
    #[serde(rename = "openhands")]
    #[strum(serialize = "openhands")]
    OpenHands,
    #[serde(rename = "openhands-events")]
    #[strum(serialize = "openhands-events")]
    OpenHandsEvents,
    SwebenchReport,
    SwebenchHarness,
    SwebenchSummary,
    SwebenchDataset,
    UnittestText,
    /// ATIF trajectories (Harbor RFC 0001), alone or in a Harbor trial folder with its verdict.
    Atif,
    /// OpenHands resolver `output.jsonl` (`issue`, `git_patch`, `history`, `success`).
    #[serde(rename = "openhands-resolver")]
    #[strum(serialize = "openhands-resolver")]
    OpenHandsResolver,
    /// multi-SWE-bench predictions (`org`, `repo`, `number`, `fix_patch`).
    MultiSwebenchPreds,
    /// multi-SWE-bench dataset files (tasks with `fix_patch` and `f2p_tests`/`p2p_tests`).
    MultiSwebenchDataset,
    /// The SWE-bench harness's per-instance `*.eval.log` of before mid-2024 (plain text).
    SwebenchEvalLog,
    /// OpenHands V1 conversations (software-agent-sdk, OpenHands-CLI): `events.jsonl` or a
    /// folder of `event-NNNNN-<uuid>.json` files beside `base_state.json`.
    #[serde(rename = "openhands-v1")]
    #[strum(serialize = "openhands-v1")]
    OpenHandsV1,
    /// OpenAI Codex CLI rollouts (`rollout-*.jsonl`).
    CodexCli,
    /// Claude Code session transcripts (one JSON object per line).
    ClaudeCode,
    /// Aider chat histories (`.aider.chat.history.md`).
    Aider,
    /// Moatless Tools trajectories and moatless-tree-search dumps.
    Moatless,
    /// Agentless localisation and repair outputs (stages, not tool calls).
    Agentless,
    /// Terminal-Bench 1 trial folders and run `results.json` files.
    TerminalBench,
    /// OpenClaw session JSONL (the agent-native log beside a Harbor trial's ATIF).
    #[serde(rename = "openclaw")]
    #[strum(serialize = "openclaw")]
    OpenClaw,
    /// Atlassian Rovo Dev transcripts (SWE-PolyBench submissions' plain-text `trajs/<id>`).
    RovoDev,
    /// nebius/SWE-agent-trajectories rows (Parquet shards or their JSON lines): SWE-agent's
    /// `role`/`text` messages (`ingest::dataset::nebius`).
    NebiusSweAgent,
    /// nebius/SWE-rebench-openhands-trajectories rows: OpenHands' OpenAI chat messages with tool
    /// calls (`ingest::dataset::rebench`).
    #[serde(rename = "swe-rebench-openhands")]
    #[strum(serialize = "swe-rebench-openhands")]
    SweRebenchOpenHands,
    /// SWE-bench/SWE-smith-trajectories rows: `messages` as a JSON string, in the tool, xml and
    /// ticks dialects (`ingest::dataset::smith`).
    SweSmith,
    /// nvidia/Open-SWE-Traces rows: OpenHands' and SWE-agent's OpenAI chat messages with tool
    /// calls in nine languages (`ingest::dataset::openswe`).
    OpenSweTraces,
    /// SWE-Gym/OpenHands-Sampled-Trajectories rows: OpenHands' chat messages with tool calls
    /// (`ingest::dataset::swegym`).
    #[serde(rename = "swe-gym-openhands")]
    #[strum(serialize = "swe-gym-openhands")]
    SweGymOpenHands,
    /// Terminal-Bench 2 trials published as rows: an ATIF trajectory in a column, the trial's
    /// `reward`, `cost_usd` and `test_report` (`ingest::dataset::terminal_bench`).
    #[serde(rename = "terminal-bench-rows")]
    #[strum(serialize = "terminal-bench-rows")]
    TerminalBenchRows,
    /// nvidia/SWE-Zero-openhands-trajectories and SWE-Hero rows: OpenHands' OpenAI chat messages
    /// with tool calls, no verdict (`ingest::dataset::swezero`).
    #[serde(rename = "swe-zero-openhands")]
    #[strum(serialize = "swe-zero-openhands")]
    SweZeroOpenHands,
    /// R2E-Gym/R2EGym-SFT-Trajectories rows: `messages` alone, `<function=...>` calls in the
    /// text, no verdict, the instance named by the issue (`ingest::dataset::r2egym`).
    #[serde(rename = "r2e-gym-sft")]
    #[strum(serialize = "r2e-gym-sft")]
    R2eGymSft,
}

impl Format {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<Format> {
        name.parse().ok()
    }
}

/// Everything one source (a file, or a folder that forms one unit) contributes.
#[derive(Debug, Default)]
pub struct Parsed {
    pub runs: Vec<Run>,
    pub outcomes: Vec<TestOutcome>,
    pub predictions: Vec<Prediction>,
    pub tasks: Vec<Task>,
    /// Problems that did not stop the source from being ingested (a bad JSONL line, replaced
    /// invalid UTF-8). Each names its position.
    pub warnings: Vec<String>,
    /// Why a file of a known format holds nothing to review (a search-tree dump of only its
    /// root, a chat history whose sessions have no prompt): it is skipped with this reason.
    pub nothing: Option<String>,
}

impl Parsed {
    /// Add another part of the same source (a batch of lines).
    pub fn absorb(&mut self, other: Parsed) {
        self.runs.extend(other.runs);
        self.outcomes.extend(other.outcomes);
        self.predictions.extend(other.predictions);
        self.tasks.extend(other.tasks);
        self.warnings.extend(other.warnings);
        self.nothing = self.nothing.take().or(other.nothing);
    }

    /// Nothing was read: no run, outcome, prediction or task.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.outcomes.is_empty() && self.predictions.is_empty() && self.tasks.is_empty()
    }

    /// Costs that are no cost (negative, past [`MAX_COST`], not finite) read as none, each with a
    /// warning naming the file `path` and the run.
    pub fn refuse_absurd_costs(&mut self, path: &std::path::Path) {
        for run in &mut self.runs {
            if let Some(c) = run.cost.filter(|&c| kept_cost(Some(c)).is_none()) {
                self.warnings.push(format!(
                    "{}: {}: a cost of {c:e} is not a run's cost (0 to {MAX_COST:e} US dollars); read as null",
                    path.display(),
                    run.instance_id
                ));
                run.cost = None;
            }
        }
    }
}

/// The most a run may cost, in US dollars: a million (a run costs cents to a few hundred).
/// Anything past it, negative or not finite is no cost ([`kept_cost`]).
pub const MAX_COST: f64 = 1e6;

/// A run's cost as kept and shown: `None` for a cost outside 0 to [`MAX_COST`] or not finite.
pub fn kept_cost(cost: Option<f64>) -> Option<f64> {
    cost.filter(|c| (0.0..=MAX_COST).contains(c))
}

/// One agent run on one task instance.
#[derive(Debug, Default, Clone)]
pub struct Run {
    pub instance_id: String,
    pub format: Option<Format>,
    /// Adapter-specific version string: "0.x", "1.0", "1.1.0", "mini-swe-agent-1", ...
    pub format_version: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub exit_status: Option<String>,
    pub submission: Option<String>,
    pub cost: Option<f64>,
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    pub api_calls: Option<i64>,
    /// For RetryAgent files: which attempt this run is, and whether it was the chosen one.
    pub attempt: Option<i64>,
    pub best_attempt: Option<bool>,
    /// Position of the run inside its source (JSONL line number, attempt index), for error
    /// messages and stable ordering.
    pub position: i64,
    pub steps: Vec<Step>,
    pub edits: Vec<Edit>,
    /// The model conversation, as the agent stored it (may include demonstrations).
    pub history: Vec<Message>,
    /// Free-form metadata kept as JSON text (e.g. OpenHands `metadata`, SWE-agent `replay_config`).
    pub metadata: Option<String>,
}

/// A message of a model conversation. `content` is flattened text.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Message {
    pub role: String,
    pub content: String,
    /// Extra fields (tool calls, agent name, message type) as compact JSON, when present.
    pub extra: Option<String>,
}

impl Message {
    /// A message object (`{role, content, ...}`): content flattened, other fields kept as JSON.
    pub fn from_value(m: &serde_json::Value) -> Message {
        let mut extra = serde_json::Map::new();
        if let serde_json::Value::Object(obj) = m {
            for (k, v) in obj {
                if k != "role" && k != "content" && !v.is_null() {
                    extra.insert(k.clone(), v.clone());
                }
            }
        }
        Message {
            role: m.get("role").and_then(serde_json::Value::as_str).unwrap_or_default().to_string(),
            content: flatten_content(m.get("content")),
            extra: (!extra.is_empty()).then(|| serde_json::Value::Object(extra).to_string()),
        }
    }

    /// A message from its raw JSON text; text that is not JSON is kept as the content.
    pub fn from_raw_json(raw: &str) -> Message {
        match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(v) => Message::from_value(&v),
            Err(_) => Message { role: String::new(), content: raw.to_string(), extra: None },
        }
    }
}

/// Message content as text: a string, or a list of `{type: "text", text}` parts joined by
/// newlines (non-text parts are named, not dropped silently).
pub fn flatten_content(v: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for p in parts {
                let piece = match p {
                    Value::String(s) => s.clone(),
                    Value::Object(_) => match p.get("text").and_then(Value::as_str) {
                        Some(t) => t.to_string(),
                        None => format!("[{} part]", p.get("type").and_then(Value::as_str).unwrap_or("non-text")),
                    },
                    other => other.to_string(),
                };
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&piece);
            }
            out
        }
        Some(other) => other.to_string(),
    }
}

/// One agent turn: thought, action and the observation it produced.
#[derive(Debug, Default, Clone)]
pub struct Step {
    pub thought: String,
    pub action: String,
    pub observation: String,
    /// The full model response, only when it differs from the thought.
    pub response: Option<String>,
    pub tool: Option<String>,
    /// Structured tool arguments as JSON text, when the format carries them.
    pub args: Option<String>,
    pub execution_time: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub timestamp: Option<String>,
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
    pub flags: StepFlags,
    /// The prompt the model saw at this step, when the format stores it (SWE-agent 1.x), as a
    /// change against the previous step's prompt. Never the whole prompt per step: that grows
    /// with the square of the step count.
    pub query: Option<QueryDelta>,
}

/// A step's prompt: the first `keep` messages of the previous step's prompt, then `append`.
#[derive(Debug, Clone, Default)]
pub struct QueryDelta {
    pub keep: usize,
    pub append: Vec<QueryMessage>,
}

/// A prompt message: its content hash (for de-duplication) and its raw JSON, shared between
/// the steps of a run that carry the same message.
#[derive(Debug, Clone)]
pub struct QueryMessage {
    pub hash: [u8; 16],
    /// The raw JSON of the message; the store parses it only when it has not seen the hash.
    pub raw: std::sync::Arc<str>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StepFlags {
    pub edit: bool,
    pub edit_rejected: bool,
    pub error: bool,
    pub output_clipped: bool,
    pub test_run: bool,
    pub format_error: bool,
}

impl StepFlags {
    pub fn bits(self) -> i64 {
        let mut b = 0;
        for (i, on) in
            [self.edit, self.edit_rejected, self.error, self.output_clipped, self.test_run, self.format_error]
                .into_iter()
                .enumerate()
        {
            if on {
                b |= 1 << i;
            }
        }
        b
    }

    pub fn from_bits(b: i64) -> StepFlags {
        let on = |i: u32| b & (1 << i) != 0;
        StepFlags {
            edit: on(0),
            edit_rejected: on(1),
            error: on(2),
            output_clipped: on(3),
            test_run: on(4),
            format_error: on(5),
        }
    }

    /// No flag is on.
    pub fn is_empty(self) -> bool {
        self.bits() == 0
    }

    /// The flags that are on, by name (`edit`, `edit_rejected`, ...), as JSON shows them.
    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        for (on, name) in [
            (self.edit, "edit"),
            (self.edit_rejected, "edit_rejected"),
            (self.error, "error"),
            (self.output_clipped, "output_clipped"),
            (self.test_run, "test_run"),
            (self.format_error, "format_error"),
        ] {
            if on {
                v.push(name);
            }
        }
        v
    }
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum EditKind {
    StrReplace,
    Create,
    Insert,
    WindowedEdit,
    ShellWrite,
    FinalPatch,
    /// A file deleted (or moved away) by a patch that does not hold its text: no old or new
    /// text, a diff of headers alone (`+++ /dev/null`, `rename to`).
    Delete,
}

impl EditKind {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What happened to an edit the agent attempted.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum EditStatus {
    Applied,
    /// The linter gate refused it ("Your changes have NOT been applied").
    RejectedByLinter,
    /// The tool refused it (old_str not found, several matches, bad arguments).
    RefusedByTool,
    /// The format gives no verdict (shell writes without output, final patches).
    Unknown,
}

impl EditStatus {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The name in words, for people: `rejected by linter`.
    pub fn words(self) -> String {
        self.name().replace('_', " ")
    }

    /// Refused or rejected: the edit was not applied.
    pub fn is_rejection(self) -> bool {
        matches!(self, EditStatus::RejectedByLinter | EditStatus::RefusedByTool)
    }
}

#[derive(Debug, Clone)]
pub struct Edit {
    /// Index of the step that made the edit; `None` for the final submission patch.
    pub step: Option<usize>,
    pub path: String,
    pub kind: EditKind,
    pub status: EditStatus,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    /// Unified diff of the change, when it can be drawn.
    pub diff: Option<String>,
    /// Lint codes named by a rejection (F821, E999, ...).
    pub lint_codes: Vec<String>,
    /// How the edit was reconstructed and checked (shell edits), what undid it, and for the
    /// final patch which steps made each hunk: filled by `analysis::reconstruct`.
    pub trace: EditTrace,
}

/// How sure trajan is of a reconstructed edit's diff. Tool edits carry their own text and
/// have none; shell edits (`sed -i`, `echo >`, `git apply`, scripts) get one from
/// `analysis::reconstruct`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Certainty {
    /// Simulated, and a later view of the file (or the submitted patch) showed the same lines.
    Verified,
    /// Simulated, but a later view showed other lines (`EditTrace::shown` holds both).
    Contradicted,
    /// Simulated on the lines the run had shown; nothing later showed them again.
    Simulated,
    /// Not simulated (a script wrote the file): the diff is what the next view or the
    /// submitted patch shows changed.
    Attributed,
    /// Simulated: its address or pattern matched none of the known lines, so it changed nothing.
    Unchanged,
    /// Not enough was known of the file to say what it did.
    Unknown,
    /// Unknown: replaying it would pass a bound of the replay (a file grown past its cap, a
    /// working directory too long, the run's work spent; `analysis::reconstruct::budget`).
    TooLarge,
}

impl Certainty {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The name in words, for people: `changed nothing`.
    pub fn words(self) -> &'static str {
        match self {
            Certainty::Unchanged => "changed nothing",
            Certainty::TooLarge => "unknown (too large to replay)",
            other => other.name(),
        }
    }
}

/// What checked a reconstructed edit: a later step's view of the file, or the submitted patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckedBy {
    Step(usize),
    Submission,
}

impl CheckedBy {
    /// As stored: the step, or -1 for the submitted patch.
    pub fn to_column(self) -> i64 {
        match self {
            CheckedBy::Step(s) => s as i64,
            CheckedBy::Submission => -1,
        }
    }

    pub fn from_column(v: i64) -> CheckedBy {
        usize::try_from(v).map_or(CheckedBy::Submission, CheckedBy::Step)
    }
}

/// JSON: the step's index, or `"submission"`.
impl Serialize for CheckedBy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CheckedBy::Step(s) => serializer.serialize_u64(*s as u64),
            CheckedBy::Submission => serializer.serialize_str("submission"),
        }
    }
}

/// Which steps made one hunk of the submitted patch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct HunkSource {
    /// The hunk's `@@ -a,b +c,d @@` line.
    pub hunk: String,
    /// Steps whose edits made its lines, in order.
    pub steps: Vec<usize>,
    /// Every changed line of the hunk is explained by those steps; false: some (or all, when
    /// `steps` is empty) were changed by something the run does not show (a script, an edit
    /// whose text is missing).
    pub explained: bool,
}

/// The reconstruction's account of an edit (empty for tool edits the adapter drew).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EditTrace {
    /// How the diff was obtained; `None` for tool edits and the final patch.
    pub certainty: Option<Certainty>,
    /// The shell command that made the edit (one simple command of the step's action).
    pub command: Option<String>,
    /// What verified or contradicted it.
    pub checked_by: Option<CheckedBy>,
    /// Contradicted: what the later view showed, as a diff from the reconstructed lines to the
    /// shown ones.
    pub shown: Option<String>,
    /// The step whose `git checkout`/`restore`/`stash`/`reset --hard` undid it.
    pub undone_at: Option<usize>,
    /// Final patch: which steps made each hunk.
    pub hunks: Vec<HunkSource>,
    /// The diff shows what the edit did to the lines the run had shown; a pattern may also
    /// have matched lines it never showed (a global `s///` on a file seen in part).
    pub partial: bool,
    /// Read by the reconstruction, not stored: the lines (first, last; 1-based) a windowed edit
    /// replaces, or (n + 1, n) for an insert after line n.
    pub lines: Option<(usize, usize)>,
}

/// Test groups of the SWE-bench harness.
/// Declared in the order a reviewer reads them (`Ord` follows it).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum TestGroup {
    FailToPass,
    PassToPass,
    FailToFail,
    PassToFail,
}

impl TestGroup {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The group a harness report (or the store) names, `None` for any other name.
    pub fn from_name(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestCase {
    pub name: String,
    pub group: Option<TestGroup>,
    pub passed: bool,
    /// Failure message, when the log names one (unittest `AssertionError: ...`).
    pub message: Option<String>,
}

/// The verdict of an evaluation on one instance.
#[derive(Debug, Default, Clone)]
pub struct TestOutcome {
    pub instance_id: String,
    pub format: Option<Format>,
    /// Model the evaluation was for, when the layout names it (harness folder, predictions).
    pub model: Option<String>,
    /// Evaluation run id (harness `run_id`, summary file name).
    pub run_label: Option<String>,
    pub resolved: Option<bool>,
    pub patch_applied: Option<bool>,
    pub patch_exists: Option<bool>,
    pub tests: Vec<TestCase>,
    /// The raw test log, ANSI and all; sanitized only when drawn.
    pub log: Option<String>,
    /// The evaluated patch, when the harness folder keeps it.
    pub patch: Option<String>,
    /// An evaluation without a verdict whose test log was read (a harness folder with
    /// `test_output.txt` and no `report.json`): each test as the SWE-bench harness's log parser
    /// for the task's repository reads it. `store::link` grades them against the task's
    /// FAIL_TO_PASS / PASS_TO_PASS lists as the harness does once the task is known, whichever
    /// arrives first, and fills `resolved` and the tests from them.
    pub logged: Option<Vec<LoggedTest>>,
}

/// A test's status as the SWE-bench harness's log parsers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TestStatus {
    Passed,
    Failed,
    Skipped,
    Error,
    Xfail,
}

/// A test read from a test log, before it is graded against the task's lists.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct LoggedTest {
    pub name: String,
    pub status: TestStatus,
    /// Failure message, when the log names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A submitted prediction (SWE-agent `all_preds.jsonl` / `preds.json`).
#[derive(Debug, Clone)]
pub struct Prediction {
    pub instance_id: String,
    pub model: Option<String>,
    pub patch: Option<String>,
}

/// The task a run worked on.
#[derive(Debug, Clone, Default)]
pub struct Task {
    pub instance_id: String,
    pub instruction: Option<String>,
    pub gold_patch: Option<String>,
    /// Test names the benchmark expects to flip / keep passing, when the source lists them.
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
}

/// Which runs count as failed runs (to classify, to label, in statistics). A failed run is one
/// whose verdict is known and unresolved, the same everywhere (`runs --failed`, the review
/// queues, `]`, `stats`, `classify`); runs whose outcome is unknown (no evaluation ingested)
/// join only when asked for (`--include-unknown`, `[labels] include_unknown`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FailedScope {
    /// Verdict known and unresolved.
    #[default]
    Failed,
    /// Those and the runs whose outcome is unknown.
    WithUnknown,
}

impl FailedScope {
    pub fn new(include_unknown: bool) -> FailedScope {
        if include_unknown { FailedScope::WithUnknown } else { FailedScope::Failed }
    }

    /// Whether a run with this verdict (`resolved`; `None`: unknown) is in scope.
    pub fn admits(self, resolved: Option<bool>) -> bool {
        match resolved {
            Some(false) => true,
            None => self == FailedScope::WithUnknown,
            Some(true) => false,
        }
    }

    /// How the runs in scope are named: "failed runs" or "failed or unknown-outcome runs".
    pub fn noun(self) -> &'static str {
        match self {
            FailedScope::Failed => "failed runs",
            FailedScope::WithUnknown => "failed or outcome-unknown runs",
        }
    }
}

/// Flags serialize as the list of the names of those that are on (`["edit", "error"]`).
impl Serialize for StepFlags {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    /// Names are stored in databases and printed in JSON: they never change.
    #[test]
    fn stored_names_are_stable_and_read_back() {
        let formats: Vec<&str> = Format::iter().map(Format::name).collect();
        assert_eq!(
            formats,
            [
                "swe-agent",
                "swe-agent-preds",
                "mini-swe-agent",
                "openhands",
                "openhands-events",
                "swebench-report",
                "swebench-harness",
                "swebench-summary",
                "swebench-dataset",
                "unittest-text",
                "atif",
                "openhands-resolver",
                "multi-swebench-preds",
                "multi-swebench-dataset",
                "swebench-eval-log",
                "openhands-v1",
                "codex-cli",
                "claude-code",
                "aider",
                "moatless",
                "agentless",
                "terminal-bench",
                "openclaw",
                "rovo-dev",
                "nebius-swe-agent",
                "swe-rebench-openhands",
                "swe-smith",
                "open-swe-traces",
                "swe-gym-openhands",
                "terminal-bench-rows",
                "swe-zero-openhands",
                "r2e-gym-sft"
            ]
        );
        assert!(Format::iter().all(|f| Format::from_name(f.name()) == Some(f)));
        // `runs --json` and the tables print a run's format as serde and Display write it.
        for f in Format::iter() {
            assert_eq!(serde_json::to_value(f).ok(), Some(serde_json::json!(f.name())), "{f:?}");
            assert_eq!(f.to_string(), f.name(), "{f:?}");
        }
        let statuses: Vec<&str> = EditStatus::iter().map(EditStatus::name).collect();
        assert_eq!(statuses, ["applied", "rejected_by_linter", "refused_by_tool", "unknown"]);
        let kinds: Vec<&str> = EditKind::iter().map(EditKind::name).collect();
        assert_eq!(kinds, ["str_replace", "create", "insert", "windowed_edit", "shell_write", "final_patch", "delete"]);
        let groups: Vec<&str> = TestGroup::iter().map(TestGroup::name).collect();
        assert_eq!(groups, ["FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"]);
        assert!(TestGroup::iter().all(|g| TestGroup::from_name(g.name()) == Some(g)));
        assert_eq!(serde_json::to_value(Format::OpenHands).ok(), Some(serde_json::json!("openhands")));
        assert_eq!(serde_json::to_value(Format::OpenHandsResolver).ok(), Some(serde_json::json!("openhands-resolver")));
    }
}
