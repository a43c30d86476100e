//! Which parser reads a line of each JSON-lines format, and the error of a file that cannot be
//! read: what the batch reader and the sniffer both need.

use crate::error::IngestError;
use crate::ingest::{dataset, openhands, predictions, swebench_dataset};
use crate::model::{Format, Parsed};
use serde_json::Value;
use std::path::Path;

/// Parses one line of a JSON-lines format.
pub type LineParser = fn(&Path, usize, &Value) -> Result<Parsed, IngestError>;

/// The line parser of a format whose files are JSON lines.
pub fn line_parser(format: Format) -> Option<LineParser> {
    match format {
        Format::OpenHands => Some(openhands::parse_line),
        Format::OpenHandsResolver => Some(openhands::resolver::parse_line),
        Format::SweAgentPreds | Format::MultiSwebenchPreds => Some(predictions::parse_line),
        Format::SwebenchDataset | Format::MultiSwebenchDataset => Some(swebench_dataset::parse_line),
        Format::NebiusSweAgent
        | Format::SweRebenchOpenHands
        | Format::SweSmith
        | Format::OpenSweTraces
        | Format::SweGymOpenHands
        | Format::TerminalBenchRows
        | Format::SweZeroOpenHands
        | Format::R2eGymSft => Some(dataset::parse_line),
        _ => None,
    }
}

pub(in crate::ingest) fn io(path: &Path, source: std::io::Error) -> IngestError {
    IngestError::Io { path: path.to_path_buf(), source }
}
