//! mini-swe-agent trajectories (`trajectory_format` "mini-swe-agent-1" and "mini-swe-agent-1.1").

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::Path;

pub fn parse(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "mini-swe-agent: not yet supported"))
}
