//! A unified diff as HTML: one line per `<span>` (added, removed, context, hunk header, file
//! header), its newline inside it (a block `<span>` with a newline between it and the next is
//! drawn with an empty line between them: the diff was double-spaced), the code highlighted by CSS classes for the file's syntax (so the page's one style
//! sheet colours it: no inline style, which the page's Content-Security-Policy forbids). Each
//! hunk keeps two parse states, the old side's (context and removed lines) and the new side's
//! (context and added lines), as the TUI's diffs do; the same limits bound the work.

use super::html::{esc, push_esc};
use crate::analysis::diff;
use crate::analysis::syntax::{
    MAX_HIGHLIGHT_DIFF_LINES, MAX_HIGHLIGHT_LINE_CHARS, is_plain_text, syntax_for_path, syntax_set,
};
use crate::sanitize::sanitize;
use std::collections::HashMap;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference};

/// The colours of the token classes (one short class per token, no nesting: a diff of 2,000
/// lines stays a page a browser opens quickly).
pub const SYNTAX_CSS: &str = "pre.diff .k { color: #a626a4; } pre.diff .s { color: #50a14f; } pre.diff .c { color: #8a8f98; font-style: italic; } pre.diff .n { color: #986801; } pre.diff .f { color: #4078f2; } pre.diff .t { color: #c18401; }\n";

/// The class of a scope: keyword, string, comment, number or constant, function, type; `None`
/// for the rest (drawn plain).
fn class_of(scope: Scope) -> Option<&'static str> {
    let name = scope.build_string();
    let starts = |p: &[&str]| p.iter().any(|p| name.starts_with(p));
    if starts(&["comment"]) {
        Some("c")
    } else if starts(&["string"]) {
        Some("s")
    } else if starts(&["constant.numeric", "constant.language", "constant.character"]) {
        Some("n")
    } else if starts(&["keyword", "storage"]) {
        Some("k")
    } else if starts(&["entity.name.function", "support.function", "variable.function"]) {
        Some("f")
    } else if starts(&["entity.name.class", "entity.name.type", "support.type", "support.class"]) {
        Some("t")
    } else {
        None
    }
}

struct Side {
    parse: ParseState,
    stack: ScopeStack,
}

impl Side {
    fn new(syntax: &SyntaxReference) -> Side {
        Side { parse: ParseState::new(syntax), stack: ScopeStack::new() }
    }
}

/// Scopes' classes, looked up once each.
#[derive(Default)]
struct Classes(HashMap<Scope, Option<&'static str>>);

impl Classes {
    /// The class of the innermost scope of `stack` that has one.
    fn of(&mut self, stack: &ScopeStack) -> Option<&'static str> {
        stack.as_slice().iter().rev().find_map(|&s| *self.0.entry(s).or_insert_with(|| class_of(s)))
    }
}

fn token(out: &mut String, class: Option<&str>, text: &str) {
    match class {
        Some(c) if !text.trim().is_empty() => {
            out.push_str("<span class=\"");
            out.push_str(c);
            out.push_str("\">");
            push_esc(out, text);
            out.push_str("</span>");
        }
        _ => push_esc(out, text),
    }
}

/// `code` highlighted on `side`, one flat span per coloured token. False when the parser refused
/// it (then nothing was written).
fn highlight(out: &mut String, side: &mut Side, classes: &mut Classes, code: &str) -> bool {
    let line = format!("{}\n", sanitize(code).replace('\n', " "));
    let Ok(ops) = side.parse.parse_line(&line, syntax_set()) else { return false };
    let text = &line[..line.len() - 1];
    let mut html = String::with_capacity(text.len() + 32);
    let mut at = 0;
    for (i, op) in ops {
        let i = i.min(text.len());
        if i > at {
            token(&mut html, classes.of(&side.stack), &text[at..i]);
            at = i;
        }
        if side.stack.apply(&op).is_err() {
            return false;
        }
    }
    token(&mut html, classes.of(&side.stack), &text[at..]);
    out.push_str(&html);
    true
}

/// A diff longer than this many lines shows its first [`HEAD_LINES`] and last [`TAIL_LINES`]
/// (`trajan show` prints it whole): a page stays light enough to open.
const MAX_LINES: usize = 800;
const HEAD_LINES: usize = 500;
const TAIL_LINES: usize = 200;

/// What a line of a diff is, as `analysis::diff` reads it.
#[derive(Clone, Copy)]
enum Row<'a> {
    /// A file header, `\ No newline at end of file`, other text.
    Meta,
    /// A hunk's `@@` line.
    Hunk,
    /// A hunk's line: its mark and text.
    Line(char, &'a str),
}

/// What each of `lines` (the diff's lines, [`diff::lines`]) is.
fn rows<'a>(diff: &'a str, lines: &[&str]) -> Vec<Row<'a>> {
    let mut rows = vec![Row::Meta; lines.len()];
    for h in diff::files(diff).into_iter().flat_map(|f| f.hunks) {
        if let Some(r) = rows.get_mut(h.row) {
            *r = Row::Hunk;
        }
        for l in &h.lines {
            if let Some(r) = rows.get_mut(l.row) {
                *r = Row::Line(l.mark, l.text);
            }
        }
    }
    rows
}

/// Appends `diff` (a unified diff of `path`) as a `<pre class="diff">`.
pub fn push_diff(out: &mut String, path: &str, diff: &str) {
    let syntax = syntax_for_path(path);
    let plain = is_plain_text(syntax);
    let mut sides: Option<(Side, Side)> = None;
    let mut classes = Classes::default();
    let lines = diff::lines(diff);
    let rows = rows(diff, &lines);
    let total = lines.len();
    let skip = if total > MAX_LINES { HEAD_LINES..total - TAIL_LINES } else { 0..0 };
    out.push_str("<pre class=\"diff\">");
    for (n, (line, row)) in lines.iter().zip(&rows).enumerate() {
        if skip.contains(&n) {
            if n == skip.start {
                let _ = std::fmt::Write::write_fmt(
                    out,
                    format_args!(
                        "<span class=\"cut\">… {} lines not shown here (trajan show prints them) …\n</span>",
                        skip.len()
                    ),
                );
                // The tail is parsed afresh: its first lines may be coloured as if a hunk began there.
                let in_hunk = matches!(rows.get(skip.end), Some(Row::Line(..)));
                sides = (!plain && in_hunk).then(|| (Side::new(syntax), Side::new(syntax)));
            }
            continue;
        }
        let (mark, code) = match *row {
            Row::Hunk => {
                sides = (!plain).then(|| (Side::new(syntax), Side::new(syntax)));
                out.push_str("<span class=\"hunk\">");
                push_esc(out, line);
                out.push_str("\n</span>");
                continue;
            }
            Row::Meta => {
                out.push_str("<span class=\"meta\">");
                push_esc(out, line);
                out.push_str("\n</span>");
                continue;
            }
            Row::Line(mark, code) => (mark, code),
        };
        let class = match mark {
            '+' => "add",
            '-' => "del",
            _ => "ctx",
        };
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        // A context line whose space was trimmed stays empty.
        if !line.is_empty() {
            out.push(mark);
        }
        let coloured = n < MAX_HIGHLIGHT_DIFF_LINES && code.chars().count() <= MAX_HIGHLIGHT_LINE_CHARS;
        let done = match (&mut sides, class, coloured) {
            (Some((_, new)), "add", true) => highlight(out, new, &mut classes, code),
            (Some((old, _)), "del", true) => highlight(out, old, &mut classes, code),
            (Some((old, new)), "ctx", true) => {
                let mut scratch = String::new();
                highlight(&mut scratch, old, &mut classes, code) && highlight(out, new, &mut classes, code)
            }
            _ => false,
        };
        if !done {
            out.push_str(&esc(code));
        }
        out.push_str("\n</span>");
    }
    out.push_str("</pre>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classed_highlighted_and_balanced() {
        let diff =
            "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return \"\"\"a\n+    return \"<b>\" # </span>\n";
        let mut out = String::new();
        push_diff(&mut out, "x.py", diff);
        assert!(out.contains("<span class=\"meta\">--- a/x.py\n</span>"), "{out}");
        assert!(out.contains("<span class=\"hunk\">@@ -1,2 +1,2 @@\n</span>"), "{out}");
        assert!(out.contains("<span class=\"k\">def</span>"), "python is highlighted: {out}");
        assert!(out.contains("&lt;b&gt;") && out.contains("&lt;/span&gt;"), "code is escaped: {out}");
        assert_eq!(out.matches("<span").count(), out.matches("</span>").count(), "{out}");
        // Each line's newline is inside its span: nothing but spans between them, so a browser
        // draws no empty line between two lines of the diff.
        let body = out.trim_start_matches("<pre class=\"diff\">").trim_end_matches("</pre>");
        for line in body.split("\n</span>").filter(|l| !l.is_empty()) {
            assert!(line.starts_with("<span class=\""), "text between the lines' spans: {line:?}");
            assert_eq!(line.matches("<span").count(), line.matches("</span>").count() + 1, "{line}");
        }
    }

    /// Diffs joined without `diff --git`: the next file's `---` / `+++` lines after a hunk's
    /// counts are headers, and a removed `-- ` comment within them is a removed line.
    #[test]
    fn headers_after_a_hunk_are_headers_and_a_removed_comment_is_removed() {
        let diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- note\n select 1;\n--- a/r.sql\n+++ b/r.sql\n@@ -1 +1 @@\n-x\n+y\n";
        let mut out = String::new();
        push_diff(&mut out, "q.sql", diff);
        assert!(out.contains("<span class=\"del\">-"), "{out}");
        assert!(out.contains("<span class=\"meta\">--- a/r.sql\n</span>"), "{out}");
        assert!(out.contains("<span class=\"meta\">+++ b/r.sql\n</span>"), "{out}");
    }
}
