//! Signals, labels (append-only), the LLM reply cache and classification errors in SQLite:
//! [`crate::label::Label`] values mapped to rows and back.

use super::{Sqlite, collect};
use crate::error::StoreError;
use crate::label::{Label, Source};
use crate::store::backend::Labels;
use crate::store::labels::{
    CachedReply, Classified, ClassifyErrorRow, LABEL_COLUMNS, LabelKey, LabelRow, LabelSet, NewLabel, histories,
    judgement_cells, label_set_columns, mode_verdict, run_of_keys, with_modes,
};
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

impl Labels for Sqlite {
    /// The stored signals of a run (JSON), when computed with `version`.
    fn signals_json(&self, run_id: i64, version: u32) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT json FROM signals WHERE run_id = ?1 AND version = ?2", params![run_id, version], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The input hash of the latest label per run from `source` and `rater` under a taxonomy
    /// version: what makes classifying again a no-op when nothing changed.
    fn latest_input_hashes(
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
    fn save_classified(&mut self, batch: &[Classified]) -> Result<(), StoreError> {
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

    /// Append one label made at `created_at` (an imported label keeps its time), or now. One
    /// short IMMEDIATE transaction: reviewers labelling the same database at once wait their
    /// turn (busy timeout) instead of failing. Takes `&self` so the TUI can label while reading.
    fn add_label_at(&self, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let written = insert_label(&self.conn, label, note).and_then(|id| {
            if let Some(at) = created_at {
                self.conn.execute("UPDATE labels SET created_at = ?2 WHERE id = ?1", params![id, at])?;
            }
            Ok(id)
        });
        match written {
            Ok(id) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(id)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn append_histories(
        &self,
        keys: &[LabelKey<'_>],
        decide: &mut dyn FnMut(usize, &[LabelRow]) -> Vec<NewLabel>,
    ) -> Result<usize, StoreError> {
        if keys.is_empty() {
            return Ok(0);
        }
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let written = (|| -> Result<usize, StoreError> {
            let mut appended = 0;
            for (i, history) in histories(self.labels(run_of_keys(keys), false)?, keys).iter().enumerate() {
                for n in decide(i, history) {
                    let id = insert_label(&self.conn, &n.label, n.note.as_deref())?;
                    if let Some(at) = &n.created_at {
                        self.conn
                            .prepare_cached("UPDATE labels SET created_at = ?2 WHERE id = ?1")?
                            .execute(params![id, at])?;
                    }
                    appended += 1;
                }
            }
            Ok(appended)
        })();
        match written {
            Ok(n) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(n)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Labels, oldest first: all of them, or of one run; with `current_only`, the latest per
    /// run, source, rater and taxonomy.
    fn labels(&self, run: Option<i64>, current_only: bool) -> Result<Vec<LabelRow>, StoreError> {
        // One statement for a run, one for every run: with `?1 IS NULL OR l.run_id = ?1` SQLite
        // read (and grouped) every label to find one run's, 0.27 s a run at 100,000 runs.
        let which = if run.is_some() { "l.run_id = ?1" } else { "?1 IS NULL" };
        let current = if current_only {
            format!("AND l.id IN (SELECT max(id) FROM labels l WHERE {which} GROUP BY run_id, source, rater, taxonomy)")
        } else {
            String::new()
        };
        let sql = format!(
            "SELECT {LABEL_COLUMNS} FROM labels l LEFT JOIN runs r ON r.id = l.run_id
             WHERE {which} {current} ORDER BY l.run_id, l.id"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = collect(&mut stmt, [run], LabelRow::from_row)?;
        // Every mode verdict of those labels in one query, not one per label.
        let mut modes = self.conn.prepare_cached(&format!(
            "SELECT m.label_id, m.mode, m.assigned, m.confidence, m.evidence, m.rationale
             FROM label_modes m JOIN labels l ON l.id = m.label_id
             WHERE {which} ORDER BY m.rowid"
        ))?;
        let verdicts = collect(&mut modes, [run], mode_verdict)?;
        Ok(with_modes(rows, verdicts))
    }

    /// The latest label per run, source and rater under `taxonomy` at `version`, as mode sets
    /// (labels of another version are another vocabulary and are not mixed in).
    fn current_label_sets(&self, taxonomy: &str, version: &str) -> Result<Vec<LabelSet>, StoreError> {
        let columns = label_set_columns(
            "SELECT group_concat(mode, char(31)) FROM (SELECT mode FROM label_modes
             WHERE label_id = l.id AND assigned = 1 ORDER BY mode)",
        );
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {columns}
             FROM labels l
             WHERE l.id IN (SELECT max(id) FROM labels WHERE taxonomy = ?1 AND taxonomy_version = ?2
                            GROUP BY run_id, source, rater)
             ORDER BY l.run_id, l.id"
        ))?;
        collect(&mut stmt, [taxonomy, version], LabelSet::from_row)
    }

    fn llm_cached(&self, model: &str, prompt_hash: &str) -> Result<Option<CachedReply>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT reply, tokens_in, tokens_out, latency_ms FROM llm_cache WHERE model = ?1 AND prompt_hash = ?2",
        )?;
        Ok(collect(&mut stmt, params![model, prompt_hash], CachedReply::from_row)?.pop())
    }

    /// Keep a validated reply and append its label, in one transaction: a label is never
    /// written without its cache entry, nor half of either.
    fn save_llm_label(&mut self, prompt_hash: &str, reply: &CachedReply, label: &Label) -> Result<i64, StoreError> {
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

    fn record_classify_error(
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

    fn classify_errors(&self, run: Option<i64>) -> Result<Vec<ClassifyErrorRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, source, model, error, created_at FROM classify_errors WHERE ?1 IS NULL OR run_id = ?1 ORDER BY id",
        )?;
        collect(&mut stmt, [run], ClassifyErrorRow::from_row)
    }
}

fn insert_label(tx: &rusqlite::Connection, label: &Label, note: Option<&str>) -> Result<i64, StoreError> {
    let p = &label.provenance;
    let who = super::identity::of_run(tx, label.run_id)?;
    let (judgement, onset_step, blame) = judgement_cells(label);
    tx.prepare_cached(&format!(
        "INSERT INTO labels (run_id, source, rater, taxonomy, taxonomy_version, unclassified, exit_category, summary, note,
             model, input_hash, tokens_in, tokens_out, cost, latency_ms, created_at,
             run_source, run_instance, run_attempt, run_nth, judgement, onset_step, blame)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, {NOW}, ?16, ?17, ?18, ?19,
                 ?20, ?21, ?22)"
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
        judgement,
        onset_step,
        blame,
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
    use crate::label::{Blame, BlameVerdict, Evidence, Judgement, ModeVerdict, Onset, Provenance};
    use crate::store::Store;

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
            // A reviewer who named a mode marked the onset too.
            judgement: match mode {
                Some(_) => Judgement {
                    onset: Some(Onset { step: Some(3), confidence: 0.9, ..Onset::default() }),
                    blame: Some(BlameVerdict::of(Blame::Agent, "its edit")),
                },
                None => Judgement::default(),
            },
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
        // Onset and blame as the statistics read them: bob's, judged; ann's latest judged nothing.
        let sets = store.current_label_sets("refactoring", "1.0").unwrap();
        let judged: Vec<(&str, bool, Option<usize>, Option<Blame>)> =
            sets.iter().map(|s| (s.rater.as_str(), s.judged, s.onset_step, s.blame)).collect();
        assert_eq!(judged, [("ann", false, None, None), ("bob", true, Some(3), Some(Blame::Agent))]);
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
