//! The text of CSV and Markdown exports. Instance ids, model names, summaries and notes come from
//! agents' runs, LLM replies and reviewers, and any of them may be hostile: an escape sequence
//! that sets a terminal's title or clipboard when the file is printed, a line break that ends a
//! Markdown table row, a cell a spreadsheet runs as a formula. Numbers the tool writes are left
//! as they are.

use std::fmt::Write as _;

/// A cell of a CSV or Markdown row: text from the database, or a number the tool wrote (which
/// stays a number: `-0.5` is not a formula).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    Text(String),
    Number(String),
}

/// Text fit for a CSV or Markdown file, whatever prints it: each control character (C0 but tab
/// and newline, DEL, C1) becomes a visible symbol, one for one (`ESC` is `␛`, `NUL` is `␀`,
/// C1 is `�`), so an escape sequence cannot act and what it was still shows (`␛]0;title␇`);
/// `\r\n` and a lone `\r` become `\n`; then the terminal rules of `crate::sanitize` apply to the
/// rest (bidi overrides and invisible characters shown as `�`).
pub fn clean(text: &str) -> String {
    if !text.chars().any(|c| is_control(c) && c != '\n' && c != '\t' && c != '\r') {
        return crate::sanitize::sanitize(text).into_owned();
    }
    let visible: String = text.chars().map(|c| if is_control(c) { visible(c) } else { c }).collect();
    crate::sanitize::sanitize(&visible).into_owned()
}

/// C0 but tab, newline and carriage return (those `sanitize` keeps or normalises), DEL, C1.
fn is_control(c: char) -> bool {
    let n = c as u32;
    (n < 0x20 && !matches!(c, '\n' | '\t' | '\r')) || (0x7f..=0x9f).contains(&n)
}

/// Control pictures for C0 (the U+2400 block), `␡` for DEL, `�` for C1 (which has none).
fn visible(c: char) -> char {
    let n = c as u32;
    match n {
        0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
        0x7f => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// A CSV text cell: `clean`ed, and prefixed with `'` when it starts with a character that makes
/// a spreadsheet read it as a formula (`=`, `+`, `-`, `@`, tab, carriage return: OWASP's rule
/// against CSV injection).
pub(super) fn csv_text(text: &str) -> String {
    let text = clean(text);
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}") } else { text }
}

/// A Markdown table cell: `clean`ed, `\` and `|` escaped (`\\`, `\|`), so no text ends the cell,
/// and line breaks as spaces, so none ends the row.
pub(super) fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in clean(text).chars() {
        match c {
            '\\' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A line of Markdown outside the table (a title): `clean`ed, line breaks as spaces.
pub(super) fn markdown_line(text: &str) -> String {
    clean(text).replace('\n', " ")
}

/// JSON text with DEL and the C1 controls (U+007F–U+009F) written as `\u` escapes: the same
/// text to a JSON reader, harmless to a terminal (serde_json escapes the C0 controls itself, and
/// these occur only inside strings, where `\u00XX` means the same).
pub fn escape_c1(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_symbols_one_for_one() {
        assert_eq!(clean("a\u{1b}]0;title\u{7}b"), "a\u{241b}]0;title\u{2407}b");
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m"), "\u{241b}[31mred\u{241b}[0m");
        assert_eq!(clean("nul\u{0}del\u{7f}c1\u{9b}2J\u{9d}x"), "nul\u{2400}del\u{2421}c1\u{fffd}2J\u{fffd}x");
        // An unterminated OSC hides nothing after it.
        assert_eq!(clean("\u{1b}]52;c;ZXZpbA== rest"), "\u{241b}]52;c;ZXZpbA== rest");
        assert_eq!(clean("tab\tline\nnext"), "tab\tline\nnext");
        assert_eq!(clean("crlf\r\nlone\rend"), "crlf\nlone\nend");
        assert_eq!(clean("bidi\u{202e}x"), "bidi\u{fffd}x");
        assert_eq!(clean("plain ünïcode 日本"), "plain ünïcode 日本");
    }

    #[test]
    fn csv_text_that_a_spreadsheet_would_run_is_quoted() {
        for formula in ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\tx=1"] {
            assert_eq!(csv_text(formula), format!("'{formula}"));
        }
        // A carriage return first is a newline once cleaned; an escape first is `␛`.
        assert_eq!(csv_text("\r=1"), "\n=1");
        assert_eq!(csv_text("\u{1b}=1"), "\u{241b}=1");
        for text in ["a=b", "model-1", "x@y", " =1", "0.5", ""] {
            assert_eq!(csv_text(text), text);
        }
    }

    #[test]
    fn markdown_cells_cannot_end_the_cell_or_the_row() {
        assert_eq!(markdown_cell("a|b"), "a\\|b");
        // An escaped pipe stays escaped after a backslash of the text's own.
        assert_eq!(markdown_cell("a\\|b"), "a\\\\\\|b");
        assert_eq!(markdown_cell("one\ntwo\r\nthree\rfour"), "one two three four");
        assert_eq!(markdown_cell("\u{1b}[2J"), "\u{241b}[2J");
        assert_eq!(markdown_line("# a\nb\u{7}"), "# a b\u{2407}");
    }

    #[test]
    fn json_keeps_c1_as_escapes() {
        assert_eq!(escape_c1("\"a\u{9b}b\u{7f}\""), "\"a\\u009bb\\u007f\"");
        assert_eq!(escape_c1("\"é\""), "\"é\"");
    }
}
