//! Python unittest text output (RefactorBench AST tests).

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::Path;

pub fn parse(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "unittest: not yet supported"))
}
