//! A document read from disk a step at a time: serde_json's reader deserializer with a visitor
//! over the top-level members, the steps list element by element. The format is told from the
//! members met before the first list (as `detect` tells it from the keys): `trajectory` or
//! `attempts` is SWE-agent, `messages` after `info` or `trajectory_format` is mini-swe-agent.
//! Anything else, or an order that leaves the format open when the steps begin, is for the
//! whole-file path ([`ReadError::Whole`]). The file is hashed as it is read.

use super::skim::Skim;
use super::{Ending, Halt, Halted, ReadError, StepSink, sliced};
use crate::error::IngestError;
use crate::ingest::mini_swe_agent::MiniDoc;
use crate::ingest::swe_agent::SweDoc;
use crate::model::Format;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A document read to its end.
#[derive(Debug)]
pub struct Document {
    pub format: Format,
    pub ending: Ending,
    /// Bytes read and their blake3 hash (as `ingest` hashes a file).
    pub size: u64,
    pub hash: [u8; 32],
}

/// Read `path` a step at a time into `sink`; `progress` counts the bytes read so far. A big
/// mini-swe-agent document is parsed from memory a value at a time ([`sliced`]), any other as a
/// stream; both give the same steps, ending and errors.
pub fn read(path: &Path, sink: &mut dyn StepSink, progress: &AtomicU64) -> Result<Document, ReadError> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let skim = if size >= sliced::FROM_BYTES { sliced::skim_for(path) } else { None };
    read_as(path, sink, progress, skim)
}

/// [`read`] from the values `skim` found, or as a stream when there is no skim.
pub fn read_as(
    path: &Path,
    sink: &mut dyn StepSink,
    progress: &AtomicU64,
    skim: Option<Skim>,
) -> Result<Document, ReadError> {
    let io = |e| ReadError::Invalid(IngestError::Io { path: path.to_path_buf(), source: e });
    let mut state = State::Undecided(Members::default());
    let mut halted = Halted::default();
    let mut atif_keys = 0u8;
    let top = Top { path, state: &mut state, sink, halted: &mut halted, atif_keys: &mut atif_keys };
    let skim_used = skim.is_some();
    let (read, size, hash) = match skim {
        Some(skim) => {
            let mut blocks = sliced::Blocks::open(path, progress).map_err(io)?;
            let read = top.visit_map(sliced::Skimmed::new(&mut blocks, skim)).and_then(|()| blocks.finish());
            (read, blocks.size, *blocks.hasher.finalize().as_bytes())
        }
        None => {
            let file = std::fs::File::open(path).map_err(io)?;
            let (mut hasher, mut size) = (blake3::Hasher::new(), 0u64);
            let hashing = Hashing { inner: file, hasher: &mut hasher, size: &mut size, progress };
            let mut reader = BufReader::with_capacity(1 << 20, hashing);
            if reader.fill_buf().map_err(io)?.starts_with(b"\xef\xbb\xbf") {
                reader.consume(3);
            }
            // The reader by value: serde_json then reads a byte at a time from its buffer
            // directly, twice as fast as through a reference.
            let mut de = serde_json::Deserializer::from_reader(reader);
            // The end is read too: every byte of the file has been hashed once it is reached.
            let read = de.deserialize_map(top).and_then(|()| de.end());
            drop(de);
            (read, size, *hasher.finalize().as_bytes())
        }
    };
    if let Err(e) = read {
        let own = match &mut state {
            State::Swe(doc) => doc.halted.0.take(),
            State::Mini(doc) => doc.halted.0.take(),
            State::Undecided(_) => None,
        };
        if own.is_some() {
            halted.0 = own;
        }
        if halted.0.is_none() && skim_used {
            return Err(stream_error(path));
        }
        return Err(halted.error(path, e));
    }
    // `detect` takes `schema_version`, `agent` and `steps` together for ATIF before anything else.
    if atif_keys == (1 << ATIF_KEYS.len()) - 1 {
        return Err(ReadError::Whole("an ATIF trajectory"));
    }
    let (format, ending) = match state {
        State::Swe(doc) => (Format::SweAgent, doc.finish()),
        State::Mini(doc) => (Format::MiniSweAgent, doc.finish()),
        State::Undecided(_) => return Err(ReadError::Whole("not a SWE-agent or mini-swe-agent trajectory")),
    };
    Ok(Document { format, ending: ending.map_err(ReadError::Invalid)?, size, hash })
}

/// The error of a document whose values could not all be parsed from memory: the stream reads
/// it again (its steps dropped) for serde_json's own message and position.
fn stream_error(path: &Path) -> ReadError {
    match read_as(path, &mut Dropped, &AtomicU64::new(0), None) {
        Err(e) => e,
        // The stream took what the values refused (the file changed between the skim and the
        // reading, or a skim this reader misread): what was handed over is not trusted, and
        // the file is read whole.
        Ok(_) => ReadError::Whole("its values read from memory and the stream disagree"),
    }
}

/// A sink that takes every step and keeps none.
struct Dropped;

impl StepSink for Dropped {
    fn begin(&mut self, _run: &crate::model::Run) -> bool {
        true
    }
    fn step(
        &mut self,
        _step: crate::model::Step,
        _edits: Vec<crate::model::Edit>,
        _how: crate::analysis::reconstruct::Exec,
    ) -> bool {
        true
    }
}

/// Whether a file may be read a step at a time: a JSON object that is not JSON lines, under the
/// size a whole read would take (a larger one is the whole-file path's to refuse). Whether it is
/// a document [`read`] takes is told only once it is read far enough ([`ReadError::Whole`]).
pub fn takes(path: &Path, max_document: u64) -> bool {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(u64::MAX);
    size <= max_document
        && crate::ingest::source::sniff(path).is_ok()
        && matches!(crate::ingest::stream::sniff(path, None), Ok(None))
        && first_byte(path) == Some(b'{')
}

/// The first byte that is not whitespace or a byte-order mark.
fn first_byte(path: &Path) -> Option<u8> {
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    let head = &head[..n];
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    head.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// Hashes and counts what passes through.
struct Hashing<'a> {
    inner: std::fs::File,
    hasher: &'a mut blake3::Hasher,
    size: &'a mut u64,
    progress: &'a AtomicU64,
}

impl Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        *self.size += n as u64;
        self.progress.store(*self.size, Ordering::Relaxed);
        Ok(n)
    }
}

/// Members read before the format is known (small ones; the lists decide).
#[derive(Default)]
struct Members {
    info: Option<Value>,
    replay: Option<Value>,
    instance_id: Option<Value>,
    format_version: Option<Value>,
    /// `info` and `trajectory_format` were present (whatever their values): what detection reads.
    has_info: bool,
    has_format: bool,
}

enum State {
    Undecided(Members),
    // Boxed: a document's state is large beside the members (one per read).
    Swe(Box<SweDoc>),
    Mini(Box<MiniDoc>),
}

struct Top<'a> {
    path: &'a Path,
    state: &'a mut State,
    sink: &'a mut dyn StepSink,
    halted: &'a mut Halted,
    /// Which of [`ATIF_KEYS`] the document has (a bit each).
    atif_keys: &'a mut u8,
}

/// The members that make an object an ATIF trajectory, whatever else it holds (`detect::is_atif`).
const ATIF_KEYS: [&str; 3] = ["schema_version", "agent", "steps"];

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let key = key.as_str();
            if let Some(i) = ATIF_KEYS.iter().position(|k| *k == key) {
                *self.atif_keys |= 1 << i;
            }
            match &mut *self.state {
                State::Swe(doc) => doc.member::<Box<RawValue>, A>(key, &mut map, self.sink)?,
                State::Mini(_) if matches!(key, "trajectory" | "attempts") => {
                    return Err(self.halted.stop(Halt::Whole("a SWE-agent trajectory after mini-swe-agent messages")));
                }
                State::Mini(doc) => doc.member(key, &mut map, self.sink)?,
                State::Undecided(m) => match key {
                    "trajectory" | "attempts" => {
                        *self.state = State::Swe(Box::new(SweDoc::new(self.path, m.info.take(), m.replay.take())));
                        if let State::Swe(doc) = &mut *self.state {
                            doc.member::<Box<RawValue>, A>(key, &mut map, self.sink)?;
                        }
                    }
                    "messages" if m.has_info || m.has_format => {
                        let doc = MiniDoc::new(self.path, m.info.take(), m.instance_id.take(), m.format_version.take());
                        *self.state = State::Mini(Box::new(doc));
                        if let State::Mini(doc) = &mut *self.state {
                            doc.member(key, &mut map, self.sink)?;
                        }
                    }
                    "messages" | "history" => {
                        return Err(self.halted.stop(Halt::Whole("its steps come before what tells its format")));
                    }
                    "info" => {
                        m.has_info = true;
                        m.info = map.next_value()?;
                    }
                    "trajectory_format" => {
                        m.has_format = true;
                        m.format_version = map.next_value()?;
                    }
                    "replay_config" => m.replay = map.next_value()?,
                    "instance_id" => m.instance_id = map.next_value()?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                },
            }
        }
        Ok(())
    }
}
