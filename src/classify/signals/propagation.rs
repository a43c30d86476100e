//! Signals of propagation: identifiers the agent's own diff removed or renamed that files it
//! did not change still use, the gold patch's core against its periphery, and failing tests
//! that name unchanged files.

use super::edits::EditEvent;
use super::paths::{FileKind, is_build_copy, is_changelog, mentioned_files, names_file, repo_relative};
use super::views::{Shown, ViewKind};
use super::{FileTable, Periphery, PeripheryFile, Sighting, StaleIdentifier, TestMention};
use crate::analysis::edits::split_patch;
use crate::store::read::RunDetail;

/// Identifiers shorter than this, or in [`COMMON`], are too common to call stale.
const MIN_IDENT: usize = 4;
const COMMON: &[&str] = &["main", "test", "self", "setup", "init", "run", "get", "set", "call", "args", "kwargs"];
/// At most this many sightings are kept per identifier.
const MAX_SIGHTINGS: usize = 20;

/// A definition line's name: `def name(`, `async def name(`, `class Name`, `function name(`,
/// `fn name(`, `func name(`.
fn defined_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = ["def ", "async def ", "class ", "function ", "fn ", "pub fn ", "func "]
        .iter()
        .find_map(|k| t.strip_prefix(k))?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty()).then_some(name)
}

/// Names a diff line provides without defining them: `from m import a, b as c`, `import m`,
/// top-level `name = ...`.
fn provided_names(line: &str) -> Vec<&str> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("from ").and_then(|r| r.split_once(" import ").map(|(_, names)| names)) {
        return rest
            .split(',')
            .filter_map(|n| n.split(" as ").last())
            .map(|n| n.trim().trim_matches(|c| c == '(' || c == ')'))
            .filter(|n| !n.is_empty())
            .collect();
    }
    if let Some(rest) = t.strip_prefix("import ") {
        return rest.split(',').filter_map(|n| n.split(" as ").last()).map(str::trim).collect();
    }
    // A top-level assignment (`name = ...`, not `==`).
    if line == t
        && let Some((name, rest)) = t.split_once('=')
        && !rest.starts_with('=')
    {
        let name = name.trim();
        if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return vec![name];
        }
    }
    Vec::new()
}

/// A definition the agent's diff removed without providing the name again.
struct Removed {
    name: String,
    file: String,
    renamed_to: Option<String>,
    /// Defined indented (a method): only attribute uses (`.name`) can be stale.
    method: bool,
}

/// Definitions a diff removed without defining, importing or assigning the name again, per
/// file, each with the name that replaced it in the same file when there is exactly one (a
/// rename).
fn removed_definitions(diff: &str) -> Vec<Removed> {
    let mut out = Vec::new();
    for file in split_patch(diff) {
        let mut removed: Vec<(String, bool)> = Vec::new();
        let mut added = Vec::new();
        let mut provided: Vec<String> = Vec::new();
        for line in file.diff.lines() {
            if line.starts_with("---") || line.starts_with("+++") {
                continue;
            }
            if let Some(body) = line.strip_prefix('-')
                && let Some(name) = defined_name(body)
            {
                removed.push((name.to_string(), body.starts_with([' ', '\t'])));
            } else if let Some(body) = line.strip_prefix('+') {
                match defined_name(body) {
                    Some(name) => added.push(name.to_string()),
                    None => provided.extend(provided_names(body).into_iter().map(str::to_string)),
                }
            }
        }
        let new_names: Vec<&String> = added.iter().filter(|a| !removed.iter().any(|(r, _)| r == *a)).collect();
        for (name, method) in removed.iter().filter(|(r, _)| !added.contains(r) && !provided.contains(r)) {
            let common = COMMON.contains(&name.as_str()) || name.starts_with("__");
            if name.len() >= MIN_IDENT && !common {
                let renamed_to = (new_names.len() == 1).then(|| new_names[0].clone());
                out.push(Removed {
                    name: name.clone(),
                    file: repo_relative(&file.path, None),
                    renamed_to,
                    method: *method,
                });
            }
        }
    }
    out
}

/// Whether `text` uses `ident`: a word-bounded occurrence on a line that does not define it
/// (another class's own method of that name is not a use); for methods, only `.ident`.
fn uses(text: &str, ident: &str, method: bool) -> bool {
    text.lines().any(|line| {
        if defined_name(line) == Some(ident) {
            return false;
        }
        if method {
            contains_word(line, &format!(".{ident}")) || line.contains(&format!(".{ident}("))
        } else {
            contains_word(line, ident)
        }
    })
}

/// Whether `ident` occurs in `text` with no identifier character on either side.
fn contains_word(text: &str, ident: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(ident).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = text[i + ident.len()..].chars().next().is_none_or(|c| !is_ident(c));
        before && after
    })
}

/// Identifiers the agent's diff (its submission, else its applied edits) removed or renamed
/// that still occur in files it did not change, as far as the run showed those files (opened
/// files and search output).
pub(super) fn stale_identifiers(
    run: &RunDetail,
    shown: &[Shown<'_>],
    edits: &[EditEvent],
    patch_files: &[String],
) -> Vec<StaleIdentifier> {
    let diff = match run.submission.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(s) => s.to_string(),
        None => edits
            .iter()
            .filter(|e| e.step.is_some() && !e.rejected())
            .filter_map(|e| e.diff.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let removed = removed_definitions(&diff);
    if removed.is_empty() {
        return Vec::new();
    }
    let changed: Vec<String> = if patch_files.is_empty() {
        edits.iter().filter(|e| e.step.is_some() && !e.rejected()).map(|e| e.path.clone()).collect()
    } else {
        patch_files.to_vec()
    };
    let unchanged = |p: &str| !changed.iter().any(|c| c == p) && !is_build_copy(p);
    let methods: Vec<bool> = removed.iter().map(|r| r.method).collect();
    let mut out: Vec<StaleIdentifier> = removed
        .into_iter()
        .map(|r| StaleIdentifier {
            identifier: r.name,
            defined_in: r.file,
            renamed_to: r.renamed_to,
            seen_in: Vec::new(),
        })
        .collect();
    for s in shown {
        let step = s.step;
        let mut texts: Vec<(&str, &str)> = Vec::new();
        let opened: Vec<&str> = s.views.iter().filter(|v| v.kind == ViewKind::Open).map(|v| v.path.as_str()).collect();
        if let [only] = opened.as_slice() {
            texts.push((only, s.observation));
        }
        texts.extend(s.hits.iter().map(|(p, t)| (p.as_str(), *t)));
        for (path, text) in texts {
            if !unchanged(path) {
                continue;
            }
            for (st, &method) in out.iter_mut().zip(&methods) {
                let known = st.seen_in.iter().any(|x| x.path == path);
                if !known
                    && st.seen_in.len() < MAX_SIGHTINGS
                    && path != st.defined_in
                    && uses(text, &st.identifier, method)
                {
                    st.seen_in.push(Sighting { path: path.to_string(), step });
                }
            }
        }
    }
    out.retain(|s| !s.seen_in.is_empty());
    out
}

/// Names whose definitions a file's diff changes (added, removed or re-signed), dunders aside.
fn changed_definitions(diff: &str) -> Vec<&str> {
    let mut names: Vec<&str> = diff
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .filter_map(|l| defined_name(&l[1..]))
        .filter(|n| !n.starts_with("__"))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Split the gold patch into core and periphery, and see which the agent edited. Core: source
/// files that change a definition another gold file uses (the others follow it); failing such
/// cross-references, source files that change any definition; failing that, the only source
/// file. Periphery: the other files whose change names a redefined name (call sites, tests, docs,
/// configs); changelogs and release notes are neither.
pub(super) fn periphery(gold: &str, table: &FileTable, patch_files: &[String]) -> Periphery {
    let files = split_patch(gold);
    let sources: Vec<&crate::analysis::edits::FilePatch> =
        files.iter().filter(|f| FileKind::of(&f.path) == FileKind::Source).collect();
    let used_elsewhere = |f: &crate::analysis::edits::FilePatch| {
        changed_definitions(&f.diff)
            .iter()
            .any(|name| files.iter().any(|other| other.path != f.path && contains_word(&other.diff, name)))
    };
    let mut core: Vec<String> = sources.iter().filter(|f| used_elsewhere(f)).map(|f| f.path.clone()).collect();
    if core.is_empty() {
        core = sources.iter().filter(|f| !changed_definitions(&f.diff).is_empty()).map(|f| f.path.clone()).collect();
    }
    if core.is_empty() && sources.len() == 1 {
        core = sources.iter().map(|f| f.path.clone()).collect();
    }
    let edited = |p: &str| patch_files.iter().any(|x| x == p) || table.find(p).is_some_and(|f| !f.edited.is_empty());
    let core_edited = core.iter().filter(|p| edited(p)).cloned().collect();
    // The periphery follows the core: files whose gold change names what the core redefined.
    // Release notes and changelogs record a change; they do not follow it.
    let names: Vec<&str> =
        files.iter().filter(|f| core.contains(&f.path)).flat_map(|f| changed_definitions(&f.diff)).collect();
    let periphery = files
        .iter()
        .filter(|f| !core.contains(&f.path) && !is_changelog(&f.path))
        .filter(|f| names.iter().any(|n| contains_word(&f.diff, n)))
        .map(|f| PeripheryFile {
            path: f.path.clone(),
            kind: FileKind::of(&f.path),
            edited: edited(&f.path),
            first_seen: table.find(&f.path).and_then(|a| a.first_seen),
        })
        .collect();
    Periphery { core, core_edited, periphery }
}

/// Files named by failing tests' messages that are not in the agent's patch.
pub(super) fn failing_test_files(run: &RunDetail, patch_files: &[String]) -> Vec<TestMention> {
    let mut out: Vec<TestMention> = Vec::new();
    let Some(outcome) = &run.outcome else { return out };
    for t in outcome.tests.iter().filter(|t| !t.passed) {
        for named in t.message.as_deref().map(mentioned_files).unwrap_or_default() {
            let changed = patch_files.iter().any(|p| names_file(p, &named));
            let path = named.trim_start_matches("../").trim_start_matches("./").to_string();
            if !changed && !out.iter().any(|m| m.path == path) {
                out.push(TestMention { test: t.name.clone(), path });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_and_removals_not_re_signatures() {
        let diff = "diff --git a/src/requests/utils.py b/src/requests/utils.py\n--- a/src/requests/utils.py\n+++ b/src/requests/utils.py\n@@ -1,3 +1,3 @@\n-def super_len(o):\n+def complex_len(o):\n-def keep(a):\n+def keep(a, b=None):\n-def run(x):\n";
        let r = removed_definitions(diff);
        assert_eq!(r.len(), 1);
        let got = (r[0].name.as_str(), r[0].file.as_str(), r[0].renamed_to.as_deref(), r[0].method);
        assert_eq!(got, ("super_len", "src/requests/utils.py", Some("complex_len"), false));
    }

    #[test]
    fn names_imported_or_assigned_again_are_not_removed_and_methods_need_attribute_uses() {
        let diff = "diff --git a/p/core.py b/p/core.py\n--- a/p/core.py\n+++ b/p/core.py\n@@ -1,4 +1,3 @@\n-def slugify(s):\n+from p.text import slugify\n-class Circle:\n-    def area_of(self):\n+    def area(self):\n-TIMEOUT_VALUE = 3\n-def helper_fn(x):\n+helper_fn = other\n";
        let r = removed_definitions(diff);
        let names: Vec<(&str, bool)> = r.iter().map(|x| (x.name.as_str(), x.method)).collect();
        assert_eq!(names, [("Circle", false), ("area_of", true)]);
        assert!(!uses("class Square:\n    def area_of(self):\n        return 1", "area_of", true));
        assert!(uses("print(shape.area_of())", "area_of", true));
        assert!(!uses("def slugify(s):\n    return s", "slugify", false));
        assert!(uses("x = slugify(t)", "slugify", false));
    }

    #[test]
    fn word_bounded() {
        assert!(contains_word("from .utils import super_len, x", "super_len"));
        assert!(!contains_word("super_length = 3", "super_len"));
        assert!(!contains_word("my_super_len()", "super_len"));
    }
}
