//! What the agent has seen of each file through SWE-agent's windowed viewer
//! (`[File: path (N lines total)]` followed by `NNN:text` lines), so a windowed `edit N:M` can
//! be drawn as a diff against the lines it replaced.

use std::collections::{BTreeMap, HashMap};

#[derive(Default)]
pub struct Views {
    files: HashMap<String, BTreeMap<usize, String>>,
}

impl Views {
    /// Record the file lines shown in an observation.
    pub fn observe(&mut self, observation: &str, working_dir: Option<&str>) {
        let mut current: Option<String> = None;
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
                current = Some(super::actions::resolve(path.trim(), working_dir));
                continue;
            }
            let Some(path) = &current else { continue };
            let Some((num, text)) = line.split_once(':') else { continue };
            let Ok(n) = num.parse::<usize>() else { continue };
            self.files.entry(path.clone()).or_default().insert(n, text.to_string());
        }
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
    fn later_views_replace_earlier_lines() {
        let mut v = Views::default();
        v.observe("[File: a.py (2 lines total)]\n1:x\n2:y\n", Some("/r"));
        v.observe("[File: /r/a.py (2 lines total)]\n2:z\n", None);
        assert_eq!(v.lines("/r/a.py", 1, 2).as_deref(), Some("x\nz\n"));
        assert_eq!(v.lines("/r/a.py", 1, 3), None);
        assert_eq!(v.lines("/r/b.py", 1, 1), None);
    }
}
