//! Locations finer than a file: the functions and classes a gold patch's hunks sit in, against
//! those the agent's diff changed and the run showed; and gold hunks that are benchmark plumbing
//! (a test added to a skip list), no place the fix had to be.

use super::FunctionLocation;
use super::views::Shown;
use crate::analysis::symbols::{self, ChangeKind, Lang};

/// Where one gold file's hunks sit (`["QuerySet", "filter"]`), whether the agent's changes to
/// the file reached each (the same definition, or one inside the other: a hunk header may name
/// only the class; unknown when the agent's diff of the file is), and the first step that showed
/// its definition.
pub(super) fn gold_functions(
    path: &str,
    gold_diff: &str,
    agent_touched: &[Vec<String>],
    shown: &[Shown<'_>],
) -> Vec<FunctionLocation> {
    let Some(lang) = Lang::of_path(path) else { return Vec::new() };
    let sep = lang.separator();
    let gold = symbols::changes(lang, gold_diff);
    // A definition the gold patch adds did not exist for the agent to find: adding a helper is a
    // design, not a location; the places the gold changes are.
    let added: Vec<&str> =
        gold.changes.iter().filter(|c| c.kind == ChangeKind::Added).map(|c| c.qualified.as_str()).collect();
    gold.touched
        .into_iter()
        .filter(|g| !added.contains(&g.join(sep).as_str()))
        .map(|gold| {
            let edited = (!agent_touched.is_empty()).then(|| agent_touched.iter().any(|a| reaches(a, &gold)));
            let name = gold.last().cloned().unwrap_or_default();
            FunctionLocation { name: gold.join(sep), seen: first_shown(lang, path, &name, shown), edited }
        })
        .collect()
}

/// Whether an agent's changed location reaches a gold one: the same definition, one inside the
/// other (a hunk header may name only the class), or the same definition named without its
/// outer scope on one side (a hunk whose header is a sibling, not a scope, leaves it unknown).
fn reaches(agent: &[String], gold: &[String]) -> bool {
    agent.starts_with(gold) || gold.starts_with(agent) || agent.ends_with(gold) || gold.ends_with(agent)
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
    let changed: Vec<&str> = file_diff
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .map(|l| l[1..].trim())
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

    #[test]
    fn a_skip_list_entry_is_plumbing_and_code_is_not() {
        let skip = "@@ -80,6 +80,9 @@ class DatabaseFeatures(BaseDatabaseFeatures):\n             \"model_fields.test_jsonfield.TestQuerying.test_a\",\n+        \"Oracle doesn't support this.\": {\n+            \"model_fields.test_jsonfield.TestQuerying.test_usage_in_subquery\",\n+        },\n";
        assert!(is_plumbing(skip));
        assert!(!is_plumbing("@@ -1 +1 @@\n-    supports_json = False\n+    supports_json = True\n"));
        assert!(!is_plumbing("@@ -1 +1 @@\n-msg = 'a'\n+msg = 'b'\n"), "strings that name no test");
    }
}
