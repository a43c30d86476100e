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

/// A token of a part lexed ahead of the scanner.
#[derive(Debug, Clone, Copy)]
enum Token {
    Byte {
        at: u64,
        b: u8,
    },
    /// A string ended; its kept content is `arena[start..start + len]`.
    End {
        kept: Option<(u32, u8)>,
    },
}

/// What a part of the file lexed on its own gave, in order, to be replayed into the scanner.
#[derive(Debug, Default)]
pub struct Recorded {
    tokens: Vec<Token>,
    arena: Vec<u8>,
}

impl Tokens for Recorded {
    fn byte(&mut self, at: u64, b: u8) -> Result<(), SkimError> {
        self.tokens.push(Token::Byte { at, b });
        Ok(())
    }

    fn string_end(&mut self, kept: Option<&[u8]>) {
        let kept = kept.and_then(|k| {
            let start = u32::try_from(self.arena.len()).ok()?;
            let len = u8::try_from(k.len()).ok()?;
            self.arena.extend_from_slice(k);
            Some((start, len))
        });
        self.tokens.push(Token::End { kept });
    }
}

impl Recorded {
    /// Give the tokens, in order, to `out`.
    pub fn replay(&self, out: &mut impl Tokens) -> Result<(), SkimError> {
        for t in &self.tokens {
            match *t {
                Token::Byte { at, b } => out.byte(at, b)?,
                Token::End { kept } => {
                    out.string_end(kept.map(|(s, n)| &self.arena[s as usize..s as usize + n as usize]))
                }
            }
        }
        Ok(())
    }
}
