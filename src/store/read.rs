//! What the CLI reads (the run list, a run in full, search hits), as both backends give it; and
//! how a search's snippet is cut from a text read in pieces.

use super::cells::Cells;
use super::texts::{Record, Texts};
use crate::analysis::snippet::Finder;
use crate::error::StoreError;
use crate::model::{
    Certainty, CheckedBy, EditKind, EditStatus, FailedScope, Format, HunkSource, Message, StepFlags, TestCase,
};
use serde::Serialize;

/// Bytes of context a search snippet shows on each side of the match.
const SNIPPET_RADIUS: usize = 60;

/// The texts search reads, in the order it reads them (the order of a compressed record): the
/// name a hit gives, and the column of `step_texts` that holds it uncompressed (for SQLite's blob
/// I/O, which names a column as a C string).
pub(super) const SEARCHED: [(&str, &std::ffi::CStr); 3] =
    [("thought", c"thought"), ("action", c"action"), ("observation", c"observation")];

/// The snippet of `words` in a text of `len` bytes read from `text` in pieces of at most 1 MiB.
pub(super) fn snippet_of(mut text: impl std::io::Read, len: u64, words: &[&str]) -> Result<Option<String>, StoreError> {
    const PIECE: usize = 1 << 20;
    let mut finder = Finder::new(words, SNIPPET_RADIUS);
    let piece_len = usize::try_from(len).map_or(PIECE, |l| l.min(PIECE));
    let mut bytes: Vec<u8> = Vec::with_capacity(piece_len + 4);
    let mut piece = vec![0u8; piece_len.max(1)];
    loop {
        let n = text.read(&mut piece).map_err(|e| StoreError::Corrupt(format!("a step text cannot be read: {e}")))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&piece[..n]);
        // A piece may end inside a character: its first bytes wait for the next piece.
        let whole = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => bytes.len(),
        };
        let found = finder.feed(&String::from_utf8_lossy(&bytes[..whole]));
        if found.is_some() {
            return Ok(found);
        }
        bytes.drain(..whole);
    }
    if !bytes.is_empty()
        && let Some(found) = finder.feed(&String::from_utf8_lossy(&bytes))
    {
        return Ok(Some(found));
    }
    Ok(finder.finish())
}

/// The one run `ids` holds for `query` (a run named by an instance id), or why not.
pub(super) fn one_run(query: &str, ids: &[i64]) -> Result<i64, StoreError> {
    match ids {
        [] => Err(StoreError::NoSuchRun(query.to_string())),
        [one] => Ok(*one),
        many => Err(StoreError::AmbiguousRun {
            query: query.to_string(),
            count: many.len(),
            ids: many.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// The words of a phrase the snippet looks for (letters, digits and `_`).
pub(super) fn phrase_words(phrase: &str) -> Vec<&str> {
    phrase.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// The first of a step record's thought, action and observation holding `words`, with its
/// snippet, each text streamed through the decompressor.
pub(super) fn record_snippet<R: std::io::Read>(
    mut record: Record<R>,
    words: &[&str],
) -> Result<Option<(&'static str, String)>, StoreError> {
    for (i, (field, _)) in SEARCHED.into_iter().enumerate() {
        let len = record.len(i).unwrap_or(0);
        if let Some(snippet) = snippet_of(record.reader(i)?, len, words)? {
            return Ok(Some((field, snippet)));
        }
    }
    Ok(None)
}

/// One line of the run list; the stable shape of `runs --json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub instance_id: String,
    pub format: Format,
    pub format_version: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub exit_status: Option<String>,
    /// true / false from the joined test outcome; null when no outcome is known.
    pub resolved: Option<bool>,
    pub steps: i64,
    pub edits: i64,
    pub rejected_edits: i64,
    pub cost: Option<f64>,
    pub attempt: Option<i64>,
    pub source: String,
    /// Whether the run submitted a patch with something in it (a run can say "submitted" and
    /// hand in nothing).
    pub has_patch: bool,
    /// The published dataset the run is a row of (`metadata.dataset.name`, written by
    /// `ingest::dataset`): its benchmark in the statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
}

/// What a run used, beside its line in the run list: `show` and `export runs` print it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RunUsage {
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    pub api_calls: Option<i64>,
}

/// A run's line with what it used: one row of [`SUMMARY_SELECT`], a row of `export runs` and
/// the head of a run in full.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub summary: RunSummary,
    pub usage: RunUsage,
}

impl RunRow {
    /// A row of [`SUMMARY_SELECT`]'s columns: [`RunSummary::from_row`]'s, then `tokens_sent,
    /// tokens_received, api_calls`.
    pub fn from_row(r: &dyn Cells) -> Result<RunRow, StoreError> {
        Ok(RunRow {
            summary: RunSummary::from_row(r)?,
            usage: RunUsage { tokens_sent: r.opt_int(15)?, tokens_received: r.opt_int(16)?, api_calls: r.opt_int(17)? },
        })
    }
}

impl RunSummary {
    /// A row of the columns `id, instance_id, format, format_version, agent, model (the run's,
    /// else its prediction's), exit_status, resolved, step_count, edit_count, rejected_count,
    /// cost, attempt, source path, whether it submitted a patch with something in it` (the
    /// first of [`SUMMARY_SELECT`]'s), and its 19th: the metadata of a dataset's row (else
    /// null). A format this trajan does not know is an error.
    pub fn from_row(r: &dyn Cells) -> Result<RunSummary, StoreError> {
        Ok(RunSummary {
            id: r.int(0)?,
            instance_id: r.text(1)?,
            format: super::cells::named(r, 2, "format")?,
            format_version: r.opt_text(3)?,
            agent: r.opt_text(4)?,
            model: r.opt_text(5)?,
            exit_status: r.opt_text(6)?,
            resolved: r.opt_flag(7)?,
            steps: r.int(8)?,
            edits: r.int(9)?,
            rejected_edits: r.int(10)?,
            // A store written before costs were bounded may hold one past any real run's.
            cost: crate::model::kept_cost(r.opt_real(11)?),
            attempt: r.opt_int(12)?,
            source: r.text(13)?,
            has_patch: r.flag(14)?,
            dataset: dataset_name(r.opt_text(18)?),
        })
    }
}

/// The name of the published dataset a run's metadata says it is a row of
/// (`{"dataset": {"name": ...}}`); `None` for other metadata, or none.
pub fn dataset_name(metadata: Option<String>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Meta {
        dataset: Option<Named>,
    }
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<String>,
    }
    let meta: Meta = serde_json::from_str(&metadata?).ok()?;
    meta.dataset?.name.filter(|n| !n.trim().is_empty())
}

#[derive(Debug, Default, Clone, Copy)]
pub struct RunFilter {
    /// Only the failed runs of this scope (verdict known and unresolved, or also unknown).
    pub failed: Option<FailedScope>,
    /// At most this many (the first screen of a large database).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub index: i64,
    pub tool: Option<String>,
    pub thought: String,
    pub action: String,
    pub observation: String,
    pub response: Option<String>,
    pub args: Option<serde_json::Value>,
    pub execution_time: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub timestamp: Option<String>,
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
    pub flags: StepFlags,
    pub observation_chars: i64,
    /// Where thought, action and observation were cut when read within a bound (the TUI's
    /// step view: [`crate::store::texts::SHOWN`]); never in what `show` prints.
    #[serde(skip)]
    pub cuts: [Option<crate::store::texts::Cut>; 3],
}

impl StepRow {
    /// Text `i` (0 thought, 1 action, 2 observation) as read, with a line where a text read in
    /// part lost its middle (what the clipboard gets of a step).
    pub fn text_read(&self, i: usize) -> String {
        let text = match i {
            0 => &self.thought,
            1 => &self.action,
            _ => &self.observation,
        };
        match self.cuts.get(i).copied().flatten() {
            Some(c) if text.is_char_boundary(c.at) => {
                format!("{}\n[... {} bytes not read ...]\n{}", &text[..c.at], c.omitted, &text[c.at..])
            }
            _ => text.clone(),
        }
    }

    /// A row of the columns `idx, tool, execution_time, tokens_in, tokens_out, timestamp,
    /// open_file, working_dir, flags, obs_chars`, with the step's texts.
    pub fn from_row(r: &dyn Cells, texts: Texts) -> Result<StepRow, StoreError> {
        Ok(StepRow {
            index: r.int(0)?,
            tool: r.opt_text(1)?,
            thought: texts.thought,
            action: texts.action,
            observation: texts.observation,
            response: texts.response,
            args: texts.args.and_then(|a| serde_json::from_str(&a).ok()),
            execution_time: r.opt_real(2)?,
            tokens_in: r.opt_int(3)?,
            tokens_out: r.opt_int(4)?,
            timestamp: r.opt_text(5)?,
            open_file: r.opt_text(6)?,
            working_dir: r.opt_text(7)?,
            flags: StepFlags::from_bits(r.int(8)?),
            observation_chars: r.int(9)?,
            cuts: texts.cuts,
        })
    }
}

impl StepRow {
    /// The step with these texts (read after its row, from their chunk).
    pub fn with_texts(self, texts: Texts) -> StepRow {
        StepRow {
            thought: texts.thought,
            action: texts.action,
            observation: texts.observation,
            response: texts.response,
            args: texts.args.and_then(|a| serde_json::from_str(&a).ok()),
            cuts: texts.cuts,
            ..self
        }
    }
}

#[cfg(test)]
impl StepRow {
    /// A step with these texts and nothing else, run in `/testbed` (for tests).
    pub fn sample(index: i64, action: &str, observation: &str) -> StepRow {
        StepRow {
            index,
            tool: None,
            thought: String::new(),
            action: action.into(),
            observation: observation.into(),
            response: None,
            args: None,
            execution_time: None,
            tokens_in: None,
            tokens_out: None,
            timestamp: None,
            open_file: None,
            working_dir: Some("/testbed".into()),
            flags: StepFlags::default(),
            observation_chars: observation.chars().count() as i64,
            cuts: [None; 3],
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct EditRow {
    pub step: Option<i64>,
    pub path: String,
    pub kind: EditKind,
    pub status: EditStatus,
    pub lint_codes: Vec<String>,
    pub diff: Option<String>,
    /// Reconstructed (shell) edits: how sure the diff is (`model::Certainty`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certainty: Option<Certainty>,
    /// The shell command that made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The step whose view verified or contradicted it, or `"submission"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked_by: Option<CheckedBy>,
    /// Contradicted: what the later view showed, as a diff from the reconstructed lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    /// The step whose `git checkout`/`restore`/`stash` undid it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_at: Option<i64>,
    /// Final patch: which steps made each hunk.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<HunkSource>,
    /// The diff shows the lines the run had shown; a pattern may have matched others too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl EditRow {
    /// A reconstructed edit that changed nothing (its pattern or address matched no line).
    pub fn changed_nothing(&self) -> bool {
        self.certainty == Some(Certainty::Unchanged)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRow {
    pub format: String,
    pub source: String,
    pub resolved: Option<bool>,
    pub patch_applied: Option<bool>,
    /// Where `resolved` comes from.
    pub verdict: Verdict,
    pub tests: Vec<TestCase>,
    /// Where the tests come from when not from the verdict's evaluation: a per-instance report
    /// beside a run summary that has only resolved ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_source: Option<String>,
    /// What the tests' evaluation says of the verdict when it says otherwise than the verdict's
    /// own evaluation (the summary): both are kept, the run says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_say_resolved: Option<bool>,
}

/// Where an outcome's verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The evaluation says it (a report, a summary, the harness's log of a patch that did not
    /// apply), or says it does not know.
    Reported,
    /// Computed from the test log against the task's FAIL_TO_PASS / PASS_TO_PASS lists.
    Graded,
    /// Evaluated (the test log was read), but the task's lists are not known: unknown.
    Ungraded,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub instruction: Option<String>,
    pub gold_patch: Option<String>,
}

/// A run with everything `show` prints.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    #[serde(flatten)]
    pub summary: RunSummary,
    #[serde(flatten)]
    pub usage: RunUsage,
    pub submission: Option<String>,
    pub outcome: Option<OutcomeRow>,
    /// Evaluations of the instance that this run did not get, and why (never silence).
    pub unjoined_evaluations: Vec<super::Unjoined>,
    pub task: Option<TaskRow>,
    pub edit_list: Vec<EditRow>,
    pub step_list: Vec<StepRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    pub run_id: i64,
    pub instance_id: String,
    pub step: i64,
    /// Which field matched best: thought, action or observation.
    pub field: &'static str,
    pub snippet: String,
}

impl OutcomeRow {
    /// A row of `format, source path, resolved, patch_applied, logged IS NOT NULL`, with its tests;
    /// `tests_from` is the source path and verdict of the evaluation the tests come from when it
    /// is another one (`runs.tests_outcome_id`).
    pub fn from_row(
        r: &dyn Cells,
        tests: Vec<TestCase>,
        tests_from: Option<(String, Option<bool>)>,
    ) -> Result<OutcomeRow, StoreError> {
        let resolved = r.opt_flag(2)?;
        let (tests_source, tests_say_resolved) = match tests_from {
            Some((path, says)) => (Some(path), says.filter(|s| resolved.is_some_and(|r| r != *s))),
            None => (None, None),
        };
        let verdict = match (r.flag(4)?, resolved) {
            (false, _) => Verdict::Reported,
            (true, Some(_)) => Verdict::Graded,
            (true, None) => Verdict::Ungraded,
        };
        Ok(OutcomeRow {
            format: r.text(0)?,
            source: r.text(1)?,
            resolved,
            patch_applied: r.opt_flag(3)?,
            verdict,
            tests,
            tests_source,
            tests_say_resolved,
        })
    }
}

/// A row of `name, grp, passed, message` of `tests`.
pub fn test_case(r: &dyn Cells) -> Result<TestCase, StoreError> {
    Ok(TestCase {
        name: r.text(0)?,
        group: r.opt_text(1)?.as_deref().and_then(crate::model::TestGroup::from_name),
        passed: r.flag(2)?,
        message: r.opt_text(3)?,
    })
}

/// A row of `instruction, gold_patch` of `tasks`.
pub fn task_row(r: &dyn Cells) -> Result<TaskRow, StoreError> {
    Ok(TaskRow { instruction: r.opt_text(0)?, gold_patch: r.opt_text(1)? })
}

/// The prompt of step `step` rebuilt from the rows of the steps up to it that store a prompt,
/// in order, each step with each message it appends: (index, messages kept from the previous
/// prompt, the message). Each step keeps a prefix of the previous prompt and appends its own.
/// Empty when the step stores none.
pub fn prompt_of(rows: impl IntoIterator<Item = (i64, i64, Option<Message>)>, step: i64) -> Vec<Message> {
    let mut prompt: Vec<Message> = Vec::new();
    let mut current: Option<i64> = None;
    for (idx, keep, message) in rows {
        if current != Some(idx) {
            current = Some(idx);
            prompt.truncate(usize::try_from(keep).unwrap_or(0));
        }
        prompt.extend(message);
    }
    if current == Some(step) { prompt } else { Vec::new() }
}

/// A row of `idx, query_keep, role, content, extra` as [`prompt_of`] takes it.
pub fn prompt_row(r: &dyn Cells) -> Result<(i64, i64, Option<Message>), StoreError> {
    let message = match r.opt_text(2)? {
        Some(role) => Some(Message { role, content: r.text(3)?, extra: r.opt_text(4)? }),
        None => None,
    };
    Ok((r.int(0)?, r.int(1)?, message))
}

/// The one query of a run's row: [`RunRow::from_row`]'s columns (the run list reads the first,
/// [`RunSummary::from_row`]'s), of runs `r` with their sources `s`, outcomes `o` and predictions
/// `p` (the same SQL in both backends).
pub const SUMMARY_SELECT: &str = "
    SELECT r.id, r.instance_id, r.format, r.format_version, r.agent,
           COALESCE(r.model, p.model), r.exit_status, o.resolved, r.step_count, r.edit_count,
           r.rejected_count, r.cost, r.attempt, s.path,
           r.submission IS NOT NULL AND trim(r.submission) != '',
           r.tokens_sent, r.tokens_received, r.api_calls,
           CASE WHEN r.metadata LIKE '{\"dataset\":%' THEN r.metadata END
    FROM runs r
    JOIN sources s ON s.id = r.source_id
    LEFT JOIN outcomes o ON o.id = r.outcome_id
    LEFT JOIN predictions p ON p.id = r.prediction_id";
