//! The ingest pipeline: discover units, read and parse them on worker threads (`worker`),
//! write them to the store one transaction each, in discovery order (`writer`).
//!
//! Workers run at most `WINDOW` units ahead of the writer, so memory stays bounded by a few
//! parsed files however large the input is. Large JSON-lines files are streamed: read and
//! written in batches, never held whole. Large mini-swe-agent documents are read
//! a step at a time and written as they are read, in one transaction (`document`): the writer
//! works beside the parse.

mod document;
mod piece;
pub mod problems;
#[cfg(test)]
mod tests;
mod worker;
mod writer;

use super::skip::{Skip, SkipKind};
use super::source;
use crate::error::IngestError;
use crate::model::Format;
use crate::store::{Store, WriteStats};
use piece::Piece;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How many units may be read and parsed ahead of the one being written.
const WINDOW: usize = 3;
/// JSON-lines files at least this large are streamed; mini-swe-agent documents this large are
/// read a step at a time and written as they are read.
pub const STREAM_BYTES: u64 = 32 << 20;
/// A streamed file is written in batches of about this much input.
pub const BATCH_BYTES: u64 = 16 << 20;
/// A streamed file is committed in parts of about this much input: other readers see its runs
/// as they are written, and a commit costs little against 64 MB of writing.
pub const PART_BYTES: u64 = 64 << 20;
/// The largest JSON document held in memory: a file read whole (every file that is not streamed
/// JSON lines), or one line of a streamed file. A larger file is an error naming its size and
/// this limit, without being read; a larger line is skipped with a warning naming it.
pub const MAX_DOCUMENT: u64 = 2 << 30;

#[derive(Debug, Clone)]
pub struct Options {
    /// Skip detection and read every file as this format.
    pub forced: Option<Format>,
    /// Worker threads (0: one per core, at most 4).
    pub workers: usize,
    /// JSON-lines files at least this large are streamed, and mini-swe-agent documents read a
    /// step at a time (tests set it low).
    pub stream_bytes: u64,
    /// Input per batch of a streamed file.
    pub batch_bytes: u64,
    /// Input of a streamed file per committed transaction (`Store::commit_part`).
    pub part_bytes: u64,
    /// The largest file read whole, and the longest line of a streamed file ([`MAX_DOCUMENT`]).
    pub max_document: u64,
    /// Bounds of a dataset's Parquet shard read (its row groups).
    pub parquet: crate::ingest::dataset::parquet::Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            forced: None,
            workers: 0,
            stream_bytes: STREAM_BYTES,
            batch_bytes: BATCH_BYTES,
            part_bytes: PART_BYTES,
            max_document: MAX_DOCUMENT,
            parquet: crate::ingest::dataset::parquet::Limits::default(),
        }
    }
}

/// What happened to one unit.
#[derive(Debug)]
pub enum UnitResult {
    Ingested {
        path: PathBuf,
        format: Format,
        stats: WriteStats,
        warnings: Vec<String>,
    },
    /// Same content as already stored. Problems found when it was ingested are repeated.
    Unchanged {
        path: PathBuf,
        warnings: Vec<String>,
    },
    /// Not an input (a README, a run's metadata, an image), and why.
    Skipped {
        path: PathBuf,
        skip: Skip,
    },
    Failed(IngestError),
}

#[derive(Debug, Default)]
pub struct Report {
    pub results: Vec<UnitResult>,
    pub bytes: u64,
    pub elapsed: Duration,
    /// Time the writer spent in database transactions (the rest is reading and parsing, which
    /// overlaps with it on the worker threads).
    pub write_time: Duration,
    /// Documents written as they were read, a step at a time (`document`).
    pub stepwise: usize,
}

impl Report {
    pub fn count(&self, f: impl Fn(&UnitResult) -> bool) -> usize {
        self.results.iter().filter(|r| f(r)).count()
    }
    pub fn ingested(&self) -> usize {
        self.count(|r| matches!(r, UnitResult::Ingested { .. }))
    }
    pub fn unchanged(&self) -> usize {
        self.count(|r| matches!(r, UnitResult::Unchanged { .. }))
    }
    pub fn skipped(&self) -> usize {
        self.count(|r| matches!(r, UnitResult::Skipped { .. }))
    }
    pub fn failures(&self) -> impl Iterator<Item = &IngestError> {
        self.results.iter().filter_map(|r| match r {
            UnitResult::Failed(e) => Some(e),
            _ => None,
        })
    }
    pub fn warnings(&self) -> impl Iterator<Item = &String> {
        self.results.iter().flat_map(|r| match r {
            UnitResult::Ingested { warnings, .. } | UnitResult::Unchanged { warnings, .. } => warnings.as_slice(),
            _ => &[],
        })
    }
    /// How many files were skipped, by kind, in the order [`SkipKind`] lists them.
    pub fn skipped_by_kind(&self) -> BTreeMap<SkipKind, usize> {
        let mut counts = BTreeMap::new();
        for r in &self.results {
            if let UnitResult::Skipped { skip, .. } = r {
                *counts.entry(skip.kind).or_insert(0) += 1;
            }
        }
        counts
    }
    pub fn totals(&self) -> WriteStats {
        let mut t = WriteStats::default();
        for r in &self.results {
            if let UnitResult::Ingested { stats, .. } = r {
                t.runs += stats.runs;
                t.steps += stats.steps;
                t.outcomes += stats.outcomes;
                t.predictions += stats.predictions;
                t.tasks += stats.tasks;
            }
        }
        t
    }
}

/// Progress as the writer sees it; the CLI draws it.
pub trait Progress: Sync {
    fn start(&self, units: usize, bytes: u64);
    fn advance(&self, bytes: u64, path: &std::path::Path);
    /// The unit the writer waits for or writes now (a slow file shows as the current one).
    fn current(&self, _path: &std::path::Path) {}
    fn finish(&self);
}

/// No progress display.
pub struct Silent;
impl Progress for Silent {
    fn start(&self, _: usize, _: u64) {}
    fn advance(&self, _: u64, _: &std::path::Path) {}
    fn finish(&self) {}
}

pub fn ingest(store: &mut Store, paths: &[PathBuf], opts: &Options, progress: &dyn Progress) -> Report {
    let started = Instant::now();
    let found = source::discover(paths);
    let mut report = Report::default();
    report.results.extend(found.errors.into_iter().map(UnitResult::Failed));
    report.results.extend(found.passed.into_iter().map(|(path, skip)| UnitResult::Skipped { path, skip }));
    let known: HashMap<String, Vec<u8>> = match store.source_hashes() {
        Ok(k) => k,
        Err(e) => {
            let path = paths.first().cloned().unwrap_or_default();
            report.results.push(UnitResult::Failed(IngestError::Store { path, source: e }));
            return report;
        }
    };
    let units = found.units;
    let total_bytes: u64 = units.iter().map(worker::unit_size).sum();
    progress.start(units.len(), total_bytes);

    let workers = match opts.workers {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4),
        n => n,
    };
    let shared = worker::Shared {
        units: &units,
        known: &known,
        opts,
        next: Mutex::new(0),
        written: (Mutex::new(0), Condvar::new()),
    };
    // Bounded: a streaming worker waits for the writer rather than filling memory.
    let (tx, rx) = mpsc::sync_channel::<(usize, Piece)>(4);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let shared = &shared;
            scope.spawn(move || worker::run(shared, tx));
        }
        drop(tx);
        // The writer: units are written in discovery order; pieces of later units wait.
        let mut pending: BTreeMap<usize, VecDeque<Piece>> = BTreeMap::new();
        let mut expect = 0usize;
        let mut writer = writer::Writer::new(store, progress, opts.part_bytes);
        if let Some(first) = units.first() {
            progress.current(&first.path);
        }
        loop {
            let (i, piece) = match rx.try_recv() {
                Ok(next) => next,
                Err(mpsc::TryRecvError::Disconnected) => break,
                Err(mpsc::TryRecvError::Empty) => {
                    // Nothing to write until a worker sends more: commit what is written.
                    writer.commit();
                    for (bytes, result) in writer.results() {
                        report.bytes += bytes;
                        report.results.push(result);
                    }
                    match rx.recv() {
                        Ok(next) => next,
                        Err(_) => break,
                    }
                }
            };
            pending.entry(i).or_default().push_back(piece);
            while let Some(piece) = pending.get_mut(&expect).and_then(VecDeque::pop_front) {
                let Some(unit) = units.get(expect) else { break };
                if writer.handle(unit, piece) {
                    pending.remove(&expect);
                    expect += 1;
                    // The unit written next is the one the display names while it comes.
                    if let Some(next) = units.get(expect) {
                        progress.current(&next.path);
                    }
                    let (lock, cv) = &shared.written;
                    *lock.lock().unwrap_or_else(|p| p.into_inner()) = expect;
                    cv.notify_all();
                }
            }
        }
        writer.commit();
        for (bytes, result) in writer.results() {
            report.bytes += bytes;
            report.results.push(result);
        }
        report.write_time = writer.busy;
        report.stepwise = writer.stepwise;
    });
    progress.finish();
    report.elapsed = started.elapsed();
    report
}
