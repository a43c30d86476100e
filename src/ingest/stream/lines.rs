//! Which parser reads a line of each JSON-lines format, and the error of a file that cannot be
//! read: what the batch reader and the sniffer both need.

use crate::error::IngestError;
use crate::ingest::{dataset, openhands, predictions, swebench_dataset};
use crate::model::{Format, Parsed};
use serde_json::Value;
use std::path::Path;

/// Parses one line of a JSON-lines format.
pub type LineParser = Box<dyn Fn(&Path, usize, &Value) -> Result<Parsed, IngestError>>;

/// The line parser of a format whose files are JSON lines. A dataset's lines are each read as
/// rows of that dataset (the one their first line's columns told, or `--format`'s), a line
/// lacking its columns named as such.
pub fn line_parser(format: Format) -> Option<LineParser> {
    if let Some(kind) = dataset::Kind::of_format(format) {
        return Some(Box::new(move |path, line, v| dataset::parse_line(Some(kind), path, line, v)));
    }
    let parse: fn(&Path, usize, &Value) -> Result<Parsed, IngestError> = match format {
        Format::OpenHands => openhands::parse_line,
        Format::OpenHandsResolver => openhands::resolver::parse_line,
        Format::SweAgentPreds | Format::MultiSwebenchPreds => predictions::parse_line,
        Format::SwebenchDataset | Format::MultiSwebenchDataset => swebench_dataset::parse_line,
        _ => return None,
    };
    Some(Box::new(parse))
}

pub(in crate::ingest) fn io(path: &Path, source: std::io::Error) -> IngestError {
    IngestError::Io { path: path.to_path_buf(), source }
}
