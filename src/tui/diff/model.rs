//! The diff as data: files, hunks, lines with their numbers. Built from two texts (similar) or
//! read from a unified diff (`git diff`, OpenHands patches) by `analysis::diff`, the one diff
//! reader. Text is borrowed raw: sanitizing happens when lines are painted.

use std::borrow::Cow;
use std::time::Duration;

use crate::analysis::diff;
use similar::udiff::UnifiedHunkHeader;
use similar::{ChangeTag, TextDiff};

/// Context lines around each change, as `diff -u`.
pub const CONTEXT_LINES: usize = 3;
/// Myers on two huge, very different texts is quadratic: past this, similar settles for a
/// coarser (still correct) diff.
const LINE_DIFF_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Context,
    Removed,
    Added,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine<'a> {
    pub kind: Kind,
    /// Without its line terminator.
    pub text: &'a str,
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
    /// Followed by `\ No newline at end of file`.
    pub no_newline: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    pub header: Cow<'a, str>,
    pub lines: Vec<DiffLine<'a>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff<'a> {
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    /// "new file", "deleted", "binary"...: shown after the title.
    pub notes: Vec<&'static str>,
    /// Lines that are neither headers nor hunks (a commit message before the diff...).
    pub meta: Vec<&'a str>,
    pub hunks: Vec<Hunk<'a>>,
}

impl FileDiff<'_> {
    /// What the file header shows: `new`, or `old → new` for a rename.
    pub fn title(&self) -> Option<String> {
        match (&self.old_path, &self.new_path) {
            (Some(old), Some(new)) if old != new => Some(format!("{old} → {new}")),
            (_, Some(path)) | (Some(path), None) => Some(path.clone()),
            (None, None) => None,
        }
    }

    /// The path whose extension picks the syntax.
    pub fn syntax_path<'p>(&'p self, fallback: &'p str) -> &'p str {
        self.new_path.as_deref().or(self.old_path.as_deref()).unwrap_or(fallback)
    }
}

fn strip_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// Line diff of two texts, [`CONTEXT_LINES`] of context. Empty when they are equal.
pub fn line_diff<'t>(old: &'t str, new: &'t str) -> TextDiff<'t, 't, str> {
    TextDiff::configure().timeout(LINE_DIFF_TIMEOUT).diff_lines(old, new)
}

/// One file from a line diff (none when nothing changed).
pub fn from_text_diff<'d>(diff: &'d TextDiff<'_, '_, str>, path: &str) -> Vec<FileDiff<'d>> {
    let groups = diff.grouped_ops(CONTEXT_LINES);
    if groups.is_empty() {
        return Vec::new();
    }
    let path = (!path.is_empty()).then(|| path.to_string());
    let mut file = FileDiff { old_path: path.clone(), new_path: path, ..FileDiff::default() };
    for group in groups {
        let header = UnifiedHunkHeader::new(&group).to_string();
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => Kind::Context,
                    ChangeTag::Delete => Kind::Removed,
                    ChangeTag::Insert => Kind::Added,
                };
                lines.push(DiffLine {
                    kind,
                    text: strip_eol(change.value()),
                    old_no: change.old_index().map(|i| i + 1),
                    new_no: change.new_index().map(|i| i + 1),
                    no_newline: change.missing_newline(),
                });
            }
        }
        file.hunks.push(Hunk { header: Cow::Owned(header), lines });
    }
    vec![file]
}

/// A unified diff, possibly of several files, with `\r\n` line ends, as `analysis::diff` reads
/// it. Hunks before any file header belong to `fallback`. Never fails: unknown lines are kept
/// as meta lines. A hunk not placed (`@@ -?,2 +?,2 @@`, `@@ -0,3 +0,4 @@`, `@@`) numbers no line.
pub fn parse_unified<'a>(text: &'a str, fallback: &'a str) -> Vec<FileDiff<'a>> {
    diff::files(text)
        .into_iter()
        .map(|f| {
            let notes = [
                (f.new_file, "new file"),
                (f.deleted, "deleted"),
                (f.mode_changed, "mode changed"),
                (f.binary, "binary"),
            ]
            .into_iter()
            .filter_map(|(on, note)| on.then_some(note))
            .collect();
            let (old_path, new_path) = match (f.old_path, f.new_path) {
                (None, None) => {
                    let path = (!fallback.is_empty()).then(|| fallback.to_string());
                    (path.clone(), path)
                }
                paths => paths,
            };
            let hunks = f.hunks.into_iter().map(hunk).collect();
            FileDiff { old_path, new_path, notes, meta: f.meta, hunks }
        })
        .collect()
}

fn hunk(h: diff::Hunk<'_>) -> Hunk<'_> {
    let placed = h.placed();
    let lines = h
        .lines
        .iter()
        .map(|l| DiffLine {
            kind: match l.mark {
                '-' => Kind::Removed,
                '+' => Kind::Added,
                _ => Kind::Context,
            },
            text: l.text,
            old_no: l.old_no.filter(|_| placed),
            new_no: l.new_no.filter(|_| placed),
            no_newline: l.no_newline,
        })
        .collect();
    Hunk { header: Cow::Borrowed(h.header), lines }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_line_starting_with_dashes_stays_in_its_hunk() {
        let diff = "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,1 @@\n--- a rule\n keep\n";
        let files = parse_unified(diff, "");
        assert_eq!(files.len(), 1);
        let lines = &files[0].hunks[0].lines;
        assert_eq!(
            lines[0],
            DiffLine { kind: Kind::Removed, text: "-- a rule", old_no: Some(1), new_no: None, no_newline: false }
        );
        assert_eq!((lines[1].old_no, lines[1].new_no), (Some(2), Some(1)));
    }

    #[test]
    fn git_headers_give_paths_and_notes() {
        let diff = "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n\
                    diff --git a/n.rs b/n.rs\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.rs\n\
                    @@ -0,0 +1 @@\n+fn f() {}\n\\ No newline at end of file\n\
                    diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n";
        let files = parse_unified(diff, "fallback.txt");
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].title().as_deref(), Some("old.py → new.py"));
        assert!(files[0].hunks.is_empty() && files[0].meta.is_empty());
        assert_eq!(files[1].title().as_deref(), Some("n.rs"));
        assert_eq!(files[1].notes, ["new file"]);
        let line = &files[1].hunks[0].lines[0];
        assert_eq!((line.kind, line.text, line.new_no, line.no_newline), (Kind::Added, "fn f() {}", Some(1), true));
        assert_eq!(files[2].notes, ["binary"]);
    }

    #[test]
    fn bare_hunks_belong_to_the_fallback_path_and_other_text_is_meta() {
        let files = parse_unified("Some commit message\n@@ -3,1 +3,1 @@\n-a\n+b\n", "src/x.go");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].title().as_deref(), Some("src/x.go"));
        assert_eq!(files[0].meta, ["Some commit message"]);
        assert_eq!(files[0].hunks[0].lines.len(), 2);
        assert_eq!(files[0].hunks[0].lines[1].new_no, Some(3));
    }

    #[test]
    fn lenient_hunks_without_counts_keep_their_lines() {
        let files = parse_unified("--- a/x\n+++ b/x\n@@ @@\n-a\n+b\n c\n", "");
        assert_eq!(files[0].hunks[0].lines.len(), 3);
    }

    #[test]
    fn hunks_not_placed_number_no_line() {
        // A script's own text (`-?`) and lines past a length never shown (`-0,2`): no number
        // is made up; a placed hunk after them is numbered again.
        let text = "--- a/x\n+++ b/x\n@@ -?,1 +?,2 @@ not placed\n-a\n+b\n+c\n@@ -0,2 +0,2 @@ (where: ...)\n-d\n+e\n x\n@@ -7 +7 @@\n-f\n+g\n";
        let files = parse_unified(text, "");
        let numbers: Vec<Vec<_>> =
            files[0].hunks.iter().map(|h| h.lines.iter().map(|l| (l.old_no, l.new_no)).collect()).collect();
        assert_eq!(numbers[0], [(None, None); 3]);
        assert_eq!(numbers[1], [(None, None); 3]);
        assert_eq!(numbers[2], [(Some(7), None), (None, Some(7))]);
    }

    #[test]
    fn equal_texts_give_no_files_and_text_diffs_number_lines() {
        let same = line_diff("a\nb\n", "a\nb\n");
        assert!(from_text_diff(&same, "x").is_empty());
        let diff = line_diff("a\nb\nc\n", "a\nB\nc");
        let files = from_text_diff(&diff, "x.txt");
        let hunk = &files[0].hunks[0];
        assert_eq!(hunk.header, "@@ -1,3 +1,3 @@");
        let kinds: Vec<_> = hunk.lines.iter().map(|l| (l.kind, l.text, l.old_no, l.new_no)).collect();
        assert_eq!(
            kinds,
            [
                (Kind::Context, "a", Some(1), Some(1)),
                (Kind::Removed, "b", Some(2), None),
                (Kind::Removed, "c", Some(3), None),
                (Kind::Added, "B", None, Some(2)),
                (Kind::Added, "c", None, Some(3)),
            ]
        );
        assert!(hunk.lines[4].no_newline);
    }
}
