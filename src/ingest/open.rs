//! `trajan PATH...`: ingest the named files and folders while the reviewer already reads them.
//!
//! One file holding a SWE-agent or mini-swe-agent document is read a step at a time on a thread
//! of its own ([`stream_doc::read`]) and written as it is read, in batches each committed
//! ([`Store::live_begin`]): its first steps are in the database a few milliseconds after the
//! read starts, and the rest follow while the reviewer reads them. Anything else (several
//! paths, a folder, another format) goes through the ingest pipeline, as `trajan ingest` would;
//! so does a document the step reader does not take or stops on (bad JSON, Python's `NaN`, a
//! file cut mid-write), after what it had written is removed (or, for a file stored before,
//! replaced by the pipeline's write, which keeps the runs' ids). Either way the database ends as
//! `trajan ingest` leaves it.
//! A file stored before with the same size and hash is not read again.

use super::pipeline::{self, Progress, Report, UnitResult};
use super::source::{self, UnitKind};
use super::stream_doc::index::{self, Index};
use super::stream_doc::read::{self, Document};
use super::stream_doc::replay::{self, Alongside, Dirs};
use super::stream_doc::skim::Skim;
use super::stream_doc::{ReadError, StepSink};
use crate::analysis::reconstruct::{Exec, Reconstructed};
use crate::error::IngestError;
use crate::model::{Edit, Format, Run, Step};
use crate::store::{LiveWrite, Store, UNFINISHED};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a file read a step at a time commits what it has written.
#[derive(Debug, Clone, Copy)]
pub struct Batches {
    /// The first commit: once this many steps are written, or `first_wait` after the first.
    pub first_steps: usize,
    pub first_wait: Duration,
    /// Later commits: this long after the one before.
    pub interval: Duration,
    /// Also commit every this many steps (tests: several batches from a small file).
    pub every: Option<usize>,
}

impl Default for Batches {
    fn default() -> Batches {
        Batches {
            first_steps: 48,
            first_wait: Duration::from_millis(20),
            interval: Duration::from_millis(250),
            every: None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How the pipeline reads what is not read a step at a time.
    pub pipeline: pipeline::Options,
    pub batches: Batches,
    /// Called on each thread that reads or writes a file step by step, once its first steps
    /// are committed (`trajan FILE` lowers their priority then: the first screen comes first,
    /// the keys after it).
    pub after_first: Option<fn()>,
}

/// What the reading has reached; for the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A run's first steps are committed: it can be opened.
    Begun(i64),
    /// A file read a step at a time: bytes read of its size, steps committed of each run begun.
    Grown { bytes: u64, size: u64, runs: Vec<(i64, usize)> },
    /// The pipeline: units done of all, bytes of the total.
    Units { done: usize, units: usize, bytes: u64, size: u64 },
    /// The step-by-step read stopped (why); the file is read whole.
    Whole(String),
    /// The file read to its end, read again for its shell edits: bytes of its size, and the
    /// runs' steps (all stored).
    Edits { bytes: u64, size: u64, runs: Vec<(i64, usize)> },
    /// The file was skimmed: any step of run `run` can be read before the reading gets there.
    Indexed { run: i64, peek: Peek },
}

/// Any step of a file being read a step at a time, before the reading stores it: the file
/// skimmed once for where its steps are ([`index`]), the step asked for parsed from its own
/// bytes as the reading will parse it. Its shell edits come only when the reading ends.
#[derive(Clone)]
pub struct Peek(Arc<Index>);

impl Peek {
    /// How many steps the run has.
    pub fn steps(&self) -> usize {
        self.0.steps()
    }

    /// Step `k`, as it will be stored (its shell edits aside).
    pub fn step(&self, k: usize) -> Result<Step, IngestError> {
        self.0.step(k)
    }
}

impl PartialEq for Peek {
    fn eq(&self, other: &Peek) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Peek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Peek({} steps)", self.steps())
    }
}

/// The skim of a file and its run's first commit, met in either order: the second tells
/// [`Event::Indexed`].
#[derive(Default)]
struct Pairing {
    inner: Mutex<Paired>,
}

/// The first run's id and format, once committed; the skim, once done (until told).
type Paired = (Option<(i64, Format)>, Option<Skim>);

impl Pairing {
    fn skimmed(&self, path: &Path, skim: Skim, on: &(dyn Fn(Event) + Sync)) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.1 = Some(skim);
        Self::tell(&mut inner, path, on);
    }

    fn begun(&self, path: &Path, run: i64, format: Format, on: &(dyn Fn(Event) + Sync)) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.0.is_none() {
            inner.0 = Some((run, format));
            Self::tell(&mut inner, path, on);
        }
    }

    fn tell(inner: &mut Paired, path: &Path, on: &(dyn Fn(Event) + Sync)) {
        let (Some((run, format)), Some(_)) = (inner.0, &inner.1) else { return };
        let Some(skim) = inner.1.take() else { return };
        // A document the index cannot take (or whose skimmed members do not parse) is read in
        // order only.
        if let Ok(Some(index)) = Index::new(path, format, skim) {
            on(Event::Indexed { run, peek: Peek(Arc::new(index)) });
        }
    }
}

/// What was ingested, and the runs of the named paths.
#[derive(Debug, Default)]
pub struct Opened {
    pub report: Report,
    /// The runs of the sources the paths name (ingested now or before), in id order.
    pub runs: Vec<i64>,
    /// The reading was cancelled: what it had written of an unfinished file is removed.
    pub cancelled: bool,
}

/// Ingest `paths` into `store`, telling `on` how far it has got; `cancel` stops a file read a
/// step at a time (the pipeline finishes the unit it is on).
pub fn open(
    store: &mut Store,
    paths: &[PathBuf],
    opts: &Options,
    on: &(dyn Fn(Event) + Sync),
    cancel: &AtomicBool,
) -> Opened {
    let started = Instant::now();
    let mut opened = Opened::default();
    let found = source::discover(paths);
    let single = match (paths, found.units.as_slice()) {
        ([_], [unit]) if found.errors.is_empty() && unit.kind == UnitKind::File && unit.archive.is_none() => {
            Some(unit.path.clone())
        }
        _ => None,
    };
    let mut whole_after: Option<String> = None;
    if let Some(path) = single.filter(|p| read::takes(p, opts.pipeline.max_document)) {
        match live(store, &path, opts, on, cancel) {
            Live::Done(result, bytes) => {
                opened.report.results.push(result);
                opened.report.bytes = bytes;
            }
            Live::Cancelled => {
                opened.cancelled = true;
                opened.report.elapsed = started.elapsed();
                return opened;
            }
            Live::Whole(why) => {
                on(Event::Whole(why));
                whole_after = Some(source::key(&path).into_owned());
            }
            Live::Replace(why) => on(Event::Whole(why)),
        }
    }
    if opened.report.results.is_empty() {
        let progress = Units {
            on,
            units: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            size: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        };
        opened.report = pipeline::ingest(store, paths, &opts.pipeline, &progress);
        // What the step reader wrote of a file the pipeline could not ingest goes.
        if let Some(key) = whole_after {
            let kept = opened.report.results.iter().any(|r| matches!(r, UnitResult::Ingested { .. }));
            if !kept && let Err(e) = store.remove_source(&key) {
                let path = PathBuf::from(&key);
                opened.report.results.push(UnitResult::Failed(IngestError::Store { path, source: e }));
            }
        }
    }
    let keys: Vec<String> = opened
        .report
        .results
        .iter()
        .filter_map(|r| match r {
            UnitResult::Ingested { path, .. } | UnitResult::Unchanged { path, .. } => {
                Some(source::key(path).into_owned())
            }
            _ => None,
        })
        .collect();
    match store.runs_of_sources(&keys) {
        Ok(runs) => opened.runs = runs,
        Err(e) => {
            let path = paths.first().cloned().unwrap_or_default();
            opened.report.results.push(UnitResult::Failed(IngestError::Store { path, source: e }));
        }
    }
    opened.report.elapsed = started.elapsed();
    opened
}

enum Live {
    /// Ingested, or unchanged; the bytes read.
    Done(UnitResult, u64),
    /// For the pipeline (why); what the step reader wrote goes if the pipeline fails.
    Whole(String),
    /// For the pipeline, which replaces a version stored before in one transaction (why).
    Replace(String),
    Cancelled,
}

/// What the reading thread hands the writer.
enum Piece {
    Begin(Run),
    Step(Step, Vec<Edit>),
    /// The reading's end; the runs' edits when they were reconstructed during it.
    End(Result<Document, ReadError>, Option<Vec<Reconstructed>>),
}

/// The reading thread's sink: each run and step to the writer.
struct Channel<'a> {
    tx: SyncSender<Piece>,
    cancel: &'a AtomicBool,
    /// The first steps are committed; `after_first` not yet called on this thread.
    first: &'a AtomicBool,
    after_first: Option<fn()>,
    /// The shell edits reconstructed as the steps come, when that holds (`replay::Alongside`).
    along: Alongside,
}

impl StepSink for Channel<'_> {
    fn begin(&mut self, run: &Run) -> bool {
        self.along.begin(run);
        !self.cancel.load(Ordering::Relaxed) && self.tx.send(Piece::Begin(run.clone())).is_ok()
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        if self.first.load(Ordering::Relaxed)
            && let Some(f) = self.after_first.take()
        {
            f();
        }
        if self.along.wants() {
            self.along.step(&step, how, edits.clone());
        }
        !self.cancel.load(Ordering::Relaxed) && self.tx.send(Piece::Step(step, edits)).is_ok()
    }
}

/// The warning a file carries while it is being read (and after, if the read never ended).
fn unfinished_note(path: &Path) -> String {
    format!(
        "{}: the read of this file did not finish (trajan was stopped while opening it); it is read again the next time it is ingested or opened",
        path.display()
    )
}

/// Read one file a step at a time, writing as it goes.
fn live(store: &mut Store, path: &Path, opts: &Options, on: &(dyn Fn(Event) + Sync), cancel: &AtomicBool) -> Live {
    let key = source::key(path).into_owned();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    match unchanged(store, path, &key, size) {
        Ok(Some(result)) => return Live::Done(result, size),
        Ok(None) => {}
        Err(e) => return Live::Done(UnitResult::Failed(e), size),
    }
    // A version read to its end before stays until the new one is written whole, in one
    // transaction (a step at a time, it would be gone with the first batch, and a read that then
    // failed would leave neither). One whose read never finished is replaced a step at a time.
    if store.source_fingerprint(&key).is_ok_and(|f| f.is_some_and(|(_, hash)| hash != UNFINISHED)) {
        return Live::Replace("a version of this file read before stays until this one is written whole".into());
    }
    let bytes = AtomicU64::new(0);
    let first = AtomicBool::new(false);
    let pairing = Pairing::default();
    let (tx, rx) = mpsc::sync_channel::<Piece>(64);
    std::thread::scope(|scope| {
        // The skim, on the other core: any step of the file can be shown a moment after it ends.
        scope.spawn(|| {
            let skimmed = std::panic::catch_unwind(|| index::skim_file(path));
            if let Ok(Ok(skim)) = skimmed {
                pairing.skimmed(path, skim, on);
            }
        });
        scope.spawn(|| {
            let mut sink =
                Channel { tx, cancel, first: &first, after_first: opts.after_first, along: Alongside::default() };
            // A panic (a bug) ends the read like bad input: the pipeline reads the file whole,
            // and says what went wrong if it fails too.
            // As a stream: its first steps reach the screen at once, where the slices would wait
            // for a skim of their own beside the one above.
            let stream = || {
                let mut read = read::read_as(path, &mut sink, &bytes, None);
                let along = std::mem::take(&mut sink.along);
                let done = read.as_mut().ok().and_then(|doc| along.finish(doc));
                (read, done)
            };
            let (read, done) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(stream))
                .unwrap_or_else(|panic| (Err(ReadError::Invalid(crate::error::internal(path, &panic))), None));
            let _ = sink.tx.send(Piece::End(read, done));
        });
        let mut writer = Writer {
            store,
            key: &key,
            path,
            size,
            batches: &opts.batches,
            on,
            bytes: &bytes,
            lw: None,
            dirs: Dirs::default(),
            cancel,
            announced: 0,
            first: &first,
            after_first: opts.after_first,
            format: None,
            pairing: &pairing,
        };
        let outcome = writer.run(&rx, cancel);
        // The reading thread stops at its next send once the writer is gone.
        drop(rx);
        outcome
    })
}

/// The stored version of the file, when it has the same size and hash.
fn unchanged(store: &Store, path: &Path, key: &str, size: u64) -> Result<Option<UnitResult>, IngestError> {
    let stored =
        store.source_fingerprint(key).map_err(|e| IngestError::Store { path: path.to_path_buf(), source: e })?;
    let Some((stored_size, stored_hash)) = stored.filter(|(s, _)| *s == size) else { return Ok(None) };
    let (_, hash) = super::stream::hash_file(path)?;
    if stored_hash != hash {
        return Ok(None);
    }
    let warnings = store.source_warnings(key).unwrap_or_default();
    let _ = stored_size;
    Ok(Some(UnitResult::Unchanged { path: path.to_path_buf(), warnings }))
}

/// The writing side of [`live`].
struct Writer<'a> {
    store: &'a mut Store,
    key: &'a str,
    path: &'a Path,
    size: u64,
    batches: &'a Batches,
    on: &'a (dyn Fn(Event) + Sync),
    bytes: &'a AtomicU64,
    lw: Option<LiveWrite>,
    /// Each run's working directories (the roots of its reconstruction).
    dirs: Dirs,
    cancel: &'a AtomicBool,
    /// Runs told as begun.
    announced: usize,
    first: &'a AtomicBool,
    /// Not yet called on this thread.
    after_first: Option<fn()>,
    /// The format of the first run begun.
    format: Option<Format>,
    pairing: &'a Pairing,
}

impl Writer<'_> {
    fn run(&mut self, rx: &Receiver<Piece>, cancel: &AtomicBool) -> Live {
        let mut pending = 0usize;
        let mut committed_once = false;
        let mut first_at: Option<Instant> = None;
        let mut last_commit = Instant::now();
        loop {
            let due = match (pending, committed_once, first_at) {
                (0, _, _) => None,
                (_, false, Some(at)) => Some(at + self.batches.first_wait),
                _ => Some(last_commit + self.batches.interval),
            };
            let piece = match due {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
            };
            if cancel.load(Ordering::Relaxed) {
                return self.abandon(Live::Cancelled);
            }
            let written = match piece {
                Err(RecvTimeoutError::Timeout) => Ok(()),
                Err(RecvTimeoutError::Disconnected) => {
                    let e = IngestError::parse(self.path, None, "the reading stopped without an end");
                    return self.abandon(Live::Done(UnitResult::Failed(e), 0));
                }
                Ok(Piece::Begin(run)) => self.begin(&run),
                Ok(Piece::Step(step, edits)) => {
                    pending += 1;
                    self.dirs.step(&step);
                    first_at.get_or_insert_with(Instant::now);
                    match self.lw.as_mut() {
                        Some(lw) => self.store.live_steps(lw, std::slice::from_ref(&step), &edits),
                        None => Err(crate::error::StoreError::Inconsistent("a step before its run".into())),
                    }
                }
                Ok(Piece::End(Ok(doc), done)) => {
                    // The last steps are shown before the second reading (the shell edits)
                    // begins: the end of a file comes with its reading, not after it.
                    if pending > 0
                        && let Err(source) = self.commit()
                    {
                        let e = IngestError::Store { path: self.path.to_path_buf(), source };
                        return self.abandon(Live::Done(UnitResult::Failed(e), 0));
                    }
                    return self.finish(doc, done);
                }
                Ok(Piece::End(Err(ReadError::Stopped), _)) => return self.abandon(Live::Cancelled),
                Ok(Piece::End(Err(ReadError::Whole(why)), _)) => return self.interrupt(why.to_string()),
                Ok(Piece::End(Err(ReadError::Invalid(e)), _)) => return self.interrupt(e.to_string()),
            };
            if let Err(source) = written {
                let e = IngestError::Store { path: self.path.to_path_buf(), source };
                return self.abandon(Live::Done(UnitResult::Failed(e), 0));
            }
            let now = Instant::now();
            let commit = pending > 0
                && match committed_once {
                    false => {
                        pending >= self.batches.first_steps
                            || first_at.is_some_and(|at| now >= at + self.batches.first_wait)
                    }
                    true => now >= last_commit + self.batches.interval,
                }
                || self.batches.every.is_some_and(|n| pending >= n);
            if commit {
                if let Err(source) = self.commit() {
                    let e = IngestError::Store { path: self.path.to_path_buf(), source };
                    return self.abandon(Live::Done(UnitResult::Failed(e), 0));
                }
                pending = 0;
                committed_once = true;
                last_commit = now;
            }
        }
    }

    fn begin(&mut self, run: &Run) -> Result<(), crate::error::StoreError> {
        self.dirs.begin();
        if self.format.is_none() {
            self.format = run.format;
        }
        if self.lw.is_none() {
            let format = run.format.map(|f| f.name()).unwrap_or("unknown");
            let note = unfinished_note(self.path);
            self.lw = Some(self.store.live_begin(self.key, UnitKind::File.name(), format, &note)?);
        }
        match self.lw.as_mut() {
            Some(lw) => self.store.live_run(lw, run).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Commit, then tell the runs begun since and how far each has got.
    fn commit(&mut self) -> Result<(), crate::error::StoreError> {
        let Some(lw) = self.lw.as_mut() else { return Ok(()) };
        self.store.live_commit(lw)?;
        let (ids, steps) = (lw.run_ids(), lw.steps());
        self.tell(ids, steps);
        self.first.store(true, Ordering::Relaxed);
        if let Some(f) = self.after_first.take() {
            f();
        }
        Ok(())
    }

    fn tell(&mut self, ids: Vec<i64>, steps: Vec<usize>) {
        for &id in ids.iter().skip(self.announced) {
            (self.on)(Event::Begun(id));
        }
        if let (Some(&first), Some(format)) = (ids.first(), self.format) {
            self.pairing.begun(self.path, first, format, self.on);
        }
        self.announced = ids.len();
        let runs = ids.into_iter().zip(steps).collect();
        (self.on)(Event::Grown { bytes: self.bytes.load(Ordering::Relaxed), size: self.size, runs });
    }

    /// End the write; `done`: the runs' edits when the reading made them, else a second
    /// reading makes them.
    fn finish(&mut self, mut doc: Document, done: Option<Vec<Reconstructed>>) -> Live {
        if self.lw.is_none() {
            return Live::Whole("the document began no run".to_string());
        }
        let reconstructed = match done {
            Some(done) => Ok(done),
            None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.reconstruct(&mut doc)))
                .unwrap_or_else(|panic| Err(ReadError::Invalid(crate::error::internal(self.path, &panic)))),
        };
        let done = match reconstructed {
            Ok(done) => done,
            Err(ReadError::Stopped) => return self.abandon(Live::Cancelled),
            Err(ReadError::Whole(why)) => return self.interrupt(why.to_string()),
            Err(ReadError::Invalid(e)) => return self.interrupt(e.to_string()),
        };
        let Some(lw) = self.lw.take() else {
            return Live::Whole("the document began no run".to_string());
        };
        let (ids, steps) = (lw.run_ids(), lw.steps());
        let (format, size) = (doc.format, doc.size);
        doc.ending.parsed.refuse_absurd_costs(self.path);
        let warnings = doc.ending.parsed.warnings.clone();
        match replay::write_end(self.store, lw, self.key, doc, done) {
            Ok(stats) => {
                self.tell(ids, steps);
                let path = self.path.to_path_buf();
                Live::Done(UnitResult::Ingested { path, format, stats, warnings }, size)
            }
            Err(source) => {
                // The failed end rolled back; what was committed goes.
                let _ = self.store.remove_source(self.key);
                let e = IngestError::Store { path: self.path.to_path_buf(), source };
                Live::Done(UnitResult::Failed(e), size)
            }
        }
    }

    /// Reconstruct the runs' edits ([`replay::reconstruct`]), telling how far the second reading
    /// is as often as batches are committed.
    fn reconstruct(&mut self, doc: &mut Document) -> Result<Vec<Reconstructed>, ReadError> {
        let runs: Vec<(i64, usize)> = match &self.lw {
            Some(lw) => lw.run_ids().into_iter().zip(lw.steps()).collect(),
            None => Vec::new(),
        };
        let (on, size, interval) = (self.on, self.size, self.batches.interval);
        let mut told = Instant::now();
        let mut tick = |bytes: u64| {
            if told.elapsed() >= interval {
                told = Instant::now();
                on(Event::Edits { bytes, size, runs: runs.clone() });
            }
        };
        replay::reconstruct(self.path, doc, &self.dirs, self.cancel, &mut tick)
    }

    /// The step reader stopped; the pipeline reads the file whole. A file new to the database
    /// goes (its runs then get the ids a first ingest gives them); one that replaces an earlier
    /// version stays, unfinished, until the pipeline's write replaces it (its runs keep their ids).
    fn interrupt(&mut self, why: String) -> Live {
        match self.lw.take() {
            Some(lw) if lw.replaces() => self.store.live_interrupt(lw),
            Some(lw) => {
                if let Err(source) = self.store.live_abandon(lw) {
                    let e = IngestError::Store { path: self.path.to_path_buf(), source };
                    return Live::Done(UnitResult::Failed(e), 0);
                }
            }
            None => {}
        }
        Live::Whole(why)
    }

    fn abandon(&mut self, outcome: Live) -> Live {
        if let Some(lw) = self.lw.take()
            && let Err(source) = self.store.live_abandon(lw)
        {
            let e = IngestError::Store { path: self.path.to_path_buf(), source };
            return Live::Done(UnitResult::Failed(e), 0);
        }
        outcome
    }
}

/// The pipeline's progress, told as [`Event::Units`].
struct Units<'a> {
    on: &'a (dyn Fn(Event) + Sync),
    units: AtomicUsize,
    done: AtomicUsize,
    size: AtomicU64,
    bytes: AtomicU64,
}

impl Progress for Units<'_> {
    fn start(&self, units: usize, bytes: u64) {
        self.units.store(units, Ordering::Relaxed);
        self.size.store(bytes, Ordering::Relaxed);
        (self.on)(Event::Units { done: 0, units, bytes: 0, size: bytes });
    }
    fn advance(&self, bytes: u64, _path: &Path) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let total = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let units = self.units.load(Ordering::Relaxed);
        (self.on)(Event::Units { done, units, bytes: total, size: self.size.load(Ordering::Relaxed) });
    }
    fn finish(&self) {}
}
