//! Locations finer than a file: the functions and classes a gold patch's hunks sit in, against
//! those the agent's diff changed and the run showed; and gold hunks that are benchmark plumbing
//! (a test added to a skip list), no place the fix had to be.

use super::FunctionLocation;
use super::views::{Shown, ViewKind};
use crate::analysis::reconstruct::patch::{Hunk, parse};
use crate::analysis::symbols::scopes::{self, KnownLines};
use crate::analysis::symbols::{self, ChangeKind, Lang};

/// Where one gold file's hunks sit (`["QuerySet", "filter"]`), whether the agent's changes to
/// the file reached each (the same definition, or one inside the other: a hunk header may name
/// only the class; or, both diffs against the base, a changed line of the agent's within the
/// gold hunk's lines with no definition's head between the two changes; unknown when the
/// agent's diff of the file is), the first step that showed its definition, and the first
/// failing FAIL_TO_PASS test named for it. `agent_base_diff` is the agent's diff of the file
/// when it is against the base (a submission), else empty.
pub(super) fn gold_functions(
    path: &str,
    gold_diff: &str,
    agent_touched: &[Vec<String>],
    agent_base_diff: &str,
    known: &mut KnownLines,
    shown: &[Shown<'_>],
    failing_tests: &[&str],
) -> Vec<FunctionLocation> {
    let Some(lang) = Lang::of_path(path) else { return Vec::new() };
    let sep = lang.separator();
    let gold = symbols::changes(lang, gold_diff);
    let views = view_texts(path, shown);
    let agent_hunks: Vec<Hunk> = parse(agent_base_diff).into_iter().flat_map(|f| f.hunks).collect();
    // A definition the gold patch adds did not exist for the agent to find: adding a helper is a
    // design, not a location; the places the gold changes are.
    let added: Vec<&str> =
        gold.changes.iter().filter(|c| c.kind == ChangeKind::Added).map(|c| c.qualified.as_str()).collect();
    // Each gold location, whether an agent's change lies within one of its hunks, and what its
    // hunks' changed lines call.
    let mut places: Vec<(Vec<String>, bool, Vec<String>)> = Vec::new();
    for hunk in scopes::hunk_texts(gold_diff) {
        let parsed = parse(&hunk).into_iter().flat_map(|f| f.hunks).next();
        let near = parsed.as_ref().is_some_and(|g| agent_hunks.iter().any(|a| same_place(lang, g, a)));
        let calls = parsed.map(|g| changed_calls(&g)).unwrap_or_default();
        for p in touched(lang, &hunk, Some(known), &views) {
            if added.contains(&p.join(sep).as_str()) {
                continue;
            }
            match places.iter_mut().find(|(q, ..)| *q == p) {
                Some(place) => {
                    place.1 |= near;
                    let more: Vec<String> = calls.iter().filter(|c| !place.2.contains(c)).cloned().collect();
                    place.2.extend(more);
                }
                None => places.push((p, near, calls.clone())),
            }
        }
    }
    places
        .into_iter()
        .map(|(gold, near, calls)| {
            let edited = (!agent_touched.is_empty()).then(|| near || agent_touched.iter().any(|a| reaches(a, &gold)));
            let name = gold.last().cloned().unwrap_or_default();
            let failing_test = failing_tests.iter().find(|t| test_names(t, &name)).map(|t| t.to_string());
            let seen = first_shown(lang, path, &name, shown);
            FunctionLocation { name: gold.join(sep), seen, edited, failing_test, calls }
        })
        .collect()
}

/// At most this many names called per gold location.
const MAX_CALLS: usize = 24;

/// The names a hunk's changed lines call (`name(`), definitions' own heads (`def name(`) aside.
pub(super) fn changed_calls(h: &Hunk) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, line) in h.lines.iter().filter(|(m, _)| *m != ' ') {
        for name in calls_in(line) {
            if out.len() < MAX_CALLS && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Words that open a definition: the name after one is defined, not called.
const DEFINES: &[&str] = &["def", "class", "fn", "func", "function", "struct", "interface", "new"];

/// The names a line calls: an identifier (3 characters or more) right before `(` that no
/// defining word precedes.
pub(super) fn calls_in(line: &str) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut out = Vec::new();
    let mut prev_word = "";
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if !ident(c) || c.is_ascii_digit() {
            if !c.is_whitespace() {
                prev_word = "";
            }
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && ident(chars[j].1) {
            j += 1;
        }
        let end = chars.get(j).map_or(line.len(), |b| b.0);
        let word = &line[start..end];
        if chars.get(j).is_some_and(|b| b.1 == '(') && !DEFINES.contains(&prev_word) && word.len() >= 3 {
            out.push(word.to_string());
        }
        prev_word = word;
        i = j;
    }
    out
}

/// The base-file line numbers of a hunk's changed lines (an added line at the old line above
/// it), with each old-side line's text by number.
fn changed_at(h: &Hunk) -> (Vec<usize>, Vec<(usize, &str)>) {
    let mut at = h.old_start;
    let mut changed = Vec::new();
    let mut old = Vec::new();
    for (mark, text) in &h.lines {
        match mark {
            '+' => changed.push(at.saturating_sub(1).max(h.old_start)),
            '-' => {
                changed.push(at);
                old.push((at, text.as_str()));
                at += 1;
            }
            _ => {
                old.push((at, text.as_str()));
                at += 1;
            }
        }
    }
    (changed, old)
}

/// Whether an agent's hunk changes the base file within a gold hunk's lines, with no
/// definition's head (at an indentation at most the changed lines') between the nearest two
/// changes: the same place, whatever the two hunk headers name. The two hunks are placed by the
/// old lines they share (a gold patch may have been made on a base a few lines off the run's):
/// hunks that share none are not in the same place.
fn same_place(lang: Lang, gold: &Hunk, agent: &Hunk) -> bool {
    let (g_changed, g_old) = changed_at(gold);
    let (a_changed, a_old) = changed_at(agent);
    // The offset from the gold's line numbers to the agent's, by the old lines both show.
    let mut offsets: Vec<i64> = Vec::new();
    for (n, t) in g_old.iter().filter(|(_, t)| t.trim().len() >= 8) {
        offsets.extend(a_old.iter().filter(|(_, u)| u.trim() == t.trim()).map(|(m, _)| *m as i64 - *n as i64));
    }
    offsets.sort_unstable();
    let Some((delta, count)) = offsets.chunk_by(|a, b| a == b).map(|c| (c[0], c.len())).max_by_key(|&(_, n)| n) else {
        return false;
    };
    if count < 2 {
        return false;
    }
    let shift = |n: usize| (n as i64 + delta).max(0) as usize;
    let start = shift(gold.old_start);
    let span = start..start + gold.old_count.max(1);
    let Some(a) = a_changed.iter().copied().find(|l| span.contains(l)) else { return false };
    let Some(g) = g_changed.iter().map(|&l| shift(l)).min_by_key(|l| l.abs_diff(a)) else { return false };
    let text = |n: usize| {
        let gold_side = g_old.iter().find(|(m, _)| shift(*m) == n).map(|(_, t)| *t);
        gold_side.or_else(|| a_old.iter().find(|(m, _)| *m == n).map(|(_, t)| *t))
    };
    let indent = |t: &str| t.len() - t.trim_start().len();
    let depth = text(a).or_else(|| text(g)).map_or(0, indent);
    let (lo, hi) = (a.min(g), a.max(g));
    (lo + 1..=hi).all(|n| {
        text(n).is_some_and(|t| {
            t.trim().is_empty() || indent(t) > depth || symbols::extract_line(lang, t).definitions.is_empty()
        })
    })
}

/// The definitions a file's diff changed, per hunk: the innermost definition that holds each
/// changed line. A Python hunk over the base file's known lines when they reach it (`known`:
/// the diff is against the base); else placed in a view of the file that shows its old side
/// (`views`); else as the hunk itself and its header show (a header names whatever definition
/// git's function context found above the hunk: an outer function, or a nested helper that
/// ended before the change).
pub(super) fn touched(
    lang: Lang,
    file_diff: &str,
    known: Option<&mut KnownLines>,
    views: &[String],
) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut add = |paths: Vec<Vec<String>>| {
        for p in paths {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    };
    let hunks = scopes::hunk_texts(file_diff);
    let by_lines = match known {
        Some(known) if lang == Lang::Python => scopes::python_scopes(file_diff, known),
        _ => vec![None; hunks.len()],
    };
    for (hunk, paths) in hunks.iter().zip(by_lines) {
        add(paths.or_else(|| in_views(lang, hunk, views)).unwrap_or_else(|| symbols::changes(lang, hunk).touched));
    }
    if hunks.is_empty() {
        add(symbols::changes(lang, file_diff).touched);
    }
    out
}

/// The texts of the run's views of `path` (one file each), line numbers taken off.
pub(super) fn view_texts(path: &str, shown: &[Shown<'_>]) -> Vec<String> {
    shown
        .iter()
        .filter(|s| matches!(s.views.as_slice(), [v] if v.path == path))
        .map(|s| symbols::strip_view(s.observation).into_owned())
        .collect()
}

/// Old-side lines a hunk must show for its place in a view to count: fewer could be anywhere.
const MIN_PLACED: usize = 3;

/// The innermost definitions around one hunk's changed lines, read from a view that holds its
/// old side (context and removed lines, in order, once): the view parsed, each changed line
/// placed in it (an added line where it is inserted, after the old line above it). `None` when
/// no view holds the hunk and the definitions around it. A changed line at the module level
/// adds no definition.
fn in_views(lang: Lang, hunk: &str, views: &[String]) -> Option<Vec<Vec<String>>> {
    let h = parse(hunk).into_iter().next()?.hunks.into_iter().next()?;
    let mut old: Vec<&str> = Vec::new();
    // Each changed line's place among the old lines, and whether it is indented (inside a
    // definition, or a block at least).
    let mut targets: Vec<(usize, bool)> = Vec::new();
    let indented = |t: &str| t.starts_with([' ', '\t']);
    for (mark, text) in &h.lines {
        match mark {
            '-' => {
                targets.push((old.len(), indented(text)));
                old.push(text);
            }
            '+' if !text.trim().is_empty() => targets.push((old.len().saturating_sub(1), indented(text))),
            '+' => {}
            _ => old.push(text),
        }
    }
    if old.iter().filter(|l| !l.trim().is_empty()).count() < MIN_PLACED || targets.is_empty() {
        return None;
    }
    for view in views {
        let lines: Vec<&str> = view.lines().collect();
        let fits = |k: usize| {
            old.iter().enumerate().all(|(i, o)| lines.get(k + i).is_some_and(|l| l.trim_end() == o.trim_end()))
        };
        let mut at = (0..lines.len().saturating_sub(old.len() - 1)).filter(|&k| fits(k));
        let (Some(k), None) = (at.next(), at.next()) else { continue };
        let defs = symbols::extract(lang, view).definitions;
        let mut paths: Vec<Vec<String>> = Vec::new();
        // An indented line outside every definition the view shows: the view starts inside the
        // definition, below its head, and cannot name it.
        let mut placed = true;
        for &(t, indented) in &targets {
            let line = k + t + 1;
            let inner =
                defs.iter().filter(|d| !d.prototype && d.line <= line && line <= d.end_line).max_by_key(|d| d.line);
            match inner {
                Some(d) => {
                    let p: Vec<String> = d.path(lang).into_iter().map(str::to_string).collect();
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
                None if indented => placed = false,
                None => {}
            }
        }
        if placed {
            return Some(paths);
        }
    }
    None
}

/// The base file's lines the run showed before it first edited `path` (numbered views; a view
/// of several files at once is left out), by line number.
pub(super) fn base_lines(path: &str, shown: &[Shown<'_>], first_edit: Option<usize>) -> KnownLines {
    let mut known = KnownLines::new();
    let before = shown.iter().filter(|s| first_edit.is_none_or(|e| s.step < e));
    for s in before.filter(|s| matches!(s.views.as_slice(), [v] if v.path == path && v.kind == ViewKind::Open)) {
        if let Some(v) = symbols::numbered_view(s.observation) {
            for (n, text) in v.lines.iter().zip(v.text.lines()) {
                known.entry(*n).or_insert_with(|| text.to_string());
            }
        }
    }
    known
}

/// Whether an agent's changed location reaches a gold one: the same definition, one inside the
/// other (a hunk header may name only the class), or the same definition named without its
/// outer scope on one side (a hunk whose header is a sibling, not a scope, leaves it unknown).
fn reaches(agent: &[String], gold: &[String]) -> bool {
    agent.starts_with(gold) || gold.starts_with(agent) || agent.ends_with(gold) || gold.ends_with(agent)
}

/// Whether a test's own name (`tests/test_utils.py::test_prepend_scheme_if_needed[...]`,
/// `test_m2m_forward (prefetch_related.tests.PrefetchLimitTests)`, `FooTest.testParseObject`)
/// is named for the function `name`: the function's words, in order and whole, among the test
/// name's. A name of one short word (`run`, `__eq__`) says too little to count.
fn test_names(test: &str, name: &str) -> bool {
    let func = words(name);
    let long_enough = func.len() >= 2 || func.first().is_some_and(|w| w.len() >= 8);
    if !long_enough {
        return false;
    }
    let own = test.split(" (").next().unwrap_or(test);
    let own = own.split('[').next().unwrap_or(own);
    let own = own.rsplit("::").next().unwrap_or(own);
    let own = own.rsplit(['.', '/', '#']).next().unwrap_or(own);
    words(own).windows(func.len()).any(|w| w == func.as_slice())
}

/// The lower-case words of an identifier, snake_case or camelCase (`parseObject` → parse,
/// object).
fn words(ident: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in ident.chars() {
        if !c.is_alphanumeric() {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

/// The first step that showed the definition of `name` in `path`: a view of the file holding
/// it, or a search-output line of the file defining it.
fn first_shown(lang: Lang, path: &str, name: &str, shown: &[Shown<'_>]) -> Option<usize> {
    shown.iter().find_map(|s| {
        let viewed = s.views.iter().any(|v| v.path == path)
            && s.observation.contains(name)
            && symbols::extract(lang, &symbols::strip_view(s.observation)).definitions.iter().any(|d| d.name == name);
        let searched = s.hits.iter().any(|(p, t)| {
            p == path && t.contains(name) && symbols::extract_line(lang, t).definitions.iter().any(|d| d.name == name)
        });
        (viewed || searched).then_some(s.step)
    })
}

/// A gold file change that only adds or removes test names in a collection (a database
/// backend's set of tests to skip): benchmark plumbing, periphery at most.
pub(super) fn is_plumbing(file_diff: &str) -> bool {
    let changed: Vec<&str> = crate::analysis::diff::changed_lines(file_diff)
        .into_iter()
        .map(|l| l.text.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut names_a_test = false;
    for line in &changed {
        let mut rest = *line;
        while !rest.is_empty() {
            let c = rest.chars().next().unwrap_or(' ');
            if c == '"' || c == '\'' {
                let Some(end) = rest[1..].find(c) else { return false };
                let body = &rest[1..1 + end];
                names_a_test |= body.to_ascii_lowercase().contains("test");
                rest = &rest[end + 2..];
            } else if ",:{}()[] \t".contains(c) {
                rest = &rest[c.len_utf8()..];
            } else {
                return false;
            }
        }
    }
    !changed.is_empty() && names_a_test && changed.iter().any(|l| l.contains(['"', '\'']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_without_its_class_reaches_the_same_method_in_a_class() {
        let path = |s: &str| s.split('.').map(str::to_string).collect::<Vec<_>>();
        assert!(reaches(&path("PyXrefMixin.make_xrefs"), &path("make_xrefs")));
        assert!(reaches(&path("make_xrefs"), &path("PyXrefMixin.make_xrefs")));
        assert!(reaches(&path("QuerySet"), &path("QuerySet.filter")));
        assert!(!reaches(&path("QuerySet.exclude"), &path("QuerySet.filter")));
        assert!(!reaches(&path("make_xref"), &path("make_xrefs")));
    }

    /// A view of the file the hunks sit in: a method holding a nested helper that ends before
    /// the code after it.
    const VIEW: &str = "class Reader:\n    def read(self, data):\n        def strip(x):\n            return x.strip()\n\n        parts = data.split(',')\n        parts = [strip(p) for p in parts]\n        return parts\n\n    def close(self):\n        self.done = True\n";

    #[test]
    fn a_change_is_placed_in_the_innermost_definition_holding_it_not_the_hunk_headers_name() {
        // git's Python driver names the nested helper above the change; the change is in `read`.
        let gold = "@@ -5,4 +5,4 @@ def strip(x):\n \n-        parts = data.split(',')\n+        parts = data.split(';')\n         parts = [strip(p) for p in parts]\n         return parts\n";
        let views = vec![VIEW.to_string()];
        assert_eq!(in_views(Lang::Python, gold, &views), Some(vec![vec!["Reader".to_string(), "read".to_string()]]));
        // A change inside the helper is the helper's.
        let inner = "@@ -3,4 +3,4 @@ def read(self, data):\n         def strip(x):\n-            return x.strip()\n+            return x.strip().lower()\n \n         parts = data.split(',')\n";
        let helper = ["Reader", "read", "strip"].map(str::to_string).to_vec();
        assert_eq!(in_views(Lang::Python, inner, &views), Some(vec![helper]));
        // A view that starts below the definition's head cannot name it.
        let partial = vec![VIEW.lines().skip(4).collect::<Vec<_>>().join("\n")];
        assert_eq!(in_views(Lang::Python, gold, &partial), None);
    }

    fn hunk(text: &str) -> Hunk {
        parse(text).into_iter().flat_map(|f| f.hunks).next().unwrap_or_else(|| panic!("a hunk: {text}"))
    }

    #[test]
    fn hunks_that_change_one_block_are_the_same_place_whatever_their_headers_and_bases() {
        // The gold's base is 9 lines off the run's; the two share their old lines.
        let gold = hunk(
            "@@ -105,4 +105,5 @@ def unparse(node):\n             return result\n         elif isinstance(node, ast.Tuple):\n-            result = []\n+            if not node.elts:\n+                return []\n+            result = []\n             for elem in node.elts:\n",
        );
        let agent = hunk(
            "@@ -114,4 +114,6 @@ def _parse_annotation(annotation):\n             return result\n         elif isinstance(node, ast.Tuple):\n+            if not node.elts:\n+                return [()]\n             result = []\n             for elem in node.elts:\n",
        );
        assert!(same_place(Lang::Python, &gold, &agent));
        // A definition's head between the two changes: another place.
        let gold = hunk(
            "@@ -10,4 +10,4 @@ class A:\n     def f(self):\n-        return 1\n+        return 2\n     def g(self):\n         return 3\n",
        );
        let agent = hunk(
            "@@ -10,5 +10,5 @@ class A:\n     def f(self):\n         return 1\n     def g(self):\n-        return 3\n+        return 4\n",
        );
        assert!(!same_place(Lang::Python, &gold, &agent));
        // Hunks that share no line are not placed together.
        let far = hunk("@@ -300,2 +300,2 @@\n-    x = compute_something_else()\n+    x = 2\n     return value_of_it\n");
        assert!(!same_place(Lang::Python, &gold, &far));
    }

    #[test]
    fn a_test_named_for_a_function_names_it_and_a_short_or_partial_name_does_not() {
        let pytest = "tests/test_utils.py::test_prepend_scheme_if_needed[http://user@example.com/path?query-http://user@example.com/path?query]";
        assert!(test_names(pytest, "prepend_scheme_if_needed"));
        assert!(!test_names(pytest, "get_auth_from_url"));
        assert!(!test_names(pytest, "scheme_if_needed_now"), "every word, in order");
        let django = "test_m2m_forward (prefetch_related.tests.PrefetchLimitTests)";
        assert!(!test_names(django, "get_prefetch_queryset"));
        assert!(test_names("test_get_prefetch_queryset_sliced (x.tests.T)", "get_prefetch_queryset"));
        assert!(test_names("com.alibaba.fastjson2.JSONTest.testParseObjectNull", "parseObject"));
        assert!(!test_names("tests/test_x.py::test_run_all", "run"), "one short word says too little");
        assert!(!test_names("tests/test_x.py::test_eq", "__eq__"));
        assert!(
            !test_names("tests/test_prepend_scheme_if_needed.py::test_other", "prepend_scheme_if_needed"),
            "the test's own name, not its file"
        );
    }

    #[test]
    fn a_skip_list_entry_is_plumbing_and_code_is_not() {
        let skip = "@@ -80,6 +80,9 @@ class DatabaseFeatures(BaseDatabaseFeatures):\n             \"model_fields.test_jsonfield.TestQuerying.test_a\",\n+        \"Oracle doesn't support this.\": {\n+            \"model_fields.test_jsonfield.TestQuerying.test_usage_in_subquery\",\n+        },\n";
        assert!(is_plumbing(skip));
        assert!(!is_plumbing("@@ -1 +1 @@\n-    supports_json = False\n+    supports_json = True\n"));
        assert!(!is_plumbing("@@ -1 +1 @@\n-msg = 'a'\n+msg = 'b'\n"), "strings that name no test");
    }

    /// Issue 43: a removed SQL comment (`--- note` in the diff) is a change, and not a test's name.
    #[test]
    fn a_removed_comment_starting_with_two_dashes_is_a_change() {
        let diff = "@@ -1 +1 @@\n--- drop support for x\n+    \"tests.test_b\",\n";
        assert!(!is_plumbing(diff));
    }
}
