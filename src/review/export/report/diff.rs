//! A unified diff as HTML: one line per `<span>` (added, removed, context, hunk header, file
//! header), the code highlighted by CSS classes for the file's syntax (so the page's one style
//! sheet colours it: no inline style, which the page's Content-Security-Policy forbids). Each
//! hunk keeps two parse states, the old side's (context and removed lines) and the new side's
//! (context and added lines), as the TUI's diffs do; the same limits bound the work.

use super::html::{esc, push_esc};
use crate::analysis::syntax::{
    MAX_HIGHLIGHT_DIFF_LINES, MAX_HIGHLIGHT_LINE_CHARS, is_plain_text, syntax_for_path, syntax_set,
};
use crate::sanitize::sanitize;
use syntect::html::{ClassStyle, line_tokens_to_classed_spans};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference};

/// The class prefix of syntax scopes (`hl-string hl-quoted`), and how syntect writes them.
pub const CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "hl-" };

/// The style sheet of the syntax classes (syntect's InspiredGitHub theme).
pub fn syntax_css() -> String {
    let themes = syntect::highlighting::ThemeSet::load_defaults();
    themes
        .themes
        .get("InspiredGitHub")
        .and_then(|t| syntect::html::css_for_theme_with_class_style(t, CLASS_STYLE).ok())
        .unwrap_or_default()
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

fn open(out: &mut String, scope: &Scope) {
    out.push_str("<span class=\"");
    for (i, atom) in scope.build_string().split('.').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str("hl-");
        push_esc(out, atom);
    }
    out.push_str("\">");
}

/// `code` highlighted on `side`, its spans closed at the end of the line (and opened again at
/// the start of the next). False when the parser refused it (then nothing was written).
fn highlight(out: &mut String, side: &mut Side, code: &str) -> bool {
    let line = format!("{}\n", sanitize(code).replace('\n', " "));
    let Ok(ops) = side.parse.parse_line(&line, syntax_set()) else { return false };
    let depth = side.stack.as_slice().len();
    let mut reopened = String::new();
    for scope in side.stack.as_slice() {
        open(&mut reopened, scope);
    }
    let Ok((html, delta)) = line_tokens_to_classed_spans(&line, &ops, CLASS_STYLE, &mut side.stack) else {
        return false;
    };
    out.push_str(&reopened);
    out.push_str(&html.replace('\n', ""));
    let still_open = (depth as isize + delta).max(0) as usize;
    out.push_str(&"</span>".repeat(still_open));
    true
}

/// Appends `diff` (a unified diff of `path`) as a `<pre class="diff">`.
pub fn push_diff(out: &mut String, path: &str, diff: &str) {
    let syntax = syntax_for_path(path);
    let plain = is_plain_text(syntax);
    let mut sides: Option<(Side, Side)> = None;
    let mut in_hunk = false;
    out.push_str("<pre class=\"diff\">");
    for (n, line) in diff.lines().enumerate() {
        let header = !in_hunk || line.starts_with("diff --git ");
        if line.starts_with("@@") {
            in_hunk = true;
            sides = (!plain).then(|| (Side::new(syntax), Side::new(syntax)));
            out.push_str("<span class=\"hunk\">");
            push_esc(out, line);
            out.push_str("</span>\n");
            continue;
        }
        if header {
            in_hunk = false;
            out.push_str("<span class=\"meta\">");
            push_esc(out, line);
            out.push_str("</span>\n");
            continue;
        }
        let (class, code) = match line.chars().next() {
            Some('+') => ("add", &line[1..]),
            Some('-') => ("del", &line[1..]),
            Some(' ') => ("ctx", &line[1..]),
            _ => ("meta", line),
        };
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        if class != "meta" {
            out.push(line.chars().next().unwrap_or(' '));
        }
        let coloured = n < MAX_HIGHLIGHT_DIFF_LINES && code.chars().count() <= MAX_HIGHLIGHT_LINE_CHARS;
        let done = match (&mut sides, class, coloured) {
            (Some((_, new)), "add", true) => highlight(out, new, code),
            (Some((old, _)), "del", true) => highlight(out, old, code),
            (Some((old, new)), "ctx", true) => {
                let mut scratch = String::new();
                highlight(&mut scratch, old, code) && highlight(out, new, code)
            }
            _ => false,
        };
        if !done {
            out.push_str(&esc(code));
        }
        out.push_str("</span>\n");
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
        assert!(out.contains("<span class=\"meta\">--- a/x.py</span>"), "{out}");
        assert!(out.contains("<span class=\"hunk\">@@ -1,2 +1,2 @@</span>"), "{out}");
        assert!(out.contains("hl-keyword"), "python is highlighted: {out}");
        assert!(out.contains("&lt;b&gt;") && out.contains("&lt;/span&gt;"), "code is escaped: {out}");
        assert_eq!(out.matches("<span").count(), out.matches("</span>").count(), "{out}");
        for line in out.lines().filter(|l| l.starts_with("<span class=\"del") || l.starts_with("<span class=\"add")) {
            assert_eq!(line.matches("<span").count(), line.matches("</span>").count(), "{line}");
        }
    }
}
