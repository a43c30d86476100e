//! From the diff model to lines: file headers, hunk headers, then each hunk's lines in unified
//! layout (gutter with both line numbers, sign, content) or side by side (old left, new right,
//! removed/added lines paired in order).

use std::borrow::Cow;
use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::DiffMode;
use super::model::{DiffLine, FileDiff, Hunk, Kind};
use super::paint::{Part, clean, emphasis, fit, paint, spans_padded};
use crate::tui::highlight::{Highlighter, MAX_HIGHLIGHT_DIFF_LINES, Runs, Side};
use crate::tui::text::expand_tabs;
use crate::tui::theme::Theme;

const NO_NEWLINE: &str = "\\ No newline at end of file";

/// One side of one diff line, painted.
struct Cell {
    kind: Kind,
    no: Option<usize>,
    parts: Vec<Part>,
    no_newline: bool,
}

struct Layout<'t> {
    theme: &'t Theme,
    mode: DiffMode,
    width: usize,
    /// Digits of the largest line number.
    num_width: usize,
    /// Diff lines that may still be highlighted.
    budget: usize,
    /// Lines went unhighlighted because the budget ran out.
    starved: bool,
    out: Vec<Line<'static>>,
}

pub fn no_change(theme: &Theme) -> Vec<Line<'static>> {
    vec![Line::from(Span::styled("no change", theme.muted))]
}

/// A diff laid out.
pub struct Laid {
    pub lines: Vec<Line<'static>>,
    /// The budget ran out (a later call with a larger one would colour more).
    pub starved: bool,
    /// Lines given syntax colours.
    pub coloured: usize,
}

impl Laid {
    pub fn no_change(theme: &Theme) -> Laid {
        Laid { lines: no_change(theme), starved: false, coloured: 0 }
    }
}

/// Lay out files; at most `budget` lines get syntax colours.
pub fn render(
    files: &[FileDiff<'_>],
    fallback: &str,
    mode: DiffMode,
    width: u16,
    theme: &Theme,
    budget: usize,
) -> Laid {
    if files.is_empty() {
        return Laid::no_change(theme);
    }
    let largest = files
        .iter()
        .flat_map(|f| &f.hunks)
        .flat_map(|h| &h.lines)
        .map(|l| l.old_no.max(l.new_no).unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mut layout = Layout {
        theme,
        mode,
        width: usize::from(width),
        num_width: largest.to_string().len(),
        budget: budget.min(MAX_HIGHLIGHT_DIFF_LINES),
        starved: false,
        out: Vec::new(),
    };
    // The caller shows `fallback` already: a lone file of that name needs no header line.
    let alone = |f: &FileDiff<'_>| files.len() == 1 && f.notes.is_empty() && f.title().as_deref() == Some(fallback);
    for (i, file) in files.iter().enumerate() {
        if i > 0 {
            layout.out.push(Line::default());
        }
        layout.file(file, fallback, !alone(file));
    }
    let given = budget.min(MAX_HIGHLIGHT_DIFF_LINES);
    Laid {
        lines: layout.out,
        starved: layout.starved && budget < MAX_HIGHLIGHT_DIFF_LINES,
        coloured: given - layout.budget,
    }
}

/// Style and emphasis style of a diff line.
fn styles(theme: &Theme, kind: Kind) -> (Style, Style) {
    match kind {
        Kind::Context => (theme.diff_context, Style::default()),
        Kind::Removed => (theme.diff_removed, theme.diff_removed_emph),
        Kind::Added => (theme.diff_added, theme.diff_added_emph),
    }
}

fn sign(kind: Kind) -> &'static str {
    match kind {
        Kind::Context => " ",
        Kind::Removed => "-",
        Kind::Added => "+",
    }
}

/// Padding takes only the background: a crossed-out or underlined style must not draw a rule.
fn background(style: Style) -> Option<Style> {
    style.bg.map(|bg| Style::default().bg(bg))
}

/// Clean, tab-expanded text as one part.
fn part(style: Style, text: &str) -> Part {
    (style, expand_tabs(&clean(text), &mut 0))
}

impl Layout<'_> {
    /// A header-like line: full width (cut in side-by-side mode, where nothing wraps).
    fn push(&mut self, parts: Vec<Part>, style: Style) {
        let spans = match self.mode {
            DiffMode::Unified => spans_padded(parts, self.width, background(style)),
            DiffMode::SideBySide => fit(parts, self.width, background(style).unwrap_or_default()),
        };
        self.out.push(Line::from(spans));
    }

    fn file(&mut self, file: &FileDiff<'_>, fallback: &str, header: bool) {
        let theme = self.theme;
        if let Some(title) = file.title().filter(|_| header) {
            let mut parts = vec![part(theme.diff_file, &title)];
            if !file.notes.is_empty() {
                parts.push((theme.muted, format!(" ({})", file.notes.join(", "))));
            }
            self.push(parts, theme.diff_file);
        }
        for meta in &file.meta {
            self.push(vec![part(theme.muted, meta)], theme.muted);
        }
        let highlighter = Highlighter::new(file.syntax_path(fallback), theme.syntax.as_deref(), theme.depth);
        for hunk in &file.hunks {
            self.push(vec![part(theme.diff_hunk, &hunk.header)], theme.diff_hunk);
            let (old, new) = self.paint_hunk(hunk, highlighter.as_ref());
            match self.mode {
                DiffMode::Unified => self.unified(&hunk.lines, old, new),
                DiffMode::SideBySide => self.side_by_side(&hunk.lines, old, new),
            }
        }
    }

    /// Highlight (one state pair per hunk), pair changed lines for word emphasis, paint.
    /// Returns the old-side and new-side painting of each line (empty where a line has no such
    /// side; unified mode skips the old side of context lines).
    fn paint_hunk(&mut self, hunk: &Hunk<'_>, highlighter: Option<&Highlighter>) -> (Vec<Vec<Part>>, Vec<Vec<Part>>) {
        let lines = &hunk.lines;
        let texts: Vec<Cow<'_, str>> = lines.iter().map(|l| clean(l.text)).collect();
        let mut state = highlighter.map(Highlighter::hunk);
        let mut runs: Vec<(Runs, Runs)> = Vec::with_capacity(lines.len());
        for (line, text) in lines.iter().zip(&texts) {
            self.starved |= state.is_some() && self.budget == 0;
            let r = match state.as_mut().filter(|_| self.budget > 0) {
                Some(h) => {
                    self.budget -= 1;
                    match line.kind {
                        Kind::Context => h.context(text),
                        Kind::Removed => (h.line(Side::Old, text), None),
                        Kind::Added => (None, h.line(Side::New, text)),
                    }
                }
                None => (None, None),
            };
            runs.push(r);
        }
        let emph = word_emphasis(lines, &texts);
        let (mut old, mut new) = (Vec::with_capacity(lines.len()), Vec::with_capacity(lines.len()));
        for (i, line) in lines.iter().enumerate() {
            let (base, emph_style) = styles(self.theme, line.kind);
            // Without a diff background, syntax colours would hide which lines changed.
            let syntax = line.kind == Kind::Context || base.bg.is_some();
            let paint_side = |r: &Runs| paint(&texts[i], base, r.as_deref().filter(|_| syntax), &emph[i], emph_style);
            let both = line.kind == Kind::Context && self.mode == DiffMode::SideBySide;
            old.push(if line.kind == Kind::Removed || both { paint_side(&runs[i].0) } else { Vec::new() });
            new.push(if line.kind == Kind::Removed { Vec::new() } else { paint_side(&runs[i].1) });
        }
        (old, new)
    }

    fn gutter(&self, no: Option<usize>) -> String {
        let w = self.num_width;
        no.map_or_else(|| format!("{:w$} ", ""), |n| format!("{n:>w$} "))
    }

    fn unified(&mut self, lines: &[DiffLine<'_>], old: Vec<Vec<Part>>, new: Vec<Vec<Part>>) {
        let muted = self.theme.muted;
        for ((line, old), new) in lines.iter().zip(old).zip(new) {
            let (base, _) = styles(self.theme, line.kind);
            let gutter = format!("{}{}", self.gutter(line.old_no), self.gutter(line.new_no));
            let gutter = vec![Span::styled(gutter, muted), Span::styled(sign(line.kind), base)];
            let used = gutter.iter().map(Span::width).sum::<usize>();
            let parts = if line.kind == Kind::Removed { old } else { new };
            let content = spans_padded(parts, self.width.saturating_sub(used), background(base));
            // Line numbers and sign stay when the diff is scrolled sideways.
            self.out.push(crate::tui::text::pinned(gutter, content));
            if line.no_newline {
                let blank = format!("{}{} ", self.gutter(None), self.gutter(None));
                self.out.push(Line::from(vec![Span::styled(blank, muted), Span::styled(NO_NEWLINE, muted)]));
            }
        }
    }

    fn side_by_side(&mut self, lines: &[DiffLine<'_>], old: Vec<Vec<Part>>, new: Vec<Vec<Part>>) {
        let cell = |line: &DiffLine<'_>, no, parts| Cell { kind: line.kind, no, parts, no_newline: line.no_newline };
        let mut removed: Vec<Cell> = Vec::new();
        let mut added: Vec<Cell> = Vec::new();
        for ((line, old), new) in lines.iter().zip(old).zip(new) {
            match line.kind {
                Kind::Removed => removed.push(cell(line, line.old_no, old)),
                Kind::Added => added.push(cell(line, line.new_no, new)),
                Kind::Context => {
                    self.block(&mut removed, &mut added);
                    self.row(Some(cell(line, line.old_no, old)), Some(cell(line, line.new_no, new)));
                }
            }
        }
        self.block(&mut removed, &mut added);
    }

    /// A run of changes: removed lines left, added lines right, paired in order.
    fn block(&mut self, removed: &mut Vec<Cell>, added: &mut Vec<Cell>) {
        let rows = removed.len().max(added.len());
        let mut left = std::mem::take(removed).into_iter();
        let mut right = std::mem::take(added).into_iter();
        for _ in 0..rows {
            self.row(left.next(), right.next());
        }
    }

    fn row(&mut self, left: Option<Cell>, right: Option<Cell>) {
        let column = self.width.saturating_sub(1) / 2;
        let marks = (left.as_ref().is_some_and(|c| c.no_newline), right.as_ref().is_some_and(|c| c.no_newline));
        let (left, right) = (self.cell(left, column), self.cell(right, column));
        self.join(left, right, column);
        if marks.0 || marks.1 {
            let marker = |on: bool| on.then(|| vec![(self.theme.muted, format!("{}{NO_NEWLINE}", self.gutter(None)))]);
            let (left, right) = (self.filler(marker(marks.0), column), self.filler(marker(marks.1), column));
            self.join(left, right, column);
        }
    }

    /// Left column, separator, right column; an even width leaves one blank column at the end,
    /// so every row is exactly `width` wide.
    fn join(&mut self, mut left: Vec<Span<'static>>, right: Vec<Span<'static>>, column: usize) {
        if self.width == 0 {
            return self.out.push(Line::default());
        }
        left.push(Span::styled("│", self.theme.muted));
        left.extend(right);
        if self.width > 2 * column + 1 {
            left.push(Span::raw(" "));
        }
        self.out.push(Line::from(left));
    }

    fn cell(&self, cell: Option<Cell>, column: usize) -> Vec<Span<'static>> {
        let Some(cell) = cell else {
            return self.filler(None, column);
        };
        let (base, _) = styles(self.theme, cell.kind);
        let mut parts = vec![(self.theme.muted, self.gutter(cell.no)), (base, sign(cell.kind).to_string())];
        parts.extend(cell.parts);
        fit(parts, column, background(base).unwrap_or_default())
    }

    fn filler(&self, parts: Option<Vec<Part>>, column: usize) -> Vec<Span<'static>> {
        fit(parts.unwrap_or_default(), column, Style::default())
    }
}

/// Changed words of each removed/added pair, pairing the removed and added lines of each run of
/// changes in order.
/// Changed blocks longer than this get no word emphasis.
const MAX_EMPHASIS_BLOCK: usize = 200;

fn word_emphasis(lines: &[DiffLine<'_>], texts: &[Cow<'_, str>]) -> Vec<Vec<Range<usize>>> {
    let mut emph = vec![Vec::new(); lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind == Kind::Context {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].kind != Kind::Context {
            i += 1;
        }
        // Word emphasis shows what changed inside an edited line; a block of more than
        // `MAX_EMPHASIS_BLOCK` changed lines is a rewrite, where it would only cost time.
        if i - start > MAX_EMPHASIS_BLOCK {
            continue;
        }
        let of = |kind| (start..i).filter(move |&j| lines[j].kind == kind);
        for (r, a) in of(Kind::Removed).zip(of(Kind::Added)) {
            if let Some((old, new)) = emphasis(&texts[r], &texts[a]) {
                emph[r] = old;
                emph[a] = new;
            }
        }
    }
    emph
}
