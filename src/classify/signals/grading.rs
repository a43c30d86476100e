//! What the grading shows beyond pass and fail: signs that a failed run's failure is not the
//! agent's (failure-modes.md, "Failure onset and blame"). Failing test ids that no test runner
//! prints or that the harness's log parser cut, a patch that makes the gold patch's own change,
//! the API the gold patch adds where the agent changed the code and the task's text never
//! names, and failure messages that name what only the gold patch introduces.

use super::ExpectedFile;
use super::paths::repo_relative;
use super::propagation::contains_word;
use crate::analysis::diff;
use crate::analysis::edits::split_patch;
use crate::analysis::symbols::{self, ChangeKind, Lang};
use crate::classify::input::RunInput;
use crate::model::TestGroup;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grading {
    /// Failing tests whose ids no test runner prints: an empty parameter list (`test_x[]`).
    /// Such an id names no test, and fails every patch, the gold's too.
    pub impossible: Vec<String>,
    /// Failing tests whose ids are cut short (a `[` never closed): the harness's reading of the
    /// test log broke them.
    pub cut: Vec<String>,
    /// The agent's patch makes the gold patch's change: the same lines removed and added in
    /// every source file of the gold.
    pub patch_is_gold: bool,
    /// Parameters the gold patch adds to a public definition the agent's changes reached, that
    /// the task's text never names.
    pub unstated: Vec<Unstated>,
    /// Failing FAIL_TO_PASS tests whose message names what only the gold patch introduces (the
    /// task's text and the agent's patch never name it).
    pub failures_naming_gold: Vec<Naming>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unstated {
    /// The gold file.
    pub path: String,
    /// The definition the gold re-signs (qualified).
    pub definition: String,
    /// The new parameter's name.
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Naming {
    pub test: String,
    pub name: String,
}

/// The grading signs of a run: `expected` says which gold definitions the agent's changes
/// reached.
pub(super) fn grading(run: &RunInput, expected: &[ExpectedFile]) -> Grading {
    let failing: Vec<&crate::model::TestCase> =
        run.outcome.iter().flat_map(|o| &o.tests).filter(|t| !t.passed).collect();
    let impossible = failing.iter().filter(|t| t.name.ends_with("[]")).map(|t| t.name.clone()).collect();
    let cut = failing
        .iter()
        .filter(|t| t.name.rfind('[').is_some_and(|open| !t.name[open..].contains(']')))
        .map(|t| t.name.clone())
        .collect();
    let gold = run.task.as_ref().and_then(|t| t.gold_patch.as_deref()).filter(|g| !g.trim().is_empty());
    let text = run.task.as_ref().and_then(|t| t.instruction.as_deref());
    let submission = run.submission.as_deref().unwrap_or("");
    let (Some(gold), Some(text)) = (gold, text) else {
        return Grading {
            impossible,
            cut,
            patch_is_gold: gold.is_some_and(|g| same_change(g, submission)),
            ..Grading::default()
        };
    };
    let unstated = unstated(gold, text, expected);
    let introduced = introduced(gold);
    let mut failures_naming_gold = Vec::new();
    for t in failing.iter().filter(|t| t.group == Some(TestGroup::FailToPass)) {
        let Some(message) = t.message.as_deref() else { continue };
        let named = introduced
            .iter()
            .find(|n| contains_word(message, n) && !contains_word(text, n) && !contains_word(submission, n));
        if let Some(n) = named {
            failures_naming_gold.push(Naming { test: t.name.clone(), name: n.clone() });
        }
    }
    Grading { impossible, cut, patch_is_gold: same_change(gold, submission), unstated, failures_naming_gold }
}

/// Identifiers (4 characters or more) on the gold's added lines and on none of its removed ones.
fn introduced(gold: &str) -> BTreeSet<String> {
    let idents = |sign: char| -> BTreeSet<String> {
        diff::changed_lines(gold)
            .into_iter()
            .filter(|l| l.mark == sign)
            .flat_map(|l| l.text.split(|c: char| !(c.is_alphanumeric() || c == '_')))
            .filter(|w| w.len() >= 4 && w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
            .map(str::to_string)
            .collect()
    };
    let removed = idents('-');
    idents('+').into_iter().filter(|w| !removed.contains(w)).collect()
}

/// Whether a definition's name is API (tests call it): not private (`_name`), though a
/// constructor (`__init__`) is.
fn public(name: &str) -> bool {
    !name.starts_with('_') || name == "__init__"
}

/// A parameter's name from its text (`*, consider_mro: bool = True` gives `consider_mro`).
fn param_name(text: &str) -> &str {
    let t = text.trim_start_matches(['*', '&', '.', ' ']);
    let end = t.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(t.len());
    &t[..end]
}

/// Parameters the gold adds to a public definition the agent's changes reached, that the task's
/// text never names (a new definition is the gold's design, not evidence the tests call it).
/// Parameters are API by name only where callers pass them by name (Python, TypeScript).
fn unstated(gold: &str, text: &str, expected: &[ExpectedFile]) -> Vec<Unstated> {
    let mut out = Vec::new();
    for f in split_patch(gold) {
        let path = repo_relative(&f.path, None);
        let Some(lang) = Lang::of_path(&path) else { continue };
        let reached = |qualified: &str| {
            expected
                .iter()
                .filter(|e| e.named == path)
                .flat_map(|e| &e.functions)
                .any(|l| l.edited == Some(true) && l.name == qualified)
        };
        for c in symbols::changes(lang, &f.diff).changes {
            if !public(&c.name) {
                continue;
            }
            match c.kind {
                ChangeKind::Resigned if matches!(lang, Lang::Python | Lang::TypeScript) && reached(&c.qualified) => {
                    let (Some(old), Some(new)) = (&c.old_params, &c.new_params) else { continue };
                    let before: Vec<&str> = old.list.iter().map(|p| param_name(p)).collect();
                    for p in new.list.iter().map(|p| param_name(p)) {
                        if p.len() >= 3 && !before.contains(&p) && !contains_word(text, p) {
                            out.push(Unstated {
                                path: path.clone(),
                                definition: c.qualified.clone(),
                                name: p.to_string(),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The removed and added lines of each source file's diff, trimmed, blank lines aside.
fn changed_lines(patch: &str) -> BTreeSet<(String, char, String)> {
    let mut out = BTreeSet::new();
    for f in split_patch(patch) {
        let path = repo_relative(&f.path, None);
        if super::paths::FileKind::of(&path) != super::paths::FileKind::Source {
            continue;
        }
        for l in diff::changed_lines(&f.diff) {
            let body = l.text.trim();
            if !body.is_empty() {
                out.insert((path.clone(), l.mark, body.to_string()));
            }
        }
    }
    out
}

/// Whether the agent's patch makes the gold's source changes (and no other source change).
fn same_change(gold: &str, submission: &str) -> bool {
    let g = changed_lines(gold);
    !g.is_empty() && g == changed_lines(submission)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameters_name_is_read_from_its_text() {
        assert_eq!(param_name("consider_mro: bool = True"), "consider_mro");
        assert_eq!(param_name("**kwargs"), "kwargs");
        assert_eq!(param_name("keep_attrs=None"), "keep_attrs");
    }

    #[test]
    fn a_patch_that_makes_the_gold_change_differs_only_in_context_and_blank_lines() {
        let gold = "diff --git a/p/m.py b/p/m.py\n--- a/p/m.py\n+++ b/p/m.py\n@@ -1,3 +1,3 @@ def f():\n     x = 1\n-    return x\n+    return x + 1\n";
        let agent = "diff --git a/p/m.py b/p/m.py\n--- a/p/m.py\n+++ b/p/m.py\n@@ -2,2 +2,3 @@\n-    return x\n+    return x + 1\n+\n";
        assert!(same_change(gold, agent));
        let other = agent.replace("x + 1", "x + 2");
        assert!(!same_change(gold, &other));
        assert!(!same_change(gold, ""));
    }

    #[test]
    fn names_only_the_gold_introduces() {
        let gold =
            "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-def get_marks(obj):\n+def get_marks(obj, *, consider_mro=True):\n";
        let names = introduced(gold);
        assert!(names.contains("consider_mro"), "{names:?}");
        assert!(!names.contains("get_marks"), "on both sides");
    }

    /// Issue 43: a removed line whose text starts `--` (an SQL comment, C's `--count;`) or an
    /// added one starting `++` reads `--- ...` / `+++ ...` in the diff: it is a change, not a
    /// file header.
    #[test]
    fn lines_starting_with_two_dashes_or_pluses_are_changes() {
        let gold = "--- a/q.sql\n+++ b/q.sql\n@@ -1 +1 @@\n--- legacy_flag\n+legacy_flag = 1\n";
        assert!(introduced(gold).is_empty(), "on both sides: {:?}", introduced(gold));
        let gold = "--- a/src/c.c\n+++ b/src/c.c\n@@ -1 +1,2 @@\n x = 0;\n+++count_items;\n";
        assert!(introduced(gold).contains("count_items"));
        let patch = "--- a/src/c.c\n+++ b/src/c.c\n@@ -1 +1 @@\n---count;\n+++count;\n";
        let changed: Vec<(char, String)> = changed_lines(patch).into_iter().map(|(_, s, t)| (s, t)).collect();
        assert_eq!(changed, [('+', "++count;".to_string()), ('-', "--count;".to_string())]);
    }
}
