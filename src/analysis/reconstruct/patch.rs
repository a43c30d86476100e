//! Unified diffs as files and hunks with their line numbers: the submitted patch (whose old
//! side is the file as the repository had it), `git diff` output (whose new side is a view),
//! and `git apply` / `patch` input, applied to a file's known lines.

use super::known::{EditId, Known, Seg};
use super::sed::Unsupported;
use crate::analysis::diff;
use std::rc::Rc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub header: String,
    pub old_start: usize,
    pub old_count: usize,
    pub new_start: usize,
    pub new_count: usize,
    /// `' '`, `'-'` or `'+'` and the line's text.
    pub lines: Vec<(char, String)>,
}

impl Hunk {
    /// The old side (context and removed lines) or the new side.
    pub fn side(&self, new: bool) -> Vec<Rc<str>> {
        let skip = if new { '-' } else { '+' };
        self.lines.iter().filter(|(m, _)| *m != skip).map(|(_, t)| Rc::from(t.as_str())).collect()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    /// The path as the `+++` line (or `---` for a deletion) names it, `b/` removed.
    pub path: String,
    /// The path as written, prefix kept (for `patch -pN`).
    pub raw_path: String,
    pub new_file: bool,
    pub deleted: bool,
    pub hunks: Vec<Hunk>,
}

/// Parse a (possibly multi-file) unified diff, read by [`diff::files`]: files that name a path
/// or hold hunks, and their hunks with numbers (a hunk header without them is passed over).
pub fn parse(text: &str) -> Vec<FileDiff> {
    diff::files(text)
        .into_iter()
        .filter(|f| f.path().is_some_and(|p| !p.is_empty()) || !f.hunks.is_empty())
        .map(|f| FileDiff {
            path: f.path().unwrap_or_default().to_string(),
            raw_path: f.raw_path.clone().unwrap_or_default(),
            new_file: f.new_file,
            deleted: f.deleted,
            hunks: f
                .hunks
                .iter()
                .filter_map(|h| {
                    let (old_start, old_count, new_start, new_count) = h.counts?;
                    let lines = h.lines.iter().map(|l| (l.mark, l.text.to_string())).collect();
                    Some(Hunk { header: h.header.to_string(), old_start, old_count, new_start, new_count, lines })
                })
                .collect(),
        })
        .collect()
}

/// Strip `n` leading components of a path (`patch -pN`).
pub fn strip_components(path: &str, n: usize) -> String {
    let mut p = path;
    for _ in 0..n {
        match p.split_once('/') {
            Some((_, rest)) => p = rest,
            None => break,
        }
    }
    p.to_string()
}

/// Write what a patch's old side says the file held before (the repository's text).
pub fn seed(known: &mut Known, file: &FileDiff) {
    if file.new_file {
        *known = Known::empty();
        return;
    }
    for h in &file.hunks {
        let old = h.side(false);
        if h.old_start > 0 && !old.is_empty() {
            known.show(h.old_start, &old);
        }
    }
}

/// Apply a file's hunks (reversed for `git apply -R`) as edit `edit`. A hunk is placed at its
/// line when the known lines there agree, else where they do nearby; the lines never shown are
/// trusted to hold what the hunk says.
pub fn apply(known: &mut Known, file: &FileDiff, edit: EditId, reverse: bool) -> Result<(), Unsupported> {
    if file.new_file && !reverse {
        let mut fresh = Known::empty();
        for h in &file.hunks {
            let lines = h.side(true);
            let n = fresh.segs.len();
            fresh.splice(n..n, lines, Some(edit));
        }
        *known = fresh;
        return Ok(());
    }
    let mut offset: isize = 0;
    for h in &file.hunks {
        let (from_mark, start) = if reverse { ('+', h.new_start) } else { ('-', h.old_start) };
        let old: Vec<(char, &str)> = h
            .lines
            .iter()
            .filter(|(m, _)| *m != if reverse { '-' } else { '+' })
            .map(|(m, t)| (if *m == from_mark { '-' } else { ' ' }, t.as_str()))
            .collect();
        let new_lines: Vec<(char, &str)> = h
            .lines
            .iter()
            .map(|(m, t)| {
                let m = match (*m, reverse) {
                    ('+', true) => '-',
                    ('-', true) => '+',
                    (m, _) => m,
                };
                (m, t.as_str())
            })
            .collect();
        let stated = (start as isize + offset).max(1) as usize;
        let at =
            place(known, stated, &old).ok_or_else(|| Unsupported("a hunk whose lines differ from the file".into()))?;
        offset += at as isize - stated as isize;
        let count = old.len();
        let range = if count == 0 {
            // An insertion after line `at - 1`.
            let i = if at <= 1 {
                0
            } else {
                known.materialize(at - 1, false).map(|i| i + 1).ok_or_else(|| Unsupported("past the end".into()))?
            };
            i..i
        } else {
            known
                .materialize_range(at, at + count - 1, false)
                .ok_or_else(|| Unsupported("a hunk past what is known".into()))?
        };
        // Walk the hunk: context keeps its line (and identity), runs of -/+ are spliced.
        let mut seg = range.start;
        let mut k = 0;
        while k < new_lines.len() {
            match new_lines[k].0 {
                ' ' => {
                    if let Some(Seg::Line(l)) = known.segs.get_mut(seg)
                        && l.text.is_none()
                    {
                        l.text = Some(Rc::from(new_lines[k].1));
                    }
                    seg += 1;
                    k += 1;
                }
                _ => {
                    let mut removed = 0;
                    let mut added = Vec::new();
                    while k < new_lines.len() && new_lines[k].0 != ' ' {
                        match new_lines[k].0 {
                            '-' => removed += 1,
                            _ => added.push(Rc::from(new_lines[k].1)),
                        }
                        k += 1;
                    }
                    let n = added.len();
                    known.splice(seg..seg + removed, added, Some(edit));
                    seg += n;
                }
            }
        }
        // Later hunks' numbers are in the coordinates before this one: shift by its net change.
        offset += new_lines.iter().filter(|(m, _)| *m == '+').count() as isize
            - new_lines.iter().filter(|(m, _)| *m == '-').count() as isize;
    }
    Ok(())
}

/// Where a hunk's old lines fit: at the stated line when no known line there disagrees, else
/// the nearest place within 100 lines where the known lines agree (at least one of them).
fn place(known: &mut Known, stated: usize, old: &[(char, &str)]) -> Option<usize> {
    let fits = |known: &mut Known, at: usize, need_known: bool| -> bool {
        if old.is_empty() {
            return true;
        }
        let Some(range) = known.materialize_range(at, at + old.len() - 1, false) else { return false };
        let mut any = false;
        for (seg, (_, want)) in range.zip(old) {
            match known.segs[seg].text() {
                Some(t) if &**t == *want => any = true,
                Some(_) => return false,
                None => {}
            }
        }
        any || !need_known
    };
    if fits(known, stated, false) {
        return Some(stated);
    }
    for d in 1..=100usize {
        for at in [stated.checked_sub(d), Some(stated + d)].into_iter().flatten() {
            if at >= 1 && fits(known, at, true) {
                return Some(at);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -8,2 +8,3 @@ def f():\n h\n+h2\n i\ndiff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+one\n+-- two\n";

    fn texts(k: &Known) -> Vec<String> {
        k.segs.iter().map(|s| s.text().map_or("?".to_string(), |t| t.to_string())).collect()
    }

    #[test]
    fn parses_files_hunks_and_counts() {
        let files = parse(PATCH);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "x.py");
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(files[0].hunks[1].header, "@@ -8,2 +8,3 @@ def f():");
        assert!(files[1].new_file);
        assert_eq!(files[1].hunks[0].lines[1], ('+', "-- two".to_string()));
        assert_eq!(strip_components("a/b/c.py", 1), "b/c.py");
    }

    #[test]
    fn the_old_side_seeds_and_hunks_apply_and_reverse() {
        let files = parse(PATCH);
        let mut k = Known::default();
        seed(&mut k, &files[0]);
        assert_eq!(k.segs.len(), 8, "[1] b c d [3] h i […]");
        let before = k.clone();
        apply(&mut k, &files[0], 1, false).expect("applies");
        let shown = k.clone().show(2, &[Rc::from("b"), Rc::from("C"), Rc::from("d")]).expect("placed");
        assert!(shown.iter().all(|s| s.was.as_deref() == Some(&*s.shown)));
        assert_eq!(k.materialize(9, false).map(|i| k.segs[i].text().map(|t| t.to_string())), Some(Some("h2".into())));
        apply(&mut k, &files[0], 2, true).expect("reverses");
        assert_eq!(texts(&k), texts(&before));
        let mut n = Known::default();
        apply(&mut n, &files[1], 3, false).expect("creates");
        assert_eq!(texts(&n), ["one", "-- two"]);
    }

    #[test]
    fn a_hunk_moved_by_earlier_edits_is_found_nearby() {
        let mut k = Known::whole("x\nx\na\nb\nc\n", None);
        let files = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n");
        apply(&mut k, &files[0], 0, false).expect("found at line 3");
        assert_eq!(texts(&k), ["x", "x", "a", "B", "c"]);
        let files = parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n q\n-r\n+R\n");
        assert!(apply(&mut k, &files[0], 0, false).is_err());
    }
}
