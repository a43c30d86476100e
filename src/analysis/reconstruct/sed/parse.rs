//! Reading a `sed` script (or a `perl -pe` one) into commands.

use super::{Addr, Cmd, End, MAX_COMMANDS, MAX_LINE, Op, Script, Unsupported, cmd, unsupported};
use crate::analysis::reconstruct::pattern::{Dialect, Pattern, Replacement, perl_may_take_newline, perl_statements};
use std::rc::Rc;

pub(super) struct Parser<'a> {
    chars: Vec<char>,
    i: usize,
    dialect: Dialect,
    last_re: Option<Rc<Pattern>>,
    lines: &'a mut Vec<usize>,
    ranges: &'a mut Vec<(usize, Option<usize>)>,
    /// Commands read so far, blocks included.
    count: &'a mut usize,
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
            count: &mut 0,
        };
        let cmds = p.block(false)?;
        Ok(Script { cmds, quiet, lines, ranges })
    }

    /// A `perl -pe` script: `s/re/repl/flags` statements separated by `;`.
    pub fn perl(source: &str) -> Result<Script, Unsupported> {
        let mut cmds = Vec::new();
        for st in perl_statements(source).map_err(|e| Unsupported(e.into()))? {
            if st.flags.chars().any(|f| !"gi".contains(f)) {
                return unsupported(format!("perl s flags {}", st.flags));
            }
            if cmds.len() == MAX_COMMANDS {
                return Err(Unsupported::too_large());
            }
            if perl_may_take_newline(&st.re) {
                return unsupported("a perl pattern that may take the line's newline");
            }
            let re = Pattern::new(&st.re, Dialect::Perl, st.flags.contains('i'))
                .ok_or_else(|| Unsupported("a pattern perl would not compile here".into()))?;
            let with =
                Replacement::perl(&st.with).ok_or_else(|| Unsupported("perl variables in a replacement".into()))?;
            cmds.push(cmd(
                None,
                None,
                false,
                Op::Subst { re: Some(Rc::new(re)), with, nth: 1, global: st.flags.contains('g'), print: false },
            ));
        }
        Ok(Script { cmds, quiet: false, lines: Vec::new(), ranges: Vec::new() })
    }
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

    /// A decimal number; one past [`MAX_LINE`] is `MAX_LINE + 1` (no line is there).
    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = &self.chars[start..self.i];
        let beyond = digits.iter().skip_while(|c| **c == '0').count() > 10;
        let n: usize = if beyond { MAX_LINE + 1 } else { digits.iter().collect::<String>().parse().ok()? };
        Some(n.min(MAX_LINE + 1))
    }

    pub(super) fn block(&mut self, nested: bool) -> Result<Vec<Cmd>, Unsupported> {
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
                Some(_) => {
                    *self.count += 1;
                    if *self.count > MAX_COMMANDS {
                        return Err(Unsupported::too_large());
                    }
                    cmds.push(self.command()?)
                }
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
        // Lines split out of gaps before the script runs (none past any file's end).
        match (&start, &end) {
            (Some(Addr::Line(a)), _) if *a > MAX_LINE => {}
            (Some(Addr::Line(a)), Some(End::At(Addr::Line(b)))) => self.ranges.push((*a, Some(*b))),
            (Some(Addr::Line(a)), Some(End::At(Addr::Last))) => self.ranges.push((*a, None)),
            (Some(Addr::Line(a)), Some(End::Plus(n))) => self.ranges.push((*a, Some(a.saturating_add(*n)))),
            (Some(Addr::Line(a)), _) => self.lines.push(*a),
            _ => {}
        }
        if let Some(End::At(Addr::Line(b))) = &end
            && *b <= MAX_LINE
        {
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

/// One `s` command of a script that is nothing else (what `sed -z` is read as): its parts as
/// written, the delimiter unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SedSubst {
    pub re: String,
    pub with: String,
    pub global: bool,
    pub nth: usize,
    pub ignore_case: bool,
}

/// The script as `s` commands without addresses (`s/a/b/g; s/c/d/`), or an error for any
/// other script (an address, another command, flags `p`, `w`, `e`, `m`, an empty pattern).
pub fn substitutions(source: &str) -> Result<Vec<SedSubst>, Unsupported> {
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        let Some(&c) = chars.get(i) else { return Ok(out) };
        if c != 's' {
            return unsupported("a command other than s in a whole-text script");
        }
        i += 1;
        let Some(&delim) = chars.get(i).filter(|d| **d != '\n' && **d != '\\') else {
            return unsupported("s without a delimiter");
        };
        i += 1;
        let re =
            take_until(&chars, &mut i, delim, false).ok_or_else(|| Unsupported("unterminated s pattern".into()))?;
        let with =
            take_until(&chars, &mut i, delim, false).ok_or_else(|| Unsupported("unterminated s replacement".into()))?;
        if re.is_empty() {
            return unsupported("an empty pattern (the last one used)");
        }
        let mut s = SedSubst { re, with, global: false, nth: 1, ignore_case: false };
        while let Some(&f) = chars.get(i).filter(|c| !c.is_whitespace() && **c != ';') {
            match f {
                'g' => s.global = true,
                'i' | 'I' => s.ignore_case = true,
                d if d.is_ascii_digit() => {
                    let start = i;
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                    let digits: String = chars[start..i].iter().collect();
                    s.nth = digits.parse().ok().filter(|n| *n > 0).ok_or_else(|| Unsupported("s count".into()))?;
                    continue;
                }
                other => return unsupported(format!("s flag `{other}` in a whole-text script")),
            }
            i += 1;
        }
        out.push(s);
    }
}
