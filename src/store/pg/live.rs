//! A source written while it is read (`trajan PATH`) into PostgreSQL: `store::sql::live`
//! orchestrates (`sqlite/live.rs` says why it goes as it does); here are PostgreSQL's step rows,
//! each batch a transaction that takes the path's lock again, and the lock held to the end.

use super::Pg;
use super::write::{StepsOf, write_steps};
use crate::error::StoreError;
use crate::model::{Edit, Run, Step};
use crate::store::sql::live::LivePath;
use crate::store::texts;
use crate::store::write::{LiveRun, SourceWrite, in_edit_batches};

impl LivePath for Pg {
    fn live_open(&mut self, w: &SourceWrite) -> Result<(), StoreError> {
        self.run("BEGIN")?;
        let path = self.one("SELECT path FROM sources WHERE id = $1", &[&w.source_id])?;
        self.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7421))", &[&path.get::<_, &str>(0)])?;
        Ok(())
    }

    fn live_settle(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    fn live_close(&mut self, w: &mut SourceWrite) -> Result<(), StoreError> {
        self.hold_path(w.source_id)?;
        self.run("COMMIT")
    }

    fn live_release(&mut self) {
        self.release_path();
    }

    fn fresh_run_id(&mut self, _w: &mut SourceWrite) -> Result<i64, StoreError> {
        Ok(self.ids("runs_id_seq", 1)?[0])
    }

    fn live_step_rows(
        &mut self,
        _w: &mut SourceWrite,
        run: &LiveRun,
        steps: &[Step],
        edits: &[Edit],
    ) -> Result<(), StoreError> {
        let part = StepsOf { run_id: run.id, first: run.counts.steps, steps, edits, history: &[] };
        self.with_packer(|pg, packer| write_steps(pg, &[part], packer, false))
    }

    /// Its rows follow (`ON UPDATE CASCADE`).
    fn rekey_run(&mut self, from: i64, to: i64) -> Result<(), StoreError> {
        self.exec("UPDATE runs SET id = $2 WHERE id = $1", &[&from, &to])?;
        Ok(())
    }

    fn live_end_rows(
        &mut self,
        _w: &mut SourceWrite,
        id: i64,
        run: &mut Run,
        fill: &mut dyn FnMut(usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let history = StepsOf { run_id: id, first: 0, steps: &[], edits: &[], history: &run.history };
        self.with_packer(|pg, packer| write_steps(pg, &[history], packer, false))?;
        let mut edits = std::mem::take(&mut run.edits);
        self.with_packer(|pg, packer| {
            in_edit_batches(&mut edits, fill, &mut |batch| {
                let part = StepsOf { run_id: id, first: 0, steps: &[], edits: batch, history: &[] };
                write_steps(pg, &[part], packer, false)
            })
        })
    }

    /// The server holds the pages: nothing to limit here.
    fn limit_pages(&self, kib: i64) -> Result<i64, StoreError> {
        Ok(kib)
    }
}

impl Pg {
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
}
