//! What a worker hands the writer about a unit (`worker`, `document`, `writer`).

use crate::analysis::reconstruct::Reconstructed;
use crate::error::IngestError;
use crate::ingest::Outcome;
use crate::ingest::stream_doc::read::Document;
use crate::model::{Format, Parsed, Run, Step};
use std::sync::Arc;

/// What a worker hands the writer about one unit.
pub enum Piece {
    /// The whole unit in one go.
    Whole(Work),
    /// A streamed unit begins: the writer opens its transaction.
    Begin { format: Format, size: u64, hash: [u8; 32] },
    /// A batch of a streamed unit, and how many input bytes it covers.
    Batch(Parsed, u64),
    /// A streamed unit ends; with the error that failed it, if any.
    End(Option<IngestError>),
    /// A piece of a document read a step at a time.
    Doc(DocPiece),
}

pub enum Work {
    Unchanged(u64),
    /// Read and parsed (`hash` is unused when the outcome is a skip).
    Parsed {
        size: u64,
        hash: [u8; 32],
        outcome: Outcome,
    },
    Failed(u64, IngestError),
}

/// What the worker hands the writer of a document read a step at a time.
pub enum DocPiece {
    /// A run begins (the first opens the unit's write).
    Run(Box<Run>),
    /// The next steps of the run begun last (shared with a worker that keeps them for the
    /// reconstruction, `replay::Held`).
    Steps(Arc<[Step]>),
    /// The document read to its end, and its runs' edits reconstructed: the write ends.
    End(Box<Document>, Vec<Reconstructed>),
    /// The step reader stopped: what was written is rolled back; the unit comes again whole.
    Retract,
}
