//! A source written while it is read (`trajan PATH`, `LiveWrites`), alike for both stores: its
//! steps committed in batches, so a reader (the TUI) sees them as they come, and its runs'
//! fields, history and final patch written at the end, with the same rows as `write_source`
//! writes. A run's own row is written when it begins and again when its document ends; each
//! commit makes the runs' counts visible. The step rows are each backend's
//! ([`WritePath::write_rows`]).
//!
//! Until it ends, the source's hash is [`UNFINISHED`] and its warnings say the read has not
//! finished: a write stopped by a crash is never taken for an unchanged file, and the next ingest
//! of that file replaces it. A write that fails or is cancelled is removed (`live_abandon`): the
//! database never keeps part of a file. A source seen before is replaced in the first batch's
//! transaction (readers see the old version or the new one's first steps), so a failed
//! replacement leaves neither.

use super::sources::{insert_run_row, update_run_row};
use super::write_path::{WritePath, commit_going_on};
use super::{Sql, args, id_list};
use crate::error::StoreError;
use crate::model::{Edit, Parsed, Run, Step, StepFlags};
use crate::store::backend::{LiveWrites, Writes};
use crate::store::write::{
    FlagChange, LiveRun, LiveWrite, RunCounts, SourceRecord, StepsOf, UNFINISHED, WriteStats, in_edit_batches, run_key,
};

/// The warning a source carries until its live write ends.
fn note_unfinished<S: Sql>(sql: &S, source_id: i64, note: &str) -> Result<(), StoreError> {
    let warnings = serde_json::Value::from(vec![note.to_string()]).to_string();
    sql.execute("UPDATE sources SET warnings = ?2 WHERE id = ?1", &args![source_id, &warnings])?;
    Ok(())
}

/// The counts of the runs that grew since the last commit, for the commit to show.
fn store_counts<S: Sql>(sql: &S, runs: &mut [LiveRun]) -> Result<(), StoreError> {
    for run in runs.iter_mut().filter(|r| r.changed) {
        let c = run.counts;
        sql.execute(
            "UPDATE runs SET step_count = ?2, edit_count = ?3, rejected_count = ?4 WHERE id = ?1",
            &args![run.id, c.steps as i64, c.edits as i64, c.rejected as i64],
        )?;
        run.changed = false;
    }
    Ok(())
}

/// The edits written with the runs' steps go: the end writes them all again, in the order (and so
/// with the ids) a whole write gives them.
fn drop_live_edits<S: Sql>(sql: &S, runs: &[LiveRun]) -> Result<(), StoreError> {
    for live in runs {
        sql.execute("DELETE FROM edits WHERE run_id = ?1", &args![live.id])?;
    }
    Ok(())
}

/// Steps whose flags changed once the document was read (run, step, change, in order): the steps
/// of a run that change alike in one statement (a run may have thousands of edited steps), a flag
/// added after it was set.
fn change_flags<S: Sql>(sql: &S, changes: &[(i64, i64, FlagChange)]) -> Result<(), StoreError> {
    let (set, add) = (
        format!("UPDATE steps SET flags = ?3 WHERE run_id = ?1 AND idx IN {}", S::in_list("?2")),
        format!("UPDATE steps SET flags = flags | ?3 WHERE run_id = ?1 AND idx IN {}", S::in_list("?2")),
    );
    for alike in changes.chunk_by(|a, b| (a.0, a.2) == (b.0, b.2)) {
        let (run_id, change) = (alike[0].0, alike[0].2);
        let steps: Vec<i64> = alike.iter().map(|c| c.1).collect();
        let (statement, bits) = match change {
            FlagChange::Set(bits) => (&set, bits),
            FlagChange::Add(bits) => (&add, bits),
        };
        sql.execute(statement, &args![run_id, &id_list(&steps), bits])?;
    }
    Ok(())
}

/// The source's row once its document is read: its format, real size and hash, no warning.
fn finish_source<S: Sql>(sql: &S, source_id: i64, record: &SourceRecord<'_>) -> Result<(), StoreError> {
    sql.execute(
        "UPDATE sources SET format = ?2, size = ?3, hash = ?4, warnings = NULL WHERE id = ?1",
        &args![source_id, record.format, record.size as i64, &record.hash[..]],
    )?;
    Ok(())
}

/// A write's next batch: its transaction open, under the path's lock.
fn batch<S: WritePath>(s: &mut S, lw: &mut LiveWrite) -> Result<(), StoreError> {
    if !lw.open {
        s.begin()?;
        lw.open = true;
        s.lock_path(&lw.w.path)?;
    }
    Ok(())
}

/// Unfinished until the end: a source read a step at a time carries [`UNFINISHED`] as its hash
/// and `note` as its warning, so a write stopped by a crash is never taken for an unchanged file
/// (the next ingest of it replaces it); a write that fails or is cancelled is removed whole.
impl<S: WritePath> LiveWrites for S {
    fn live_begin(&mut self, path: &str, kind: &str, format: &str, note: &str) -> Result<LiveWrite, StoreError> {
        let record = SourceRecord { path, kind, format, size: 0, hash: &UNFINISHED };
        let w = self.begin_source(&record)?;
        if let Err(e) = note_unfinished(self, w.source_id, note) {
            self.rollback_source();
            return Err(e);
        }
        Ok(LiveWrite { w, runs: Vec::new(), open: true })
    }

    fn live_run(&mut self, lw: &mut LiveWrite, run: &Run) -> Result<i64, StoreError> {
        batch(self, lw)?;
        let id = match lw.w.old_ids.get(&run_key(run)) {
            Some(&kept) => kept,
            None => self.fresh_run_id(&mut lw.w)?,
        };
        insert_run_row(self, lw.w.source_id, id, run, RunCounts::default())?;
        lw.w.instances.insert(run.instance_id.clone());
        lw.w.stats.runs += 1;
        lw.runs.push(LiveRun { id, counts: RunCounts::default(), changed: false });
        Ok(id)
    }

    fn live_steps(&mut self, lw: &mut LiveWrite, steps: &[Step], edits: &[Edit]) -> Result<(), StoreError> {
        batch(self, lw)?;
        let Some(run) = lw.runs.last_mut() else {
            return Err(StoreError::Inconsistent("steps written before their run".into()));
        };
        let part = StepsOf { steps, edits, first: run.counts.steps, ..StepsOf::none(run.id) };
        self.write_rows(&[part], true)?;
        run.counts.add(RunCounts::of(steps.len(), edits));
        run.changed = true;
        lw.w.stats.steps += steps.len();
        Ok(())
    }

    /// The path's lock is kept to the write's end (PostgreSQL).
    fn live_commit(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError> {
        if !lw.open {
            return Ok(());
        }
        store_counts(self, &mut lw.runs)?;
        commit_going_on(self, &lw.w)?;
        lw.open = false;
        Ok(())
    }

    /// A run's `edits` are all its edits, reconstructed once the whole run was read: they replace
    /// those written with its steps, in batches of about `EDIT_BATCH_BYTES` of text (their texts
    /// compress together, and memory stays bounded by a batch).
    fn live_finish(
        &mut self,
        mut lw: LiveWrite,
        record: &SourceRecord<'_>,
        mut ending: Parsed,
        fixups: &[(usize, usize, StepFlags)],
        edited: &[Vec<usize>],
        fill: &mut dyn FnMut(usize, usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<WriteStats, StoreError> {
        let mut end = || -> Result<(), StoreError> {
            batch(self, &mut lw)?;
            lw.check_ending(&ending)?;
            drop_live_edits(self, &lw.runs)?;
            for (i, mut run) in std::mem::take(&mut ending.runs).into_iter().enumerate() {
                let live = &mut lw.runs[i];
                // A run keeps the id it had before a replace (the instance may only be known now).
                if let Some(&kept) = lw.w.old_ids.get(&run_key(&run))
                    && kept != live.id
                {
                    self.rekey_run(live.id, kept)?;
                    live.id = kept;
                }
                let (id, counts) = (live.id, RunCounts { steps: live.counts.steps, ..RunCounts::of(0, &run.edits) });
                update_run_row(self, id, &run, counts)?;
                let history = StepsOf { history: &run.history, ..StepsOf::none(id) };
                self.write_rows(&[history], true)?;
                in_edit_batches(&mut run.edits, &mut |k, e| fill(i, k, e), &mut |edits| {
                    self.write_rows(&[StepsOf { edits, ..StepsOf::none(id) }], true)
                })?;
                lw.w.instances.insert(run.instance_id);
            }
            change_flags(self, &lw.flag_changes(fixups, edited))?;
            finish_source(self, lw.w.source_id, record)?;
            // Outcomes, predictions and tasks as a whole write adds them; the warnings with them.
            self.append(&mut lw.w, &ending)
        };
        if let Err(e) = end() {
            self.rollback_source();
            return Err(e);
        }
        self.commit_source(lw.w)
    }

    /// What was committed stays, marked unfinished (a whole write of the file replaces it,
    /// keeping its runs' ids); what was not is rolled back.
    fn live_interrupt(&mut self, _lw: LiveWrite) {
        self.rollback_source();
    }

    fn live_abandon(&mut self, lw: LiveWrite) -> Result<(), StoreError> {
        self.rollback_source();
        self.remove_source(&lw.w.path).map(drop)
    }

    fn limit_cache(&self, kib: i64) -> Result<i64, StoreError> {
        self.limit_pages(kib)
    }
}
