//! Writing one source: its runs, steps, edits, prompts, outcomes, predictions and tasks, in one
//! transaction. A source seen before is replaced whole; an unchanged one is left alone.

use super::Sqlite;
use crate::error::StoreError;
use crate::model::{CheckedBy, Edit, Message, Parsed, QueryMessage, Run, Step};
use crate::store::backend::Writes;
use crate::store::sql::write;
use crate::store::texts;
use crate::store::write::{RunCounts, SourceRecord, SourceWrite, WriteStats, message_hash, run_key};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;

impl Writes for Sqlite {
    fn source_hashes(&self) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        write::source_hashes(self)
    }

    fn source_warnings(&self, path: &str) -> Result<Vec<String>, StoreError> {
        write::source_warnings(self, path)
    }

    /// Start writing a source: one IMMEDIATE transaction until [`Store::commit_source`] or
    /// [`Store::rollback_source`]. A source seen before has its old contents removed here, inside
    /// the transaction, so readers see either the old or the new version. Inside a batch
    /// ([`Store::begin_batch`]) the source is a savepoint of the batch's transaction instead.
    fn begin_source(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
        self.conn.execute_batch(if self.batch { "SAVEPOINT source" } else { "BEGIN IMMEDIATE" })?;
        let begun = self.begin_inner(src);
        if begun.is_err() {
            self.rollback_source();
        }
        begun
    }

    /// Add parsed content to an open source write. On error the caller rolls back.
    fn append(&mut self, w: &mut SourceWrite, parsed: &Parsed) -> Result<(), StoreError> {
        for run in &parsed.runs {
            let id = match w.old_ids.get(&run_key(run)) {
                Some(&kept) => kept,
                None => {
                    w.next_run_id += 1;
                    w.next_run_id - 1
                }
            };
            crate::store::sql::live::insert_run_row(
                &*self,
                w.source_id,
                id,
                run,
                RunCounts::of(run.steps.len(), &run.edits),
            )?;
            let packer = texts::Packer::ready(&mut self.packer)?;
            let target = RunWrite { id, committed: &self.blob_ids, new_blobs: &mut w.new_blobs, packer };
            insert_run(&self.conn, run, target)?;
            w.instances.insert(run.instance_id.clone());
            w.stats.runs += 1;
            w.stats.steps += run.steps.len();
        }
        write::append_evaluations(self, w, parsed)
    }

    /// Join the touched instances, record the warnings, commit.
    fn commit_source(&mut self, w: SourceWrite) -> Result<WriteStats, StoreError> {
        let finish = || -> Result<(), StoreError> {
            write::settle_source(self, &w, self.parted == Some(w.source_id))?;
            self.conn.execute_batch(if self.batch { "RELEASE source" } else { "COMMIT" })?;
            Ok(())
        };
        if let Err(e) = finish() {
            self.rollback_source();
            return Err(e);
        }
        self.parted = None;
        self.blob_ids.extend(w.new_blobs);
        Ok(w.stats)
    }

    /// Commit what a source write (not in a batch) holds so far and go on in a new
    /// transaction: a streamed file of a gigabyte seen for the first time is written in parts,
    /// each seen by other readers once committed, instead of one transaction they see nothing
    /// of until it ends. Until [`Writes::commit_source`] the source's hash is a placeholder, so a
    /// write that never ends (a killed process) is redone by the next ingest; one that fails is
    /// removed whole by [`Writes::rollback_source`]. A source stored before is not written in
    /// parts: its old version stays until the new one commits, in one switch.
    fn commit_part(&mut self, w: &mut SourceWrite) -> Result<(), StoreError> {
        // A source stored before is replaced in one transaction: until the new version commits,
        // readers see the old one, and a write that fails leaves it as it was.
        if self.batch || w.stats.replaced {
            return Ok(());
        }
        if self.parted.is_none() {
            self.conn.execute("UPDATE sources SET hash = x'' WHERE id = ?1", [w.source_id])?;
            self.parted = Some(w.source_id);
        }
        self.conn.execute_batch("COMMIT")?;
        self.blob_ids.extend(w.new_blobs.drain(..));
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    }

    /// Abandon an open source write: nothing of it is kept (inside a batch, the sources
    /// committed to the batch before it are kept).
    fn rollback_source(&mut self) {
        self.open_texts = None;
        if !self.conn.is_autocommit() {
            let undo = if self.batch { "ROLLBACK TO source; RELEASE source" } else { "ROLLBACK" };
            if self.conn.execute_batch(undo).is_err() && !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
        }
        self.blob_ids.clear();
        // Parts committed before ([`Store::commit_part`]): removed with their source. Should that
        // fail, the placeholder hash has the next ingest write the file again.
        if let Some(id) = self.parted.take() {
            let remove = || -> Result<(), StoreError> {
                self.conn.execute_batch("BEGIN IMMEDIATE")?;
                delete_contents(&self.conn, id)?;
                self.conn.execute("DELETE FROM sources WHERE id = ?1", [id])?;
                self.conn.execute_batch("COMMIT")?;
                Ok(())
            };
            if remove().is_err() && !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
        }
    }

    /// Gather the sources written from here to [`Store::commit_batch`] into one transaction:
    /// each source is a savepoint, rolled back alone when it fails, and the batch is committed
    /// once (a commit per source costs the writer about a fifth of its time on small files).
    /// Nothing of the batch is durable, or seen by other connections, before it commits.
    fn begin_batch(&mut self) -> Result<(), StoreError> {
        if !self.batch {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.batch = true;
        }
        Ok(())
    }

    /// Whether a batch is open.
    fn in_batch(&self) -> bool {
        self.batch
    }

    /// Commit the open batch (nothing when none is open). On error nothing of the batch is kept.
    fn commit_batch(&mut self) -> Result<(), StoreError> {
        if !self.batch {
            return Ok(());
        }
        self.batch = false;
        // SQLite rolls a whole transaction back on some errors (a full disk): the sources
        // committed to the batch are gone with it.
        if self.conn.is_autocommit() {
            self.blob_ids.clear();
            return Err(StoreError::BatchRolledBack("an error in one of its files rolled the transaction back".into()));
        }
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            if !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
            self.blob_ids.clear();
            return Err(e.into());
        }
        Ok(())
    }

    /// The size and hash a source was stored with, if it was.
    fn source_fingerprint(&self, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        write::source_fingerprint(self, path)
    }

    fn runs_of_sources(&self, paths: &[String]) -> Result<Vec<i64>, StoreError> {
        write::runs_of_sources(self, paths)
    }

    /// Remove a source and everything it contributed; the instances it touched are joined
    /// again. False when there is no such source.
    fn remove_source(&mut self, path: &str) -> Result<bool, StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let removed = (|| -> Result<bool, StoreError> {
            let id: Option<i64> =
                self.conn.query_row("SELECT id FROM sources WHERE path = ?1", [path], |r| r.get(0)).optional()?;
            let Some(id) = id else { return Ok(false) };
            let instances = write::instances_of_source(self, id)?;
            delete_contents(&self.conn, id)?;
            self.conn.execute("DELETE FROM sources WHERE id = ?1", [id])?;
            for instance in &instances {
                crate::store::sql::link::relink_instance(self, instance)?;
            }
            Ok(true)
        })();
        self.blob_ids.clear();
        match removed {
            Ok(found) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(found)
            }
            Err(e) => {
                self.rollback_source();
                Err(e)
            }
        }
    }
}

impl Sqlite {
    fn begin_inner(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
        let conn = &self.conn;
        let existing: Option<i64> =
            conn.query_row("SELECT id FROM sources WHERE path = ?1", [src.path], |r| r.get(0)).optional()?;
        let mut w = SourceWrite { hash: src.hash.to_vec(), ..SourceWrite::default() };
        w.source_id = match existing {
            Some(id) => {
                w.instances.extend(write::instances_of_source(self, id)?);
                // Runs keep their ids across a replace when they are the same run (same place in
                // the source, instance and attempt), so what refers to them stays attached.
                let mut stmt =
                    conn.prepare("SELECT position, instance_id, attempt, id FROM runs WHERE source_id = ?1")?;
                let rows = stmt.query_map([id], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?)))?;
                for row in rows {
                    let (key, run_id) = row?;
                    w.old_ids.insert(key, run_id);
                }
                drop(stmt);
                delete_contents(conn, id)?;
                self.blob_ids.clear();
                conn.execute(
                    "UPDATE sources SET kind = ?2, format = ?3, size = ?4, hash = ?5, warnings = NULL,
                     ingested_at = datetime('now') WHERE id = ?1",
                    params![id, src.kind, src.format, src.size as i64, &src.hash[..]],
                )?;
                w.stats.replaced = true;
                id
            }
            None => {
                conn.execute(
                    "INSERT INTO sources (path, kind, format, size, hash, warnings, ingested_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, NULL, datetime('now'))",
                    params![src.path, src.kind, src.format, src.size as i64, &src.hash[..]],
                )?;
                conn.last_insert_rowid()
            }
        };
        // A new run never takes an id a label, note or classification error names (a deleted run's
        // id would otherwise be handed out again, and its labels would attach to the new run),
        // nor an id this write is about to give back to a kept run.
        let highest: i64 = conn.query_row(
            "SELECT max(coalesce((SELECT max(id) FROM runs), 0), coalesce((SELECT max(run_id) FROM labels), 0),
                        coalesce((SELECT max(run_id) FROM classify_errors), 0),
                        coalesce((SELECT max(run_id) FROM notes), 0))",
            [],
            |r| r.get(0),
        )?;
        w.next_run_id = highest.max(w.old_ids.values().copied().max().unwrap_or(0)) + 1;
        Ok(w)
    }
}

/// Remove everything a source contributed, the full-text entries and any blobs no longer used.
pub(super) fn delete_contents(tx: &Connection, source_id: i64) -> Result<(), StoreError> {
    // A run still waiting for the index has nothing in it: deleting its rowids is a no-op.
    tx.execute(
        "DELETE FROM steps_fts WHERE rowid IN
         (SELECT s.id FROM steps s JOIN runs r ON r.id = s.run_id WHERE r.source_id = ?1)",
        [source_id],
    )?;
    tx.execute("CREATE TEMP TABLE IF NOT EXISTS dropped_blobs (id INTEGER PRIMARY KEY)", [])?;
    tx.execute("DELETE FROM temp.dropped_blobs", [])?;
    tx.execute(
        "INSERT OR IGNORE INTO temp.dropped_blobs (id)
         SELECT h.blob_id FROM history h JOIN runs r ON r.id = h.run_id WHERE r.source_id = ?1
         UNION SELECT q.blob_id FROM query_parts q JOIN steps s ON s.id = q.step_id
               JOIN runs r ON r.id = s.run_id WHERE r.source_id = ?1",
        [source_id],
    )?;
    for table in ["runs", "outcomes", "predictions", "tasks"] {
        tx.execute(&format!("DELETE FROM {table} WHERE source_id = ?1"), [source_id])?;
    }
    tx.execute(
        "DELETE FROM blobs WHERE id IN (SELECT id FROM temp.dropped_blobs)
         AND NOT EXISTS (SELECT 1 FROM history WHERE blob_id = blobs.id)
         AND NOT EXISTS (SELECT 1 FROM query_parts WHERE blob_id = blobs.id)",
        [],
    )?;
    tx.execute("DELETE FROM temp.dropped_blobs", [])?;
    Ok(())
}

pub(super) type BlobCache = HashMap<[u8; 16], i64>;

struct RunWrite<'a> {
    id: i64,
    committed: &'a BlobCache,
    new_blobs: &'a mut Vec<([u8; 16], i64)>,
    packer: &'a mut texts::Packer,
}

fn insert_run(tx: &Connection, run: &Run, w: RunWrite<'_>) -> Result<i64, StoreError> {
    let RunWrite { id, committed, new_blobs, packer } = w;
    let run_id = id;
    let mut blobs = BlobWriter { tx, committed, new_blobs };
    insert_history(tx, run_id, &run.history, &mut blobs)?;
    let mut texts = StepTexts::new(run_id, packer);
    insert_steps(tx, run_id, 0, &run.steps, &mut blobs, &mut texts, packer)?;
    texts.finish(tx, packer)?;
    // The search index takes the run in a later pass (store::search_index).
    if !run.steps.is_empty() {
        tx.prepare_cached("INSERT OR IGNORE INTO search_pending (run_id) VALUES (?1)")?.execute([run_id])?;
    }
    insert_edits(tx, run_id, &run.edits, packer)?;
    Ok(run_id)
}

pub(super) fn insert_history(
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
pub(super) fn insert_steps(
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
    pub(super) run_id: i64,
    chunks: ChunkWriter,
    /// The step of each record pushed, in push order.
    ids: Vec<i64>,
    /// Records whose rows are written (or need none).
    written: usize,
}

impl StepTexts {
    pub(super) fn new(run_id: i64, packer: &mut texts::Packer) -> StepTexts {
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
    pub(super) fn finish(mut self, tx: &Connection, packer: &mut texts::Packer) -> Result<(), StoreError> {
        self.chunks.finish(tx, packer)?;
        self.rows(tx)
    }
}

/// Edits of a run, in the order given; their bulky texts in chunks of their own
/// (store::texts), after the steps'.
pub(super) fn insert_edits(
    tx: &Connection,
    run_id: i64,
    edits: &[Edit],
    packer: &mut texts::Packer,
) -> Result<(), StoreError> {
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

/// Content-addressed message storage within one transaction.
pub(super) struct BlobWriter<'t> {
    pub tx: &'t Connection,
    pub committed: &'t BlobCache,
    pub new_blobs: &'t mut Vec<([u8; 16], i64)>,
}

impl BlobWriter<'_> {
    fn message(&mut self, m: &Message) -> Result<i64, StoreError> {
        self.get_or_insert(message_hash(m), || m.clone())
    }

    fn prompt(&mut self, q: &QueryMessage) -> Result<i64, StoreError> {
        self.get_or_insert(q.hash, || Message::from_raw_json(&q.raw))
    }

    fn get_or_insert(&mut self, hash: [u8; 16], make: impl FnOnce() -> Message) -> Result<i64, StoreError> {
        if let Some(id) = self.committed.get(&hash) {
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
        self.new_blobs.push((hash, id));
        Ok(id)
    }
}
