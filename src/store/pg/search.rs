//! Search in PostgreSQL, giving what SQLite's FTS5 gives. PostgreSQL's own text search splits
//! words otherwise (`__init__.py`, `2.0`, `line 1` and positions past 16,383 come out
//! differently), so a step's terms are stored as SQLite's tokenizer makes them
//! (`store::terms::document`, in `step_terms`, written with the step), and its distinct terms in
//! `step_words` under a `pg_trgm` GIN index. A phrase is ` t1 t2 t3` in the terms (the last term
//! a prefix), which `LIKE` answers exactly; the steps whose words hold its terms are its
//! candidates, found fast by the index and confirmed with that `LIKE`. A phrase longer than the
//! pieces' overlap is looked for by its head, and each step found is confirmed in Rust on its
//! whole terms.

use super::term_rows::OVERLAP;
use super::{Cells, Pg};
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::backend::{IndexStats, Search};
use crate::store::read::{SEARCHED, SearchHit, phrase_words, record_snippet, snippet_of};
use crate::store::terms;
use crate::store::texts;
use std::io::Read;

impl Search for Pg {
    fn search(&self, phrase: &str, run: Option<i64>, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let words = phrase_words(phrase);
        self.matches(phrase, run, Some(limit))?
            .into_iter()
            .map(|m| {
                let (field, snippet) = self.step_snippet(m.step_id, &words)?.unwrap_or(("observation", String::new()));
                Ok(SearchHit { run_id: m.run_id, instance_id: m.instance_id, step: m.idx, field, snippet })
            })
            .collect()
    }

    fn search_run(&self, run_id: i64, phrase: &str) -> Result<Vec<i64>, StoreError> {
        Ok(self.matches(phrase, Some(run_id), None)?.into_iter().map(|m| m.idx).collect())
    }

    /// Terms are written with their steps: nothing ever waits for the index.
    fn search_pending(&self) -> Result<i64, StoreError> {
        Ok(0)
    }

    fn build_search_index_until(
        &self,
        _progress: &mut dyn FnMut(i64, i64),
        _stop: &dyn Fn() -> bool,
    ) -> Result<IndexStats, StoreError> {
        Ok(IndexStats::default())
    }

    /// `ANALYZE` of the tables a search reads (a role that does not own them is warned by the
    /// server and skipped, not refused).
    fn after_ingest(&self) -> Result<(), StoreError> {
        self.run("ANALYZE runs, steps, step_words, step_terms")
    }

    fn ensure_search_index(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A step, by its id and place.
#[derive(Clone, Copy)]
struct Step {
    id: i64,
    run_id: i64,
    idx: i64,
}

/// A step that holds the phrase.
struct Match {
    step_id: i64,
    run_id: i64,
    instance_id: String,
    idx: i64,
}

impl Pg {
    /// The steps holding the phrase (of one run, or all), in run and step order, at most `limit`.
    ///
    /// With a limit, the first [`WINDOW`] steps are confirmed in order first: a phrase many steps
    /// hold reaches its limit there, without the index. The rest: the candidates after them
    /// (steps whose distinct terms hold the phrase's terms, found with the trigram index), in
    /// step order, confirmed on their whole terms a page at a time until the limit is reached.
    fn matches(&self, phrase: &str, run: Option<i64>, limit: Option<usize>) -> Result<Vec<Match>, StoreError> {
        let Some(pattern) = terms::phrase(phrase) else { return Ok(Vec::new()) };
        // A phrase up to the overlap of the pieces is inside one piece: LIKE is the answer. A
        // longer one: steps holding its head, confirmed on their whole terms.
        let exact = pattern.len() <= OVERLAP;
        let head = if exact { pattern.as_str() } else { head(&pattern) };
        let like = super::enc(&format!("%{head}%")).into_owned();
        let enough = |found: &Vec<Step>| limit.is_some_and(|l| found.len() >= l);
        let mut found = Vec::new();
        let mut after = (i64::MIN, i64::MIN);
        if limit.is_some() {
            let rows = self.rows(
                "SELECT w.id, w.run_id, w.idx,
                        EXISTS (SELECT 1 FROM step_terms t WHERE t.step_id = w.id AND t.terms LIKE $2)
                 FROM (SELECT id, run_id, idx FROM steps WHERE $1::bigint IS NULL OR run_id = $1
                       ORDER BY run_id, idx LIMIT $3) w ORDER BY w.run_id, w.idx",
                &[&run, &like, &WINDOW],
            )?;
            for r in &rows {
                let step = Step { id: r.int(0)?, run_id: r.int(1)?, idx: r.int(2)? };
                after = (step.run_id, step.idx);
                if r.flag(3)? && (exact || self.holds(step.id, &pattern)?) {
                    found.push(step);
                    if enough(&found) {
                        return self.named(found);
                    }
                }
            }
            if (rows.len() as i64) < WINDOW {
                return self.named(found);
            }
        }
        let likes = word_likes(head);
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&run, &after.0, &after.1];
        params.extend(likes.iter().map(|l| l as &(dyn postgres::types::ToSql + Sync)));
        let cands: Vec<Step> = self
            .rows(&candidates_sql(likes.len()), &params)?
            .iter()
            .map(|r| Ok(Step { id: r.int(0)?, run_id: r.int(1)?, idx: r.int(2)? }))
            .collect::<Result<_, StoreError>>()?;
        let (mut at, mut page) = (0, 64);
        while at < cands.len() {
            let part = &cands[at..(at + page).min(cands.len())];
            let ids: Vec<i64> = part.iter().map(|m| m.id).collect();
            let held: std::collections::HashSet<i64> = self
                .rows(
                    "SELECT DISTINCT step_id FROM step_terms WHERE step_id = ANY($1) AND terms LIKE $2",
                    &[&ids, &like],
                )?
                .iter()
                .map(|r| r.int(0))
                .collect::<Result<_, _>>()?;
            for m in part {
                if held.contains(&m.id) && (exact || self.holds(m.id, &pattern)?) {
                    found.push(*m);
                    if enough(&found) {
                        return self.named(found);
                    }
                }
            }
            at += part.len();
            page = (page * 4).min(16_384);
        }
        self.named(found)
    }

    /// The steps with their runs' instances.
    fn named(&self, steps: Vec<Step>) -> Result<Vec<Match>, StoreError> {
        let mut runs: Vec<i64> = steps.iter().map(|s| s.run_id).collect();
        runs.dedup();
        let names: std::collections::HashMap<i64, String> = self
            .rows("SELECT id, instance_id FROM runs WHERE id = ANY($1)", &[&runs])?
            .iter()
            .map(|r| Ok((r.int(0)?, r.text(1)?)))
            .collect::<Result<_, StoreError>>()?;
        steps
            .into_iter()
            .map(|s| {
                let instance_id = names
                    .get(&s.run_id)
                    .cloned()
                    .ok_or_else(|| StoreError::Inconsistent("a step without its run".into()))?;
                Ok(Match { step_id: s.id, run_id: s.run_id, instance_id, idx: s.idx })
            })
            .collect()
    }

    /// Whether a step's terms, made again from its texts, hold `pattern`.
    fn holds(&self, step_id: i64, pattern: &str) -> Result<bool, StoreError> {
        let r = self.one(
            "SELECT thought, action, observation, response, args, chunk_id, chunk_at FROM step_texts WHERE step_id = $1",
            &[&step_id],
        )?;
        let t = texts::of_row(&r, 0, &mut texts::ChunkCache::default(), self)?;
        let fields = [sanitize(&t.thought), sanitize(&t.action), sanitize(&t.observation)];
        Ok(terms::document(&[&fields[0], &fields[1], &fields[2]]).contains(pattern))
    }

    /// The first of a step's thought, action and observation holding `words`, with its snippet,
    /// its chunk read from the server a piece at a time.
    fn step_snippet(&self, step_id: i64, words: &[&str]) -> Result<Option<(&'static str, String)>, StoreError> {
        let r = self.one(
            "SELECT t.chunk_id, t.chunk_at, length(c.body)::bigint, t.thought, t.action, t.observation
             FROM step_texts t LEFT JOIN text_chunks c ON c.id = t.chunk_id WHERE t.step_id = $1",
            &[&step_id],
        )?;
        let Some(chunk_id) = r.opt_int(0)? else {
            for (i, (field, _)) in SEARCHED.into_iter().enumerate() {
                let text = r.text(3 + i)?;
                if let Some(snippet) = snippet_of(text.as_bytes(), text.len() as u64, words)? {
                    return Ok(Some((field, snippet)));
                }
            }
            return Ok(None);
        };
        let at = u64::try_from(r.int(1)?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let len = r.opt_int(2)?.unwrap_or(0);
        let body = ChunkReader { pg: self, chunk_id, at: 0, len, piece: Vec::new(), used: 0 };
        record_snippet(texts::open_record(body, at)?, words)
    }
}

/// The candidates of a pattern after a (run, step), in step order: steps whose distinct terms
/// hold the pattern's longest terms (at most [`TERMS`] of them) and its last term as a prefix,
/// each term's steps found with the trigram index. Parameters: the run or NULL, the run and step
/// index after which to start, then the `LIKE` patterns ([`word_likes`]).
fn candidates_sql(likes: usize) -> String {
    let each: Vec<String> =
        (0..likes).map(|i| format!("SELECT step_id FROM step_words WHERE words LIKE ${}", i + 4)).collect();
    format!(
        "SELECT s.id, s.run_id, s.idx FROM steps s
         WHERE s.id IN ({}) AND ($1::bigint IS NULL OR s.run_id = $1) AND (s.run_id, s.idx) > ($2::bigint, $3::bigint)
         ORDER BY s.run_id, s.idx",
        each.join(" INTERSECT ")
    )
}

/// Steps confirmed in order first, before the index is asked (a phrase many steps hold).
const WINDOW: i64 = 256;

/// Terms of a phrase looked up in the index at most; the rest are confirmed with the whole.
const TERMS: usize = 6;

/// The `LIKE` patterns of [`candidates_sql`]: ` term ` for the longest whole terms, ` last` for
/// the last (a prefix).
fn word_likes(pattern: &str) -> Vec<String> {
    let mut terms: Vec<&str> = pattern.split(' ').filter(|t| !t.is_empty()).collect();
    let last = terms.pop().unwrap_or_default();
    terms.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    terms.dedup();
    terms.truncate(TERMS);
    terms
        .iter()
        .map(|t| super::enc(&format!("% {t} %")).into_owned())
        .chain([super::enc(&format!("% {last}%")).into_owned()])
        .collect()
}

/// The head of a long phrase pattern: its first terms, within [`OVERLAP`] bytes.
fn head(pattern: &str) -> &str {
    let mut end = OVERLAP.min(pattern.len());
    while !pattern.is_char_boundary(end) {
        end -= 1;
    }
    match pattern[..end].rfind(' ') {
        Some(i) if i > 0 => &pattern[..i],
        _ => &pattern[..end],
    }
}

/// A chunk's body read from the server 1 MiB at a time (`substring` of an uncompressed TOAST
/// value fetches only the pieces it needs).
struct ChunkReader<'p> {
    pg: &'p Pg,
    chunk_id: i64,
    /// Bytes of the body fetched so far.
    at: i64,
    len: i64,
    piece: Vec<u8>,
    /// Bytes of `piece` already read.
    used: usize,
}

impl Read for ChunkReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const PIECE: i64 = 1 << 20;
        if self.used == self.piece.len() {
            if self.at >= self.len {
                return Ok(0);
            }
            let want = PIECE.min(self.len - self.at);
            self.piece = self
                .pg
                .one(
                    "SELECT substring(body FROM $2::bigint::int FOR $3::bigint::int) FROM text_chunks WHERE id = $1",
                    &[&self.chunk_id, &(self.at + 1), &want],
                )
                .and_then(|r| r.bytes(0))
                .map_err(std::io::Error::other)?;
            self.used = 0;
            self.at = if self.piece.is_empty() { self.len } else { self.at + self.piece.len() as i64 };
        }
        let n = (self.piece.len() - self.used).min(buf.len());
        buf[..n].copy_from_slice(&self.piece[self.used..self.used + n]);
        self.used += n;
        Ok(n)
    }
}
