//! Writing sources into PostgreSQL (`store::sql::write` orchestrates: a transaction per unit, a
//! savepoint of a batch's): the unit's path under an advisory lock for the transaction (two
//! workers ingesting one file wait for each other: the second replaces what the first wrote,
//! never adds to it; a source committed in parts, a big streamed file or a document written as it
//! is read, holds the lock from its first commit to its end), run rows first, then every other
//! row of the unit sent with `COPY`, ids taken from the sequences beforehand; a unit's search
//! terms written beside it on the terms thread (`aside.rs`), committed before it.

use super::aside::{Aside, JOB_BYTES, Job};
use super::copy::CopyRows;
use super::term_rows::TermRows;
use super::{Cells, Pg, enc, enc_opt};
use crate::error::StoreError;
use crate::model::{CheckedBy, Message};
use crate::sanitize::sanitize;
use crate::store::backend::Writes;
use crate::store::sql::write_path::{Committed, WritePath, Writing};
use crate::store::terms;
use crate::store::texts;
use crate::store::write::{SourceWrite, StepsOf, message_hash};
use std::collections::HashMap;

impl WritePath for Pg {
    fn writing(&self) -> &Writing {
        &self.writing
    }

    fn lock_path(&self, path: &str) -> Result<(), StoreError> {
        self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&enc(path)])?;
        Ok(())
    }

    fn fresh_run_id(&mut self, _w: &mut SourceWrite) -> Result<i64, StoreError> {
        Ok(self.ids("runs_id_seq", 1)?[0])
    }

    /// A whole unit's terms go to the terms thread (started by the first unit); a document's
    /// written as it is read are written here.
    fn write_rows(&mut self, parts: &[StepsOf<'_>], live: bool) -> Result<(), StoreError> {
        if parts.is_empty() {
            return Ok(());
        }
        if !live && self.aside.is_none() {
            let url = self.url.clone();
            self.aside = Some(Aside::start(Box::new(move || Pg::open(&url)), super::term_rows::serve)?);
        }
        let mut packer = match self.packer.take() {
            Some(p) => p,
            None => texts::Packer::new()?,
        };
        let written = write_steps(self, parts, &mut packer, !live);
        self.packer = Some(packer);
        written
    }

    /// The unit's terms commit first; a write that goes on keeps its path's lock past the
    /// transaction (a session lock, taken while the transaction's lock is held): another writer
    /// of the file waits for the whole write, not for its next commit, so it never adds to a
    /// source half written, nor replaces it midway.
    fn before_commit(&mut self, w: &SourceWrite, part: bool) -> Result<(), StoreError> {
        if part && self.held.is_none() {
            self.exec("SELECT pg_advisory_lock(hashtextextended($1, 7421))", &[&enc(&w.path)])?;
            self.held = Some(w.path.clone());
        }
        match &self.aside {
            Some(aside) if !self.unit_terms.borrow().is_empty() => aside.finish(Job::End),
            _ => Ok(()),
        }
    }

    /// The terms of a unit committed in a batch are deleted again if the batch is given up.
    fn committed(&mut self, what: Committed) {
        let sent = std::mem::take(self.unit_terms.get_mut());
        match what {
            Committed::Part => {}
            Committed::Source => {
                if self.in_batch() {
                    self.batch_terms.extend(sent);
                }
                self.release_path();
            }
            Committed::Batch => self.batch_terms.clear(),
        }
    }

    /// The terms of steps whose unit was given up are rolled back or deleted (best effort: terms
    /// of steps that are not stored are never read).
    fn rolled_back(&mut self, batch: bool) {
        let mut sent = std::mem::take(self.unit_terms.get_mut());
        if batch {
            sent.append(&mut self.batch_terms);
        }
        if let Some(aside) = self.aside.as_ref().filter(|_| !sent.is_empty()) {
            let _ = aside.finish(Job::Forget(sent));
        }
        self.release_path();
    }

    /// Its rows follow (`ON UPDATE CASCADE`).
    fn rekey_run(&mut self, from: i64, to: i64) -> Result<(), StoreError> {
        self.exec("UPDATE runs SET id = $2 WHERE id = $1", &[&from, &to])?;
        Ok(())
    }
}

impl Pg {
    /// The write of a source committed in parts is over: its path's lock goes.
    fn release_path(&mut self) {
        if let Some(path) = self.held.take() {
            // A session lost since holds nothing; the server says so, nothing more.
            let _ = self.exec("SELECT pg_advisory_unlock(hashtextextended($1, 7421))", &[&enc(&path)]);
        }
    }
}

/// Chunks, steps, their texts and prompt parts, edits, history and search terms of these runs;
/// the terms on the terms thread when `aside` (and it runs), else here.
fn write_steps(pg: &Pg, parts: &[StepsOf<'_>], packer: &mut texts::Packer, aside: bool) -> Result<(), StoreError> {
    let blobs = blob_ids(pg, parts)?;
    let mut chunk_ids = IdPool::new("text_chunks_id_seq");
    let (mut chunks, mut steps, mut step_texts, mut prompt, mut edits, mut history) = Default::default();
    let mut rows = Rows { chunks: &mut chunks, steps: &mut steps, texts: &mut step_texts, prompt: &mut prompt };
    let mut step_ids = Vec::new();
    for part in parts {
        let ids = pg.ids("steps_id_seq", part.steps.len())?;
        rows.steps_of(pg, part, &ids, &blobs, packer, &mut chunk_ids)?;
        edit_rows(pg, part, packer, &mut chunk_ids, rows.chunks, &mut edits)?;
        for (pos, m) in part.history.iter().enumerate() {
            let blob = blobs.get(&message_hash(m)).copied().ok_or_else(|| lost("a history message"))?;
            CopyRows::int(&mut history, part.run_id).int(pos as i64).int(blob).end();
        }
        step_ids.push(ids);
    }
    for (table, rows) in [
        ("text_chunks (id, run_id, body)", &chunks),
        (
            "steps (id, run_id, idx, tool, flags, obs_chars, action_head, execution_time, tokens_in, tokens_out,
                    timestamp, open_file, working_dir, query_keep, says)",
            &steps,
        ),
        ("step_texts (step_id, action, thought, observation, response, args, chunk_id, chunk_at)", &step_texts),
        ("query_parts (step_id, pos, blob_id)", &prompt),
        (
            "edits (id, run_id, step_idx, path, kind, status, old_text, new_text, diff, lint_codes, certainty, command,
                    checked_at, shown, undone_at, hunks, partial, chunk_id, chunk_at)",
            &edits,
        ),
        ("history (run_id, pos, blob_id)", &history),
    ] {
        if !rows.is_empty() {
            pg.copy_in(&format!("COPY {table} FROM STDIN"), rows.data())?;
        }
    }
    match pg.aside.as_ref().filter(|_| aside) {
        Some(aside) => send_terms(pg, aside, parts, &step_ids),
        None => write_terms(pg, parts, &step_ids),
    }
}

/// These steps' searchable texts to the terms thread, [`JOB_BYTES`] at a time.
fn send_terms(pg: &Pg, aside: &Aside, parts: &[StepsOf<'_>], step_ids: &[Vec<i64>]) -> Result<(), StoreError> {
    let (mut job, mut bytes) = (Vec::new(), 0);
    for (part, ids) in parts.iter().zip(step_ids) {
        for (s, &id) in part.steps.iter().zip(ids) {
            bytes += s.thought.len() + s.action.len() + s.observation.len();
            job.push((id, [s.thought.clone(), s.action.clone(), s.observation.clone()]));
            pg.unit_terms.borrow_mut().push(id);
            if bytes >= JOB_BYTES {
                aside.send(Job::Steps(std::mem::take(&mut job)))?;
                bytes = 0;
            }
        }
    }
    if !job.is_empty() {
        aside.send(Job::Steps(job))?;
    }
    Ok(())
}

fn lost(what: &str) -> StoreError {
    StoreError::Inconsistent(format!("{what} lost its stored message"))
}

/// Ids of a sequence taken a block at a time.
struct IdPool {
    sequence: &'static str,
    free: Vec<i64>,
}

impl IdPool {
    fn new(sequence: &'static str) -> IdPool {
        IdPool { sequence, free: Vec::new() }
    }

    fn next(&mut self, pg: &Pg) -> Result<i64, StoreError> {
        if self.free.is_empty() {
            self.free = pg.ids(self.sequence, 64)?;
            self.free.reverse();
        }
        self.free.pop().ok_or_else(|| StoreError::Postgres(format!("{} gave no id", self.sequence)))
    }
}

struct Rows<'r> {
    chunks: &'r mut CopyRows,
    steps: &'r mut CopyRows,
    texts: &'r mut CopyRows,
    prompt: &'r mut CopyRows,
}

impl Rows<'_> {
    fn steps_of(
        &mut self,
        pg: &Pg,
        part: &StepsOf<'_>,
        ids: &[i64],
        blobs: &HashMap<[u8; 16], i64>,
        packer: &mut texts::Packer,
        chunk_ids: &mut IdPool,
    ) -> Result<(), StoreError> {
        let mut places: Vec<Option<(i64, u32)>> = vec![None; part.steps.len()];
        packer.clear();
        for (i, (s, &id)) in part.steps.iter().zip(ids).enumerate() {
            let idx = (part.first + i) as i64;
            let head = crate::store::browse::action_head(&s.action);
            self.steps
                .int(id)
                .int(part.run_id)
                .int(idx)
                .opt_text(s.tool.as_deref())
                .int(s.flags.bits())
                .int(s.observation.chars().count() as i64)
                .text(&head)
                .opt_real(s.execution_time)
                .opt_int(s.tokens_in)
                .opt_int(s.tokens_out)
                .opt_text(s.timestamp.as_deref())
                .opt_text(s.open_file.as_deref())
                .opt_text(s.working_dir.as_deref())
                .opt_int(s.query.as_ref().map(|q| q.keep as i64))
                .opt_text(crate::store::browse::says(s).as_deref())
                .end();
            if let Some(q) = &s.query {
                for (k, m) in q.append.iter().enumerate() {
                    let blob = blobs.get(&m.hash).copied().ok_or_else(|| lost("a prompt part"))?;
                    self.prompt.int(id).int((q.keep + k) as i64).int(blob).end();
                }
            }
            let fields = texts::step_fields(s);
            if !texts::fits(&fields) {
                return Err(StoreError::Encode(format!("step {idx} has a text over 4 GiB")));
            }
            for chunk in packer.push(i, fields)? {
                place(pg, part.run_id, chunk, &mut places, chunk_ids, self.chunks)?;
            }
        }
        for chunk in packer.finish()? {
            place(pg, part.run_id, chunk, &mut places, chunk_ids, self.chunks)?;
        }
        for (&id, place) in ids.iter().zip(places) {
            let (chunk, at) = place.ok_or_else(|| StoreError::Encode("lost a record".into()))?;
            self.texts.int(id).text("").text("").text("").null().null().int(chunk).int(i64::from(at)).end();
        }
        Ok(())
    }
}

/// A chunk's row, and where each of its records went.
fn place(
    pg: &Pg,
    run_id: i64,
    chunk: texts::Chunk,
    places: &mut [Option<(i64, u32)>],
    ids: &mut IdPool,
    rows: &mut CopyRows,
) -> Result<(), StoreError> {
    let id = ids.next(pg)?;
    rows.int(id).int(run_id).bytes(&chunk.body).end();
    for (index, at) in chunk.records {
        *places.get_mut(index).ok_or_else(|| StoreError::Encode("lost a record".into()))? = Some((id, at));
    }
    Ok(())
}

/// A run's edits, their texts in chunks of their own after the steps'.
fn edit_rows(
    pg: &Pg,
    part: &StepsOf<'_>,
    packer: &mut texts::Packer,
    chunk_ids: &mut IdPool,
    chunks: &mut CopyRows,
    rows: &mut CopyRows,
) -> Result<(), StoreError> {
    let edits = part.edits;
    if edits.is_empty() {
        return Ok(());
    }
    packer.clear();
    let hunks: Vec<Option<String>> = edits.iter().map(texts::hunks_json).collect();
    let mut places: Vec<Option<(i64, u32)>> = vec![None; edits.len()];
    for (i, (e, hunks)) in edits.iter().zip(&hunks).enumerate() {
        let fields = texts::edit_fields(e, hunks.as_deref());
        if fields.iter().all(Option::is_none) {
            continue;
        }
        if !texts::fits(&fields) {
            return Err(StoreError::Encode(format!("an edit of {} has a text over 4 GiB", e.path)));
        }
        for chunk in packer.push(i, fields)? {
            place(pg, part.run_id, chunk, &mut places, chunk_ids, chunks)?;
        }
    }
    for chunk in packer.finish()? {
        place(pg, part.run_id, chunk, &mut places, chunk_ids, chunks)?;
    }
    let ids = pg.ids("edits_id_seq", edits.len())?;
    for ((e, id), place) in edits.iter().zip(ids).zip(places) {
        let t = &e.trace;
        let codes = (!e.lint_codes.is_empty()).then(|| e.lint_codes.join(","));
        rows.int(id)
            .int(part.run_id)
            .opt_int(e.step.map(|s| s as i64))
            .text(&e.path)
            .text(e.kind.name())
            .text(e.status.name())
            .null()
            .null()
            .null()
            .opt_text(codes.as_deref())
            .opt_text(t.certainty.map(|c| c.name()))
            .opt_text(t.command.as_deref())
            .opt_int(t.checked_by.map(CheckedBy::to_column))
            .null()
            .opt_int(t.undone_at.map(|s| s as i64))
            .null()
            .opt_int(t.partial.then_some(1))
            .opt_int(place.map(|p| p.0))
            .opt_int(place.map(|p| i64::from(p.1)))
            .end();
    }
    Ok(())
}

/// The ids of every message these runs' histories and prompts name, inserting those not stored
/// yet (another writer inserting one at the same moment: its row is used).
fn blob_ids(pg: &Pg, parts: &[StepsOf<'_>]) -> Result<HashMap<[u8; 16], i64>, StoreError> {
    let mut wanted: HashMap<[u8; 16], Message> = HashMap::new();
    for part in parts {
        for m in part.history {
            wanted.entry(message_hash(m)).or_insert_with(|| m.clone());
        }
        for s in part.steps {
            for q in s.query.iter().flat_map(|q| &q.append) {
                wanted.entry(q.hash).or_insert_with(|| Message::from_raw_json(&q.raw));
            }
        }
    }
    let mut ids = HashMap::with_capacity(wanted.len());
    if wanted.is_empty() {
        return Ok(ids);
    }
    let hashes: Vec<Vec<u8>> = wanted.keys().map(|h| h.to_vec()).collect();
    let known = |pg: &Pg, ids: &mut HashMap<[u8; 16], i64>, hashes: &Vec<Vec<u8>>| -> Result<(), StoreError> {
        for r in pg.rows("SELECT hash, id FROM blobs WHERE hash = ANY($1)", &[hashes])? {
            let hash: [u8; 16] = r.bytes(0)?.try_into().map_err(|_| StoreError::Corrupt("a blob hash".into()))?;
            ids.insert(hash, r.int(1)?);
        }
        Ok(())
    };
    known(pg, &mut ids, &hashes)?;
    let missing: Vec<(&[u8; 16], &Message)> = wanted.iter().filter(|(h, _)| !ids.contains_key(*h)).collect();
    if !missing.is_empty() {
        let hashes: Vec<Vec<u8>> = missing.iter().map(|(h, _)| h.to_vec()).collect();
        let roles: Vec<String> = missing.iter().map(|(_, m)| enc(&m.role).into_owned()).collect();
        let contents: Vec<String> = missing.iter().map(|(_, m)| enc(&m.content).into_owned()).collect();
        let extras: Vec<Option<String>> =
            missing.iter().map(|(_, m)| enc_opt(m.extra.as_deref()).map(|e| e.into_owned())).collect();
        pg.exec(
            "INSERT INTO blobs (hash, role, content, extra)
             SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[]) ON CONFLICT (hash) DO NOTHING",
            &[&hashes, &roles, &contents, &extras],
        )?;
        known(pg, &mut ids, &hashes)?;
    }
    Ok(ids)
}

/// The search terms of these steps, as SQLite's index holds them (`store::terms`), sent in
/// `COPY`s of at most about 16 MB.
fn write_terms(pg: &Pg, parts: &[StepsOf<'_>], step_ids: &[Vec<i64>]) -> Result<(), StoreError> {
    let mut rows = TermRows::default();
    for (part, ids) in parts.iter().zip(step_ids) {
        for (s, &id) in part.steps.iter().zip(ids) {
            let fields = [sanitize(&s.thought), sanitize(&s.action), sanitize(&s.observation)];
            rows.push(id, &terms::document(&[&fields[0], &fields[1], &fields[2]]));
            if rows.full() {
                rows.send(pg)?;
            }
        }
    }
    rows.send(pg)
}
