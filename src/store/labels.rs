//! Classification storage: signals per run, labels (append-only), the LLM reply cache and
//! classification errors. Labels are [`crate::label::Label`] values; this module maps
//! them to rows and back.

use super::Store;
use crate::error::StoreError;
use crate::label::{Evidence, Label, ModeVerdict, Provenance, Source};
use crate::model::FailedScope;
use crate::store::read::RunFilter;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use std::collections::HashMap;

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// A stored label with where and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelRow {
    pub id: i64,
    /// The run's instance, when the run is still in the database.
    pub instance_id: Option<String>,
    pub created_at: String,
    pub note: Option<String>,
    /// Whether it is its rater's current label for the run under its taxonomy's version (the
    /// latest per run, source, rater, taxonomy and version): what statistics and agreement read.
    pub current: bool,
    #[serde(flatten)]
    pub label: Label,
}

/// One run's signals and, when a new one is due, its label; written together.
pub struct Classified {
    pub run_id: i64,
    /// The version of the signals' shape (`classify::signals::VERSION`).
    pub signals_version: u32,
    pub signals_json: String,
    pub signals_hash: String,
    pub label: Option<Label>,
}

/// A validated LLM reply kept for a (model, prompt hash).
#[derive(Debug, Clone, PartialEq)]
pub struct CachedReply {
    pub reply: String,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    pub latency_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassifyErrorRow {
    pub run_id: i64,
    pub source: String,
    pub model: Option<String>,
    pub error: String,
    pub created_at: String,
}

/// A current label reduced to its modes: what agreement, statistics and review queues read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelSet {
    pub run_id: i64,
    pub source: Source,
    pub rater: String,
    /// Assigned modes, sorted; empty: unclassified.
    pub modes: Vec<String>,
    pub created_at: String,
    pub taxonomy_version: String,
    pub exit_category: String,
    /// The LLM's prompt hash (or the heuristic's signals hash).
    pub input_hash: Option<String>,
}

const LABEL_COLUMNS: &str = "l.id, r.instance_id, l.created_at, l.note, l.run_id, l.source, l.rater, l.taxonomy,
    l.taxonomy_version, l.exit_category, l.summary, l.model, l.input_hash, l.tokens_in, l.tokens_out, l.cost,
    l.latency_ms,
    l.id = (SELECT max(c.id) FROM labels c WHERE c.run_id = l.run_id AND c.source = l.source
            AND c.rater = l.rater AND c.taxonomy = l.taxonomy AND c.taxonomy_version = l.taxonomy_version)";

impl Store {
    /// Runs to classify: the failed runs of `scope`, or every run (`None`).
    pub fn classify_candidates(&self, scope: Option<FailedScope>) -> Result<Vec<i64>, StoreError> {
        let filter = RunFilter { failed: scope, limit: None };
        let mut ids: Vec<i64> = self.list_runs(filter)?.into_iter().map(|r| r.id).collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The stored signals of a run (JSON), when computed with `version`.
    pub fn signals_json(&self, run_id: i64, version: u32) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT json FROM signals WHERE run_id = ?1 AND version = ?2", params![run_id, version], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The input hash of the latest label per run from `source` and `rater` under a taxonomy
    /// version: what makes classifying again a no-op when nothing changed.
    pub fn latest_input_hashes(
        &self,
        source: Source,
        rater: &str,
        taxonomy: &str,
        version: &str,
    ) -> Result<HashMap<i64, String>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, input_hash FROM labels WHERE id IN (
                 SELECT max(id) FROM labels WHERE source = ?1 AND rater = ?2 AND taxonomy = ?3 AND taxonomy_version = ?4
                 GROUP BY run_id) AND input_hash IS NOT NULL",
        )?;
        let rows = stmt.query_map(params![source.name(), rater, taxonomy, version], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Write a batch of runs' signals and new labels in one transaction.
    pub fn save_classified(&mut self, batch: &[Classified]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut sig = tx.prepare_cached(
                "INSERT INTO signals (run_id, version, hash, json) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(run_id) DO UPDATE SET version = excluded.version, hash = excluded.hash, json = excluded.json",
            )?;
            for c in batch {
                sig.execute(params![c.run_id, c.signals_version, c.signals_hash, c.signals_json])?;
                if let Some(label) = &c.label {
                    insert_label(&tx, label, None)?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Append one label (never replacing an earlier one); returns its id.
    pub fn add_label(&self, label: &Label, note: Option<&str>) -> Result<i64, StoreError> {
        self.add_label_at(label, note, None)
    }

    /// Append one label made at `created_at` (an imported label keeps its time), or now. One
    /// short IMMEDIATE transaction: reviewers labelling the same database at once wait their
    /// turn (busy timeout) instead of failing. Takes `&self` so the TUI can label while reading.
    pub fn add_label_at(&self, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError> {
        self.immediate(|conn| insert_label_at(conn, label, note, created_at))
    }

    /// Append labels made at their times (an import), all or none, in one IMMEDIATE transaction.
    pub fn add_labels_at(&self, labels: &[(Label, Option<String>, String)]) -> Result<(), StoreError> {
        self.immediate(|conn| {
            for (label, note, at) in labels {
                insert_label_at(conn, label, note.as_deref(), Some(at))?;
            }
            Ok(())
        })
    }

    /// Run `write` in an IMMEDIATE transaction, committed when it succeeds, rolled back when not.
    fn immediate<T>(
        &self,
        write: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match write(&self.conn) {
            Ok(done) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(done)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Labels, oldest first: all of them, or of one run; with `current_only`, the latest per
    /// run, source, rater and taxonomy.
    pub fn labels(&self, run: Option<i64>, current_only: bool) -> Result<Vec<LabelRow>, StoreError> {
        let current = if current_only {
            "AND l.id IN (SELECT max(id) FROM labels GROUP BY run_id, source, rater, taxonomy)"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {LABEL_COLUMNS} FROM labels l LEFT JOIN runs r ON r.id = l.run_id
             WHERE (?1 IS NULL OR l.run_id = ?1) {current} ORDER BY l.run_id, l.id"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows: Vec<LabelRow> = stmt
            .query_map([run], |r| {
                let source: String = r.get(5)?;
                Ok(LabelRow {
                    id: r.get(0)?,
                    instance_id: r.get(1)?,
                    created_at: r.get(2)?,
                    note: r.get(3)?,
                    current: r.get(17)?,
                    label: Label {
                        run_id: r.get(4)?,
                        source: Source::from_name(&source).unwrap_or(Source::Human),
                        rater: r.get(6)?,
                        taxonomy: r.get(7)?,
                        taxonomy_version: r.get(8)?,
                        modes: Vec::new(),
                        considered: Vec::new(),
                        exit_category: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
                        summary: r.get::<_, Option<String>>(10)?.unwrap_or_default(),
                        provenance: Provenance {
                            model: r.get(11)?,
                            input_hash: r.get(12)?,
                            tokens_in: r.get::<_, Option<i64>>(13)?.map(|t| t as u64),
                            tokens_out: r.get::<_, Option<i64>>(14)?.map(|t| t as u64),
                            cost: r.get(15)?,
                            latency_ms: r.get::<_, Option<i64>>(16)?.map(|t| t as u64),
                        },
                    },
                })
            })?
            .collect::<Result<_, _>>()?;
        // Every mode verdict of those labels in one query, not one per label.
        let at: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut modes = self.conn.prepare(
            "SELECT m.label_id, m.mode, m.assigned, m.confidence, m.evidence, m.rationale
             FROM label_modes m JOIN labels l ON l.id = m.label_id
             WHERE ?1 IS NULL OR l.run_id = ?1 ORDER BY m.rowid",
        )?;
        let verdicts = modes.query_map([run], |r| {
            let evidence: String = r.get(4)?;
            let verdict = ModeVerdict {
                mode: r.get(1)?,
                confidence: r.get(3)?,
                evidence: serde_json::from_str::<Vec<Evidence>>(&evidence).unwrap_or_default(),
                rationale: r.get(5)?,
            };
            Ok((r.get::<_, i64>(0)?, r.get::<_, bool>(2)?, verdict))
        })?;
        for v in verdicts {
            let (label_id, assigned, verdict) = v?;
            let Some(row) = at.get(&label_id).and_then(|&i| rows.get_mut(i)) else { continue };
            if assigned { row.label.modes.push(verdict) } else { row.label.considered.push(verdict) }
        }
        Ok(rows)
    }

    /// The latest label per run, source and rater under `taxonomy` at `version`, as mode sets
    /// (labels of another version are another vocabulary and are not mixed in).
    pub fn current_label_sets(&self, taxonomy: &str, version: &str) -> Result<Vec<LabelSet>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT l.run_id, l.source, l.rater, l.created_at, l.taxonomy_version,
                    (SELECT group_concat(mode, char(31)) FROM (SELECT mode FROM label_modes
                     WHERE label_id = l.id AND assigned = 1 ORDER BY mode)),
                    coalesce(l.exit_category, ''), l.input_hash
             FROM labels l
             WHERE l.id IN (SELECT max(id) FROM labels WHERE taxonomy = ?1 AND taxonomy_version = ?2
                            GROUP BY run_id, source, rater)
             ORDER BY l.run_id, l.id",
        )?;
        let rows = stmt.query_map([taxonomy, version], |r| {
            let source: String = r.get(1)?;
            let modes: Option<String> = r.get(5)?;
            Ok(LabelSet {
                run_id: r.get(0)?,
                source: Source::from_name(&source).unwrap_or(Source::Human),
                rater: r.get(2)?,
                created_at: r.get(3)?,
                taxonomy_version: r.get(4)?,
                modes: modes.map(|m| m.split('\u{1f}').map(str::to_string).collect()).unwrap_or_default(),
                exit_category: r.get(6)?,
                input_hash: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn llm_cached(&self, model: &str, prompt_hash: &str) -> Result<Option<CachedReply>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT reply, tokens_in, tokens_out, latency_ms FROM llm_cache WHERE model = ?1 AND prompt_hash = ?2",
                params![model, prompt_hash],
                |r| {
                    Ok(CachedReply {
                        reply: r.get(0)?,
                        tokens_in: r.get::<_, Option<i64>>(1)?.map(|t| t as u64),
                        tokens_out: r.get::<_, Option<i64>>(2)?.map(|t| t as u64),
                        latency_ms: r.get::<_, Option<i64>>(3)?.map(|t| t as u64),
                    })
                },
            )
            .optional()?)
    }

    /// Keep a validated reply and append its label, in one transaction: a label is never
    /// written without its cache entry, nor half of either.
    pub fn save_llm_label(&mut self, prompt_hash: &str, reply: &CachedReply, label: &Label) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        let model = label.provenance.model.as_deref().unwrap_or(&label.rater);
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO llm_cache (model, prompt_hash, reply, tokens_in, tokens_out, latency_ms, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW})"
            ),
            params![
                model,
                prompt_hash,
                reply.reply,
                reply.tokens_in.map(|t| t as i64),
                reply.tokens_out.map(|t| t as i64),
                reply.latency_ms.map(|t| t as i64)
            ],
        )?;
        let id = insert_label(&tx, label, None)?;
        tx.commit()?;
        Ok(id)
    }

    pub fn record_classify_error(
        &self,
        run_id: i64,
        source: Source,
        model: Option<&str>,
        error: &str,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            &format!(
                "INSERT INTO classify_errors (run_id, source, model, error, created_at) VALUES (?1, ?2, ?3, ?4, {NOW})"
            ),
            params![run_id, source.name(), model, error],
        )?;
        Ok(())
    }

    pub fn classify_errors(&self, run: Option<i64>) -> Result<Vec<ClassifyErrorRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, source, model, error, created_at FROM classify_errors WHERE ?1 IS NULL OR run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(ClassifyErrorRow {
                run_id: r.get(0)?,
                source: r.get(1)?,
                model: r.get(2)?,
                error: r.get(3)?,
                created_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// [`insert_label`], made at `created_at` when given.
fn insert_label_at(
    conn: &rusqlite::Connection,
    label: &Label,
    note: Option<&str>,
    created_at: Option<&str>,
) -> Result<i64, StoreError> {
    let id = insert_label(conn, label, note)?;
    if let Some(at) = created_at {
        conn.prepare_cached("UPDATE labels SET created_at = ?2 WHERE id = ?1")?.execute(params![id, at])?;
    }
    Ok(id)
}

fn insert_label(tx: &rusqlite::Connection, label: &Label, note: Option<&str>) -> Result<i64, StoreError> {
    let p = &label.provenance;
    let who = super::identity::of_run(tx, label.run_id)?;
    tx.prepare_cached(&format!(
        "INSERT INTO labels (run_id, source, rater, taxonomy, taxonomy_version, unclassified, exit_category, summary, note,
             model, input_hash, tokens_in, tokens_out, cost, latency_ms, created_at,
             run_source, run_instance, run_attempt, run_nth)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, {NOW}, ?16, ?17, ?18, ?19)"
    ))?
    .execute(params![
        label.run_id,
        label.source.name(),
        label.rater,
        label.taxonomy,
        label.taxonomy_version,
        label.is_unclassified(),
        label.exit_category,
        label.summary,
        note,
        p.model,
        p.input_hash,
        p.tokens_in.map(|t| t as i64),
        p.tokens_out.map(|t| t as i64),
        p.cost,
        p.latency_ms.map(|t| t as i64),
        who.as_ref().map(|w| &w.source),
        who.as_ref().map(|w| &w.instance),
        who.as_ref().and_then(|w| w.attempt),
        who.as_ref().map(|w| w.nth),
    ])?;
    let id = tx.last_insert_rowid();
    let mut stmt = tx.prepare_cached(
        "INSERT INTO label_modes (label_id, mode, assigned, confidence, evidence, rationale) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (assigned, verdicts) in [(true, &label.modes), (false, &label.considered)] {
        for m in verdicts {
            let evidence = serde_json::to_string(&m.evidence).unwrap_or_else(|_| "[]".into());
            stmt.execute(params![id, m.mode, assigned, m.confidence, evidence, m.rationale])?;
        }
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::Evidence;

    fn label(rater: &str, mode: Option<&str>, hash: &str) -> Label {
        let verdict = |m: &str, c: f64| ModeVerdict {
            mode: m.into(),
            confidence: c,
            evidence: vec![Evidence { step: 3, note: "n".into() }],
            rationale: "r".into(),
        };
        Label {
            run_id: 42,
            source: Source::Human,
            rater: rater.into(),
            taxonomy: "refactoring".into(),
            taxonomy_version: "1.0".into(),
            modes: mode.map(|m| vec![verdict(m, 0.9)]).unwrap_or_default(),
            considered: vec![verdict("context_flooding", 0.2)],
            exit_category: "submitted".into(),
            summary: "s".into(),
            provenance: Provenance { input_hash: Some(hash.into()), tokens_in: Some(7), ..Provenance::default() },
        }
    }

    #[test]
    fn labels_are_appended_and_the_latest_per_rater_is_current() {
        let store = Store::open_in_memory().unwrap();
        store.add_label(&label("ann", Some("missed_edit_location"), "h1"), Some("first look")).unwrap();
        store.add_label(&label("ann", None, "h2"), None).unwrap();
        store.add_label(&label("bob", Some("context_flooding"), "h3"), None).unwrap();
        let history = store.labels(Some(42), false).unwrap();
        assert_eq!(history.len(), 3, "nothing is overwritten");
        assert_eq!(history[0].note.as_deref(), Some("first look"));
        assert_eq!(history[0].label, label("ann", Some("missed_edit_location"), "h1"), "a label reads back as written");
        assert_eq!(history[0].instance_id, None, "the run is gone; the label stays");
        let current = store.labels(None, true).unwrap();
        let raters: Vec<(&str, bool)> =
            current.iter().map(|r| (r.label.rater.as_str(), r.label.is_unclassified())).collect();
        assert_eq!(raters, [("ann", true), ("bob", false)]);
        let hashes = store.latest_input_hashes(Source::Human, "ann", "refactoring", "1.0").unwrap();
        assert_eq!(hashes.get(&42).map(String::as_str), Some("h2"));
    }

    #[test]
    fn a_reply_and_its_label_are_written_together_and_errors_kept() {
        let mut store = Store::open_in_memory().unwrap();
        let reply = CachedReply { reply: "{}".into(), tokens_in: Some(5), tokens_out: Some(1), latency_ms: Some(9) };
        let mut l = label("gpt", Some("missed_edit_location"), "p1");
        l.source = Source::Llm;
        l.provenance.model = Some("gpt".into());
        store.save_llm_label("p1", &reply, &l).unwrap();
        assert_eq!(store.llm_cached("gpt", "p1").unwrap(), Some(reply));
        assert_eq!(store.llm_cached("other", "p1").unwrap(), None);
        store.record_classify_error(42, Source::Llm, Some("gpt"), "timed out").unwrap();
        assert_eq!(store.classify_errors(Some(42)).unwrap()[0].error, "timed out");
    }
}
