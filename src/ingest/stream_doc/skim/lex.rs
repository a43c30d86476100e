//! The byte-level half of the skim: strings and escapes. The lexer finds where strings end
//! (`memchr` for quotes, the backslashes before a quote telling whether it is escaped) and hands
//! every other byte that is not whitespace, with the short strings' contents, to a [`Tokens`]
//! sink: the scanner itself, or a [`Recorded`] list that the scanner replays once it knows the
//! state the bytes began in (a part of the file skimmed on another core).

use super::{KEEP, SkimError};

/// Where the lexer's findings go.
pub trait Tokens {
    /// A byte outside strings that is not whitespace, at file offset `at` (`"` opens a string).
    fn byte(&mut self, at: u64, b: u8) -> Result<(), SkimError>;
    /// The string open ends; `kept` is its raw content (escapes as written) when at most
    /// [`KEEP`] bytes long and seen whole.
    fn string_end(&mut self, kept: Option<&[u8]>);
}

/// The lexer's state between blocks.
#[derive(Debug, Default)]
pub struct Lexer {
    pub in_string: bool,
    /// Backslashes right before the next byte of the string being scanned (a quote after an
    /// odd number of them is escaped).
    pub backslashes: usize,
    /// The string being scanned, while it is short enough to keep.
    kept: Vec<u8>,
    keeping: bool,
}

impl Lexer {
    /// A lexer that begins inside a string it has not seen the start of, with no backslash
    /// before its first byte: a part of a file cut where the byte before is not a backslash.
    pub fn inside_a_string() -> Lexer {
        Lexer { in_string: true, ..Lexer::default() }
    }

    /// Lex `block`, the bytes at file offset `base` on.
    pub fn block(&mut self, block: &[u8], base: u64, out: &mut impl Tokens) -> Result<(), SkimError> {
        let mut i = 0;
        while i < block.len() {
            if self.in_string {
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
                self.keep(segment);
                if !quote {
                    self.backslashes = run;
                    return Ok(());
                }
                i += segment.len() + 1;
                self.backslashes = 0;
                if run % 2 == 1 {
                    self.keep(b"\"");
                    continue;
                }
                self.in_string = false;
                out.string_end(self.keeping.then_some(self.kept.as_slice()));
                continue;
            }
            let b = block[i];
            i += 1;
            if b.is_ascii_whitespace() {
                continue;
            }
            out.byte(base + i as u64 - 1, b)?;
            if b == b'"' {
                self.in_string = true;
                self.backslashes = 0;
                self.kept.clear();
                self.keeping = true;
            }
        }
        Ok(())
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.keeping {
            if self.kept.len() + bytes.len() > KEEP {
                self.keeping = false;
            } else {
                self.kept.extend_from_slice(bytes);
            }
        }
    }
}

/// A token of a part lexed ahead of the scanner: a byte outside strings, `gap` bytes after the
/// one before (8 bytes a token: a part of a big file holds a few hundred thousand), or, as the
/// bytes [`END`] and [`END_KEPT`] that JSON never has outside strings, a string's end.
#[derive(Debug, Clone, Copy)]
struct Token {
    gap: u32,
    b: u8,
}

/// A string ended.
const END: u8 = 0;
/// A string ended; its content is next in the arena, after a byte of its length.
const END_KEPT: u8 = 1;

/// What a part of the file lexed on its own gave, in order, to be replayed into the scanner.
#[derive(Debug)]
pub struct Recorded {
    tokens: Vec<Token>,
    arena: Vec<u8>,
    /// The part's first offset, and the offset of the last byte recorded (the start before any).
    start: u64,
    last: u64,
    /// Something the tokens cannot say: a byte [`END`] or [`END_KEPT`] outside strings (not
    /// JSON), or 4 GiB between two bytes. The part is lexed again instead of replayed.
    broken: bool,
}

impl Recorded {
    /// Tokens of the part that begins at offset `start`.
    pub fn new(start: u64) -> Recorded {
        Recorded { tokens: Vec::new(), arena: Vec::new(), start, last: start, broken: false }
    }
}

impl Tokens for Recorded {
    fn byte(&mut self, at: u64, b: u8) -> Result<(), SkimError> {
        match u32::try_from(at - self.last) {
            Ok(gap) if b > END_KEPT => {
                self.tokens.push(Token { gap, b });
                self.last = at;
            }
            _ => self.broken = true,
        }
        Ok(())
    }

    fn string_end(&mut self, kept: Option<&[u8]>) {
        let b = match kept.map(|k| (k, u8::try_from(k.len()))) {
            Some((k, Ok(len))) => {
                self.arena.push(len);
                self.arena.extend_from_slice(k);
                END_KEPT
            }
            _ => END,
        };
        self.tokens.push(Token { gap: 0, b });
    }
}

impl Recorded {
    /// Give the tokens, in order, to `out`; false (and nothing given) when the part must be
    /// lexed again.
    pub fn replay(&self, out: &mut impl Tokens) -> Result<bool, SkimError> {
        if self.broken {
            return Ok(false);
        }
        let (mut at, mut kept) = (self.start, 0);
        for t in &self.tokens {
            match t.b {
                END => out.string_end(None),
                END_KEPT => {
                    let len = usize::from(self.arena[kept]);
                    out.string_end(Some(&self.arena[kept + 1..kept + 1 + len]));
                    kept += 1 + len;
                }
                b => {
                    at += u64::from(t.gap);
                    out.byte(at, b)?;
                }
            }
        }
        Ok(true)
    }
}
