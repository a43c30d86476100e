//! Skimming a document for its steps without parsing it: a byte scanner that keeps only the
//! state of strings, escapes and nesting (`memchr` finds the end of a string, where most of a
//! trajectory's bytes are) and notes where the top-level members' values are, where each
//! element of the steps list is, and the few keys of an element that tell what it is (a
//! message's `role`, whether a SWE-agent step's `state` is a string). Several hundred MB a
//! second, so the end of a big file can be parsed before the reading gets there.
//!
//! The scanner checks nesting, not JSON: what it finds is parsed by serde_json when asked for,
//! and a file serde_json would refuse is refused by the reading itself. A file that ends inside a
//! value, a bracket that closes what it did not open, or anything after the document is an error
//! naming the byte.
//!
//! The scan is two halves: the lexer ([`lex`]) finds strings and escapes, nearly all the work;
//! the scanner gives meaning to what lies outside strings. A big file is lexed in parts on
//! several cores ([`parts`]) and the scanner goes through them in order.

mod lex;
mod parts;

use lex::{Lexer, Tokens};
pub use parts::{skim_bytes, skim_file};
use std::io::Read;

/// Where a top-level member's value is: bytes `start..end` of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    pub start: u64,
    pub end: u64,
}

/// An element of the steps list: its bytes, and what its own keys say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    pub start: u64,
    pub end: u64,
    /// It is a JSON object (not a string, number, list...).
    pub object: bool,
    /// Its `role`, when that is a short string.
    pub role: Option<String>,
    /// The first byte of its `state` value (`"` a string, `n` null, `{` an object).
    pub state: Option<u8>,
}

/// What skimming a document found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skim {
    pub members: Vec<Member>,
    /// The key of the list indexed (the first top-level member named in `lists` whose value is a
    /// list), and its elements.
    pub list: Option<String>,
    pub elements: Vec<Element>,
    /// Bytes scanned.
    pub size: u64,
}

impl Skim {
    /// The last member named `key` (as serde_json keeps the last of duplicate keys).
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().rev().find(|m| m.key == key)
    }
}

/// Why a document could not be skimmed.
#[derive(Debug, thiserror::Error)]
pub enum SkimError {
    #[error("at byte {at}: {what}")]
    Shape { at: u64, what: &'static str },
    #[error("the file ends inside a value (at byte {at})")]
    Truncated { at: u64 },
    #[error("the file could not be read: {0}")]
    Io(#[from] std::io::Error),
}

/// Strings longer than this are not kept (keys and roles are short).
const KEEP: usize = 64;

/// What a string being scanned is, for the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Str {
    /// Nothing to keep.
    Skip,
    /// A top-level key.
    TopKey,
    /// A key of an element of the list.
    ElementKey,
    /// The value of an element's `role`.
    Role,
}

/// The scanner: what the lexer's tokens mean, the containers open and the lists found.
#[derive(Default)]
struct Scanner<'a> {
    lists: &'a [&'a str],
    out: Skim,
    /// Open containers, `{` or `[`.
    stack: Vec<u8>,
    /// What the string being scanned is (`None`: no string is open).
    in_string: Option<Str>,
    /// Inside an object, the next string is a key.
    want_key: bool,
    /// The last top-level key, and the last key of the element being read.
    top_key: Option<String>,
    element_key: Option<String>,
    /// A value is expected next at the top level (after `:`), or in the list (after `[` or `,`).
    top_value: bool,
    element_value: bool,
    /// The next value is an element's `state`.
    state_next: bool,
    /// The list is being read: the depth of its elements (the stack's length inside it).
    in_list: bool,
    /// The top-level document has closed.
    closed: bool,
    started: bool,
}

/// Skim `reader` (a document of `size` bytes or so), indexing the first top-level list named
/// in `lists`.
pub fn skim(reader: impl Read, lists: &[&str]) -> Result<Skim, SkimError> {
    let mut s = Scanner::new(lists);
    let at = lex(reader, 0, u64::MAX, &mut Lexer::default(), &mut s)?;
    s.finish(at)
}

impl<'a> Scanner<'a> {
    fn new(lists: &'a [&'a str]) -> Scanner<'a> {
        Scanner { lists, ..Scanner::default() }
    }

    /// The skim of a document that ended at offset `at`.
    fn finish(mut self, at: u64) -> Result<Skim, SkimError> {
        if !self.closed || self.in_string.is_some() {
            return Err(SkimError::Truncated { at });
        }
        self.out.size = at;
        Ok(self.out)
    }
}

/// Lex `reader`, the bytes from file offset `from`, up to `limit` bytes of them or its end, into
/// `out`: the offset reached. A byte-order mark at offset 0 is passed over.
fn lex(
    mut reader: impl Read,
    from: u64,
    limit: u64,
    lexer: &mut Lexer,
    out: &mut impl Tokens,
) -> Result<u64, SkimError> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = from;
    while at - from < limit {
        let room = usize::try_from(limit - (at - from)).unwrap_or(usize::MAX).min(buf.len());
        // The first block holds the whole byte-order mark if there is one.
        let n = fill(&mut reader, &mut buf[..room], if at == 0 { BOM.len() } else { 1 })?;
        if n == 0 {
            break;
        }
        let mut block = &buf[..n];
        let mut base = at;
        if at == 0
            && let Some(rest) = block.strip_prefix(BOM)
        {
            block = rest;
            base += BOM.len() as u64;
        }
        lexer.block(block, base, out)?;
        at += n as u64;
    }
    Ok(at)
}

/// The UTF-8 byte-order mark, passed over at the start of a file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Read into `buf` until it holds `at_least` bytes (or all of it, if shorter) or the reader
/// ends: how many it holds.
fn fill(reader: &mut impl Read, buf: &mut [u8], at_least: usize) -> Result<usize, SkimError> {
    let mut n = 0;
    while n < at_least.min(buf.len()) {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(got) => n += got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

impl Tokens for Scanner<'_> {
    fn byte(&mut self, at: u64, b: u8) -> Result<(), SkimError> {
        if self.closed {
            return Err(SkimError::Shape { at, what: "something follows the document" });
        }
        if !self.started && b != b'{' {
            return Err(SkimError::Shape { at, what: "the document is not a JSON object" });
        }
        self.started = true;
        if b != b':' {
            self.value_starts(b, at);
        }
        match b {
            b'"' => {
                self.in_string = Some(self.string_kind());
                self.want_key = false;
            }
            b'{' | b'[' => {
                self.stack.push(b);
                self.want_key = b == b'{';
            }
            b'}' | b']' => {
                let open = if b == b'}' { b'{' } else { b'[' };
                if self.stack.last() != Some(&open) {
                    return Err(SkimError::Shape { at, what: "a bracket closes what it did not open" });
                }
                self.value_ends(at);
                self.stack.pop();
                if self.in_list && self.stack.len() == 1 {
                    self.in_list = false;
                }
                self.want_key = false;
                if self.stack.is_empty() {
                    self.closed = true;
                }
            }
            b',' => {
                self.value_ends(at);
                self.want_key = self.stack.last() == Some(&b'{');
                if self.in_list && self.stack.len() == 2 {
                    self.element_value = true;
                }
            }
            b':' => {
                match self.stack.len() {
                    1 => self.top_value = true,
                    3 if self.in_list => self.state_next = self.element_key.as_deref() == Some("state"),
                    _ => {}
                }
                self.want_key = false;
            }
            _ => {}
        }
        Ok(())
    }

    fn string_end(&mut self, kept: Option<&[u8]>) {
        if let Some(kind) = self.in_string.take() {
            self.string_ended(kind, kept);
        }
    }
}

impl Scanner<'_> {
    /// What the string that starts now is.
    fn string_kind(&self) -> Str {
        match (self.stack.len(), self.want_key) {
            (1, true) => Str::TopKey,
            (3, true) if self.in_list => Str::ElementKey,
            (3, false) if self.in_list && self.element_key.as_deref() == Some("role") => Str::Role,
            _ => Str::Skip,
        }
    }

    fn string_ended(&mut self, kind: Str, kept: Option<&[u8]>) {
        match kind {
            Str::Skip => {}
            Str::TopKey => self.top_key = kept.and_then(text_of),
            Str::ElementKey => self.element_key = kept.and_then(text_of),
            Str::Role => {
                let role = kept.and_then(text_of);
                if let Some(e) = self.out.elements.last_mut() {
                    e.role = role;
                }
            }
        }
    }

    /// A byte that is not whitespace: it may begin a member's value or a list's element.
    fn value_starts(&mut self, b: u8, at: u64) {
        if self.top_value && self.stack.len() == 1 {
            self.top_value = false;
            let key = self.top_key.take().unwrap_or_default();
            let list = b == b'[' && self.out.list.is_none() && self.lists.contains(&key.as_str());
            if list {
                self.out.list = Some(key.clone());
                self.in_list = true;
                self.element_value = true;
            }
            self.out.members.push(Member { key, start: at, end: at });
            return;
        }
        if self.in_list && self.stack.len() == 2 && self.element_value && b != b']' {
            self.element_value = false;
            self.element_key = None;
            self.out.elements.push(Element { start: at, end: at, object: b == b'{', ..Element::default() });
            return;
        }
        if self.state_next {
            self.state_next = false;
            if let Some(e) = self.out.elements.last_mut() {
                e.state = Some(b);
            }
        }
    }

    /// A `,`, `}` or `]` at `at`: the member or element open at that depth ends before it.
    fn value_ends(&mut self, at: u64) {
        match self.stack.len() {
            1 => {
                if let Some(m) = self.out.members.last_mut()
                    && m.end == m.start
                {
                    m.end = at;
                }
            }
            2 if self.in_list => {
                if let Some(e) = self.out.elements.last_mut()
                    && e.end == e.start
                {
                    e.end = at;
                }
            }
            _ => {}
        }
    }
}

/// A string's raw content decoded (escapes as JSON has them); `None` when bad.
fn text_of(raw: &[u8]) -> Option<String> {
    if !raw.contains(&b'\\') {
        return String::from_utf8(raw.to_vec()).ok();
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

#[cfg(test)]
mod tests;
