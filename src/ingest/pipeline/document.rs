//! A large JSON document (a mini-swe-agent `.traj.json` of at least
//! [`Options::stream_bytes`](super::Options)) read a step at a time on its worker
//! (`stream_doc::read`, as `trajan FILE` reads it) and written as it is read: the worker hands
//! the writer each run as it begins and its steps in pieces of [`STEPS_PER_PIECE`], which the
//! writer writes into the unit's one transaction (`Store::live_begin`, never committed before
//! the end) while the worker parses on. The shell edits are reconstructed as the steps come
//! when the document gives the submission before its steps (`replay::Alongside`: mini-swe-agent
//! writes `info` first); otherwise, once the document is read, the worker reads it a second
//! time for them (`stream_doc::replay`) while the writer finishes the steps. The writer then
//! ends the write with the document's end and every edit. The database ends as the
//! whole-file path leaves it (`tests/open_file.rs` compares them). A document the step reader
//! does not take or stops on (another format, bad JSON, Python's `NaN`, a file cut mid-write)
//! is rolled back and read whole, as a smaller file is; nothing of it is committed before its
//! end, so a failure leaves the database as it was (a version stored before included).
//!
//! Only mini-swe-agent documents are taken: a SWE-agent document is read whole. Measured on the
//! 220 MB file of `bench ingest --big swe-agent`, the step reader (twice, for the shell edits,
//! as a stream) cost 5.4 s of CPU against the whole read's 2.6 s (which parses the text in
//! place, borrowing its strings), and the write took 8.4 s against 5.0 s. A big mini-swe-agent
//! document is parsed from slices (`stream_doc::sliced`); docs/BENCHMARKS.md has the figures.

use super::piece::{DocPiece, Piece};
use crate::analysis::reconstruct::Exec;
use crate::ingest::stream_doc::read;
use crate::ingest::stream_doc::replay::{self, Alongside, Dirs};
use crate::ingest::stream_doc::{ReadError, StepSink};
use crate::model::{Edit, Format, Run, Step};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::SyncSender;

/// Steps handed to the writer at a time.
const STEPS_PER_PIECE: usize = 64;

/// Read `path`, unit `i`, a step at a time and hand it over, once the writer is on it: whether
/// the writer is still there, or `None` when the file is for the whole-file path (what was
/// handed over is taken back first).
pub fn streamed(path: &Path, i: usize, tx: &SyncSender<(usize, Piece)>) -> Option<bool> {
    let mut sink = Pieces {
        tx,
        i,
        dirs: Dirs::default(),
        along: Alongside::default(),
        steps: Vec::new(),
        runs: 0,
        declined: false,
    };
    let read = read::read(path, &mut sink, &AtomicU64::new(0));
    if !sink.flush() {
        return Some(false);
    }
    let ended = match read {
        Err(ReadError::Stopped) if sink.declined => Err(ReadError::Whole("a SWE-agent document")),
        Ok(_) if sink.runs == 0 => Err(ReadError::Whole("the document began no run")),
        Ok(mut doc) => match std::mem::take(&mut sink.along).finish(&mut doc) {
            Some(done) => Ok((doc, done)),
            None => replay::reconstruct(path, &mut doc, &sink.dirs, &AtomicBool::new(false), &mut |_| {})
                .map(|done| (doc, done)),
        },
        Err(e) => Err(e),
    };
    match ended {
        Ok((doc, done)) => Some(tx.send((i, Piece::Doc(DocPiece::End(Box::new(doc), done)))).is_ok()),
        // The writer has gone.
        Err(ReadError::Stopped) => Some(false),
        Err(ReadError::Whole(_) | ReadError::Invalid(_)) => match tx.send((i, Piece::Doc(DocPiece::Retract))) {
            Ok(()) => None,
            Err(_) => Some(false),
        },
    }
}

/// The worker's sink: runs and pieces of steps to the writer, the working directories kept for
/// the second reading.
struct Pieces<'a> {
    tx: &'a SyncSender<(usize, Piece)>,
    i: usize,
    dirs: Dirs,
    /// The shell edits, reconstructed as the steps come (the second reading spared when that holds).
    along: Alongside,
    steps: Vec<Step>,
    /// Runs begun.
    runs: usize,
    /// The document is not for this path (SWE-agent: see the module): nothing was handed over.
    declined: bool,
}

impl Pieces<'_> {
    /// Hand over the steps gathered; false when the writer has gone.
    fn flush(&mut self) -> bool {
        self.steps.is_empty()
            || self.tx.send((self.i, Piece::Doc(DocPiece::Steps(std::mem::take(&mut self.steps))))).is_ok()
    }
}

impl StepSink for Pieces<'_> {
    fn begin(&mut self, run: &Run) -> bool {
        if run.format != Some(Format::MiniSweAgent) {
            self.declined = true;
            return false;
        }
        self.dirs.begin();
        self.along.begin(run);
        self.runs += 1;
        self.flush() && self.tx.send((self.i, Piece::Doc(DocPiece::Run(Box::new(run.clone()))))).is_ok()
    }

    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        self.along.step(&step, how, edits);
        self.dirs.step(&step);
        self.steps.push(step);
        self.steps.len() < STEPS_PER_PIECE || self.flush()
    }
}
