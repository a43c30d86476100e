//! Writing sources into SQLite (`store::sql::write` orchestrates: a transaction per source, a
//! savepoint of a batch's): a run's history, steps, texts, prompts and edits inserted by prepared
//! statements, step texts compressed in chunks (`store::texts`), messages stored once by their
//! hash. The search index takes a run in a later pass (`search_index.rs`), a document written as
//! it is read in the same transaction.

use super::Sqlite;
use crate::error::StoreError;
use crate::model::{CheckedBy, Edit, Message, QueryMessage, Step};
use crate::store::sql::write_path::{WritePath, Writing};
use crate::store::texts;
use crate::store::write::{SourceWrite, StepsOf, message_hash};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;

impl WritePath for Sqlite {
    fn writing(&self) -> &Writing {
        &self.writing
    }

    /// After every id a run, label, note or classification error names (a deleted run's id would
    /// otherwise be handed out again, and its labels would attach to the new run), and every id
    /// this write is about to give back to a kept run: the transaction is the only writer's.
    fn fresh_run_id(&mut self, w: &mut SourceWrite) -> Result<i64, StoreError> {
        if w.next_run_id == 0 {
            let highest: i64 = self.conn.query_row(
                "SELECT max(coalesce((SELECT max(id) FROM runs), 0), coalesce((SELECT max(run_id) FROM labels), 0),
                            coalesce((SELECT max(run_id) FROM classify_errors), 0),
                            coalesce((SELECT max(run_id) FROM notes), 0))",
                [],
                |r| r.get(0),
            )?;
            w.next_run_id = highest.max(w.old_ids.values().copied().max().unwrap_or(0)) + 1;
        }
        w.next_run_id += 1;
        Ok(w.next_run_id - 1)
    }

    /// A document written as it is read keeps its run's step texts open across its pieces
    /// ([`StepTexts`]) and indexes its steps in the same transaction: the writer's thread is idle
    /// most of the time then, and the texts are in hand (no pass reads them back).
    fn write_rows(&mut self, parts: &[StepsOf<'_>], live: bool) -> Result<(), StoreError> {
        let Sqlite { conn, blob_ids, packer, open_texts, .. } = self;
        for part in parts {
            insert_history(conn, part.run_id, part.history, &mut BlobWriter { tx: conn, cache: blob_ids })?;
            if !part.steps.is_empty() {
                if open_texts.as_ref().is_some_and(|t| t.run_id != part.run_id) {
                    settle(conn, open_texts, packer)?;
                }
                let p = texts::Packer::ready(packer)?;
                let open = open_texts.get_or_insert_with(|| StepTexts::new(part.run_id, p));
                let mut blobs = BlobWriter { tx: conn, cache: blob_ids };
                let ids = insert_steps(conn, part.run_id, part.first, part.steps, &mut blobs, open, p)?;
                if live {
                    super::search_index::index_steps(conn, &ids, part.steps)?;
                } else {
                    settle(conn, open_texts, packer)?;
                    conn.prepare_cached("INSERT OR IGNORE INTO search_pending (run_id) VALUES (?1)")?
                        .execute([part.run_id])?;
                }
            }
            if !part.edits.is_empty() {
                // The edits' texts go through the same packer, after the steps'.
                settle(conn, open_texts, packer)?;
                insert_edits(conn, part.run_id, part.edits, texts::Packer::ready(packer)?)?;
            }
        }
        Ok(())
    }

    fn before_commit(&mut self, _w: &SourceWrite, _part: bool) -> Result<(), StoreError> {
        settle(&self.conn, &mut self.open_texts, &mut self.packer)
    }

    /// The messages known to be stored may be gone with the transaction.
    fn rolled_back(&mut self, _batch: bool) {
        self.open_texts = None;
        self.blob_ids.clear();
    }

    /// A run still waiting for the index has nothing in it: deleting its rowids is a no-op. The
    /// messages known to be stored may go with the source.
    fn drop_source(&mut self, source_id: i64) -> Result<(), StoreError> {
        self.blob_ids.clear();
        self.conn.execute(
            "DELETE FROM steps_fts WHERE rowid IN
             (SELECT s.id FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.source_id = ?1)",
            [source_id],
        )?;
        Ok(())
    }

    /// The steps refer to the run: checked at commit, once all are moved.
    fn rekey_run(&mut self, from: i64, to: i64) -> Result<(), StoreError> {
        settle(&self.conn, &mut self.open_texts, &mut self.packer)?;
        self.conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
        self.conn.execute("UPDATE runs SET id = ?2 WHERE id = ?1", params![from, to])?;
        for table in ["steps", "history", "edits", "text_chunks", "search_pending"] {
            self.conn.execute(&format!("UPDATE {table} SET run_id = ?2 WHERE run_id = ?1"), params![from, to])?;
        }
        Ok(())
    }

    /// Negative `cache_size`: KiB; positive: pages.
    fn limit_pages(&self, kib: i64) -> Result<i64, StoreError> {
        let before: i64 = self.conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        self.conn.pragma_update(None, "cache_size", -kib.max(64))?;
        Ok(if before < 0 { -before } else { before * page / 1024 })
    }
}

/// Write the step texts still on their way into chunks, and their rows.
fn settle(
    conn: &Connection,
    open: &mut Option<StepTexts>,
    packer: &mut Option<texts::Packer>,
) -> Result<(), StoreError> {
    match open.take() {
        Some(texts) => texts.finish(conn, texts::Packer::ready(packer)?),
        None => Ok(()),
    }
}

type BlobCache = HashMap<[u8; 16], i64>;

fn insert_history(
    tx: &Connection,
    run_id: i64,
    history: &[Message],
    blobs: &mut BlobWriter<'_>,
) -> Result<(), StoreError> {
    for (pos, m) in history.iter().enumerate() {
        let blob = blobs.message(m)?;
        tx.prepare_cached("INSERT INTO history (run_id, pos, blob_id) VALUES (?1, ?2, ?3)")?
            .execute(params![run_id, pos as i64, blob])?;
    }
    Ok(())
}

/// Steps of a run, the first of them numbered `first`: their rows, texts (compressed in chunks
/// of these steps, pushed to `texts`: the rows of texts whose chunks are not written yet come
/// with a later call or [`StepTexts::finish`]) and prompt parts. Their ids, in order; the search
/// index is the caller's.
fn insert_steps(
    tx: &Connection,
    run_id: i64,
    first: usize,
    steps: &[Step],
    blobs: &mut BlobWriter<'_>,
    texts: &mut StepTexts,
    packer: &mut texts::Packer,
) -> Result<Vec<i64>, StoreError> {
    let mut step_stmt = tx.prepare_cached(
        "INSERT INTO steps (run_id, idx, tool, flags, obs_chars, action_head, execution_time, tokens_in,
            tokens_out, timestamp, open_file, working_dir, query_keep, says)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    let mut part_stmt = tx.prepare_cached("INSERT INTO query_parts (step_id, pos, blob_id) VALUES (?1, ?2, ?3)")?;
    let mut step_ids = Vec::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        let idx = first + i;
        let head = crate::store::browse::action_head(&s.action);
        step_stmt.execute(params![
            run_id,
            idx as i64,
            s.tool,
            s.flags.bits(),
            s.observation.chars().count() as i64,
            head,
            s.execution_time,
            s.tokens_in,
            s.tokens_out,
            s.timestamp,
            s.open_file,
            s.working_dir,
            s.query.as_ref().map(|q| q.keep as i64),
            crate::store::browse::says(s),
        ])?;
        let step_id = tx.last_insert_rowid();
        step_ids.push(step_id);
        texts.push(tx, packer, step_id, s)?;
        if let Some(q) = &s.query {
            for (i, m) in q.append.iter().enumerate() {
                let blob = blobs.prompt(m)?;
                part_stmt.execute(params![step_id, (q.keep + i) as i64, blob])?;
            }
        }
    }
    texts.rows(tx)?;
    Ok(step_ids)
}

/// A run's step texts on their way into chunks: the packer compresses on its own thread, and a
/// step's row in `step_texts` (which names its chunk) is written once its chunk is. A document
/// written as it is read keeps one open across its pieces, so the writer never waits for the
/// last chunk of a piece, and the chunks are those a whole write makes.
pub(super) struct StepTexts {
    run_id: i64,
    chunks: ChunkWriter,
    /// The step of each record pushed, in push order.
    ids: Vec<i64>,
    /// Records whose rows are written (or need none).
    written: usize,
}

impl StepTexts {
    fn new(run_id: i64, packer: &mut texts::Packer) -> StepTexts {
        StepTexts { run_id, chunks: ChunkWriter::new(run_id, packer), ids: Vec::new(), written: 0 }
    }

    fn push(&mut self, tx: &Connection, packer: &mut texts::Packer, step_id: i64, s: &Step) -> Result<(), StoreError> {
        self.ids.push(step_id);
        if !self.chunks.push(tx, packer, texts::step_fields(s))? {
            insert_plain_texts(tx, step_id, s)?;
        }
        Ok(())
    }

    /// Write the rows of the steps whose chunks are written.
    fn rows(&mut self, tx: &Connection) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO step_texts (step_id, action, thought, observation, chunk_id, chunk_at)
             VALUES (?1, '', '', '', ?2, ?3)",
        )?;
        while let (Some(place), Some(step_id)) = (self.chunks.places.get(self.written), self.ids.get(self.written)) {
            match *place {
                Place::Waiting => break,
                Place::Plain => {}
                Place::At(chunk_id, at) => {
                    stmt.execute(params![step_id, chunk_id, at])?;
                }
            }
            self.written += 1;
        }
        Ok(())
    }

    /// Write the last chunks and every row left.
    fn finish(mut self, tx: &Connection, packer: &mut texts::Packer) -> Result<(), StoreError> {
        self.chunks.finish(tx, packer)?;
        self.rows(tx)
    }
}

/// Edits of a run, in the order given; their bulky texts in chunks of their own
/// (store::texts), after the steps'.
fn insert_edits(tx: &Connection, run_id: i64, edits: &[Edit], packer: &mut texts::Packer) -> Result<(), StoreError> {
    let mut chunks = ChunkWriter::new(run_id, packer);
    let hunks: Vec<Option<String>> = edits.iter().map(texts::hunks_json).collect();
    let mut plain = Vec::with_capacity(edits.len());
    for (e, hunks) in edits.iter().zip(&hunks) {
        plain.push(!chunks.push(tx, packer, texts::edit_fields(e, hunks.as_deref()))?);
    }
    chunks.finish(tx, packer)?;
    let places = chunks.places.into_iter().map(|p| match p {
        Place::At(chunk_id, at) => Some((chunk_id, at)),
        Place::Waiting | Place::Plain => None,
    });
    let mut edit_stmt = tx.prepare_cached(
        "INSERT INTO edits (run_id, step_idx, path, kind, status, old_text, new_text, diff, lint_codes,
                            certainty, command, checked_at, shown, undone_at, hunks, partial, chunk_id, chunk_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?;
    for (((e, hunks), plain), place) in edits.iter().zip(hunks).zip(plain).zip(places) {
        let t = &e.trace;
        let checked_at = t.checked_by.map(CheckedBy::to_column);
        // Plain when the texts do not fit a record; otherwise only in the chunk.
        let own = |text: &Option<String>| if plain { text.clone() } else { None };
        edit_stmt.execute(params![
            run_id,
            e.step.map(|s| s as i64),
            e.path,
            e.kind.name(),
            e.status.name(),
            own(&e.old_text),
            own(&e.new_text),
            own(&e.diff),
            (!e.lint_codes.is_empty()).then(|| e.lint_codes.join(",")),
            t.certainty.map(|c| c.name()),
            t.command,
            checked_at,
            own(&t.shown),
            t.undone_at.map(|s| s as i64),
            own(&hunks),
            t.partial.then_some(1),
            place.map(|p| p.0),
            place.map(|p| p.1),
        ])?;
    }
    Ok(())
}

/// Where a record pushed to the packer is.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// In a chunk not written yet.
    Waiting,
    /// Not in a chunk: it has no text, or its texts do not fit a record (stored plainly).
    Plain,
    /// Chunk id, and byte in the decompressed chunk.
    At(i64, u32),
}

/// Packs a run's step or edit texts into compressed chunks ([`texts::Packer`]), writes the
/// chunks, and says where each record went.
struct ChunkWriter {
    run_id: i64,
    /// Where each record pushed so far is, in push order.
    places: Vec<Place>,
}

impl ChunkWriter {
    fn new(run_id: i64, packer: &mut texts::Packer) -> ChunkWriter {
        packer.clear();
        ChunkWriter { run_id, places: Vec::new() }
    }

    /// Push the next record, and write the chunks compressed meanwhile; false when it does not
    /// fit a record (store it plainly) or has no text at all.
    fn push(
        &mut self,
        tx: &Connection,
        packer: &mut texts::Packer,
        fields: texts::Fields<'_>,
    ) -> Result<bool, StoreError> {
        let index = self.places.len();
        if fields.iter().all(Option::is_none) || !texts::fits(&fields) {
            self.places.push(Place::Plain);
            return Ok(false);
        }
        self.places.push(Place::Waiting);
        for chunk in packer.push(index, fields)? {
            self.write(tx, chunk)?;
        }
        Ok(true)
    }

    /// Write the last chunks.
    fn finish(&mut self, tx: &Connection, packer: &mut texts::Packer) -> Result<(), StoreError> {
        for chunk in packer.finish()? {
            self.write(tx, chunk)?;
        }
        Ok(())
    }

    fn write(&mut self, tx: &Connection, chunk: texts::Chunk) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached("INSERT INTO text_chunks (run_id, body) VALUES (?1, ?2)")?;
        stmt.execute(params![self.run_id, chunk.body])?;
        stmt.clear_bindings();
        let chunk_id = tx.last_insert_rowid();
        for (index, at) in chunk.records {
            let place = self.places.get_mut(index).ok_or_else(|| StoreError::Encode("lost a record".into()))?;
            *place = Place::At(chunk_id, at);
        }
        Ok(())
    }
}

/// A step's texts written plainly (texts too long for a record).
fn insert_plain_texts(tx: &Connection, step_id: i64, s: &Step) -> Result<(), StoreError> {
    // SQLite copies bound text and keeps the copy until the next bind: cleared at once, a huge
    // text is not held twice more while the next insert runs.
    let mut stmt = tx.prepare_cached(
        "INSERT INTO step_texts (step_id, action, thought, observation, response, args)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    stmt.execute(params![step_id, s.action, s.thought, s.observation, s.response, s.args])?;
    stmt.clear_bindings();
    Ok(())
}

/// Content-addressed message storage, the ids of the messages known to be stored at hand.
struct BlobWriter<'t> {
    tx: &'t Connection,
    cache: &'t mut BlobCache,
}

impl BlobWriter<'_> {
    fn message(&mut self, m: &Message) -> Result<i64, StoreError> {
        self.get_or_insert(message_hash(m), || m.clone())
    }

    fn prompt(&mut self, q: &QueryMessage) -> Result<i64, StoreError> {
        self.get_or_insert(q.hash, || Message::from_raw_json(&q.raw))
    }

    fn get_or_insert(&mut self, hash: [u8; 16], make: impl FnOnce() -> Message) -> Result<i64, StoreError> {
        if let Some(id) = self.cache.get(&hash) {
            return Ok(*id);
        }
        let found: Option<i64> = self
            .tx
            .prepare_cached("SELECT id FROM blobs WHERE hash = ?1")?
            .query_row([&hash[..]], |r| r.get(0))
            .optional()?;
        let id = match found {
            Some(id) => id,
            None => {
                let m = make();
                self.tx
                    .prepare_cached("INSERT INTO blobs (hash, role, content, extra) VALUES (?1, ?2, ?3, ?4)")?
                    .execute(params![&hash[..], m.role, m.content, m.extra])?;
                self.tx.last_insert_rowid()
            }
        };
        self.cache.insert(hash, id);
        Ok(id)
    }
}
