//! The one reader of unified diffs: a diff's files (their `diff --git` / `---` / `+++` headers,
//! renames, new, deleted and binary files) and each file's hunks (the `@@ -a,b +c,d @@` header
//! and the lines it counts, numbered on each side, `\ No newline at end of file` marked). A hunk
//! is read by its counts, so a removed line whose text starts `-- ` (an SQL, Lua or Haskell
//! comment: `--- x` in the diff) is the hunk's, and a `--- a/file` after the counts are read is
//! the next file's header. A header without numbers (`@@`, a hand-written hunk) leaves the hunk
//! open until a line that is no hunk line (` `, `-`, `+`, `\`, or empty).
//!
//! Every place that reads a diff reads it here: the patch replay, a submission split per file,
//! the symbols of a diff, a Python hunk's scopes, the classifier's hunks and changed lines, the
//! TUI's diff view and the HTML report's diff colouring.

mod files;
mod hunk;
pub use files::{File, files};
pub use hunk::{Hunk, Line, header_ranges, hunk_counts, lines, placed, section};

/// The hunks of a diff (its headers and other lines passed over), in order. A hunk with no line
/// is left out.
pub fn hunks(diff: &str) -> Vec<Hunk<'_>> {
    files(diff).into_iter().flat_map(|f| f.hunks).filter(|h| !h.lines.is_empty()).collect()
}

/// The removed and added lines of a diff's hunks, in order (context left out): a line whose
/// text starts `-- ` or `++ ` is one of them, not a file header.
pub fn changed_lines(diff: &str) -> Vec<Line<'_>> {
    files(diff).into_iter().flat_map(|f| f.hunks).flat_map(|h| h.lines).filter(|l| l.mark != ' ').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_parse_with_and_without_counts() {
        assert_eq!(hunk_counts("@@ -1,3 +1,4 @@ fn main()"), Some((1, 3, 1, 4)));
        assert_eq!(hunk_counts("@@ -5 +5 @@"), Some((5, 1, 5, 1)));
        assert_eq!(hunk_counts("@@ -0,0 +1,2 @@"), Some((0, 0, 1, 2)));
        assert_eq!(hunk_counts("@@ -?,2 +?,3 @@"), Some((0, 2, 0, 3)));
        assert_eq!(hunk_counts("@@ garbage @@"), None);
        assert!(placed((0, 0, 1, 2)) && placed((7, 1, 7, 1)));
        assert!(!placed((0, 2, 0, 3)));
    }

    /// The disagreement of issue 43: a removed `-- ` comment line is the hunk's, numbered on
    /// the old side, and the next file's `--- a/` header after the counts is not.
    #[test]
    fn a_removed_comment_line_is_the_hunks_and_the_next_header_is_not() {
        let diff = "--- a/q.sql\n+++ b/q.sql\n@@ -10,3 +10,2 @@ CREATE VIEW v\n--- old comment\n select 1;\n-select 2;\n+select 3;\n--- a/r.sql\n+++ b/r.sql\n@@ -1 +1 @@\n-x\n+y\n";
        let h = hunks(diff);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].section(), "CREATE VIEW v");
        let marks: Vec<(char, &str, Option<usize>, Option<usize>)> =
            h[0].lines.iter().map(|l| (l.mark, l.text, l.old_no, l.new_no)).collect();
        assert_eq!(
            marks,
            [
                ('-', "-- old comment", Some(10), None),
                (' ', "select 1;", Some(11), Some(10)),
                ('-', "select 2;", Some(12), None),
                ('+', "select 3;", None, Some(11)),
            ]
        );
        assert_eq!(h[1].text(), "@@ -1 +1 @@\n-x\n+y\n");
    }

    #[test]
    fn a_header_without_numbers_reads_until_a_line_no_hunk_has() {
        let diff = "@@\n a\n-b\n+c\n\n\\ No newline at end of file\n--- a/next\n+++ b/next\n@@ -1 +1 @@\n-d\n+e\n";
        let h = hunks(diff);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].counts, None);
        let texts: Vec<&str> = h[0].lines.iter().map(|l| l.text).collect();
        assert_eq!(texts, ["a", "b", "c", ""]);
        assert_eq!(h[1].lines.len(), 2);
    }
}
