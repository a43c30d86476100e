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

/// The scanner's state between blocks.
struct Scanner<'a> {
    lists: &'a [&'a str],
    out: Skim,
    /// Open containers, `{` or `[`.
    stack: Vec<u8>,
    in_string: Option<Str>,
    /// Backslashes right before the next byte of the string being scanned (a quote after an
    /// odd number of them is escaped).
    backslashes: usize,
    /// Inside an object, the next string is a key.
    want_key: bool,
    /// Bytes of the string being kept (`None`: too long).
    kept: Option<Vec<u8>>,
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
pub fn skim(mut reader: impl Read, lists: &[&str]) -> Result<Skim, SkimError> {
    let mut s = Scanner {
        lists,
        out: Skim::default(),
        stack: Vec::new(),
        in_string: None,
        backslashes: 0,
        want_key: false,
        kept: None,
        top_key: None,
        element_key: None,
        top_value: false,
        element_value: false,
        state_next: false,
        in_list: false,
        closed: false,
        started: false,
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    let mut first = true;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        let mut block = &buf[..n];
        let mut base = at;
        if first {
            first = false;
            if let Some(rest) = block.strip_prefix(b"\xef\xbb\xbf") {
                block = rest;
                base += 3;
            }
        }
        s.block(block, base)?;
        at += n as u64;
    }
    if !s.closed || s.in_string.is_some() {
        return Err(SkimError::Truncated { at });
    }
    s.out.size = at;
    Ok(s.out)
}

impl Scanner<'_> {
    fn block(&mut self, block: &[u8], base: u64) -> Result<(), SkimError> {
        let mut i = 0;
        while i < block.len() {
            if let Some(kind) = self.in_string {
                // Only a quote can end a string: escapes (`\n` every line of an output) do not
                // stop the search; whether the quote found is escaped is told by the backslashes
                // before it.
                let rest = &block[i..];
                let (segment, quote) = match memchr::memchr(b'"', rest) {
                    Some(j) => (&rest[..j], true),
                    None => (rest, false),
                };
                let run = segment.iter().rev().take_while(|&&c| c == b'\\').count();
                let run = if run == segment.len() { run + self.backslashes } else { run };
                if !quote {
                    self.keep(segment);
                    self.backslashes = run;
                    return Ok(());
                }
                self.keep(&rest[..=segment.len()]);
                i += segment.len() + 1;
                self.backslashes = 0;
                if run % 2 == 0 {
                    self.in_string = None;
                    self.string_ended(kind);
                }
                continue;
            }
            let b = block[i];
            let at = base + i as u64;
            i += 1;
            if b.is_ascii_whitespace() {
                continue;
            }
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
                    let kind = self.string_kind();
                    self.kept = (kind != Str::Skip).then(Vec::new);
                    self.in_string = Some(kind);
                    self.backslashes = 0;
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
        }
        Ok(())
    }

    /// What the string that starts now is.
    fn string_kind(&self) -> Str {
        match (self.stack.len(), self.want_key) {
            (1, true) => Str::TopKey,
            (3, true) if self.in_list => Str::ElementKey,
            (3, false) if self.in_list && self.element_key.as_deref() == Some("role") => Str::Role,
            _ => Str::Skip,
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if let Some(k) = &mut self.kept {
            if k.len() + bytes.len() > KEEP + 1 {
                self.kept = None;
            } else {
                k.extend_from_slice(bytes);
            }
        }
    }

    /// The string kept (without its closing quote), decoded; `None` when too long or bad.
    fn kept_text(&mut self) -> Option<String> {
        let mut raw = self.kept.take()?;
        raw.pop();
        if !raw.contains(&b'\\') {
            return String::from_utf8(raw).ok();
        }
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(&raw);
        quoted.push(b'"');
        serde_json::from_slice(&quoted).ok()
    }

    fn string_ended(&mut self, kind: Str) {
        match kind {
            Str::Skip => {}
            Str::TopKey => self.top_key = self.kept_text(),
            Str::ElementKey => self.element_key = self.kept_text(),
            Str::Role => {
                let role = self.kept_text();
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

#[cfg(test)]
mod tests;
