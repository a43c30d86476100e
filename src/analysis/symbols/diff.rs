//! What one file's diff did to its definitions: renamed, removed, re-signed or added them, and
//! which definitions its changed lines sit in. Each hunk's two sides (context and removed lines;
//! context and added lines) are parsed on their own; the hunk header (`@@ … @@ class Foo:`,
//! git's function context) gives the scope of a hunk that starts inside a definition.

use super::Lang;
use super::model::{DefKind, Definition, Params, RefKind, Symbols};
use super::text::extract;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Removed,
    Renamed,
    /// Same name, other parameters.
    Resigned,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Resigned => "re-signed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub def: DefKind,
    /// The name after the change (before it, for a removal).
    pub name: String,
    pub qualified: String,
    /// Renames: the old name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_signature: Option<String>,
    #[serde(skip)]
    pub old_params: Option<Params>,
    #[serde(skip)]
    pub new_params: Option<Params>,
    /// A declaration without a body changed (a prototype, an interface method).
    #[serde(skip)]
    pub prototype: bool,
}

impl Change {
    /// The name callers and importers used before the change.
    pub fn old_name(&self) -> &str {
        self.renamed_from.as_deref().unwrap_or(&self.name)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileChanges {
    pub changes: Vec<Change>,
    /// The definitions the changed lines sit in, as scope paths (`["Client", "send"]`); lines
    /// outside any definition give none. A definition the diff adds counts as its scope.
    pub touched: Vec<Vec<String>>,
}

/// One side of a hunk: its lines (dedented) and which of them the diff changed.
#[derive(Default)]
struct Side {
    text: String,
    changed: Vec<bool>,
}

struct Hunk {
    header: String,
    old: Side,
    new: Side,
    /// Indentation removed from every line: the hunk sat this deep inside something.
    indent: usize,
}

fn hunks(file_diff: &str) -> Vec<Hunk> {
    let out: Vec<(String, Vec<(char, &str)>)> = crate::analysis::diff::hunks(file_diff)
        .into_iter()
        .map(|h| (h.section().to_string(), h.lines.iter().map(|l| (l.mark, l.text)).collect()))
        .collect();
    out.into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(header, lines)| {
            let indent = lines
                .iter()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(_, l)| l.len() - l.trim_start_matches([' ', '\t']).len())
                .min()
                .unwrap_or(0);
            let mut old = Side::default();
            let mut new = Side::default();
            for (c, l) in lines {
                let l = l.get(indent..).filter(|_| l.len() >= indent).unwrap_or_else(|| l.trim_start());
                if c != '+' {
                    old.text.push_str(l);
                    old.text.push('\n');
                    old.changed.push(c == '-');
                }
                if c != '-' {
                    new.text.push_str(l);
                    new.text.push('\n');
                    new.changed.push(c == '+');
                }
            }
            Hunk { header, old, new, indent }
        })
        .collect()
}

/// The scope a hunk header names (`class Foo:`, `func (r *Reader) Read(...) {`, `impl Foo {`), and
/// whether it is a type (its functions are methods).
fn header_scope(lang: Lang, header: &str) -> (Vec<String>, bool) {
    let path = header_path(lang, header);
    let is_type = lang == Lang::Rust && header.contains("impl")
        || extract(lang, &format!("{}{}", header.trim(), if lang == Lang::Python { "\n    pass\n" } else { "\n}\n" }))
            .definitions
            .iter()
            .any(|d| {
                d.name == path.last().map(String::as_str).unwrap_or("")
                    && matches!(
                        d.kind,
                        DefKind::Class | DefKind::Struct | DefKind::Interface | DefKind::Trait | DefKind::Enum
                    )
            });
    (path, is_type)
}

/// A Python method read outside its class: its `self`/`cls` is the receiver, not an argument.
fn drop_receiver(p: &mut Params) {
    let first = p.list.first().map(|f| f.split([':', '=']).next().unwrap_or("").trim().to_string());
    if matches!(first.as_deref(), Some("self" | "cls")) {
        p.list.remove(0);
        p.min = p.min.saturating_sub(1);
        p.max = p.max.map(|m| m.saturating_sub(1));
    }
}

fn header_path(lang: Lang, header: &str) -> Vec<String> {
    let h = header.trim();
    if h.is_empty() {
        return Vec::new();
    }
    if lang == Lang::Rust && (h.starts_with("impl") || h.contains(" impl")) {
        let after = h.split_once("impl").map(|(_, r)| r).unwrap_or("");
        let ty = after.rsplit_once(" for ").map(|(_, t)| t).unwrap_or(after);
        let ty = ty.trim().trim_start_matches('<');
        let ty = if after.trim_start().starts_with('<') {
            after.split_once('>').map(|(_, r)| r.rsplit_once(" for ").map(|(_, t)| t).unwrap_or(r)).unwrap_or(ty)
        } else {
            ty
        };
        let name: String = ty.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        return if name.is_empty() { Vec::new() } else { vec![name] };
    }
    let closer = match lang {
        Lang::Python => "\n    pass\n",
        _ if h.ends_with('{') => "\n}\n",
        _ => " {}\n",
    };
    let parsed = extract(lang, &format!("{h}{closer}"));
    let best = parsed
        .definitions
        .iter()
        .filter(|d| {
            !matches!(d.kind, DefKind::Field | DefKind::Constant | DefKind::Module) || d.kind == DefKind::Module
        })
        .max_by_key(|d| d.qualified.split(lang.separator()).count());
    if let Some(d) = best {
        return d.path(lang).into_iter().map(str::to_string).collect();
    }
    // A function head cut by the hunk header (`parse_header(const char *buf,`): the name before
    // the first parenthesis.
    let Some(p) = h.find('(') else { return Vec::new() };
    let name: String = h[..p]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    const KEYWORDS: &[&str] = &["if", "for", "while", "switch", "return", "sizeof", "catch", "elif", "print"];
    if name.is_empty() || KEYWORDS.contains(&name.as_str()) || name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        Vec::new()
    } else {
        vec![name]
    }
}

/// The start of a hunk at column 0 that lies deeper than that (in what the hunk header names).
#[derive(Default)]
struct Tail {
    scope: Vec<String>,
    /// Lines of the old and the new side before the first line at column 0.
    lines: (usize, usize),
}

/// How many lines of a dedented side come before its first non-blank line at column 0, when its
/// first non-blank line is indented.
fn leading_deeper(text: &str) -> usize {
    let at_zero = |l: &str| !l.trim().is_empty() && !l.starts_with([' ', '\t']);
    match text.lines().find(|l| !l.trim().is_empty()) {
        Some(first) if !at_zero(first) => text.lines().position(at_zero).unwrap_or(0),
        _ => 0,
    }
}

/// Lines of a dedented side before its first definition at column 0 (the hunk's own level);
/// `None` when no definition starts at that level.
fn first_level_def(read: &Read, side: &Side) -> Option<usize> {
    let lines: Vec<&str> = side.text.lines().collect();
    read.symbols
        .definitions
        .iter()
        .filter(|d| !matches!(d.kind, DefKind::Field | DefKind::Constant))
        .filter(|d| lines.get(d.line.wrapping_sub(1)).is_some_and(|l| !l.is_empty() && !l.starts_with([' ', '\t'])))
        .map(|d| d.line - 1)
        .min()
}

/// A parsed hunk side with its definitions keyed by scope path.
struct Read {
    symbols: Symbols,
    changed: Vec<bool>,
}

impl Read {
    fn new(lang: Lang, side: &Side) -> Read {
        Read { symbols: extract(lang, &side.text), changed: side.changed.clone() }
    }

    fn changed_line(&self, line: usize) -> bool {
        line >= 1 && self.changed.get(line - 1).copied().unwrap_or(false)
    }

    /// Definitions whose first line the diff changed.
    fn changed_heads(&self) -> impl Iterator<Item = &Definition> {
        self.symbols.definitions.iter().filter(|d| self.changed_line(d.line))
    }
}

fn path_of(lang: Lang, prefix: &[String], d: &Definition) -> Vec<String> {
    let mut p = prefix.to_vec();
    p.extend(d.path(lang).into_iter().map(str::to_string));
    p
}

fn params_key(d: &Definition) -> String {
    d.params.as_ref().map(|p| p.list.join(", ")).unwrap_or_default()
}

/// The definitions of `file_diff` (one file's part of a unified diff) that it renamed, removed,
/// re-signed or added, and the definitions its changed lines sit in.
pub fn changes(lang: Lang, file_diff: &str) -> FileChanges {
    let mut out = FileChanges::default();
    let read: Vec<HunkRead> = hunks(file_diff).iter().map(|h| read_hunk(lang, h)).collect();
    let whole = match_heads(lang, &read, &mut out);
    locate_lines(lang, &read, &whole, &mut out);
    out
}

/// A hunk as read: the scope of its definitions, its two sides, and its tail.
type HunkRead = (Vec<String>, Read, Read, Tail);

/// Per hunk: the scope of its definitions, its two sides, and, for a hunk that starts deeper
/// than its shallowest line, the header's scope with how many lines of each side come before
/// that line (they sit in what the header names).
fn read_hunk(lang: Lang, h: &Hunk) -> HunkRead {
    let mut tail = if h.indent == 0 {
        let lines = (leading_deeper(&h.old.text), leading_deeper(&h.new.text));
        let scope = if lines == (0, 0) { Vec::new() } else { header_scope(lang, &h.header).0 };
        Tail { scope, lines }
    } else {
        Tail::default()
    };
    let (mut scope, is_type) = if h.indent > 0 { header_scope(lang, &h.header) } else { (Vec::new(), false) };
    let (mut old, mut new) = (Read::new(lang, &h.old), Read::new(lang, &h.new));
    // A header naming a function, over a hunk that defines something at its own level:
    // the header is the definition before the hunk (a sibling), not one around it. The
    // lines before that definition still sit in the header's function; the definitions
    // of the hunk sit in the header's parent, unknown when the header is all there is.
    if h.indent > 0 && !is_type && !scope.is_empty() {
        let (o, n) = (first_level_def(&old, &h.old), first_level_def(&new, &h.new));
        if o.is_some() || n.is_some() {
            let all = |side: &Side| side.changed.len();
            tail = Tail { scope: scope.clone(), lines: (o.unwrap_or(all(&h.old)), n.unwrap_or(all(&h.new))) };
            scope.pop();
        }
    }
    // Python: a hunk deeper than a class body (git's header is a line at column 0) sits in a
    // function; what reads as a module-level assignment there is a local variable.
    if lang == Lang::Python && h.indent > 4 {
        for side in [&mut old, &mut new] {
            side.symbols
                .definitions
                .retain(|d| !matches!(d.kind, DefKind::Constant | DefKind::Field) || d.qualified.contains('.'));
        }
    }
    if is_type {
        // Functions written inside the header's type are its methods.
        for d in old.symbols.definitions.iter_mut().chain(new.symbols.definitions.iter_mut()) {
            if d.kind == DefKind::Function && !d.qualified.contains(lang.separator()) {
                d.kind = DefKind::Method;
                if let Some(p) = d.params.as_mut().filter(|_| lang == Lang::Python) {
                    drop_receiver(p);
                }
            }
        }
    }
    (scope, old, new, tail)
}

/// Heads removed and added, matched into re-signed, renamed, removed and added definitions
/// (pushed to `out`). Returns the heads that came or went whole, by hunk, side and line.
fn match_heads(lang: Lang, read: &[HunkRead], out: &mut FileChanges) -> Vec<(usize, bool, usize)> {
    // (hunk index, scope path, definition) of heads removed and added.
    let mut removed: Vec<(usize, Vec<String>, Definition)> = Vec::new();
    let mut added: Vec<(usize, Vec<String>, Definition)> = Vec::new();
    let mut provided_again: Vec<String> = Vec::new();
    for (hi, (scope, old, new, _)) in read.iter().enumerate() {
        removed.extend(old.changed_heads().map(|d| (hi, path_of(lang, scope, d), d.clone())));
        added.extend(new.changed_heads().map(|d| (hi, path_of(lang, scope, d), d.clone())));
        provided_again.extend(new.symbols.definitions.iter().map(|d| d.name.clone()));
        provided_again
            .extend(new.symbols.references.iter().filter(|r| r.kind == RefKind::Import).map(|r| r.name.clone()));
    }
    let sep = lang.separator();
    let mut used_added = vec![false; added.len()];
    // Heads that came or went whole (added or removed definitions), by hunk, side and line: the
    // lines inside them are located by their scope, not by them.
    let mut whole: Vec<(usize, bool, usize)> = Vec::new();
    for (hi, path, d) in &removed {
        let same: Vec<usize> = added.iter().enumerate().filter(|(_, (_, p, _))| p == path).map(|(i, _)| i).collect();
        if !same.is_empty() {
            // Same name: re-signed when no added head keeps the old parameters.
            let key = params_key(d);
            if same.iter().any(|&i| params_key(&added[i].2) == key) {
                for &i in &same {
                    if params_key(&added[i].2) == key {
                        used_added[i] = true;
                    }
                }
                continue;
            }
            let i = same[0];
            used_added[i] = true;
            if d.kind.callable() || d.params.is_some() {
                out.changes.push(change(
                    ChangeKind::Resigned,
                    &added[i].2,
                    path.join(sep),
                    None,
                    Some(d),
                    Some(&added[i].2),
                ));
            }
            continue;
        }
        // A rename: an unmatched head of the same kind added in the same hunk and scope.
        let parent = &path[..path.len().saturating_sub(1)];
        let partner = added.iter().enumerate().position(|(i, (ahi, ap, ad))| {
            !used_added[i]
                && ahi == hi
                && ad.kind == d.kind
                && &ap[..ap.len().saturating_sub(1)] == parent
                && !removed.iter().any(|(_, rp, _)| rp == ap)
        });
        if let Some(i) = partner {
            used_added[i] = true;
            let a = &added[i];
            out.changes.push(change(
                ChangeKind::Renamed,
                &a.2,
                a.1.join(sep),
                Some(d.name.clone()),
                Some(d),
                Some(&a.2),
            ));
            continue;
        }
        whole.push((*hi, false, d.line));
        if provided_again.contains(&d.name) {
            continue;
        }
        out.changes.push(change(ChangeKind::Removed, d, path.join(sep), None, Some(d), None));
    }
    for (i, (hi, path, d)) in added.iter().enumerate() {
        if used_added[i] {
            continue;
        }
        whole.push((*hi, true, d.line));
        // An added definition is a changed location of its own (a method added after the one a
        // hunk header names is not that method).
        if !matches!(d.kind, DefKind::Field | DefKind::Constant) && !out.touched.contains(path) {
            out.touched.push(path.clone());
        }
        if !out.changes.iter().any(|c| c.qualified == path.join(sep)) {
            out.changes.push(change(ChangeKind::Added, d, path.join(sep), None, None, Some(d)));
        }
    }
    whole
}

/// Each changed line, located by the definition around it (or the hunk's scope) into
/// `out.touched`; lines of definitions that came whole are located by them, not here.
fn locate_lines(lang: Lang, read: &[HunkRead], whole: &[(usize, bool, usize)], out: &mut FileChanges) {
    for (hi, (scope, old, new, tail)) in read.iter().enumerate() {
        for (is_new, side) in [(false, old), (true, new)] {
            let tail_lines = if is_new { tail.lines.1 } else { tail.lines.0 };
            for line in (1..=side.changed.len()).filter(|&l| side.changed_line(l)) {
                // A line of an added definition is located by it (above), not by its scope.
                let in_added = is_new
                    && side.symbols.definitions.iter().any(|d| {
                        d.line <= line
                            && line <= d.end_line
                            && whole.contains(&(hi, true, d.line))
                            && !matches!(d.kind, DefKind::Field | DefKind::Constant)
                    });
                if in_added {
                    continue;
                }
                let around = side
                    .symbols
                    .definitions
                    .iter()
                    .filter(|d| d.line <= line && line <= d.end_line)
                    .filter(|d| !matches!(d.kind, DefKind::Field | DefKind::Constant))
                    .filter(|d| !whole.contains(&(hi, is_new, d.line)))
                    .max_by_key(|d| d.line);
                let path = match around {
                    Some(d) => path_of(lang, scope, d),
                    None if line <= tail_lines => tail.scope.clone(),
                    None => scope.clone(),
                };
                if !path.is_empty() && !out.touched.contains(&path) {
                    out.touched.push(path);
                }
            }
        }
    }
}

fn change(
    kind: ChangeKind,
    d: &Definition,
    qualified: String,
    renamed_from: Option<String>,
    old: Option<&Definition>,
    new: Option<&Definition>,
) -> Change {
    Change {
        kind,
        def: d.kind,
        name: d.name.clone(),
        qualified,
        renamed_from,
        old_signature: old.map(|o| o.signature.clone()),
        new_signature: new.map(|n| n.signature.clone()),
        old_params: old.and_then(|o| o.params.clone()),
        new_params: new.and_then(|n| n.params.clone()),
        prototype: d.prototype,
    }
}
