//! Signals, labels (append-only), the LLM reply cache and classification errors, on either store:
//! [`crate::label::Label`] values mapped to rows and back. Reviewers and classifiers on many
//! machines append at once: every writer of a (run, source, rater, taxonomy) first locks that key
//! for its transaction ([`Sql::lock_keys`]); the key's labels are then written one transaction
//! after another, and its latest (highest id) is the last committed.

use super::{Sql, args};
use crate::error::StoreError;
use crate::label::{Label, Source};
use crate::store::backend::Labels;
use crate::store::copy::{LABEL_MODES, LABELS};
use crate::store::labels::{
    CachedReply, Classified, ClassifyErrorRow, LABEL_COLUMNS, LabelKey, LabelRow, LabelSet, NewLabel, histories,
    judgement_cells, label_set_columns, mode_verdict, run_of_keys, with_modes,
};
use std::collections::HashMap;

impl<S: Sql> Labels for S {
    fn signals_json(&self, run_id: i64, version: u32) -> Result<Option<String>, StoreError> {
        self.opt(
            "SELECT json FROM signals WHERE run_id = ?1 AND version = ?2",
            &args![run_id, i64::from(version)],
            |r| r.text(0),
        )
    }

    fn latest_input_hashes(
        &self,
        source: Source,
        rater: &str,
        taxonomy: &str,
        version: &str,
    ) -> Result<HashMap<i64, String>, StoreError> {
        let rows = self.rows(
            "SELECT run_id, input_hash FROM labels WHERE id IN (
                 SELECT max(id) FROM labels WHERE source = ?1 AND rater = ?2 AND taxonomy = ?3 AND taxonomy_version = ?4
                 GROUP BY run_id) AND input_hash IS NOT NULL",
            &args![source.name(), rater, taxonomy, version],
            |r| Ok((r.int(0)?, r.text(1)?)),
        )?;
        Ok(rows.into_iter().collect())
    }

    fn save_classified(&mut self, batch: &[Classified]) -> Result<(), StoreError> {
        self.transaction(|| {
            self.lock_keys(batch.iter().filter_map(|c| c.label.as_ref()).map(|l| LabelKey::of(l).text()).collect())?;
            for c in batch {
                self.execute(
                    "INSERT INTO signals (run_id, version, hash, json) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (run_id) DO UPDATE SET version = excluded.version, hash = excluded.hash, json = excluded.json",
                    &args![c.run_id, i64::from(c.signals_version), &c.signals_hash, &c.signals_json],
                )?;
            }
            let labels: Vec<_> = batch.iter().filter_map(|c| c.label.as_ref()).map(|l| (l, None, None)).collect();
            insert_labels(self, &labels).map(drop)
        })
    }

    fn add_label_at(&self, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError> {
        self.transaction(|| {
            self.lock_keys(vec![LabelKey::of(label).text()])?;
            insert_label(self, label, note, created_at)
        })
    }

    fn append_histories(
        &self,
        keys: &[LabelKey<'_>],
        decide: &mut dyn FnMut(usize, &[LabelRow]) -> Vec<NewLabel>,
    ) -> Result<usize, StoreError> {
        if keys.is_empty() {
            return Ok(0);
        }
        self.transaction(|| {
            self.lock_keys(keys.iter().map(LabelKey::text).collect())?;
            let mut new = Vec::new();
            for (i, history) in histories(self.labels(run_of_keys(keys), false)?, keys).iter().enumerate() {
                new.extend(decide(i, history));
            }
            // Written a batch at a time, so no one COPY grows past memory's comfort.
            for batch in new.chunks(5_000) {
                let labels: Vec<_> =
                    batch.iter().map(|n| (&n.label, n.note.as_deref(), n.created_at.as_deref())).collect();
                insert_labels(self, &labels)?;
            }
            Ok(new.len())
        })
    }

    fn labels(&self, run: Option<i64>, current_only: bool) -> Result<Vec<LabelRow>, StoreError> {
        // One statement for a run, one for every run: with `?1 IS NULL OR l.run_id = ?1` neither
        // SQLite nor a generic PostgreSQL plan reads by the index; every label was read (and
        // grouped) to find one run's, 0.27 s a run at 100,000 runs.
        let which = if run.is_some() { "l.run_id = ?1" } else { "CAST(?1 AS bigint) IS NULL" };
        let current = if current_only {
            format!("AND l.id IN (SELECT max(id) FROM labels l WHERE {which} GROUP BY run_id, source, rater, taxonomy)")
        } else {
            String::new()
        };
        let rows = self.rows(
            &format!(
                "SELECT {LABEL_COLUMNS} FROM labels l LEFT JOIN runs r ON r.id = l.run_id
                 WHERE {which} {current} ORDER BY l.run_id, l.id"
            ),
            &args![run],
            LabelRow::from_row,
        )?;
        // Every mode verdict of those labels in one query, not one per label.
        let verdicts = self.rows(
            &format!(
                "SELECT m.label_id, m.mode, m.assigned, m.confidence, m.evidence, m.rationale
                 FROM label_modes m JOIN labels l ON l.id = m.label_id
                 WHERE {which} ORDER BY m.{}",
                S::ROW_ORDER
            ),
            &args![run],
            mode_verdict,
        )?;
        Ok(with_modes(rows, verdicts))
    }

    /// Labels of another version are another vocabulary and are not mixed in.
    fn current_label_sets(&self, taxonomy: &str, version: &str) -> Result<Vec<LabelSet>, StoreError> {
        let columns =
            label_set_columns(&super::sorted_join("mode", "FROM label_modes WHERE label_id = l.id AND assigned = 1"));
        self.rows(
            &format!(
                "SELECT {columns}
                 FROM labels l
                 WHERE l.id IN (SELECT max(id) FROM labels WHERE taxonomy = ?1 AND taxonomy_version = ?2
                                GROUP BY run_id, source, rater)
                 ORDER BY l.run_id, l.id"
            ),
            &args![taxonomy, version],
            LabelSet::from_row,
        )
    }

    fn llm_cached(&self, model: &str, prompt_hash: &str) -> Result<Option<CachedReply>, StoreError> {
        self.opt(
            "SELECT reply, tokens_in, tokens_out, latency_ms FROM llm_cache WHERE model = ?1 AND prompt_hash = ?2",
            &args![model, prompt_hash],
            CachedReply::from_row,
        )
    }

    /// A label is never written without its cache entry, nor half of either.
    fn save_llm_label(&mut self, prompt_hash: &str, reply: &CachedReply, label: &Label) -> Result<i64, StoreError> {
        self.transaction(|| {
            self.lock_keys(vec![LabelKey::of(label).text()])?;
            let model = label.provenance.model.as_deref().unwrap_or(&label.rater);
            let count = |v: Option<u64>| v.map(|t| t as i64);
            self.execute(
                &format!(
                    "INSERT INTO llm_cache (model, prompt_hash, reply, tokens_in, tokens_out, latency_ms, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, {})
                     ON CONFLICT (model, prompt_hash) DO UPDATE SET reply = excluded.reply, tokens_in = excluded.tokens_in,
                        tokens_out = excluded.tokens_out, latency_ms = excluded.latency_ms, created_at = excluded.created_at",
                    S::NOW
                ),
                &args![
                    model,
                    prompt_hash,
                    &reply.reply,
                    count(reply.tokens_in),
                    count(reply.tokens_out),
                    count(reply.latency_ms)
                ],
            )?;
            insert_label(self, label, None, None)
        })
    }

    fn record_classify_error(
        &self,
        run_id: i64,
        source: Source,
        model: Option<&str>,
        error: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            &format!(
                "INSERT INTO classify_errors (run_id, source, model, error, created_at) VALUES (?1, ?2, ?3, ?4, {})",
                S::NOW
            ),
            &args![run_id, source.name(), model, error],
        )?;
        Ok(())
    }

    fn classify_errors(&self, run: Option<i64>) -> Result<Vec<ClassifyErrorRow>, StoreError> {
        self.rows(
            "SELECT run_id, source, model, error, created_at FROM classify_errors
             WHERE CAST(?1 AS bigint) IS NULL OR run_id = ?1 ORDER BY id",
            &args![run],
            ClassifyErrorRow::from_row,
        )
    }
}

fn insert_label<S: Sql>(
    sql: &S,
    label: &Label,
    note: Option<&str>,
    created_at: Option<&str>,
) -> Result<i64, StoreError> {
    let ids = insert_labels(sql, &[(label, note, created_at)])?;
    ids.first().copied().ok_or_else(|| StoreError::Corrupt("no id for a new label".into()))
}

/// Append labels (each with its note and time, or now), in this order: their ids are taken in
/// one go, ascending in the order given (the caller holds their keys' locks, so a key's latest
/// label is the last given), each with its run's identity (it follows the run through
/// re-ingests), written in bulk, their verdicts after them.
fn insert_labels<S: Sql>(sql: &S, labels: &[(&Label, Option<&str>, Option<&str>)]) -> Result<Vec<i64>, StoreError> {
    if labels.is_empty() {
        return Ok(Vec::new());
    }
    let ids = sql.new_ids("labels", labels.len())?;
    let mut runs: Vec<i64> = labels.iter().map(|(l, ..)| l.run_id).collect();
    runs.sort_unstable();
    runs.dedup();
    let who = super::identity::of_runs(sql, &runs)?;
    let now = match labels.iter().any(|(.., at)| at.is_none()) {
        true => Some(sql.one(&format!("SELECT {}", S::NOW), &[], |r| r.text(0))?),
        false => None,
    };
    let count = |v: Option<u64>| v.map(|t| t as i64);
    let judged: Vec<_> = labels.iter().map(|(label, ..)| judgement_cells(label)).collect();
    let evidence: Vec<Vec<String>> = labels
        .iter()
        .map(|(label, ..)| {
            label
                .modes
                .iter()
                .chain(&label.considered)
                .map(|m| serde_json::to_string(&m.evidence).unwrap_or_else(|_| "[]".into()))
                .collect()
        })
        .collect();
    let (mut rows, mut modes) = (Vec::with_capacity(labels.len() * LABELS.columns.len()), Vec::new());
    for (i, (&id, &(label, note, created_at))) in ids.iter().zip(labels).enumerate() {
        let p = &label.provenance;
        let run = who.get(&label.run_id);
        let (judgement, onset_step, blame) = &judged[i];
        rows.extend(args![
            id,
            label.run_id,
            label.source.name(),
            &label.rater,
            &label.taxonomy,
            &label.taxonomy_version,
            label.is_unclassified(),
            &label.exit_category,
            &label.summary,
            note,
            p.model.as_deref(),
            p.input_hash.as_deref(),
            count(p.tokens_in),
            count(p.tokens_out),
            p.cost,
            count(p.latency_ms),
            created_at.or(now.as_deref()).unwrap_or_default(),
            run.map(|r| r.source.as_str()),
            run.map(|r| r.instance.as_str()),
            run.and_then(|r| r.attempt),
            run.map(|r| r.nth),
            judgement.as_deref(),
            *onset_step,
            *blame,
        ]);
        let assigned = label.modes.iter().map(|m| (true, m)).chain(label.considered.iter().map(|m| (false, m)));
        for ((assigned, m), evidence) in assigned.zip(&evidence[i]) {
            modes.extend(args![id, &m.mode, assigned, m.confidence, evidence, &m.rationale]);
        }
    }
    sql.bulk(LABELS.name, LABELS.columns, &rows)?;
    sql.bulk(LABEL_MODES.name, LABEL_MODES.columns, &modes)?;
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use crate::label::{Blame, BlameVerdict, Evidence, Judgement, ModeVerdict, Onset, Provenance};
    use crate::label::{Label, Source};
    use crate::store::Store;
    use crate::store::labels::CachedReply;

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
