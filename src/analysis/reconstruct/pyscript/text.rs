//! What a script's string operations do to a file's text as the run knows it: the file's known
//! lines ([`Known`]), searched run by run (consecutive lines the run showed), changed in place so
//! that the lines an operation leaves alone keep their identity (the diff is drawn from what
//! changed, and a later view checks the lines written).

use crate::analysis::reconstruct::known::{EditId, Known, Seg, split_lines};
use similar::{Algorithm, DiffTag, capture_diff_slices};
use std::ops::Range;
use std::rc::Rc;

/// A run's text and the matches still allowed, made a new text and the matches made.
pub type Rewrite<'a> = dyn Fn(&str, Option<usize>) -> (String, usize) + 'a;

/// The origin lines written by a script get until the edit is recorded ([`Doc::sealed`]).
const SCRIPT: EditId = EditId::MAX;

/// A file's text as a script holds it.
#[derive(Debug, Clone)]
pub struct Doc {
    pub known: Known,
    /// An operation searched a file with lines never shown (a match there is assumed not to
    /// be): the diff may miss what it did there.
    pub assumed: bool,
    /// The file it was read from, while it is that file's text changed (a script may write it
    /// to another).
    pub from: Option<String>,
}

impl Doc {
    pub fn new(known: Known) -> Doc {
        Doc { known, assumed: false, from: None }
    }

    /// A text the script made whole (a literal written to a file).
    pub fn literal(text: &str) -> Doc {
        Doc::new(Known::whole(text, Some(SCRIPT)))
    }

    /// Whether the file had lines never shown (nothing known of them).
    pub fn has_gaps(&self) -> bool {
        self.known.segs.iter().any(|s| s.text().is_none() && !s.is_empty())
    }

    /// The known lines, those the script wrote attributed to edit `id`.
    pub fn sealed(&self, id: EditId) -> Known {
        let mut k = self.known.clone();
        for s in &mut k.segs {
            if let Seg::Line(l) = s {
                if l.origin == Some(SCRIPT) {
                    l.origin = Some(id);
                }
                if l.seam == Some(SCRIPT) {
                    l.seam = Some(id);
                }
            }
        }
        k
    }

    /// Whether `needle` is in the text: `None` when it is not among the lines shown and the
    /// file has others.
    pub fn contains(&self, needle: &str) -> Option<bool> {
        if runs(&self.known, false).iter().any(|r| run_text(&self.known, r.clone()).contains(needle)) {
            return Some(true);
        }
        (!self.has_gaps()).then_some(false)
    }

    /// Each run of known lines rewritten by `f` (its text, the matches still allowed; the new
    /// text and the matches made). `None` when nothing matched and the file has lines never
    /// shown (what it did there is unknown), or when a rewrite cannot be placed in lines.
    pub fn rewrite(&self, limit: Option<usize>, f: &Rewrite<'_>) -> Option<Doc> {
        let mut known = self.known.clone();
        let mut left = limit;
        let mut made = 0;
        let gaps = self.has_gaps();
        // From the last run to the first, so earlier segment indexes stay true; the count
        // allows the first matches, so they are counted from the front first.
        let list = runs(&known, true);
        let mut plans: Vec<(Range<usize>, String)> = Vec::new();
        for r in &list {
            if left == Some(0) {
                break;
            }
            let old = run_text(&known, r.clone());
            let (new, n) = f(&old, left);
            if n == 0 {
                continue;
            }
            made += n;
            left = left.map(|l| l.saturating_sub(n));
            if new != old {
                plans.push((r.clone(), new));
            }
        }
        if made == 0 && gaps {
            return None;
        }
        for (r, new) in plans.into_iter().rev() {
            let followed = r.end < known.segs.len();
            if followed && !new.ends_with('\n') {
                return None;
            }
            replace_lines(&mut known, r, &new);
        }
        Some(Doc { known, assumed: self.assumed || (gaps && made > 0), from: self.from.clone() })
    }

    /// `text.replace(old, new[, count])`.
    pub fn replace(&self, old: &str, new: &str, count: Option<usize>) -> Option<Doc> {
        if old.is_empty() {
            return None;
        }
        self.rewrite(count, &|text, left| replace_n(text, old, new, left))
    }

    /// `re.sub(pattern, repl, text, count)`: `repl` already in the `regex` crate's template
    /// syntax ([`super::literal::template`]).
    pub fn sub(&self, re: &regex::Regex, repl: &str, count: Option<usize>) -> Option<Doc> {
        self.rewrite(count, &|text, left| sub_n(re, text, repl, left))
    }

    /// Line `i` (from 0) with its newline, when known (`lines[i]`).
    pub fn line(&self, i: usize) -> Option<String> {
        let mut k = self.known.clone();
        let at = k.materialize(i + 1, false)?;
        k.segs[at].text().map(|t| format!("{t}\n"))
    }

    /// Lines `a..b` (from 0) replaced by `text`, whole lines (`lines[a:b] = [...]`,
    /// `lines.insert(a, ...)` when `a == b`). `None` when where they are is not known.
    pub fn splice_lines(&self, a: usize, b: usize, text: &str) -> Option<Doc> {
        if !text.is_empty() && !text.ends_with('\n') || b < a {
            return None;
        }
        let mut known = self.known.clone();
        let range = if a == b {
            match a {
                0 => 0..0,
                _ => known.materialize(a, false).map(|i| i + 1..i + 1)?,
            }
        } else {
            known.materialize_range(a + 1, b, false)?
        };
        known.splice(range, split_lines(text), Some(SCRIPT));
        Some(Doc { known, assumed: self.assumed, from: self.from.clone() })
    }

    /// The whole text replaced by `text` (a write of a literal over a file whose every line is
    /// known keeps the lines it repeats).
    pub fn overwritten(before: &Known, text: &str) -> Doc {
        if before.is_whole() && !before.segs.is_empty() {
            let mut known = before.clone();
            let all = 0..known.segs.len();
            replace_lines(&mut known, all, text);
            return Doc::new(known);
        }
        Doc::literal(text)
    }
}

/// `str.replace` with Python's count (the first `left` occurrences; all when `None`).
pub fn replace_n(text: &str, old: &str, new: &str, left: Option<usize>) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut n = 0;
    while left.is_none_or(|l| n < l) {
        let Some(p) = rest.find(old) else { break };
        out.push_str(&rest[..p]);
        out.push_str(new);
        rest = &rest[p + old.len()..];
        n += 1;
    }
    out.push_str(rest);
    (out, n)
}

/// `re.sub` with Python's count (the first `left` matches; all when `None`).
pub fn sub_n(re: &regex::Regex, text: &str, repl: &str, left: Option<usize>) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut n = 0;
    for caps in re.captures_iter(text) {
        if left.is_some_and(|l| n >= l) {
            break;
        }
        let Some(m) = caps.get(0) else { break };
        out.push_str(&text[last..m.start()]);
        caps.expand(repl, &mut out);
        last = m.end();
        n += 1;
    }
    out.push_str(&text[last..]);
    (out, n)
}

/// Segment ranges of consecutive known lines; `placed`: only those whose line numbers are
/// known (before any gap of unknown length: lines after one, such as the end of a clipped
/// view, may repeat lines known by number, and a diff cannot number them).
fn runs(k: &Known, placed: bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    let end = match placed {
        true => k.segs.iter().position(|s| s.len().is_none()).unwrap_or(k.segs.len()),
        false => k.segs.len(),
    };
    for (i, s) in k.segs[..end].iter().enumerate() {
        match (s.text().is_some(), start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push(a..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push(a..end);
    }
    out
}

/// The text of a run of known lines, each ended by a newline.
fn run_text(k: &Known, r: Range<usize>) -> String {
    let mut out = String::new();
    for s in &k.segs[r] {
        out.push_str(s.text().map_or("", |t| t));
        out.push('\n');
    }
    out
}

/// The known lines `r` (all known) made `new`: only the lines that differ are replaced, by
/// lines the script wrote.
fn replace_lines(k: &mut Known, r: Range<usize>, new: &str) {
    let old: Vec<Rc<str>> = k.segs[r.clone()].iter().filter_map(|s| s.text().cloned()).collect();
    let new: Vec<Rc<str>> = split_lines(new);
    let ops = capture_diff_slices(Algorithm::Myers, &old, &new);
    for op in ops.iter().rev() {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let at = r.start + o.start..r.start + o.end;
        k.splice(at, new[n].to_vec(), Some(SCRIPT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(lines: &[(usize, &str)], end: Option<usize>) -> Known {
        let mut k = Known::default();
        for (n, t) in lines {
            k.show(*n, &[Rc::from(*t)]);
        }
        if let Some(e) = end {
            k.end_at(e);
        }
        k
    }

    #[test]
    fn replace_on_a_whole_file_keeps_the_lines_it_leaves() {
        let d = Doc::new(Known::whole("a\nb = 1\nc\nb = 1\n", None));
        let r = d.replace("b = 1", "b = 2", Some(1)).expect("replaced");
        assert_eq!(r.known.text().as_deref(), Some("a\nb = 2\nc\nb = 1\n"));
        assert!(!r.assumed);
        let all = d.replace("b = 1", "b = 2", None).expect("replaced");
        assert_eq!(all.known.text().as_deref(), Some("a\nb = 2\nc\nb = 2\n"));
        // Untouched lines keep their identity.
        assert_eq!(all.known.segs[0].id(), d.known.segs[0].id());
        // Absent from a whole file: changed nothing.
        let none = d.replace("zzz", "y", None).expect("whole");
        assert_eq!(none.known, d.known);
    }

    #[test]
    fn replace_across_lines_and_on_a_file_with_gaps() {
        let d = Doc::new(shown(&[(10, "    def f(x):"), (11, "        return x")], None));
        let r = d.replace("def f(x):\n        return x\n", "def f(x, y=0):\n        return x + y\n", None);
        let r = r.expect("found in the lines shown");
        assert!(r.assumed, "lines never shown may hold it too");
        assert_eq!(d.contains("return x"), Some(true));
        assert_eq!(d.contains("absent"), None);
        assert!(d.replace("absent", "x", None).is_none(), "unknown where it was never shown");
        let lines: Vec<_> = r.known.segs.iter().filter_map(|s| s.text().map(|t| t.to_string())).collect();
        assert_eq!(lines, ["    def f(x, y=0):", "        return x + y"]);
    }
}
