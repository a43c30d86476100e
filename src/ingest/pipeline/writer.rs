//! The writer: the one thread that talks to the database. Units read whole are written in
//! batches (`Store::begin_batch`): each unit a savepoint, rolled back alone when it fails, the
//! batch committed when the writer would otherwise wait for the workers, or when it holds
//! [`BATCH_UNITS`] units or [`BATCH_INPUT`] bytes. A unit's result is given out once its batch is
//! committed (a failed commit fails every unit of the batch). A streamed unit is written in
//! transactions of its own, each committed once it holds about [`Writer::part_bytes`] of input
//! (`Store::commit_part`), so other readers see a gigabyte file's runs as they are written. A
//! document read a step at a time (`document`) is written in one transaction of its own
//! (`Store::live_begin` to `live_finish`), its runs and steps as they come.

use super::piece::{DocPiece, Piece, Work};
use super::{Progress, UnitResult};
use crate::error::{IngestError, StoreError};
use crate::ingest::Outcome;
use crate::ingest::source::{self, Unit};
use crate::ingest::stream_doc::replay;
use crate::model::{Format, Parsed};
use crate::store::{LiveWrite, SourceRecord, SourceWrite, Store};
use std::time::{Duration, Instant};

/// Units gathered in one batch at most.
const BATCH_UNITS: usize = 64;
/// Input bytes gathered in one batch at most.
const BATCH_INPUT: u64 = 64 << 20;

/// A streamed unit being written.
struct Open {
    format: Format,
    /// `None` once it failed (the transaction is rolled back; later batches are dropped).
    write: Option<SourceWrite>,
    error: Option<IngestError>,
    warnings: Vec<String>,
    bytes: u64,
    /// Input written since the last part was committed.
    uncommitted: u64,
}

/// KiB of database pages the writer keeps while it writes a document as it is read.
const LIVE_CACHE_KIB: i64 = 2 * 1024;

/// A document being written as it is read.
struct Doc {
    /// `None` once it failed (rolled back; later pieces are dropped).
    lw: Option<LiveWrite>,
    error: Option<IngestError>,
}

pub struct Writer<'a> {
    store: &'a mut Store,
    progress: &'a dyn Progress,
    open: Option<Open>,
    doc: Option<Doc>,
    /// Documents written as they were read.
    pub stepwise: usize,
    /// Finished units whose batch is not committed yet, with their input bytes.
    batched: Vec<(u64, UnitResult)>,
    batched_bytes: u64,
    /// Finished units whose results may be given out.
    done: Vec<(u64, UnitResult)>,
    /// Time spent in database work.
    pub busy: Duration,
    /// Input of a streamed unit per committed part.
    part_bytes: u64,
    /// The page cache's limit before the document being written as it is read.
    cache_before: Option<i64>,
}

impl<'a> Writer<'a> {
    pub fn new(store: &'a mut Store, progress: &'a dyn Progress, part_bytes: u64) -> Writer<'a> {
        Writer {
            part_bytes,
            store,
            progress,
            open: None,
            doc: None,
            stepwise: 0,
            batched: Vec::new(),
            batched_bytes: 0,
            done: Vec::new(),
            busy: Duration::ZERO,
            cache_before: None,
        }
    }

    /// Handle a piece of `unit`; true once the unit is finished (its result comes from
    /// [`Writer::results`] once it is committed).
    pub fn handle(&mut self, unit: &Unit, piece: Piece) -> bool {
        let started = Instant::now();
        let finished = match piece {
            Piece::Whole(work) => {
                let (bytes, result) = self.whole(unit, work);
                self.progress.advance(bytes, &unit.path);
                self.batched_bytes += bytes;
                self.batched.push((bytes, result));
                if self.batched.len() >= BATCH_UNITS || self.batched_bytes >= BATCH_INPUT {
                    self.commit();
                }
                true
            }
            Piece::Begin { format, size, hash } => {
                // A streamed unit is a transaction of its own.
                self.commit();
                let key = source::key(&unit.path);
                let record =
                    SourceRecord { path: &key, kind: unit.kind.name(), format: format.name(), size, hash: &hash };
                let (write, error) = match self.store.begin_source(&record) {
                    Ok(w) => (Some(w), None),
                    Err(source) => (None, Some(IngestError::Store { path: unit.path.clone(), source })),
                };
                self.open = Some(Open { format, write, error, warnings: Vec::new(), bytes: 0, uncommitted: 0 });
                false
            }
            Piece::Batch(mut batch, bytes) => {
                batch.refuse_absurd_costs(&unit.path);
                self.batch(unit, batch, bytes);
                self.progress.advance(bytes, &unit.path);
                false
            }
            Piece::End(error) => {
                // A worker that panicked while reading a document: what was written goes.
                self.retract();
                let result = self.end(unit, error);
                self.done.push(result);
                true
            }
            Piece::Doc(piece) => self.doc(unit, piece),
        };
        self.busy += started.elapsed();
        finished
    }

    /// Commit the open batch: done before the writer waits for the workers, so no lock is held
    /// while nothing is written.
    pub fn commit(&mut self) {
        let started = Instant::now();
        let committed = self.store.commit_batch();
        self.busy += started.elapsed();
        let units = std::mem::take(&mut self.batched);
        self.batched_bytes = 0;
        match committed {
            Ok(()) => self.done.extend(units),
            Err(e) => {
                let message = e.to_string();
                self.done.extend(units.into_iter().map(|(bytes, result)| match result {
                    UnitResult::Ingested { path, .. } => {
                        let source = crate::error::StoreError::BatchRolledBack(message.clone());
                        (bytes, UnitResult::Failed(IngestError::Store { path, source }))
                    }
                    other => (bytes, other),
                }));
            }
        }
    }

    /// The results of the units finished and committed since the last call, in order.
    pub fn results(&mut self) -> Vec<(u64, UnitResult)> {
        std::mem::take(&mut self.done)
    }

    fn batch(&mut self, unit: &Unit, batch: Parsed, bytes: u64) {
        let Some(open) = self.open.as_mut() else { return };
        open.bytes += bytes;
        let Some(write) = open.write.as_mut() else { return };
        open.uncommitted += bytes;
        let part = open.uncommitted >= self.part_bytes;
        let written = self.store.append(write, &batch).and_then(|()| match part {
            true => self.store.commit_part(write),
            false => Ok(()),
        });
        if part {
            open.uncommitted = 0;
        }
        match written {
            Ok(()) => open.warnings.extend(batch.warnings),
            Err(source) => {
                self.store.rollback_source();
                open.write = None;
                open.error = Some(IngestError::Store { path: unit.path.clone(), source });
            }
        }
    }

    /// A piece of a document read a step at a time; true once the document is written.
    fn doc(&mut self, unit: &Unit, piece: DocPiece) -> bool {
        match piece {
            DocPiece::Run(run) => {
                if self.doc.is_none() {
                    // A document is a transaction of its own.
                    self.commit();
                    let key = source::key(&unit.path);
                    let format = run.format.map_or("unknown", |f| f.name());
                    let note = format!("{}: the ingest of this file did not finish", unit.path.display());
                    // Its writes append (steps, chunks, index segments in order): a small
                    // cache writes as fast, and memory holds the document being read instead.
                    self.cache_before = self.store.limit_cache(LIVE_CACHE_KIB).ok();
                    self.doc = Some(match self.store.live_begin(&key, unit.kind.name(), format, &note) {
                        Ok(lw) => Doc { lw: Some(lw), error: None },
                        Err(source) => {
                            Doc { lw: None, error: Some(IngestError::Store { path: unit.path.clone(), source }) }
                        }
                    });
                }
                self.doc_write(unit, |store, lw| store.live_run(lw, &run).map(|_| ()));
                false
            }
            DocPiece::Steps(steps) => {
                self.doc_write(unit, |store, lw| store.live_steps(lw, &steps, &[]));
                false
            }
            DocPiece::Retract => {
                self.retract();
                false
            }
            DocPiece::End(mut doc, done) => {
                doc.ending.parsed.refuse_absurd_costs(&unit.path);
                self.restore_cache();
                let (path, size, format) = (unit.path.clone(), doc.size, doc.format);
                let result = match self.doc.take() {
                    Some(Doc { lw: Some(lw), .. }) => {
                        let warnings = doc.ending.parsed.warnings.clone();
                        match replay::write_end(self.store, lw, &source::key(&path), *doc, done) {
                            Ok(stats) => {
                                self.stepwise += 1;
                                UnitResult::Ingested { path, format, stats, warnings }
                            }
                            Err(source) => UnitResult::Failed(IngestError::Store { path, source }),
                        }
                    }
                    Some(Doc { error: Some(e), .. }) => UnitResult::Failed(e),
                    _ => UnitResult::Failed(IngestError::parse(&path, None, "the write was abandoned")),
                };
                self.progress.advance(size, &unit.path);
                self.done.push((size, result));
                true
            }
        }
    }

    /// Write to the open document; a failure rolls it back and is kept for its end.
    fn doc_write(&mut self, unit: &Unit, write: impl FnOnce(&mut Store, &mut LiveWrite) -> Result<(), StoreError>) {
        let Some(doc) = self.doc.as_mut() else { return };
        let Some(lw) = doc.lw.as_mut() else { return };
        if let Err(source) = write(self.store, lw) {
            if let Some(lw) = doc.lw.take() {
                self.store.live_interrupt(lw);
            }
            doc.error = Some(IngestError::Store { path: unit.path.clone(), source });
        }
    }

    /// The page cache as it was before the document written as it is read.
    fn restore_cache(&mut self) {
        if let Some(kib) = self.cache_before.take() {
            let _ = self.store.limit_cache(kib);
        }
    }

    /// Roll back the document being written, if any: nothing of it was committed.
    fn retract(&mut self) {
        self.restore_cache();
        if let Some(Doc { lw: Some(lw), .. }) = self.doc.take() {
            self.store.live_interrupt(lw);
        }
    }

    fn end(&mut self, unit: &Unit, error: Option<IngestError>) -> (u64, UnitResult) {
        let path = unit.path.clone();
        let Some(open) = self.open.take() else {
            // A worker failed before it began (a panic): nothing was opened.
            let e = error.unwrap_or_else(|| IngestError::parse(&path, None, "ended before it began"));
            return (0, UnitResult::Failed(e));
        };
        let failure = error.or(open.error);
        let result = match (open.write, failure) {
            (Some(_), Some(e)) => {
                self.store.rollback_source();
                UnitResult::Failed(e)
            }
            (None, Some(e)) => UnitResult::Failed(e),
            (None, None) => UnitResult::Failed(IngestError::parse(&path, None, "the write was abandoned")),
            (Some(w), None) => match self.store.commit_source(w) {
                Ok(stats) => UnitResult::Ingested { path, format: open.format, stats, warnings: open.warnings },
                Err(source) => UnitResult::Failed(IngestError::Store { path, source }),
            },
        };
        (open.bytes, result)
    }

    fn whole(&mut self, unit: &Unit, work: Work) -> (u64, UnitResult) {
        let path = unit.path.clone();
        match work {
            Work::Failed(bytes, e) => (bytes, UnitResult::Failed(e)),
            Work::Unchanged(bytes) => {
                let warnings = self.store.source_warnings(&source::key(&path)).unwrap_or_default();
                (bytes, UnitResult::Unchanged { path, warnings })
            }
            Work::Parsed { size, hash, outcome } => match outcome {
                Outcome::Skipped(skip) => (size, UnitResult::Skipped { path, skip }),
                Outcome::Parsed { format, mut parsed } => {
                    parsed.refuse_absurd_costs(&unit.path);
                    if let Err(source) = self.store.begin_batch() {
                        return (size, UnitResult::Failed(IngestError::Store { path, source }));
                    }
                    let key = source::key(&unit.path);
                    let record =
                        SourceRecord { path: &key, kind: unit.kind.name(), format: format.name(), size, hash: &hash };
                    match self.store.write_source(&record, &parsed) {
                        Ok(stats) => (size, UnitResult::Ingested { path, format, stats, warnings: parsed.warnings }),
                        Err(source) => (size, UnitResult::Failed(IngestError::Store { path, source })),
                    }
                }
            },
        }
    }
}
