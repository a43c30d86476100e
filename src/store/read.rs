//! Queries for the CLI and (later) the TUI. Every list query is bounded or paged by its caller.

use super::Store;
use super::texts::{self, Texts};
use crate::analysis::snippet::Finder;
use crate::error::StoreError;
use crate::model::{
    Certainty, CheckedBy, EditKind, EditStatus, FailedScope, HunkSource, Message, StepFlags, TestCase, TestGroup,
};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

/// The user's words as one FTS5 phrase: tokens must appear together, in order, the last one
/// as a prefix (`ZeroDiv` finds `ZeroDivisionError`). Quoting keeps user input from being read
/// as FTS syntax. `None` when there are no words.
pub(super) fn fts_phrase(phrase: &str) -> Option<String> {
    let terms: Vec<String> = phrase.split_whitespace().map(|t| t.replace('"', "\"\"")).collect();
    (!terms.is_empty()).then(|| format!("\"{}\"*", terms.join(" ")))
}

/// Bytes of context a search snippet shows on each side of the match.
const SNIPPET_RADIUS: usize = 60;

/// The texts search reads, in the order it reads them (the order of a compressed record).
const SEARCHED: [&str; 3] = ["thought", "action", "observation"];

/// The snippet of `words` in a text of `len` bytes read from `text` in pieces of at most 1 MiB.
fn snippet_of(mut text: impl std::io::Read, len: u64, words: &[&str]) -> Result<Option<String>, StoreError> {
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

/// The name of a text column of `step_texts` for blob I/O (only these three are searched).
fn field_name(field: &str) -> &'static std::ffi::CStr {
    match field {
        "thought" => c"thought",
        "action" => c"action",
        _ => c"observation",
    }
}

/// One line of the run list; the stable shape of `runs --json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub instance_id: String,
    pub format: String,
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
}

#[derive(Debug, Default, Clone, Copy)]
pub struct RunFilter {
    /// Only the failed runs of this scope (verdict known and unresolved, or also unknown).
    pub failed: Option<FailedScope>,
    /// At most this many (the first screen of a large database).
    pub limit: Option<usize>,
}

pub(super) const SUMMARY_SELECT: &str = "
    SELECT r.id, r.instance_id, r.format, r.format_version, r.agent,
           COALESCE(r.model, p.model), r.exit_status, o.resolved, r.step_count, r.edit_count,
           r.rejected_count, r.cost, r.attempt, s.path,
           r.submission IS NOT NULL AND trim(r.submission) != ''
    FROM runs r
    JOIN sources s ON s.id = r.source_id
    LEFT JOIN outcomes o ON o.id = r.outcome_id
    LEFT JOIN predictions p ON p.id = r.prediction_id";

pub(super) fn summary(r: &Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0)?,
        instance_id: r.get(1)?,
        format: r.get(2)?,
        format_version: r.get(3)?,
        agent: r.get(4)?,
        model: r.get(5)?,
        exit_status: r.get(6)?,
        resolved: r.get(7)?,
        steps: r.get(8)?,
        edits: r.get(9)?,
        rejected_edits: r.get(10)?,
        cost: r.get(11)?,
        attempt: r.get(12)?,
        source: r.get(13)?,
        has_patch: r.get(14)?,
    })
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
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    pub api_calls: Option<i64>,
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

impl Store {
    pub fn list_runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "{SUMMARY_SELECT} {} ORDER BY r.instance_id, r.id LIMIT ?1",
            match filter.failed {
                None => "",
                Some(FailedScope::Failed) => "WHERE o.resolved = 0",
                Some(FailedScope::WithUnknown) => "WHERE o.resolved IS NULL OR o.resolved = 0",
            }
        );
        let limit = filter.limit.map_or(-1, |l| l as i64);
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([limit], summary)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn run_summary(&self, id: i64) -> Result<RunSummary, StoreError> {
        let sql = format!("{SUMMARY_SELECT} WHERE r.id = ?1");
        self.conn.query_row(&sql, [id], summary).optional()?.ok_or_else(|| StoreError::NoSuchRun(id.to_string()))
    }

    /// A run named by numeric id, or by an instance id that names exactly one run.
    pub fn resolve_run(&self, query: &str) -> Result<i64, StoreError> {
        if let Ok(id) = query.parse::<i64>() {
            let found: Option<i64> =
                self.conn.query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0)).optional()?;
            if let Some(id) = found {
                return Ok(id);
            }
        }
        let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE instance_id = ?1 ORDER BY id")?;
        let ids: Vec<i64> = stmt.query_map([query], |r| r.get(0))?.collect::<Result<_, _>>()?;
        match ids.as_slice() {
            [] => Err(StoreError::NoSuchRun(query.to_string())),
            [one] => Ok(*one),
            many => Err(StoreError::AmbiguousRun {
                query: query.to_string(),
                count: many.len(),
                ids: many.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Every run of an instance id, in id order (none when no run has it).
    pub fn runs_of_instance(&self, instance_id: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE instance_id = ?1 ORDER BY id")?;
        let ids = stmt.query_map([instance_id], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// A run with its steps (all, or only `only_step`), edits, outcome and task.
    pub fn run_detail(&self, id: i64, only_step: Option<i64>) -> Result<RunDetail, StoreError> {
        let summary = self.run_summary(id)?;
        let (mut detail, outcome_id, tests_id) = self.conn.query_row(
            "SELECT tokens_sent, tokens_received, api_calls, submission, outcome_id, tests_outcome_id
             FROM runs WHERE id = ?1",
            [id],
            |r| {
                let detail = RunDetail {
                    tokens_sent: r.get(0)?,
                    tokens_received: r.get(1)?,
                    api_calls: r.get(2)?,
                    submission: r.get(3)?,
                    outcome: None,
                    unjoined_evaluations: Vec::new(),
                    task: None,
                    edit_list: Vec::new(),
                    step_list: Vec::new(),
                    summary: summary.clone(),
                };
                Ok((detail, r.get::<_, Option<i64>>(4)?, r.get::<_, Option<i64>>(5)?))
            },
        )?;
        detail.outcome = outcome_id.map(|o| self.outcome(o, tests_id)).transpose()?;
        detail.unjoined_evaluations = super::link::unjoined(&self.conn, id)?;
        detail.task = self.task(&summary.instance_id)?;
        detail.edit_list = self.edits(id, only_step)?;
        detail.step_list = self.steps(id, only_step)?;
        Ok(detail)
    }

    pub(super) fn steps(&self, run_id: i64, only: Option<i64>) -> Result<Vec<StepRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.idx, s.tool, t.thought, t.action, t.observation, t.response, t.args, s.execution_time,
                    s.tokens_in, s.tokens_out, s.timestamp, s.open_file, s.working_dir, s.flags, s.obs_chars,
                    t.chunk_id, t.chunk_at
             FROM steps s JOIN step_texts t ON t.step_id = s.id
             WHERE s.run_id = ?1 AND (?2 IS NULL OR s.idx = ?2) ORDER BY s.idx",
        )?;
        let mut rows = stmt.query(params![run_id, only])?;
        let mut chunks = texts::ChunkCache::default();
        let mut steps = Vec::new();
        while let Some(r) = rows.next()? {
            let texts = match r.get::<_, Option<i64>>(15)? {
                None => Texts {
                    thought: r.get(2)?,
                    action: r.get(3)?,
                    observation: r.get(4)?,
                    response: r.get(5)?,
                    args: r.get(6)?,
                },
                Some(id) => chunks.texts(&self.conn, id, r.get(16)?)?,
            };
            steps.push(StepRow {
                index: r.get(0)?,
                tool: r.get(1)?,
                thought: texts.thought,
                action: texts.action,
                observation: texts.observation,
                response: texts.response,
                args: texts.args.and_then(|a| serde_json::from_str(&a).ok()),
                execution_time: r.get(7)?,
                tokens_in: r.get(8)?,
                tokens_out: r.get(9)?,
                timestamp: r.get(10)?,
                open_file: r.get(11)?,
                working_dir: r.get(12)?,
                flags: StepFlags::from_bits(r.get(13)?),
                observation_chars: r.get(14)?,
            });
        }
        Ok(steps)
    }

    fn edits(&self, run_id: i64, only: Option<i64>) -> Result<Vec<EditRow>, StoreError> {
        let edits = self.edit_texts(run_id, only)?;
        Ok(edits
            .into_iter()
            .map(|e| EditRow {
                step: e.line.step,
                path: e.line.path,
                kind: e.line.kind,
                status: e.line.status,
                lint_codes: e.line.lint_codes,
                diff: e.diff,
                certainty: e.line.certainty,
                command: e.command,
                checked_by: e.checked_by,
                shown: e.shown,
                undone_at: e.line.undone_at,
                hunks: e.hunks,
                partial: e.partial,
            })
            .collect())
    }

    /// The evaluation `id` (its verdict), with the tests of `tests_from` when another evaluation
    /// gives them (`runs.tests_outcome_id`).
    pub(super) fn outcome(&self, id: i64, tests_from: Option<i64>) -> Result<OutcomeRow, StoreError> {
        let (format, source, resolved, patch_applied, logged): (String, String, Option<bool>, Option<bool>, bool) =
            self.conn.query_row(
                "SELECT o.format, s.path, o.resolved, o.patch_applied, o.logged IS NOT NULL FROM outcomes o
             JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
        let (tests_source, tests_say_resolved) = match tests_from.filter(|t| *t != id) {
            Some(t) => {
                let (path, says): (String, Option<bool>) = self.conn.query_row(
                    "SELECT s.path, o.resolved FROM outcomes o JOIN sources s ON s.id = o.source_id WHERE o.id = ?1",
                    [t],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                (Some(path), says.filter(|s| resolved.is_some_and(|r| r != *s)))
            }
            None => (None, None),
        };
        let id = tests_from.unwrap_or(id);
        let verdict = match (logged, resolved) {
            (false, _) => Verdict::Reported,
            (true, Some(_)) => Verdict::Graded,
            (true, None) => Verdict::Ungraded,
        };
        let mut stmt = self
            .conn
            .prepare("SELECT name, grp, passed, message FROM tests WHERE outcome_id = ?1 ORDER BY grp, name")?;
        let tests = stmt
            .query_map([id], |r| {
                let group: Option<String> = r.get(1)?;
                Ok(TestCase {
                    name: r.get(0)?,
                    group: group.as_deref().and_then(TestGroup::from_name),
                    passed: r.get(2)?,
                    message: r.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(OutcomeRow { format, source, resolved, patch_applied, verdict, tests, tests_source, tests_say_resolved })
    }

    pub(super) fn task(&self, instance_id: &str) -> Result<Option<TaskRow>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT instruction, gold_patch FROM tasks WHERE instance_id = ?1
                 ORDER BY gold_patch IS NULL, id DESC LIMIT 1",
                [instance_id],
                |r| Ok(TaskRow { instruction: r.get(0)?, gold_patch: r.get(1)? }),
            )
            .optional()?)
    }

    /// Full-text search for a phrase over thoughts, actions and observations. The index is
    /// brought up to date first ([`Store::ensure_search_index`]). The texts are read a piece at
    /// a time (SQLite's incremental blob I/O, through the decompressor for compressed texts)
    /// until the phrase is found, so a 500 MB observation is never loaded whole: memory stays at
    /// a few megabytes.
    pub fn search(&self, phrase: &str, run: Option<i64>, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let Some(fts_query) = fts_phrase(phrase) else { return Ok(Vec::new()) };
        self.ensure_search_index()?;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT s.id, s.run_id, r.instance_id, s.idx
             FROM {} JOIN steps s ON s.id = m.step_id JOIN runs r ON r.id = s.run_id
             WHERE ?2 IS NULL OR s.run_id = ?2
             ORDER BY s.run_id, s.idx LIMIT ?3",
            self.matched_steps()
        ))?;
        let rows: Vec<(i64, i64, String, i64)> = stmt
            .query_map(params![fts_query, run, limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let words: Vec<&str> =
            phrase.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
        let mut hits = Vec::with_capacity(rows.len());
        for (step_id, run_id, instance_id, step) in rows {
            let (field, snippet) = self.step_snippet(step_id, &words)?.unwrap_or(("observation", String::new()));
            hits.push(SearchHit { run_id, instance_id, step, field, snippet });
        }
        Ok(hits)
    }

    /// The first of a step's thought, action and observation holding `words`, with its snippet.
    fn step_snippet(&self, step_id: i64, words: &[&str]) -> Result<Option<(&'static str, String)>, StoreError> {
        let (chunk_id, at): (Option<i64>, Option<i64>) =
            self.conn.query_row("SELECT chunk_id, chunk_at FROM step_texts WHERE step_id = ?1", [step_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let Some(chunk_id) = chunk_id else {
            for field in SEARCHED {
                let blob = self.conn.blob_open(rusqlite::MAIN_DB, c"step_texts", field_name(field), step_id, true)?;
                let len = blob.len() as u64;
                if let Some(snippet) = snippet_of(blob, len, words)? {
                    return Ok(Some((field, snippet)));
                }
            }
            return Ok(None);
        };
        let blob = self.conn.blob_open(rusqlite::MAIN_DB, c"text_chunks", c"body", chunk_id, true)?;
        let at = u64::try_from(at.unwrap_or(0)).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut record = texts::open_record(blob, at)?;
        for (i, field) in SEARCHED.into_iter().enumerate() {
            let len = record.len(i).unwrap_or(0);
            if let Some(snippet) = snippet_of(record.reader(i)?, len, words)? {
                return Ok(Some((field, snippet)));
            }
        }
        Ok(None)
    }

    /// The prompt the model saw at a step, rebuilt from the stored deltas (empty when the
    /// format does not store prompts). Each step keeps a prefix of the previous stored prompt
    /// and appends its own messages.
    pub fn step_prompt(&self, run_id: i64, step: i64) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.idx, s.query_keep, b.role, b.content, b.extra
             FROM steps s LEFT JOIN query_parts q ON q.step_id = s.id LEFT JOIN blobs b ON b.id = q.blob_id
             WHERE s.run_id = ?1 AND s.idx <= ?2 AND s.query_keep IS NOT NULL ORDER BY s.idx, q.pos",
        )?;
        let mut rows = stmt.query(params![run_id, step])?;
        let mut prompt: Vec<Message> = Vec::new();
        let mut current: Option<i64> = None;
        while let Some(r) = rows.next()? {
            let idx: i64 = r.get(0)?;
            if current != Some(idx) {
                current = Some(idx);
                let keep: i64 = r.get(1)?;
                prompt.truncate(usize::try_from(keep).unwrap_or(0));
            }
            if let Some(role) = r.get::<_, Option<String>>(2)? {
                prompt.push(Message { role, content: r.get(3)?, extra: r.get(4)? });
            }
        }
        if current != Some(step) {
            return Ok(Vec::new());
        }
        Ok(prompt)
    }
}
