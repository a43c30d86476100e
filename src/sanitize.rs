//! Making untrusted trajectory text safe to print on a terminal.
//!
//! Trajectories carry ANSI colour codes, cursor movement, OSC sequences (which can set the
//! window title or the clipboard), carriage returns, backspaces and NULs. None of them may reach
//! the reviewer's terminal: escape sequences are removed, other control characters are shown as
//! visible symbols, `\r\n` becomes `\n`.

use std::borrow::Cow;

/// Sanitize text for the terminal. Newlines and tabs are kept; everything else below U+0020,
/// DEL and the C1 controls are either removed (escape sequences) or shown as a visible symbol.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_work) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\u{1b}' => skip_escape(&mut chars),
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' => skip_string(&mut chars),
            c if is_control(c) => out.push(visible(c)),
            c if is_invisible_format(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_work(c: char) -> bool {
    c == '\r' || c == '\u{1b}' || (is_control(c) && c != '\n' && c != '\t') || is_invisible_format(c)
}

/// Characters that reorder or hide text (Trojan Source bidi overrides and isolates, zero-width
/// space, word joiner, BOM): shown as `�` so what the reviewer reads is what the bytes say.
/// Zero-width (non-)joiners stay: emoji and many scripts need them.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
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

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// After ESC: CSI (`[`), OSC (`]`), DCS/SOS/PM/APC (`P`, `X`, `^`, `_`) strings, or a
/// two-character sequence.
fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        // ESC followed by intermediates then a final byte (e.g. `ESC ( B`).
        Some(c) if (' '..='/').contains(&c) => {
            while let Some(&n) = chars.peek() {
                chars.next();
                if !(' '..='/').contains(&n) {
                    break;
                }
            }
        }
        _ => {}
    }
}

/// CSI: parameter and intermediate bytes, then one final byte in `@`..=`~`.
fn skip_csi(chars: &mut Chars<'_>) {
    // Anything outside the parameter/intermediate range ends it: the final byte, or garbage.
    for c in chars.by_ref() {
        if !(' '..='?').contains(&c) {
            break;
        }
    }
}

/// A string sequence ends at BEL or ST (`ESC \`). Unterminated ones swallow nothing past a
/// newline, so a stray OSC cannot hide the rest of an observation.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\u{7}' => {
                chars.next();
                return;
            }
            '\u{1b}' => {
                chars.next();
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            '\n' => return,
            _ => {
                chars.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_are_removed() {
        assert_eq!(sanitize("\u{1b}[31mFAILED\u{1b}[0m x"), "FAILED x");
        assert_eq!(sanitize("\u{1b}[1;32m"), "");
    }

    #[test]
    fn osc_title_and_clipboard_sequences_are_removed() {
        assert_eq!(sanitize("a\u{1b}]0;pwned\u{7}b"), "ab");
        assert_eq!(sanitize("a\u{1b}]52;c;ZXZpbA==\u{1b}\\b"), "ab");
        // Unterminated OSC stops at the newline.
        assert_eq!(sanitize("a\u{1b}]0;title\nrest"), "a\nrest");
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(sanitize("a\u{0}b\u{8}c\u{7f}"), "a\u{2400}b\u{2408}c\u{2421}");
        assert_eq!(sanitize("x\u{9b}2Jy"), "xy");
    }

    #[test]
    fn bidi_overrides_and_zero_width_spaces_are_shown() {
        assert_eq!(sanitize("a\u{202e}b\u{200b}c"), "a\u{fffd}b\u{fffd}c");
        assert_eq!(sanitize("👨\u{200d}👩"), "👨\u{200d}👩");
    }

    #[test]
    fn carriage_returns_are_normalised() {
        assert_eq!(sanitize("a\r\nb\rc"), "a\nb\nc");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(sanitize("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
