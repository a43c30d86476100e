//! SWE-bench evaluation harness: per-instance `report.json` (wrapped or flat), instance log
//! folders, and run-level summaries.

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::{Path, PathBuf};

pub fn parse_report(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "report: not yet supported"))
}

pub fn parse_summary(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "summary: not yet supported"))
}

pub fn parse_dir(path: &Path, _files: &[(PathBuf, String)]) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "harness folder: not yet supported"))
}
