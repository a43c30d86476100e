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

/// Cut a path-like text from the left, keeping its end: `…/pkg/module.py`.
pub fn fit_left(text: &str, width: usize) -> String {
    let clean = clean_line(&sanitize(text).replace('\n', " "));
    let total: usize = clean.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return clean;
    }
    let mut kept: Vec<char> = Vec::new();
    let mut cols = 0;
    for c in clean.chars().rev() {
        let w = c.width().unwrap_or(0);
        if cols + w + 1 > width {
            break;
        }
        kept.push(c);
        cols += w;
    }
    kept.push('…');
    kept.into_iter().rev().collect()
}

/// A styled line cut to `width` display columns, ending in `…` when something was cut (so a
/// long diff line never ends silently at the panel's edge).
pub fn clip(line: &Line<'static>, width: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| s.width()).sum();
    if total <= width || width == 0 {
        return line.clone();
    }
    let mut spans = Vec::new();
    let mut room = width - 1;
    for span in &line.spans {
        if room == 0 {
            break;
        }
        let mut taken = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if w > room {
                room = 0;
                break;
            }
            taken.push(c);
            room -= w;
        }
        spans.push(Span::styled(taken, span.style));
    }
    let last_style = line.spans.last().map(|s| s.style).unwrap_or_default();
    spans.push(Span::styled("…", last_style));
    Line::from(spans).style(line.style)
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

/// What [`marked`] looks for: the search phrase, lowercased, words separated by one space (the
/// phrase as a whole, so `return pow` does not mark every `return`).
pub fn search_words(query: Option<&str>) -> Vec<String> {
    let phrase = query.map(|q| q.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase());
    phrase.into_iter().filter(|p| !p.is_empty()).collect()
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
    fn paths_are_cut_from_the_left() {
        assert_eq!(fit_left("/repo/django/db/models/base.py", 12), "…els/base.py");
        assert_eq!(fit_left("a.py", 12), "a.py");
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("hello world", 5), "hell…");
        assert_eq!(fit("hi", 5), "hi");
        assert_eq!(fit("a\u{7}b", 5), "a\u{2407}b");
    }

    #[test]
    fn long_lines_are_clipped_with_an_ellipsis() {
        let line = Line::from(vec![Span::raw("12345"), Span::raw("67890")]);
        let clipped = clip(&line, 7);
        let text: String = clipped.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "123456…");
        assert_eq!(clip(&line, 10), line);
    }

    #[test]
    fn matches_are_marked_case_insensitively() {
        let mark = Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
        let line = marked("Error: an error".into(), Style::default(), &["error".into()], mark);
        let styled: Vec<(&str, bool)> = line.spans.iter().map(|s| (s.content.as_ref(), s.style == mark)).collect();
        assert_eq!(styled, vec![("Error", true), (": an ", false), ("error", true)]);
    }
}
