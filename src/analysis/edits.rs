//! Edit verdicts, diffs and submission-patch splitting, shared by every format adapter.
//!
//! The verdict strings are the exact ones real trajectories print (SWE-agent's linter and
//! `str_replace_editor`, OpenHands' editor), as collected in the failure-mode notes.

use crate::analysis::diff;
use crate::model::{Edit, EditKind, EditStatus, EditTrace};
use similar::TextDiff;

/// Linter gate rejections (edit NOT applied). The message opens the observation (OpenHands
/// wraps it in brackets); SWE-agent's windowed tools also close with the second string.
const LINT_REJECTED_HEAD: &str = "Your proposed edit has introduced new syntax error(s)";
const LINT_REJECTED_TAIL: &str = "Your changes have NOT been applied";

/// First-line openings of tool refusals (edit not applied).
const TOOL_REFUSED: &[&str] = &[
    "No replacement was performed",
    "ERROR:",
    "Error:",
    "The path ",
    "Invalid `",
    "Parameter `",
    "File already exists",
    "Usage: edit",
    "No occurrences of",
];

/// First-line markers of an applied edit (str_replace_editor applies and may only warn about
/// lint: still applied).
const APPLIED: &[&str] = &[
    "has been edited",
    "File created successfully",
    "Replaced ",
    "Text replaced",
    "File updated.",
    "Your edits have been applied",
];

/// Decide what happened to an edit from the observation that answered it. Only the opening
/// (and, for rejections, closing) lines are read: the rest of an observation is file content,
/// which may contain any of these phrases.
pub fn edit_status(observation: &str) -> EditStatus {
    let lines: Vec<&str> = observation.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let first = lines.first().copied().unwrap_or("");
    let opens_with_rejection = lines.iter().take(3).any(|l| l.contains(LINT_REJECTED_HEAD));
    let closes_with_rejection = lines.iter().rev().take(3).any(|l| l.starts_with(LINT_REJECTED_TAIL));
    if opens_with_rejection || closes_with_rejection {
        return EditStatus::RejectedByLinter;
    }
    if TOOL_REFUSED.iter().any(|s| first.starts_with(s)) || first.contains("did not appear verbatim") {
        return EditStatus::RefusedByTool;
    }
    if APPLIED.iter().any(|s| first.contains(s)) || first.starts_with("[File: ") {
        return EditStatus::Applied;
    }
    EditStatus::Unknown
}

/// Lint codes named in a rejection (`- F821 undefined name 'x'`), in order, without repeats.
pub fn lint_codes(observation: &str) -> Vec<String> {
    let mut codes: Vec<String> = Vec::new();
    for line in observation.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("- ") else {
            continue;
        };
        let code: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        let well_formed = code.len() >= 4
            && code.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && code[1..].chars().all(|c| c.is_ascii_digit());
        if well_formed && !codes.contains(&code) {
            codes.push(code);
        }
    }
    codes
}

/// A unified diff of `old` to `new` for `path`, or `None` when nothing changed.
pub fn unified_diff(path: &str, old: &str, new: &str) -> Option<String> {
    if old == new {
        return None;
    }
    // Edit snippets (str_replace arguments) rarely end in a newline; only a difference in the
    // final newline itself deserves a "\ No newline at end of file" marker.
    let (old, new) = if !old.is_empty() && !new.is_empty() && !old.ends_with('\n') && !new.ends_with('\n') {
        (format!("{old}\n"), format!("{new}\n"))
    } else {
        (old.to_string(), new.to_string())
    };
    let a = format!("a/{}", path.trim_start_matches('/'));
    let b = format!("b/{}", path.trim_start_matches('/'));
    if let Some(d) = disjoint_diff(&old, &new, &a, &b) {
        return Some(d);
    }
    let diff = TextDiff::from_lines(&old, &new);
    Some(diff.unified_diff().context_radius(3).header(&a, &b).to_string())
}

/// The diff of two texts of at least [`DISJOINT_FROM`] lines each that share no line: one hunk
/// removing every old line and adding every new one, as Myers' algorithm gives it, drawn
/// directly (Myers costs the product of the lengths there: a view that shows another file than
/// the one believed, 180 lines each, took 0.16 ms). `None` when they share a line.
fn disjoint_diff(old: &str, new: &str, a: &str, b: &str) -> Option<String> {
    // Lines as similar tokenizes them: each with its line ending.
    let (olds, news): (Vec<&str>, Vec<&str>) =
        (old.split_inclusive('\n').collect(), new.split_inclusive('\n').collect());
    if olds.len() < DISJOINT_FROM || news.len() < DISJOINT_FROM {
        return None;
    }
    let seen: std::collections::HashSet<&str> = olds.iter().copied().collect();
    if news.iter().any(|l| seen.contains(l)) {
        return None;
    }
    let mut out = String::with_capacity(old.len() + new.len() + 2 * (olds.len() + news.len()) + 64);
    out.push_str(&format!("--- {a}\n+++ {b}\n@@ -{} +{} @@\n", hunk_range(olds.len()), hunk_range(news.len())));
    for (tag, lines) in [('-', &olds), ('+', &news)] {
        for line in lines.iter() {
            out.push(tag);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    Some(out)
}

/// Lines each text must have for [`disjoint_diff`]: below, Myers is cheap.
const DISJOINT_FROM: usize = 8;

/// A hunk's range of `len` lines from line 1, as unified diffs write it.
fn hunk_range(len: usize) -> String {
    if len == 1 { "1".to_string() } else { format!("1,{len}") }
}

/// A unified diff whose hunks were counted from line 1 (a diff of a snippet), renumbered so
/// they name the lines of the file the snippet starts at (`start`, 1-based).
pub fn diff_at_line(diff: &str, start: usize) -> String {
    let offset = start.saturating_sub(1);
    if offset == 0 {
        return diff.to_string();
    }
    let shift = |range: &str| -> Option<String> {
        let (sign, rest) = (range.get(..1)?, range.get(1..)?);
        let (first, count) = match rest.split_once(',') {
            Some((f, c)) => (f, Some(c)),
            None => (rest, None),
        };
        let first: usize = first.parse().ok()?;
        // An empty range (`-0,0`) sits before its line: it moves too, unless at the very start.
        let moved = if first == 0 && count == Some("0") { offset } else { first + offset };
        Some(match count {
            Some(c) => format!("{sign}{moved},{c}"),
            None => format!("{sign}{moved}"),
        })
    };
    let mut out = String::with_capacity(diff.len() + 16);
    for line in diff.split_inclusive('\n') {
        let renumbered = diff::header_ranges(line)
            .and_then(|(old, new, tail)| Some(format!("@@ {} {} @@{tail}", shift(old)?, shift(new)?)));
        out.push_str(renumbered.as_deref().unwrap_or(line));
    }
    out
}

/// Build an edit from old/new text, with its diff.
pub fn edit_from_texts(
    step: Option<usize>,
    path: &str,
    kind: EditKind,
    status: EditStatus,
    old_text: Option<String>,
    new_text: Option<String>,
    lint: Vec<String>,
) -> Edit {
    let diff = match (&old_text, &new_text) {
        (Some(o), Some(n)) => unified_diff(path, o, n),
        (None, Some(n)) if kind == EditKind::Create => unified_diff(path, "", n),
        _ => None,
    };
    Edit {
        step,
        path: path.to_string(),
        kind,
        status,
        old_text,
        new_text,
        diff,
        lint_codes: lint,
        trace: EditTrace::default(),
    }
}

/// One file's part of a multi-file unified diff (`git diff` output).
#[derive(Debug, Clone, PartialEq)]
pub struct FilePatch {
    pub path: String,
    /// The file's section, from its `diff --git` (or `---`) line to the next file's.
    pub diff: String,
    /// Context and removed lines, in order (the "before" side of the hunks).
    pub old_text: String,
    /// Context and added lines, in order (the "after" side of the hunks).
    pub new_text: String,
}

/// Split a submission patch into per-file sections (read by [`diff::files`]), files that name
/// no path left out. Tolerates `\r\n` and leading blank lines; diffs joined without
/// `diff --git` are split per file, and a removed line that reads `--- ` stays in its hunk.
pub fn split_patch(patch: &str) -> Vec<FilePatch> {
    diff::files(patch)
        .into_iter()
        .filter_map(|f| {
            let path = f.path().filter(|p| !p.is_empty())?.to_string();
            let mut out = FilePatch {
                path,
                diff: String::with_capacity(f.text.len()),
                old_text: String::new(),
                new_text: String::new(),
            };
            for line in diff::lines(f.text) {
                out.diff.push_str(line);
                out.diff.push('\n');
            }
            for l in f.hunks.iter().flat_map(|h| &h.lines) {
                if l.mark != '+' {
                    out.old_text.push_str(l.text);
                    out.old_text.push('\n');
                }
                if l.mark != '-' {
                    out.new_text.push_str(l.text);
                    out.new_text.push('\n');
                }
            }
            Some(out)
        })
        .collect()
}

/// One hunk of a file's unified diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffHunk {
    /// Its `@@ -a,b +c,d @@` line.
    pub header: String,
    /// The hunk, header and lines.
    pub text: String,
    /// What it changes: its removed and added lines, in order, trailing blanks trimmed (line
    /// numbers and context left out, so the same change made at another line is the same).
    pub changes: Vec<String>,
}

/// The hunks of one file's section of a unified diff ([`FilePatch::diff`]), read by
/// `analysis::diff`.
pub fn hunks(file_diff: &str) -> Vec<DiffHunk> {
    diff::hunks(file_diff)
        .into_iter()
        .map(|h| DiffHunk {
            header: h.header.to_string(),
            text: h.text(),
            changes: h
                .lines
                .iter()
                .filter(|l| l.mark != ' ')
                .map(|l| format!("{}{}", l.mark, l.text).trim_end().to_string())
                .collect(),
        })
        .collect()
}

/// The final submission patch as per-file edits.
pub fn final_patch_edits(patch: &str) -> Vec<Edit> {
    split_patch(patch)
        .into_iter()
        .map(|f| Edit {
            step: None,
            path: f.path,
            kind: EditKind::FinalPatch,
            status: EditStatus::Unknown,
            old_text: Some(f.old_text),
            new_text: Some(f.new_text),
            diff: Some(f.diff),
            lint_codes: Vec::new(),
            trace: EditTrace::default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_documented_strings() {
        assert_eq!(
            edit_status(
                "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.\n\nERRORS:\n- E999 SyntaxError"
            ),
            EditStatus::RejectedByLinter
        );
        assert_eq!(
            edit_status("No replacement was performed, old_str `x` did not appear verbatim in /a.py."),
            EditStatus::RefusedByTool
        );
        assert_eq!(
            edit_status("The file /a.py has been edited. Here's the result of running `cat -n`"),
            EditStatus::Applied
        );
        // str_replace_editor applies and only warns: not a rejection.
        assert_eq!(
            edit_status("Your edits have been applied, but the linter has found syntax errors."),
            EditStatus::Applied
        );
        assert_eq!(
            edit_status("ERROR:\nParameter `old_str` is required for command: str_replace."),
            EditStatus::RefusedByTool
        );
        assert_eq!(edit_status(""), EditStatus::Unknown);
    }

    #[test]
    fn file_content_in_an_applied_observation_does_not_change_the_verdict() {
        for line in
            ["# The path to the config file", "# No occurrences of foo", "# Your changes have NOT been applied yet"]
        {
            let obs = format!(
                "The file /r/a.py has been edited. Here's the result of running `cat -n` on a snippet of /r/a.py:\n     1\t{line}\n     2\tx = 1\nReview the changes and make sure they are as expected."
            );
            assert_eq!(edit_status(&obs), EditStatus::Applied, "{line}");
        }
    }

    #[test]
    fn windowed_rejections_are_read_from_both_ends() {
        let obs = "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- F821 undefined name 'x'\n\nThis is how your edit would have looked if applied\n[File: /r/a.py (3 lines total)]\n1:File updated.\n\nYour changes have NOT been applied. Please fix your edit command and try again.";
        assert_eq!(edit_status(obs), EditStatus::RejectedByLinter);
        let openhands = "[Your proposed edit has introduced new syntax error(s). Please understand the errors and retry your edit command.]\n[This is how your edit would have looked if applied]";
        assert_eq!(edit_status(openhands), EditStatus::RejectedByLinter);
        // 0.x applied windowed edit: the file view, then "File updated."
        assert_eq!(
            edit_status("[File: /r/a.py (8 lines total)]\n1:x\nFile updated. Please review the changes."),
            EditStatus::Applied
        );
    }

    #[test]
    fn lint_codes_are_read_from_error_lines() {
        let obs =
            "ERRORS:\n- F821 undefined name 'x'\n- E999 SyntaxError: bad\n- F821 undefined name 'y'\n- not a code\n";
        assert_eq!(lint_codes(obs), vec!["F821", "E999"]);
    }

    #[test]
    fn patches_split_per_file_with_both_sides() {
        let patch = "\ndiff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\ndiff --git a/y/z.md b/y/z.md\nnew file mode 100644\n--- /dev/null\n+++ b/y/z.md\n@@ -0,0 +1 @@\n+hello\n";
        let files = split_patch(patch);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "x.py");
        assert_eq!(files[0].old_text, "keep\nold\n");
        assert_eq!(files[0].new_text, "keep\nnew\n");
        assert_eq!(files[1].path, "y/z.md");
        assert_eq!(files[1].new_text, "hello\n");
        assert!(files[1].diff.starts_with("diff --git a/y/z.md"));
    }

    /// Edits' diffs joined without `diff --git` (a run's edits when it submitted nothing): each
    /// file is its own, read by its hunks' counts. All were the first file's before, the next
    /// headers read as its removed and added lines.
    #[test]
    fn diffs_joined_without_git_headers_split_per_file() {
        let patch =
            "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n--- a/y.py\n+++ b/y.py\n@@ -3 +3 @@\n-a\n+b\n";
        let files = split_patch(patch);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["x.py", "y.py"]);
        assert_eq!((files[0].old_text.as_str(), files[0].new_text.as_str()), ("keep\nold\n", "keep\nnew\n"));
        assert_eq!((files[1].old_text.as_str(), files[1].new_text.as_str()), ("a\n", "b\n"));
    }

    /// A removed line whose text starts `-- ` (an SQL or Lua comment) is the hunk's, as its
    /// counts say; so is a context line whose space was trimmed.
    #[test]
    fn a_removed_comment_line_and_a_trimmed_context_line_stay_in_their_hunk() {
        let patch = "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,3 @@\n--- a comment\n\n select 1;\n+select 2;\n";
        let files = split_patch(patch);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].old_text, "-- a comment\n\nselect 1;\n");
        assert_eq!(files[0].new_text, "\nselect 1;\nselect 2;\n");
    }

    /// Issue 43: a removed line whose text starts `-- ` was left out of the hunk's changes.
    #[test]
    fn a_removed_comment_line_is_one_of_the_hunks_changes() {
        let diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- old note\n select 1;\n";
        let h = hunks(diff);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].changes, ["--- old note"]);
    }

    #[test]
    fn hunks_are_cut_at_their_headers_and_keep_their_changes() {
        let diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old \n+new\n@@ -10 +10 @@\n-a\n+b\n";
        let h = hunks(diff);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].header, "@@ -1,2 +1,2 @@");
        assert_eq!(h[0].changes, vec!["-old", "+new"]);
        assert_eq!(h[1].text, "@@ -10 +10 @@\n-a\n+b\n");
    }

    #[test]
    fn crlf_patches_split_too() {
        let patch = "\r\ndiff --git a/t.py b/t.py\r\n--- a/t.py\r\n+++ b/t.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
        let files = split_patch(patch);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "t.py");
        assert_eq!(files[0].new_text, "b\n");
    }

    #[test]
    fn snippet_diffs_are_renumbered_at_the_lines_they_replaced() {
        let diff = unified_diff("a.py", "x\ny\n", "x\nz\n").unwrap();
        let at = diff_at_line(&diff, 287);
        assert!(at.contains("@@ -287,2 +287,2 @@"), "{at}");
        assert!(at.starts_with("--- a/a.py\n+++ b/a.py\n"), "{at}");
        assert_eq!(diff_at_line(&diff, 1), diff);
        assert_eq!(diff_at_line("@@ -1 +1,2 @@\n-a\n+a\n+b\n", 10), "@@ -10 +10,2 @@\n-a\n+a\n+b\n");
        assert_eq!(diff_at_line("@@ -0,0 +1 @@\n+a\n", 5), "@@ -4,0 +5 @@\n+a\n");
        assert_eq!(diff_at_line("@@  +1 @@\n+a\n", 5), "@@  +1 @@\n+a\n", "an empty range is left as it is");
    }

    #[test]
    fn texts_sharing_no_line_get_the_diff_myers_gives() {
        let myers = |old: &str, new: &str| {
            TextDiff::from_lines(old, new).unified_diff().context_radius(3).header("a/x", "b/x").to_string()
        };
        // Which lines Myers removes and adds, when none is equal, depends on the counts alone.
        let mut checked = 0;
        for n in (8..=40).chain([180]) {
            for m in (8..=40).chain([179]) {
                for ends in [(true, true), (false, true), (true, false), (false, false)] {
                    let mut old: String = (0..n).map(|i| format!("old {i} {}\n", i * 7 % 5)).collect();
                    let mut new: String = (0..m).map(|i| format!("new {i}\n")).collect();
                    for (text, ends) in [(&mut old, ends.0), (&mut new, ends.1)] {
                        if !ends {
                            text.pop();
                        }
                    }
                    assert_eq!(disjoint_diff(&old, &new, "a/x", "b/x"), Some(myers(&old, &new)), "{n} {m} {ends:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 34 * 34 * 4);
        // A line in common (even the last, without its newline): Myers.
        let (old, new) = ("a\nb\nc\nd\ne\nf\ng\nh\n", "1\n2\n3\n4\n5\n6\n7\nh\n");
        assert_eq!(disjoint_diff(old, new, "a/x", "b/x"), None);
        let (old, new) = ("a\nb\nc\nd\ne\nf\ng\nh", "1\n2\n3\n4\n5\n6\n7\nh\n");
        assert_eq!(disjoint_diff(old, new, "a/x", "b/x"), Some(myers(old, new)));
        assert_eq!(unified_diff("x", old, new), Some(myers(old, new)));
    }

    #[test]
    fn diffs_are_drawn_only_for_changes() {
        assert!(unified_diff("a.py", "x\n", "x\n").is_none());
        let d = unified_diff("/repo/a.py", "x\n", "y\n").unwrap_or_default();
        assert!(d.contains("--- a/repo/a.py") && d.contains("-x") && d.contains("+y"), "{d}");
    }
}
