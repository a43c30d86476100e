//! Signals, labels, the LLM reply cache and classification errors in PostgreSQL. Reviewers and
//! classifiers on many machines append at once: a sequence's order is not the order of commits,
//! so every writer of a (run, source, rater, taxonomy) first takes an advisory lock on that key
//! for its transaction; the key's labels are then written one transaction after another, and its
//! latest (highest id) is the last committed.

use super::copy::CopyRows;
use super::{Cells, Pg, enc, enc_opt};
use crate::error::StoreError;
use crate::label::{Label, Source};
use crate::store::backend::Labels;
use crate::store::labels::{
    CachedReply, Classified, ClassifyErrorRow, LABEL_COLUMNS, LabelKey, LabelRow, LabelSet, NewLabel, histories,
    judgement_cells, label_set_columns, mode_verdict, run_of_keys, with_modes,
};
use std::collections::HashMap;

/// Now, as SQLite writes it (`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`).
const NOW: &str = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

impl Labels for Pg {
    fn signals_json(&self, run_id: i64, version: u32) -> Result<Option<String>, StoreError> {
        self.opt("SELECT json FROM signals WHERE run_id = $1 AND version = $2", &[&run_id, &i64::from(version)])?
            .map(|r| r.text(0))
            .transpose()
    }

    fn latest_input_hashes(
        &self,
        source: Source,
        rater: &str,
        taxonomy: &str,
        version: &str,
    ) -> Result<HashMap<i64, String>, StoreError> {
        self.rows(
            "SELECT run_id, input_hash FROM labels WHERE id IN (
                 SELECT max(id) FROM labels WHERE source = $1 AND rater = $2 AND taxonomy = $3 AND taxonomy_version = $4
                 GROUP BY run_id) AND input_hash IS NOT NULL",
            &[&source.name(), &enc(rater), &enc(taxonomy), &enc(version)],
        )?
        .iter()
        .map(|r| Ok((r.int(0)?, r.text(1)?)))
        .collect()
    }

    fn save_classified(&mut self, batch: &[Classified]) -> Result<(), StoreError> {
        self.in_transaction_of(|pg| {
            pg.lock_keys(batch.iter().filter_map(|c| c.label.as_ref()).map(LabelKey::of))?;
            for c in batch {
                pg.exec(
                    "INSERT INTO signals (run_id, version, hash, json) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (run_id) DO UPDATE SET version = excluded.version, hash = excluded.hash, json = excluded.json",
                    &[&c.run_id, &i64::from(c.signals_version), &enc(&c.signals_hash), &enc(&c.signals_json)],
                )?;
            }
            let labels: Vec<_> = batch.iter().filter_map(|c| c.label.as_ref()).map(|l| (l, None, None)).collect();
            insert_labels(pg, &labels).map(drop)
        })
    }

    fn add_label_at(&self, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError> {
        self.in_transaction_of(|pg| {
            pg.lock_keys([LabelKey::of(label)])?;
            insert_label(pg, label, note, created_at)
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
        self.in_transaction_of(|pg| {
            pg.lock_keys(keys.iter().copied())?;
            let mut new = Vec::new();
            for (i, history) in histories(pg.labels(run_of_keys(keys), false)?, keys).iter().enumerate() {
                new.extend(decide(i, history));
            }
            // Sent a batch at a time, so no one COPY grows past memory's comfort.
            for batch in new.chunks(5_000) {
                let labels: Vec<_> =
                    batch.iter().map(|n| (&n.label, n.note.as_deref(), n.created_at.as_deref())).collect();
                insert_labels(pg, &labels)?;
            }
            let appended = new.len();
            Ok(appended)
        })
    }

    fn labels(&self, run: Option<i64>, current_only: bool) -> Result<Vec<LabelRow>, StoreError> {
        // One statement for a run, one for every run (as SQLite's: a generic plan of
        // `$1 IS NULL OR l.run_id = $1` reads every label to find one run's).
        let which = if run.is_some() { "l.run_id = $1" } else { "$1::bigint IS NULL" };
        let current = if current_only {
            format!("AND l.id IN (SELECT max(id) FROM labels l WHERE {which} GROUP BY run_id, source, rater, taxonomy)")
        } else {
            String::new()
        };
        let rows = self
            .rows(
                &format!(
                    "SELECT {LABEL_COLUMNS} FROM labels l LEFT JOIN runs r ON r.id = l.run_id
                     WHERE {which} {current} ORDER BY l.run_id, l.id"
                ),
                &[&run],
            )?
            .iter()
            .map(|r| LabelRow::from_row(r))
            .collect::<Result<Vec<_>, _>>()?;
        let verdicts = self
            .rows(
                &format!(
                    "SELECT m.label_id, m.mode, m.assigned, m.confidence, m.evidence, m.rationale
                     FROM label_modes m JOIN labels l ON l.id = m.label_id
                     WHERE {which} ORDER BY m.id"
                ),
                &[&run],
            )?
            .iter()
            .map(|r| mode_verdict(r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(with_modes(rows, verdicts))
    }

    fn current_label_sets(&self, taxonomy: &str, version: &str) -> Result<Vec<LabelSet>, StoreError> {
        let columns = label_set_columns(
            "SELECT string_agg(mode, chr(31) ORDER BY mode) FROM label_modes WHERE label_id = l.id AND assigned = 1",
        );
        self.rows(
            &format!(
                "SELECT {columns}
                 FROM labels l
                 WHERE l.id IN (SELECT max(id) FROM labels WHERE taxonomy = $1 AND taxonomy_version = $2
                                GROUP BY run_id, source, rater)
                 ORDER BY l.run_id, l.id"
            ),
            &[&enc(taxonomy), &enc(version)],
        )?
        .iter()
        .map(|r| LabelSet::from_row(r))
        .collect()
    }

    fn llm_cached(&self, model: &str, prompt_hash: &str) -> Result<Option<CachedReply>, StoreError> {
        self.opt(
            "SELECT reply, tokens_in, tokens_out, latency_ms FROM llm_cache WHERE model = $1 AND prompt_hash = $2",
            &[&enc(model), &enc(prompt_hash)],
        )?
        .map(|r| CachedReply::from_row(&r))
        .transpose()
    }

    fn save_llm_label(&mut self, prompt_hash: &str, reply: &CachedReply, label: &Label) -> Result<i64, StoreError> {
        self.in_transaction_of(|pg| {
            pg.lock_keys([LabelKey::of(label)])?;
            let model = label.provenance.model.as_deref().unwrap_or(&label.rater);
            let count = |v: Option<u64>| v.map(|t| t as i64);
            pg.exec(
                &format!(
                    "INSERT INTO llm_cache (model, prompt_hash, reply, tokens_in, tokens_out, latency_ms, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, {NOW})
                     ON CONFLICT (model, prompt_hash) DO UPDATE SET reply = excluded.reply, tokens_in = excluded.tokens_in,
                        tokens_out = excluded.tokens_out, latency_ms = excluded.latency_ms, created_at = excluded.created_at"
                ),
                &[
                    &enc(model),
                    &enc(prompt_hash),
                    &enc(&reply.reply),
                    &count(reply.tokens_in),
                    &count(reply.tokens_out),
                    &count(reply.latency_ms),
                ],
            )?;
            insert_label(pg, label, None, None)
        })
    }

    fn record_classify_error(
        &self,
        run_id: i64,
        source: Source,
        model: Option<&str>,
        error: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            &format!(
                "INSERT INTO classify_errors (run_id, source, model, error, created_at) VALUES ($1, $2, $3, $4, {NOW})"
            ),
            &[&run_id, &source.name(), &enc_opt(model), &enc(error)],
        )?;
        Ok(())
    }

    fn classify_errors(&self, run: Option<i64>) -> Result<Vec<ClassifyErrorRow>, StoreError> {
        self.rows(
            "SELECT run_id, source, model, error, created_at FROM classify_errors
             WHERE $1::bigint IS NULL OR run_id = $1 ORDER BY id",
            &[&run],
        )?
        .iter()
        .map(|r| ClassifyErrorRow::from_row(r))
        .collect()
    }
}

impl Pg {
    /// Run `f` in a transaction of its own (committed when it succeeds, rolled back otherwise).
    pub(super) fn in_transaction_of<T>(&self, f: impl FnOnce(&Pg) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.run("BEGIN")?;
        match f(self) {
            Ok(v) => {
                self.run("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                self.abandon();
                Err(e)
            }
        }
    }

    /// Take the locks of these label keys for the transaction, in one order (two writers of the
    /// same keys never wait for each other in a circle).
    fn lock_keys<'k>(&self, keys: impl IntoIterator<Item = LabelKey<'k>>) -> Result<(), StoreError> {
        let mut texts: Vec<String> = keys.into_iter().map(|k| k.text()).collect();
        texts.sort();
        texts.dedup();
        let texts: Vec<String> = texts.iter().map(|t| enc(t).into_owned()).collect();
        if !texts.is_empty() {
            self.exec(
                "SELECT pg_advisory_xact_lock(hashtextextended(k, 2727)) FROM unnest($1::text[]) AS k ORDER BY k",
                &[&texts],
            )?;
        }
        Ok(())
    }
}

fn insert_label(pg: &Pg, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError> {
    let ids = insert_labels(pg, &[(label, note, created_at)])?;
    ids.first().copied().ok_or_else(|| StoreError::Postgres("labels_id_seq gave no id".into()))
}

/// Append labels (each with its note and time, or now), in this order: their ids are taken
/// from the sequence in one go, ascending in the order given (the caller holds their keys'
/// locks, so a key's latest label is the last given), each with its run's identity (it
/// follows the run through re-ingests), sent with one `COPY`, their verdicts with another.
fn insert_labels(pg: &Pg, labels: &[(&Label, Option<&str>, Option<&str>)]) -> Result<Vec<i64>, StoreError> {
    if labels.is_empty() {
        return Ok(Vec::new());
    }
    let ids = pg.ids("labels_id_seq", labels.len())?;
    let mut runs: Vec<i64> = labels.iter().map(|(l, ..)| l.run_id).collect();
    runs.sort_unstable();
    runs.dedup();
    let who = super::identity::identities(pg, &runs)?;
    let now = match labels.iter().any(|(.., at)| at.is_none()) {
        true => Some(pg.one(&format!("SELECT {NOW}"), &[])?.text(0)?),
        false => None,
    };
    let count = |v: Option<u64>| v.map(|t| t as i64);
    let (mut rows, mut modes) = (CopyRows::default(), CopyRows::default());
    for (&id, &(label, note, created_at)) in ids.iter().zip(labels) {
        let p = &label.provenance;
        let run = who.get(&label.run_id);
        let (judgement, onset_step, blame) = judgement_cells(label);
        rows.int(id)
            .int(label.run_id)
            .text(label.source.name())
            .text(&label.rater)
            .text(&label.taxonomy)
            .text(&label.taxonomy_version)
            .int(i64::from(label.is_unclassified()))
            .text(&label.exit_category)
            .text(&label.summary)
            .opt_text(note)
            .opt_text(p.model.as_deref())
            .opt_text(p.input_hash.as_deref())
            .opt_int(count(p.tokens_in))
            .opt_int(count(p.tokens_out))
            .opt_real(p.cost)
            .opt_int(count(p.latency_ms))
            .text(created_at.or(now.as_deref()).unwrap_or_default())
            .opt_text(run.map(|r| r.source.as_str()))
            .opt_text(run.map(|r| r.instance.as_str()))
            .opt_int(run.and_then(|r| r.attempt))
            .opt_int(run.map(|r| r.nth))
            .opt_text(judgement.as_deref())
            .opt_int(onset_step)
            .opt_text(blame)
            .end();
        for (assigned, verdicts) in [(true, &label.modes), (false, &label.considered)] {
            for m in verdicts {
                let evidence = serde_json::to_string(&m.evidence).unwrap_or_else(|_| "[]".into());
                modes
                    .int(id)
                    .text(&m.mode)
                    .int(i64::from(assigned))
                    .opt_real(Some(m.confidence))
                    .text(&evidence)
                    .text(&m.rationale)
                    .end();
            }
        }
    }
    pg.copy_in(
        "COPY labels (id, run_id, source, rater, taxonomy, taxonomy_version, unclassified, exit_category, summary,
             note, model, input_hash, tokens_in, tokens_out, cost, latency_ms, created_at,
             run_source, run_instance, run_attempt, run_nth, judgement, onset_step, blame) FROM STDIN",
        rows.data(),
    )?;
    if !modes.is_empty() {
        pg.copy_in(
            "COPY label_modes (label_id, mode, assigned, confidence, evidence, rationale) FROM STDIN",
            modes.data(),
        )?;
    }
    Ok(ids)
}
