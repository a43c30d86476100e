//! A document's top-level members and steps parsed from memory, one at a time. serde_json's
//! reader of a stream takes a byte at a time through `io::Read`; its reader of a slice finds the
//! end of a string a word at a time and is several times faster. So the document is skimmed
//! first ([`skim_file`]: where each member's value and each element of the steps list lie), then
//! read once, in order, in blocks (hashed and counted as it goes), and each value is parsed from
//! the block holding it: only the value being parsed is held, as with the stream.
//!
//! The visitors are the stream's own ([`super::read`]'s `Top` and the adapters'): they are given
//! a map of the members whose values are parsed from their slices, and the steps list as a
//! sequence of its elements. What lies between the values (braces, keys, colons, commas,
//! whitespace, anything after the document) is kept as a skeleton with `null` for each value and
//! parsed at the end: a document the stream would refuse is refused here too, and when it is,
//! the caller reads it again as a stream for serde_json's own error and position.

use super::skim::{Element, Member, Skim, skim_file};
use serde::de::value::StringDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Files smaller than this are read as a stream: the skim and the second look at the file cost
/// more than they save.
pub(super) const FROM_BYTES: u64 = 4 << 20;

/// Bytes read from the file at a time.
const BLOCK: usize = 1 << 20;

/// The skim of `path` when it is a document this reader takes: a mini-swe-agent document (its
/// steps in `messages`, no SWE-agent list anywhere). `None`: read it as a stream (which also
/// names the error of a file the skim could not read).
pub(super) fn skim_for(path: &Path) -> Option<Skim> {
    let skim = skim_file(path, &["messages", "trajectory", "attempts"]).ok()?;
    let swe = skim.members.iter().any(|m| matches!(m.key.as_str(), "trajectory" | "attempts" | "history"));
    (skim.list.as_deref() == Some("messages") && !swe).then_some(skim)
}

/// The file read in order: the bytes of the value being parsed, and the skeleton of what lies
/// between values.
pub(super) struct Blocks<'a> {
    file: std::fs::File,
    /// Bytes from file offset `base` on.
    buf: Vec<u8>,
    base: u64,
    /// Everything before this offset has been handed out or kept in the skeleton.
    cursor: u64,
    eof: bool,
    skeleton: Vec<u8>,
    pub(super) hasher: blake3::Hasher,
    pub(super) size: u64,
    progress: &'a AtomicU64,
}

impl<'a> Blocks<'a> {
    pub(super) fn open(path: &Path, progress: &'a AtomicU64) -> std::io::Result<Blocks<'a>> {
        Ok(Blocks {
            file: std::fs::File::open(path)?,
            buf: Vec::with_capacity(BLOCK),
            base: 0,
            cursor: 0,
            eof: false,
            skeleton: Vec::new(),
            hasher: blake3::Hasher::new(),
            size: 0,
            progress,
        })
    }

    /// Read until the buffer holds the bytes before offset `end` (or the file ends).
    fn fill_to(&mut self, end: u64) -> std::io::Result<()> {
        while !self.eof && self.base + self.buf.len() as u64 <= end {
            // What was handed out goes, once it is most of the buffer.
            let done = (self.cursor - self.base) as usize;
            if done >= BLOCK && done * 2 >= self.buf.len() {
                self.buf.drain(..done);
                self.base = self.cursor;
            }
            let old = self.buf.len();
            let n = (&mut self.file).take(BLOCK as u64).read_to_end(&mut self.buf)?;
            self.hasher.update(&self.buf[old..]);
            self.size += n as u64;
            self.progress.store(self.size, Ordering::Relaxed);
            self.eof = n == 0;
        }
        Ok(())
    }

    /// The bytes from the cursor to `to` go to the skeleton.
    fn skip_to(&mut self, to: u64) -> std::io::Result<()> {
        self.fill_to(to)?;
        let (from, to) = (self.index(self.cursor)?, self.index(to)?);
        self.skeleton.extend_from_slice(&self.buf[from..to]);
        self.cursor += (to - from) as u64;
        Ok(())
    }

    /// The bytes `start..end` of a value (what lies before it goes to the skeleton, `null` in
    /// its place).
    fn value(&mut self, start: u64, end: u64) -> std::io::Result<&[u8]> {
        self.skip_to(start)?;
        self.fill_to(end)?;
        let (from, to) = (self.index(start)?, self.index(end)?);
        self.skeleton.extend_from_slice(b"null");
        self.cursor = end;
        Ok(&self.buf[from..to])
    }

    /// Where offset `at` is in the buffer; an error when the file is shorter than the skim found
    /// (it changed since).
    fn index(&self, at: u64) -> std::io::Result<usize> {
        at.checked_sub(self.base)
            .map(|i| i as usize)
            .filter(|&i| i <= self.buf.len())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file changed while it was read"))
    }

    /// Read to the end: the rest goes to the skeleton, which must then be one JSON value.
    pub(super) fn finish(&mut self) -> Result<(), serde_json::Error> {
        self.fill_to(u64::MAX).map_err(serde_json::Error::io)?;
        self.skip_to(self.base + self.buf.len() as u64).map_err(serde_json::Error::io)?;
        let skeleton = self.skeleton.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&self.skeleton);
        serde_json::from_slice::<IgnoredAny>(skeleton).map(|_| ())
    }
}

/// The top-level members of a skimmed document, as a serde map whose values are parsed from
/// their slices; the steps list's elements are parsed one at a time.
pub(super) struct Skimmed<'b, 'a> {
    blocks: &'b mut Blocks<'a>,
    members: std::vec::IntoIter<Member>,
    elements: std::vec::IntoIter<Element>,
    /// The member whose value is the steps list (its place in `members`), when it has elements.
    list: Option<usize>,
    next: usize,
    current: Option<Member>,
}

impl<'b, 'a> Skimmed<'b, 'a> {
    pub(super) fn new(blocks: &'b mut Blocks<'a>, skim: Skim) -> Skimmed<'b, 'a> {
        let list = skim.elements.first().and_then(|first| {
            skim.members
                .iter()
                .position(|m| Some(&m.key) == skim.list.as_ref() && m.start < first.start && first.start < m.end)
        });
        Skimmed {
            blocks,
            members: skim.members.into_iter(),
            elements: skim.elements.into_iter(),
            list,
            next: 0,
            current: None,
        }
    }
}

/// A value parsed from its slice: serde_json's `Value`, which any visitor can be given (the
/// slice lives only until the next one is read).
fn parse(blocks: &mut Blocks<'_>, start: u64, end: u64) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(blocks.value(start, end).map_err(serde_json::Error::io)?)
}

impl<'de> MapAccess<'de> for Skimmed<'_, '_> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        let Some(member) = self.members.next() else { return Ok(None) };
        let key = StringDeserializer::<serde_json::Error>::new(member.key.clone());
        self.current = Some(member);
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let member = self.current.take().ok_or_else(|| serde_json::Error::custom("a value without its key"))?;
        let place = self.next;
        self.next += 1;
        if self.list == Some(place) {
            let list = List { blocks: &mut *self.blocks, elements: &mut self.elements };
            let value = seed.deserialize(list)?;
            if self.elements.len() > 0 {
                return Err(serde_json::Error::custom("the steps list was not read to its end"));
            }
            return Ok(value);
        }
        seed.deserialize(parse(self.blocks, member.start, member.end)?)
    }
}

/// The steps list, its elements parsed one at a time.
struct List<'l, 'a> {
    blocks: &'l mut Blocks<'a>,
    elements: &'l mut std::vec::IntoIter<Element>,
}

impl<'de> Deserializer<'de> for List<'_, '_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_seq(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> SeqAccess<'de> for List<'_, '_> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        let Some(e) = self.elements.next() else { return Ok(None) };
        seed.deserialize(parse(self.blocks, e.start, e.end)?).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.elements.len())
    }
}

#[cfg(test)]
mod tests;
