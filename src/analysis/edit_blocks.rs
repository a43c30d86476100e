//! The patch formats agents write edits in, read into replacements a diff can be drawn from:
//! Codex's `apply_patch` envelope (`*** Begin Patch`, `*** Update File:`, `@@` hunks without
//! line numbers, `*** Delete File:`, `*** Move to:`, `*** End Patch`) and aider's edit blocks (SEARCH/REPLACE blocks under a file
//! name, whole files under a file name). A hunk replaces its old lines (context and removed) by
//! its new lines (context and added), as a `str_replace` does, so each is one edit.

use super::edits::edit_from_texts;
use crate::model::{Edit, EditKind, EditStatus};
use std::collections::HashSet;

/// One change a block asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Replace `old` (found in the file) by `new`.
    Replace { old: String, new: String },
    /// Write the whole file (a new file, or a whole-file block).
    Write(String),
    /// Delete the file.
    Delete,
    /// Move the file to `to` (its hunks that follow are edits of `to`).
    Move { to: String },
}

/// A change to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub path: String,
    pub change: Change,
}

impl Block {
    /// The block as an edit of step `step` with `status`. A deletion (or a move: the file gone from its path) is a `delete` edit whose diff says
    /// so in git's words; the text the file held is not in the patch.
    pub fn edit(&self, step: usize, status: EditStatus) -> Edit {
        let (kind, old, new) = match &self.change {
            Change::Replace { old, new } => (EditKind::StrReplace, Some(old.clone()), Some(new.clone())),
            Change::Write(text) => (EditKind::Create, None, Some(text.clone())),
            Change::Delete | Change::Move { .. } => (EditKind::Delete, None, None),
        };
        let mut edit = edit_from_texts(Some(step), &self.path, kind, status, old, new, Vec::new());
        let side = |p: &str| p.trim_start_matches('/').to_string();
        edit.diff = match &self.change {
            Change::Delete => Some(format!("--- a/{}\n+++ /dev/null\n", side(&self.path))),
            Change::Move { to } => {
                Some(format!("rename from {0}\nrename to {1}\n--- a/{0}\n+++ b/{1}\n", side(&self.path), side(to)))
            }
            _ => edit.diff,
        };
        edit
    }
}

/// What a path an `apply_patch` names is, when it is not a path inside the working folder (the
/// envelope's paths are relative to it): it is stored as written, never resolved.
pub fn outside(path: &str) -> Option<&'static str> {
    let p = path.trim();
    let drive = p.len() > 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic();
    if p.starts_with('/') || p.starts_with('\\') || drive {
        return Some("an absolute path");
    }
    let mut depth = 0i64;
    for part in p.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => depth -= 1,
            _ => depth += 1,
        }
        if depth < 0 {
            return Some("a path that leaves the working folder (`..`)");
        }
    }
    None
}

/// The blocks of every `*** Begin Patch` ... `*** End Patch` envelope in `text` (a shell command
/// running `apply_patch <<'EOF'`, or an `apply_patch` tool call's input).
pub fn apply_patch(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut inside = false;
    let mut file: Option<(String, bool)> = None;
    let (mut old, mut new) = (String::new(), String::new());
    let flush = |file: &Option<(String, bool)>, old: &mut String, new: &mut String, blocks: &mut Vec<Block>| {
        // A hunk of context alone (a `@@` section that only narrows where the next applies)
        // changes nothing.
        if let Some((path, added)) = file
            && (*added || old != new)
        {
            let change = if *added {
                Change::Write(std::mem::take(new))
            } else {
                Change::Replace { old: std::mem::take(old), new: std::mem::take(new) }
            };
            blocks.push(Block { path: path.clone(), change });
        }
        old.clear();
        new.clear();
    };
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim_end() == "*** Begin Patch" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim_end() == "*** End Patch" {
            flush(&file, &mut old, &mut new, &mut blocks);
            file = None;
            inside = false;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            flush(&file, &mut old, &mut new, &mut blocks);
            file = Some((path.trim().to_string(), false));
        } else if let Some(path) = line.strip_prefix("*** Add File: ") {
            flush(&file, &mut old, &mut new, &mut blocks);
            file = Some((path.trim().to_string(), true));
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            flush(&file, &mut old, &mut new, &mut blocks);
            file = None;
            blocks.push(Block { path: path.trim().to_string(), change: Change::Delete });
        } else if let Some(to) = line.strip_prefix("*** Move to: ") {
            // The file leaves its path; its hunks (read next) are the new path's.
            flush(&file, &mut old, &mut new, &mut blocks);
            if let Some((from, false)) = &file {
                let to = to.trim().to_string();
                blocks.push(Block { path: from.clone(), change: Change::Move { to: to.clone() } });
                file = Some((to, false));
            }
        } else if line.starts_with("*** End of File") {
        } else if line.starts_with("@@") {
            // A new hunk of the same file.
            if file.as_ref().is_some_and(|(_, added)| !added) {
                flush(&file, &mut old, &mut new, &mut blocks);
            }
        } else if file.is_some() {
            let (mark, rest) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
            match mark {
                "+" => push_line(&mut new, rest),
                "-" => push_line(&mut old, rest),
                " " => {
                    push_line(&mut old, rest);
                    push_line(&mut new, rest);
                }
                // A blank context line whose space was lost.
                "" => {
                    push_line(&mut old, "");
                    push_line(&mut new, "");
                }
                _ => {}
            }
        }
    }
    flush(&file, &mut old, &mut new, &mut blocks);
    blocks
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

/// A line that opens or closes a fenced code block (```` ``` ````, ```` ```python ````).
fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// A line naming a file above an edit block: one word with no spaces (markdown emphasis,
/// backquotes and a trailing colon taken off).
fn file_name(line: &str) -> Option<String> {
    let name = line.trim().trim_matches(|c| c == '*' || c == '`' || c == '#').trim().trim_end_matches(':');
    let plausible =
        !name.is_empty() && !name.contains(char::is_whitespace) && name.len() < 300 && !name.starts_with("<<<<<<<");
    plausible.then(|| name.to_string())
}

fn marker(line: &str, c: char, word: &str) -> bool {
    let t = line.trim_end();
    let n = t.chars().take_while(|x| *x == c).count();
    (5..=9).contains(&n) && t[n..].trim() == word
}

/// Aider's SEARCH/REPLACE blocks in a reply: a file name line (before the fence in the `diff`
/// format, after it in `diff-fenced`), `<<<<<<< SEARCH`, the old lines, `=======`, the new lines,
/// `>>>>>>> REPLACE`. A block without a file name of its own edits the previous block's file; an
/// empty SEARCH creates the file.
pub fn search_replace(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut blocks = Vec::new();
    let mut last_file: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        if !marker(lines[i], '<', "SEARCH") {
            i += 1;
            continue;
        }
        // The file name: the nearest line above that is not a fence, within two lines.
        let named = lines[i.saturating_sub(3)..i].iter().rev().filter(|l| !is_fence(l)).find_map(|l| file_name(l));
        let path = named.or_else(|| last_file.clone());
        let (mut old, mut new) = (String::new(), String::new());
        let mut j = i + 1;
        while j < lines.len() && !marker(lines[j], '=', "") {
            push_line(&mut old, lines[j]);
            j += 1;
        }
        j += 1;
        while j < lines.len() && !marker(lines[j], '>', "REPLACE") {
            push_line(&mut new, lines[j]);
            j += 1;
        }
        if let Some(path) = path.filter(|_| j < lines.len()) {
            let change = if old.trim().is_empty() { Change::Write(new) } else { Change::Replace { old, new } };
            blocks.push(Block { path: path.clone(), change });
            last_file = Some(path);
        }
        i = j + 1;
    }
    blocks
}

/// Aider's whole-file blocks (the `whole` edit format) for the files in `applied`: the file's
/// name on a line, then a fenced block holding the file's new content.
pub fn whole_files(text: &str, applied: &HashSet<String>) -> Vec<Block> {
    if applied.is_empty() {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut blocks = Vec::new();
    let mut i = 1;
    while i < lines.len() {
        let name = file_name(lines[i - 1]).filter(|n| applied.contains(n));
        match name {
            Some(path) if is_fence(lines[i]) => {
                let mut body = String::new();
                let mut j = i + 1;
                while j < lines.len() && !is_fence(lines[j]) {
                    push_line(&mut body, lines[j]);
                    j += 1;
                }
                blocks.push(Block { path, change: Change::Write(body) });
                i = j + 2;
            }
            _ => i += 1,
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_patch_envelopes_give_one_block_per_hunk() {
        let cmd = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n export const f = () => {\n@@ export const f = () => {\n   const x = 1\n-  return x\n+  return x + 1\n@@\n-// old\n+// new\n*** Add File: b.txt\n+hello\n+world\n*** Delete File: c.txt\n*** End Patch\nPATCH";
        let blocks = apply_patch(cmd);
        assert_eq!(
            blocks,
            vec![
                Block {
                    path: "src/a.ts".into(),
                    change: Change::Replace {
                        old: "  const x = 1\n  return x\n".into(),
                        new: "  const x = 1\n  return x + 1\n".into()
                    }
                },
                Block {
                    path: "src/a.ts".into(),
                    change: Change::Replace { old: "// old\n".into(), new: "// new\n".into() }
                },
                Block { path: "b.txt".into(), change: Change::Write("hello\nworld\n".into()) },
                Block { path: "c.txt".into(), change: Change::Delete },
            ]
        );
        let e = blocks[0].edit(3, EditStatus::Applied);
        assert_eq!((e.step, e.kind), (Some(3), EditKind::StrReplace));
        assert!(e.diff.as_deref().is_some_and(|d| d.contains("-  return x\n+  return x + 1\n")), "{:?}", e.diff);
        assert!(apply_patch("no patch here\n*** Update File: x\n+a\n").is_empty());
    }

    /// Issue 42: `*** Delete File:` was an applied `str_replace` with no diff and `*** Move to:`
    /// was passed over (the hunks named the old path). A deletion is a `delete` edit with git's
    /// headers for one; a move is the old path's `delete` (renamed) and hunks of the new path.
    #[test]
    fn deletions_and_moves_are_edits_that_say_so() {
        let patch = "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n";
        let edits: Vec<Edit> = apply_patch(patch).iter().map(|b| b.edit(1, EditStatus::Applied)).collect();
        let kinds: Vec<(&str, EditKind)> = edits.iter().map(|e| (e.path.as_str(), e.kind)).collect();
        assert_eq!(
            kinds,
            [("old.txt", EditKind::Delete), ("src/a.py", EditKind::Delete), ("src/b.py", EditKind::StrReplace)]
        );
        assert_eq!(edits[0].diff.as_deref(), Some("--- a/old.txt\n+++ /dev/null\n"));
        assert_eq!(edits[0].new_text, None, "the text deleted is not in the patch, and none is made up");
        assert_eq!(
            edits[1].diff.as_deref(),
            Some("rename from src/a.py\nrename to src/b.py\n--- a/src/a.py\n+++ b/src/b.py\n")
        );
        assert!(edits[2].diff.as_deref().is_some_and(|d| d.contains("-x = 1\n+x = 2")), "{:?}", edits[2].diff);
    }

    /// Issue 42: paths outside the working folder were stored as text and said nothing; they
    /// are still stored as written, and what they are is said.
    #[test]
    fn paths_outside_the_working_folder_are_told() {
        assert_eq!(outside("../../etc/cron.d/job"), Some("a path that leaves the working folder (`..`)"));
        assert_eq!(outside("src/../../x"), Some("a path that leaves the working folder (`..`)"));
        for absolute in ["/etc/passwd", "C:\\Windows\\x.ini", "\\\\server\\share"] {
            assert_eq!(outside(absolute), Some("an absolute path"), "{absolute}");
        }
        for inside in ["src/a.py", "src/../b.py", "./c.py", "a..b/c"] {
            assert_eq!(outside(inside), None, "{inside}");
        }
    }

    #[test]
    fn search_replace_blocks_in_both_fence_orders() {
        let reply = "Here is the fix.\n\nmathweb/flask/app.py\n```python\n<<<<<<< SEARCH\nfrom flask import Flask\n=======\nimport math\nfrom flask import Flask\n>>>>>>> REPLACE\n```\n\n```\nhello.py\n<<<<<<< SEARCH\n=======\nprint('hi')\n>>>>>>> REPLACE\n```\n";
        let blocks = search_replace(reply);
        assert_eq!(
            blocks,
            vec![
                Block {
                    path: "mathweb/flask/app.py".into(),
                    change: Change::Replace {
                        old: "from flask import Flask\n".into(),
                        new: "import math\nfrom flask import Flask\n".into()
                    }
                },
                Block { path: "hello.py".into(), change: Change::Write("print('hi')\n".into()) },
            ]
        );
        // An unterminated block is no edit.
        assert!(search_replace("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n").is_empty());
    }

    #[test]
    fn whole_file_blocks_only_for_files_applied() {
        let reply = "I'll create it.\n\ncalc.py\n```\ndef add(a, b):\n    return a + b\n```\n\nnotes.md\n```\nnot applied\n```\n";
        let blocks = whole_files(reply, &HashSet::from(["calc.py".to_string()]));
        assert_eq!(
            blocks,
            vec![Block { path: "calc.py".into(), change: Change::Write("def add(a, b):\n    return a + b\n".into()) }]
        );
    }
}
