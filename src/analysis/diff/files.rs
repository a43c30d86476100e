//! A diff split into its files: `git diff` output (`diff --git`, extended headers, `---` /
//! `+++`), diffs joined without `diff --git` (each `---` / `+++` pair opens a file), and hunks
//! that name no file (a file without paths).

use super::hunk::{Hunk, lines, read_hunk};

/// One file of a diff: what its headers say, and its hunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct File<'a> {
    /// The file's part of the diff: from its first line (its `diff` or `---` line, or the first
    /// line of text before any header) to the next file's.
    pub text: &'a str,
    /// The paths, `a/` or `b/` removed, unquoted; `None` for `/dev/null` or when not named.
    /// `rename from` / `rename to` (and `copy`) set them too.
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    /// The path as the `+++` line writes it (the `---` line's for a deletion), prefix kept
    /// (for `patch -pN`); from `diff --git` (`b/...`) when no `+++` follows.
    pub raw_path: Option<String>,
    /// `new file mode`, or `--- /dev/null`.
    pub new_file: bool,
    /// `deleted file mode`, or `+++ /dev/null`.
    pub deleted: bool,
    /// `old mode` / `new mode`.
    pub mode_changed: bool,
    /// `Binary files ... differ` or `GIT binary patch`.
    pub binary: bool,
    /// Lines that are no header and no hunk (a commit message before the diff...), blank lines,
    /// `index` and `similarity index` lines aside.
    pub meta: Vec<&'a str>,
    pub hunks: Vec<Hunk<'a>>,
    /// Opened by a `diff` line and not yet given its `---` / `+++` pair.
    awaiting_paths: bool,
}

impl File<'_> {
    /// The file's path: the new one, else the old one (a deletion).
    pub fn path(&self) -> Option<&str> {
        self.new_path.as_deref().or(self.old_path.as_deref())
    }
}

/// A header's path: a tab and what follows (a timestamp) dropped, unquoted; `None` for
/// `/dev/null`.
fn header_path(rest: &str) -> Option<String> {
    let raw = unquote(rest.split('\t').next().unwrap_or(rest).trim());
    (raw != "/dev/null").then_some(raw)
}

fn unprefixed(raw: &str) -> String {
    raw.strip_prefix("a/").or_else(|| raw.strip_prefix("b/")).unwrap_or(raw).to_string()
}

fn unquote(s: &str) -> String {
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_string(),
    }
}

/// Paths from `diff --git a/x b/y` (best effort: `---` / `+++` lines, when present, win).
fn git_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim_end();
    if let Some(inner) = rest.strip_prefix("a/")
        && let Some((old, new)) = inner.rsplit_once(" b/")
    {
        return (Some(old.to_string()), Some(new.to_string()));
    }
    if let Some(inner) = rest.strip_prefix("\"a/")
        && let Some((old, new)) = inner.rsplit_once("\" \"b/")
    {
        return (Some(unquote(&format!("\"{old}\""))), Some(unquote(&format!("\"{new}"))));
    }
    (None, Some(rest.to_string()))
}

/// A line's byte offset in `text`, of which it is a part.
fn offset(text: &str, line: &str) -> usize {
    (line.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len())
}

/// The files of a (possibly multi-file) unified diff, `\r\n` line ends read as `\n`. Never
/// fails: text that is no header and no hunk is kept as a file's meta lines.
pub fn files(text: &str) -> Vec<File<'_>> {
    let lines = lines(text);
    let mut files: Vec<File<'_>> = Vec::new();
    // Where each file starts in `text`.
    let mut starts: Vec<usize> = Vec::new();
    let mut open = |files: &mut Vec<File<'_>>, file, at: &str| {
        starts.push(offset(text, at));
        files.push(file);
    };
    // Inside a `GIT binary patch` (until a blank line).
    let mut in_binary = false;
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        i += 1;
        if let Some(rest) = line.strip_prefix("diff ") {
            let (old_path, new_path) = match rest.strip_prefix("--git ") {
                Some(paths) => git_paths(paths),
                None => (None, Some(rest.to_string())),
            };
            let raw_path = new_path.as_ref().map(|p| format!("b/{p}"));
            open(&mut files, File { old_path, new_path, raw_path, awaiting_paths: true, ..File::default() }, line);
            in_binary = false;
            continue;
        }
        if let (Some(old), Some(new)) = (line.strip_prefix("--- "), lines.get(i).and_then(|n| n.strip_prefix("+++ "))) {
            i += 1;
            if !files.last().is_some_and(|f| f.awaiting_paths && f.hunks.is_empty()) {
                open(&mut files, File::default(), line);
            }
            in_binary = false;
            let Some(f) = files.last_mut() else { continue };
            f.awaiting_paths = false;
            let (old, new) = (header_path(old), header_path(new));
            f.new_file |= old.is_none();
            f.deleted |= new.is_none();
            f.raw_path = new.clone().or_else(|| old.clone());
            f.old_path = old.as_deref().map(unprefixed);
            f.new_path = new.as_deref().map(unprefixed);
            continue;
        }
        if line.starts_with("@@") {
            if files.is_empty() {
                open(&mut files, File::default(), line);
            }
            let (hunk, next) = read_hunk(&lines, i - 1);
            i = next;
            in_binary = false;
            if let Some(f) = files.last_mut() {
                f.hunks.push(hunk);
            }
            continue;
        }
        if in_binary {
            in_binary = !line.is_empty();
            continue;
        }
        if line.trim().is_empty() || line.starts_with("index ") || line.contains("similarity index ") {
            continue;
        }
        if files.is_empty() {
            open(&mut files, File::default(), line);
        }
        let Some(f) = files.last_mut() else { continue };
        if line.starts_with("new file mode") {
            f.new_file = true;
        } else if line.starts_with("deleted file mode") {
            f.deleted = true;
        } else if line.starts_with("old mode ") || line.starts_with("new mode ") {
            f.mode_changed = true;
        } else if let Some(path) = line.strip_prefix("rename from ").or_else(|| line.strip_prefix("copy from ")) {
            f.old_path = Some(unquote(path));
        } else if let Some(path) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("copy to ")) {
            f.new_path = Some(unquote(path));
        } else if line.starts_with("Binary files ") {
            f.binary = true;
        } else if line == "GIT binary patch" {
            f.binary = true;
            in_binary = true;
        } else {
            f.meta.push(line);
        }
    }
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    for ((f, start), end) in files.iter_mut().zip(starts.iter().copied()).zip(ends) {
        f.text = text.get(start..end.max(start)).unwrap_or("");
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_headers_give_paths_renames_and_markers() {
        let diff = "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n\
                    diff --git a/n.rs b/n.rs\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.rs\n\
                    @@ -0,0 +1 @@\n+fn f() {}\n\\ No newline at end of file\n\
                    diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n\
                    diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let files = files(diff);
        assert_eq!(files.len(), 4);
        assert_eq!((files[0].old_path.as_deref(), files[0].new_path.as_deref()), (Some("old.py"), Some("new.py")));
        assert!(files[0].hunks.is_empty() && files[0].meta.is_empty());
        assert!(files[1].new_file && !files[1].deleted);
        assert_eq!((files[1].path(), files[1].raw_path.as_deref()), (Some("n.rs"), Some("b/n.rs")));
        let line = files[1].hunks[0].lines[0];
        assert_eq!((line.mark, line.text, line.new_no, line.no_newline), ('+', "fn f() {}", Some(1), true));
        assert!(files[1].text.starts_with("diff --git a/n.rs") && files[1].text.ends_with("file\n"));
        assert!(files[2].binary && files[2].hunks.is_empty());
        assert!(
            files[3].deleted && files[3].path() == Some("gone.py") && files[3].raw_path.as_deref() == Some("a/gone.py")
        );
    }

    /// Diffs joined without `diff --git`: each `---` / `+++` pair after a hunk is a file's,
    /// and a removed `-- ` line within the counts is the hunk's.
    #[test]
    fn diffs_joined_without_git_headers_are_files_of_their_own() {
        let diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- note\n select 1;\n--- a/r.sql\t2024-01-01\n+++ b/r.sql\n@@ -1 +1 @@\n-x\n+y\n";
        let files = files(diff);
        let paths: Vec<Option<&str>> = files.iter().map(File::path).collect();
        assert_eq!(paths, [Some("q.sql"), Some("r.sql")]);
        assert_eq!(files[0].hunks[0].lines[0].text, "-- note");
        assert_eq!(files[1].text, "--- a/r.sql\t2024-01-01\n+++ b/r.sql\n@@ -1 +1 @@\n-x\n+y\n");
    }

    #[test]
    fn text_before_any_header_is_a_file_without_paths() {
        let files = files("\nSome commit message\n@@ -3 +3 @@\n-a\n+b\n");
        assert_eq!(files.len(), 1);
        assert_eq!((files[0].path(), files[0].meta.as_slice()), (None, &["Some commit message"][..]));
        assert_eq!(files[0].hunks[0].lines[1].new_no, Some(3));
        let quoted = files_of("diff --git \"a/sp ace.py\" \"b/sp ace.py\"\n");
        assert_eq!(quoted, [Some("sp ace.py".to_string())]);
    }

    fn files_of(diff: &str) -> Vec<Option<String>> {
        files(diff).iter().map(|f| f.path().map(str::to_string)).collect()
    }
}
