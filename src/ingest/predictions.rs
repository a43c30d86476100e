//! SWE-agent predictions: `all_preds.jsonl`, `preds.json` (dict or list), single `.pred` files.

use crate::error::IngestError;
use crate::model::Parsed;
use std::path::Path;

pub fn parse(path: &Path, _text: &str) -> Result<Parsed, IngestError> {
    Err(IngestError::shape(path, "predictions: not yet supported"))
}
