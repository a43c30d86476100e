//! One JSON document (a SWE-agent `.traj`, a mini-swe-agent `.traj.json`) read a step at a time.
//!
//! The adapters build each step as soon as the document has given what it needs (the next step,
//! for SWE-agent's 0.x states and the last step's format error; the next assistant message, for
//! a mini-swe-agent turn's replies) and hand it to a [`StepSink`]; what the document gives only
//! after its steps (SWE-agent's `info`, `history` and `replay_config`, mini-swe-agent's exit
//! message and `instance_id`) becomes the [`Ending`]. Reading a whole file is the same code with
//! the [`Collect`] sink; `trajan PATH` reads a file from disk with [`read`], its sink writing
//! steps to the store as they come, so both give the same runs.

pub mod index;
pub mod read;
pub mod replay;
pub mod skim;
mod sliced;

use crate::analysis::reconstruct::{Exec, reconstruct};
use crate::error::IngestError;
use crate::model::{Edit, Parsed, Run, Step, StepFlags};

/// Where the steps of a document go as they are read.
pub trait StepSink {
    /// A run begins; its steps follow. `run` holds what is known before its steps (instance,
    /// position, attempt, format, agent); the rest comes in the [`Ending`]. False stops the read.
    fn begin(&mut self, run: &Run) -> bool;
    /// The next step of the run begun last, with the edits the adapter made of it (tool edits)
    /// and how its action ran (the reconstruction of shell edits reads it). False stops the read.
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool;
}

/// Why a read stopped before serde_json found anything wrong.
#[derive(Debug)]
pub enum Halt {
    /// The document has a shape its format does not allow.
    Shape(IngestError),
    /// The sink asked to stop (its own error, or the reader was cancelled).
    Sink,
    /// Not a document the step-by-step reader takes (told only once read far enough): read it
    /// whole. The text says why.
    Whole(&'static str),
}

/// What a document says once read to its end: each run's fields in the order the runs began
/// (their steps, and the edits those made, went to the sink; `edits` holds the final patch's),
/// the tasks, warnings, and changes to steps already handed over.
#[derive(Debug, Default)]
pub struct Ending {
    pub parsed: Parsed,
    pub fixups: Vec<Fixup>,
}

/// A step whose flags depended on something the document gave after it (mini-swe-agent's
/// submission, when `info` does not come before the messages): its flags as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixup {
    /// The run, by the order runs began.
    pub run: usize,
    pub step: usize,
    pub flags: StepFlags,
}

/// The sink of a whole-file parse: the steps kept in memory, then put together with the
/// [`Ending`] into the runs the adapter returns, their shell edits reconstructed.
#[derive(Default)]
pub struct Collect {
    runs: Vec<(Run, Vec<Exec>)>,
}

impl StepSink for Collect {
    fn begin(&mut self, _run: &Run) -> bool {
        self.runs.push((Run::default(), Vec::new()));
        true
    }

    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        if let Some((run, exec)) = self.runs.last_mut() {
            run.steps.push(step);
            run.edits.extend(edits);
            exec.push(how);
        }
        true
    }
}

impl Collect {
    /// The runs of `ending` with the steps collected (and their edits before the final patch's),
    /// then reconstructed ([`reconstruct`]).
    pub fn finish(mut self, ending: Ending) -> Parsed {
        let mut parsed = ending.parsed;
        for (run, (collected, _)) in parsed.runs.iter_mut().zip(self.runs.iter_mut()) {
            run.steps = std::mem::take(&mut collected.steps);
            let finals = std::mem::take(&mut run.edits);
            run.edits = std::mem::take(&mut collected.edits);
            run.edits.extend(finals);
        }
        for f in ending.fixups {
            if let Some(step) = parsed.runs.get_mut(f.run).and_then(|r| r.steps.get_mut(f.step)) {
                step.flags = f.flags;
            }
        }
        for (run, (_, exec)) in parsed.runs.iter_mut().zip(&self.runs) {
            reconstruct(run, exec);
        }
        parsed
    }
}

/// Keeps the first [`Halt`] of a read: visitors record why they stop here and return a serde
/// error, which the caller then reads as the halt rather than as bad JSON.
#[derive(Debug, Default)]
pub struct Halted(pub Option<Halt>);

impl Halted {
    /// Record `why` (the first reason stays) and give the error that unwinds the deserializer.
    pub fn stop<E: serde::de::Error>(&mut self, why: Halt) -> E {
        if self.0.is_none() {
            self.0 = Some(why);
        }
        E::custom("the read was stopped")
    }

    /// The error of a read that returned `error`: the recorded halt, else the JSON error.
    pub fn error(&mut self, path: &std::path::Path, error: serde_json::Error) -> ReadError {
        match self.0.take() {
            Some(Halt::Shape(e)) => ReadError::Invalid(e),
            Some(Halt::Sink) => ReadError::Stopped,
            Some(Halt::Whole(why)) => ReadError::Whole(why),
            None => ReadError::Invalid(IngestError::json(path, &error)),
        }
    }
}

/// Why a document could not be read step by step.
#[derive(Debug)]
pub enum ReadError {
    /// Bad JSON, a shape the format does not allow, or the file could not be read.
    Invalid(IngestError),
    /// The sink stopped the read.
    Stopped,
    /// Not for this reader: read it whole (why).
    Whole(&'static str),
}
