//! A source written while it is read (`trajan PATH`): its steps committed in batches, so a
//! reader (the TUI) sees them as they come, and its runs' fields, history and final patch
//! written at the end, with the same rows as `write_source` writes.
//!
//! Until it ends, the source's hash is [`UNFINISHED`] and its warnings say the read has not
//! finished: a write stopped by a crash is never taken for an unchanged file, and the next
//! ingest of that file replaces it. A write that fails or is cancelled is removed
//! (`live_abandon`): the database never keeps part of a file. A source seen before is
//! replaced in the first batch's transaction (readers see the old version or the new one's first
//! steps), so a failed replacement leaves neither.

use super::Sqlite;
use super::write::{BlobWriter, StepTexts, insert_edits, insert_history, insert_steps};
use crate::error::StoreError;
use crate::model::{Edit, Parsed, Run, Step, StepFlags};
use crate::store::backend::{LiveWrites, Writes};
use crate::store::sql::live;
use crate::store::texts;
use crate::store::write::{
    LiveRun, LiveWrite, RunCounts, SourceRecord, UNFINISHED, WriteStats, in_edit_batches, run_key,
};
use rusqlite::params;

impl LiveWrites for Sqlite {
    /// Begin writing a source read a step at a time; `note` is the warning it carries until it
    /// ends. The transaction stays open until `live_commit`.
    fn live_begin(&mut self, path: &str, kind: &str, format: &str, note: &str) -> Result<LiveWrite, StoreError> {
        let record = SourceRecord { path, kind, format, size: 0, hash: &UNFINISHED };
        let w = self.begin_source(&record)?;
        if let Err(e) = live::note_unfinished(self, w.source_id, note) {
            self.rollback_source();
            return Err(e);
        }
        Ok(LiveWrite { w, runs: Vec::new(), open: true })
    }

    /// A run begins: its row, with what is known before its steps. Its id.
    fn live_run(&mut self, lw: &mut LiveWrite, run: &Run) -> Result<i64, StoreError> {
        self.live_tx(lw)?;
        self.settle_texts()?;
        let w = &mut lw.w;
        let id = match w.old_ids.get(&run_key(run)) {
            Some(&kept) => kept,
            None => {
                w.next_run_id += 1;
                w.next_run_id - 1
            }
        };
        live::insert_run_row(self, w.source_id, id, run, RunCounts::default())?;
        w.instances.insert(run.instance_id.clone());
        w.stats.runs += 1;
        lw.runs.push(LiveRun { id, counts: RunCounts::default(), changed: false });
        Ok(id)
    }

    /// The next steps of the run begun last, with the edits they made.
    fn live_steps(&mut self, lw: &mut LiveWrite, steps: &[Step], edits: &[Edit]) -> Result<(), StoreError> {
        self.live_tx(lw)?;
        let Some(run) = lw.runs.last_mut() else {
            return Err(StoreError::Inconsistent("steps written before their run".into()));
        };
        if self.open_texts.as_ref().is_some_and(|t| t.run_id != run.id) {
            self.settle_texts()?;
        }
        let mut blobs = BlobWriter { tx: &self.conn, committed: &self.blob_ids, new_blobs: &mut lw.w.new_blobs };
        let packer = texts::Packer::ready(&mut self.packer)?;
        let open = self.open_texts.get_or_insert_with(|| StepTexts::new(run.id, packer));
        let ids = insert_steps(&self.conn, run.id, run.counts.steps, steps, &mut blobs, open, packer)?;
        // Indexed in the same transaction: a document written as it is read leaves the writer's
        // thread idle most of the time, and the texts are in hand (no pass reads them back).
        super::search_index::index_steps(&self.conn, &ids, steps)?;
        if !edits.is_empty() {
            // The edits' texts go through the same packer, after the steps'.
            self.settle_texts()?;
            insert_edits(&self.conn, run.id, edits, texts::Packer::ready(&mut self.packer)?)?;
        }
        run.counts.add(RunCounts::of(steps.len(), edits));
        run.changed = true;
        lw.w.stats.steps += steps.len();
        Ok(())
    }

    /// Commit what was written: readers see it from now on, each run's row with its counts.
    fn live_commit(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError> {
        if !lw.open {
            return Ok(());
        }
        self.settle_texts()?;
        live::store_counts(self, &mut lw.runs)?;
        self.conn.execute_batch("COMMIT")?;
        lw.open = false;
        self.blob_ids.extend(lw.w.new_blobs.drain(..));
        Ok(())
    }

    /// End the write: each run's fields as the document gives them at its end (`ending.runs`,
    /// in the order the runs began), its history, the tasks, steps whose flags changed
    /// (`fixups`: run, step, flags), the real size and hash. A run's `edits` are all its edits,
    /// reconstructed once the whole run was read: they replace those written with its steps;
    /// `edited[run]` are the steps that get the `edit` flag. `fill(run, k, edit)` completes the
    /// `k`th edit of a run just before it is written (its texts may be kept elsewhere until
    /// then), and the texts go once it is.
    fn live_finish(
        &mut self,
        mut lw: LiveWrite,
        record: &SourceRecord<'_>,
        ending: Parsed,
        fixups: &[(usize, usize, StepFlags)],
        edited: &[Vec<usize>],
        fill: &mut dyn FnMut(usize, usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<WriteStats, StoreError> {
        let finished = self.live_finish_inner(&mut lw, record, ending, fixups, edited, fill);
        if let Err(e) = finished {
            self.rollback_source();
            lw.open = false;
            return Err(e);
        }
        self.commit_source(lw.w)
    }

    /// Stop a write without ending it: what was committed stays, marked unfinished (a whole
    /// write of the file replaces it, keeping its runs' ids); what was not is rolled back.
    fn live_interrupt(&mut self, lw: LiveWrite) {
        if lw.open {
            self.rollback_source();
        }
    }

    /// Hold at most about `kib` KiB of database pages in memory on this connection (a writer
    /// that must stay small while a large file goes through it).
    fn limit_cache(&self, kib: i64) -> Result<i64, StoreError> {
        // Negative: KiB; positive: pages.
        let before: i64 = self.conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        self.conn.pragma_update(None, "cache_size", -kib.max(64))?;
        Ok(if before < 0 { -before } else { before * page / 1024 })
    }

    /// Give up a write: everything of the source is removed (see the module).
    fn live_abandon(&mut self, lw: LiveWrite) -> Result<(), StoreError> {
        if lw.open {
            self.rollback_source();
        }
        match live::path_of(self, lw.w.source_id)? {
            Some(p) => self.remove_source(&p).map(|_| ()),
            None => Ok(()),
        }
    }
}

impl Sqlite {
    /// Write the step texts still on their way into chunks, and their rows.
    fn settle_texts(&mut self) -> Result<(), StoreError> {
        match self.open_texts.take() {
            Some(open) => open.finish(&self.conn, texts::Packer::ready(&mut self.packer)?),
            None => Ok(()),
        }
    }

    fn live_tx(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError> {
        if !lw.open {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            lw.open = true;
        }
        Ok(())
    }

    fn live_finish_inner(
        &mut self,
        lw: &mut LiveWrite,
        record: &SourceRecord<'_>,
        mut ending: Parsed,
        fixups: &[(usize, usize, StepFlags)],
        edited: &[Vec<usize>],
        fill: &mut dyn FnMut(usize, usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.live_tx(lw)?;
        self.settle_texts()?;
        lw.check_ending(&ending)?;
        live::drop_live_edits(self, &lw.runs)?;
        for (i, mut run) in std::mem::take(&mut ending.runs).into_iter().enumerate() {
            let live = &mut lw.runs[i];
            // A run keeps the id it had before a replace (the instance may only be known now).
            if let Some(&kept) = lw.w.old_ids.get(&run_key(&run))
                && kept != live.id
            {
                rekey(&self.conn, live.id, kept)?;
                live.id = kept;
            }
            let counts = RunCounts { steps: live.counts.steps, ..RunCounts::of(0, &run.edits) };
            live::update_run_row(self, live.id, &run, counts)?;
            let mut blobs = BlobWriter { tx: &self.conn, committed: &self.blob_ids, new_blobs: &mut lw.w.new_blobs };
            insert_history(&self.conn, live.id, &run.history, &mut blobs)?;
            // In batches of about EDIT_BATCH_BYTES of text: their texts compress together (one
            // edit per frame barely compresses), and memory stays bounded by a batch.
            let (conn, packer, id) = (&self.conn, &mut self.packer, live.id);
            in_edit_batches(&mut run.edits, &mut |k, e| fill(i, k, e), &mut |batch| {
                insert_edits(conn, id, batch, texts::Packer::ready(packer)?)
            })?;
            lw.w.instances.insert(run.instance_id);
        }
        live::change_flags(self, &lw.flag_changes(fixups, edited))?;
        live::finish_source(self, lw.w.source_id, record)?;
        // Outcomes, predictions and tasks as a whole write adds them; the warnings with them.
        self.append(&mut lw.w, &ending)?;
        Ok(())
    }
}

/// Give run `from` the id `to` (free), with its steps and edits.
fn rekey(conn: &rusqlite::Connection, from: i64, to: i64) -> Result<(), StoreError> {
    // The steps refer to the run: checked at commit, once all are moved.
    conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    conn.execute("UPDATE runs SET id = ?2 WHERE id = ?1", params![from, to])?;
    for table in ["steps", "history", "edits", "text_chunks", "search_pending"] {
        conn.execute(&format!("UPDATE {table} SET run_id = ?2 WHERE run_id = ?1"), params![from, to])?;
    }
    Ok(())
}
