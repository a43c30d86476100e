//! A hunk of a unified diff: its `@@ -a,b +c,d @@` header and the lines it counts.

/// A hunk line: its mark (`' '`, `'-'`, `'+'`) and its text, with its line number on each side
/// it is on (context both, removed the old, added the new), counted from the header's starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub mark: char,
    pub text: &'a str,
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
    /// Followed by `\ No newline at end of file`.
    pub no_newline: bool,
    /// Its index in the lines of the text read ([`lines`]).
    pub row: usize,
}

/// One hunk of a file's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// The whole `@@ ... @@ section` line.
    pub header: &'a str,
    /// Old start and count, new start and count; `None` for a header without numbers.
    pub counts: Option<(usize, usize, usize, usize)>,
    pub lines: Vec<Line<'a>>,
    /// The header's index in the lines of the text read ([`lines`]).
    pub row: usize,
}

impl<'a> Hunk<'a> {
    /// What follows the header's second `@@` (git's function context), trimmed.
    pub fn section(&self) -> &'a str {
        section(self.header)
    }

    /// Its header places it in the file (see [`placed`]).
    pub fn placed(&self) -> bool {
        self.counts.is_some_and(placed)
    }

    /// The hunk as a diff of its own: its header and lines.
    pub fn text(&self) -> String {
        let mut out =
            String::with_capacity(self.header.len() + 1 + self.lines.iter().map(|l| l.text.len() + 2).sum::<usize>());
        out.push_str(self.header);
        out.push('\n');
        for l in &self.lines {
            out.push(l.mark);
            out.push_str(l.text);
            out.push('\n');
        }
        out
    }
}

/// What follows a hunk header's second `@@` (git's function context), trimmed.
pub fn section(header: &str) -> &str {
    let rest = header.strip_prefix("@@").unwrap_or(header);
    rest.split_once("@@").map_or("", |(_, s)| s.trim())
}

/// A hunk header's ranges as written (`-a,b`, `+c,d`) and what follows them (` @@ section`
/// without its ` @@`).
pub fn header_ranges(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.strip_prefix("@@ ")?;
    let (ranges, tail) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    Some((old, new, tail))
}

/// The numbers of a hunk's header `@@ -a,b +c,d @@`: old start and count, new start and count
/// (a count left out is 1; a start not placed, `-?,2` of a script's own text, is 0).
pub fn hunk_counts(line: &str) -> Option<(usize, usize, usize, usize)> {
    let (old, new, _) = header_ranges(line)?;
    let start = |s: &str| if s == "?" { Some(0) } else { s.parse().ok() };
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, c)) => Some((start(s)?, c.parse().ok()?)),
            None => Some((start(r)?, 1)),
        }
    };
    let (a, b) = range(old.strip_prefix('-')?)?;
    let (c, d) = range(new.strip_prefix('+')?)?;
    Some((a, b, c, d))
}

/// Whether a hunk's numbers place it: a start of 0 names the line before the hunk, so only an
/// empty side has it (`-?,2`, a script's own text that matched no known line, reads as 0).
pub fn placed((old_start, old_count, new_start, new_count): (usize, usize, usize, usize)) -> bool {
    (old_start > 0 || old_count == 0) && (new_start > 0 || new_count == 0)
}

/// A diff's lines, `\r` of CRLF diffs removed.
pub fn lines(text: &str) -> Vec<&str> {
    text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// The hunk whose header is `lines[at]` (a line starting `@@`), and the index of the first
/// line after it.
pub fn read_hunk<'a>(lines: &[&'a str], at: usize) -> (Hunk<'a>, usize) {
    let header = lines.get(at).copied().unwrap_or("");
    let counts = hunk_counts(header);
    let (mut old_no, mut new_no) = counts.map_or((1, 1), |(a, _, c, _)| (a.max(1), c.max(1)));
    let mut left = counts.map(|(_, b, _, d)| (b, d));
    let mut hunk = Hunk { header, counts, lines: Vec::new(), row: at };
    let mut i = at + 1;
    while let Some(&line) = lines.get(i) {
        // "\ No newline at end of file": of the line before, even the last one counted.
        if line.starts_with('\\') {
            if let Some(last) = hunk.lines.last_mut() {
                last.no_newline = true;
            }
            i += 1;
            continue;
        }
        if left == Some((0, 0)) {
            break;
        }
        let (mark, text) = match line.chars().next() {
            Some(c @ (' ' | '-' | '+')) => (c, &line[1..]),
            // A context line whose space was trimmed.
            None => (' ', ""),
            Some(_) => break,
        };
        // Without counts, a file's `--- ` / `+++ ` pair ends the hunk.
        if left.is_none() && line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            break;
        }
        let on_old = mark != '+';
        let on_new = mark != '-';
        hunk.lines.push(Line {
            mark,
            text,
            old_no: on_old.then_some(old_no),
            new_no: on_new.then_some(new_no),
            no_newline: false,
            row: i,
        });
        old_no += usize::from(on_old);
        new_no += usize::from(on_new);
        if let Some((old, new)) = left.as_mut() {
            *old = old.saturating_sub(usize::from(on_old));
            *new = new.saturating_sub(usize::from(on_new));
        }
        i += 1;
    }
    (hunk, i)
}
