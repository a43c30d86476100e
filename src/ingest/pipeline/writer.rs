//! The writer: the one thread that talks to the database. Each unit is one transaction; a
//! streamed unit's transaction stays open across its batches and commits at its end.

use super::worker::{Piece, Work};
use super::{Progress, UnitResult};
use crate::error::IngestError;
use crate::ingest::Outcome;
use crate::ingest::source::{self, Unit};
use crate::model::{Format, Parsed};
use crate::store::{SourceRecord, SourceWrite, Store};
use std::time::{Duration, Instant};

/// A streamed unit being written.
struct Open {
    format: Format,
    /// `None` once it failed (the transaction is rolled back; later batches are dropped).
    write: Option<SourceWrite>,
    error: Option<IngestError>,
    warnings: Vec<String>,
    bytes: u64,
}

pub struct Writer<'a> {
    store: &'a mut Store,
    progress: &'a dyn Progress,
    open: Option<Open>,
    /// Time spent in database work.
    pub busy: Duration,
}

impl<'a> Writer<'a> {
    pub fn new(store: &'a mut Store, progress: &'a dyn Progress) -> Writer<'a> {
        Writer { store, progress, open: None, busy: Duration::ZERO }
    }

    /// Handle a piece of `unit`; the unit's result once it is finished.
    pub fn handle(&mut self, unit: &Unit, piece: Piece) -> Option<(u64, UnitResult)> {
        let started = Instant::now();
        let done = match piece {
            Piece::Whole(work) => {
                let (bytes, result) = self.whole(unit, work);
                self.progress.advance(bytes, &unit.path);
                Some((bytes, result))
            }
            Piece::Begin { format, size, hash } => {
                let key = source::key(&unit.path);
                let record =
                    SourceRecord { path: &key, kind: unit.kind.name(), format: format.name(), size, hash: &hash };
                let (write, error) = match self.store.begin_source(&record) {
                    Ok(w) => (Some(w), None),
                    Err(source) => (None, Some(IngestError::Store { path: unit.path.clone(), source })),
                };
                self.open = Some(Open { format, write, error, warnings: Vec::new(), bytes: 0 });
                None
            }
            Piece::Batch(batch, bytes) => {
                self.batch(unit, batch, bytes);
                self.progress.advance(bytes, &unit.path);
                None
            }
            Piece::End(error) => Some(self.end(unit, error)),
        };
        self.busy += started.elapsed();
        done
    }

    fn batch(&mut self, unit: &Unit, batch: Parsed, bytes: u64) {
        let Some(open) = self.open.as_mut() else { return };
        open.bytes += bytes;
        let Some(write) = open.write.as_mut() else { return };
        match self.store.append(write, &batch) {
            Ok(()) => open.warnings.extend(batch.warnings),
            Err(source) => {
                self.store.rollback_source();
                open.write = None;
                open.error = Some(IngestError::Store { path: unit.path.clone(), source });
            }
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
                Outcome::Parsed { format, parsed } => {
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
