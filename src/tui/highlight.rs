//! Syntax highlighting for diffs: lazy, bounded and cached (engineering notes, item 9).
//!
//! The syntect [`SyntaxSet`] (bat's set, via two-face) is loaded once, on first use; themes are
//! loaded lazily, once. Highlighting is bounded: a line over [`MAX_HIGHLIGHT_LINE_CHARS`] is not
//! highlighted (nor fed to the parser), and a diff is highlighted only for its first
//! [`MAX_HIGHLIGHT_DIFF_LINES`] lines (the caller counts; see `diff`). One [`HunkHighlighter`] per
//! hunk keeps two parse states, one for the old side (context + removed) and one for the new side
//! (context + added), so each side stays syntactically coherent, as delta does.
//!
//! Only foreground colours come out of here; the diff module layers them over its own
//! backgrounds. Input must already be sanitized: byte ranges index the text passed in.

use std::ops::Range;
use std::sync::OnceLock;

use crate::tui::color::ColorDepth;
use ratatui::style::Color;
use syntect::highlighting::{HighlightState, RangedHighlightIterator, Theme as SyntectTheme, ThemeSet};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference};
use two_face::theme::EmbeddedLazyThemeSet;

pub use crate::analysis::syntax::{
    MAX_HIGHLIGHT_DIFF_LINES, MAX_HIGHLIGHT_LINE_CHARS, is_plain_text, syntax_for_path, syntax_set,
};

fn default_themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// bat's extra themes ("Monokai Extended", "Nord", "ansi"...); each is deserialized on first use.
fn extra_themes() -> &'static EmbeddedLazyThemeSet {
    static SET: OnceLock<EmbeddedLazyThemeSet> = OnceLock::new();
    SET.get_or_init(two_face::theme::extra)
}

/// A syntect theme by name: syntect's defaults ("base16-eighties.dark", "InspiredGitHub",
/// "Solarized (dark)"...) first, then bat's extra themes. `None` for an unknown name.
pub fn syntect_theme(name: &str) -> Option<&'static SyntectTheme> {
    if let Some(theme) = default_themes().themes.get(name) {
        return Some(theme);
    }
    EmbeddedLazyThemeSet::theme_names().iter().find(|n| n.as_name() == name).map(|&n| extra_themes().get(n))
}

/// Every theme name [`syntect_theme`] accepts (for config validation and help text).
pub fn syntect_theme_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = default_themes().themes.keys().map(String::as_str).collect();
    for n in EmbeddedLazyThemeSet::theme_names() {
        if !names.contains(&n.as_name()) {
            names.push(n.as_name());
        }
    }
    names
}

/// A foreground colour over a byte range of the highlighted line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxRun {
    pub range: Range<usize>,
    /// `None`: the terminal's default foreground (bat's "ansi" themes use this).
    pub fg: Option<Color>,
}

/// Syntax colours for one line; `None` when the line was not highlighted (too long, or a
/// syntect error).
pub type Runs = Option<Vec<SyntaxRun>>;

/// Highlighting for one file of a diff: a syntax and a theme. `None` from [`Highlighter::new`]
/// means "no syntax colours" (no theme, unknown theme, or plain text).
pub struct Highlighter {
    syntax: &'static SyntaxReference,
    theme: syntect::highlighting::Highlighter<'static>,
    depth: ColorDepth,
}

impl Highlighter {
    /// `theme` is the syntect theme name from [`crate::tui::theme::Theme::syntax`].
    /// `depth`: syntax colours are converted like the theme's (nearest xterm-256 colour).
    pub fn new(path: &str, theme: Option<&str>, depth: ColorDepth) -> Option<Highlighter> {
        let theme = syntect_theme(theme?)?;
        let syntax = syntax_for_path(path);
        if is_plain_text(syntax) || depth == ColorDepth::NoColor {
            return None;
        }
        Some(Highlighter { syntax, theme: syntect::highlighting::Highlighter::new(theme), depth })
    }

    /// Fresh parse states for a new hunk (state resets at each `@@`).
    pub fn hunk(&self) -> HunkHighlighter<'_> {
        let state = State {
            parse: ParseState::new(self.syntax),
            highlight: HighlightState::new(&self.theme, ScopeStack::new()),
        };
        HunkHighlighter { theme: &self.theme, old: state.clone(), new: state, buf: String::new(), depth: self.depth }
    }

    pub fn syntax_name(&self) -> &'static str {
        &self.syntax.name
    }
}

/// Which parse state a line feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Old,
    New,
}

#[derive(Clone, PartialEq, Eq)]
struct State {
    parse: ParseState,
    highlight: HighlightState,
}

/// Two parse states for one hunk: old side (context + removed), new side (context + added).
pub struct HunkHighlighter<'h> {
    theme: &'h syntect::highlighting::Highlighter<'static>,
    old: State,
    new: State,
    buf: String,
    depth: ColorDepth,
}

impl HunkHighlighter<'_> {
    /// A removed (`Side::Old`) or added (`Side::New`) line, without its newline.
    pub fn line(&mut self, side: Side, line: &str) -> Runs {
        if too_long(line) {
            return None;
        }
        let state = match side {
            Side::Old => &mut self.old,
            Side::New => &mut self.new,
        };
        run(self.theme, state, &mut self.buf, line, self.depth)
    }

    /// A context line feeds both states; returns (old-side, new-side) colours. When both sides
    /// are in the same state (the usual case away from an unclosed string or comment), the line
    /// is highlighted once.
    pub fn context(&mut self, line: &str) -> (Runs, Runs) {
        if too_long(line) {
            return (None, None);
        }
        if self.old == self.new {
            let runs = run(self.theme, &mut self.new, &mut self.buf, line, self.depth);
            self.old.clone_from(&self.new);
            return (runs.clone(), runs);
        }
        let old = run(self.theme, &mut self.old, &mut self.buf, line, self.depth);
        let new = run(self.theme, &mut self.new, &mut self.buf, line, self.depth);
        (old, new)
    }
}

fn too_long(line: &str) -> bool {
    // Byte length bounds the char count from above: only count when it could matter.
    line.len() > MAX_HIGHLIGHT_LINE_CHARS && line.chars().count() > MAX_HIGHLIGHT_LINE_CHARS
}

fn run(
    theme: &syntect::highlighting::Highlighter<'_>,
    state: &mut State,
    buf: &mut String,
    line: &str,
    depth: ColorDepth,
) -> Runs {
    // The "newlines" syntax set expects each line with its terminator.
    buf.clear();
    buf.push_str(line);
    buf.push('\n');
    let ops = state.parse.parse_line(buf, syntax_set()).ok()?;
    let mut runs: Vec<SyntaxRun> = Vec::new();
    for (style, _, range) in RangedHighlightIterator::new(&mut state.highlight, &ops, buf, theme) {
        let range = range.start.min(line.len())..range.end.min(line.len());
        if range.is_empty() {
            continue;
        }
        let fg = to_color(style.foreground, depth);
        match runs.last_mut() {
            Some(last) if last.fg == fg && last.range.end == range.start => last.range.end = range.end,
            _ => runs.push(SyntaxRun { range, fg }),
        }
    }
    Some(runs)
}

/// syntect colour → terminal colour, with bat's encoding for ANSI themes (alpha 0: palette
/// index in red; alpha 1: default colour).
fn to_color(c: syntect::highlighting::Color, depth: ColorDepth) -> Option<Color> {
    match c.a {
        0 => Some(crate::tui::color::for_depth(Color::Indexed(c.r), depth)),
        1 => None,
        _ => Some(crate::tui::color::for_depth(Color::Rgb(c.r, c.g, c.b), depth)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_extensions_resolve_to_a_real_syntax() {
        let paths = [
            "a.py",
            "A.java",
            "x.ts",
            "x.tsx",
            "x.js",
            "x.jsx",
            "main.go",
            "x.c",
            "x.h",
            "x.cpp",
            "x.cc",
            "x.hpp",
            "src/lib.rs",
            "README.md",
            "Cargo.toml",
            "a.yaml",
            "a.yml",
            "package.json",
        ];
        for path in paths {
            let syntax = syntax_for_path(path);
            assert!(!is_plain_text(syntax), "{path} resolved to plain text");
        }
        assert_eq!(syntax_for_path("x.py").name, "Python");
        assert_eq!(syntax_for_path("a/b/Cargo.toml").name, "TOML");
        assert_eq!(syntax_for_path("X.PY").name, "Python", "extensions are case-insensitive");
        assert_eq!(syntax_for_path("Makefile").name, "Makefile", "whole file names work too");
    }

    #[test]
    fn unknown_or_missing_extensions_are_plain_text() {
        for path in ["notes.unknownext", "", "dir/", "LICENSE"] {
            assert!(is_plain_text(syntax_for_path(path)), "{path:?}");
        }
        assert!(Highlighter::new("notes.unknownext", Some("base16-eighties.dark"), ColorDepth::TrueColor).is_none());
    }

    #[test]
    fn themes_resolve_by_name_and_none_disables_colours() {
        assert!(syntect_theme("base16-eighties.dark").is_some());
        assert!(syntect_theme("InspiredGitHub").is_some());
        assert!(syntect_theme("Monokai Extended").is_some(), "bat's extra themes");
        assert!(syntect_theme("no such theme").is_none());
        assert!(Highlighter::new("a.py", None, ColorDepth::TrueColor).is_none());
        assert!(Highlighter::new("a.py", Some("no such theme"), ColorDepth::TrueColor).is_none());
        assert!(syntect_theme_names().contains(&"InspiredGitHub"));
    }

    #[test]
    fn highlighting_gives_several_colours_covering_the_line() {
        let hl = Highlighter::new("a.py", Some("base16-eighties.dark"), ColorDepth::TrueColor).unwrap();
        let mut hunk = hl.hunk();
        let line = "def f(x): return \"s\" + 1";
        let runs = hunk.line(Side::New, line).unwrap();
        assert_eq!(runs.first().unwrap().range.start, 0);
        assert_eq!(runs.last().unwrap().range.end, line.len());
        assert!(runs.windows(2).all(|w| w[0].range.end == w[1].range.start));
        let colours: std::collections::HashSet<_> = runs.iter().map(|r| r.fg).collect();
        assert!(colours.len() >= 3, "{runs:?}");
    }

    #[test]
    fn highlighting_is_skipped_for_a_401_char_line() {
        let hl = Highlighter::new("a.py", Some("base16-eighties.dark"), ColorDepth::TrueColor).unwrap();
        let mut hunk = hl.hunk();
        let at_limit = format!("x = '{}'", "a".repeat(MAX_HIGHLIGHT_LINE_CHARS - 6));
        assert_eq!(at_limit.chars().count(), 400);
        assert!(hunk.line(Side::New, &at_limit).is_some());
        let over = format!("{at_limit}b");
        assert_eq!(over.chars().count(), 401);
        assert!(hunk.line(Side::New, &over).is_none());
        assert_eq!(hunk.context(&over), (None, None));
        // Characters, not bytes: 200 two-byte characters are highlighted.
        assert!(hunk.line(Side::Old, &"é".repeat(200)).is_some());
    }

    #[test]
    fn old_and_new_sides_keep_separate_states() {
        let hl = Highlighter::new("a.py", Some("base16-eighties.dark"), ColorDepth::TrueColor).unwrap();
        let mut hunk = hl.hunk();
        // The removed line opens a triple-quoted string; the new side must not see it.
        hunk.line(Side::Old, "s = \"\"\"open");
        hunk.line(Side::New, "s = 1");
        let (old, new) = hunk.context("def f(): pass");
        assert_ne!(old, new, "old side is inside a string, new side is code");
        assert_eq!(old.unwrap().len(), 1, "the whole line is string-coloured on the old side");
        // A fresh hunk starts from a clean state.
        let mut fresh = hl.hunk();
        assert_eq!(fresh.context("def f(): pass").0, new);
    }
}
