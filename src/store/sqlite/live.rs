//! A source written while it is read (`trajan PATH`) into SQLite: its steps committed in
//! batches, so a reader (the TUI) sees them as they come, and its runs' fields, history and final
//! patch written at the end, with the same rows as `write_source` writes (`store::sql::live`
//! orchestrates; here are SQLite's step rows and transactions).
//!
//! Until it ends, the source's hash is [`crate::store::UNFINISHED`] and its warnings say the read
//! has not finished: a write stopped by a crash is never taken for an unchanged file, and the next
//! ingest of that file replaces it. A write that fails or is cancelled is removed
//! (`live_abandon`): the database never keeps part of a file. A source seen before is
//! replaced in the first batch's transaction (readers see the old version or the new one's first
//! steps), so a failed replacement leaves neither.

use super::Sqlite;
use super::write::{BlobWriter, StepTexts, insert_edits, insert_history, insert_steps};
use crate::error::StoreError;
use crate::model::{Edit, Run, Step};
use crate::store::sql::live::LivePath;
use crate::store::texts;
use crate::store::write::{LiveRun, SourceWrite, in_edit_batches};
use rusqlite::params;

impl LivePath for Sqlite {
    /// The one writer's transaction, until `live_commit`.
    fn live_open(&mut self, _w: &SourceWrite) -> Result<(), StoreError> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    /// Write the step texts still on their way into chunks, and their rows.
    fn live_settle(&mut self) -> Result<(), StoreError> {
        match self.open_texts.take() {
            Some(open) => open.finish(&self.conn, texts::Packer::ready(&mut self.packer)?),
            None => Ok(()),
        }
    }

    fn live_close(&mut self, w: &mut SourceWrite) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT")?;
        self.blob_ids.extend(w.new_blobs.drain(..));
        Ok(())
    }

    fn live_release(&mut self) {}

    fn fresh_run_id(&mut self, w: &mut SourceWrite) -> Result<i64, StoreError> {
        w.next_run_id += 1;
        Ok(w.next_run_id - 1)
    }

    fn live_step_rows(
        &mut self,
        w: &mut SourceWrite,
        run: &LiveRun,
        steps: &[Step],
        edits: &[Edit],
    ) -> Result<(), StoreError> {
        if self.open_texts.as_ref().is_some_and(|t| t.run_id != run.id) {
            self.live_settle()?;
        }
        let mut blobs = BlobWriter { tx: &self.conn, committed: &self.blob_ids, new_blobs: &mut w.new_blobs };
        let packer = texts::Packer::ready(&mut self.packer)?;
        let open = self.open_texts.get_or_insert_with(|| StepTexts::new(run.id, packer));
        let ids = insert_steps(&self.conn, run.id, run.counts.steps, steps, &mut blobs, open, packer)?;
        // Indexed in the same transaction: a document written as it is read leaves the writer's
        // thread idle most of the time, and the texts are in hand (no pass reads them back).
        super::search_index::index_steps(&self.conn, &ids, steps)?;
        if !edits.is_empty() {
            // The edits' texts go through the same packer, after the steps'.
            self.live_settle()?;
            insert_edits(&self.conn, run.id, edits, texts::Packer::ready(&mut self.packer)?)?;
        }
        Ok(())
    }

    /// The steps refer to the run: checked at commit, once all are moved.
    fn rekey_run(&mut self, from: i64, to: i64) -> Result<(), StoreError> {
        self.conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
        self.conn.execute("UPDATE runs SET id = ?2 WHERE id = ?1", params![from, to])?;
        for table in ["steps", "history", "edits", "text_chunks", "search_pending"] {
            self.conn.execute(&format!("UPDATE {table} SET run_id = ?2 WHERE run_id = ?1"), params![from, to])?;
        }
        Ok(())
    }

    fn live_end_rows(
        &mut self,
        w: &mut SourceWrite,
        id: i64,
        run: &mut Run,
        fill: &mut dyn FnMut(usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut blobs = BlobWriter { tx: &self.conn, committed: &self.blob_ids, new_blobs: &mut w.new_blobs };
        insert_history(&self.conn, id, &run.history, &mut blobs)?;
        let (conn, packer) = (&self.conn, &mut self.packer);
        in_edit_batches(&mut run.edits, fill, &mut |batch| insert_edits(conn, id, batch, texts::Packer::ready(packer)?))
    }

    /// Negative `cache_size`: KiB; positive: pages.
    fn limit_pages(&self, kib: i64) -> Result<i64, StoreError> {
        let before: i64 = self.conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        self.conn.pragma_update(None, "cache_size", -kib.max(64))?;
        Ok(if before < 0 { -before } else { before * page / 1024 })
    }
}
