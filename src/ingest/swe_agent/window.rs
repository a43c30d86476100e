//! What the agent has seen of each file through SWE-agent's windowed viewer
//! (`[File: path (N lines total)]` followed by `NNN:text` lines) and `str_replace_editor`'s
//! `cat -n` output, so a windowed `edit N:M` can be drawn as a diff against the lines it
//! replaced, and an edit's diff numbered at the lines of the file it changed.

use std::collections::{BTreeMap, HashMap};

#[derive(Default)]
pub struct Views {
    files: HashMap<String, BTreeMap<usize, String>>,
}

impl Views {
    /// Record the file lines shown in an observation.
    pub fn observe(&mut self, observation: &str, working_dir: Option<&str>) {
        // The file being shown and how its lines are numbered (`12:text` or `    12\ttext`).
        let mut current: Option<(String, char)> = None;
        // A rejected edit shows how the file "would have looked": not the file.
        let mut preview = false;
        for line in observation.lines() {
            let line = line.trim_end_matches('\r');
            if line.starts_with("This is how your edit would have looked if applied") {
                preview = true;
                continue;
            }
            if line.starts_with("This is the original code before your edit") {
                preview = false;
                continue;
            }
            if preview {
                continue;
            }
            if let Some(rest) = line.strip_prefix("[File: ") {
                // "[File: /p/a.py (372 lines total)]"
                let path = rest.rsplit_once(" (").map(|(p, _)| p).unwrap_or(rest);
                current = Some((super::resolve(path.trim(), working_dir), ':'));
                continue;
            }
            // "Here's the result of running `cat -n` on [a snippet of] /p/a.py:"
            if let Some((_, rest)) = line.split_once("Here's the result of running `cat -n` on ") {
                let path = rest.strip_prefix("a snippet of ").unwrap_or(rest).trim_end_matches(':');
                current = Some((super::resolve(path.trim(), working_dir), '\t'));
                continue;
            }
            let Some((path, separator)) = &current else { continue };
            let Some((num, text)) = line.split_once(*separator) else { continue };
            let Ok(n) = num.trim_start().parse::<usize>() else { continue };
            self.files.entry(path.clone()).or_default().insert(n, text.to_string());
        }
    }

    /// The line (1-based) of `path` where `text` starts, when the lines seen of the file hold it
    /// exactly once (`text` may start and end inside a line, as a `str_replace` argument does).
    pub fn locate(&self, path: &str, text: &str) -> Option<usize> {
        let seen = self.files.get(path)?;
        let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
        let (first, rest) = lines.split_first()?;
        if first.trim().is_empty() && rest.is_empty() {
            return None;
        }
        let fits = |n: usize| -> bool {
            let Some(line) = seen.get(&n) else { return false };
            if rest.is_empty() {
                return line.contains(first);
            }
            let last = rest.len();
            line.ends_with(first)
                && rest.iter().enumerate().all(|(i, want)| {
                    seen.get(&(n + 1 + i))
                        .is_some_and(|got| if i + 1 == last { got.starts_with(want) } else { got == want })
                })
        };
        let mut found = seen.keys().copied().filter(|&n| fits(n));
        let at = found.next()?;
        found.next().is_none().then_some(at)
    }

    /// Lines `start..=end` of `path` as last seen, when every one of them was seen.
    pub fn lines(&self, path: &str, start: usize, end: usize) -> Option<String> {
        let seen = self.files.get(path)?;
        if end < start {
            return Some(String::new());
        }
        let mut out = String::new();
        for n in start..=end {
            out.push_str(seen.get(&n)?);
            out.push('\n');
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejected_edit_preview_is_not_the_file() {
        let mut v = Views::default();
        v.observe("[File: /r/a.py (2 lines total)]\n1:x\n2:y\n", None);
        v.observe(
            "Your proposed edit has introduced new syntax error(s).\nThis is how your edit would have looked if applied\n----\n[File: /r/a.py (2 lines total)]\n1:BROKEN\n----\nThis is the original code before your edit\n----\n[File: /r/a.py (2 lines total)]\n1:x\n----\nYour changes have NOT been applied.",
            None,
        );
        assert_eq!(v.lines("/r/a.py", 1, 2).as_deref(), Some("x\ny\n"));
    }

    #[test]
    fn cat_n_views_locate_a_replaced_snippet() {
        let mut v = Views::default();
        let shown = "Here's the result of running `cat -n` on /calc/calc/ops.py:\n    11\t\n    12\tdef pow_(a, b):\n    13\t    return a ** b\n    14\t    return a ** b\n";
        v.observe(shown, None);
        assert_eq!(v.locate("/calc/calc/ops.py", "def pow_(a, b):\n    return a"), Some(12));
        assert_eq!(v.locate("/calc/calc/ops.py", "pow_("), Some(12));
        assert_eq!(v.locate("/calc/calc/ops.py", "    return a ** b"), None, "twice: no line");
        assert_eq!(v.locate("/calc/calc/ops.py", "nowhere"), None);
        assert_eq!(v.locate("/other.py", "def"), None);
    }

    #[test]
    fn later_views_replace_earlier_lines() {
        let mut v = Views::default();
        v.observe("[File: a.py (2 lines total)]\n1:x\n2:y\n", Some("/r"));
        v.observe("[File: /r/a.py (2 lines total)]\n2:z\n", None);
        assert_eq!(v.lines("/r/a.py", 1, 2).as_deref(), Some("x\nz\n"));
        assert_eq!(v.lines("/r/a.py", 1, 3), None);
        assert_eq!(v.lines("/r/b.py", 1, 1), None);
    }
}
