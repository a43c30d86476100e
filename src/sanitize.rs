//! Making untrusted trajectory text safe to print on a terminal, with nothing in it hidden.
//!
//! Trajectories carry ANSI colour codes, cursor movement, OSC sequences (which can set the
//! window title or the clipboard), carriage returns, backspaces, NULs, and characters a terminal
//! draws as nothing. None of them may act on the reviewer's terminal, and none may hide text the
//! bytes hold (an instruction to a model that the reviewer never sees):
//!
//! - CSI sequences (colours, cursor movement) are removed: they carry only numbers.
//! - String sequences (OSC, DCS, SOS, PM, APC) carry text a terminal never draws: shown as a
//!   marker with their text, `ESC ] 0;title BEL` as `⟦OSC 0;title⟧`.
//! - Other escape sequences (`ESC ( B`, `ESC c`) are removed; an ESC that starts none is `␛`.
//! - Other controls become visible symbols (control pictures `␀`..`␟`, `␡`, `�` for C1);
//!   `\r\n` becomes `\n`, a lone `\r` a line break. Newlines and tabs are kept.
//! - Line and paragraph separators (U+2028, U+2029), which terminals draw zero-width: `␤`.
//! - Unicode tag characters (U+E0000..U+E007F) spell ASCII invisibly: `⟦tags: the text⟧`, except
//!   in a subdivision flag (🏴 + tags such as `gbsct` + cancel tag), which is kept.
//! - Bidi overrides and isolates, zero-width spaces, word joiners, BOM: `�`.
//! - A variation selector following another (never legitimate; runs of them can encode bytes):
//!   the run beyond the first as `⟦N more variation selectors⟧`. Single variation selectors and
//!   zero-width joiners (emoji sequences) are kept.
//!
//! Text that needs none of this is borrowed, and clean stretches are copied whole.

use std::borrow::Cow;
use std::fmt::Write;

/// Sanitize text for the terminal (see the module documentation).
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if first_dirty(text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    clean_into(text, &mut out, true);
    Cow::Owned(out)
}

/// Terminal output's escape sequences only, as [`sanitize`] shows them: CSI and other escape
/// sequences removed, string sequences (OSC: a window title, a clipboard write; DCS, SOS, PM,
/// APC) as a marker with their text, `⟦OSC 52;c;aGk=⟧`. Every other character is kept as it is
/// (carriage returns, for a reader that redraws lines; `sanitize` shows the rest when printed).
pub fn escapes(text: &str) -> Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut s = Scanner { text, pos: 0 };
    while let Some(at) = s.rest().find('\u{1b}') {
        out.push_str(&s.rest()[..at]);
        s.pos += at + 1;
        escape(&mut s, &mut out);
    }
    out.push_str(s.rest());
    Cow::Owned(out)
}

/// The names string sequences are shown with (`⟦OSC ...⟧`).
pub const STRING_SEQUENCES: [&str; 5] = ["OSC", "DCS", "SOS", "PM", "APC"];

/// Appends `text` cleaned to `out`. `sequences`: ESC, CSI and string introducers start escape
/// sequences (false inside a string sequence's payload, which cannot hold them).
fn clean_into(text: &str, out: &mut String, sequences: bool) {
    let mut s = Scanner { text, pos: 0 };
    while let Some(dirty) = first_dirty(s.rest()) {
        out.push_str(&s.rest()[..dirty]);
        s.pos += dirty;
        let Some(c) = s.next() else { break };
        match c {
            '\r' if sequences => {
                if s.peek() != Some('\n') {
                    out.push('\n');
                }
            }
            '\u{1b}' if sequences => escape(&mut s, out),
            '\u{9b}' if sequences => {
                if !s.csi() {
                    out.push('\u{fffd}');
                }
            }
            '\u{90}' if sequences => string(&mut s, out, "DCS"),
            '\u{98}' if sequences => string(&mut s, out, "SOS"),
            '\u{9d}' if sequences => string(&mut s, out, "OSC"),
            '\u{9e}' if sequences => string(&mut s, out, "PM"),
            '\u{9f}' if sequences => string(&mut s, out, "APC"),
            c => plain(&mut s, c, out),
        }
    }
    out.push_str(s.rest());
}

/// Byte offset of the first character that is not copied as it is, if any. Scans bytes: only
/// ASCII controls and a few UTF-8 lead bytes can start one. Blocks of [`LANES`] bytes with none
/// that might ([`maybe_dirty`]: a test the compiler runs on a whole block at once) are passed
/// over; the others are scanned a byte at a time.
fn first_dirty(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // End of the last variation selector seen: one starting there follows another.
    let mut selector_end = usize::MAX;
    let blocks = bytes.chunks_exact(LANES);
    let tail = blocks.remainder().len();
    for (n, block) in blocks.enumerate() {
        if block.iter().fold(false, |any, &b| any | maybe_dirty(b)) {
            let at = n * LANES;
            if let Some(found) = scan(text, at..at + LANES, &mut selector_end) {
                return found;
            }
        }
    }
    scan(text, bytes.len() - tail..bytes.len(), &mut selector_end).unwrap_or(None)
}

/// Bytes tested at once by [`first_dirty`].
const LANES: usize = 32;

/// Whether byte `b` may start a character that is not copied as it is: a control other than
/// newline and tab, DEL, or a lead byte of a character from U+0080 on (a superset of those
/// [`scan`] looks at).
#[inline]
fn maybe_dirty(b: u8) -> bool {
    (b < 0x20 && b != b'\n' && b != b'\t') | (b == 0x7f) | (b >= 0xc2)
}

/// [`first_dirty`] over the bytes `range` of `text`: `Some(answer)` once it is known (a dirty
/// character, or a character that cannot be read), `None` to go on.
fn scan(text: &str, range: std::ops::Range<usize>, selector_end: &mut usize) -> Option<Option<usize>> {
    let start = range.start;
    for (k, &b) in text.as_bytes().get(range)?.iter().enumerate() {
        let i = start + k;
        match b {
            b'\n' | b'\t' => {}
            0..0x20 | 0x7f => return Some(Some(i)),
            // Lead bytes of C1 controls, U+061C, U+20xx, U+FExx and the tag plane.
            0xc2 | 0xd8 | 0xe2 | 0xef | 0xf3 => {
                let Some(c) = text.get(i..).and_then(|t| t.chars().next()) else { return Some(None) };
                if is_variation_selector(c) {
                    if i == *selector_end {
                        return Some(Some(i));
                    }
                    *selector_end = i + c.len_utf8();
                } else if is_control(c) || is_invisible_format(c) || is_line_separator(c) || is_tag(c) {
                    return Some(Some(i));
                }
            }
            _ => {}
        }
    }
    None
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Consumes characters while `f` holds.
    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&f) {
            self.next();
        }
    }

    /// The character before byte `at`.
    fn before(&self, at: usize) -> Option<char> {
        self.text.get(..at)?.chars().next_back()
    }

    /// After the CSI introducer: parameter and intermediate bytes, then a final byte in
    /// `@`..=`~`. Consumes the sequence and returns true, or consumes nothing and returns false
    /// when it is cut short (by a newline, another control, the end), so nothing is swallowed.
    fn csi(&mut self) -> bool {
        let start = self.pos;
        self.skip_while(|c| (' '..='?').contains(&c));
        if self.peek().is_some_and(|c| ('@'..='~').contains(&c)) {
            self.next();
            return true;
        }
        self.pos = start;
        false
    }
}

/// After ESC: CSI (`[`), a string sequence (`]` OSC, `P` DCS, `X` SOS, `^` PM, `_` APC),
/// intermediates then a final byte (`ESC ( B`), or one final byte (`ESC c`). Anything else: the
/// ESC is shown as `␛` and what follows is read as text.
fn escape(s: &mut Scanner<'_>, out: &mut String) {
    let start = s.pos;
    let removed = match s.next() {
        Some('[') => s.csi(),
        Some(']') => return string(s, out, "OSC"),
        Some('P') => return string(s, out, "DCS"),
        Some('X') => return string(s, out, "SOS"),
        Some('^') => return string(s, out, "PM"),
        Some('_') => return string(s, out, "APC"),
        Some(c) if (' '..='/').contains(&c) => {
            s.skip_while(|c| (' '..='/').contains(&c));
            s.next().is_some_and(|c| ('0'..='~').contains(&c))
        }
        Some(c) => ('0'..='~').contains(&c),
        None => false,
    };
    if !removed {
        s.pos = start;
        out.push('\u{241b}');
    }
}

/// A string sequence's payload, up to BEL, ST (`ESC \` or U+009C) or the end of the line (so a
/// stray introducer cannot take the rest of an observation), shown as `⟦NAME payload⟧`. An ESC
/// that is not ST ends it too and starts the next sequence.
fn string(s: &mut Scanner<'_>, out: &mut String, name: &str) {
    let start = s.pos;
    s.skip_while(|c| !matches!(c, '\u{7}' | '\u{9c}' | '\u{1b}' | '\n' | '\r'));
    let payload = &s.text[start..s.pos];
    match s.peek() {
        Some('\u{7}' | '\u{9c}') => {
            s.next();
        }
        Some('\u{1b}') if s.rest().get(1..).is_some_and(|r| r.starts_with('\\')) => s.pos += 2,
        _ => {}
    }
    out.push('⟦');
    out.push_str(name);
    if !payload.is_empty() {
        out.push(' ');
        clean_into(payload, out, false);
    }
    out.push('⟧');
}

/// A character outside escape sequences that is not copied as it is.
fn plain(s: &mut Scanner<'_>, c: char, out: &mut String) {
    if is_tag(c) {
        tags(s, out);
    } else if is_variation_selector(c) {
        selectors(s, out);
    } else if is_line_separator(c) {
        out.push('\u{2424}');
    } else if is_control(c) {
        out.push(visible(c));
    } else if is_invisible_format(c) {
        out.push('\u{fffd}');
    } else {
        out.push(c);
    }
}

/// A run of tag characters (the first already read): kept when it completes a subdivision flag,
/// else shown with the ASCII it spells.
fn tags(s: &mut Scanner<'_>, out: &mut String) {
    let start = s.pos - 4; // every tag character is 4 bytes in UTF-8
    s.skip_while(is_tag);
    let run = &s.text[start..s.pos];
    if s.before(start) == Some('\u{1f3f4}') && is_subdivision_tag(run) {
        out.push_str(run);
        return;
    }
    out.push_str("⟦tags: ");
    for c in run.chars() {
        let ascii = char::from_u32(c as u32 - 0xe0000).filter(|a| (' '..='~').contains(a));
        out.push(ascii.unwrap_or('\u{fffd}'));
    }
    out.push('⟧');
}

/// The tags of a subdivision flag (`🏴` + `gbsct` + cancel tag): a region's two letters, one to
/// four letters or digits, the cancel tag.
fn is_subdivision_tag(run: &str) -> bool {
    let Some(spec) = run.strip_suffix('\u{e007f}') else { return false };
    let ascii: Vec<u32> = spec.chars().map(|c| c as u32 - 0xe0000).collect();
    let letter = |n: &u32| (u32::from(b'a')..=u32::from(b'z')).contains(n);
    let digit = |n: &u32| (u32::from(b'0')..=u32::from(b'9')).contains(n);
    (3..=6).contains(&ascii.len()) && ascii[..2].iter().all(letter) && ascii[2..].iter().all(|n| letter(n) || digit(n))
}

/// A variation selector (the first already read) and any that follow: the first is kept unless
/// it follows another; the rest are counted in a marker.
fn selectors(s: &mut Scanner<'_>, out: &mut String) {
    let first = s.before(s.pos).unwrap_or_default();
    let start = s.pos - first.len_utf8();
    let mut extra = 0;
    if s.before(start).is_some_and(is_variation_selector) {
        extra += 1;
    } else {
        out.push(first);
    }
    while s.peek().is_some_and(is_variation_selector) {
        s.next();
        extra += 1;
    }
    if extra > 0 {
        let _ = write!(out, "⟦{extra} more variation selector{}⟧", if extra == 1 { "" } else { "s" });
    }
}

/// Characters that reorder or hide text (Trojan Source bidi overrides and isolates, zero-width
/// space, word joiner, BOM): shown as `�` so what the reviewer reads is what the bytes say.
/// Zero-width (non-)joiners stay: emoji and many scripts need them.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

fn is_tag(c: char) -> bool {
    ('\u{e0000}'..='\u{e007f}').contains(&c)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)
}

/// Control pictures for C0 (U+2400 block), `␡` for DEL, `�` for C1.
fn visible(c: char) -> char {
    let n = c as u32;
    if n < 0x20 {
        char::from_u32(0x2400 + n).unwrap_or('\u{fffd}')
    } else if c == '\u{7f}' {
        '\u{2421}'
    } else {
        '\u{fffd}'
    }
}

#[cfg(test)]
mod tests;
