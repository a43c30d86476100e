//! The modes of refactoring runs (issue 39): propagation found from the agent's own change
//! (gold sites that call what the agent changed, make the same change, or change the same
//! statement, left by the agent), and required temporary errors told from the agent's own
//! breakage; each with the near miss that is no mode.

use super::{edit, fired, run, step};
use crate::classify::input::Task;
use crate::classify::signals::*;
use crate::label::Rule;

/// Signals of a run whose submission is `agent`, the task's gold patch `gold`, with `steps`.
fn signals(steps: Vec<crate::classify::input::Step>, agent: &str, gold: &str) -> Signals {
    let files: Vec<String> = crate::analysis::edits::split_patch(agent).into_iter().map(|f| f.path).collect();
    let mut edits = vec![edit(Some(1), &files[0], "shell_write", "applied", &[], None)];
    edits.extend(files.iter().map(|f| edit(None, f, "final_patch", "unknown", &[], None)));
    let mut r = run(steps, edits, Some(false), Some(agent));
    r.task = Some(Task { instruction: Some("Fix it.".into()), gold_patch: Some(gold.into()) });
    compute(&r)
}

fn diff(path: &str, hunks: &str) -> String {
    format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}")
}

/// The gold changes `get_marks` and its call site `store_mark` in the same file.
fn marks(agent_changes_store: bool) -> Signals {
    let path = "src/marks.py";
    let core = "@@ -10,3 +10,3 @@ def get_marks(obj):\n     marks = []\n-    for m in obj.pytestmark:\n+    for m in mro_marks(obj):\n         marks.append(m)\n";
    let store = "@@ -30,3 +30,3 @@ def store_mark(obj, mark):\n     assert mark\n-    obj.pytestmark = [*get_marks(obj), mark]\n+    obj.pytestmark = [*get_marks(obj, consider_mro=False), mark]\n     return obj\n";
    let gold = diff(path, &format!("{core}{store}"));
    let agent = if agent_changes_store { gold.clone() } else { diff(path, core) };
    let view = "   28\tdef store_mark(obj, mark):\n   29\t    assert mark\n   30\t    obj.pytestmark = [*get_marks(obj), mark]\n";
    signals(
        vec![step(0, &format!("nl -ba {path} | sed -n '28,30p'"), view), step(1, "python - <<'PY'\nPY", "")],
        &agent,
        &gold,
    )
}

#[test]
fn a_call_site_of_the_agents_own_change_left_in_its_file_is_propagation() {
    let s = marks(false);
    let f: Vec<(&str, &str, &str)> =
        s.followers.iter().map(|f| (f.site.as_str(), f.how.as_str(), f.follows.as_str())).collect();
    assert_eq!(f, [("store_mark", "calls", "get_marks")]);
    assert_eq!(fired(&s, Rule::ChangeNotCarried), Some(0.8), "seen at step 0 and left");
    // The call site carried along: nothing left.
    assert_eq!(fired(&marks(true), Rule::ChangeNotCarried), None);
}

const FIELDS: &str = "@@ -1258,3 +1258,3 @@ def prepare_value(self, value):\n     if isinstance(value, InvalidJSONInput):\n         return value\n-    return json.dumps(value, cls=self.encoder)\n+    return json.dumps(value, ensure_ascii=False, cls=self.encoder)\n";
const ADMIN: &str = "@@ -400,4 +400,4 @@ def display_for_field(value, field, empty):\n     elif isinstance(field, models.JSONField) and value:\n         try:\n-            return field.get_prep_value(value)\n+            return json.dumps(value, ensure_ascii=False, cls=field.encoder)\n         except TypeError:\n";

#[test]
fn the_same_change_left_in_another_file_is_propagation_not_a_missed_location() {
    let gold = format!("{}{}", diff("django/forms/fields.py", FIELDS), diff("django/contrib/admin/utils.py", ADMIN));
    let grep = "django/contrib/admin/utils.py:403:            return field.get_prep_value(value)\n";
    let steps = vec![step(0, "grep -rn get_prep_value django", grep), step(1, "python - <<'PY'\nPY", "")];
    let s = signals(steps.clone(), &diff("django/forms/fields.py", FIELDS), &gold);
    let f: Vec<(&str, &str)> = s.followers.iter().map(|f| (f.how.as_str(), f.follows.as_str())).collect();
    assert_eq!(f, [("same change", "ensure_ascii")]);
    assert_eq!(fired(&s, Rule::ChangeNotCarried), Some(0.8), "the agent's own grep showed it");
    assert_eq!(fired(&s, Rule::ExpectedFileNotEdited), None, "the periphery of its own change, not a location");
    assert_eq!(fired(&s, Rule::ExpectedFileNeverSeen), None);
    // The agent changed something else in the core file: no central change of the gold's made,
    // so the admin file is a location question.
    let elsewhere = diff(
        "django/forms/fields.py",
        "@@ -20,2 +20,2 @@ def clean(self, value):\n-    return value\n+    return value.strip()\n",
    );
    let s = signals(steps, &elsewhere, &gold);
    assert!(s.followers.is_empty(), "{:?}", s.followers);
    assert_eq!(fired(&s, Rule::ChangeNotCarried), None);
}

#[test]
fn the_same_statement_in_another_file_follows_and_in_the_same_file_does_not() {
    let validators = "@@ -48,3 +48,3 @@ def __call__(self, value):\n         if invalid_input:\n-            raise ValidationError(self.message, code=self.code)\n+            raise ValidationError(self.message, code=self.code, params={'value': value})\n \n";
    let fields = "@@ -350,4 +350,3 @@ def to_python(self, value):\n         return value\n-    def validate(self, value):\n-        raise ValidationError(self.error_messages['invalid'], code='invalid')\n \n";
    let gold = format!("{}{}", diff("django/core/validators.py", validators), diff("django/forms/fields.py", fields));
    let s = signals(
        vec![step(0, "ls", ""), step(1, "sed -i 's/x/y/' django/core/validators.py", "")],
        &diff("django/core/validators.py", validators),
        &gold,
    );
    let f: Vec<(&str, &str)> = s.followers.iter().map(|f| (f.how.as_str(), f.follows.as_str())).collect();
    assert_eq!(f, [("same statement", "raise ValidationError(")]);
    assert_eq!(fired(&s, Rule::ChangeNotCarried), Some(0.7), "never shown to the agent");
    // A parallel method of the same file the agent left is a location, not a follower (the
    // agent chose which of the file's places to change).
    let second = "@@ -90,3 +90,3 @@ def __call__(self, value):\n         if bad:\n-            raise ValidationError(self.message, code=self.code)\n+            raise ValidationError(self.message, code=self.code, params={'value': value})\n \n";
    let gold = diff("django/core/validators.py", &format!("{validators}{second}"));
    let s = signals(
        vec![step(0, "ls", ""), step(1, "sed -i 's/x/y/' django/core/validators.py", "")],
        &diff("django/core/validators.py", validators),
        &gold,
    );
    assert!(s.followers.is_empty(), "{:?}", s.followers);
}

/// SWE-agent 0.x's lint gate, in its own words (failure-modes.md), refusing a windowed edit.
fn refused(names: &[&str]) -> String {
    let errors: String = names.iter().map(|n| format!("- F821 undefined name '{n}'\n")).collect();
    format!(
        "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n{errors}\nThis is how your edit would have looked if applied\n-------------------------------------------------\n[File: /repo/src/calc.py (20 lines total)]\n\nYour changes have NOT been applied. Please fix your edit command and try again.\n"
    )
}

/// Required temporary errors (issue 39): a definition renamed before its uses is refused, then
/// abandoned; the hard negative, an edit whose range swallowed the line defining a name the
/// rest still uses, refused for that undefined name, is the agent's own breakage.
#[test]
fn an_undefined_name_of_a_rename_in_passing_is_a_temporary_error_and_a_swallowed_one_is_not() {
    let gated = |old: &str, new: &str, names: &[&str]| {
        let steps = vec![
            step(0, "open src/calc.py", "1:def total(xs):"),
            step(1, "edit 5:6\nend_of_edit", &refused(names)),
            step(2, "submit", ""),
        ];
        let d = format!("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -5,2 +5,2 @@\n{old}{new}");
        let edits =
            vec![edit(Some(1), "/repo/src/calc.py", "windowed_edit", "rejected_by_linter", &["F821"], Some(&d))];
        compute(&run(steps, edits, Some(false), None))
    };
    let rename =
        gated("-def total(xs):\n-    return sum(xs)\n", "+def add_all(xs):\n+    return sum(xs)\n", &["total"]);
    assert_eq!(rename.rejections[0].pending, ["total"]);
    assert!(fired(&rename, Rule::GatedRejectionAbandoned).is_some_and(|c| c >= 0.7));
    let swallowed = gated("-    count = 0\n-    for x in xs:\n", "+    for x in sorted(xs):\n", &["count"]);
    assert_eq!(swallowed.rejections[0].overwritten, ["count"]);
    assert_eq!(fired(&swallowed, Rule::GatedRejectionAbandoned), None, "its own edit broke the file");
}
