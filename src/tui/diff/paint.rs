//! Painting one line: sanitized text, syntax foreground layered over the diff background, changed
//! words emphasised, tabs expanded, and (side by side) cut to a column with `…`.
//!
//! Every piece of trajectory text goes through [`clean`] before anything else, and through
//! [`expand_tabs`] on its way into a span: no escape sequence, newline or tab reaches a span.

use std::borrow::Cow;
use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Span;
use similar::{Algorithm, DiffTag, capture_diff_slices};
use unicode_width::UnicodeWidthStr;

use crate::sanitize::sanitize;
use crate::tui::highlight::{MAX_HIGHLIGHT_LINE_CHARS, SyntaxRun};
use crate::tui::text::{expand_tabs, prefix_within};

/// Pairs of lines more different than this (share of changed bytes) get no word emphasis:
/// emphasising nearly everything says nothing (delta's max-line-distance).
const MAX_EMPHASIS_DISTANCE: f64 = 0.6;

/// A styled piece of a line; text is clean (no control characters, no tabs).
pub type Part = (Style, String);

/// Changed byte ranges of a removed line and of the added line paired with it.
pub type Emphasis = (Vec<Range<usize>>, Vec<Range<usize>>);

/// Sanitized text of one line: escape sequences removed, control characters made visible. The
/// only newline `sanitize` can leave inside a line comes from a lone `\r`: shown as `␍`. Tabs are
/// kept (for the highlighter) and expanded by [`expand_tabs`].
pub fn clean(text: &str) -> Cow<'_, str> {
    match sanitize(text) {
        Cow::Owned(s) if s.contains('\n') => Cow::Owned(s.replace('\n', "\u{240d}")),
        other => other,
    }
}

/// Word tokens: runs of letters/digits/`_`, runs of whitespace, any other single character.
fn tokens(s: &str) -> Vec<&str> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| match c {
        c if c.is_alphanumeric() || c == '_' => Class::Word,
        c if c.is_whitespace() => Class::Space,
        _ => Class::Other,
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in s.char_indices() {
        let k = class(c);
        if i > start && (k == Class::Other || prev.as_ref() != Some(&k)) {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Byte ranges of the changed words of a removed/added pair, `(old, new)`; `None` when the lines
/// are too long or too different to be worth it.
pub fn emphasis(old: &str, new: &str) -> Option<Emphasis> {
    let limit = MAX_HIGHLIGHT_LINE_CHARS;
    if old.chars().count() > limit || new.chars().count() > limit {
        return None;
    }
    let (old_tokens, new_tokens) = (tokens(old), tokens(new));
    let offsets = |toks: &[&str]| {
        let mut at = Vec::with_capacity(toks.len() + 1);
        at.push(0);
        for t in toks {
            at.push(at.last().copied().unwrap_or(0) + t.len());
        }
        at
    };
    let (old_at, new_at) = (offsets(&old_tokens), offsets(&new_tokens));
    let (mut old_ranges, mut new_ranges) = (Vec::new(), Vec::new());
    let mut changed = 0;
    for op in capture_diff_slices(Algorithm::Myers, &old_tokens, &new_tokens) {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        for (ranges, at, r) in [(&mut old_ranges, &old_at, o), (&mut new_ranges, &new_at, n)] {
            if !r.is_empty() {
                changed += at[r.end] - at[r.start];
                ranges.push(at[r.start]..at[r.end]);
            }
        }
    }
    let total = old.len() + new.len();
    if total == 0 || changed as f64 / total as f64 > MAX_EMPHASIS_DISTANCE {
        return None;
    }
    Some((old_ranges, new_ranges))
}

/// Styled pieces of one (clean) line. `base` is the diff style of the line; a syntax foreground,
/// when given, replaces its foreground (the background stays the diff's); `emph` ranges get
/// `emph_style` patched on top.
pub fn paint(
    text: &str,
    base: Style,
    runs: Option<&[SyntaxRun]>,
    emph: &[Range<usize>],
    emph_style: Style,
) -> Vec<Part> {
    let runs = runs.unwrap_or(&[]);
    let mut cuts: Vec<usize> = Vec::with_capacity(2 + 2 * (runs.len() + emph.len()));
    cuts.extend([0, text.len()]);
    for r in runs.iter().map(|r| &r.range).chain(emph) {
        cuts.extend([r.start.min(text.len()), r.end.min(text.len())]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts: Vec<Part> = Vec::new();
    let (mut run_i, mut emph_i) = (0, 0);
    let mut col = 0;
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if !text.is_char_boundary(a) || !text.is_char_boundary(b) {
            continue; // cannot happen with well-formed ranges; never slice mid-character
        }
        let mut style = base;
        while run_i < runs.len() && runs[run_i].range.end <= a {
            run_i += 1;
        }
        if let Some(run) = runs.get(run_i).filter(|r| r.range.start <= a)
            && let Some(fg) = run.fg
        {
            style = style.fg(fg);
        }
        while emph_i < emph.len() && emph[emph_i].end <= a {
            emph_i += 1;
        }
        if emph.get(emph_i).is_some_and(|r| r.start <= a) {
            style = style.patch(emph_style);
        }
        let piece = expand_tabs(&text[a..b], &mut col);
        match parts.last_mut() {
            Some((s, t)) if *s == style => t.push_str(&piece),
            _ => parts.push((style, piece)),
        }
    }
    parts
}

/// Spans of `parts`, then spaces in `fill` up to `width` (when `fill` is `Some`). No cutting.
pub fn spans_padded(parts: Vec<Part>, width: usize, fill: Option<Style>) -> Vec<Span<'static>> {
    let used: usize = parts.iter().map(|(_, t)| t.width()).sum();
    let mut spans: Vec<Span<'static>> = parts.into_iter().map(|(s, t)| Span::styled(t, s)).collect();
    if let Some(fill) = fill
        && used < width
    {
        spans.push(Span::styled(" ".repeat(width - used), fill));
    }
    spans
}

/// Exactly `width` columns: `parts` cut with `…` when too wide, padded with spaces in `fill`
/// otherwise. Wide characters count double; one that does not fit leaves a space.
pub fn fit(parts: Vec<Part>, width: usize, fill: Style) -> Vec<Span<'static>> {
    let total: usize = parts.iter().map(|(_, t)| t.width()).sum();
    if total <= width {
        return spans_padded(parts, width, Some(fill));
    }
    let mut spans = Vec::new();
    if width == 0 {
        return spans;
    }
    let budget = width - 1; // room for the ellipsis
    let mut used = 0;
    for (style, text) in parts {
        let w = text.width();
        if used + w <= budget {
            used += w;
            spans.push(Span::styled(text, style));
            continue;
        }
        let cut = prefix_within(&text, budget - used);
        used += cut.width();
        spans.push(Span::styled(format!("{cut}…"), style));
        used += 1;
        break;
    }
    if used < width {
        spans.push(Span::styled(" ".repeat(width - used), fill));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

    #[test]
    fn clean_removes_escapes_and_shows_lone_carriage_returns() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(clean("a\rb"), "a\u{240d}b");
        assert!(matches!(clean("plain\ttext"), Cow::Borrowed(_)));
    }

    #[test]
    fn tokens_split_words_spaces_and_punctuation() {
        assert_eq!(tokens("x = compute(a, b)"), ["x", " ", "=", " ", "compute", "(", "a", ",", " ", "b", ")"]);
        assert_eq!(tokens("ünï_2  ->"), ["ünï_2", "  ", "-", ">"]);
    }

    #[test]
    fn emphasis_finds_the_changed_token_only() {
        let (old, new) = emphasis("x = compute(a, b)", "x = compute(a, c)").unwrap();
        let b_and_c = Range { start: 15, end: 16 };
        assert_eq!((old, new), (vec![b_and_c.clone()], vec![b_and_c]));
        assert!(emphasis("completely", "different").is_none(), "too different");
        assert!(emphasis(&"a".repeat(401), "b").is_none(), "too long");
    }

    #[test]
    fn paint_layers_syntax_foreground_over_the_diff_background() {
        let base = Style::default().bg(Color::Green);
        let runs = [SyntaxRun { range: 0..2, fg: Some(Color::Red) }, SyntaxRun { range: 2..4, fg: Some(Color::Blue) }];
        let emph_style = Style::default().add_modifier(Modifier::BOLD);
        let parts = paint("ab\tc", base, Some(&runs), &[Range { start: 1, end: 3 }], emph_style);
        assert_eq!(
            parts,
            [
                (base.fg(Color::Red), "a".to_string()),
                (base.fg(Color::Red).add_modifier(Modifier::BOLD), "b".to_string()),
                (base.fg(Color::Blue).add_modifier(Modifier::BOLD), "  ".to_string()),
                (base.fg(Color::Blue), "c".to_string()),
            ]
        );
    }

    #[test]
    fn fit_cuts_with_an_ellipsis_and_pads_wide_characters() {
        let s = Style::default();
        let text = |spans: &[Span]| spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        assert_eq!(text(&fit(vec![(s, "abc".into())], 5, s)), "abc  ");
        assert_eq!(text(&fit(vec![(s, "abc".into()), (s, "def".into())], 5, s)), "abcd…");
        // 漢 is two columns: "a漢" + "…" is 4 columns, padded to 5.
        let cut = fit(vec![(s, "a漢字x".into())], 5, s);
        assert_eq!(text(&cut), "a漢… ");
        assert_eq!(cut.iter().map(|s| s.content.width()).sum::<usize>(), 5);
        assert!(fit(vec![(s, "abc".into())], 0, s).is_empty());
    }
}
