//! SWE-agent `.traj` files.

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::Path;

pub fn parse(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "swe-agent: not yet supported"))
}
