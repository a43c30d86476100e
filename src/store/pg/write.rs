//! Writing one source into PostgreSQL: a transaction per unit (a savepoint of a batch), the
//! unit's path under an advisory lock for the transaction (two workers ingesting one file wait
//! for each other: the second replaces what the first wrote, never adds to it; a source committed
//! in parts, a big streamed file, holds the lock from its first commit to its end), run rows first,
//! then every other row of the unit sent with `COPY`, ids taken from the sequences beforehand.
//! A source seen before is replaced whole, as in SQLite.

use super::aside::{Aside, JOB_BYTES, Job};
use super::copy::CopyRows;
use super::term_rows::TermRows;
use super::{Cells, Pg, enc, enc_opt};
use crate::error::StoreError;
use crate::model::{CheckedBy, Edit, Message, Parsed, Step};
use crate::sanitize::sanitize;
use crate::store::backend::Writes;
use crate::store::sql::write;
use crate::store::terms;
use crate::store::texts;
use crate::store::write::{RunCounts, SourceRecord, SourceWrite, WriteStats, message_hash, run_key};
use std::collections::HashMap;

impl Writes for Pg {
    fn source_hashes(&self) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        write::source_hashes(self)
    }

    fn source_warnings(&self, path: &str) -> Result<Vec<String>, StoreError> {
        write::source_warnings(self, path)
    }

    fn source_fingerprint(&self, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        write::source_fingerprint(self, path)
    }

    fn begin_source(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
        self.run(if self.batch { "SAVEPOINT source" } else { "BEGIN" })?;
        let begun = self.begin_inner(src);
        if begun.is_err() {
            self.rollback_source();
        }
        begun
    }

    fn append(&mut self, w: &mut SourceWrite, parsed: &Parsed) -> Result<(), StoreError> {
        if self.aside.is_none() {
            let url = self.url.clone();
            self.aside = Some(Aside::start(Box::new(move || Pg::open(&url)), super::term_rows::serve)?);
        }
        let mut unit = Vec::with_capacity(parsed.runs.len());
        for run in &parsed.runs {
            let id = match w.old_ids.get(&run_key(run)) {
                Some(&kept) => kept,
                None => self.ids("runs_id_seq", 1)?[0],
            };
            crate::store::sql::live::insert_run_row(
                self,
                w.source_id,
                id,
                run,
                RunCounts::of(run.steps.len(), &run.edits),
            )?;
            unit.push(StepsOf { run_id: id, first: 0, steps: &run.steps, edits: &run.edits, history: &run.history });
            w.instances.insert(run.instance_id.clone());
            w.stats.runs += 1;
            w.stats.steps += run.steps.len();
        }
        self.with_packer(|pg, packer| write_steps(pg, &unit, packer, true))?;
        write::append_evaluations(self, w, parsed)
    }

    fn commit_source(&mut self, w: SourceWrite) -> Result<WriteStats, StoreError> {
        let finish = || -> Result<(), StoreError> {
            write::settle_source(self, &w, self.parted == Some(w.source_id))?;
            self.end_terms()?;
            self.run(if self.batch { "RELEASE source" } else { "COMMIT" })
        };
        if let Err(e) = finish() {
            self.rollback_source();
            return Err(e);
        }
        let sent = std::mem::take(&mut *self.unit_terms.borrow_mut());
        if self.batch {
            self.batch_terms.extend(sent);
        }
        self.parted = None;
        self.release_path();
        Ok(w.stats)
    }

    fn commit_part(&mut self, w: &mut SourceWrite) -> Result<(), StoreError> {
        // A source stored before is replaced in one transaction: until the new version commits,
        // readers see the old one, and a write that fails leaves it as it was.
        if self.batch || w.stats.replaced {
            return Ok(());
        }
        if self.parted.is_none() {
            self.exec("UPDATE sources SET hash = '\\x'::bytea WHERE id = $1", &[&w.source_id])?;
            self.parted = Some(w.source_id);
        }
        self.hold_path(w.source_id)?;
        self.end_terms()?;
        self.run("COMMIT")?;
        self.unit_terms.borrow_mut().clear();
        self.run("BEGIN")?;
        self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&enc(&self.path_of(w.source_id)?)])?;
        Ok(())
    }

    fn rollback_source(&mut self) {
        let mut sent = std::mem::take(&mut *self.unit_terms.borrow_mut());
        if self.batch {
            if self.run("ROLLBACK TO source").and_then(|_| self.run("RELEASE source")).is_err() {
                self.abandon();
                self.batch = false;
                sent.append(&mut self.batch_terms);
            }
        } else {
            self.abandon();
        }
        self.forget_terms(sent);
        if let Some(id) = self.parted.take() {
            let remove = || -> Result<(), StoreError> {
                self.run("BEGIN")?;
                delete_contents(self, id)?;
                self.exec("DELETE FROM sources WHERE id = $1", &[&id])?;
                self.run("COMMIT")
            };
            if remove().is_err() {
                self.abandon();
            }
        }
        self.release_path();
    }

    fn begin_batch(&mut self) -> Result<(), StoreError> {
        if !self.batch {
            self.run("BEGIN")?;
            self.batch = true;
        }
        Ok(())
    }

    fn in_batch(&self) -> bool {
        self.batch
    }

    fn commit_batch(&mut self) -> Result<(), StoreError> {
        if !self.batch {
            return Ok(());
        }
        self.batch = false;
        let sent = std::mem::take(&mut self.batch_terms);
        if !self.in_transaction.get() {
            self.forget_terms(sent);
            return Err(StoreError::BatchRolledBack("an error in one of its files rolled the transaction back".into()));
        }
        if let Err(e) = self.run("COMMIT") {
            self.abandon();
            self.forget_terms(sent);
            return Err(e);
        }
        Ok(())
    }

    fn remove_source(&mut self, path: &str) -> Result<bool, StoreError> {
        self.run("BEGIN")?;
        let removed = (|| -> Result<bool, StoreError> {
            self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&enc(path)])?;
            let Some(row) = self.opt("SELECT id FROM sources WHERE path = $1", &[&enc(path)])? else {
                return Ok(false);
            };
            let id = row.int(0)?;
            let instances = write::instances_of_source(self, id)?;
            delete_contents(self, id)?;
            self.exec("DELETE FROM sources WHERE id = $1", &[&id])?;
            for instance in &instances {
                crate::store::sql::link::relink_instance(self, instance)?;
            }
            Ok(true)
        })();
        match removed {
            Ok(found) => {
                self.run("COMMIT")?;
                Ok(found)
            }
            Err(e) => {
                self.abandon();
                Err(e)
            }
        }
    }

    fn runs_of_sources(&self, paths: &[String]) -> Result<Vec<i64>, StoreError> {
        write::runs_of_sources(self, paths)
    }
}

impl Pg {
    /// Commit the terms the terms thread holds for the unit (before the unit: see `aside.rs`).
    fn end_terms(&self) -> Result<(), StoreError> {
        match &self.aside {
            Some(aside) if !self.unit_terms.borrow().is_empty() => aside.finish(Job::End),
            _ => Ok(()),
        }
    }

    /// Roll back or delete the terms of steps whose unit was given up (best effort: terms of
    /// steps that are not stored are never read).
    fn forget_terms(&self, steps: Vec<i64>) {
        if let Some(aside) = self.aside.as_ref().filter(|_| !steps.is_empty()) {
            let _ = aside.finish(Job::Forget(steps));
        }
    }

    /// Keep the lock of the source's path past the transaction (a session lock, taken while the
    /// transaction's lock is held): another writer of the file waits for the whole write, not
    /// for its next commit, so it never adds to a source half written, nor replaces it midway.
    pub(super) fn hold_path(&mut self, source_id: i64) -> Result<(), StoreError> {
        if self.held.is_none() {
            let path = self.path_of(source_id)?;
            self.exec("SELECT pg_advisory_lock(hashtextextended($1, 7421))", &[&enc(&path)])?;
            self.held = Some(path);
        }
        Ok(())
    }

    /// The write of a source committed in parts is over: its path's lock goes.
    pub(super) fn release_path(&mut self) {
        if let Some(path) = self.held.take() {
            // A session lost since holds nothing; the server says so, nothing more.
            let _ = self.exec("SELECT pg_advisory_unlock(hashtextextended($1, 7421))", &[&enc(&path)]);
        }
    }

    fn path_of(&self, source_id: i64) -> Result<String, StoreError> {
        self.one("SELECT path FROM sources WHERE id = $1", &[&source_id])?.text(0)
    }

    fn begin_inner(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
        let path = enc(src.path);
        // Writers of one file wait for each other until the transaction ends.
        self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&path])?;
        let existing = self.opt("SELECT id FROM sources WHERE path = $1", &[&path])?;
        let mut w = SourceWrite { hash: src.hash.to_vec(), ..SourceWrite::default() };
        let (size, hash) = (src.size as i64, &src.hash[..]);
        w.source_id = match existing {
            Some(row) => {
                let id = row.int(0)?;
                w.instances.extend(write::instances_of_source(self, id)?);
                for r in
                    self.rows("SELECT position, instance_id, attempt, id FROM runs WHERE source_id = $1", &[&id])?
                {
                    w.old_ids.insert((r.int(0)?, r.text(1)?, r.opt_int(2)?), r.int(3)?);
                }
                delete_contents(self, id)?;
                self.exec(
                    "UPDATE sources SET kind = $2, format = $3, size = $4, hash = $5, warnings = NULL,
                     ingested_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') WHERE id = $1",
                    &[&id, &enc(src.kind), &enc(src.format), &size, &hash],
                )?;
                w.stats.replaced = true;
                id
            }
            None => self
                .one(
                    "INSERT INTO sources (path, kind, format, size, hash, warnings, ingested_at)
                     VALUES ($1, $2, $3, $4, $5, NULL, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'))
                     RETURNING id",
                    &[&path, &enc(src.kind), &enc(src.format), &size, &hash],
                )?
                .int(0)?,
        };
        Ok(w)
    }
}

/// Remove everything a source contributed (its runs' rows cascade), and the prompt messages no
/// longer used: those in a savepoint of their own, as another writer may have just taken one of
/// them (then they stay).
pub(super) fn delete_contents(pg: &Pg, source_id: i64) -> Result<(), StoreError> {
    let blobs: Vec<i64> = pg
        .rows(
            "SELECT h.blob_id FROM history h JOIN runs r ON r.id = h.run_id WHERE r.source_id = $1
             UNION SELECT q.blob_id FROM query_parts q JOIN steps s ON s.id = q.step_id
                   JOIN runs r ON r.id = s.run_id WHERE r.source_id = $1",
            &[&source_id],
        )?
        .iter()
        .map(|r| r.int(0))
        .collect::<Result<_, _>>()?;
    for table in ["runs", "outcomes", "predictions", "tasks"] {
        pg.exec(&format!("DELETE FROM {table} WHERE source_id = $1"), &[&source_id])?;
    }
    if blobs.is_empty() {
        return Ok(());
    }
    pg.run("SAVEPOINT blobs")?;
    let deleted = pg.exec(
        "DELETE FROM blobs b WHERE b.id = ANY($1)
         AND NOT EXISTS (SELECT 1 FROM history WHERE blob_id = b.id)
         AND NOT EXISTS (SELECT 1 FROM query_parts WHERE blob_id = b.id)",
        &[&blobs],
    );
    pg.run(if deleted.is_ok() { "RELEASE blobs" } else { "ROLLBACK TO blobs" })?;
    if deleted.is_err() {
        pg.run("RELEASE blobs")?;
    }
    Ok(())
}

/// Where a run's step rows go: its id, the index of its first step, the steps and edits.
pub(super) struct StepsOf<'a> {
    pub run_id: i64,
    pub first: usize,
    pub steps: &'a [Step],
    pub edits: &'a [Edit],
    pub history: &'a [Message],
}

/// Chunks, steps, their texts and prompt parts, edits, history and search terms of these runs;
/// the terms on the terms thread when `aside` (and it runs), else here.
pub(super) fn write_steps(
    pg: &Pg,
    parts: &[StepsOf<'_>],
    packer: &mut texts::Packer,
    aside: bool,
) -> Result<(), StoreError> {
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
