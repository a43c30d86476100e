//! Search in PostgreSQL, giving what SQLite's FTS5 gives. PostgreSQL's own text search splits
//! words otherwise (`__init__.py`, `2.0`, `line 1` and positions past 16,383 come out
//! differently), so a step's terms are stored as SQLite's tokenizer makes them
//! (`store::terms::document`, in `step_terms`, written with the step), and its keys in
//! `step_lexemes` under a GIN index: its distinct terms and pairs of neighbouring terms
//! (`term_rows::keys`). A phrase is ` t1 t2 t3` in the terms (the last term a prefix): a phrase
//! of one term is the prefix `t1:*` of a term key, one of two terms the prefix ` t1 t2:*` of a
//! pair key, so the index alone answers them, in step order, stopping at the limit (the planner
//! walks the steps in order when its statistics say the key is common). A longer phrase's
//! candidates are the steps holding all its pairs, confirmed with `LIKE` on their terms; one
//! longer than the pieces' overlap by its head, then in Rust on its whole terms.

use super::term_rows::{OVERLAP, cut, quote_into};
use super::{Cells, Pg};
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::backend::Search;
use crate::store::read::{SEARCHED, SearchHit, phrase_words, record_snippet, snippet_of};
use crate::store::sql::Sql;
use crate::store::terms;
use crate::store::texts;
use std::collections::HashMap;
use std::io::Read;

/// Terms are written with their steps: nothing ever waits for the index (`Search`'s provided
/// methods say so).
impl Search for Pg {
    fn search(&self, phrase: &str, run: Option<i64>, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let words = phrase_words(phrase);
        let found = self.matches(phrase, run, Some(limit))?;
        let ids: Vec<i64> = found.iter().map(|m| m.step_id).collect();
        let mut snippets = self.snippets(&ids, &words)?;
        Ok(found
            .into_iter()
            .map(|m| {
                let (field, snippet) = snippets.remove(&m.step_id).unwrap_or(("observation", String::new()));
                SearchHit { run_id: m.run_id, instance_id: m.instance_id, step: m.idx, field, snippet }
            })
            .collect())
    }

    fn search_run(&self, run_id: i64, phrase: &str) -> Result<Vec<i64>, StoreError> {
        Ok(self.matches(phrase, Some(run_id), None)?.into_iter().map(|m| m.idx).collect())
    }

    /// `ANALYZE` of the tables a search reads (a role that does not own them is warned by the
    /// server and skipped, not refused), and the keys' index's pending list merged.
    fn after_ingest(&self) -> Result<(), StoreError> {
        self.run("ANALYZE runs, steps, step_lexemes, step_terms")?;
        // The keys' index's pending list merged into the index (else every search reads it
        // through, until autovacuum merges it). Only a speed-up: a role that may not leaves it.
        let _ = self.run("SELECT gin_clean_pending_list('step_lexemes_keys'::regclass)");
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

/// The steps whose keys hold the query, of one run or all, after a (run, step), in step order,
/// at most a number. Parameters: the run or NULL, the query, the run and step after which to
/// start, the number or NULL.
const CANDIDATES: &str = "SELECT s.id, s.run_id, s.idx FROM steps s
     WHERE ($1::bigint IS NULL OR s.run_id = $1) AND (s.run_id, s.idx) > ($3::bigint, $4::bigint)
       AND EXISTS (SELECT 1 FROM step_lexemes l WHERE l.step_id = s.id AND l.lexemes @@ $2::text::tsquery)
     ORDER BY s.run_id, s.idx LIMIT $5";

/// [`CANDIDATES`] with the steps of `$6` too (steps whose keys are in several rows).
const CANDIDATES_OR: &str = "SELECT s.id, s.run_id, s.idx FROM steps s
     WHERE ($1::bigint IS NULL OR s.run_id = $1) AND (s.run_id, s.idx) > ($3::bigint, $4::bigint)
       AND (EXISTS (SELECT 1 FROM step_lexemes l WHERE l.step_id = s.id AND l.lexemes @@ $2::text::tsquery)
            OR s.id = ANY($6))
     ORDER BY s.run_id, s.idx LIMIT $5";

/// Steps whose keys are in several rows and hold every key of `$1` (each a `tsquery`), in one
/// row or another.
const SPLIT: &str = "SELECT DISTINCT x.step_id FROM step_lexemes x WHERE x.piece > 0 AND NOT EXISTS (
         SELECT 1 FROM unnest($1::text[]) k WHERE NOT EXISTS (
             SELECT 1 FROM step_lexemes l WHERE l.step_id = x.step_id AND l.lexemes @@ k::tsquery))";

impl Pg {
    /// The steps holding the phrase (of one run, or all), in run and step order, at most `limit`.
    ///
    /// The candidates (steps whose keys hold the phrase's: [`Query`]) are read in step order a
    /// page at a time; when the keys are exact they are the answer, else each page is confirmed
    /// on the steps' terms until the limit is reached.
    fn matches(&self, phrase: &str, run: Option<i64>, limit: Option<usize>) -> Result<Vec<Match>, StoreError> {
        let Some(pattern) = terms::phrase(phrase) else { return Ok(Vec::new()) };
        let pattern = super::enc(&pattern).into_owned();
        let query = Query::of(&pattern);
        let tsquery = query.keys.join(" & ");
        let split: Vec<i64> =
            self.rows_once(SPLIT, &[&query.keys])?.iter().map(|r| r.int(0)).collect::<Result<_, _>>()?;
        // A phrase up to the overlap of the pieces is inside one piece: LIKE confirms it. A
        // longer one: steps holding its head, confirmed on their whole terms.
        let fits = pattern.len() <= OVERLAP;
        let like = format!("%{}%", if fits { pattern.as_str() } else { head(&pattern) });
        let limit = limit.map(|l| l as i64);
        let mut found: Vec<Step> = Vec::new();
        let (mut after, mut page) = ((i64::MIN, i64::MIN), 64);
        loop {
            let want = match limit {
                Some(l) if query.exact => Some(l - found.len() as i64),
                Some(_) => Some(page),
                None => None,
            };
            let params: [&(dyn postgres::types::ToSql + Sync); 6] = [&run, &tsquery, &after.0, &after.1, &want, &split];
            let sql = if split.is_empty() { CANDIDATES } else { CANDIDATES_OR };
            let cands = self
                .rows_once(sql, &params[..if split.is_empty() { 5 } else { 6 }])?
                .iter()
                .map(|r| Ok(Step { id: r.int(0)?, run_id: r.int(1)?, idx: r.int(2)? }))
                .collect::<Result<Vec<_>, StoreError>>()?;
            if let Some(last) = cands.last() {
                after = (last.run_id, last.idx);
            }
            let read = cands.len() as i64;
            if query.exact {
                found.extend(cands);
            } else {
                self.confirm(cands, &like, if fits { None } else { Some(pattern.as_str()) }, &mut found)?;
            }
            let enough = limit.is_some_and(|l| found.len() as i64 >= l);
            if enough || want.is_none_or(|w| read < w) {
                break;
            }
            page = (page * 4).min(16_384);
        }
        if let Some(l) = limit {
            found.truncate(l as usize);
        }
        self.named(found)
    }

    /// The candidates holding the phrase, kept in `found`: those whose terms are `LIKE` it, and
    /// when `whole` is given (a phrase longer than the pieces' overlap), hold it made again.
    fn confirm(
        &self,
        cands: Vec<Step>,
        like: &str,
        whole: Option<&str>,
        found: &mut Vec<Step>,
    ) -> Result<(), StoreError> {
        for part in cands.chunks(1024) {
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
                if held.contains(&m.id) && whole.map_or(Ok(true), |p| self.holds(m.id, p))? {
                    found.push(*m);
                }
            }
        }
        Ok(())
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

    /// Each step's first of thought, action and observation holding `words`, with its snippet:
    /// the steps' texts read with one query, their chunks up to [`SMALL_CHUNK`] bytes with
    /// another (each once, however many of the steps it holds), a larger chunk from the server a
    /// piece at a time. Steps holding none of the words have none.
    fn snippets(&self, ids: &[i64], words: &[&str]) -> Result<HashMap<i64, (&'static str, String)>, StoreError> {
        let rows = self.rows(
            "SELECT t.step_id, t.chunk_id, t.chunk_at, length(c.body)::bigint, t.thought, t.action, t.observation
             FROM step_texts t LEFT JOIN text_chunks c ON c.id = t.chunk_id WHERE t.step_id = ANY($1)",
            &[&ids],
        )?;
        let mut small = Vec::new();
        for r in &rows {
            if let (Some(chunk), Some(len)) = (r.opt_int(1)?, r.opt_int(3)?)
                && len <= SMALL_CHUNK
            {
                small.push(chunk);
            }
        }
        small.sort_unstable();
        small.dedup();
        let bodies: HashMap<i64, Vec<u8>> = self
            .rows("SELECT id, body FROM text_chunks WHERE id = ANY($1)", &[&small])?
            .iter()
            .map(|r| Ok((r.int(0)?, r.bytes(1)?)))
            .collect::<Result<_, StoreError>>()?;
        let mut out = HashMap::new();
        for r in &rows {
            let found = match r.opt_int(1)? {
                None => inline_snippet(r, words)?,
                Some(chunk_id) => {
                    let at = u64::try_from(r.int(2)?).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                    match bodies.get(&chunk_id) {
                        Some(body) => record_snippet(texts::open_record(body.as_slice(), at)?, words)?,
                        None => {
                            let len = r.opt_int(3)?.unwrap_or(0);
                            let body = ChunkReader { pg: self, chunk_id, at: 0, len, piece: Vec::new(), used: 0 };
                            record_snippet(texts::open_record(body, at)?, words)?
                        }
                    }
                }
            };
            if let Some(found) = found {
                out.insert(r.int(0)?, found);
            }
        }
        Ok(out)
    }
}

/// The snippet of a step whose texts are in its row (columns 4 to 6 of [`Pg::snippets`]).
fn inline_snippet(r: &postgres::Row, words: &[&str]) -> Result<Option<(&'static str, String)>, StoreError> {
    for (i, (field, _)) in SEARCHED.into_iter().enumerate() {
        let text = r.text(4 + i)?;
        if let Some(snippet) = snippet_of(text.as_bytes(), text.len() as u64, words)? {
            return Ok(Some((field, snippet)));
        }
    }
    Ok(None)
}

/// A chunk up to this many bytes (compressed) is read whole for the snippets of a search.
const SMALL_CHUNK: i64 = 4 << 20;

/// A phrase's keys (each `tsquery` text) and whether they are exact: a step whose keys hold
/// them all holds the phrase.
struct Query {
    keys: Vec<String>,
    exact: bool,
}

/// Pairs of a phrase looked up in the index at most; the rest are confirmed with the whole.
const PAIRS: usize = 8;

impl Query {
    /// The keys of a phrase pattern (` t1 t2 t3`, as stored): its one term as a prefix, or its
    /// pairs of neighbouring terms, the last a prefix (at most [`PAIRS`]: the last and the longest
    /// others). A key longer than `KEY_CHARS` is looked for cut, as stored, whole: the steps
    /// holding the phrase are among those found, but so may be others.
    fn of(pattern: &str) -> Query {
        // Each term's start, after its space.
        let starts: Vec<usize> = pattern.match_indices(' ').map(|(i, _)| i + 1).collect();
        let key = |text: &str, prefix: bool| {
            let whole = cut(text).len() == text.len();
            let mut q = String::new();
            quote_into(&mut q, cut(text));
            if prefix && whole {
                q.push_str(":*");
            }
            (q, whole)
        };
        if starts.len() == 1 {
            let (q, whole) = key(&pattern[1..], true);
            return Query { keys: vec![q], exact: whole };
        }
        let ends = starts.iter().skip(1).map(|&s| s - 1).chain([pattern.len()]);
        let terms: Vec<(usize, usize)> = starts.iter().copied().zip(ends).collect();
        let mut pairs: Vec<&str> = terms.windows(2).map(|w| &pattern[w[0].0 - 1..w[1].1]).collect();
        let last = pairs.pop().unwrap_or_default();
        pairs.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        pairs.dedup();
        let exact = pairs.is_empty();
        pairs.truncate(PAIRS - 1);
        let (q, whole) = key(last, true);
        let mut keys: Vec<String> = pairs.into_iter().map(|p| key(p, false).0).collect();
        keys.push(q);
        Query { keys, exact: exact && whole }
    }
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
