//! The diff as data: files, hunks, lines with their numbers. Built from two texts (similar) or
//! parsed from a unified diff (`git diff`, OpenHands patches). Text is borrowed raw: sanitizing
//! happens when lines are painted.

use std::borrow::Cow;
use std::time::Duration;

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
    /// Opened by `diff ...` and not yet given its `---`/`+++` pair.
    awaiting_paths: bool,
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

    fn note(&mut self, note: &'static str) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
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

/// A path from `--- a/x` / `+++ b/x` (timestamp after a tab dropped); `None` for /dev/null.
fn header_path(rest: &str, prefix: &str) -> Option<String> {
    let rest = rest.split('\t').next().unwrap_or(rest).trim_end();
    let rest = unquote(rest);
    if rest == "/dev/null" {
        return None;
    }
    Some(rest.strip_prefix(prefix).unwrap_or(&rest).to_string())
}

fn unquote(s: &str) -> Cow<'_, str> {
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => Cow::Owned(inner.replace("\\\"", "\"").replace("\\\\", "\\")),
        None => Cow::Borrowed(s),
    }
}

/// Paths from `diff --git a/x b/y` (best effort: `---`/`+++` lines, when present, win).
fn diff_git_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim_end();
    if let Some(inner) = rest.strip_prefix("a/")
        && let Some(at) = inner.rfind(" b/")
    {
        return (Some(inner[..at].to_string()), Some(inner[at + 3..].to_string()));
    }
    if let Some(inner) = rest.strip_prefix("\"a/")
        && let Some(at) = inner.rfind("\" \"b/")
    {
        let new = inner[at + 5..].strip_suffix('"').unwrap_or(&inner[at + 5..]);
        return (Some(inner[..at].to_string()), Some(new.to_string()));
    }
    (None, Some(rest.to_string()))
}

struct Parser<'a> {
    files: Vec<FileDiff<'a>>,
    fallback: &'a str,
    /// Lines still expected by the current hunk header (old, new).
    left: (usize, usize),
    /// Next line numbers (old, new).
    next: (usize, usize),
    /// Inside a hunk whose counts are spent or unknown: `+`/`-`/` ` lines still belong to it.
    lenient: bool,
    /// The hunk names its lines (`@@ -?,2 +?,2 @@`, `@@ -0,3 +0,4 @@`: not placed, so its
    /// lines get no numbers).
    placed: bool,
    in_binary: bool,
}

impl<'a> Parser<'a> {
    fn file(&mut self) -> &mut FileDiff<'a> {
        if self.files.is_empty() {
            let path = (!self.fallback.is_empty()).then(|| self.fallback.to_string());
            self.files.push(FileDiff { old_path: path.clone(), new_path: path, ..FileDiff::default() });
        }
        self.files.last_mut().expect("just pushed")
    }

    fn new_file(&mut self, file: FileDiff<'a>) {
        self.files.push(file);
        self.left = (0, 0);
        self.lenient = false;
        self.in_binary = false;
    }

    fn body(&mut self, kind: Kind, text: &'a str) {
        let (old_no, new_no) = match kind {
            _ if !self.placed => (None, None),
            Kind::Context => (Some(self.next.0), Some(self.next.1)),
            Kind::Removed => (Some(self.next.0), None),
            Kind::Added => (None, Some(self.next.1)),
        };
        if old_no.is_some() {
            self.next.0 += 1;
            self.left.0 = self.left.0.saturating_sub(1);
        }
        if new_no.is_some() {
            self.next.1 += 1;
            self.left.1 = self.left.1.saturating_sub(1);
        }
        let line = DiffLine { kind, text, old_no, new_no, no_newline: false };
        if let Some(hunk) = self.file().hunks.last_mut() {
            hunk.lines.push(line);
        }
    }

    fn no_newline(&mut self) {
        if let Some(line) = self.files.last_mut().and_then(|f| f.hunks.last_mut()).and_then(|h| h.lines.last_mut()) {
            line.no_newline = true;
        }
    }

    /// A line inside a hunk, by its first byte; `false` when it is not a body line.
    fn body_line(&mut self, line: &'a str, blank_is_context: bool) -> bool {
        match line.as_bytes().first() {
            Some(b' ') => self.body(Kind::Context, &line[1..]),
            None if blank_is_context => self.body(Kind::Context, ""),
            Some(b'-') => self.body(Kind::Removed, &line[1..]),
            Some(b'+') => self.body(Kind::Added, &line[1..]),
            Some(b'\\') => self.no_newline(),
            _ => return false,
        }
        true
    }

    fn header(&mut self, line: &'a str, next_line: Option<&str>) -> usize {
        if let Some(rest) = line.strip_prefix("diff ") {
            let (old_path, new_path) = match rest.strip_prefix("--git ") {
                Some(paths) => diff_git_paths(paths),
                None => (None, Some(rest.to_string())),
            };
            self.new_file(FileDiff { old_path, new_path, awaiting_paths: true, ..FileDiff::default() });
            return 1;
        }
        if let (Some(old), Some(new)) = (line.strip_prefix("--- "), next_line.and_then(|n| n.strip_prefix("+++ "))) {
            let reuse = self.files.last().is_some_and(|f| f.awaiting_paths && f.hunks.is_empty());
            if !reuse {
                self.new_file(FileDiff::default());
            }
            self.lenient = false;
            let file = self.file();
            file.awaiting_paths = false;
            file.old_path = header_path(old, "a/");
            file.new_path = header_path(new, "b/");
            match (&file.old_path, &file.new_path) {
                (None, Some(_)) => file.note("new file"),
                (Some(_), None) => file.note("deleted"),
                _ => {}
            }
            return 2;
        }
        if line.starts_with("@@") {
            let parsed = crate::analysis::diff::hunk_counts(line);
            self.placed = parsed.is_some_and(crate::analysis::diff::placed);
            let (old_start, old_count, new_start, new_count) = parsed.unwrap_or((1, 0, 1, 0));
            self.file().hunks.push(Hunk { header: Cow::Borrowed(line), lines: Vec::new() });
            self.left = (old_count, new_count);
            // A count of 0 gives the line *before* the hunk; numbering starts after it.
            self.next = (old_start.max(1), new_start.max(1));
            self.lenient = true;
            self.in_binary = false;
            return 1;
        }
        if self.lenient && self.body_line(line, false) {
            return 1;
        }
        self.meta(line);
        1
    }

    /// git's extended headers become notes; other text is kept as meta lines.
    fn meta(&mut self, line: &'a str) {
        if self.in_binary {
            self.in_binary = !line.is_empty();
            return;
        }
        if line.trim().is_empty() || line.starts_with("index ") || line.contains("similarity index ") {
            return;
        }
        let file = self.file();
        if line.starts_with("new file mode") {
            file.note("new file");
        } else if line.starts_with("deleted file mode") {
            file.note("deleted");
        } else if line.starts_with("old mode ") || line.starts_with("new mode ") {
            file.note("mode changed");
        } else if let Some(path) = line.strip_prefix("rename from ").or_else(|| line.strip_prefix("copy from ")) {
            file.old_path = Some(unquote(path).into_owned());
        } else if let Some(path) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("copy to ")) {
            file.new_path = Some(unquote(path).into_owned());
        } else if line.starts_with("Binary files ") {
            file.note("binary");
        } else if line == "GIT binary patch" {
            file.note("binary");
            self.in_binary = true;
        } else {
            file.meta.push(line);
        }
    }
}

/// Parse a unified diff, possibly of several files, with `\r\n` line ends. Hunks before any file
/// header belong to `fallback`. Never fails: unknown lines are kept as meta lines.
pub fn parse_unified<'a>(text: &'a str, fallback: &'a str) -> Vec<FileDiff<'a>> {
    let lines: Vec<&str> = text.split_inclusive('\n').map(strip_eol).collect();
    let mut p = Parser {
        files: Vec::new(),
        fallback,
        left: (0, 0),
        next: (1, 1),
        lenient: false,
        in_binary: false,
        placed: true,
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        // While the hunk header's counts last, `+`/`-`/` ` lines are body, even `--- x`.
        if p.left != (0, 0) && p.body_line(line, true) {
            i += 1;
            continue;
        }
        p.left = (0, 0);
        i += p.header(line, lines.get(i + 1).copied());
    }
    p.files
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
