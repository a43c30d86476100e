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

use super::invert::LineSubst;
use super::known::Known;
use super::pattern::{Pattern, Replacement};
use std::cell::Cell;
use std::rc::Rc;

/// Why a script could not be run on the known lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// What [`Unsupported::too_large`] says.
const TOO_LARGE: &str = "too large to replay";

impl Unsupported {
    /// Running it would pass a bound of the replay ([`crate::analysis::reconstruct::budget`]).
    pub fn too_large() -> Unsupported {
        Unsupported(TOO_LARGE.into())
    }

    pub fn is_too_large(&self) -> bool {
        self.0 == TOO_LARGE
    }
}

/// The most commands a script may have (each pattern compiled costs about 0.5 KB, and every
/// line goes through every command): a script of three million `-e` pieces is too large.
pub const MAX_COMMANDS: usize = 10_000;

/// Line numbers past this name no line (a file of 2^32 lines is over 4 GB): an address such
/// as `18446744073709551615d` selects nothing.
pub const MAX_LINE: usize = 1 << 32;

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

pub mod parse;
mod run;

impl Script {
    /// The script as one substitution on one numbered line (`12s/foo/foo_v2/`) or on every
    /// line (`s/foo/foo_v2/g`) with a plain pattern and a plain replacement: what a later view
    /// of a line can invert.
    pub fn line_subst(&self) -> Option<LineSubst> {
        let [c] = self.cmds.as_slice() else { return None };
        let line = match (&c.start, &c.end, c.negate) {
            (Some(Addr::Line(line)), None, false) => Some(*line),
            (None, None, false) => None,
            _ => return None,
        };
        let Op::Subst { re: Some(re), with, nth, global, print: false } = &c.op else { return None };
        if self.quiet {
            return None;
        }
        let from = re.literal()?.to_string();
        let to = with.literal()?;
        Some(LineSubst { line, prev: None, re: re.clone(), with: with.clone(), nth: *nth, global: *global, from, to })
    }
}

fn cmd(start: Option<Addr>, end: Option<End>, negate: bool, op: Op) -> Cmd {
    Cmd { start, end, negate, op, active: Cell::new(false), until: Cell::new(None) }
}

#[cfg(test)]
mod tests;
