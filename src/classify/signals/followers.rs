//! Sites that follow the agent's own change and that it left (failure-modes.md: propagation
//! needs the agent's own central change). With a gold patch: once the agent's diff reaches a
//! gold definition (it made the gold's change there, in name or in behaviour), every other place
//! the gold changes that carries that change along is a follower, and one the agent left is
//! stale periphery, not a missed location:
//! - a call site: a gold hunk whose changed lines call a definition the agent changed (in its
//!   own file, another function's hunk; in another file, one that does not define that name);
//! - the same change: a gold hunk in a file the agent left that adds what the agent's own
//!   change adds (an identifier of its own kind: `ensure_ascii`, `params_for`, `maxRetries`);
//! - the same statement: a gold hunk in a file the agent left that changes a statement of the
//!   form the agent changed (`raise ValidationError(`: the parallel raise site).

use super::paths::FileKind;
use super::{ExpectedFile, FileTable};
use crate::analysis::reconstruct::patch::{Hunk, parse};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Follower {
    /// The gold file of the site.
    pub path: String,
    /// The site: a gold location in the agent's own file, else the file.
    pub site: String,
    /// How it follows the agent's change: `calls`, `same change` or `same statement`.
    pub how: String,
    /// What of the agent's change it follows (the definition called, the identifier added, the
    /// statement's form).
    pub follows: String,
    /// The first step that showed it to the agent (a view, a search's output).
    pub seen: Option<usize>,
}

impl Follower {
    /// How it follows, in words for a rationale: `calls`, `makes the same change as`, ...
    pub fn how_words(&self) -> &'static str {
        match self.how.as_str() {
            "calls" => "calls",
            "same change" => "adds the same",
            _ => "changes the same statement,",
        }
    }
}

/// The followers the agent left: `gold` the gold patch, `agent` the agent's diff against the
/// base, `expected` the gold files with their locations (whether the agent's changes reached
/// each), `table` the files the run met.
pub(super) fn followers(gold: &str, agent: &str, expected: &[ExpectedFile], table: &FileTable) -> Vec<Follower> {
    let reached: Vec<(&str, &str)> = expected
        .iter()
        .filter(|e| FileKind::of(&e.named) == FileKind::Source)
        .flat_map(|e| {
            e.functions.iter().filter(|f| f.edited == Some(true)).map(move |f| (e.named.as_str(), last(&f.name)))
        })
        .collect();
    if reached.is_empty() {
        return Vec::new();
    }
    let names: BTreeSet<&str> = reached.iter().map(|(_, n)| *n).collect();
    let mut out = Vec::new();
    // Call sites in the agent's own files: another location's hunks call what it changed.
    for e in expected.iter().filter(|e| reached.iter().any(|(p, _)| *p == e.named)) {
        for f in e.functions.iter().filter(|f| f.edited == Some(false)) {
            if let Some(d) = f.calls.iter().find(|c| names.contains(c.as_str()) && c.as_str() != last(&f.name)) {
                out.push(Follower {
                    path: e.named.clone(),
                    site: f.name.clone(),
                    how: "calls".into(),
                    follows: d.clone(),
                    seen: f.seen,
                });
            }
        }
    }
    let agent_files = parse(agent);
    let agent_changed: Vec<&Hunk> = agent_files
        .iter()
        .filter(|f| FileKind::of(&f.path) == FileKind::Source && reached.iter().any(|(p, _)| *p == f.path))
        .flat_map(|f| &f.hunks)
        .collect();
    let adds = |hunks: &[&Hunk]| new_identifiers(hunks);
    let agent_adds = adds(&agent_changed);
    let agent_forms: BTreeSet<String> = agent_changed.iter().flat_map(|h| removed_forms(h)).collect();
    // Sites in gold files the agent left.
    for f in parse(gold) {
        if FileKind::of(&f.path) != FileKind::Source || agent_files.iter().any(|a| a.path == f.path) {
            continue;
        }
        let hunks: Vec<&Hunk> = f.hunks.iter().collect();
        let defines: BTreeSet<String> = hunks.iter().flat_map(|h| defined(h)).collect();
        let calls = hunks
            .iter()
            .flat_map(|h| super::location::changed_calls(h))
            .find(|c| names.contains(c.as_str()) && !defines.contains(c));
        let same = adds(&hunks).intersection(&agent_adds).next().cloned();
        let form = hunks.iter().flat_map(|h| removed_forms(h)).find(|x| agent_forms.contains(x));
        let (how, follows) = match (calls, same, form) {
            (Some(c), ..) => ("calls", c),
            (None, Some(s), _) => ("same change", s),
            (None, None, Some(x)) => ("same statement", x),
            _ => continue,
        };
        let seen = table.find(&f.path).and_then(|a| a.first_seen.or(a.first_searched));
        out.push(Follower { site: f.path.clone(), path: f.path, how: how.into(), follows, seen });
    }
    out
}

fn last(qualified: &str) -> &str {
    qualified.rsplit(['.', ':']).next().unwrap_or(qualified)
}

/// An identifier of a change's own: 5 characters or more, with an underscore inside or a lower
/// letter then an upper one (`ensure_ascii`, `maxRetries`), not a common word a change shares
/// with any other by chance.
fn specific(word: &str) -> bool {
    let inner = word.trim_matches('_');
    word.len() >= 5
        && (inner.contains('_')
            || inner.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase()))
}

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
}

/// The specific identifiers the hunks add: on their added lines, on none of their removed ones.
fn new_identifiers(hunks: &[&Hunk]) -> BTreeSet<String> {
    let side = |mark: char| -> BTreeSet<&str> {
        hunks.iter().flat_map(|h| &h.lines).filter(|(m, _)| *m == mark).flat_map(|(_, l)| words(l)).collect()
    };
    let (added, removed) = (side('+'), side('-'));
    added.difference(&removed).filter(|w| specific(w)).map(|w| w.to_string()).collect()
}

/// The forms of the statements a hunk removes or changes: the call it raises, returns or
/// assigns, or the call it is (`raiseValidationError(`, `return json.dumps(`).
fn removed_forms(h: &Hunk) -> Vec<String> {
    h.lines.iter().filter(|(m, _)| *m == '-').filter_map(|(_, l)| form(l)).collect()
}

fn form(line: &str) -> Option<String> {
    let t = line.trim_start();
    let (lead, rest) = match ["raise ", "return ", "throw "].iter().find(|k| t.starts_with(**k)) {
        Some(k) => (k.trim(), &t[k.len()..]),
        None => ("", t),
    };
    let rest = rest.trim_start().strip_prefix("new ").unwrap_or(rest.trim_start());
    let callee: String = rest.chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.')).collect();
    let called = rest[callee.len()..].starts_with('(');
    // A raise, return or throw of a call, with a name of its own (not `print(`, `len(`).
    (called && !lead.is_empty() && callee.len() >= 5).then(|| format!("{lead} {callee}("))
}

/// The names a hunk defines (its header's definition, and `def`/`class` lines on either side).
fn defined(h: &Hunk) -> Vec<String> {
    let header = crate::analysis::diff::section(&h.header);
    std::iter::once(header)
        .chain(h.lines.iter().map(|(_, l)| l.as_str()))
        .filter_map(|l| {
            let t = l.trim_start();
            let rest = ["def ", "class ", "fn ", "func ", "function "].iter().find_map(|k| t.strip_prefix(*k))?;
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(text: &str) -> Hunk {
        parse(text).into_iter().flat_map(|f| f.hunks).next().unwrap_or_else(|| panic!("a hunk: {text}"))
    }

    #[test]
    fn identifiers_forms_and_definitions_a_hunk_holds() {
        let h = hunk(
            "@@ -1,2 +1,2 @@ def prepare_value(self, value):\n-        return json.dumps(value, cls=self.encoder)\n+        return json.dumps(value, ensure_ascii=False, cls=self.encoder)\n",
        );
        assert_eq!(new_identifiers(&[&h]), BTreeSet::from(["ensure_ascii".to_string()]));
        assert_eq!(removed_forms(&h), ["return json.dumps("]);
        assert_eq!(defined(&h), ["prepare_value"]);
        assert_eq!(
            form("            raise ValidationError(self.message, code=self.code)"),
            Some("raise ValidationError(".into())
        );
        assert_eq!(form("    x = len(y)"), None, "an assignment names no form of its own");
        assert_eq!(form("    return len(y)"), None, "a short common call");
        assert!(specific("maxRetries") && specific("ensure_ascii") && !specific("finite") && !specific("__init__"));
    }
}
