//! A large JSON document (a `.traj.json` or `.traj` of at least
//! [`Options::stream_bytes`](super::Options)) written as it is read: the worker hands the writer
//! each run as it begins and its steps in pieces of [`STEPS_PER_PIECE`], which the writer writes
//! and indexes into the unit's one transaction (`Store::live_begin`, never committed before the
//! end) while the worker reads on. The writer then ends the write with the document's end and
//! every edit. The database ends as the whole-file path leaves it (`tests/open_file.rs` compares
//! them). A document this path does not take or stops on (another
//! format, bad JSON, Python's `NaN`, a file cut mid-write) is rolled back and read whole, as a
//! smaller file is; nothing of it is committed before its end, so a failure leaves the database
//! as it was (a version stored before included).
//!
//! - A mini-swe-agent document is read from disk a step at a time (`stream_doc::read`, as
//!   `trajan FILE` reads it; parsed from slices, `stream_doc::sliced`). Its shell edits are
//!   reconstructed as the steps come when the document gives the submission before its steps
//!   (`replay::Alongside`: mini-swe-agent writes `info` first), on a thread of their own
//!   (`replay::Beside`, fed the pieces handed to the writer), while the worker parses on;
//!   otherwise, once the document is read, the worker reads it a second time for them
//!   (`stream_doc::replay`).
//! - A SWE-agent document is read into memory, as the whole-file path reads it (its text parsed
//!   in place, borrowing its strings: half the CPU of the step reader from disk), and its steps
//!   are handed over as they are built. Its submission comes after its steps: it is read ahead
//!   from a skim of the text on the other core, the steps kept (shared with the writer:
//!   `replay::Held`) until it comes, then replayed into a reconstruction made as the steps come;
//!   a RetryAgent document's steps are kept to the end. Memory holds the text and little more.

use super::piece::{DocPiece, Piece};
use crate::analysis::reconstruct::{Exec, Reconstructed};
use crate::ingest::detect::{self, Detected};
use crate::ingest::source::{self, Unit};
use crate::ingest::stream_doc::read::{self, Document};
use crate::ingest::stream_doc::replay::{self, Beside, Dirs, Held};
use crate::ingest::stream_doc::{ReadError, StepSink};
use crate::ingest::{decode, swe_agent};
use crate::model::{Edit, Format, Run, Step};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{Receiver, SyncSender};

/// Steps handed to the writer at a time.
const STEPS_PER_PIECE: usize = 64;

/// Read `unit` (a file), unit `i`, a step at a time and hand it over, once the writer is on it:
/// whether the writer is still there, or `None` when the file is for the whole-file path (what
/// was handed over is taken back first). `max_document`: the largest file read into memory.
pub fn streamed(unit: &Unit, i: usize, tx: &SyncSender<(usize, Piece)>, max_document: u64) -> Option<bool> {
    let path = &unit.path;
    // A SWE-agent document says so by its first run, before anything is read from it that would
    // be read again (a mini-swe-agent document's skim). One that changes into one after this
    // look is read from disk below all the same, its edits by a second reading.
    let mut peek = Peek(None);
    if let Err(ReadError::Stopped) = read::read_as(path, &mut peek, &AtomicU64::new(0), None)
        && peek.0 == Some(Format::SweAgent)
    {
        return held(unit, i, tx, max_document);
    }
    let mut sink = Pieces::new(tx, i, Replay::along(None))?;
    let read = read::read(path, &mut sink, &AtomicU64::new(0));
    if !sink.flush() {
        return Some(false);
    }
    let ended = match read {
        Ok(_) if sink.runs == 0 => Err(ReadError::Whole("the document began no run")),
        Ok(doc) => reconstructed(path, doc, sink),
        Err(e) => Err(e),
    };
    end(ended, i, tx)
}

/// The document with its runs' shell edits, as `replay` makes them.
fn reconstructed(path: &Path, mut doc: Document, sink: Pieces) -> Result<(Document, Vec<Reconstructed>), ReadError> {
    match sink.replay {
        Replay::Along { dirs, .. } => match sink.beside.finish(doc)? {
            (doc, Some(done)) => Ok((doc, done)),
            (mut doc, None) => {
                let done = replay::reconstruct(path, &mut doc, &dirs, &AtomicBool::new(false), &mut |_| {})?;
                Ok((doc, done))
            }
        },
        Replay::Held(held) => {
            let done =
                held.replay(&mut doc).ok_or(ReadError::Whole("the runs read are not those the document ends with"))?;
            Ok((doc, done))
        }
    }
}

/// Hand over the end of a document read to its end, or take back what was handed over.
fn end(
    ended: Result<(Document, Vec<Reconstructed>), ReadError>,
    i: usize,
    tx: &SyncSender<(usize, Piece)>,
) -> Option<bool> {
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

/// A SWE-agent document (told by its first run, nothing handed over yet): read into memory as
/// the whole-file path reads it, its steps handed over as they are built. Its shell edits are
/// made as the steps come, on the submission its `info` gives
/// (`swe_agent::submission_ahead`), or, for a document of RetryAgent attempts, from the steps
/// kept until the end. Text the whole-file path would read otherwise (not UTF-8, not told as
/// SWE-agent's by `detect`, an error it may recover from) goes to it.
fn held(unit: &Unit, i: usize, tx: &SyncSender<(usize, Piece)>, max_document: u64) -> Option<bool> {
    let files = source::read_unit(unit, max_document).ok()?;
    let (path, bytes) = files.first()?;
    let mut warnings = Vec::new();
    let text = decode(path, bytes, &mut warnings);
    if !warnings.is_empty() {
        return None;
    }
    let (ahead_tx, ahead) = std::sync::mpsc::channel();
    let mut sink = Pieces::new(tx, i, Replay::Held(Held::default()))?;
    sink.ahead = Some(ahead);
    // On the other core while the steps are read: the submission read ahead (the steps are kept
    // until it comes), the whole-file path's detection (a document it tells as another format's
    // is its to read) and the hash.
    let (read, helped) = std::thread::scope(|scope| {
        let text = &text;
        scope.spawn(move || ahead_tx.send(swe_agent::submission_ahead(text)));
        let helper =
            scope.spawn(|| (detect::detect(&detect::shape(text), text), source::hash_files(unit.kind, &files)));
        let read = swe_agent::read(path, text, &mut sink, Pieces::restart);
        (read, helper.join().ok())
    });
    if !sink.flush() {
        return Some(false);
    }
    let (read, hash) = match helped {
        Some((Detected::Format(Format::SweAgent), hash)) => (read, hash),
        _ => (Err(ReadError::Whole("not told as a SWE-agent trajectory")), [0; 32]),
    };
    let (path, size) = (path.clone(), bytes.len() as u64);
    // The text goes before the reconstruction ends: memory then holds at most the steps kept.
    drop(text);
    drop(files);
    let ended =
        read.and_then(|ending| reconstructed(&path, Document { format: Format::SweAgent, ending, size, hash }, sink));
    end(ended, i, tx)
}

/// A sink that stops at the first run, keeping its format.
struct Peek(Option<Format>);

impl StepSink for Peek {
    fn begin(&mut self, run: &Run) -> bool {
        self.0 = run.format;
        false
    }
    fn step(&mut self, _step: Step, _edits: Vec<Edit>, _how: Exec) -> bool {
        false
    }
}

/// How a document's shell edits are reconstructed.
enum Replay {
    /// As the steps come (on [`Pieces::beside`]) when what the reconstruction assumes holds,
    /// else by a second reading (the working directories kept for it). `assumed`: the
    /// submission read ahead (SWE-agent), or `None`: each run's head gives it (mini-swe-agent).
    Along { dirs: Dirs, assumed: Option<Option<String>> },
    /// From the steps kept, once the document is read.
    Held(Held),
}

impl Replay {
    fn along(assumed: Option<Option<String>>) -> Replay {
        Replay::Along { dirs: Dirs::default(), assumed }
    }
}

/// The worker's sink: runs and pieces of steps to the writer, and what the reconstruction needs.
struct Pieces<'a> {
    tx: &'a SyncSender<(usize, Piece)>,
    i: usize,
    replay: Replay,
    /// The reconstruction as the steps come, on the other core.
    beside: Beside,
    steps: Vec<Step>,
    /// Per step gathered: how its action ran and the adapter's edits.
    hows: Vec<(Exec, Vec<Edit>)>,
    /// Runs begun.
    runs: usize,
    /// The writer has gone.
    gone: bool,
    /// The submission read ahead, once it comes ([`swe_agent::submission_ahead`]): the steps
    /// kept until then are replayed into a reconstruction made as the steps come.
    ahead: Option<Receiver<Option<Option<String>>>>,
}

impl<'a> Pieces<'a> {
    /// `None` when no thread can be made for the reconstruction (the file is read whole).
    fn new(tx: &'a SyncSender<(usize, Piece)>, i: usize, replay: Replay) -> Option<Pieces<'a>> {
        let beside = Beside::spawn().ok()?;
        Some(Pieces { tx, i, replay, beside, steps: Vec::new(), hows: Vec::new(), runs: 0, gone: false, ahead: None })
    }

    /// Hand over the steps gathered; false when the writer has gone.
    fn flush(&mut self) -> bool {
        if self.gone || self.steps.is_empty() {
            return !self.gone;
        }
        let piece: Arc<[Step]> = std::mem::take(&mut self.steps).into();
        let hows = std::mem::take(&mut self.hows);
        self.gone = self.tx.send((self.i, Piece::Doc(DocPiece::Steps(piece.clone())))).is_err();
        match &mut self.replay {
            Replay::Along { .. } => self.beside.steps(piece, hows),
            Replay::Held(held) => held.keep(piece, hows),
        }
        !self.gone
    }

    /// Once the submission read ahead has come: the reconstruction as the steps come, from the
    /// steps kept (none for a document it cannot assume one for, which keeps them).
    fn look_ahead(&mut self) {
        let Some(Ok(ahead)) = self.ahead.as_ref().map(Receiver::try_recv) else { return };
        self.ahead = None;
        if let Some(submission) = ahead
            && self.flush()
            && let Replay::Held(held) = &mut self.replay
        {
            let dirs = std::mem::take(held).into_beside(submission.clone(), &self.beside);
            self.replay = Replay::Along { dirs, assumed: Some(submission) };
        }
    }

    /// Take back what was handed over: the document is read again from its start.
    fn restart(&mut self) {
        self.steps.clear();
        self.hows.clear();
        self.runs = 0;
        self.beside.restart();
        self.replay = match &self.replay {
            Replay::Along { assumed, .. } => Replay::along(assumed.clone()),
            Replay::Held(_) => Replay::Held(Held::default()),
        };
        self.gone = self.gone || self.tx.send((self.i, Piece::Doc(DocPiece::Retract))).is_err();
    }
}

impl StepSink for Pieces<'_> {
    fn begin(&mut self, run: &Run) -> bool {
        if !self.flush() {
            return false;
        }
        match &mut self.replay {
            Replay::Along { dirs, assumed } => {
                dirs.begin();
                match assumed {
                    Some(submission) => self.beside.begin_assuming(Some(submission.clone())),
                    None => self.beside.begin(run),
                }
            }
            Replay::Held(held) => held.begin(),
        }
        self.runs += 1;
        self.gone = self.tx.send((self.i, Piece::Doc(DocPiece::Run(Box::new(run.clone()))))).is_err();
        !self.gone
    }

    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        self.look_ahead();
        match &mut self.replay {
            Replay::Along { dirs, .. } => dirs.step(&step),
            Replay::Held(held) => held.step(&step),
        }
        self.hows.push((how, edits));
        self.steps.push(step);
        self.steps.len() < STEPS_PER_PIECE || self.flush()
    }
}
