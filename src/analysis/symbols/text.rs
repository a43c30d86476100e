//! Text as tools show it, made parseable: numbered views (`cat -n`, the editor's `view`,
//! SWE-agent's `open`) without their numbers, single lines cut out of a file, bounded prefixes.

use super::model::{MAX_PARSE, Symbols};
use super::{Lang, lang, walk};

/// The longest prefix of `text` within `max` bytes, cut at a line end when there is one.
pub(super) fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    match cut.rfind('\n') {
        Some(p) => &cut[..p + 1],
        None => cut,
    }
}

/// A view of a file with its line numbers: `text` holds the numbered lines without their
/// numbers, `lines[i]` is the file line of `text`'s line `i + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedView {
    pub text: String,
    pub lines: Vec<usize>,
}

/// `   12\tcode` (`cat -n`, `nl`, str_replace_editor) or `12:code` (SWE-agent's `open`).
fn numbered(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start_matches(' ');
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    rest.strip_prefix('\t')
        .or_else(|| (t.len() == line.len()).then(|| rest.strip_prefix(':')).flatten())
        .map(|r| (n, r))
}

/// The numbered lines of a view, when most of its lines are numbered (the tool's own header
/// and footer lines are left out); `None` for plain text.
pub fn numbered_view(observation: &str) -> Option<NumberedView> {
    let mut text = String::new();
    let mut lines = Vec::new();
    let mut other = 0usize;
    for line in observation.lines() {
        match numbered(line) {
            Some((n, rest)) => {
                text.push_str(rest);
                text.push('\n');
                lines.push(n);
            }
            None if line.trim().is_empty() => {}
            None => other += 1,
        }
    }
    (lines.len() >= 2 && lines.len() >= other).then_some(NumberedView { text, lines })
}

/// A view as source text: the numbered lines without their numbers, or the text as it is.
pub fn strip_view(observation: &str) -> std::borrow::Cow<'_, str> {
    match numbered_view(observation) {
        Some(v) => std::borrow::Cow::Owned(v.text),
        None => std::borrow::Cow::Borrowed(observation),
    }
}

/// How a window sits in its file's blocks: where it leaves the block it starts inside (the byte
/// offset after the line on which the running count of braces, outside strings and comments,
/// is lowest, when that goes below zero), and how many blocks are still open at its end.
/// Python has no braces.
fn blocks(lang: Lang, text: &str) -> (Option<usize>, usize) {
    if lang == Lang::Python {
        return (None, 0);
    }
    let mut depth = 0i64;
    let mut lowest = 0i64;
    let mut end = None;
    let mut offset = 0;
    let mut in_block_comment = false;
    for line in text.split_inclusive('\n') {
        let mut chars = line.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            if in_block_comment {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    in_block_comment = false;
                }
                continue;
            }
            match (quote, c) {
                (Some(_), '\\') => {
                    chars.next();
                }
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '`') => quote = Some(c),
                (None, '\'') if lang != Lang::Rust => quote = Some(c),
                (None, '/') if chars.peek() == Some(&'/') => break,
                (None, '/') if chars.peek() == Some(&'*') => {
                    chars.next();
                    in_block_comment = true;
                }
                (None, '{') => depth += 1,
                (None, '}') => depth -= 1,
                _ => {}
            }
        }
        offset += line.len();
        if depth < lowest {
            lowest = depth;
            end = Some(offset);
        }
    }
    (end, (depth - lowest).max(0) as usize)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// Where a Python window leaves the block it starts inside: the first line as shallow as the
/// window's shallowest, when the window's first line is deeper (a hunk that starts in one
/// class's method and goes on into the next class).
fn python_tail(text: &str) -> Option<usize> {
    let lines = || text.split_inclusive('\n').filter(|l| !l.trim().is_empty());
    let least = lines().map(indent_of).min()?;
    if lines().next().map(indent_of)? == least {
        return None;
    }
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if !line.trim().is_empty() && indent_of(line) == least {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// Python lines put under a `def`: dedented to their shallowest line, then indented one level.
fn indent_under(text: &str) -> String {
    let least = text.split_inclusive('\n').filter(|l| !l.trim().is_empty()).map(indent_of).min().unwrap_or(0);
    text.split_inclusive('\n')
        .map(|l| match l.get(least..) {
            Some(rest) if !l.trim().is_empty() => format!("    {rest}"),
            _ if l.ends_with('\n') => "\n".to_string(),
            _ => String::new(),
        })
        .collect()
}

/// A window of a file: its tail of an enclosing block (read as a body) and the rest (read as it
/// is), lines numbered as in the window.
pub(super) fn window(lang: Lang, text: &str) -> Symbols {
    let (cut, open_at_end) = if lang == Lang::Python { (python_tail(text), 0) } else { blocks(lang, text) };
    // Blocks the window leaves open are closed, so a function cut at its end still reads as one.
    let closed;
    let text = if open_at_end > 0 {
        closed = format!("{text}\n{}\n", "}".repeat(open_at_end.min(64)));
        closed.as_str()
    } else {
        text
    };
    let Some(cut) = cut.filter(|&c| c < text.len()) else { return parse_whole(lang, text) };
    let (tail, rest) = text.split_at(cut);
    let tail_lines = tail.matches('\n').count();
    let mut out = Symbols::default();
    let (open, _) = body_wrapper(lang);
    let opened = open.matches('\n').count();
    let inner = if lang == Lang::Python {
        parse_whole(lang, &format!("{}{}", open.trim_end_matches(' '), indent_under(tail)))
    } else {
        parse_whole(lang, &format!("{open}{tail}"))
    };
    out.references.extend(
        inner
            .references
            .into_iter()
            .filter(|r| r.line > opened && !r.name.starts_with("__fragment") && !r.name.starts_with("__Fragment"))
            .map(|mut r| {
                r.line -= opened;
                r
            }),
    );
    let after = parse_whole(lang, rest);
    out.definitions.extend(after.definitions.into_iter().map(|mut d| {
        d.line += tail_lines;
        d.end_line += tail_lines;
        d
    }));
    out.references.extend(after.references.into_iter().map(|mut r| {
        r.line += tail_lines;
        r
    }));
    out
}

/// Text that opens a function body in `lang` (and what closes it).
fn body_wrapper(lang: Lang) -> (&'static str, &'static str) {
    match lang {
        Lang::Python => ("def __fragment__():\n    ", "\n"),
        Lang::Java => ("class __Fragment__ { void __fragment__() {\n", "\n} }\n"),
        Lang::Go => ("func __fragment__() {\n", "\n}\n"),
        Lang::Rust => ("fn __fragment__() {\n", "\n}\n"),
        Lang::C | Lang::Cpp | Lang::TypeScript | Lang::Tsx => ("void __fragment__() {\n", "\n}\n"),
    }
}

/// How much of a parse went wrong: the bytes under error nodes.
fn error_bytes(tree: &tree_sitter::Tree) -> usize {
    let root = tree.root_node();
    if !root.has_error() {
        return 0;
    }
    let mut cursor = root.walk();
    let mut total = 0;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            total += n.byte_range().len().max(1);
            continue;
        }
        if n.has_error() {
            stack.extend(n.children(&mut cursor));
        }
    }
    total
}

/// One line alone, or inside a function body when that parses with fewer errors (`foo(a, b);`
/// is a statement; a Java call needs a method around it).
pub(super) fn fragment(lang: Lang, line: &str) -> Symbols {
    let line = prefix(line.trim(), 4096);
    let (open, close) = body_wrapper(lang);
    let wrapped = format!("{open}{line}{close}");
    let bare = lang::parse(lang, line);
    let inside = lang::parse(lang, &wrapped);
    let bare_err = bare.as_ref().map_or(usize::MAX, error_bytes);
    let inside_err = inside.as_ref().map_or(usize::MAX, error_bytes);
    let mut symbols = match (bare, inside) {
        (Some(b), _) if bare_err <= inside_err => walk::walk(lang, &b, line),
        (_, Some(i)) => {
            let mut s = walk::walk(lang, &i, &wrapped);
            s.definitions.retain(|d| !d.name.starts_with("__fragment"));
            s.references.retain(|r| !r.name.starts_with("__fragment") && !r.name.starts_with("__Fragment"));
            for r in &mut s.references {
                r.line = 1;
            }
            for d in &mut s.definitions {
                d.line = 1;
                d.end_line = 1;
            }
            s
        }
        _ => Symbols::default(),
    };
    symbols.definitions.retain(|d| !d.name.is_empty());
    symbols
}

/// The symbols of `text` in `lang`. A window cut out of a file (a diff hunk, `sed -n '40,60p'`)
/// may start inside a block; its lines up to where that block closes are read on their own, as
/// a body, so the error they would cause does not swallow the definitions after them.
pub fn extract(lang: Lang, text: &str) -> Symbols {
    window(lang, prefix(text, MAX_PARSE))
}

/// The symbols of a whole parse of `text`.
fn parse_whole(lang: Lang, text: &str) -> Symbols {
    match lang::parse(lang, text) {
        Some(tree) => walk::walk(lang, &tree, text),
        None => Symbols::default(),
    }
}

/// The symbols of one line cut out of a file (a search-output line): parsed alone, and, when
/// that reads as an error, inside a function body, where a statement belongs.
pub fn extract_line(lang: Lang, line: &str) -> Symbols {
    fragment(lang, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_views_lose_their_numbers_and_keep_their_lines() {
        let view = "Here's the result of running `cat -n` on /testbed/a.py:\n    40\tdef f(x):\n    41\t    return x\n";
        let v = numbered_view(view).unwrap();
        assert_eq!(v.text, "def f(x):\n    return x\n");
        assert_eq!(v.lines, vec![40, 41]);
        let open = "[File: /testbed/a.py (300 lines total)]\n(9 more lines above)\n10:def g():\n11:    pass\n";
        assert_eq!(numbered_view(open).unwrap().lines, vec![10, 11]);
        assert!(numbered_view("def f():\n    return 1\n").is_none());
        // A file whose lines happen to start with numbers and a colon, indented: not a view.
        assert!(numbered_view("x = {\n  1: 'a',\n  2: 'b',\n}\n").is_none());
    }

    #[test]
    fn a_window_starting_inside_a_block_keeps_the_definitions_after_it() {
        let go = "\titems map[string]Item\n}\n\n// GetItem returns it.\nfunc (s *Store) GetItem(key string) (Item, bool) {\n\treturn s.items[key], true\n";
        let s = super::super::extract(Lang::Go, go);
        let d: Vec<(&str, usize)> = s.definitions.iter().map(|d| (d.qualified.as_str(), d.line)).collect();
        assert_eq!(d, [("Store.GetItem", 5)]);
        let rust = "        self.pos += 1;\n    }\n}\n\nfn helper(x: u8) -> u8 { x }\n";
        let s = super::super::extract(Lang::Rust, rust);
        assert_eq!(s.definitions[0].line, 5);
        // A function cut at its end.
        let cut = "}\n\n/// Next.\npub fn next_token(&mut self) -> Option<Token> {\n    while a {\n        self.pos += 1;\n    }\n";
        let s = super::super::extract(Lang::Rust, cut);
        assert_eq!((s.definitions[0].name.as_str(), s.definitions[0].line), ("next_token", 4));
        let c =
            "        return count(buf, n) + strlen(\"}\");\n    }\n    return 0;\n}\nint other(void) { return 1; }\n";
        let s = super::super::extract(Lang::C, c);
        assert_eq!((s.definitions[0].name.as_str(), s.definitions[0].line), ("other", 5));
        assert!(
            s.references.iter().any(|r| r.name == "count" && r.line == 1 && r.args == Some(2)),
            "{:?}",
            s.references
        );
        // Python: the tail of a method, a blank line, then the next class.
        let py = "        return fetch(a, 1)\n\n\nclass Next(Base):\n    def run(self, x):\n        pass\n";
        let s = super::super::extract(Lang::Python, py);
        let d: Vec<(&str, usize)> = s.definitions.iter().map(|d| (d.qualified.as_str(), d.line)).collect();
        assert_eq!(d, [("Next", 4), ("Next.run", 5)]);
        assert!(s.references.iter().any(|r| r.name == "fetch" && r.line == 1 && r.args == Some(2)));
    }

    #[test]
    fn prefixes_end_at_a_line_and_a_char_boundary() {
        assert_eq!(prefix("ab\ncd", 4), "ab\n");
        assert_eq!(prefix("é", 1), "");
        assert_eq!(prefix("abc", 10), "abc");
    }
}
