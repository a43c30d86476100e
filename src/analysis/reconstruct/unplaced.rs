//! A diff of a command's own old and new text, for an edit whose file the run never showed
//! where it changed (a script's `str.replace(old, new)` or a whole-text `s/old/new/` on a file
//! never viewed): the script says what it replaced and with what, not where. Its hunks name
//! no line (`@@ -?,2 +?,3 @@ not placed: ...`): the TUI draws them without line numbers, and
//! readers of line numbers (`symbols::scopes`) pass them over. The edit is attributed to the
//! command's text when nothing later (a view, the submitted patch) shows what it did.

use super::replay::Replay;
use crate::analysis::diff;
use crate::analysis::edits::unified_diff;
use crate::model::Certainty;

/// What an unplaced hunk's header says after its ranges.
pub const NOTE: &str = "not placed: the command's own text; the run never showed where it is in the file";

/// A diff of each `(old, new)` pair, in order, with hunks that name no line; `None` when no
/// pair changes anything. Each pair's diff is read by `analysis::diff` (a removed `-- ` line is
/// the hunk's), its hunks written again with their counts and no start.
pub fn diff(path: &str, pairs: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    for (old, new) in pairs {
        let Some(d) = unified_diff(path, old, new) else { continue };
        for h in diff::hunks(&d) {
            if out.is_empty() {
                out.push_str(&format!("--- a/{0}\n+++ b/{0}\n", path.trim_start_matches('/')));
            }
            let (_, old_count, _, new_count) = h.counts.unwrap_or((0, 0, 0, 0));
            let hide = |sign: char, count: usize| {
                if count == 1 { format!("{sign}?") } else { format!("{sign}?,{count}") }
            };
            out.push_str(&format!("@@ {} {} @@ {NOTE}\n", hide('-', old_count), hide('+', new_count)));
            for l in &h.lines {
                out.push(l.mark);
                out.push_str(l.text);
                out.push('\n');
                if l.no_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Whether a diff's hunks are not placed (made by [`diff`]).
pub fn is_unplaced(diff: &str) -> bool {
    diff::hunks(diff).iter().any(|h| h.header.starts_with("@@ -?"))
}

impl Replay {
    /// The last edit recorded (of `path`) replaced `pairs` of literal text: when it is unknown,
    /// its diff is theirs, unplaced, unless something later shows what it did.
    pub(super) fn unplaced(&mut self, path: &str, pairs: &[(String, String)]) {
        let Some(rec) = self.recs.last_mut() else { return };
        if rec.tool || rec.certainty != Some(Certainty::Unknown) {
            return;
        }
        rec.unplaced = diff(path, pairs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_name_no_line_and_keep_their_counts() {
        let pairs = vec![
            ("def f(x):\n    return x\n".to_string(), "def f(x, y=0):\n    return x + y\n".to_string()),
            ("same".to_string(), "same".to_string()),
            ("a = 1".to_string(), "a = 2".to_string()),
        ];
        let d = diff("/testbed/m.py", &pairs).expect("a diff");
        assert_eq!(
            d,
            format!(
                "--- a/testbed/m.py\n+++ b/testbed/m.py\n@@ -?,2 +?,2 @@ {NOTE}\n-def f(x):\n-    return x\n+def f(x, y=0):\n+    return x + y\n@@ -? +? @@ {NOTE}\n-a = 1\n+a = 2\n"
            )
        );
        assert!(!d.lines().any(|l| l.starts_with("@@ -1")), "no line number is made up");
        assert!(is_unplaced(&d));
        assert!(!is_unplaced("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"));
        assert_eq!(diff("x", &[("a".into(), "a".into())]), None);
    }

    /// Issue 43: a removed line whose text starts `-- ` (`--- x` in the diff) was dropped as a
    /// file header.
    #[test]
    fn a_removed_comment_line_stays_in_its_hunk() {
        let pairs = vec![("-- old note\nSELECT 1;\n".to_string(), "SELECT 2;\n".to_string())];
        let d = diff("q.sql", &pairs).expect("a diff");
        assert_eq!(
            d,
            format!("--- a/q.sql\n+++ b/q.sql\n@@ -?,2 +? @@ {NOTE}\n--- old note\n-SELECT 1;\n+SELECT 2;\n")
        );
    }
}
