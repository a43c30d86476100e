//! Untrusted text made into terminal lines: sanitized, tabs expanded, wrapped or cut by display
//! width, search matches marked. The width primitives here ([`expand_tabs`], [`prefix_within`])
//! serve the diff painter too.
//!
//! Widths are measured per grapheme cluster, as ratatui lays text out, and a cluster is never
//! cut. Emoji sequences that terminals draw at different widths (a family joined by zero-width
//! joiners is one glyph in one terminal and three in another; a flag is two regional indicators)
//! are made plain first ([`plain_emoji`]): then every terminal draws the text as wide as it is
//! measured, and the run list's columns stay where they are.

use crate::sanitize::sanitize;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns per tab stop.
const TAB_WIDTH: usize = 4;

/// Expand tabs to the next multiple of `TAB_WIDTH`; `col` is the display column reached so far
/// and is advanced past `text`.
pub fn expand_tabs(text: &str, col: &mut usize) -> String {
    let mut out = String::with_capacity(text.len());
    for g in text.graphemes(true) {
        if g == "\t" {
            let n = TAB_WIDTH - *col % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', n));
            *col += n;
        } else {
            out.push_str(g);
            *col += g.width();
        }
    }
    out
}

/// The longest prefix of `text` at most `width` columns wide (as ratatui measures strings: by
/// grapheme cluster), never ending inside a cluster.
pub fn prefix_within(text: &str, width: usize) -> &str {
    let mut used = 0;
    let mut end = 0;
    for (i, g) in text.grapheme_indices(true) {
        let w = g.width();
        if used + w > width {
            break;
        }
        used += w;
        end = i + g.len();
    }
    &text[..end]
}

/// Emoji sequences drawn at different widths by different terminals, made plain: zero-width
/// joiners next to a pictograph, variation selectors and skin-tone modifiers dropped, each
/// regional indicator written as its letter (a flag as `FR`). What is left is as wide in every
/// terminal as ratatui measures it.
pub fn plain_emoji(text: &str) -> std::borrow::Cow<'_, str> {
    let pictograph = |c: Option<char>| c.is_some_and(|c| matches!(c as u32, 0x2600..=0x27BF | 0x1F000..=0x1FAFF));
    let odd = |c: char| matches!(c as u32, 0x200D | 0xFE0E | 0xFE0F | 0x1F3FB..=0x1F3FF | 0x1F1E6..=0x1F1FF);
    if !text.chars().any(odd) {
        return std::borrow::Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        match c as u32 {
            0x200D if pictograph(i.checked_sub(1).map(|p| chars[p])) || pictograph(chars.get(i + 1).copied()) => {}
            0xFE0E | 0xFE0F | 0x1F3FB..=0x1F3FF => {}
            ri @ 0x1F1E6..=0x1F1FF => out.push(char::from(b'A' + (ri - 0x1F1E6) as u8)),
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Untrusted text as the TUI draws it: sanitized, emoji sequences made plain.
fn displayed(text: &str) -> String {
    plain_emoji(&sanitize(text)).into_owned()
}

/// One line of sanitized text with newlines as spaces and tabs expanded.
pub fn one_line(text: &str) -> String {
    expand_tabs(&displayed(text).replace('\n', " "), &mut 0)
}

/// Wrap text into lines of at most `width` display columns, at spaces: a word is broken only
/// when it is longer than a line, and a wrapped line does not start with the space it was
/// wrapped at (the indentation of the text's own lines is kept). Escape sequences are removed
/// and control characters made visible first; wide characters are never split.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let clean = displayed(text);
    let mut out = Vec::new();
    for raw in clean.split('\n') {
        wrap_line(&expand_tabs(raw, &mut 0), width, &mut out);
    }
    out
}

/// One line of text (no newline, tabs expanded) wrapped at spaces into `out`.
fn wrap_line(line: &str, width: usize, out: &mut Vec<String>) {
    let mut current = String::new();
    let mut cols = 0;
    let mut first = true;
    let mut rest = line;
    while !rest.is_empty() {
        let gap_len = rest.len() - rest.trim_start_matches(' ').len();
        let (gap, after) = rest.split_at(gap_len);
        let word_len = after.find(' ').unwrap_or(after.len());
        let (word, next) = after.split_at(word_len);
        rest = next;
        // The text's own indentation stays; the space a line was wrapped at goes.
        let gap = if current.is_empty() && !first { "" } else { gap };
        first = false;
        let (gap_w, word_w) = (gap.width(), word.width());
        if cols + gap_w + word_w <= width {
            current.push_str(gap);
            current.push_str(word);
            cols += gap_w + word_w;
            continue;
        }
        if word.is_empty() {
            // Trailing spaces that do not fit: nothing to show.
            break;
        }
        // The word goes to a line of its own, broken by characters only when longer than a line.
        let gap = if current.is_empty() { gap } else { "" };
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
            cols = 0;
        }
        if gap_w + word_w <= width {
            current.push_str(gap);
            current.push_str(word);
            cols = gap_w + word_w;
            continue;
        }
        for g in gap.graphemes(true).chain(word.graphemes(true)) {
            let w = g.width();
            if cols + w > width && !current.is_empty() {
                out.push(std::mem::take(&mut current));
                cols = 0;
            }
            current.push_str(g);
            cols += w;
        }
    }
    out.push(current);
}

/// Cut a single line to `width` columns with `…` when it is longer.
pub fn fit(text: &str, width: usize) -> String {
    let clean = one_line(text);
    if clean.width() <= width {
        return clean;
    }
    match width {
        0 => String::new(),
        _ => format!("{}…", prefix_within(&clean, width - 1)),
    }
}

/// Cut a path-like text from the left, keeping its end: `…/pkg/module.py`.
pub fn fit_left(text: &str, width: usize) -> String {
    let clean = one_line(text);
    if clean.width() <= width {
        return clean;
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut cols = 0;
    for g in clean.graphemes(true).rev() {
        let w = g.width();
        if cols + w + 1 > width {
            break;
        }
        kept.push(g);
        cols += w;
    }
    kept.push("…");
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
        let taken = prefix_within(&span.content, room);
        room -= taken.width();
        let whole = taken.len() == span.content.len();
        spans.push(Span::styled(taken.to_string(), span.style));
        if !whole || room == 0 {
            break;
        }
    }
    let last_style = line.spans.last().map(|s| s.style).unwrap_or_default();
    spans.push(Span::styled("…", last_style));
    Line::from(spans).style(line.style)
}

/// A line whose first spans stay in place when it is scrolled sideways (a diff's line numbers
/// and sign): an empty span after them marks where the scrolled part begins. Nothing else makes
/// an empty span after the first (text is cut into spans with content).
pub fn pinned(prefix: Vec<Span<'static>>, rest: Vec<Span<'static>>) -> Line<'static> {
    let mut spans = prefix;
    if !spans.is_empty() {
        spans.push(Span::raw(""));
    }
    spans.extend(rest);
    Line::from(spans)
}

/// The line without its first `cols` display columns (sideways scrolling); a wide character cut
/// in half leaves a space. The spans of a [`pinned`] line before its mark stay.
pub fn shift(line: &Line<'static>, cols: usize) -> Line<'static> {
    if cols == 0 {
        return line.clone();
    }
    let pin = line.spans.iter().skip(1).position(|s| s.content.is_empty()).map_or(0, |k| k + 2);
    let mut skip = cols;
    let mut spans: Vec<Span<'static>> = line.spans[..pin].to_vec();
    for span in &line.spans[pin..] {
        if skip == 0 {
            spans.push(span.clone());
            continue;
        }
        let mut kept = String::new();
        for g in span.content.graphemes(true) {
            let w = g.width();
            if skip == 0 {
                kept.push_str(g);
            } else if w <= skip {
                skip -= w;
            } else {
                kept.extend(std::iter::repeat_n(' ', w - skip));
                skip = 0;
            }
        }
        if !kept.is_empty() {
            spans.push(Span::styled(kept, span.style));
        }
    }
    Line::from(spans).style(line.style)
}

/// Display width of a styled line.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| s.width()).sum()
}

/// Text as lines without wrapping: sanitized, tabs expanded, one output line per input line
/// (long lines are cut when drawn, and scrolled sideways).
pub fn unwrapped(text: &str) -> Vec<String> {
    displayed(text).split('\n').map(|l| expand_tabs(l, &mut 0)).collect()
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
    fn a_pinned_prefix_stays_when_a_line_is_scrolled_sideways() {
        let line = pinned(vec![Span::raw("12 "), Span::raw("+")], vec![Span::raw("abcdefgh")]);
        let text = |l: &Line<'static>| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        assert_eq!(text(&shift(&line, 3)), "12 +defgh");
        assert_eq!(text(&shift(&Line::from(vec![Span::raw("12 "), Span::raw("+abc")]), 3)), "+abc");
    }

    #[test]
    fn emoji_sequences_are_made_plain_and_measured_alike_by_every_terminal() {
        let name = "fam \u{1F468}\u{1F3FD}\u{200D}\u{1F469}\u{200D}\u{1F467} flag \u{1F1EB}\u{1F1F7} \u{2764}\u{FE0F} a\u{200D}b";
        let shown = one_line(name);
        assert_eq!(shown, "fam \u{1F468}\u{1F469}\u{1F467} flag FR \u{2764} a\u{200D}b");
        // As wide per character (a terminal that does not join) as per cluster (ratatui).
        let per_char: usize = shown.chars().map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)).sum();
        assert_eq!(shown.width(), per_char);
        assert_eq!(plain_emoji("plain"), std::borrow::Cow::Borrowed("plain"));
    }

    #[test]
    fn a_grapheme_cluster_is_never_cut() {
        // e + combining acute: one cell, never split from its accent.
        assert_eq!(prefix_within("ae\u{301}b", 2), "ae\u{301}");
        assert_eq!(fit("e\u{301}e\u{301}e\u{301}e\u{301}", 3), "e\u{301}e\u{301}…");
        assert_eq!(fit_left("e\u{301}e\u{301}e\u{301}e\u{301}", 3), "…e\u{301}e\u{301}");
        assert_eq!(wrap("e\u{301}e\u{301}e\u{301}", 2), ["e\u{301}e\u{301}", "e\u{301}"]);
    }

    #[test]
    fn wrapping_respects_display_width_and_removes_escapes() {
        let lines = wrap("\u{1b}[31mabcdef\u{1b}[0m\tx\n日本語テキスト", 4);
        assert_eq!(lines, vec!["abcd", "ef", "x", "日本", "語テ", "キス", "ト"]);
        assert!(lines.iter().all(|l| !l.contains('\u{1b}') && !l.contains('\t')));
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_keeps_indentation() {
        // The trial's "BaseConstr|aint": the word moves to the next line whole.
        assert_eq!(wrap("class BaseConstraint: pass", 18), vec!["class", "BaseConstraint:", "pass"]);
        assert_eq!(wrap("see CheckConstraint(BaseConstraint)", 16), vec!["see", "CheckConstraint(", "BaseConstraint)"]);
        assert_eq!(wrap("the quick brown fox", 10), vec!["the quick", "brown fox"]);
        assert_eq!(wrap("    indented code line", 12), vec!["    indented", "code line"]);
        assert_eq!(wrap("a  b", 1), vec!["a", "b"]);
        assert_eq!(wrap("", 5), vec![""]);
        assert_eq!(wrap("word ", 4), vec!["word"]);
        assert!(wrap("x".repeat(25).as_str(), 10).iter().all(|l| l.width() <= 10));
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        let mut col = 0;
        assert_eq!(expand_tabs("\tx\ty", &mut col), "    x   y");
        assert_eq!(col, 9);
        let mut col = 2;
        assert_eq!(expand_tabs("\t", &mut col), "  ");
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
    fn shifting_drops_columns_across_spans_and_halves_of_wide_characters() {
        let line = Line::from(vec![Span::raw("ab"), Span::raw("日本x")]);
        let text = |l: &Line| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        assert_eq!(text(&shift(&line, 1)), "b日本x");
        assert_eq!(text(&shift(&line, 3)), " 本x", "half of 日 becomes a space");
        assert_eq!(text(&shift(&line, 4)), "本x");
        assert_eq!(text(&shift(&line, 20)), "");
        assert_eq!(shift(&line, 0), line);
    }

    #[test]
    fn unwrapped_text_keeps_long_lines_whole() {
        let long = "x".repeat(300);
        let lines = unwrapped(&format!("{long}\n\tb\u{1b}[31m"));
        assert_eq!(lines, vec![long, "    b".to_string()]);
    }

    #[test]
    fn matches_are_marked_case_insensitively() {
        let mark = Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
        let line = marked("Error: an error".into(), Style::default(), &["error".into()], mark);
        let styled: Vec<(&str, bool)> = line.spans.iter().map(|s| (s.content.as_ref(), s.style == mark)).collect();
        assert_eq!(styled, vec![("Error", true), (": an ", false), ("error", true)]);
    }
}
