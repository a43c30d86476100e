//! Untrusted text made into terminal lines: sanitized, tabs expanded, wrapped by display width,
//! search matches marked.

use crate::sanitize::sanitize;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

const TAB: usize = 4;

/// Sanitize and expand tabs (to the next multiple of 4 columns) in one line of text.
pub fn clean_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut col = 0usize;
    for c in line.chars() {
        if c == '\t' {
            let n = TAB - col % TAB;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += c.width().unwrap_or(0);
        }
    }
    out
}

/// Wrap text into lines of at most `width` display columns. Escape sequences are removed and
/// control characters made visible first; wide characters are never split.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let clean = sanitize(text);
    let mut out = Vec::new();
    for raw in clean.split('\n') {
        let line = clean_line(raw);
        if line.is_empty() {
            out.push(String::new());
            continue;
        }
        let mut current = String::new();
        let mut cols = 0;
        for c in line.chars() {
            let w = c.width().unwrap_or(0);
            if cols + w > width && !current.is_empty() {
                out.push(std::mem::take(&mut current));
                cols = 0;
            }
            current.push(c);
            cols += w;
        }
        out.push(current);
    }
    out
}

/// Cut a single line to `width` columns with `…` when it is longer.
pub fn fit(text: &str, width: usize) -> String {
    let clean = clean_line(&sanitize(text).replace('\n', " "));
    let mut out = String::new();
    let mut cols = 0;
    for c in clean.chars() {
        let w = c.width().unwrap_or(0);
        if cols + w > width {
            out.pop();
            if width > 0 {
                out.push('…');
            }
            return out;
        }
        out.push(c);
        cols += w;
    }
    out
}

/// A line whose occurrences of `words` (ASCII case-insensitive) are styled as matches.
pub fn marked(line: String, base: Style, words: &[String], mark: Style) -> Line<'static> {
    if words.is_empty() {
        return Line::from(Span::styled(line, base));
    }
    let lower = line.to_ascii_lowercase();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for w in words {
        let mut from = 0;
        while let Some(p) = lower[from..].find(w.as_str()) {
            let start = from + p;
            ranges.push((start, start + w.len()));
            from = start + w.len().max(1);
        }
    }
    if ranges.is_empty() {
        return Line::from(Span::styled(line, base));
    }
    ranges.sort_unstable();
    let mut spans = Vec::new();
    let mut at = 0;
    for (s, e) in ranges {
        if s < at || !line.is_char_boundary(s) || !line.is_char_boundary(e) {
            continue;
        }
        if s > at {
            spans.push(Span::styled(line[at..s].to_string(), base));
        }
        spans.push(Span::styled(line[s..e].to_string(), mark));
        at = e;
    }
    if at < line.len() {
        spans.push(Span::styled(line[at..].to_string(), base));
    }
    Line::from(spans)
}

/// Lowercased search words, for [`marked`].
pub fn search_words(query: Option<&str>) -> Vec<String> {
    query
        .map(|q| q.split_whitespace().map(|w| w.to_ascii_lowercase()).filter(|w| !w.is_empty()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_respects_display_width_and_removes_escapes() {
        let lines = wrap("\u{1b}[31mabcdef\u{1b}[0m\tx\n日本語テキスト", 4);
        assert_eq!(lines, vec!["abcd", "ef  ", "x", "日本", "語テ", "キス", "ト"]);
        assert!(lines.iter().all(|l| !l.contains('\u{1b}') && !l.contains('\t')));
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("hello world", 5), "hell…");
        assert_eq!(fit("hi", 5), "hi");
        assert_eq!(fit("a\u{7}b", 5), "a\u{2407}b");
    }

    #[test]
    fn matches_are_marked_case_insensitively() {
        let mark = Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
        let line = marked("Error: an error".into(), Style::default(), &["error".into()], mark);
        let styled: Vec<(&str, bool)> = line.spans.iter().map(|s| (s.content.as_ref(), s.style == mark)).collect();
        assert_eq!(styled, vec![("Error", true), (": an ", false), ("error", true)]);
    }
}
