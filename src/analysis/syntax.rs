//! The syntaxes diffs are highlighted with (bat's set, via two-face), found by a file's name:
//! shared by the TUI's diffs and the HTML report's. Loaded once, on first use; highlighting is
//! bounded by the limits here (a long line, a long diff).

use std::path::Path;
use std::sync::OnceLock;
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// Lines longer than this (in characters) are drawn without syntax colours (delta's limit).
pub const MAX_HIGHLIGHT_LINE_CHARS: usize = 400;
/// Only the first this-many lines of a diff are highlighted; the rest are drawn plain.
pub const MAX_HIGHLIGHT_DIFF_LINES: usize = 5_000;

/// bat's syntax set (includes TypeScript, TOML, Dockerfile...), loaded on first use.
pub fn syntax_set() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// The syntax for a path, by extension, then by whole file name (`Makefile`, `Dockerfile`);
/// plain text when nothing matches. Never touches the file system.
pub fn syntax_for_path(path: &str) -> &'static SyntaxReference {
    let set = syntax_set();
    let p = Path::new(path.trim());
    let file_name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let extension = p.extension().and_then(|x| x.to_str()).unwrap_or("");
    let found = (!extension.is_empty())
        .then(|| set.find_syntax_by_extension(extension))
        .flatten()
        .or_else(|| (!file_name.is_empty()).then(|| set.find_syntax_by_extension(file_name)).flatten());
    found.unwrap_or_else(|| set.find_syntax_plain_text())
}

/// Whether a syntax is the plain-text fallback (which is never highlighted).
pub fn is_plain_text(syntax: &SyntaxReference) -> bool {
    syntax.name == "Plain Text"
}
