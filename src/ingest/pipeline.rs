//! The ingest pipeline: discover units, read and parse them on worker threads, write them to
//! the store one transaction each, in discovery order.
//!
//! Workers run at most `WINDOW` units ahead of the writer, so memory stays bounded by a few
//! parsed files however large the input is.

use super::source::{self, Loaded, Unit};
use super::{Outcome, parse_loaded};
use crate::error::IngestError;
use crate::model::Format;
use crate::store::{SourceRecord, Store, WriteStats};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How many units may be read and parsed ahead of the one being written.
const WINDOW: usize = 3;

#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Skip detection and read every file as this format.
    pub forced: Option<Format>,
    /// Worker threads (0: one per core, at most 4).
    pub workers: usize,
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
    Skipped {
        path: PathBuf,
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
    /// Anything failed, or part of a file could not be read.
    pub fn has_problems(&self) -> bool {
        self.failures().next().is_some() || self.warnings().next().is_some()
    }
    pub fn totals(&self) -> WriteStats {
        let mut t = WriteStats::default();
        for r in &self.results {
            if let UnitResult::Ingested { stats, .. } = r {
                t.runs += stats.runs;
                t.steps += stats.steps;
                t.outcomes += stats.outcomes;
                t.predictions += stats.predictions;
            }
        }
        t
    }
}

/// Progress as the writer sees it; the CLI draws it.
pub trait Progress: Sync {
    fn start(&self, units: usize, bytes: u64);
    fn advance(&self, bytes: u64, path: &std::path::Path);
    fn finish(&self);
}

/// No progress display.
pub struct Silent;
impl Progress for Silent {
    fn start(&self, _: usize, _: u64) {}
    fn advance(&self, _: u64, _: &std::path::Path) {}
    fn finish(&self) {}
}

enum Work {
    Unchanged(u64),
    Parsed { loaded_size: u64, hash: [u8; 32], unit: Unit, outcome: Outcome },
    Failed(u64, IngestError),
}

pub fn ingest(store: &mut Store, paths: &[PathBuf], opts: &Options, progress: &dyn Progress) -> Report {
    let started = Instant::now();
    let found = source::discover(paths);
    let mut report = Report::default();
    report.results.extend(found.errors.into_iter().map(UnitResult::Failed));
    let known: HashMap<String, Vec<u8>> = match store.source_hashes() {
        Ok(k) => k,
        Err(e) => {
            report.results.push(UnitResult::Failed(IngestError::Store {
                path: paths.first().cloned().unwrap_or_default(),
                source: e,
            }));
            return report;
        }
    };
    let units = found.units;
    let total_bytes: u64 = units.iter().map(unit_size).sum();
    progress.start(units.len(), total_bytes);

    let workers = match opts.workers {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4),
        n => n,
    };
    let next = Mutex::new(0usize);
    let written = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Work)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (units, next, written, known) = (&units, &next, &written, &known);
            scope.spawn(move || {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap_or_else(|p| p.into_inner());
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(unit) = units.get(i) else { break };
                    // Wait until the writer is within WINDOW of this unit.
                    let (lock, cv) = written;
                    let mut w = lock.lock().unwrap_or_else(|p| p.into_inner());
                    while i >= *w + WINDOW {
                        w = cv.wait(w).unwrap_or_else(|p| p.into_inner());
                    }
                    drop(w);
                    // A parser bug must not take the run down (or leave the writer waiting for
                    // this unit forever): a panic becomes this unit's error.
                    let work = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        process(unit.clone(), known, opts.forced)
                    }))
                    .unwrap_or_else(|panic| {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown panic".to_string());
                        let message = format!("internal error while reading this file (please report it): {what}");
                        Work::Failed(unit_size(unit), IngestError::parse(&unit.path, None, message))
                    });
                    if tx.send((i, work)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // The writer: results are written in discovery order.
        let mut pending: BTreeMap<usize, Work> = BTreeMap::new();
        let mut expect = 0usize;
        for (i, work) in rx {
            pending.insert(i, work);
            while let Some(work) = pending.remove(&expect) {
                let unit = &units[expect];
                let t = Instant::now();
                let (bytes, result) = write(store, unit, work);
                report.write_time += t.elapsed();
                report.bytes += bytes;
                progress.advance(bytes, &unit.path);
                report.results.push(result);
                expect += 1;
                let (lock, cv) = &written;
                *lock.lock().unwrap_or_else(|p| p.into_inner()) = expect;
                cv.notify_all();
            }
        }
    });
    progress.finish();
    report.elapsed = started.elapsed();
    report
}

fn unit_size(u: &Unit) -> u64 {
    let files: Vec<&PathBuf> = if u.members.is_empty() { vec![&u.path] } else { u.members.iter().collect() };
    files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
}

fn process(unit: Unit, known: &HashMap<String, Vec<u8>>, forced: Option<Format>) -> Work {
    let size = unit_size(&unit);
    let loaded: Loaded = match source::load(unit) {
        Ok(l) => l,
        Err(e) => return Work::Failed(size, e),
    };
    let key = loaded.unit.path.to_string_lossy();
    if known.get(key.as_ref()).is_some_and(|h| h.as_slice() == loaded.hash) {
        return Work::Unchanged(loaded.size);
    }
    match parse_loaded(&loaded, forced) {
        Ok(outcome) => Work::Parsed { loaded_size: loaded.size, hash: loaded.hash, unit: loaded.unit, outcome },
        Err(e) => Work::Failed(loaded.size, e),
    }
}

fn write(store: &mut Store, unit: &Unit, work: Work) -> (u64, UnitResult) {
    let path = unit.path.clone();
    match work {
        Work::Failed(bytes, e) => (bytes, UnitResult::Failed(e)),
        Work::Unchanged(bytes) => {
            let warnings = store.source_warnings(&path.to_string_lossy()).unwrap_or_default();
            (bytes, UnitResult::Unchanged { path, warnings })
        }
        Work::Parsed { loaded_size, hash, unit, outcome } => match outcome {
            Outcome::Skipped => (loaded_size, UnitResult::Skipped { path }),
            Outcome::Parsed { format, parsed } => {
                let key = unit.path.to_string_lossy();
                let record = SourceRecord {
                    path: &key,
                    kind: unit.kind.name(),
                    format: format.name(),
                    size: loaded_size,
                    hash: &hash,
                };
                match store.write_source(&record, &parsed) {
                    Ok(stats) => (loaded_size, UnitResult::Ingested { path, format, stats, warnings: parsed.warnings }),
                    Err(source) => (loaded_size, UnitResult::Failed(IngestError::Store { path, source })),
                }
            }
        },
    }
}
