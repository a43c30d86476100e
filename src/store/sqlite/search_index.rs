//! The full-text index (`steps_fts`) as data derived from the steps, built after they are
//! written. Writing a run lists it in `search_pending` in the same transaction; this pass reads
//! the texts of the listed runs, adds them to the index and takes them off the list, a batch of
//! runs per transaction. A process that dies midway leaves the runs of its unfinished batch
//! listed, and the next pass indexes them: the index never misses a run silently. Searches bring
//! the index up to date before they read it ([`Search::ensure_search_index`]).
//!
//! Building the index apart from the write lets ingest run at the speed of the write (the index
//! is most of the writer's time on text-heavy formats) and builds the index in large batches,
//! whose segments merge less often than one per file.

use super::Sqlite;
use crate::error::StoreError;
use crate::model::Step;
use crate::sanitize::sanitize;
use crate::store::backend::{IndexStats, Search};
use crate::store::read::{SEARCHED, SearchHit, phrase_words, record_snippet, snippet_of};
use crate::store::texts;
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

/// The user's words as one FTS5 phrase: tokens must appear together, in order, the last one
/// as a prefix (`ZeroDiv` finds `ZeroDivisionError`). Quoting keeps user input from being read
/// as FTS syntax. `None` when there are no words.
fn fts_phrase(phrase: &str) -> Option<String> {
    let terms: Vec<String> = phrase.split_whitespace().map(|t| t.replace('"', "\"\"")).collect();
    (!terms.is_empty()).then(|| format!("\"{}\"*", terms.join(" ")))
}

/// Text indexed per transaction: a writer waiting for the lock waits at most about this long.
const BATCH_BYTES: usize = 32 << 20;

impl Search for Sqlite {
    /// How many runs wait for the search index.
    fn search_pending(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM search_pending", [], |r| r.get(0))?)
    }

    /// [`Search::build_search_index`] that stops between batches once `stop()` is true: the
    /// batches committed stay indexed, the runs not reached stay listed for a later pass.
    fn build_search_index_until(
        &self,
        progress: &mut dyn FnMut(i64, i64),
        stop: &dyn Fn() -> bool,
    ) -> Result<IndexStats, StoreError> {
        self.build_search_index_in(BATCH_BYTES, progress, stop)
    }

    /// An up-to-date search index before a search reads it: runs waiting for it are indexed
    /// here (through [`Search::writer`] when this store was opened read-only). When this database
    /// cannot be written, the waiting runs are indexed into a temporary index of this connection
    /// instead (`temp.pending_fts`, the same tokenizer; rebuilt when the list of waiting runs
    /// changes), which searches read beside `steps_fts` ([`Search::matched_steps`]): a search
    /// never answers from an incomplete index. So too when the index cannot be written (a full
    /// disk): the runs left waiting are indexed in memory for this connection.
    fn ensure_search_index(&self) -> Result<(), StoreError> {
        let runs = self.search_pending()?;
        if runs == 0 {
            self.pending_index.set(false);
            return Ok(());
        }
        if self.write_store().and_then(|writer| writer.build_search_index(&mut |_, _| {})).is_ok() {
            self.pending_index.set(false);
            return Ok(());
        }
        self.index_pending_here()?;
        self.pending_index.set(true);
        Ok(())
    }

    /// Full-text search for a phrase over thoughts, actions and observations. The index is
    /// brought up to date first ([`Search::ensure_search_index`]). The texts are read a piece at
    /// a time (SQLite's incremental blob I/O, through the decompressor for compressed texts)
    /// until the phrase is found, so a 500 MB observation is never loaded whole: memory stays at
    /// a few megabytes.
    fn search(&self, phrase: &str, run: Option<i64>, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
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
        let words = phrase_words(phrase);
        let mut hits = Vec::with_capacity(rows.len());
        for (step_id, run_id, instance_id, step) in rows {
            let (field, snippet) = self.step_snippet(step_id, &words)?.unwrap_or(("observation", String::new()));
            hits.push(SearchHit { run_id, instance_id, step, field, snippet });
        }
        Ok(hits)
    }

    /// Steps of one run whose thought, action or observation contain the phrase.
    fn search_run(&self, run_id: i64, phrase: &str) -> Result<Vec<i64>, StoreError> {
        let Some(fts_query) = fts_phrase(phrase) else { return Ok(Vec::new()) };
        self.ensure_search_index()?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.idx FROM {} JOIN steps s ON s.id = m.step_id WHERE s.run_id = ?2 ORDER BY s.idx",
            self.matched_steps()
        ))?;
        let rows = stmt.query_map(params![fts_query, run_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Sqlite {
    /// [`Search::build_search_index_until`] with transactions of about `batch_bytes` of text.
    pub(super) fn build_search_index_in(
        &self,
        batch_bytes: usize,
        progress: &mut dyn FnMut(i64, i64),
        stop: &dyn Fn() -> bool,
    ) -> Result<IndexStats, StoreError> {
        let total = self.search_pending()?;
        let mut stats = IndexStats::default();
        if total == 0 {
            return Ok(stats);
        }
        if !self.conn.is_autocommit() {
            return Err(StoreError::Encode("the search index is built outside other writes".into()));
        }
        loop {
            if stop() {
                return Ok(stats);
            }
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            let batch = index_batch(&self.conn, batch_bytes, &mut stats).and_then(|more| {
                self.conn.execute_batch("COMMIT")?;
                Ok(more)
            });
            match batch {
                Ok(more) => {
                    progress(stats.runs.min(total), total);
                    if !more {
                        return Ok(stats);
                    }
                }
                Err(e) => {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    return Err(e);
                }
            }
        }
    }

    /// The steps whose texts match the FTS5 query bound as `?1`, as a table `m(step_id)` for a
    /// search's FROM clause: the search index, and the temporary index of runs waiting for it
    /// when [`Search::ensure_search_index`] built one.
    fn matched_steps(&self) -> &'static str {
        if self.pending_index.get() {
            "(SELECT rowid AS step_id FROM main.steps_fts WHERE steps_fts MATCH ?1
              UNION SELECT rowid FROM temp.pending_fts WHERE pending_fts MATCH ?1) m"
        } else {
            "(SELECT rowid AS step_id FROM main.steps_fts WHERE steps_fts MATCH ?1) m"
        }
    }

    /// Index the runs waiting for the search index into this connection's temporary index,
    /// unless it was built since the database last changed (`PRAGMA data_version`: another
    /// connection's commit, such as a re-ingest, changes it). Only the temporary database is
    /// written: this works on a store opened read-only.
    fn index_pending_here(&self) -> Result<(), StoreError> {
        let conn = &self.conn;
        let version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        if self.pending_index.get() && self.pending_version.get() == Some(version) {
            return Ok(());
        }
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pending_fts USING fts5(
                 thought, action, observation, content = '', tokenize = 'unicode61');",
        )?;
        conn.execute_batch("BEGIN")?;
        let built = (|| -> Result<(), StoreError> {
            conn.execute_batch("INSERT INTO temp.pending_fts (pending_fts) VALUES ('delete-all')")?;
            let ids: Vec<i64> = conn
                .prepare("SELECT run_id FROM main.search_pending ORDER BY run_id")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let mut stats = IndexStats::default();
            for run_id in ids {
                index_run(conn, run_id, "temp.pending_fts", &mut stats)?;
            }
            conn.execute_batch("COMMIT")?;
            Ok(())
        })();
        if built.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        built?;
        self.pending_version.set(Some(version));
        Ok(())
    }

    /// The first of a step's thought, action and observation holding `words`, with its snippet.
    fn step_snippet(&self, step_id: i64, words: &[&str]) -> Result<Option<(&'static str, String)>, StoreError> {
        let (chunk_id, at): (Option<i64>, Option<i64>) =
            self.conn.query_row("SELECT chunk_id, chunk_at FROM step_texts WHERE step_id = ?1", [step_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let Some(chunk_id) = chunk_id else {
            for (field, column) in SEARCHED {
                let blob = self.conn.blob_open(rusqlite::MAIN_DB, c"step_texts", column, step_id, true)?;
                let len = blob.len() as u64;
                if let Some(snippet) = snippet_of(blob, len, words)? {
                    return Ok(Some((field, snippet)));
                }
            }
            return Ok(None);
        };
        let blob = self.conn.blob_open(rusqlite::MAIN_DB, c"text_chunks", c"body", chunk_id, true)?;
        let at = u64::try_from(at.unwrap_or(0)).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        record_snippet(texts::open_record(blob, at)?, words)
    }
}

/// Add steps just written to the index, in the transaction that wrote them (their run is not
/// listed as waiting): the texts as [`Searched::of`] gives them, without reading them back.
pub(super) fn index_steps(conn: &Connection, ids: &[i64], steps: &[Step]) -> Result<(), StoreError> {
    let mut insert = conn
        .prepare_cached("INSERT INTO main.steps_fts (rowid, thought, action, observation) VALUES (?1, ?2, ?3, ?4)")?;
    for (id, s) in ids.iter().zip(steps) {
        let [thought, action, observation] = [&s.thought, &s.action, &s.observation].map(|t| sanitize(t));
        insert.execute(params![id, thought.as_ref(), action.as_ref(), observation.as_ref()])?;
    }
    Ok(())
}

/// Index pending runs, in the order of their steps' ids (the index appends fastest in rowid
/// order), until about `batch_bytes` of text; whether runs remain.
fn index_batch(conn: &Connection, batch_bytes: usize, stats: &mut IndexStats) -> Result<bool, StoreError> {
    let mut runs = conn.prepare_cached(
        "SELECT p.run_id FROM search_pending p
         ORDER BY (SELECT min(s.id) FROM steps s WHERE s.run_id = p.run_id), p.run_id LIMIT 256",
    )?;
    let ids: Vec<i64> = runs.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut bytes = 0usize;
    for (n, run_id) in ids.iter().enumerate() {
        bytes += index_run(conn, *run_id, "main.steps_fts", stats)?;
        conn.prepare_cached("DELETE FROM search_pending WHERE run_id = ?1")?.execute([run_id])?;
        stats.runs += 1;
        if bytes >= batch_bytes {
            return Ok(n + 1 < ids.len() || more_pending(conn)?);
        }
    }
    more_pending(conn)
}

fn more_pending(conn: &Connection) -> Result<bool, StoreError> {
    Ok(conn.query_row("SELECT EXISTS (SELECT 1 FROM search_pending)", [], |r| r.get(0))?)
}

/// Add one run's steps to `index` (`main.steps_fts`, or a temporary index of the same columns);
/// the bytes of text read. The chunks are decompressed and their texts sanitized on a helper
/// thread, a few chunks ahead of the inserts (FTS5's own work, on this connection's thread).
fn index_run(conn: &Connection, run_id: i64, index: &str, stats: &mut IndexStats) -> Result<usize, StoreError> {
    let mut steps = conn.prepare_cached(
        "SELECT s.id, t.thought, t.action, t.observation, t.chunk_id, t.chunk_at
         FROM main.steps s JOIN main.step_texts t ON t.step_id = s.id WHERE s.run_id = ?1 ORDER BY s.id",
    )?;
    let mut insert = Inserts {
        stmt: conn.prepare_cached(&format!(
            "INSERT INTO {index} (rowid, thought, action, observation) VALUES (?1, ?2, ?3, ?4)"
        ))?,
        bytes: 0,
        steps: 0,
    };
    let mut rows = steps.query([run_id])?;
    // A short run is read on this thread: a thread per run would cost more than it saves.
    let long: bool = conn
        .prepare_cached("SELECT step_count >= ?2 FROM main.runs WHERE id = ?1")?
        .query_row(params![run_id, LONG_RUN], |r| r.get(0))
        .optional()?
        .unwrap_or(false);
    std::thread::scope(|scope| -> Result<(), StoreError> {
        let helper = long.then(|| {
            let (work, queued) = sync_channel::<Chunked>(AHEAD);
            let (unpacked, done) = channel::<Unpacked>();
            scope.spawn(move || {
                for chunk in queued {
                    if unpacked.send(chunk.unpack()).is_err() {
                        return;
                    }
                }
            });
            (work, done)
        });
        let mut ahead = Ahead { conn, helper, in_flight: 0 };
        let mut gathering: Option<Chunked> = None;
        while let Some(r) = rows.next()? {
            let step_id: i64 = r.get(0)?;
            match (r.get::<_, Option<i64>>(4)?, r.get::<_, Option<i64>>(5)?) {
                (Some(chunk_id), Some(at)) => {
                    if gathering.as_ref().is_some_and(|g| g.chunk_id != chunk_id)
                        && let Some(full) = gathering.take()
                    {
                        ahead.send(full, &mut insert)?;
                    }
                    let g =
                        gathering.get_or_insert_with(|| Chunked { chunk_id, body: Vec::new(), records: Vec::new() });
                    g.records.push((step_id, u64::try_from(at).map_err(|e| StoreError::Corrupt(e.to_string()))?));
                }
                _ => {
                    // A row written before chunks: its texts in its own columns, inserted in
                    // step order after the chunks before it.
                    if let Some(full) = gathering.take() {
                        ahead.send(full, &mut insert)?;
                    }
                    ahead.drain(&mut insert)?;
                    let texts: [String; 3] = [r.get(1)?, r.get(2)?, r.get(3)?];
                    insert.add(Searched::of(step_id, texts))?;
                }
            }
        }
        if let Some(full) = gathering.take() {
            ahead.send(full, &mut insert)?;
        }
        ahead.drain(&mut insert)
    })?;
    let Inserts { bytes, steps, .. } = insert;
    stats.steps += steps as i64;
    stats.bytes += bytes as u64;
    Ok(bytes)
}

/// Runs of at least this many steps are read on a helper thread.
const LONG_RUN: i64 = 256;

fn ended() -> StoreError {
    StoreError::Encode("the search index's reader has ended".into())
}

/// Chunks sent to the helper before the oldest is inserted: the helper decompresses the next
/// while FTS5 takes the last.
const AHEAD: usize = 2;

/// A compressed chunk larger than this (a chunk of about [`texts::CHUNK`] bytes compresses to
/// less) is decompressed and inserted before the next is read.
const ALONE: usize = 1 << 20;

/// A chunk's steps as the helper hands them back.
type Unpacked = Result<Vec<Searched>, StoreError>;

/// The steps of one chunk, before it is read: the chunk, and where each step's record starts.
struct Chunked {
    chunk_id: i64,
    /// Compressed; read when the chunk is sent.
    body: Vec<u8>,
    records: Vec<(i64, u64)>,
}

impl Chunked {
    /// Each step's searched texts as the reviewer sees them.
    fn unpack(self) -> Result<Vec<Searched>, StoreError> {
        let raw = texts::unpack(&self.body)?;
        self.records.into_iter().map(|(step_id, at)| Ok(Searched::of(step_id, texts::searched(&raw, at)?))).collect()
    }
}

/// A step's thought, action and observation, sanitized: what the reviewer sees (escape sequences
/// removed, so a word after a colour code is found); with the bytes of text it was read from.
struct Searched {
    step_id: i64,
    texts: [String; 3],
    read: usize,
}

impl Searched {
    fn of(step_id: i64, texts: [String; 3]) -> Searched {
        let read = texts.iter().map(String::len).sum();
        let texts = texts.map(|t| {
            let clean = match sanitize(&t) {
                std::borrow::Cow::Owned(clean) => Some(clean),
                std::borrow::Cow::Borrowed(_) => None,
            };
            clean.unwrap_or(t)
        });
        Searched { step_id, texts, read }
    }
}

/// The index's insert, and what it took.
struct Inserts<'c> {
    stmt: rusqlite::CachedStatement<'c>,
    bytes: usize,
    steps: usize,
}

impl Inserts<'_> {
    fn add(&mut self, s: Searched) -> Result<(), StoreError> {
        let [thought, action, observation] = &s.texts;
        self.stmt.execute(params![s.step_id, thought, action, observation])?;
        self.stmt.clear_bindings();
        self.bytes += s.read;
        self.steps += 1;
        Ok(())
    }
}

/// The chunks on their way through the helper, in order.
struct Ahead<'c> {
    conn: &'c Connection,
    /// The helper's queue and answers; `None`: chunks are read on this thread.
    helper: Option<(SyncSender<Chunked>, Receiver<Unpacked>)>,
    in_flight: usize,
}

impl Ahead<'_> {
    /// Read a chunk and send it to the helper; insert the oldest chunk's steps once more than
    /// [`AHEAD`] are on their way.
    fn send(&mut self, mut chunk: Chunked, insert: &mut Inserts<'_>) -> Result<(), StoreError> {
        chunk.body = texts::Chunks::chunk(self.conn, chunk.chunk_id)?;
        // A chunk of one huge text goes alone: memory holds one of those at a time, as before.
        let alone = chunk.body.len() > ALONE;
        if alone {
            self.drain(insert)?;
        }
        let Some((work, _)) = &self.helper else {
            return chunk.unpack()?.into_iter().try_for_each(|s| insert.add(s));
        };
        work.send(chunk).map_err(|_| ended())?;
        self.in_flight += 1;
        let most = if alone { 0 } else { AHEAD };
        while self.in_flight > most {
            self.insert_next(insert)?;
        }
        Ok(())
    }

    /// Insert every chunk on its way.
    fn drain(&mut self, insert: &mut Inserts<'_>) -> Result<(), StoreError> {
        while self.in_flight > 0 {
            self.insert_next(insert)?;
        }
        Ok(())
    }

    fn insert_next(&mut self, insert: &mut Inserts<'_>) -> Result<(), StoreError> {
        let (_, done) = self.helper.as_ref().ok_or_else(ended)?;
        let steps = done.recv().map_err(|_| ended())?;
        self.in_flight -= 1;
        for s in steps? {
            insert.add(s)?;
        }
        Ok(())
    }
}
