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

/// Renders diffs and remembers the last [`CACHE_CAPACITY`] results. The syntect syntaxes and
/// themes behind it are loaded once per process (see [`crate::tui::highlight`]).
pub struct DiffRenderer {
    cache: LruCache<CacheKey, Rendered>,
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
        DiffRenderer { cache: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)) }
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
        let lines = Arc::new(render_lines(path, source, mode, width, theme));
        self.cache.put(cache_key, Arc::clone(&lines));
        lines
    }

    /// Whether a render with these arguments would be served from the cache.
    pub fn is_cached(&self, key: u64, mode: DiffMode, width: u16, theme: &Theme) -> bool {
        let cache_key = CacheKey { key, mode, width, theme: theme.name.clone(), syntax: theme.syntax.clone() };
        self.cache.contains(&cache_key)
    }

    /// Forget every rendered diff (e.g. after the theme file was edited in place).
    pub fn clear(&mut self) {
        self.cache.clear();
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
    match source {
        DiffSource::Texts { old, new } => {
            if old == new {
                return layout::no_change(theme);
            }
            let diff = model::line_diff(old, new);
            layout::render(&model::from_text_diff(&diff, path), path, mode, width, theme)
        }
        DiffSource::Unified(text) => layout::render(&model::parse_unified(text, path), path, mode, width, theme),
    }
}
