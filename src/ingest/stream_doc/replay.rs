//! What a document read a step at a time and written as it was read still needs at its end,
//! shared by `trajan FILE` (`ingest::open`) and `trajan ingest` (`ingest::pipeline::document`):
//! its runs' shell edits, made as the steps came on a submission assumed ([`Alongside`]), from
//! the steps kept until the end ([`Held`]), or by a second reading ([`reconstruct`], the roots
//! from each run's working directories ([`Dirs`])), the edits' long texts kept in a temporary
//! file meanwhile; then the write ended with them ([`write_end`]).

use super::read::{self, Document};
use super::{ReadError, StepSink};
use crate::analysis::reconstruct::{Exec, FIRST_ROOT, Reconstructed, Reconstructor, Spill};
use crate::error::StoreError;
use crate::ingest::source::UnitKind;
use crate::model::{Edit, Run, Step};
use crate::store::{LiveWrite, SourceRecord, Store, WriteStats};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

mod beside;
pub use beside::Beside;

/// Each run's working directories, in the order its steps met them (the roots of its
/// reconstruction).
#[derive(Debug, Default)]
pub struct Dirs(Vec<Vec<String>>);

impl Dirs {
    /// A run begins.
    pub fn begin(&mut self) {
        self.0.push(Vec::new());
    }

    /// A step of the run begun last.
    pub fn step(&mut self, step: &Step) {
        if let (Some(wd), Some(dirs)) = (&step.working_dir, self.0.last_mut())
            && !dirs.contains(wd)
        {
            dirs.push(wd.clone());
        }
    }
}

/// Reconstruct the runs' edits ([`Reconstructor`]): the file read a second time, a step at a
/// time, now that each run's submission and working directories are known, the edits' long
/// texts kept in a temporary file until they are written. `doc`'s runs then hold all their
/// edits (those texts left out); per run, what puts them back and the edited steps. `tick` is
/// told the bytes read so far after each step; `cancel` stops the reading.
pub fn reconstruct(
    path: &Path,
    doc: &mut Document,
    dirs: &Dirs,
    cancel: &AtomicBool,
    tick: &mut dyn FnMut(u64),
) -> Result<Vec<Reconstructed>, ReadError> {
    let recs = doc.ending.parsed.runs.iter().zip(&dirs.0).map(|(run, dirs)| reconstructor(run, dirs)).collect();
    let bytes = AtomicU64::new(0);
    let mut sink = Replaying { recs, at: None, cancel, bytes: &bytes, tick };
    let again = read::read(path, &mut sink, &bytes);
    let changed = ReadError::Whole("the file changed while it was read");
    let again = match again {
        Err(ReadError::Stopped) if !cancel.load(Ordering::Relaxed) => return Err(changed),
        again => again?,
    };
    if again.hash != doc.hash || sink.recs.len() != doc.ending.parsed.runs.len() {
        return Err(changed);
    }
    Ok(finish_runs(doc, sink.recs))
}

/// A run's reconstruction, its edits' long texts kept in a temporary file (in memory when
/// none can be made).
fn reconstructor(run: &Run, dirs: &[String]) -> Reconstructor {
    reconstructor_of(run.submission.as_deref(), dirs)
}

/// [`reconstructor`] of a run whose submission is `submission`.
fn reconstructor_of(submission: Option<&str>, dirs: &[String]) -> Reconstructor {
    let rec = Reconstructor::new(submission, dirs.iter().map(String::as_str));
    match TempSpill::new() {
        Ok(spill) => rec.spill_to(Box::new(spill)),
        Err(_) => rec,
    }
}

/// Each run's edits once its steps are replayed: the reconstruction's, then the final patch's.
fn finish_runs(doc: &mut Document, recs: Vec<Reconstructor>) -> Vec<Reconstructed> {
    let mut done = Vec::new();
    for (run, rec) in doc.ending.parsed.runs.iter_mut().zip(recs) {
        let mut finals = std::mem::take(&mut run.edits);
        let mut d = rec.finish(&mut finals);
        run.edits = std::mem::take(&mut d.edits);
        run.edits.extend(finals);
        done.push(d);
    }
    done
}

/// The shell edits reconstructed during the first reading, on a submission assumed as each run
/// begins (mini-swe-agent's `info` comes first, with it; a SWE-agent document held in memory has
/// it read ahead from a skim) and the working directory of its first step. When that holds
/// (the document's end gives the same submission, and no later step names another working
/// directory), the reconstruction had the inputs the second reading would give it, in the same
/// order, and the second reading is spared; otherwise [`reconstruct`] reads the file again.
#[derive(Default)]
pub struct Alongside {
    /// Per run; `None` once it cannot hold (not assumed, or a step in another working
    /// directory), so no work is spent on it.
    runs: Vec<Option<Along>>,
}

/// A run reconstructed as its steps come.
struct Along {
    /// The submission assumed.
    submission: Option<String>,
    /// The working directory of its first step, if any: a root of the reconstruction, as the
    /// second reading's would be.
    dirs: Vec<String>,
    /// Made at the first step, once its working directory is known.
    rec: Option<Reconstructor>,
}

impl Alongside {
    /// A run begins (its head, as the reader hands it over): a mini-swe-agent run is
    /// reconstructed assuming the submission its head gives.
    pub fn begin(&mut self, run: &Run) {
        self.begin_assuming(Alongside::assumed(run));
    }

    /// The submission a run is reconstructed assuming, from its head (`None`: not
    /// reconstructed alongside): a mini-swe-agent run's own.
    pub fn assumed(run: &Run) -> Option<Option<String>> {
        (run.format == Some(crate::model::Format::MiniSweAgent)).then(|| run.submission.clone())
    }

    /// A run begins, reconstructed assuming `submission` (`None`: not reconstructed alongside).
    pub fn begin_assuming(&mut self, submission: Option<Option<String>>) {
        self.runs.push(submission.map(|submission| Along { submission, dirs: Vec::new(), rec: None }));
    }

    /// Whether the run begun last is still reconstructed as its steps come (a caller need not
    /// keep their edits for it otherwise).
    pub fn wants(&self) -> bool {
        matches!(self.runs.last(), Some(Some(_)))
    }

    /// The next step of the run begun last, as [`StepSink::step`] gets it.
    pub fn step(&mut self, step: &Step, how: Exec, edits: Vec<Edit>) {
        let Some(last) = self.runs.last_mut() else { return };
        let wd = step.working_dir.as_deref();
        // A directory the second reading would have made a root before the first step.
        let new_root = |a: &Along| wd.is_some_and(|d| d != FIRST_ROOT && !a.dirs.iter().any(|k| k == d));
        if last.as_ref().is_some_and(|a| a.rec.is_some() && new_root(a)) {
            *last = None;
        }
        let Some(along) = last else { return };
        let rec = match &mut along.rec {
            Some(rec) => rec,
            None => {
                along.dirs.extend(wd.map(str::to_string));
                along.rec.insert(reconstructor_of(along.submission.as_deref(), &along.dirs))
            }
        };
        rec.step(step, how, edits);
    }

    /// The runs' edits, as [`reconstruct`] would make them, when what each run's reconstruction
    /// assumed holds; `None` when the file must be read again.
    pub fn finish(self, doc: &mut Document) -> Option<Vec<Reconstructed>> {
        let runs = &doc.ending.parsed.runs;
        let held = self.runs.len() == runs.len()
            && self
                .runs
                .iter()
                .zip(runs)
                .all(|(along, run)| along.as_ref().is_some_and(|a| a.submission == run.submission));
        let recs = self.runs.into_iter().flatten();
        let recs = recs.map(|a| a.rec.unwrap_or_else(|| reconstructor_of(a.submission.as_deref(), &[])));
        held.then(|| finish_runs(doc, recs.collect()))
    }
}

/// The steps of a document read from memory and written as they are read, kept (shared with
/// the writer) until the document's end gives each run's submission and working directories;
/// then replayed into the reconstruction as a second reading would ([`reconstruct`]) give them,
/// without one. Memory holds the steps as a whole read (`Collect`) holds them.
#[derive(Default)]
pub struct Held {
    runs: Vec<HeldRun>,
    dirs: Dirs,
}

#[derive(Default)]
struct HeldRun {
    /// The steps, as handed to the writer.
    pieces: Vec<Arc<[Step]>>,
    /// Per step: how its action ran and the adapter's edits.
    how: Vec<(Exec, Vec<Edit>)>,
    /// Pieces trimmed to what the reconstruction reads.
    trimmed: usize,
}

impl Held {
    /// A run begins (after the pieces of the run before it were kept).
    pub fn begin(&mut self) {
        self.runs.push(HeldRun::default());
        self.dirs.begin();
    }

    /// The next step of the run begun last, as [`StepSink::step`] gets it (the step itself
    /// comes with its piece, [`Held::keep`]).
    pub fn step(&mut self, step: &Step) {
        self.dirs.step(step);
    }

    /// Steps of the run begun last, as handed to the writer, each with how its action ran and
    /// the adapter's edits (`hows`). The pieces the writer is done with keep only what the
    /// reconstruction reads of a step (its action, observation and working directory): a
    /// SWE-agent step's prompt repeats its observation, and the document's text is still in
    /// memory until it is read.
    pub fn keep(&mut self, piece: Arc<[Step]>, hows: Vec<(Exec, Vec<Edit>)>) {
        let Some(run) = self.runs.last_mut() else { return };
        run.pieces.push(piece);
        run.how.extend(hows);
        while let Some(written) = run.pieces.get_mut(run.trimmed).and_then(Arc::get_mut) {
            for step in written {
                let Step { action, observation, working_dir, .. } = std::mem::take(step);
                *step = Step { action, observation, working_dir, ..Step::default() };
            }
            run.trimmed += 1;
        }
    }

    /// The reconstruction as the steps come from here on, on `beside`, assuming `submission`
    /// for every run: the steps kept so far fed to it; the working directories met. The
    /// pieces are let go.
    pub fn into_beside(self, submission: Option<String>, beside: &Beside) -> Dirs {
        for run in self.runs {
            beside.begin_assuming(Some(submission.clone()));
            let mut hows = run.how.into_iter();
            for piece in run.pieces {
                let of_piece = hows.by_ref().take(piece.len()).collect();
                beside.steps(piece, of_piece);
            }
        }
        self.dirs
    }

    /// The runs' edits, reconstructed from the steps kept; `None` when the document's end does
    /// not name the runs begun.
    pub fn replay(self, doc: &mut Document) -> Option<Vec<Reconstructed>> {
        let runs = &doc.ending.parsed.runs;
        if self.runs.len() != runs.len()
            || self.runs.iter().any(|r| r.pieces.iter().map(|p| p.len()).sum::<usize>() != r.how.len())
        {
            return None;
        }
        let recs = runs
            .iter()
            .zip(&self.dirs.0)
            .zip(self.runs)
            .map(|((run, dirs), held)| {
                let mut rec = reconstructor(run, dirs);
                for (step, (how, edits)) in held.pieces.iter().flat_map(|p| p.iter()).zip(held.how) {
                    rec.step(step, how, edits);
                }
                rec
            })
            .collect();
        Some(finish_runs(doc, recs))
    }
}

/// End a write begun with [`Store::live_begin`] under `key`: the document's end, its runs'
/// edits as [`reconstruct`] made them (`done`), the flags that changed, the real size and hash.
pub fn write_end(
    store: &mut Store,
    lw: LiveWrite,
    key: &str,
    doc: Document,
    mut done: Vec<Reconstructed>,
) -> Result<WriteStats, StoreError> {
    let record = SourceRecord {
        path: key,
        kind: UnitKind::File.name(),
        format: doc.format.name(),
        size: doc.size,
        hash: &doc.hash,
    };
    let edited: Vec<Vec<usize>> = done.iter_mut().map(|d| std::mem::take(&mut d.edit_steps)).collect();
    let mut fill = |run: usize, k: usize, edit: &mut Edit| match done.get_mut(run) {
        Some(d) => d.fill(k, edit).map_err(|e| StoreError::Inconsistent(format!("the edits kept aside: {e}"))),
        None => Ok(()),
    };
    let fixups: Vec<(usize, usize, crate::model::StepFlags)> =
        doc.ending.fixups.iter().map(|f| (f.run, f.step, f.flags)).collect();
    store.live_finish(lw, &record, doc.ending.parsed, &fixups, &edited, &mut fill)
}

/// The second reading's sink: each run's steps to its reconstruction.
struct Replaying<'a> {
    recs: Vec<Reconstructor>,
    /// The run begun last.
    at: Option<usize>,
    cancel: &'a AtomicBool,
    bytes: &'a AtomicU64,
    tick: &'a mut dyn FnMut(u64),
}

impl StepSink for Replaying<'_> {
    fn begin(&mut self, _run: &Run) -> bool {
        let next = self.at.map_or(0, |i| i + 1);
        self.at = Some(next);
        next < self.recs.len() && !self.cancel.load(Ordering::Relaxed)
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        match self.at.and_then(|i| self.recs.get_mut(i)) {
            Some(rec) => rec.step(&step, how, edits),
            None => return false,
        }
        (self.tick)(self.bytes.load(Ordering::Relaxed));
        !self.cancel.load(Ordering::Relaxed)
    }
}

/// The edits' long texts while a file is read a second time: a temporary file (gone when
/// closed), each text at an offset.
struct TempSpill {
    file: std::fs::File,
    end: u64,
    /// Offset and length of each text, by key.
    at: Vec<(u64, usize)>,
}

impl TempSpill {
    fn new() -> std::io::Result<TempSpill> {
        Ok(TempSpill { file: tempfile::tempfile()?, end: 0, at: Vec::new() })
    }
}

impl Spill for TempSpill {
    fn put(&mut self, text: &str) -> std::io::Result<u64> {
        use std::io::{Seek, SeekFrom, Write};
        self.file.seek(SeekFrom::Start(self.end))?;
        self.file.write_all(text.as_bytes())?;
        self.at.push((self.end, text.len()));
        self.end += text.len() as u64;
        Ok(self.at.len() as u64 - 1)
    }

    fn get(&mut self, key: u64) -> std::io::Result<String> {
        use std::io::{Read, Seek, SeekFrom};
        let missing = || std::io::Error::other("no text kept under this key");
        let &(offset, len) = usize::try_from(key).ok().and_then(|k| self.at.get(k)).ok_or_else(missing)?;
        self.file.seek(SeekFrom::Start(offset))?;
        let mut bytes = vec![0; len];
        self.file.read_exact(&mut bytes)?;
        String::from_utf8(bytes).map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests;
