//! Running a parsed script on a file's known lines: lines shown go through it one by one,
//! gaps of lines never shown as a whole.

use super::{Addr, Cmd, End, MAX_LINE, Op, Run, Script, Unsupported, unsupported};
use crate::analysis::reconstruct::budget::Budget;
use crate::analysis::reconstruct::known::{EditId, Known, Line, Seg};
use crate::analysis::reconstruct::pattern::{Pattern, RegexLimit};
use std::rc::Rc;

const UNCOUNTED: &str = "a line number past lines of unknown count";

impl Script {
    /// Run the script on `before` (the file as known), writing new lines as edit `edit`.
    /// `read`: the text of a file named by `r`, when known. Every line and command spends from
    /// `budget`, and the file made must fit it: past either, [`Unsupported::too_large`].
    pub fn run(
        &self,
        before: &mut Known,
        edit: EditId,
        read: &dyn Fn(&str) -> Option<String>,
        budget: &mut Budget,
    ) -> Result<Run, Unsupported> {
        // Lines the addresses name become lines of their own, so the gaps left hold none.
        for &n in &self.lines {
            before.materialize(n, false);
        }
        for &(first, last) in &self.ranges {
            let last = last.or_else(|| before.len()).unwrap_or(first);
            if last >= first && last - first <= 100_000 && budget.spend(last - first) {
                before.materialize_range(first, last, false);
            }
        }
        reset(&self.cmds);
        if !budget.spend(before.segs.len()) {
            return Err(Unsupported::too_large());
        }
        let mut exec = Exec {
            script: self,
            edit,
            out: before.successor(),
            assumed: false,
            seam: false,
            read,
            budget,
            bytes: 0,
            lines: 0,
        };
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

/// A pattern the engine could not run (the edit is unknown), or a line too long to make.
fn halt(e: RegexLimit) -> Unsupported {
    match e {
        RegexLimit::Engine(why) => Unsupported(format!("the pattern could not be run: {why}")),
        RegexLimit::TooLarge => Unsupported::too_large(),
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
    budget: &'a mut Budget,
    /// What `out` holds so far: text bytes and lines.
    bytes: usize,
    lines: usize,
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
            None if n < self.at_least || n > MAX_LINE => Some(false),
            None => None,
        }
    }

    /// Whether this line is at or past line `n`; `None` when that cannot be known.
    fn past(&self, n: usize) -> Option<bool> {
        match self.at {
            Some(at) => Some(at >= n),
            None if n < self.at_least => Some(true),
            None if n > MAX_LINE => Some(false),
            None => None,
        }
    }
}

impl Exec<'_> {
    fn push_text(&mut self, text: Option<String>) -> Result<(), Unsupported> {
        match text {
            Some(t) => {
                // Made text is work too (a line of ten `&` made ten times larger each run).
                if !self.budget.spend(t.len()) {
                    return Err(Unsupported::too_large());
                }
                for piece in t.split('\n') {
                    let line = self.out.line(Some(Rc::from(piece)), Some(self.edit));
                    self.push_line(line)?;
                }
            }
            None => {
                let line = self.out.line(None, Some(self.edit));
                self.push_line(line)?;
            }
        }
        Ok(())
    }

    /// A line out; the file made must fit the budget.
    fn push_line(&mut self, mut line: Line) -> Result<(), Unsupported> {
        if std::mem::take(&mut self.seam) {
            line.seam = Some(self.edit);
        }
        self.bytes += line.text.as_ref().map_or(0, |t| t.len());
        self.lines += 1;
        if !self.budget.fits(self.bytes, self.lines) {
            return Err(Unsupported::too_large());
        }
        self.out.segs.push(Seg::Line(line));
        Ok(())
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
            self.push_text(t)?;
        }
        let print = !cy.deleted && !self.script.quiet && (!cy.quit || cy.quit_print);
        if print {
            if cy.changed {
                self.push_text(cy.text.clone())?;
            } else {
                self.push_line(line.clone())?;
            }
        } else {
            self.seam = true;
        }
        for t in std::mem::take(&mut cy.after) {
            self.push_text(t)?;
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
            if !self.budget.spend(1 + cy.text.as_ref().map_or(0, String::len) / 64) {
                return Err(Unsupported::too_large());
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
                            let cap = self.budget.limits.file_bytes;
                            if let Some(new) = re.substitute(t, with, *nth, *global, cap).map_err(halt)? {
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
                            c.until.set(place.at.map(|a| a.saturating_add(*n)));
                            *n == 0
                        }
                        End::Multiple(m) => {
                            let until = place.at.map(|a| if *m == 0 { a } else { a.div_ceil(*m).saturating_mul(*m) });
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
                    Some(t) => re.is_match(t).map_err(halt)?,
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
            self.push_text(Some(t))?;
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
