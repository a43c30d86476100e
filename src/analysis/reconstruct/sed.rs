//! `sed -i` scripts, read and run on a file's known lines (GNU sed semantics): `s` (flags `g`,
//! `N`, `I`, `p`; any delimiter), `d`, `a`, `i`, `c` (one-line and `\`-continued text, escapes),
//! `y`, `p`, `q`, `Q`, `z`, `r` (a file whose text is known), `{ }` blocks and `!`, with
//! addresses `N`, `$`, `/re/` (`I`), `\%re%`, `first~step`, `0,/re/` and ranges `A,B`, `A,+N`,
//! `A,~N`. Also `perl -pe` substitution scripts (`s///` statements).
//!
//! Lines never shown are stood for by gaps: numeric addresses split them out; a pattern is
//! assumed not to match a line never shown (`Run::assumed` says it mattered), so a command
//! runs on the lines the run showed. What a script would do that cannot be known (a command
//! outside this list, text added to every line of a gap) is an error: the edit is then unknown.

use super::known::{EditId, Known, Line, Seg};
use super::pattern::{Dialect, Pattern, Replacement};
use std::cell::Cell;
use std::rc::Rc;

const UNCOUNTED: &str = "a line number past lines of unknown count";

/// Why a script could not be run on the known lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

fn unsupported<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

#[derive(Debug)]
enum Addr {
    Line(usize),
    Last,
    /// `None`: the last pattern used.
    Re(Option<Rc<Pattern>>),
    Step(usize, usize),
    /// `0,/re/`: the range may end on the first line.
    Zero,
}

#[derive(Debug)]
enum End {
    At(Addr),
    Plus(usize),
    Multiple(usize),
}

#[derive(Debug)]
enum Op {
    Subst { re: Option<Rc<Pattern>>, with: Replacement, nth: usize, global: bool, print: bool },
    Delete,
    Append(String),
    Insert(String),
    Change(String),
    Translate(Vec<(char, char)>),
    Print,
    Quit { print: bool },
    Zap,
    Read(String),
    Block(Vec<Cmd>),
    Nop,
}

#[derive(Debug)]
struct Cmd {
    start: Option<Addr>,
    end: Option<End>,
    negate: bool,
    op: Op,
    /// Range state while running: inside, and the line number it ends at (`+N`).
    active: Cell<bool>,
    until: Cell<Option<usize>>,
}

/// A parsed script.
#[derive(Debug)]
pub struct Script {
    cmds: Vec<Cmd>,
    quiet: bool,
    /// Line numbers its addresses name (split out of gaps before running).
    lines: Vec<usize>,
    /// Numeric ranges (first, last; `None`: to the end).
    ranges: Vec<(usize, Option<usize>)>,
}

/// What running a script did.
#[derive(Debug)]
pub struct Run {
    pub after: Known,
    /// A pattern was assumed not to match lines never shown.
    pub assumed: bool,
}

struct Parser<'a> {
    chars: Vec<char>,
    i: usize,
    dialect: Dialect,
    last_re: Option<Rc<Pattern>>,
    lines: &'a mut Vec<usize>,
    ranges: &'a mut Vec<(usize, Option<usize>)>,
}

impl Script {
    /// A sed script (the `-e` pieces joined by newlines). `quiet`: `-n`.
    pub fn sed(source: &str, extended: bool, quiet: bool) -> Result<Script, Unsupported> {
        let dialect = if extended { Dialect::Extended } else { Dialect::Basic };
        let (mut lines, mut ranges) = (Vec::new(), Vec::new());
        let mut p = Parser {
            chars: source.chars().collect(),
            i: 0,
            dialect,
            last_re: None,
            lines: &mut lines,
            ranges: &mut ranges,
        };
        let cmds = p.block(false)?;
        Ok(Script { cmds, quiet, lines, ranges })
    }

    /// A `perl -pe` script: `s/re/repl/flags` statements separated by `;`.
    pub fn perl(source: &str) -> Result<Script, Unsupported> {
        let mut cmds = Vec::new();
        let chars: Vec<char> = source.chars().collect();
        let mut i = 0;
        loop {
            while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
                i += 1;
            }
            if i >= chars.len() {
                break;
            }
            if chars[i] != 's' {
                return unsupported("a perl statement other than s///");
            }
            i += 1;
            let Some(&delim) = chars.get(i) else { return unsupported("perl s without a delimiter") };
            if delim.is_alphanumeric() || delim.is_whitespace() {
                return unsupported("perl s with an unusual delimiter");
            }
            let close = match delim {
                '{' => '}',
                '(' => ')',
                '[' => ']',
                '<' => '>',
                d => d,
            };
            i += 1;
            let re = take_until(&chars, &mut i, close, false).ok_or_else(|| Unsupported("unterminated s".into()))?;
            if close != delim {
                while i < chars.len() && chars[i].is_whitespace() {
                    i += 1;
                }
                if chars.get(i) != Some(&delim) {
                    return unsupported("perl s with bracketed parts");
                }
                i += 1;
            }
            let repl = take_until(&chars, &mut i, close, false).ok_or_else(|| Unsupported("unterminated s".into()))?;
            let mut flags = String::new();
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                flags.push(chars[i]);
                i += 1;
            }
            if flags.chars().any(|f| !"gi".contains(f)) {
                return unsupported(format!("perl s flags {flags}"));
            }
            let re = Pattern::new(&re, Dialect::Perl, flags.contains('i'))
                .ok_or_else(|| Unsupported("a pattern perl would not compile here".into()))?;
            let with = Replacement::perl(&repl).ok_or_else(|| Unsupported("perl variables in a replacement".into()))?;
            cmds.push(cmd(
                None,
                None,
                false,
                Op::Subst { re: Some(Rc::new(re)), with, nth: 1, global: flags.contains('g'), print: false },
            ));
        }
        Ok(Script { cmds, quiet: false, lines: Vec::new(), ranges: Vec::new() })
    }

    /// Run the script on `before` (the file as known), writing new lines as edit `edit`.
    /// `read`: the text of a file named by `r`, when known.
    pub fn run(
        &self,
        before: &mut Known,
        edit: EditId,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Run, Unsupported> {
        // Lines the addresses name become lines of their own, so the gaps left hold none.
        for &n in &self.lines {
            before.materialize(n, false);
        }
        for &(first, last) in &self.ranges {
            let last = last.or_else(|| before.len()).unwrap_or(first);
            if last >= first && last - first <= 100_000 {
                before.materialize_range(first, last, false);
            }
        }
        reset(&self.cmds);
        let mut exec = Exec { script: self, edit, out: before.successor(), assumed: false, seam: false, read };
        let positions = before.positions();
        let count = before.segs.len();
        let mut last_re: Option<Rc<Pattern>> = None;
        let mut at_least = 1;
        for (i, seg) in before.segs.iter().enumerate() {
            let is_last = i + 1 == count;
            if let Some(p) = positions[i] {
                at_least = p;
            }
            match seg {
                Seg::Line(line) => {
                    let place = Place { at: positions[i], at_least, last: is_last };
                    let quit = exec.line(line, place, &mut last_re)?;
                    if quit {
                        break;
                    }
                }
                Seg::Gap { len, .. } => exec.gap(seg, *len, is_last)?,
            }
        }
        let assumed = exec.assumed;
        Ok(Run { after: exec.out, assumed })
    }
}

fn reset(cmds: &[Cmd]) {
    for c in cmds {
        c.active.set(false);
        c.until.set(None);
        if let Op::Block(inner) = &c.op {
            reset(inner);
        }
    }
}

fn cmd(start: Option<Addr>, end: Option<End>, negate: bool, op: Op) -> Cmd {
    Cmd { start, end, negate, op, active: Cell::new(false), until: Cell::new(None) }
}

/// Text up to an unescaped `close`; `\close` becomes `close`, other escapes stay for the regex
/// or replacement reader. With `newline_ends`, an unescaped newline also ends it (unterminated).
fn take_until(chars: &[char], i: &mut usize, close: char, newline_ends: bool) -> Option<String> {
    let mut out = String::new();
    while *i < chars.len() {
        let c = chars[*i];
        *i += 1;
        if c == close {
            return Some(out);
        }
        if newline_ends && c == '\n' {
            return None;
        }
        if c == '\\' {
            match chars.get(*i) {
                Some(&d) if d == close => {
                    out.push(d);
                    *i += 1;
                }
                Some('\n') => {
                    out.push('\n');
                    *i += 1;
                }
                Some(&d) => {
                    out.push('\\');
                    out.push(d);
                    *i += 1;
                }
                None => out.push('\\'),
            }
            continue;
        }
        out.push(c);
    }
    None
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.chars[start..self.i].iter().collect::<String>().parse().ok()
    }

    fn block(&mut self, nested: bool) -> Result<Vec<Cmd>, Unsupported> {
        let mut cmds = Vec::new();
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.i += 1;
            }
            match self.peek() {
                None if nested => return unsupported("unclosed {"),
                None => return Ok(cmds),
                Some('}') if nested => {
                    self.i += 1;
                    return Ok(cmds);
                }
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                Some(_) => cmds.push(self.command()?),
            }
        }
    }

    fn regex(&mut self, close: char) -> Result<Option<Rc<Pattern>>, Unsupported> {
        let source = take_until(&self.chars, &mut self.i, close, true)
            .ok_or_else(|| Unsupported("unterminated regular expression".into()))?;
        let mut ignore_case = false;
        while let Some(f) = self.peek().filter(|c| *c == 'I' || *c == 'M') {
            if f == 'M' {
                return unsupported("multi-line mode");
            }
            ignore_case = true;
            self.i += 1;
        }
        if source.is_empty() {
            return Ok(None);
        }
        let re = Pattern::new(&source, self.dialect, ignore_case)
            .ok_or_else(|| Unsupported(format!("a pattern sed would refuse: {source}")))?;
        let re = Rc::new(re);
        self.last_re = Some(re.clone());
        Ok(Some(re))
    }

    fn address(&mut self) -> Result<Option<Addr>, Unsupported> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self.number().unwrap_or(0);
                if self.peek() == Some('~') {
                    self.i += 1;
                    let step = self.number().unwrap_or(0);
                    return Ok(Some(Addr::Step(n, step)));
                }
                Ok(Some(if n == 0 { Addr::Zero } else { Addr::Line(n) }))
            }
            Some('$') => {
                self.i += 1;
                Ok(Some(Addr::Last))
            }
            Some('/') => {
                self.i += 1;
                Ok(Some(Addr::Re(self.regex('/')?)))
            }
            Some('\\') => {
                self.i += 1;
                let Some(close) = self.peek() else { return unsupported("\\ at the end") };
                self.i += 1;
                Ok(Some(Addr::Re(self.regex(close)?)))
            }
            _ => Ok(None),
        }
    }

    fn command(&mut self) -> Result<Cmd, Unsupported> {
        let start = self.address()?;
        let mut end = None;
        if start.is_some() && self.peek() == Some(',') {
            self.i += 1;
            self.skip_blank();
            end = Some(match self.peek() {
                Some('+') => {
                    self.i += 1;
                    End::Plus(self.number().unwrap_or(0))
                }
                Some('~') => {
                    self.i += 1;
                    End::Multiple(self.number().unwrap_or(0))
                }
                _ => End::At(self.address()?.ok_or_else(|| Unsupported("a range without an end".into()))?),
            });
        }
        if let Some(Addr::Zero) = start
            && !matches!(end, Some(End::At(Addr::Re(_))))
        {
            return unsupported("line 0 outside 0,/re/");
        }
        match (&start, &end) {
            (Some(Addr::Line(a)), Some(End::At(Addr::Line(b)))) => self.ranges.push((*a, Some(*b))),
            (Some(Addr::Line(a)), Some(End::At(Addr::Last))) => self.ranges.push((*a, None)),
            (Some(Addr::Line(a)), Some(End::Plus(n))) => self.ranges.push((*a, Some(a + n))),
            (Some(Addr::Line(a)), _) => self.lines.push(*a),
            _ => {}
        }
        if let Some(End::At(Addr::Line(b))) = &end {
            self.lines.push(*b);
        }
        self.skip_blank();
        let mut negate = false;
        while self.peek() == Some('!') {
            negate = true;
            self.i += 1;
            self.skip_blank();
        }
        let Some(letter) = self.peek() else { return unsupported("an address without a command") };
        self.i += 1;
        let op = match letter {
            '{' => Op::Block(self.block(true)?),
            's' => self.substitute()?,
            'y' => self.translate()?,
            'd' => Op::Delete,
            'p' => Op::Print,
            'q' | 'Q' => {
                self.skip_blank();
                self.number();
                Op::Quit { print: letter == 'q' }
            }
            'z' => Op::Zap,
            'a' => Op::Append(self.text()),
            'i' => Op::Insert(self.text()),
            'c' => Op::Change(self.text()),
            'r' => {
                self.skip_blank();
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| *c != '\n') {
                    name.push(c);
                    self.i += 1;
                }
                Op::Read(name.trim_end().to_string())
            }
            '=' | 'l' | 'n' | 'N' | 'D' | 'P' | 'h' | 'H' | 'g' | 'G' | 'x' | 'b' | 't' | 'T' | ':' | 'w' | 'W'
            | 'R' | 'e' | 'F' => return unsupported(format!("the `{letter}` command")),
            'v' => {
                while self.peek().is_some_and(|c| c != ';' && c != '\n') {
                    self.i += 1;
                }
                Op::Nop
            }
            other => return unsupported(format!("unknown command `{other}`")),
        };
        Ok(cmd(start, end, negate, op))
    }

    /// The text of `a`, `i`, `c`: `a\` + newline + lines (a `\` at a line's end continues
    /// it), GNU's one-liners `a text` and `a\text`; escapes processed (`\t`, `\n`), other
    /// backslashes removed.
    fn text(&mut self) -> String {
        self.skip_blank();
        if self.peek() == Some('\\') {
            self.i += 1;
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        }
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                '\n' => break,
                '\\' => match self.peek() {
                    Some(d) => {
                        self.i += 1;
                        match d {
                            'n' => out.push('\n'),
                            't' => out.push('\t'),
                            'r' => out.push('\r'),
                            other => out.push(other),
                        }
                    }
                    None => break,
                },
                other => out.push(other),
            }
        }
        out
    }

    fn substitute(&mut self) -> Result<Op, Unsupported> {
        let Some(delim) = self.peek() else { return unsupported("s without a delimiter") };
        if delim == '\n' || delim == '\\' {
            return unsupported("s with a newline or backslash delimiter");
        }
        self.i += 1;
        let re = self.regex_until(delim)?;
        let repl = take_until(&self.chars, &mut self.i, delim, false)
            .ok_or_else(|| Unsupported("unterminated s replacement".into()))?;
        let (mut global, mut print, mut nth, mut ignore_case) = (false, false, 1, false);
        loop {
            match self.peek() {
                Some('g') => global = true,
                Some('p') => print = true,
                Some('i' | 'I') => ignore_case = true,
                Some(c) if c.is_ascii_digit() => {
                    nth = self.number().unwrap_or(1).max(1);
                    continue;
                }
                Some('m' | 'M' | 'e' | 'w') => return unsupported("s flags m, e or w"),
                _ => break,
            }
            self.i += 1;
        }
        let re = match (re, ignore_case) {
            (Some(source), ic) => {
                let re = Pattern::new(&source, self.dialect, ic)
                    .ok_or_else(|| Unsupported(format!("a pattern sed would refuse: {source}")))?;
                let re = Rc::new(re);
                self.last_re = Some(re.clone());
                Some(re)
            }
            (None, _) => None,
        };
        Ok(Op::Subst { re, with: Replacement::sed(&repl), nth, global, print })
    }

    /// The regex of `s`: `None` when empty (the last one used).
    fn regex_until(&mut self, delim: char) -> Result<Option<String>, Unsupported> {
        let source = take_until(&self.chars, &mut self.i, delim, false)
            .ok_or_else(|| Unsupported("unterminated s pattern".into()))?;
        Ok((!source.is_empty()).then_some(source))
    }

    fn translate(&mut self) -> Result<Op, Unsupported> {
        let Some(delim) = self.peek() else { return unsupported("y without a delimiter") };
        self.i += 1;
        let from = take_until(&self.chars, &mut self.i, delim, false).ok_or_else(|| Unsupported("bad y".into()))?;
        let to = take_until(&self.chars, &mut self.i, delim, false).ok_or_else(|| Unsupported("bad y".into()))?;
        let unescape = |s: &str| s.replace("\\n", "\n").replace("\\\\", "\\");
        let (from, to): (Vec<char>, Vec<char>) = (unescape(&from).chars().collect(), unescape(&to).chars().collect());
        if from.len() != to.len() {
            return unsupported("y with strings of different lengths");
        }
        Ok(Op::Translate(from.into_iter().zip(to).collect()))
    }
}

/// One line through the script: the pattern space and what goes out around it.
struct Cycle {
    /// The pattern space; `None` when the line's text was never shown.
    text: Option<String>,
    changed: bool,
    deleted: bool,
    before: Vec<Option<String>>,
    after: Vec<Option<String>>,
    quit: bool,
    quit_print: bool,
}

struct Exec<'a> {
    script: &'a Script,
    edit: EditId,
    out: Known,
    assumed: bool,
    /// The last line went: the next one written records the seam.
    seam: bool,
    read: &'a dyn Fn(&str) -> Option<String>,
}

/// Where a line is, for addresses.
#[derive(Clone, Copy)]
struct Place {
    at: Option<usize>,
    /// Past a gap of unknown length, the line's number is at least this.
    at_least: usize,
    last: bool,
}

impl Place {
    /// Whether this line is line `n`; `None` when that cannot be known.
    fn is(&self, n: usize) -> Option<bool> {
        match self.at {
            Some(at) => Some(at == n),
            None if n < self.at_least => Some(false),
            None => None,
        }
    }

    /// Whether this line is at or past line `n`; `None` when that cannot be known.
    fn past(&self, n: usize) -> Option<bool> {
        match self.at {
            Some(at) => Some(at >= n),
            None if n < self.at_least => Some(true),
            None => None,
        }
    }
}

impl Exec<'_> {
    fn push_text(&mut self, text: Option<String>) {
        match text {
            Some(t) => {
                for piece in t.split('\n') {
                    let line = self.out.line(Some(Rc::from(piece)), Some(self.edit));
                    self.push_line(line);
                }
            }
            None => {
                let line = self.out.line(None, Some(self.edit));
                self.push_line(line);
            }
        }
    }

    fn push_line(&mut self, mut line: Line) {
        if std::mem::take(&mut self.seam) {
            line.seam = Some(self.edit);
        }
        self.out.segs.push(Seg::Line(line));
    }

    fn line(&mut self, line: &Line, place: Place, last_re: &mut Option<Rc<Pattern>>) -> Result<bool, Unsupported> {
        let mut cy = Cycle {
            text: line.text.as_deref().map(str::to_string),
            changed: false,
            deleted: false,
            before: Vec::new(),
            after: Vec::new(),
            quit: false,
            quit_print: true,
        };
        self.cmds(&self.script.cmds, &mut cy, place, last_re)?;
        for t in std::mem::take(&mut cy.before) {
            self.push_text(t);
        }
        let print = !cy.deleted && !self.script.quiet && (!cy.quit || cy.quit_print);
        if print {
            if cy.changed {
                self.push_text(cy.text.clone());
            } else {
                self.push_line(line.clone());
            }
        } else {
            self.seam = true;
        }
        for t in std::mem::take(&mut cy.after) {
            self.push_text(t);
        }
        Ok(cy.quit)
    }

    fn cmds(
        &mut self,
        cmds: &[Cmd],
        cy: &mut Cycle,
        place: Place,
        last_re: &mut Option<Rc<Pattern>>,
    ) -> Result<(), Unsupported> {
        for c in cmds {
            if cy.deleted || cy.quit {
                return Ok(());
            }
            if !self.selects(c, cy, place, last_re)? {
                continue;
            }
            match &c.op {
                Op::Subst { re, with, nth, global, print } => {
                    let re = match re {
                        Some(r) => {
                            *last_re = Some(r.clone());
                            r.clone()
                        }
                        None => {
                            last_re.clone().ok_or_else(|| Unsupported("an empty pattern with none before".into()))?
                        }
                    };
                    match &cy.text {
                        Some(t) => {
                            if let Some(new) = re.substitute(t, with, *nth, *global) {
                                cy.changed |= new != *t;
                                cy.text = Some(new);
                                if *print {
                                    cy.before.push(cy.text.clone());
                                }
                            }
                        }
                        None => {
                            // A line never shown: changed, or not, unseen. Its text stays
                            // unknown, as a new line of this edit.
                            cy.changed = true;
                        }
                    }
                }
                Op::Delete => cy.deleted = true,
                Op::Zap => {
                    cy.changed |= cy.text.as_deref() != Some("");
                    cy.text = Some(String::new());
                }
                Op::Append(t) => cy.after.push(Some(t.clone())),
                Op::Insert(t) => cy.before.push(Some(t.clone())),
                Op::Change(t) => {
                    cy.deleted = true;
                    // In a range, the text goes out once, at its end.
                    if c.end.is_none() || !c.active.get() || c.negate {
                        cy.after.push(Some(t.clone()));
                    }
                }
                Op::Translate(pairs) => {
                    cy.changed |= cy.text.is_none();
                    if let Some(t) = &cy.text {
                        let new: String =
                            t.chars().map(|ch| pairs.iter().find(|(a, _)| *a == ch).map_or(ch, |(_, b)| *b)).collect();
                        cy.changed |= new != *t;
                        cy.text = Some(new);
                    }
                }
                Op::Print => cy.before.push(cy.text.clone()),
                Op::Quit { print } => {
                    cy.quit = true;
                    cy.quit_print = *print;
                }
                Op::Read(name) => match (self.read)(name) {
                    Some(text) => cy.after.push(Some(text.strip_suffix('\n').unwrap_or(&text).to_string())),
                    None => return unsupported(format!("r of {name}, whose text the run never showed")),
                },
                Op::Block(inner) => self.cmds(inner, cy, place, last_re)?,
                Op::Nop => {}
            }
        }
        Ok(())
    }

    /// Whether the command applies to this line (ranges keep their state across lines).
    fn selects(
        &mut self,
        c: &Cmd,
        cy: &Cycle,
        place: Place,
        last_re: &mut Option<Rc<Pattern>>,
    ) -> Result<bool, Unsupported> {
        let Some(start) = &c.start else { return Ok(!c.negate) };
        let hit = match &c.end {
            None => self.matches(start, cy, place, last_re)?,
            Some(end) => {
                if c.active.get() {
                    let done = match end {
                        End::At(Addr::Line(n)) => place.past(*n).ok_or_else(|| Unsupported(UNCOUNTED.into()))?,
                        End::At(a) => self.matches(a, cy, place, last_re)?,
                        End::Plus(_) | End::Multiple(_) => place.at.zip(c.until.get()).is_some_and(|(a, u)| a >= u),
                    };
                    if done {
                        c.active.set(false);
                    }
                    true
                } else if (matches!(start, Addr::Zero) && place.at == Some(1))
                    || self.matches(start, cy, place, last_re)?
                {
                    // A range whose end is a line at or before this one is this line alone.
                    let one = match end {
                        End::At(Addr::Line(n)) => place.past(*n).ok_or_else(|| Unsupported(UNCOUNTED.into()))?,
                        End::At(Addr::Last) => place.last,
                        End::At(a) if matches!(start, Addr::Zero) => self.matches(a, cy, place, last_re)?,
                        End::At(_) => false,
                        End::Plus(n) => {
                            c.until.set(place.at.map(|a| a + n));
                            *n == 0
                        }
                        End::Multiple(m) => {
                            let until = place.at.map(|a| if *m == 0 { a } else { a.div_ceil(*m) * m });
                            c.until.set(until);
                            until == place.at
                        }
                    };
                    c.active.set(!one);
                    true
                } else {
                    false
                }
            }
        };
        Ok(hit != c.negate)
    }

    fn matches(
        &mut self,
        a: &Addr,
        cy: &Cycle,
        place: Place,
        last_re: &mut Option<Rc<Pattern>>,
    ) -> Result<bool, Unsupported> {
        Ok(match a {
            Addr::Line(n) => place.is(*n).ok_or_else(|| Unsupported(UNCOUNTED.into()))?,
            Addr::Last => place.last,
            Addr::Step(first, step) => match place.at {
                Some(at) if *step == 0 => at == *first,
                Some(at) => at >= *first && (at - first) % step == 0,
                None => return unsupported(UNCOUNTED),
            },
            Addr::Zero => false,
            Addr::Re(re) => {
                let re = match re {
                    Some(r) => {
                        *last_re = Some(r.clone());
                        r.clone()
                    }
                    None => last_re.clone().ok_or_else(|| Unsupported("an empty pattern with none before".into()))?,
                };
                match &cy.text {
                    Some(t) => re.is_match(t),
                    None => {
                        self.assumed = true;
                        false
                    }
                }
            }
        })
    }

    /// Lines never shown, none of them named by number (those were split out).
    fn gap(&mut self, seg: &Seg, len: Option<usize>, is_last: bool) -> Result<(), Unsupported> {
        if len == Some(0) {
            return Ok(());
        }
        let mut keep = true;
        let mut after_gap: Vec<String> = Vec::new();
        self.gap_cmds(&self.script.cmds, &mut keep, &mut after_gap, is_last && len.is_none())?;
        if self.script.quiet {
            keep = false;
        }
        if keep {
            let mut seg = seg.clone();
            if std::mem::take(&mut self.seam) {
                // A gap cannot record a seam; its removal is still drawn.
            }
            if let Seg::Gap { .. } = &mut seg {
                self.out.segs.push(seg);
            }
        } else {
            self.seam = true;
        }
        for t in after_gap {
            self.push_text(Some(t));
        }
        Ok(())
    }

    /// What the commands do to every line of a gap: `s` and `y` leave them unknown, `d` (or
    /// `c`) on all of them removes the gap; a pattern is assumed not to match; `$a` after the
    /// open end of a file. Anything that would add lines among them cannot be drawn.
    fn gap_cmds(
        &mut self,
        cmds: &[Cmd],
        keep: &mut bool,
        after: &mut Vec<String>,
        holds_last: bool,
    ) -> Result<(), Unsupported> {
        for c in cmds {
            let applies = if c.active.get() {
                match &c.end {
                    Some(End::At(Addr::Last)) => true,
                    Some(End::At(Addr::Line(_))) | Some(End::Plus(_)) => true,
                    _ => return unsupported("a range whose end may lie among lines never shown"),
                }
            } else {
                match &c.start {
                    None => true,
                    Some(Addr::Re(_)) => {
                        self.assumed = true;
                        false
                    }
                    Some(Addr::Last) if holds_last && c.end.is_none() => {
                        match &c.op {
                            Op::Append(t) => after.push(t.clone()),
                            Op::Subst { .. } | Op::Translate(_) | Op::Delete | Op::Nop => {}
                            _ => return unsupported("a command on the last line, which the run never showed"),
                        }
                        continue;
                    }
                    Some(_) => false,
                }
            } != c.negate;
            if !applies {
                continue;
            }
            match &c.op {
                // Lines never shown may have changed: they stay unknown.
                Op::Subst { .. } | Op::Translate(_) => self.assumed = true,
                Op::Nop => {}
                Op::Delete => *keep = false,
                Op::Change(t) if c.end.is_some() && c.active.get() => {
                    *keep = false;
                    if matches!(c.end, Some(End::At(Addr::Last))) && holds_last {
                        after.push(t.clone());
                    }
                }
                Op::Block(inner) => self.gap_cmds(inner, keep, after, holds_last)?,
                _ => return unsupported("a command that adds text among lines never shown"),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(k: &Known) -> String {
        k.segs
            .iter()
            .map(|s| match s {
                Seg::Line(l) => l.text.as_deref().unwrap_or("?").to_string(),
                Seg::Gap { len: Some(n), .. } => format!("[{n}]"),
                Seg::Gap { len: None, .. } => "[…]".to_string(),
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    fn run(script: &str, file: &str) -> String {
        let mut k = Known::whole(file, None);
        let s = Script::sed(script, false, false).expect("parses");
        text_of(&s.run(&mut k, 0, &|_| None).expect("runs").after)
    }

    #[test]
    fn substitutions_with_flags_addresses_and_delimiters() {
        assert_eq!(run("s/a/b/", "a a\na\n"), "b a|b");
        assert_eq!(run("s/a/b/g", "a a\n"), "b b");
        assert_eq!(run("s/a/b/2", "a a a\n"), "a b a");
        assert_eq!(run("s/A/b/I", "a\n"), "b");
        assert_eq!(run("2s|/x|/y|", "/x\n/x\n"), "/x|/y");
        assert_eq!(run("s#a\\#b#c#", "a#b\n"), "c");
        assert_eq!(run("/keep/!s/x/y/", "keep x\nx\n"), "keep x|y");
        assert_eq!(run("2,3s/x/y/", "x\nx\nx\nx\n"), "x|y|y|x");
        assert_eq!(run("$s/x/y/", "x\nx\n"), "x|y");
        assert_eq!(run("/start/,/end/s/x/y/", "x\nstart x\nx\nend x\nx\n"), "x|start y|y|end y|x");
        assert_eq!(run("s/x/a\\nb/", "x\n"), "a|b");
        assert_eq!(run("s/x/y/;s/y/z/", "x\n"), "z");
        assert_eq!(run("1~2s/x/y/", "x\nx\nx\n"), "y|x|y");
        assert_eq!(run("2,+1s/x/y/", "x\nx\nx\nx\n"), "x|y|y|x");
        assert_eq!(run("0,/x/s/x/y/", "x\nx\n"), "y|x");
    }

    #[test]
    fn appends_inserts_changes_and_deletes() {
        assert_eq!(run("1a\\    indented", "a\nb\n"), "a|    indented|b");
        assert_eq!(run("1a hello", "a\n"), "a|hello");
        assert_eq!(run("1a\\\nline one\\\nline two", "a\n"), "a|line one|line two");
        assert_eq!(run("2i\\x", "a\nb\n"), "a|x|b");
        assert_eq!(run("1a\\  one\\n  two", "a\n"), "a|  one|  two");
        assert_eq!(run("2,3c\\new", "a\nb\nc\nd\n"), "a|new|d");
        assert_eq!(run("2c\\new", "a\nb\nc\n"), "a|new|c");
        assert_eq!(run("2d", "a\nb\nc\n"), "a|c");
        assert_eq!(run("32d;34d;35d", &(1..=36).map(|n| format!("{n}\n")).collect::<String>()).split('|').count(), 33);
        assert_eq!(run("/DEBUG/d", "a\nDEBUG x\nb\n"), "a|b");
        assert_eq!(run("2,$d", "a\nb\nc\n"), "a");
        assert_eq!(run("$a\\end", "a\nb\n"), "a|b|end");
        assert_eq!(run("2q", "a\nb\nc\n"), "a|b");
        assert_eq!(run("y/ab/AB/", "abc\n"), "ABc");
        assert_eq!(run("/x/{s/x/y/;s/y/z/}", "x\nw\n"), "z|w");
        assert_eq!(run("2p", "a\nb\n"), "a|b|b");
    }

    #[test]
    fn lines_never_shown_are_gaps_that_numbers_split() {
        let mut k = Known::default();
        k.show(10, &[Rc::from("ten"), Rc::from("eleven")]);
        // `21a\ x`: line 21 was never shown, but the new line's place is known.
        let s = Script::sed("21a\\    x", false, false).expect("parses");
        let r = s.run(&mut k, 3, &|_| None).expect("runs");
        assert_eq!(text_of(&r.after), "[9]|ten|eleven|[9]|?|    x|[…]");
        // A pattern over lines never shown: assumed not to match them.
        let s = Script::sed("s/ten/TEN/", false, false).expect("parses");
        let r = s.run(&mut k, 4, &|_| None).expect("runs");
        assert!(r.assumed);
        assert_eq!(text_of(&r.after), "[9]|TEN|eleven|[9]|?|[…]");
        // Deleting to the end drops the open gap.
        let s = Script::sed("11,$d", false, false).expect("parses");
        let r = s.run(&mut k, 5, &|_| None).expect("runs");
        assert_eq!(text_of(&r.after), "[9]|ten");
        // Appending at the open end.
        let s = Script::sed("$a\\last", false, false).expect("parses");
        let r = s.run(&mut k, 6, &|_| None).expect("runs");
        assert_eq!(text_of(&r.after), "[9]|ten|eleven|[9]|?|[…]|last");
    }

    #[test]
    fn what_cannot_be_known_is_an_error() {
        assert!(Script::sed("N;s/\\n//", false, false).is_err());
        assert!(Script::sed("s/a/b", false, false).is_err());
        let mut k = Known::default();
        let s = Script::sed("a\\x", false, false).expect("parses");
        assert!(s.run(&mut k, 0, &|_| None).is_err(), "a line after every unknown line");
        let s = Script::sed("1r other.txt", false, false).expect("parses");
        let mut w = Known::whole("a\n", None);
        assert!(s.run(&mut w, 0, &|_| None).is_err());
        let r = s.run(&mut w, 0, &|_| Some("from file\n".into())).expect("runs");
        assert_eq!(text_of(&r.after), "a|from file");
    }

    #[test]
    fn perl_substitutions() {
        let s = Script::perl("s/(\\w+)_old/$1_new/g; s{a}{b}").expect("parses");
        let mut k = Known::whole("x_old y_old a\n", None);
        assert_eq!(text_of(&s.run(&mut k, 0, &|_| None).expect("runs").after), "x_new y_new b");
        assert!(Script::perl("print if /x/").is_err());
    }
}
