//! Reads for the exports: a run whole (`export run`: history, metadata, edits with their texts)
//! and the tables `export runs|steps|edits` write, a row at a time.

use super::Store;
use super::texts::{self, Texts};
use crate::error::StoreError;
use crate::model::{Edit, EditKind, EditStatus, Message, StepFlags};
use rusqlite::params;

/// What `run_detail` leaves out of a run and an export needs.
#[derive(Debug, Clone, Default)]
pub struct RunRest {
    /// The conversation messages that are not steps (system prompt, demonstrations, task).
    pub history: Vec<Message>,
    pub metadata: Option<String>,
    pub best_attempt: Option<bool>,
    /// Every edit with its texts, in order.
    pub edits: Vec<Edit>,
}

/// One row of `export runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub run_id: i64,
    pub instance_id: String,
    pub format: String,
    pub format_version: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub exit_status: Option<String>,
    pub resolved: Option<bool>,
    pub steps: i64,
    pub edits: i64,
    pub rejected_edits: i64,
    pub cost: Option<f64>,
    pub tokens_sent: Option<i64>,
    pub tokens_received: Option<i64>,
    pub api_calls: Option<i64>,
    pub attempt: Option<i64>,
    pub source: String,
}

/// One row of `export steps`.
#[derive(Debug, Clone)]
pub struct StepTableRow {
    pub run_id: i64,
    pub instance_id: String,
    pub step: i64,
    pub tool: Option<String>,
    pub flags: StepFlags,
    pub observation_chars: i64,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub execution_time: Option<f64>,
    pub timestamp: Option<String>,
    pub thought: String,
    pub action: String,
    pub observation: String,
}

/// One row of `export edits`.
#[derive(Debug, Clone)]
pub struct EditTableRow {
    pub run_id: i64,
    pub instance_id: String,
    pub step: Option<i64>,
    pub path: String,
    pub kind: String,
    pub status: String,
    pub lint_codes: String,
    pub diff: Option<String>,
}

impl Store {
    pub fn run_rest(&self, run_id: i64) -> Result<RunRest, StoreError> {
        let (metadata, best_attempt) =
            self.conn.query_row("SELECT metadata, best_attempt FROM runs WHERE id = ?1", [run_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let mut stmt = self.conn.prepare(
            "SELECT b.role, b.content, b.extra FROM history h JOIN blobs b ON b.id = h.blob_id
             WHERE h.run_id = ?1 ORDER BY h.pos",
        )?;
        let history = stmt
            .query_map([run_id], |r| Ok(Message { role: r.get(0)?, content: r.get(1)?, extra: r.get(2)? }))?
            .collect::<Result<_, _>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT step_idx, path, kind, status, old_text, new_text, diff, lint_codes,
                    certainty, command, checked_at, shown, undone_at, hunks, partial FROM edits
             WHERE run_id = ?1 ORDER BY id",
        )?;
        let edits = stmt
            .query_map([run_id], |r| {
                let kind: String = r.get(2)?;
                let status: String = r.get(3)?;
                let codes: Option<String> = r.get(7)?;
                let certainty: Option<String> = r.get(8)?;
                let hunks: Option<String> = r.get(13)?;
                let trace = crate::model::EditTrace {
                    certainty: certainty.and_then(|c| c.parse().ok()),
                    command: r.get(9)?,
                    checked_by: r.get::<_, Option<i64>>(10)?.map(crate::model::CheckedBy::from_column),
                    shown: r.get(11)?,
                    undone_at: r.get::<_, Option<i64>>(12)?.and_then(|s| usize::try_from(s).ok()),
                    hunks: hunks.and_then(|h| serde_json::from_str(&h).ok()).unwrap_or_default(),
                    partial: r.get::<_, Option<i64>>(14)?.is_some_and(|p| p != 0),
                    ..crate::model::EditTrace::default()
                };
                Ok(Edit {
                    step: r.get::<_, Option<i64>>(0)?.and_then(|s| usize::try_from(s).ok()),
                    path: r.get(1)?,
                    kind: kind.parse().unwrap_or(EditKind::FinalPatch),
                    status: status.parse().unwrap_or(EditStatus::Unknown),
                    old_text: r.get(4)?,
                    new_text: r.get(5)?,
                    diff: r.get(6)?,
                    lint_codes: codes
                        .unwrap_or_default()
                        .split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect(),
                    trace,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(RunRest { history, metadata, best_attempt, edits })
    }

    /// Every run, in id order.
    pub fn run_table(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.instance_id, r.format, r.format_version, r.agent, COALESCE(r.model, p.model),
                    r.exit_status, o.resolved, r.step_count, r.edit_count, r.rejected_count, r.cost,
                    r.tokens_sent, r.tokens_received, r.api_calls, r.attempt, s.path
             FROM runs r JOIN sources s ON s.id = r.source_id
             LEFT JOIN outcomes o ON o.id = r.outcome_id LEFT JOIN predictions p ON p.id = r.prediction_id
             ORDER BY r.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
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
                tokens_sent: r.get(12)?,
                tokens_received: r.get(13)?,
                api_calls: r.get(14)?,
                attempt: r.get(15)?,
                source: r.get(16)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every step of every run, in run and step order, handed to `each` one at a time (the texts
    /// of a large database are never all in memory); `each` returns false to stop.
    pub fn each_step(&self, mut each: impl FnMut(StepTableRow) -> bool) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.run_id, r.instance_id, s.idx, s.tool, s.flags, s.obs_chars, s.tokens_in, s.tokens_out,
                    s.execution_time, s.timestamp, t.thought, t.action, t.observation, t.chunk_id, t.chunk_at
             FROM steps s JOIN runs r ON r.id = s.run_id JOIN step_texts t ON t.step_id = s.id
             ORDER BY s.run_id, s.idx",
        )?;
        let mut rows = stmt.query([])?;
        // Consecutive steps share a chunk: each chunk is decompressed once.
        let mut chunks = texts::ChunkCache::default();
        while let Some(r) = rows.next()? {
            let texts = match r.get::<_, Option<i64>>(13)? {
                None => Texts { thought: r.get(10)?, action: r.get(11)?, observation: r.get(12)?, ..Texts::default() },
                Some(id) => chunks.texts(&self.conn, id, r.get(14)?)?,
            };
            let row = StepTableRow {
                run_id: r.get(0)?,
                instance_id: r.get(1)?,
                step: r.get(2)?,
                tool: r.get(3)?,
                flags: StepFlags::from_bits(r.get(4)?),
                observation_chars: r.get(5)?,
                tokens_in: r.get(6)?,
                tokens_out: r.get(7)?,
                execution_time: r.get(8)?,
                timestamp: r.get(9)?,
                thought: texts.thought,
                action: texts.action,
                observation: texts.observation,
            };
            if !each(row) {
                break;
            }
        }
        Ok(())
    }

    /// Every edit, in run and edit order.
    pub fn edit_table(&self) -> Result<Vec<EditTableRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT e.run_id, r.instance_id, e.step_idx, e.path, e.kind, e.status, e.lint_codes, e.diff
             FROM edits e JOIN runs r ON r.id = e.run_id ORDER BY e.run_id, e.id",
        )?;
        let rows = stmt.query_map(params![], |r| {
            Ok(EditTableRow {
                run_id: r.get(0)?,
                instance_id: r.get(1)?,
                step: r.get(2)?,
                path: r.get(3)?,
                kind: r.get(4)?,
                status: r.get(5)?,
                lint_codes: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                diff: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
