//! Why a gated edit's undefined names were undefined (failure-modes.md: required temporary
//! errors need the undefined names of a legitimate intermediate state). A name the edit renamed
//! (its old lines define it, its new lines define another name in its place: a definition or
//! an import renamed before its uses) or a name the edit starts to use that nothing defines yet
//! (an import of what another file will define) is *pending*: the change passes through that
//! state. A name whose definition the edit removed with nothing in its place, or that the edit
//! never named (its range swallowed the lines around), is *overwritten*: the agent's own edit
//! broke the file, which is no temporary error of the change.

use super::Rejection;

/// The names a linter's refusal calls undefined (`- F821 undefined name 'fetch_rows'`).
pub(super) fn undefined_names(observation: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in observation.lines() {
        let Some(at) = line.find("undefined name ") else { continue };
        let rest = &line[at + "undefined name ".len()..];
        let name: String = rest
            .trim_start_matches(['\'', '"', '`'])
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The names a Python line defines: `def x`, `class x`, `x = ...` (and `x, y = ...`), `import x`,
/// `from m import x, y as z`.
fn defines(line: &str) -> Vec<String> {
    let t = line.trim();
    let word = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for k in ["def ", "async def ", "class "] {
        if let Some(rest) = t.strip_prefix(k) {
            return vec![word(rest)].into_iter().filter(|w| !w.is_empty()).collect();
        }
    }
    if t.starts_with("import ") || t.starts_with("from ") {
        let names = t.split_once(" import ").map(|(_, n)| n).or_else(|| t.strip_prefix("import ")).unwrap_or("");
        return names
            .trim_matches(['(', ')'])
            .split(',')
            .map(|n| n.trim().rsplit(" as ").next().unwrap_or("").trim())
            .map(|n| word(n.rsplit('.').next().unwrap_or(n)))
            .filter(|n| !n.is_empty())
            .collect();
    }
    match t.split_once('=') {
        Some((lhs, rhs)) if !rhs.starts_with('=') && !lhs.ends_with(['!', '<', '>', '=']) && !lhs.contains('(') => lhs
            .split(',')
            .map(|n| word(n.trim()))
            .filter(|n| !n.is_empty() && n.chars().next().is_some_and(|c| !c.is_ascii_digit()))
            .collect(),
        _ => Vec::new(),
    }
}

fn names_in(lines: &[&str], name: &str) -> bool {
    lines.iter().any(|l| super::propagation::contains_word(l, name))
}

/// Sort a refused edit's undefined names into pending and overwritten, from its diff.
pub(super) fn read(r: &mut Rejection, observation: &str, diff: Option<&str>) {
    let names = undefined_names(observation);
    let Some(diff) = diff else { return };
    let changed = crate::analysis::diff::changed_lines(diff);
    let side = |mark: char| -> Vec<&str> { changed.iter().filter(|l| l.mark == mark).map(|l| l.text).collect() };
    let (old, new) = (side('-'), side('+'));
    let old_defs: Vec<String> = old.iter().flat_map(|l| defines(l)).collect();
    let new_defs: Vec<String> = new.iter().flat_map(|l| defines(l)).collect();
    for name in names {
        let renamed = old_defs.contains(&name) && new_defs.iter().any(|d| d != &name && !old_defs.contains(d));
        let starts_using = !old_defs.contains(&name) && names_in(&new, &name) && !names_in(&old, &name);
        if renamed || starts_using {
            r.pending.push(name);
        } else {
            r.overwritten.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::signals::After;

    fn rejection() -> Rejection {
        Rejection {
            step: 3,
            path: "a.py".into(),
            codes: vec!["F821".into()],
            by: "linter".into(),
            after: After::Abandoned,
            pending: vec![],
            overwritten: vec![],
        }
    }

    #[test]
    fn a_rename_in_passing_is_pending_and_a_swallowed_definition_overwritten() {
        let refusal = "ERRORS:\n- F821 undefined name 'fetch_rows'\n- F821 undefined name 'fetch_rows'\n";
        assert_eq!(undefined_names(refusal), ["fetch_rows"]);
        let mut r = rejection();
        read(
            &mut r,
            refusal,
            Some("@@ -11 +11 @@\n-def fetch_rows(path, schema=None):\n+def load_rows(path, schema=None):\n"),
        );
        assert_eq!((r.pending.as_slice(), r.overwritten.as_slice()), (&["fetch_rows".to_string()][..], &[][..]));
        let mut r = rejection();
        read(&mut r, refusal, Some("@@ -4 +4 @@\n-from .reader import fetch_rows\n+from .reader import load_rows\n"));
        assert_eq!(r.pending, ["fetch_rows"], "an import renamed before its uses");
        // The edit's range swallowed the line that defined `total`: the agent's own breakage.
        let swallowed = "- F821 undefined name 'total'";
        let mut r = rejection();
        read(
            &mut r,
            swallowed,
            Some("@@ -5,3 +5,2 @@\n-    total = 0\n-    for x in xs:\n+    for x in sorted(xs):\n"),
        );
        assert_eq!((r.pending.len(), r.overwritten.as_slice()), (0, &["total".to_string()][..]));
        // A name the edit starts to use, that nothing defines yet (another file will).
        let mut r = rejection();
        read(
            &mut r,
            "- F821 undefined name 'load_rows'",
            Some("@@ -8 +8 @@\n-    rows = read(path)\n+    rows = load_rows(path)\n"),
        );
        assert_eq!(r.pending, ["load_rows"]);
    }

    #[test]
    fn what_a_line_defines() {
        assert_eq!(defines("from .reader import a, b as c"), ["a", "c"]);
        assert_eq!(defines("import os.path"), ["path"]);
        assert_eq!(defines("x, y = 1, 2"), ["x", "y"]);
        assert!(defines("if a == b:").is_empty() && defines("f(x=1)").is_empty());
    }

    /// Issue 43: the old side's line `--load_rows(p)` (`---load_rows(p)` in the diff) is read:
    /// the name was used before the edit, so the edit did not start to use it.
    #[test]
    fn a_removed_line_starting_with_two_dashes_is_on_the_old_side() {
        let mut r = rejection();
        let diff = "@@ -1,2 +1,2 @@\n-x = 1\n---load_rows(p)\n+x = 2\n+y = load_rows(p)\n";
        read(&mut r, "- F821 undefined name 'load_rows'", Some(diff));
        assert_eq!((r.pending.len(), r.overwritten.as_slice()), (0, &["load_rows".to_string()][..]));
    }
}
