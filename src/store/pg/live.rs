//! A source written while it is read (`trajan PATH`) into PostgreSQL: the same steps as the
//! SQLite backend (`sqlite/live.rs` says why), each commit a transaction that takes the path's
//! lock again.

use super::Pg;
use super::write::{StepsOf, write_steps};
use crate::error::StoreError;
use crate::model::{Edit, Parsed, Run, Step, StepFlags};
use crate::store::backend::{LiveWrites, Writes};
use crate::store::sql::live;
use crate::store::texts;
use crate::store::write::{
    LiveRun, LiveWrite, RunCounts, SourceRecord, UNFINISHED, WriteStats, in_edit_batches, run_key,
};

impl LiveWrites for Pg {
    fn live_begin(&mut self, path: &str, kind: &str, format: &str, note: &str) -> Result<LiveWrite, StoreError> {
        let record = SourceRecord { path, kind, format, size: 0, hash: &UNFINISHED };
        let w = self.begin_source(&record)?;
        if let Err(e) = live::note_unfinished(self, w.source_id, note) {
            self.rollback_source();
            return Err(e);
        }
        Ok(LiveWrite { w, runs: Vec::new(), open: true })
    }

    fn live_run(&mut self, lw: &mut LiveWrite, run: &Run) -> Result<i64, StoreError> {
        self.live_tx(lw)?;
        let id = match lw.w.old_ids.get(&run_key(run)) {
            Some(&kept) => kept,
            None => self.ids("runs_id_seq", 1)?[0],
        };
        live::insert_run_row(self, lw.w.source_id, id, run, RunCounts::default())?;
        lw.w.instances.insert(run.instance_id.clone());
        lw.w.stats.runs += 1;
        lw.runs.push(LiveRun { id, counts: RunCounts::default(), changed: false });
        Ok(id)
    }

    fn live_steps(&mut self, lw: &mut LiveWrite, steps: &[Step], edits: &[Edit]) -> Result<(), StoreError> {
        self.live_tx(lw)?;
        let Some(run) = lw.runs.last_mut() else {
            return Err(StoreError::Inconsistent("steps written before their run".into()));
        };
        let part = StepsOf { run_id: run.id, first: run.counts.steps, steps, edits, history: &[] };
        self.with_packer(|pg, packer| write_steps(pg, &[part], packer, false))?;
        run.counts.add(RunCounts::of(steps.len(), edits));
        run.changed = true;
        lw.w.stats.steps += steps.len();
        Ok(())
    }

    fn live_commit(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError> {
        if !lw.open {
            return Ok(());
        }
        live::store_counts(self, &mut lw.runs)?;
        self.hold_path(lw.w.source_id)?;
        self.run("COMMIT")?;
        lw.open = false;
        Ok(())
    }

    fn live_finish(
        &mut self,
        mut lw: LiveWrite,
        record: &SourceRecord<'_>,
        ending: Parsed,
        fixups: &[(usize, usize, StepFlags)],
        edited: &[Vec<usize>],
        fill: &mut dyn FnMut(usize, usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<WriteStats, StoreError> {
        if let Err(e) = self.live_finish_inner(&mut lw, record, ending, fixups, edited, fill) {
            self.rollback_source();
            return Err(e);
        }
        self.commit_source(lw.w)
    }

    fn live_interrupt(&mut self, lw: LiveWrite) {
        if lw.open {
            self.rollback_source();
        }
        self.release_path();
    }

    fn live_abandon(&mut self, lw: LiveWrite) -> Result<(), StoreError> {
        if lw.open {
            self.rollback_source();
        }
        let removed = match live::path_of(self, lw.w.source_id) {
            Ok(Some(path)) => self.remove_source(&path).map(|_| ()),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        self.release_path();
        removed
    }

    /// The server holds the pages: nothing to limit here.
    fn limit_cache(&self, kib: i64) -> Result<i64, StoreError> {
        Ok(kib)
    }
}

impl Pg {
    /// A transaction for the next batch of a live write, under the path's lock.
    fn live_tx(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError> {
        if !lw.open {
            self.run("BEGIN")?;
            lw.open = true;
            let path = self.one("SELECT path FROM sources WHERE id = $1", &[&lw.w.source_id])?;
            self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&path.get::<_, &str>(0)])?;
        }
        Ok(())
    }

    /// Run `f` with the store's compressor (made on first use).
    pub(super) fn with_packer<T>(
        &mut self,
        f: impl FnOnce(&Pg, &mut texts::Packer) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut packer = match self.packer.take() {
            Some(p) => p,
            None => texts::Packer::new()?,
        };
        let done = f(self, &mut packer);
        self.packer = Some(packer);
        done
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
        lw.check_ending(&ending)?;
        live::drop_live_edits(self, &lw.runs)?;
        for (i, mut run) in std::mem::take(&mut ending.runs).into_iter().enumerate() {
            let live = &mut lw.runs[i];
            // A run keeps the id it had before a replace; its rows follow (ON UPDATE CASCADE).
            if let Some(&kept) = lw.w.old_ids.get(&run_key(&run))
                && kept != live.id
            {
                self.exec("UPDATE runs SET id = $2 WHERE id = $1", &[&live.id, &kept])?;
                live.id = kept;
            }
            let counts = RunCounts { steps: live.counts.steps, ..RunCounts::of(0, &run.edits) };
            live::update_run_row(self, live.id, &run, counts)?;
            let id = live.id;
            let history = StepsOf { run_id: id, first: 0, steps: &[], edits: &[], history: &run.history };
            self.with_packer(|pg, packer| write_steps(pg, &[history], packer, false))?;
            let mut edits = std::mem::take(&mut run.edits);
            self.with_packer(|pg, packer| {
                in_edit_batches(&mut edits, &mut |k, e| fill(i, k, e), &mut |batch| {
                    let part = StepsOf { run_id: id, first: 0, steps: &[], edits: batch, history: &[] };
                    write_steps(pg, &[part], packer, false)
                })
            })?;
            lw.w.instances.insert(run.instance_id);
        }
        live::change_flags(self, &lw.flag_changes(fixups, edited))?;
        live::finish_source(self, lw.w.source_id, record)?;
        self.append(&mut lw.w, &ending)?;
        Ok(())
    }
}
