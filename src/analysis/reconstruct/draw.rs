//! The diff of one reconstructed edit, read off the file's known lines before and after it.
//! Edits keep the identity of every line and gap they leave alone, so what changed is what
//! lost or gained an identity: no text diff is needed, and two equal lines are never confused.
//! Lines never shown that an edit removed are drawn as one placeholder line, and the hunk ends
//! there so the numbers of the next lines stay true.

use super::known::{Known, Seg};
use std::collections::HashSet;

/// Context lines around a change, as `diff -u`.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    pub diff: Option<String>,
    /// Something was removed or added.
    pub changed: bool,
    /// Every removed and added line's text is known (no placeholder was drawn).
    pub complete: bool,
    /// Some removed or added line's text is known.
    pub any_text: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal(usize, usize),
    Del(usize),
    Ins(usize),
}

struct Entry {
    mark: char,
    text: String,
    old: Option<usize>,
    new: Option<usize>,
    /// A placeholder: the hunk ends after it.
    cut: bool,
    /// Lines it stands for (`None`: unknown).
    lines: Option<usize>,
}

pub fn draw(path: &str, before: &Known, after: &Known) -> Drawn {
    // What both keep at the start and the end is equal: only the middle is aligned.
    let (b, a) = (&before.segs, &after.segs);
    let prefix = b.iter().zip(a.iter()).take_while(|(x, y)| x.id() == y.id()).count();
    let suffix = b[prefix..].iter().rev().zip(a[prefix..].iter().rev()).take_while(|(x, y)| x.id() == y.id()).count();
    let kept: HashSet<u32> = a[prefix..a.len() - suffix].iter().map(Seg::id).collect();
    let mut ops: Vec<Op> = (0..prefix).map(|k| Op::Equal(k, k)).collect();
    let (mut i, mut j) = (prefix, prefix);
    let (b_end, a_end) = (b.len() - suffix, a.len() - suffix);
    while i < b_end || j < a_end {
        match (b[..b_end].get(i), a[..a_end].get(j)) {
            (Some(x), Some(y)) if x.id() == y.id() => {
                ops.push(Op::Equal(i, j));
                i += 1;
                j += 1;
            }
            (Some(x), _) if !kept.contains(&x.id()) => {
                ops.push(Op::Del(i));
                i += 1;
            }
            (_, Some(_)) => {
                ops.push(Op::Ins(j));
                j += 1;
            }
            (Some(_), None) => {
                ops.push(Op::Del(i));
                i += 1;
            }
            (None, None) => break,
        }
    }
    ops.extend((0..suffix).map(|k| Op::Equal(b_end + k, a_end + k)));
    let changed = ops.iter().any(|o| !matches!(o, Op::Equal(..)));
    let mut drawn = Drawn { diff: None, changed, complete: true, any_text: false };
    if !changed {
        return drawn;
    }
    // Where each operation sits on each side (the line number of the next line there).
    let mut cursors = Vec::with_capacity(ops.len());
    let (mut old_cur, mut new_cur) = (Some(1usize), Some(1usize));
    for o in &ops {
        cursors.push((old_cur, new_cur));
        let step = |cur: Option<usize>, seg: &Seg| cur.and_then(|c| Some(c + seg.len()?));
        match *o {
            Op::Equal(bi, ai) => {
                old_cur = step(old_cur, &before.segs[bi]);
                new_cur = step(new_cur, &after.segs[ai]);
            }
            Op::Del(bi) => old_cur = step(old_cur, &before.segs[bi]),
            Op::Ins(ai) => new_cur = step(new_cur, &after.segs[ai]),
        }
    }
    let context_line = |o: &Op| -> Option<&str> {
        match o {
            Op::Equal(bi, _) => before.segs[*bi].text().map(|t| &**t),
            _ => None,
        }
    };
    // Change runs, each widened by its context; runs whose context meets are merged.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut k = 0;
    while k < ops.len() {
        if matches!(ops[k], Op::Equal(..)) {
            k += 1;
            continue;
        }
        let start = k;
        while k < ops.len() && !matches!(ops[k], Op::Equal(..)) {
            k += 1;
        }
        let mut lo = start;
        while lo > 0 && start - lo < CONTEXT && context_line(&ops[lo - 1]).is_some() {
            lo -= 1;
        }
        let mut hi = k;
        while hi < ops.len() && hi - k < CONTEXT && context_line(&ops[hi]).is_some() {
            hi += 1;
        }
        match spans.last_mut() {
            Some(last) if last.1 >= lo => last.1 = hi,
            _ => spans.push((lo, hi)),
        }
    }
    let mut out = format!("--- a/{0}\n+++ b/{0}\n", path.trim_start_matches('/'));
    for (lo, hi) in spans {
        let mut entries: Vec<Entry> = Vec::new();
        for (o, &(old, new)) in ops[lo..hi].iter().zip(&cursors[lo..hi]) {
            match *o {
                Op::Equal(bi, _) => entries.push(Entry {
                    mark: ' ',
                    text: before.segs[bi].text().map(|t| t.to_string()).unwrap_or_default(),
                    old,
                    new,
                    cut: false,
                    lines: Some(1),
                }),
                Op::Del(bi) => push(&mut entries, entry('-', &before.segs[bi], old, new, &mut drawn)),
                Op::Ins(ai) => push(&mut entries, entry('+', &after.segs[ai], old, new, &mut drawn)),
            }
        }
        hunks(&entries, &mut out);
    }
    drawn.diff = Some(out);
    drawn
}

/// Add an entry; runs of lines never shown on one side become one placeholder.
fn push(entries: &mut Vec<Entry>, e: Entry) {
    if e.cut
        && let Some(last) = entries.last_mut()
        && last.cut
        && last.mark == e.mark
    {
        last.lines = last.lines.zip(e.lines).map(|(a, b)| a + b);
        last.text = placeholder(last.lines);
        return;
    }
    entries.push(e);
}

fn placeholder(lines: Option<usize>) -> String {
    match lines {
        Some(1) => "⋯ 1 line the run never showed ⋯".to_string(),
        Some(n) => format!("⋯ {n} lines the run never showed ⋯"),
        None => "⋯ lines the run never showed ⋯".to_string(),
    }
}

fn entry(mark: char, seg: &Seg, old: Option<usize>, new: Option<usize>, drawn: &mut Drawn) -> Entry {
    match seg {
        Seg::Line(l) if l.text.is_some() => {
            drawn.any_text = true;
            Entry {
                mark,
                text: l.text.as_deref().unwrap_or_default().to_string(),
                old,
                new,
                cut: false,
                lines: Some(1),
            }
        }
        other => {
            let lines = other.len();
            if lines == Some(0) {
                return Entry { mark: '#', text: String::new(), old, new, cut: false, lines };
            }
            drawn.complete = false;
            Entry { mark, text: placeholder(lines), old, new, cut: true, lines }
        }
    }
}

/// Write entries as hunks, cutting after each placeholder. Each entry knows the line number
/// it sits at on both sides; an empty side names the line before the hunk (`-5,0`).
fn hunks(entries: &[Entry], out: &mut String) {
    let mut start = 0;
    while start < entries.len() {
        let end = entries[start..].iter().position(|e| e.cut).map_or(entries.len(), |p| start + p + 1);
        let part: Vec<&Entry> = entries[start..end].iter().filter(|e| e.mark != '#').collect();
        start = end;
        if part.iter().all(|e| e.mark == ' ') {
            continue;
        }
        let old_count = part.iter().filter(|e| e.mark != '+').count();
        let new_count = part.iter().filter(|e| e.mark != '-').count();
        let first = part[0];
        let at = |n: Option<usize>, count: usize| n.map(|n| if count == 0 { n.saturating_sub(1) } else { n });
        let (old_start, new_start) = (at(first.old, old_count), at(first.new, new_count));
        let range = |start: Option<usize>, count: usize, sign: char| match (start, count) {
            (Some(s), 1) => format!("{sign}{s}"),
            (Some(s), c) => format!("{sign}{s},{c}"),
            (None, c) => format!("{sign}0,{c}"),
        };
        let note =
            if old_start.is_none() || new_start.is_none() { " (where: the file's length was never shown)" } else { "" };
        out.push_str(&format!(
            "@@ {} {} @@{note}\n",
            range(old_start, old_count, '-'),
            range(new_start, new_count, '+')
        ));
        for e in part {
            out.push(e.mark);
            out.push_str(&e.text);
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn an_insertion_is_drawn_with_its_known_context() {
        let before = Known::whole("a\nb\nc\nd\ne\nf\ng\nh\n", None);
        let mut after = before.clone();
        let l = after.line(Some(Rc::from("X")), Some(0));
        after.segs.insert(4, Seg::Line(l));
        let d = draw("/r/x.py", &before, &after);
        assert!(d.changed && d.complete);
        assert_eq!(
            d.diff.as_deref(),
            Some("--- a/r/x.py\n+++ b/r/x.py\n@@ -2,6 +2,7 @@\n b\n c\n d\n+X\n e\n f\n g\n")
        );
        assert!(!draw("x", &before, &before).changed);
    }

    #[test]
    fn context_stops_at_lines_never_shown_and_far_changes_get_own_hunks() {
        let mut before = Known::default();
        before.show(10, &[Rc::from("p"), Rc::from("q")]);
        let mut after = before.clone();
        // Replace q (segment 2) with Q; add a line at the end of the known region.
        let q = after.line(Some(Rc::from("Q")), Some(1));
        after.segs[2] = Seg::Line(q);
        let d = draw("x", &before, &after);
        assert_eq!(d.diff.as_deref(), Some("--- a/x\n+++ b/x\n@@ -10,2 +10,2 @@\n p\n-q\n+Q\n"));
    }

    #[test]
    fn lines_never_shown_are_a_placeholder_and_cut_the_hunk() {
        let mut before = Known::default();
        before.show(3, &[Rc::from("c")]);
        before.show(8, &[Rc::from("h"), Rc::from("i")]);
        before.end_at(9);
        // `3,8d`: c, the gap of 4, and h go.
        let mut after = before.clone();
        after.splice(1..4, Vec::new(), Some(0));
        let d = draw("x", &before, &after);
        assert!(d.changed && !d.complete && d.any_text);
        assert_eq!(
            d.diff.as_deref(),
            Some("--- a/x\n+++ b/x\n@@ -3,2 +2,0 @@\n-c\n-⋯ 4 lines the run never showed ⋯\n@@ -8,2 +3 @@\n-h\n i\n")
        );
    }
}
