//! Writing sources, alike for both stores: a transaction per source (a savepoint of a batch's),
//! a source written in parts committed as it goes, a batch committed once, a source removed.
//! What each backend does itself is [`WritePath`]'s (`write_path.rs`): the runs' rows
//! (`sqlite/write.rs`: prepared statements in a loop; `pg/write.rs`: `COPY`), new runs' ids, and
//! what it keeps beside the transaction.

use super::args;
use super::sources::{self, append_evaluations, insert_run_row, open_source, settle_source};
use super::write_path::{Committed, WritePath, commit_going_on};
use crate::error::StoreError;
use crate::model::Parsed;
use crate::store::backend::Writes;
use crate::store::write::{RunCounts, SourceRecord, SourceWrite, StepsOf, WriteStats, run_key};
use std::collections::HashMap;

impl<S: WritePath> Writes for S {
    fn source_hashes(&self) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        sources::source_hashes(self)
    }

    fn source_warnings(&self, path: &str) -> Result<Vec<String>, StoreError> {
        sources::source_warnings(self, path)
    }

    fn source_fingerprint(&self, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        sources::source_fingerprint(self, path)
    }

    /// Inside a batch whose transaction an earlier error rolled back, nothing is written until
    /// the batch is committed (and reported lost).
    fn begin_source(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError> {
        if self.writing().batch.get() {
            if !self.in_transaction() {
                return Err(StoreError::BatchRolledBack("an error in an earlier file rolled the batch back".into()));
            }
            self.run("SAVEPOINT source")?;
        } else {
            self.begin()?;
        }
        let begun = open_source(self, src);
        if begun.is_err() {
            self.rollback_source();
        }
        begun
    }

    fn append(&mut self, w: &mut SourceWrite, parsed: &Parsed) -> Result<(), StoreError> {
        let mut parts = Vec::with_capacity(parsed.runs.len());
        for run in &parsed.runs {
            let id = match w.old_ids.get(&run_key(run)) {
                Some(&kept) => kept,
                None => self.fresh_run_id(w)?,
            };
            insert_run_row(self, w.source_id, id, run, RunCounts::of(run.steps.len(), &run.edits))?;
            parts.push(StepsOf::run(id, run));
            w.instances.insert(run.instance_id.clone());
            w.stats.runs += 1;
            w.stats.steps += run.steps.len();
        }
        self.write_rows(&parts, false)?;
        append_evaluations(self, w, parsed)
    }

    fn commit_source(&mut self, w: SourceWrite) -> Result<WriteStats, StoreError> {
        let parted = self.writing().parted.get() == Some(w.source_id);
        let mut finish = || -> Result<(), StoreError> {
            settle_source(self, &w, parted)?;
            self.before_commit(&w, false)?;
            if self.writing().batch.get() { self.run("RELEASE source") } else { self.commit() }
        };
        if let Err(e) = finish() {
            self.rollback_source();
            return Err(e);
        }
        self.writing().parted.set(None);
        self.committed(Committed::Source);
        Ok(w.stats)
    }

    /// A source stored before is not written in parts: its old version stays until the new one
    /// commits, in one switch (readers see the old one until then, and a write that fails leaves
    /// it as it was).
    fn commit_part(&mut self, w: &mut SourceWrite) -> Result<(), StoreError> {
        if self.writing().batch.get() || w.stats.replaced {
            return Ok(());
        }
        if self.writing().parted.get().is_none() {
            self.execute("UPDATE sources SET hash = ?2 WHERE id = ?1", &args![w.source_id, &[][..]])?;
            self.writing().parted.set(Some(w.source_id));
        }
        commit_going_on(self, w)?;
        self.begin()?;
        self.lock_path(&w.path)
    }

    /// Parts committed before ([`Writes::commit_part`]) are removed with their source.
    fn rollback_source(&mut self) {
        let batch = self.writing().batch.get();
        let mut lost = batch && !self.in_transaction();
        if self.in_transaction() {
            if !batch {
                self.rollback();
            } else if self.run("ROLLBACK TO source").and_then(|()| self.run("RELEASE source")).is_err() {
                self.rollback();
                lost = true;
            }
        }
        if let Some(id) = self.writing().parted.take() {
            sources::remove_parts(self, id);
        }
        self.rolled_back(lost);
    }

    /// Each source a savepoint, rolled back alone when it fails; the batch committed once (a
    /// commit per source costs the writer about a fifth of its time on small files). Nothing of
    /// the batch is durable, or seen by other connections, before it commits.
    fn begin_batch(&mut self) -> Result<(), StoreError> {
        if !self.writing().batch.get() {
            self.begin()?;
            self.writing().batch.set(true);
        }
        Ok(())
    }

    fn in_batch(&self) -> bool {
        self.writing().batch.get()
    }

    /// An error may have rolled the whole transaction back (SQLite's full disk, a lost
    /// connection): the sources committed to the batch are gone with it.
    fn commit_batch(&mut self) -> Result<(), StoreError> {
        if !self.writing().batch.replace(false) {
            return Ok(());
        }
        if !self.in_transaction() {
            self.rolled_back(true);
            return Err(StoreError::BatchRolledBack("an error in one of its files rolled the transaction back".into()));
        }
        if let Err(e) = self.commit() {
            self.rollback();
            self.rolled_back(true);
            return Err(e);
        }
        self.committed(Committed::Batch);
        Ok(())
    }

    fn remove_source(&mut self, path: &str) -> Result<bool, StoreError> {
        self.begin()?;
        match sources::remove(self, path) {
            Ok(found) => {
                self.commit()?;
                Ok(found)
            }
            Err(e) => {
                self.rollback();
                self.rolled_back(false);
                Err(e)
            }
        }
    }

    fn runs_of_sources(&self, paths: &[String]) -> Result<Vec<i64>, StoreError> {
        sources::runs_of_sources(self, paths)
    }
}
