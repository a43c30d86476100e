//! Any step of a document, before the reading gets there: the file skimmed once ([`skim`]) for
//! where its steps are, then the step asked for parsed from its own bytes (and its neighbours'),
//! built by the adapter's own code as the reading will build it.
//!
//! mini-swe-agent: a step is an assistant message of `messages` and the `user`/`tool` messages
//! after it; its flags use the run's final submission (`info`, else the exit message's), as the
//! read to the end leaves them. SWE-agent: a step is an element of the top-level `trajectory`,
//! built with the one before and the one after it. A RetryAgent file (`attempts`) is not indexed:
//! its runs are read in order.
//!
//! What a step gains only from the whole run (its shell edits, reconstructed when the reading
//! ends) is not here; the caller says so where the step is shown.

use super::skim::{self, Skim, SkimError};
use crate::error::IngestError;
use crate::ingest::json::nonempty_str;
use crate::ingest::{mini_swe_agent, swe_agent};
use crate::model::{Format, Step};
use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The lists a step reader's formats keep their steps in.
pub const LISTS: [&str; 2] = ["messages", "trajectory"];

/// Where a document's steps are.
#[derive(Debug)]
pub struct Index {
    path: PathBuf,
    format: Format,
    skim: Skim,
    /// The element each step is built from.
    starts: Vec<usize>,
    /// mini-swe-agent: the submission, and the last exit message.
    submission: Option<String>,
    exit: Option<Value>,
    /// SWE-agent: the first element with a `state`, and whether it is a string.
    first_state: Option<(usize, bool)>,
}

/// Skim `path` for the lists of [`LISTS`].
pub fn skim_file(path: &Path) -> Result<Skim, SkimError> {
    skim::skim_file(path, &LISTS)
}

impl Index {
    /// The index of a document of `format` skimmed as `skim`; `None` when its steps cannot be
    /// found this way (another format, a RetryAgent file, no list of steps).
    pub fn new(path: &Path, format: Format, skim: Skim) -> Result<Option<Index>, IngestError> {
        let mut index = Index {
            path: path.to_path_buf(),
            format,
            skim,
            starts: Vec::new(),
            submission: None,
            exit: None,
            first_state: None,
        };
        match format {
            Format::MiniSweAgent if index.skim.list.as_deref() == Some("messages") => {
                let role = |e: &skim::Element, r: &str| e.object && e.role.as_deref() == Some(r);
                index.starts =
                    (0..index.skim.elements.len()).filter(|&i| role(&index.skim.elements[i], "assistant")).collect();
                let exit = index.skim.elements.iter().rposition(|e| role(e, "exit"));
                index.exit = exit.map(|i| index.element(i)).transpose()?;
                let info = match index.skim.member("info") {
                    Some(m) => Some(index.parse::<Value>(m.start, m.end)?),
                    None => None,
                };
                let info = info.filter(Value::is_object).unwrap_or(Value::Null);
                let exit_extra = index.exit.as_ref().and_then(|e| e.get("extra")).unwrap_or(&Value::Null);
                index.submission = nonempty_str(&info, "submission").or_else(|| nonempty_str(exit_extra, "submission"));
            }
            Format::SweAgent
                if index.skim.list.as_deref() == Some("trajectory") && index.skim.member("attempts").is_none() =>
            {
                index.starts = (0..index.skim.elements.len()).collect();
                index.first_state = index
                    .skim
                    .elements
                    .iter()
                    .position(|e| e.state.is_some_and(|b| b != b'n'))
                    .map(|i| (i, index.skim.elements[i].state == Some(b'"')));
            }
            _ => return Ok(None),
        }
        Ok(Some(index))
    }

    /// How many steps the document has.
    pub fn steps(&self) -> usize {
        self.starts.len()
    }

    /// Step `k` as the reading will build it (its shell edits aside).
    pub fn step(&self, k: usize) -> Result<Step, IngestError> {
        let Some(&at) = self.starts.get(k) else {
            return Err(IngestError::shape(&self.path, format!("no step {k}: the file has {} steps", self.steps())));
        };
        match self.format {
            Format::MiniSweAgent => {
                let end = self.starts.get(k + 1).copied().unwrap_or(self.skim.elements.len());
                let assistant = self.element(at)?;
                let mut replies = Vec::new();
                for (i, e) in self.skim.elements.iter().enumerate().take(end).skip(at + 1) {
                    if e.object && matches!(e.role.as_deref(), Some("user" | "tool")) {
                        replies.push(self.element(i)?);
                    }
                }
                let exit = if k + 1 == self.steps() { self.exit.as_ref() } else { None };
                Ok(mini_swe_agent::turn_step(&assistant, replies, exit, self.submission.as_deref()))
            }
            _ => {
                let bytes = |i: usize| self.skim.elements.get(i).map(|e| self.bytes(e.start, e.end)).transpose();
                let (prev, this, next) = (k.checked_sub(1).map(bytes).transpose()?.flatten(), bytes(k)?, bytes(k + 1)?);
                let this = this.unwrap_or_default();
                swe_agent::step_between(prev.as_deref(), &this, next.as_deref(), k, self.first_state)
                    .map(|(step, _)| step)
                    .map_err(|e| IngestError::json(&self.path, &e))
            }
        }
    }

    fn element(&self, i: usize) -> Result<Value, IngestError> {
        let e = self.skim.elements.get(i).ok_or_else(|| IngestError::shape(&self.path, "no such element"))?;
        self.parse(e.start, e.end)
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, start: u64, end: u64) -> Result<T, IngestError> {
        serde_json::from_slice(&self.bytes(start, end)?).map_err(|e| IngestError::json(&self.path, &e))
    }

    /// Bytes `start..end` of the file.
    fn bytes(&self, start: u64, end: u64) -> Result<Vec<u8>, IngestError> {
        let io = |e| IngestError::Io { path: self.path.clone(), source: e };
        let mut file = std::fs::File::open(&self.path).map_err(io)?;
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        let len = usize::try_from(end.saturating_sub(start)).unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(len.min(1 << 26));
        file.take(len as u64).read_to_end(&mut out).map_err(io)?;
        if out.len() != len {
            return Err(IngestError::shape(&self.path, "the file changed while it was read"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
