//! OpenHands evaluation `output.jsonl`, event lists and `events/` folders.

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::Path;

pub fn parse(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "openhands: not yet supported"))
}

pub fn parse_events(path: &Path, _events: Vec<serde_json::Value>) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "openhands events: not yet supported"))
}
