//! Turning an edit into styled lines: unified or side by side, syntax colours layered under the
//! diff backgrounds, changed words emphasised, every piece of text sanitized. Results are cached
//! per (edit, mode, width, theme) in a bounded LRU, so redrawing a screen costs a lookup.
//!
//! - [`model`]: the diff as data, from two texts (similar) or a unified diff (`git diff`).
//! - [`paint`]: one line's styled pieces (sanitizing, layering, tabs, cutting to a column).
//! - [`layout`]: headers, gutters, sign column, side-by-side pairing.

pub mod layout;
pub mod model;
pub mod paint;
#[cfg(test)]
mod tests;

use std::num::NonZeroUsize;
use std::sync::Arc;

use lru::LruCache;
use ratatui::text::Line;

use crate::tui::theme::Theme;

/// How a diff is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum DiffMode {
    /// One column: old and new line numbers, sign, content.
    #[default]
    Unified,
    /// Old on the left, new on the right, each `(width - 1) / 2` wide; long lines cut with `…`.
    SideBySide,
}

/// What to diff.
#[derive(Debug, Clone, Copy)]
pub enum DiffSource<'a> {
    /// The file before and after the edit; diffed by line with 3 lines of context.
    Texts { old: &'a str, new: &'a str },
    /// An existing unified diff (`git diff`, an OpenHands patch), possibly of several files.
    Unified(&'a str),
}

/// Rendered diffs kept by [`DiffRenderer`].
pub const CACHE_CAPACITY: usize = 64;

/// Finished lines, shared with the views.
pub type Rendered = Arc<Vec<Line<'static>>>;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    key: u64,
    mode: DiffMode,
    width: u16,
    theme: String,
    /// Part of the key so a syntax-theme override under the same theme name is not served stale.
    syntax: Option<String>,
}

/// Lines highlighted when a diff is first shown, at most; the rest (up to
/// [`crate::tui::highlight::MAX_HIGHLIGHT_DIFF_LINES`]) is coloured by
/// [`DiffRenderer::finish_one`] when the reviewer is not typing, so a key never waits for a
/// long diff's syntax colours. A frame shares one budget among the diffs it renders first (see
/// [`DiffRenderer::new_frame`]): a step with several edits and their contradicting views is
/// coloured no further than a screen's height before it is drawn.
pub const FIRST_BUDGET: usize = 120;

/// A diff shown with part of its colours, to finish later.
struct Unfinished {
    key: CacheKey,
    path: String,
    old: Option<String>,
    text: String,
    mode: DiffMode,
    width: u16,
    theme: Theme,
}

/// Renders diffs and remembers the last [`CACHE_CAPACITY`] results. The syntect syntaxes and
/// themes behind it are loaded once per process (see [`crate::tui::highlight`]).
pub struct DiffRenderer {
    cache: LruCache<CacheKey, Rendered>,
    unfinished: Vec<Unfinished>,
    /// Lines the diffs rendered for the first time in this frame may still highlight.
    frame_budget: usize,
}

impl Default for DiffRenderer {
    fn default() -> Self {
        DiffRenderer::new()
    }
}

impl DiffRenderer {
    pub fn new() -> Self {
        DiffRenderer::with_capacity(CACHE_CAPACITY)
    }

    pub fn with_capacity(capacity: usize) -> Self {
        DiffRenderer {
            cache: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
            unfinished: Vec::new(),
            frame_budget: FIRST_BUDGET,
        }
    }

    /// A frame of `rows` rows begins: the diffs it renders for the first time highlight that
    /// many lines among them (at most [`FIRST_BUDGET`]), no more than it can show.
    pub fn new_frame(&mut self, rows: u16) {
        self.frame_budget = usize::from(rows).min(FIRST_BUDGET);
    }

    /// `key` identifies the edit (the caller passes the edit id, or a hash for patches); cached
    /// results are reused, so the same key must always come with the same `path` and `source`.
    pub fn render(
        &mut self,
        key: u64,
        path: &str,
        source: DiffSource<'_>,
        mode: DiffMode,
        width: u16,
        theme: &Theme,
    ) -> Rendered {
        let cache_key = CacheKey { key, mode, width, theme: theme.name.clone(), syntax: theme.syntax.clone() };
        if let Some(hit) = self.cache.get(&cache_key) {
            return Arc::clone(hit);
        }
        let layout::Laid { lines, starved, coloured } =
            render_with_budget(path, source, mode, width, theme, self.frame_budget);
        self.frame_budget = self.frame_budget.saturating_sub(coloured);
        if starved {
            let (old, text) = match source {
                DiffSource::Texts { old, new } => (Some(old.to_string()), new.to_string()),
                DiffSource::Unified(text) => (None, text.to_string()),
            };
            let unfinished = Unfinished {
                key: cache_key.clone(),
                path: path.to_string(),
                old,
                text,
                mode,
                width,
                theme: theme.clone(),
            };
            self.unfinished.push(unfinished);
        }
        let lines = Arc::new(lines);
        self.cache.put(cache_key, Arc::clone(&lines));
        lines
    }

    /// Colour the rest of one diff that was shown with part of its colours. True when it did
    /// (the caller redraws: panels built from the old lines are stale).
    pub fn finish_one(&mut self) -> bool {
        let Some(u) = self.unfinished.pop() else { return false };
        let source = match &u.old {
            Some(old) => DiffSource::Texts { old, new: &u.text },
            None => DiffSource::Unified(&u.text),
        };
        let lines = render_lines(&u.path, source, u.mode, u.width, &u.theme);
        self.cache.put(u.key, Arc::new(lines));
        true
    }

    /// Whether a render with these arguments would be served from the cache.
    pub fn is_cached(&self, key: u64, mode: DiffMode, width: u16, theme: &Theme) -> bool {
        let cache_key = CacheKey { key, mode, width, theme: theme.name.clone(), syntax: theme.syntax.clone() };
        self.cache.contains(&cache_key)
    }
}

/// Render without caching. `path` picks the syntax (and names the file for [`DiffSource::Texts`]
/// and for unified hunks that come without a file header).
pub fn render_lines(
    path: &str,
    source: DiffSource<'_>,
    mode: DiffMode,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    render_with_budget(path, source, mode, width, theme, crate::tui::highlight::MAX_HIGHLIGHT_DIFF_LINES).lines
}

/// Render with at most `budget` lines highlighted.
fn render_with_budget(
    path: &str,
    source: DiffSource<'_>,
    mode: DiffMode,
    width: u16,
    theme: &Theme,
    budget: usize,
) -> layout::Laid {
    match source {
        DiffSource::Texts { old, new } => {
            if old == new {
                return layout::Laid::no_change(theme);
            }
            let diff = model::line_diff(old, new);
            layout::render(&model::from_text_diff(&diff, path), path, mode, width, theme, budget)
        }
        DiffSource::Unified(text) => {
            layout::render(&model::parse_unified(text, path), path, mode, width, theme, budget)
        }
    }
}
