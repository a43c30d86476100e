//! What the run has shown of one file: a sparse map of its lines. Lines whose text was shown
//! are known; runs of lines never shown are gaps, whose length is known (between two shown
//! lines, after a `sed -n '10,20p'`) or not (the rest of a file whose end was never shown, or
//! after an edit that moved lines by an unknown amount). Later views fill and correct it; edits
//! change it ([`super::sed`], [`super::patch`], writes and tool edits in [`super::replay`]).
//!
//! Every line and gap carries an identity that edits keep for what they leave alone, so the
//! diff of an edit is read off two states without a text diff ([`super::draw`]), and every
//! line remembers the edit that wrote it (`origin`) or removed the lines just before it
//! (`seam`), so a later view verifies or contradicts that edit.

use std::rc::Rc;

/// Index of a reconstructed edit in the run's list.
pub type EditId = usize;

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The text, when the run showed it (or an edit wrote it).
    pub text: Option<Rc<str>>,
    /// The edit that wrote this text.
    pub origin: Option<EditId>,
    /// The edit that removed the lines just before this one.
    pub seam: Option<EditId>,
    pub id: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Line(Line),
    /// Lines never shown: `len` of them, or an unknown number.
    Gap {
        len: Option<usize>,
        id: u32,
    },
}

impl Seg {
    pub fn id(&self) -> u32 {
        match self {
            Seg::Line(l) => l.id,
            Seg::Gap { id, .. } => *id,
        }
    }

    /// Lines it stands for (`None`: unknown).
    pub fn len(&self) -> Option<usize> {
        match self {
            Seg::Line(_) => Some(1),
            Seg::Gap { len, .. } => *len,
        }
    }

    /// A gap known to stand for no line.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    pub fn text(&self) -> Option<&Rc<str>> {
        match self {
            Seg::Line(l) => l.text.as_ref(),
            Seg::Gap { .. } => None,
        }
    }
}

/// One line of a view compared with what the map held at its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub at: usize,
    pub was: Option<Rc<str>>,
    pub shown: Rc<str>,
    pub origin: Option<EditId>,
    pub seam: Option<EditId>,
}

/// The known lines of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    pub segs: Vec<Seg>,
    next: u32,
}

impl Default for Known {
    /// Nothing known: the file may hold any number of lines.
    fn default() -> Known {
        Known { segs: vec![Seg::Gap { len: None, id: 0 }], next: 1 }
    }
}

impl Known {
    /// A file known to be empty (or not to exist).
    pub fn empty() -> Known {
        Known { segs: Vec::new(), next: 0 }
    }

    /// A file whose whole text is known, each line written by `origin`.
    pub fn whole(text: &str, origin: Option<EditId>) -> Known {
        let mut k = Known::empty();
        k.segs = split_lines(text).into_iter().map(|t| Seg::Line(k.line(Some(t), origin))).collect();
        k
    }

    /// An empty map that goes on numbering identities where `self` stops (the state an edit
    /// builds from `self`, whose kept lines keep theirs).
    pub fn successor(&self) -> Known {
        Known { segs: Vec::with_capacity(self.segs.len() + 4), next: self.next }
    }

    pub fn fresh(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    pub fn line(&mut self, text: Option<Rc<str>>, origin: Option<EditId>) -> Line {
        Line { text, origin, seam: None, id: self.fresh() }
    }

    pub fn gap(&mut self, len: Option<usize>) -> Seg {
        Seg::Gap { len, id: self.fresh() }
    }

    /// Lines in the file, when every gap's length is known.
    pub fn len(&self) -> Option<usize> {
        self.segs.iter().try_fold(0usize, |n, s| Some(n + s.len()?))
    }

    /// Nothing known of the file, not even that it has lines.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Whether every line's text is known.
    pub fn is_whole(&self) -> bool {
        self.segs.iter().all(|s| s.text().is_some())
    }

    /// What the map holds, for the replay's budget: its text bytes and its segments.
    pub fn weight(&self) -> (usize, usize) {
        (self.segs.iter().map(|s| s.text().map_or(0, |t| t.len())).sum(), self.segs.len())
    }

    /// Whether any line's text is known.
    pub fn has_text(&self) -> bool {
        self.segs.iter().any(|s| s.text().is_some())
    }

    /// The whole text, when known.
    pub fn text(&self) -> Option<String> {
        let mut out = String::new();
        for s in &self.segs {
            out.push_str(s.text()?);
            out.push('\n');
        }
        Some(out)
    }

    /// The line number each segment starts at (`None` after a gap of unknown length).
    pub fn positions(&self) -> Vec<Option<usize>> {
        let mut at = Some(1usize);
        self.segs
            .iter()
            .map(|s| {
                let here = at;
                at = at.and_then(|a| Some(a + s.len()?));
                here
            })
            .collect()
    }

    /// The segment index holding line `n` as a line of its own, splitting gaps. `extend`: a
    /// line past the known end is added (a view showed it). `None`: the place of line `n` is
    /// not known (a gap of unknown length before it), or it is past the end.
    pub fn materialize(&mut self, n: usize, extend: bool) -> Option<usize> {
        if n == 0 {
            return None;
        }
        let mut at = 1usize;
        let count = self.segs.len();
        for i in 0..count {
            match self.segs[i].clone() {
                Seg::Line(_) => {
                    if at == n {
                        return Some(i);
                    }
                    at += 1;
                }
                Seg::Gap { len: Some(len), .. } => {
                    if n < at + len {
                        let before = n - at;
                        let after = len - before - 1;
                        let mut parts = Vec::with_capacity(3);
                        if before > 0 {
                            parts.push(self.gap(Some(before)));
                        }
                        let line = Seg::Line(self.line(None, None));
                        parts.push(line);
                        if after > 0 {
                            parts.push(self.gap(Some(after)));
                        }
                        let idx = i + usize::from(before > 0);
                        self.segs.splice(i..=i, parts);
                        return Some(idx);
                    }
                    at += len;
                }
                Seg::Gap { len: None, .. } => {
                    // Only a gap that ends the file has a known start for what it holds.
                    if i + 1 != count {
                        return None;
                    }
                    let before = n - at;
                    let mut parts = Vec::with_capacity(3);
                    if before > 0 {
                        parts.push(self.gap(Some(before)));
                    }
                    parts.push(Seg::Line(self.line(None, None)));
                    parts.push(self.gap(None));
                    let idx = i + usize::from(before > 0);
                    self.segs.splice(i..=i, parts);
                    return Some(idx);
                }
            }
        }
        if !extend {
            return None;
        }
        if n > at {
            let g = self.gap(Some(n - at));
            self.segs.push(g);
        }
        let line = Seg::Line(self.line(None, None));
        self.segs.push(line);
        Some(self.segs.len() - 1)
    }

    /// Lines `first..=last` as segments of their own: the range of segment indexes. Gaps are
    /// split once per call, so a view of thousands of lines costs one pass.
    pub fn materialize_range(&mut self, first: usize, last: usize, extend: bool) -> Option<std::ops::Range<usize>> {
        let start = self.materialize(first, extend)?;
        let mut i = start;
        let mut need = last.saturating_sub(first);
        while need > 0 {
            let next = i + 1;
            match self.segs.get(next).cloned() {
                Some(Seg::Line(_)) => {
                    i = next;
                    need -= 1;
                }
                Some(Seg::Gap { len: Some(len), .. }) => {
                    let take = len.min(need);
                    let mut parts: Vec<Seg> = (0..take).map(|_| Seg::Line(self.line(None, None))).collect();
                    if len > take {
                        parts.push(self.gap(Some(len - take)));
                    }
                    self.segs.splice(next..=next, parts);
                    i = next + take - 1;
                    need -= take;
                }
                Some(Seg::Gap { len: None, .. }) => {
                    if next + 1 != self.segs.len() {
                        return None;
                    }
                    let mut parts: Vec<Seg> = (0..need).map(|_| Seg::Line(self.line(None, None))).collect();
                    parts.push(self.gap(None));
                    self.segs.splice(next..=next, parts);
                    i = next + need - 1;
                    need = 0;
                }
                None => {
                    if !extend {
                        return None;
                    }
                    for _ in 0..need {
                        let line = Seg::Line(self.line(None, None));
                        self.segs.push(line);
                    }
                    i = self.segs.len() - 1;
                    need = 0;
                }
            }
        }
        Some(start..i + 1)
    }

    /// Mark that the file ends after line `last` (a view reached its end): what the map held
    /// past it goes.
    pub fn end_at(&mut self, last: usize) {
        if last == 0 {
            self.segs.clear();
            return;
        }
        match self.materialize(last, true) {
            Some(i) => self.segs.truncate(i + 1),
            None => {
                // The end's place is unknown: keep what is known, the end stays open.
            }
        }
    }

    /// The texts of lines `first..=last` (`None` where unknown or not placeable), read without
    /// changing the map.
    pub fn texts_at(&self, first: usize, last: usize) -> Vec<Option<Rc<str>>> {
        let mut out = vec![None; last + 1 - first.min(last + 1)];
        let mut at = 1usize;
        for s in &self.segs {
            if at > last {
                break;
            }
            match s {
                Seg::Line(l) => {
                    if at >= first {
                        out[at - first] = l.text.clone();
                    }
                    at += 1;
                }
                Seg::Gap { len: Some(n), .. } => at += n,
                Seg::Gap { len: None, .. } => break,
            }
        }
        out
    }

    /// A view of consecutive lines starting at line `first`: compared with what the map held,
    /// then written in. `None` when the place cannot be found.
    pub fn show(&mut self, first: usize, lines: &[Rc<str>]) -> Option<Vec<Seen>> {
        if lines.is_empty() {
            return Some(Vec::new());
        }
        if self.materialize(first, true).is_none() {
            self.resync(first, lines);
        }
        let range = self.materialize_range(first, first + lines.len() - 1, true)?;
        let mut seen = Vec::with_capacity(lines.len());
        for (k, (i, shown)) in range.zip(lines).enumerate() {
            let Seg::Line(line) = &mut self.segs[i] else { return None };
            seen.push(Seen {
                at: first + k,
                was: line.text.clone(),
                shown: shown.clone(),
                origin: line.origin,
                seam: line.seam,
            });
            if line.text.as_deref() != Some(&**shown) {
                line.origin = None;
                line.seam = None;
                line.text = Some(shown.clone());
            }
        }
        Some(seen)
    }

    /// A view of the file's last lines (`tail`): placed by the file's length when known, else
    /// after everything known (the length stays unknown).
    pub fn show_tail(&mut self, lines: &[Rc<str>]) -> Vec<Seen> {
        if let Some(len) = self.len()
            && len >= lines.len()
        {
            return self.show(len - lines.len() + 1, lines).unwrap_or_default();
        }
        // Unknown length: the tail goes after a gap of unknown length, unless the map already
        // ends with exactly these lines.
        let tail_known = self.segs.len() >= lines.len()
            && self.segs[self.segs.len() - lines.len()..]
                .iter()
                .zip(lines)
                .all(|(s, l)| s.text().is_some_and(|t| t == l));
        if !tail_known {
            if !matches!(self.segs.last(), Some(Seg::Gap { len: None, .. })) {
                let g = self.gap(None);
                self.segs.push(g);
            }
            for l in lines {
                let line = self.line(Some(l.clone()), None);
                self.segs.push(Seg::Line(line));
            }
        }
        Vec::new()
    }

    /// A view whose place cannot be found (a gap of unknown length before it): find the shown
    /// lines among the known ones after that gap, which fixes the gap's length; failing that,
    /// forget what lies past the gap.
    fn resync(&mut self, first: usize, lines: &[Rc<str>]) {
        let positions = self.positions();
        let Some(g) = (0..self.segs.len()).find(|&i| matches!(self.segs[i], Seg::Gap { len: None, .. })) else {
            return;
        };
        let Some(gap_at) = positions[g] else { return };
        let fits = |j: usize| -> bool {
            lines.iter().take(3).enumerate().all(|(k, want)| self.segs.get(j + k).and_then(Seg::text) == Some(want))
        };
        let mut found = (g + 1..self.segs.len()).filter(|&j| fits(j));
        if let (Some(j), None) = (found.next(), found.next()) {
            // Lines between the gap and the match, all of known length?
            let between: Option<usize> = self.segs[g + 1..j].iter().try_fold(0, |n, s| Some(n + s.len()?));
            if let Some(between) = between
                && first >= gap_at + between
            {
                let id = self.fresh();
                self.segs[g] = Seg::Gap { len: Some(first - gap_at - between), id };
                return;
            }
        }
        self.segs.truncate(g + 1);
    }

    /// Where `text` (several lines; its first and last may be parts of lines, as a
    /// `str_replace` argument is) occurs in the known lines, exactly once: (segment index of
    /// its first line, lines it spans).
    pub fn locate(&self, text: &str) -> Option<(usize, usize)> {
        let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
        let (first, rest) = lines.split_first()?;
        if first.trim().is_empty() && rest.is_empty() {
            return None;
        }
        let fits = |i: usize| -> bool {
            let Some(line) = self.segs[i].text() else { return false };
            if rest.is_empty() {
                return line.contains(first);
            }
            let last = rest.len();
            line.ends_with(first)
                && rest.iter().enumerate().all(|(k, want)| {
                    self.segs
                        .get(i + 1 + k)
                        .and_then(Seg::text)
                        .is_some_and(|got| if k + 1 == last { got.starts_with(want) } else { &**got == *want })
                })
        };
        let mut found = (0..self.segs.len()).filter(|&i| fits(i));
        let at = found.next()?;
        found.next().is_none().then_some((at, lines.len()))
    }

    /// The texts of segments `range`, when all are known lines.
    pub fn texts(&self, range: std::ops::Range<usize>) -> Option<Vec<Rc<str>>> {
        self.segs.get(range)?.iter().map(|s| s.text().cloned()).collect()
    }

    /// Replace segments `range` with `lines` written by `origin`; the line after a removal
    /// records it (`seam`).
    pub fn splice(&mut self, range: std::ops::Range<usize>, lines: Vec<Rc<str>>, origin: Option<EditId>) {
        let removed = !range.is_empty();
        let added = lines.len();
        let end = range.start + added;
        let new: Vec<Seg> = lines.into_iter().map(|t| Seg::Line(self.line(Some(t), origin))).collect();
        self.segs.splice(range, new);
        if removed
            && added == 0
            && let Some(Seg::Line(next)) = self.segs.get_mut(end)
        {
            next.seam = origin;
        }
    }
}

/// A text as lines, without their terminators (`"a\nb\n"` and `"a\nb"` are both two lines).
pub fn split_lines(text: &str) -> Vec<Rc<str>> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n').unwrap_or(text).split('\n').map(|l| Rc::from(l.strip_suffix('\r').unwrap_or(l))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc(lines: &[&str]) -> Vec<Rc<str>> {
        lines.iter().map(|l| Rc::from(*l)).collect()
    }

    fn shape(k: &Known) -> String {
        k.segs
            .iter()
            .map(|s| match s {
                Seg::Line(l) => l.text.as_deref().unwrap_or("?").to_string(),
                Seg::Gap { len: Some(n), .. } => format!("[{n}]"),
                Seg::Gap { len: None, .. } => "[…]".to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn views_fill_gaps_at_their_lines() {
        let mut k = Known::default();
        k.show(3, &rc(&["c", "d"]));
        assert_eq!(shape(&k), "[2] c d […]");
        k.show(8, &rc(&["h"]));
        assert_eq!(shape(&k), "[2] c d [3] h […]");
        let seen = k.show(4, &rc(&["D", "e"])).unwrap_or_default();
        assert_eq!(seen[0].was.as_deref(), Some("d"));
        assert_eq!(seen[1].was, None);
        assert_eq!(shape(&k), "[2] c D e [2] h […]");
        k.end_at(8);
        assert_eq!(shape(&k), "[2] c D e [2] h");
        assert_eq!(k.len(), Some(8));
    }

    #[test]
    fn a_gap_of_unknown_length_is_found_again_by_content() {
        let mut k = Known::default();
        k.show(1, &rc(&["a", "b", "c", "d", "e", "f"]));
        // An edit moved lines by an unknown amount after line 2.
        let g = k.gap(None);
        k.segs.splice(2..3, [g]);
        assert_eq!(shape(&k), "a b […] d e f […]");
        assert_eq!(k.materialize(4, false), None);
        k.show(6, &rc(&["e", "f"]));
        assert_eq!(shape(&k), "a b [2] d e f […]");
        assert_eq!(k.len(), None);
        // Not found: what lies past the gap is forgotten.
        let mut k2 = Known::default();
        k2.show(1, &rc(&["a", "b"]));
        let g = k2.gap(None);
        k2.segs.insert(1, g);
        k2.show(5, &rc(&["x"]));
        assert_eq!(shape(&k2), "a [3] x […]");
    }

    #[test]
    fn tails_without_a_length_go_after_an_open_gap() {
        let mut k = Known::default();
        k.show(1, &rc(&["a"]));
        k.show_tail(&rc(&["y", "z"]));
        assert_eq!(shape(&k), "a […] y z");
        k.show_tail(&rc(&["y", "z"]));
        assert_eq!(shape(&k), "a […] y z");
        let mut w = Known::whole("a\nb\nc\n", None);
        w.show_tail(&rc(&["B", "c"]));
        assert_eq!(shape(&w), "a B c");
    }

    #[test]
    fn snippets_are_located_once() {
        let k = Known::whole("def f():\n    return 1\n    return 1\n", None);
        assert_eq!(k.locate("def f():\n    return"), Some((0, 2)));
        assert_eq!(k.locate("f()"), Some((0, 1)));
        assert_eq!(k.locate("    return 1"), None, "twice");
        assert_eq!(k.locate("nowhere"), None);
    }

    #[test]
    fn splicing_out_lines_marks_the_seam() {
        let mut k = Known::whole("a\nb\nc\n", None);
        k.splice(1..2, Vec::new(), Some(7));
        assert_eq!(shape(&k), "a c");
        let Seg::Line(c) = &k.segs[1] else { panic!() };
        assert_eq!(c.seam, Some(7));
        assert_eq!(split_lines("x\r\ny"), rc(&["x", "y"]));
        assert!(split_lines("").is_empty());
    }
}
