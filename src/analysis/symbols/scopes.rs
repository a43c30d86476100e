//! Where a Python diff's changed lines sit, read from the file's own lines: a hunk shows only a
//! few lines of context, and its header names whatever definition git's function context found
//! above it (with the default driver, the last unindented line: `def make_manager(...)` for a
//! change deep in a method of a class defined inside it). The lines the run showed of the file
//! before any edit of it (numbered views) and the hunks' own old sides are the base file at
//! known line numbers; walking up from a changed line through lines of smaller indentation gives
//! the definitions around it, innermost last (`["make_manager", "RelatedManager", "get"]`).
//!
//! A hunk is resolved only when every changed line's walk reaches the module level through
//! known lines, and it changes no definition line of its own (a definition added, removed or
//! re-signed is read from the hunk itself).

use crate::analysis::diff;
use std::collections::BTreeMap;

/// The base file's lines by number (1-based), as far as they are known.
pub type KnownLines = BTreeMap<usize, String>;

/// Adds a diff's old sides (context and removed lines) to the known base lines.
pub fn learn(file_diff: &str, known: &mut KnownLines) {
    for h in hunks(file_diff) {
        for (n, text) in h.old {
            known.entry(n).or_insert(text);
        }
    }
}

/// Each hunk of a file's diff as a diff of its own (`@@` line and body), in order; hunks
/// whose header does not place them left out.
pub fn hunk_texts(file_diff: &str) -> Vec<String> {
    diff::hunks(file_diff).iter().filter(|h| h.placed()).map(diff::Hunk::text).collect()
}

/// Per hunk of one Python file's diff: the scope paths of its changed lines, or `None` when the
/// known lines do not reach them or the hunk changes a definition line. Adds the hunks' old
/// sides to `known`.
pub fn python_scopes(file_diff: &str, known: &mut KnownLines) -> Vec<Option<Vec<Vec<String>>>> {
    learn(file_diff, known);
    hunks(file_diff)
        .iter()
        .map(|h| {
            if h.changes_def {
                return None;
            }
            let mut paths: Vec<Vec<String>> = Vec::new();
            for (at, indent) in &h.targets {
                let path = enclosing(known, *at, *indent)?;
                if !path.is_empty() && !paths.contains(&path) {
                    paths.push(path);
                }
            }
            Some(paths)
        })
        .collect()
}

/// One hunk: its old side's lines by number, where its changes are (the line above which a
/// walk starts, and the indentation of the changed line), and whether it changes a definition
/// line.
struct Hunk {
    old: Vec<(usize, String)>,
    targets: Vec<(usize, usize)>,
    changes_def: bool,
}

fn hunks(file_diff: &str) -> Vec<Hunk> {
    let mut out = Vec::new();
    for h in diff::hunks(file_diff).iter().filter(|h| h.placed()) {
        let mut hunk = Hunk { old: Vec::new(), targets: Vec::new(), changes_def: false };
        // The old line the next line sits before (an added line sits after the old line before it).
        let mut at = h.counts.map_or(1, |(start, ..)| start);
        for l in &h.lines {
            if let Some(n) = l.old_no {
                at = n;
                hunk.old.push((n, l.text.to_string()));
            }
            if l.mark != ' ' {
                hunk.changes_def |= definition(l.text).is_some();
                if !l.text.trim().is_empty() {
                    // A changed line: the walk starts above it, at its own indentation.
                    hunk.targets.push((at, indentation(l.text)));
                }
            }
            if l.old_no.is_some() {
                at += 1;
            }
        }
        out.push(hunk);
    }
    out
}

/// The definitions around a line at `indent` placed just above old line `at`, outermost first;
/// `None` when a line the walk needs is not known.
fn enclosing(known: &KnownLines, at: usize, indent: usize) -> Option<Vec<String>> {
    let mut path = Vec::new();
    let mut indent = indent;
    let mut n = at;
    while indent > 0 {
        if n <= 1 {
            // The file's first line reached inside an indented block: not Python as we read it.
            return None;
        }
        n -= 1;
        let text = known.get(&n)?;
        let t = text.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let i = indentation(text);
        if i >= indent {
            continue;
        }
        if let Some(name) = definition(text) {
            path.push(name);
        }
        indent = i;
    }
    path.reverse();
    Some(path)
}

/// The name a `def`, `async def` or `class` line defines.
fn definition(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix("async ").map(str::trim_start).unwrap_or(t);
    let rest = rest.strip_prefix("def ").or_else(|| rest.strip_prefix("class "))?;
    let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// Leading whitespace, a tab counting as eight columns.
fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ' || *c == '\t').map(|c| if c == '\t' { 8 } else { 1 }).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines 700-730 of a Django-shaped file: a manager class defined inside a factory function.
    fn base() -> KnownLines {
        let text = "def create_reverse_many_to_one_manager(superclass, rel):\n    class RelatedManager(superclass):\n        def __init__(self, instance):\n            self.instance = instance\n\n        def get_prefetch_queryset(self, instances, queryset=None):\n            if queryset is None:\n                queryset = super().get_queryset()\n\n            query = {\"%s__in\" % self.field.name: instances}\n            queryset = queryset.filter(**query)\n            return queryset\n";
        text.lines().enumerate().map(|(i, l)| (700 + i, l.to_string())).collect()
    }

    #[test]
    fn a_change_deep_in_a_method_is_scoped_by_the_lines_above_it_not_the_header() {
        // Git's default driver names the unindented factory in the header.
        let diff = "@@ -709,3 +709,4 @@ def create_reverse_many_to_one_manager(superclass, rel):\n             query = {\"%s__in\" % self.field.name: instances}\n-            queryset = queryset.filter(**query)\n+            if not queryset.query.is_sliced:\n+                queryset = queryset.filter(**query)\n             return queryset\n";
        let mut known = base();
        let got = python_scopes(diff, &mut known);
        let want = vec![vec![
            "create_reverse_many_to_one_manager".to_string(),
            "RelatedManager".to_string(),
            "get_prefetch_queryset".to_string(),
        ]];
        assert_eq!(got, vec![Some(want)]);
    }

    #[test]
    fn a_gap_in_the_known_lines_leaves_the_hunk_unresolved() {
        let diff = "@@ -709,3 +709,3 @@ def create_reverse_many_to_one_manager(superclass, rel):\n             query = {}\n-            queryset = queryset.filter(**query)\n+            queryset = queryset.filter(**query).distinct()\n             return queryset\n";
        let mut known: KnownLines = base().into_iter().filter(|(n, _)| *n != 705).collect();
        assert_eq!(python_scopes(diff, &mut known), vec![None]);
    }

    #[test]
    fn a_hunk_adding_a_definition_is_left_to_the_hunk_reader() {
        let diff = "@@ -703,1 +703,4 @@\n             self.instance = instance\n+\n+        def clear(self):\n+            pass\n";
        assert_eq!(python_scopes(diff, &mut base()), vec![None]);
    }

    #[test]
    fn a_module_level_change_has_no_scope() {
        let diff = "@@ -1,2 +1,2 @@\n-X = 1\n+X = 2\n Y = 3\n";
        assert_eq!(python_scopes(diff, &mut KnownLines::new()), vec![Some(vec![])]);
    }

    /// Issue 43: a removed line whose text starts `-- ` was passed over as a file header, so
    /// every later old line was numbered one short.
    #[test]
    fn a_removed_line_reading_like_a_header_keeps_the_old_lines_numbered() {
        let diff = "@@ -5,3 +5,2 @@\n--- a rule\n x = 1\n y = 2\n";
        let mut known = KnownLines::new();
        learn(diff, &mut known);
        let lines: Vec<(usize, &str)> = known.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_eq!(lines, [(5, "-- a rule"), (6, "x = 1"), (7, "y = 2")]);
        // A hunk the reconstruction could not place adds nothing.
        learn("@@ -?,1 +?,1 @@ not placed\n-z = 3\n+z = 4\n", &mut known);
        assert_eq!(known.len(), 3);
    }
}
