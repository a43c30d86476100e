//! The run replayed step by step over the files' known lines: tool edits and shell edits
//! change them, views fill them and check the edits that wrote what they show, scripts leave
//! a file unknown until a view (or the submitted patch) says what they did.

use super::budget::{Budget, Limits};
use super::draw::draw;
use super::invert::{Inverted, LineSubst};
use super::known::{EditId, Known, Line, Seen, Seg};
use super::patch;
use super::shown::{self, Shown};
use crate::analysis::edits::{diff_at_line, unified_diff};
use crate::model::{Certainty, CheckedBy, Edit, EditKind, EditStatus, EditTrace, HunkSource};
use std::collections::HashMap;
use std::rc::Rc;

/// How the adapter ran a step's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// A shell command; the files it writes get this verdict (from its exit status).
    Shell(EditStatus),
    /// Python code run as is (OpenHands `run_ipython`).
    Python(EditStatus),
    /// Keystrokes typed into a terminal (Terminus): its edits as a shell command's, but the
    /// observation is the screen (prompts, echoed commands, several outputs), never read as a
    /// view of a file.
    Terminal(EditStatus),
    /// An editor tool, or nothing run: its edits are the adapter's, its output may show lines.
    Tool,
}

/// A reconstructed edit (or a tool edit, kept to trace which lines it wrote).
pub(super) struct Rec {
    pub edit: Edit,
    pub file: usize,
    pub tool: bool,
    /// What the simulation (or attribution) concluded; `None` for tool edits.
    pub certainty: Option<Certainty>,
    pub confirmed: Option<CheckedBy>,
    pub contradicted: Option<(CheckedBy, String)>,
    /// A plain substitution (on one line or every line): a view of a line never shown that it
    /// may have rewritten inverts it, and through it the edits before.
    pub inverse: Option<Rc<LineSubst>>,
    /// It could not be simulated: the file's lines were forgotten after it.
    pub blind: bool,
    /// A diff of the command's own old and new text (a script's literal replacement on a file
    /// never shown), not placed in the file: the edit's diff, attributed, when nothing later
    /// says more ([`super::unplaced`]).
    pub unplaced: Option<String>,
}

pub(super) struct FileState {
    pub path: String,
    pub known: Known,
    /// The file before its first edit: what `git checkout` returns it to.
    pub base: Option<Known>,
    /// Before a script (or an edit that could not be simulated) wrote it; the edits waiting
    /// for a view to say what they did.
    pub snapshot: Option<Known>,
    pub pending: Vec<EditId>,
    /// Edits that wrote lines never shown, which a view of those lines can invert.
    pub waiting: Vec<EditId>,
}

pub(super) struct Replay {
    pub files: Vec<FileState>,
    index: HashMap<String, usize>,
    /// Folders a relative path may be relative to (working directories, `cd` targets).
    pub roots: Vec<String>,
    pub recs: Vec<Rec>,
    /// Edits contradicted since the spill last took what the views showed
    /// (`Reconstructor::settle`), in the order contradicted.
    pub contradicted: Vec<EditId>,
    /// `git stash` entries: per file, the state it had and the edits it undid.
    pub stash: Vec<Vec<(usize, Known, Vec<EditId>)>>,
    /// What the run may cost ([`super::budget`]); every simulator spends from it.
    pub budget: Budget,
    /// The step's working directory passed its cap (a chain of `cd`): the rest of the step's
    /// edits are too large to replay.
    pub lost_cwd: bool,
    /// The Python scripts run last, parsed.
    pub trees: super::pyscript::Trees,
    /// Every file is as [`Replay::forget`] leaves it: nothing was read, run or applied since it
    /// last ran, so it has nothing to forget (once the work is spent, every later edit asks it
    /// again; it must not go through every file each time).
    pub blank: bool,
}

/// Whether two paths name one file: equal, or one is the other under a known root (or, both
/// naming folders, one ends with the other).
fn same_file(a: &str, b: &str, roots: &[String]) -> bool {
    if a == b {
        return true;
    }
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if short.starts_with('/') || !long.ends_with(short) {
        return false;
    }
    let prefix = &long[..long.len() - short.len()];
    let Some(prefix) = prefix.strip_suffix('/') else { return false };
    short.contains('/') || roots.iter().any(|r| r.trim_end_matches('/') == prefix)
}

impl Replay {
    pub fn new(mut roots: Vec<String>, limits: Limits) -> Replay {
        roots.truncate(limits.roots);
        Replay {
            files: Vec::new(),
            index: HashMap::new(),
            roots,
            recs: Vec::new(),
            contradicted: Vec::new(),
            stash: Vec::new(),
            budget: Budget::new(limits),
            lost_cwd: false,
            trees: Default::default(),
            blank: false,
        }
    }

    /// A folder relative paths may be relative to (a `cd` target), kept while there is room.
    pub fn add_root(&mut self, dir: &str) {
        if self.roots.len() < self.budget.limits.roots && !self.roots.iter().any(|r| r == dir) {
            self.roots.push(dir.to_string());
        }
    }

    /// The state of the file a path names (created, nothing known, when new).
    pub fn file(&mut self, path: &str) -> usize {
        if let Some(&i) = self.index.get(path) {
            return i;
        }
        // Another name of a file met before? (Every file is compared: work. Once the run's
        // work is spent nothing is known of any file, and a name is a file of its own.)
        let found = match self.budget.spend(self.files.len()) {
            true => self.files.iter().position(|f| same_file(&f.path, path, &self.roots)),
            false => None,
        };
        let i = found.unwrap_or_else(|| {
            self.files.push(FileState {
                path: path.to_string(),
                known: Known::default(),
                base: None,
                snapshot: None,
                pending: Vec::new(),
                waiting: Vec::new(),
            });
            self.files.len() - 1
        });
        self.index.insert(path.to_string(), i);
        i
    }

    /// The whole text of a file the run has met, when known, without noting the file.
    pub fn known_text(&self, path: &str) -> Option<String> {
        self.known_of(path)?.text()
    }

    /// What is known of a file the run has met, without noting the file.
    pub fn known_of(&self, path: &str) -> Option<&Known> {
        let i = match self.index.get(path) {
            Some(&i) => i,
            None => self.files.iter().position(|f| same_file(&f.path, path, &self.roots))?,
        };
        Some(&self.files[i].known)
    }

    /// The whole text of a file, when known (for `cat a >> b`, `sed 'r a'`, scripts).
    pub fn text_of(&mut self, path: &str) -> Option<String> {
        let i = self.file(path);
        self.files[i].known.text()
    }

    /// Before the first edit of file `f`: keep its state (`before`, or the current one), what
    /// `git checkout` returns to.
    fn touch(&mut self, f: usize, before: Option<&Known>) {
        if self.files[f].base.is_none() {
            let base = before.unwrap_or(&self.files[f].known).clone();
            self.files[f].base = Some(base);
        }
    }

    pub fn next_id(&self) -> EditId {
        self.recs.len()
    }

    /// A shell edit of file `f` by step `step`, from the states before and after it (or
    /// `None`: it could not be simulated, so the file is unknown until a view shows it).
    #[allow(clippy::too_many_arguments)]
    pub fn shell_edit(
        &mut self,
        step: usize,
        path: &str,
        f: usize,
        command: &str,
        status: EditStatus,
        before: Known,
        after: Option<Known>,
        text_diff: Option<String>,
    ) {
        self.shell_edit_partial(step, path, f, command, status, before, after, text_diff, false);
    }

    /// [`Replay::shell_edit`] of an edit whose pattern was assumed not to match lines never
    /// shown (`partial`: its diff may miss lines it changed there).
    #[allow(clippy::too_many_arguments)]
    pub fn shell_edit_partial(
        &mut self,
        step: usize,
        path: &str,
        f: usize,
        command: &str,
        status: EditStatus,
        before: Known,
        after: Option<Known>,
        text_diff: Option<String>,
        partial: bool,
    ) {
        // Past a cap (this edit's, the step's working directory, the run's work) the edit is
        // too large to replay; so is one whose result would not fit.
        let mut after = after;
        let mut too_large = self.budget.take_trip() || self.lost_cwd || self.budget.exhausted();
        if let Some(a) = after.as_ref().filter(|_| !too_large) {
            let (bytes, lines) = a.weight();
            too_large = !self.budget.fits(bytes, lines) || !self.budget.spend(before.segs.len() + lines);
            self.budget.take_trip();
        }
        if too_large {
            after = None;
        }
        self.touch(f, Some(&before));
        let id = self.next_id();
        let mut edit = Edit {
            step: Some(step),
            path: path.to_string(),
            kind: EditKind::ShellWrite,
            status,
            old_text: None,
            new_text: None,
            diff: None,
            lint_codes: Vec::new(),
            trace: EditTrace { command: Some(command.to_string()), partial, ..EditTrace::default() },
        };
        let mut blind = false;
        let certainty = match after {
            Some(after) => {
                let drawn = draw(path, &before, &after);
                let certainty = if !drawn.changed {
                    // Nothing changed among the lines shown; a pattern that may have matched
                    // lines never shown says nothing about those.
                    if before.has_text() && !partial { Certainty::Unchanged } else { Certainty::Unknown }
                } else if drawn.any_text || text_diff.is_some() {
                    edit.diff = text_diff.or(drawn.diff);
                    Certainty::Simulated
                } else {
                    Certainty::Unknown
                };
                self.files[f].known = after;
                certainty
            }
            None if too_large => {
                // Nothing later says what it did: no view is compared with the file before it.
                let file = &mut self.files[f];
                file.known = Known::default();
                file.snapshot = None;
                file.pending.clear();
                blind = true;
                Certainty::TooLarge
            }
            None => {
                let file = &mut self.files[f];
                if file.snapshot.is_none() {
                    file.snapshot = Some(before);
                }
                file.pending.push(id);
                file.known = Known::default();
                blind = true;
                Certainty::Unknown
            }
        };
        self.recs.push(Rec {
            edit,
            file: f,
            tool: false,
            certainty: Some(certainty),
            confirmed: None,
            contradicted: None,
            inverse: None,
            blind,
            unplaced: None,
        });
        if self.budget.exhausted() {
            self.forget();
        }
    }

    /// What is known of the run's files goes: its work is spent (what follows then costs about
    /// what reading it costs: every later edit is too large to replay, no view checks
    /// anything), or a step too large to read may have changed any of them.
    pub fn forget(&mut self) {
        if self.blank {
            return;
        }
        self.blank = true;
        for file in &mut self.files {
            file.known = Known::default();
            file.base = None;
            file.snapshot = None;
            file.pending.clear();
            file.waiting.clear();
        }
        self.stash.clear();
    }

    /// The last edit was the plain substitution `subst`: a view of a line never shown that it
    /// may have rewritten inverts it; when it wrote lines never shown (its certainty unknown),
    /// it waits for such a view to say what it did.
    pub fn await_view(&mut self, subst: LineSubst) {
        let Some(id) = self.recs.len().checked_sub(1) else { return };
        let rec = &mut self.recs[id];
        if rec.tool {
            return;
        }
        rec.inverse = Some(Rc::new(subst));
        if rec.certainty == Some(Certainty::Unknown) {
            self.files[rec.file].waiting.push(id);
        }
    }

    /// A tool edit from the adapter, applied to the file's known lines.
    pub fn tool_edit(&mut self, mut edit: Edit, path: &str) {
        let f = self.file(path);
        let id = self.next_id();
        if self.budget.exhausted() || !self.budget.spend(self.files[f].known.segs.len()) {
            self.forget();
        } else if !edit.status.is_rejection() {
            self.blank = false;
            self.touch(f, None);
            self.apply_tool(&mut edit, f, id);
        } else if edit.kind == EditKind::WindowedEdit && edit.old_text.is_none() {
            // A rejected windowed edit is still drawn against the lines it would have replaced.
            if let Some((a, b)) = edit.trace.lines {
                let mut probe = self.files[f].known.clone();
                fill_window(&mut edit, &mut probe, a, b);
            }
        }
        self.recs.push(Rec {
            edit,
            file: f,
            tool: true,
            certainty: None,
            confirmed: None,
            contradicted: None,
            inverse: None,
            blind: false,
            unplaced: None,
        });
    }

    fn apply_tool(&mut self, edit: &mut Edit, f: usize, id: EditId) {
        let known = &mut self.files[f].known;
        match (edit.kind, edit.trace.lines) {
            (EditKind::Create, _) => {
                *known = Known::whole(edit.new_text.as_deref().unwrap_or(""), Some(id));
            }
            (EditKind::WindowedEdit, Some((a, b))) | (EditKind::Insert, Some((a, b))) => {
                fill_window(edit, known, a, b);
                let new = shown::lines_of(edit.new_text.as_deref().unwrap_or(""));
                let range = if b < a {
                    match a.checked_sub(1) {
                        Some(0) => Some(0..0),
                        Some(n) => known.materialize(n, false).map(|i| i + 1..i + 1),
                        None => None,
                    }
                } else {
                    known.materialize_range(a, b, false)
                };
                match range {
                    Some(r) => known.splice(r, new, Some(id)),
                    None => *known = Known::default(),
                }
            }
            (EditKind::StrReplace | EditKind::WindowedEdit, None) => {
                let (Some(old), Some(new)) = (edit.old_text.clone(), edit.new_text.clone()) else {
                    *known = Known::default();
                    return;
                };
                match known.locate(&old) {
                    Some((at, span)) => {
                        let texts = known.texts(at..at + span).unwrap_or_default();
                        let joined = texts.iter().map(|t| &**t).collect::<Vec<_>>().join("\n");
                        let old_trim = old.trim_end_matches('\n');
                        let replaced = joined.replacen(old_trim, new.trim_end_matches('\n'), 1);
                        let lines = shown::lines_of(&replaced);
                        let start_line = known.positions()[at];
                        known.splice(at..at + span, lines, Some(id));
                        // A diff drawn from the snippet alone is numbered from line 1.
                        if let (Some(start), Some(d)) = (start_line, edit.diff.as_deref())
                            && unified_diff(&edit.path, &old, &new).as_deref() == Some(d)
                        {
                            edit.diff = Some(diff_at_line(d, start));
                        }
                    }
                    None => {
                        let delta = new.matches('\n').count() as isize - old.matches('\n').count() as isize;
                        if delta != 0 {
                            *known = Known::default();
                        }
                    }
                }
            }
            // Gone, as after `rm`.
            (EditKind::Delete, _) => *known = Known::empty(),
            _ => *known = Known::default(),
        }
    }

    /// Lines a step's output showed, checking the edits that wrote the lines shown.
    pub fn view(&mut self, shown: Shown, by: CheckedBy) {
        if self.budget.exhausted() {
            return;
        }
        self.blank = false;
        self.view_within(shown, by);
        // A view past a cap leaves its file unknown; no edit is the worse for it.
        self.budget.take_trip();
        if self.budget.exhausted() {
            self.forget();
        }
    }

    /// Whether an output may be read as views of a file: one larger than a file may be is not
    /// split into lines at all (what it shows stays unknown).
    pub fn output_fits(&mut self, observation: &str) -> bool {
        let lines = observation.bytes().filter(|b| *b == b'\n').count();
        let fits = !self.budget.exhausted() && self.budget.fits(observation.len(), lines);
        self.budget.take_trip();
        fits
    }

    fn view_within(&mut self, shown: Shown, by: CheckedBy) {
        let (bytes, count) = match &shown {
            Shown::Lines { lines, .. } => (lines.iter().map(|(_, t)| t.len()).sum(), lines.len()),
            Shown::Tail { lines, .. } => (lines.iter().map(|t| t.len()).sum(), lines.len()),
        };
        let path = match &shown {
            Shown::Lines { path, .. } | Shown::Tail { path, .. } => path.clone(),
        };
        if !self.budget.fits(bytes, count) || !self.budget.spend(count) {
            let f = self.file(&path);
            self.files[f].known = Known::default();
            return;
        }
        match shown {
            Shown::Lines { path, lines, end } => {
                let f = self.file(&path);
                self.attribute_from_view(f, &lines, by);
                self.invert_from_view(f, &lines, by);
                // Consecutive lines form blocks.
                let mut start = 0;
                while start < lines.len() {
                    let mut end_i = start + 1;
                    while end_i < lines.len() && lines[end_i].0 == lines[end_i - 1].0 + 1 {
                        end_i += 1;
                    }
                    let first = lines[start].0;
                    // Each block is placed from the file's start.
                    if !self.budget.spend(self.files[f].known.segs.len()) {
                        return;
                    }
                    let block: Vec<Rc<str>> = lines[start..end_i].iter().map(|(_, t)| t.clone()).collect();
                    let around =
                        self.files[f].known.texts_at(first.saturating_sub(SHIFT).max(1), first + block.len() + SHIFT);
                    let lead = first - first.saturating_sub(SHIFT).max(1);
                    if let Some(seen) = self.files[f].known.show(first, &block)
                        && !shifted(&block, &around, lead)
                    {
                        self.check(f, first, &seen, by);
                    }
                    start = end_i;
                }
                if let Some(end) = end {
                    self.files[f].known.end_at(end);
                }
                let (bytes, lines) = self.files[f].known.weight();
                if !self.budget.fits(bytes, lines) {
                    self.files[f].known = Known::default();
                }
            }
            Shown::Tail { path, lines, whole } => {
                let f = self.file(&path);
                if whole {
                    let k = &mut self.files[f].known;
                    if let Some(seen) = k.show(1, &lines) {
                        k.end_at(lines.len());
                        self.check(f, 1, &seen, by);
                    }
                } else {
                    let seen = self.files[f].known.show_tail(&lines);
                    if let Some(first) = seen.first().map(|s| s.at) {
                        self.check(f, first, &seen, by);
                    }
                }
            }
        }
    }

    /// Confirm or contradict the edits that wrote (or removed lines before) the lines shown.
    fn check(&mut self, f: usize, first: usize, seen: &[Seen], by: CheckedBy) {
        let mut contradicted: Vec<EditId> = Vec::new();
        for s in seen {
            let Some(was) = &s.was else { continue };
            let agree = **was == *s.shown;
            for id in [s.origin, s.seam].into_iter().flatten() {
                let Some(rec) = self.recs.get_mut(id) else { continue };
                if rec.tool {
                    continue;
                }
                if agree {
                    rec.confirmed.get_or_insert(by);
                } else if rec.contradicted.is_none() && !contradicted.contains(&id) {
                    contradicted.push(id);
                }
            }
        }
        if contradicted.is_empty() {
            return;
        }
        // Both sides where they differ, with the usual context.
        let differs = |s: &Seen| s.was.as_ref().is_some_and(|w| **w != *s.shown);
        let lo = seen.iter().position(differs).unwrap_or(0).saturating_sub(3);
        let hi = (seen.iter().rposition(differs).unwrap_or(0) + 4).min(seen.len());
        let window = &seen[lo..hi];
        let was: String = window.iter().map(|s| format!("{}\n", s.was.as_deref().unwrap_or(&s.shown))).collect();
        let now: String = window.iter().map(|s| format!("{}\n", s.shown)).collect();
        let path = self.files[f].path.clone();
        let both = unified_diff(&path, &was, &now).map(|d| diff_at_line(&d, first + lo)).unwrap_or_default();
        for id in contradicted {
            if let Some(rec) = self.recs.get_mut(id) {
                rec.contradicted = Some((by, both.clone()));
                self.contradicted.push(id);
            }
        }
    }

    /// A view of a file a script wrote: what differs from the lines before the script is what
    /// the script did.
    fn attribute_from_view(&mut self, f: usize, lines: &[(usize, Rc<str>)], by: CheckedBy) {
        let Some(&last_pending) = self.files[f].pending.last() else { return };
        let cost = self.files[f].snapshot.as_ref().map_or(0, |s| s.segs.len());
        if !self.budget.spend(cost) {
            return;
        }
        let Some(mut snapshot) = self.files[f].snapshot.clone() else { return };
        let (Some(first), Some(last)) = (lines.first().map(|l| l.0), lines.last().map(|l| l.0)) else { return };
        if last + 1 - first != lines.len() {
            return;
        }
        let Some(range) = snapshot.materialize_range(first, last, false) else { return };
        let Some(before) = snapshot.texts(range) else { return };
        let old: String = before.iter().map(|t| format!("{t}\n")).collect();
        let new: String = lines.iter().map(|(_, t)| format!("{t}\n")).collect();
        let path = self.recs[last_pending].edit.path.clone();
        if let Some(d) = unified_diff(&path, &old, &new) {
            let rec = &mut self.recs[last_pending];
            rec.edit.diff = Some(diff_at_line(&d, first));
            // What the view showed: the script may have changed lines outside it too.
            rec.edit.trace.partial = true;
            rec.certainty = Some(Certainty::Attributed);
            rec.confirmed = Some(by);
            self.files[f].pending.clear();
            self.files[f].snapshot = None;
        }
    }

    /// A view of lines written by substitutions the run never showed the lines of: each one
    /// whose line the view shows, and whose effect that line determines, is attributed.
    fn invert_from_view(&mut self, f: usize, lines: &[(usize, Rc<str>)], by: CheckedBy) {
        let Some(&oldest) = self.files[f].waiting.iter().min() else { return };
        // The last edit of a file made unknown (it could not be simulated): nothing changed
        // the file after it, so a view numbers its line as it did.
        let last = self.files[f].pending.last().copied().filter(|id| self.files[f].waiting.contains(id));
        for (n, text) in lines {
            if self.files[f].waiting.is_empty() {
                return;
            }
            if !self.budget.spend(self.files[f].known.segs.len()) {
                return;
            }
            let file = &mut self.files[f];
            let Some(i) = file.known.materialize(*n, false) else { continue };
            match &file.known.segs[i] {
                Seg::Gap { .. } | Seg::Line(Line { text: None, origin: None, .. })
                    if last.is_some_and(|id| self.recs[id].inverse.as_ref().is_some_and(|s| s.line == Some(*n))) =>
                {
                    let Some(id) = last else { continue };
                    self.files[f].pending.pop();
                    if self.files[f].pending.is_empty() {
                        self.files[f].snapshot = None;
                    }
                    if let Some(subst) = self.recs[id].inverse.clone() {
                        self.unwound(f, id, &subst, subst.invert(text), *n, text, by);
                    }
                }
                Seg::Line(Line { text: None, origin, .. }) => {
                    let origin = *origin;
                    self.unwind(f, *n, text, origin, oldest, by);
                }
                _ => {}
            }
        }
    }

    /// Line `n`, never shown before and shown now as `shown`, read back through the
    /// substitutions that may have rewritten it, latest first: `expect`, the one that wrote it
    /// last (then the one before it on that line...), and every substitution on every line.
    /// Each one waiting for a view is attributed (or found to have changed nothing) when its
    /// inverse is determined; the walk stops at the first that is not, and at any edit that
    /// may have rewritten a line never shown in another way (a pattern assumed not to match
    /// one, an edit that could not be simulated, a tool edit). A substitution on every line is
    /// attributed only when no edit since it can have renumbered the file (every edit after
    /// it a substitution), so the view numbers the line as it did.
    fn unwind(&mut self, f: usize, n: usize, shown: &str, mut expect: Option<EditId>, oldest: EditId, by: CheckedBy) {
        let mut text = shown.to_string();
        let mut numbered = true;
        // A substitution on every line wrote the line last: which edit wrote it before is not
        // recorded, so a substitution on one line before it may have been on this one.
        let mut untraced = false;
        for id in (oldest..self.recs.len()).rev() {
            if !self.budget.spend(1) {
                return;
            }
            let r = &self.recs[id];
            if r.file != f {
                continue;
            }
            if r.blind {
                return;
            }
            let on_line = expect == Some(id);
            match r.inverse.clone() {
                Some(subst) if on_line || subst.line.is_none() => {
                    let inverted = subst.invert(&text);
                    let every = subst.line.is_none();
                    if on_line {
                        expect = subst.prev;
                        untraced |= every;
                    }
                    let next = match &inverted {
                        Some(Inverted::Was(old)) => old.clone(),
                        Some(Inverted::Unchanged) => text.clone(),
                        None => return,
                    };
                    let is_waiting = self.files[f].waiting.contains(&id);
                    let determined =
                        if every { numbered && matches!(inverted, Some(Inverted::Was(_))) } else { on_line };
                    if is_waiting && determined {
                        self.unwound(f, id, &subst, inverted, n, &text, by);
                    }
                    text = next;
                }
                // A substitution on another line (unless the line's history is lost).
                Some(_) => {
                    if untraced {
                        return;
                    }
                }
                // Another edit: it wrote this line (not a plain substitution: the walk ends),
                // or the lines it addressed are others (as the line substitutions before this
                // walk assumed); it may have renumbered the file.
                None => {
                    if on_line {
                        return;
                    }
                    numbered = false;
                }
            }
        }
    }

    /// What a view says substitution `id` did to the line it shows (`n`, now `text`).
    #[allow(clippy::too_many_arguments)]
    fn unwound(
        &mut self,
        f: usize,
        id: EditId,
        subst: &LineSubst,
        inverted: Option<Inverted>,
        n: usize,
        text: &str,
        by: CheckedBy,
    ) {
        self.files[f].waiting.retain(|w| *w != id);
        let rec = &mut self.recs[id];
        match inverted {
            Some(Inverted::Was(old)) => {
                let diff = unified_diff(&rec.edit.path, &format!("{old}\n"), &format!("{text}\n"));
                rec.edit.diff = diff.map(|d| diff_at_line(&d, subst.line.unwrap_or(n)));
                // A substitution on every line may have rewritten other lines never shown.
                rec.edit.trace.partial |= subst.line.is_none();
                rec.certainty = Some(Certainty::Attributed);
                rec.confirmed = Some(by);
            }
            Some(Inverted::Unchanged) => rec.certainty = Some(Certainty::Unchanged),
            None => {}
        }
    }

    /// `git checkout`/`restore`/`stash`: file `f` back to what it was before its first edit;
    /// its edits so far are undone at `step`. Returns the edits undone.
    pub fn reset(&mut self, f: usize, step: usize) -> Vec<EditId> {
        if !self.budget.spend(self.recs.len()) {
            self.forget();
            return Vec::new();
        }
        let Some(base) = self.files[f].base.clone() else { return Vec::new() };
        let file = &mut self.files[f];
        file.known = base;
        file.pending.clear();
        file.waiting.clear();
        file.snapshot = None;
        let mut undone = Vec::new();
        for (id, r) in self.recs.iter_mut().enumerate() {
            if r.file == f && r.edit.trace.undone_at.is_none() && !r.edit.status.is_rejection() {
                r.edit.trace.undone_at = Some(step);
                undone.push(id);
            }
        }
        undone
    }

    /// Files edited so far that the repository tracks (not ones the run created).
    pub fn tracked_edited(&self) -> Vec<usize> {
        (0..self.files.len()).filter(|&f| self.files[f].base.as_ref().is_some_and(|b| !b.segs.is_empty())).collect()
    }

    /// The submitted patch, last: its new side checks the edits; each hunk is traced to the
    /// steps whose edits wrote its lines; what no step explains is attributed to a script
    /// that wrote the file, when one did.
    pub fn submission(&mut self, patch_text: &str, final_edits: &mut [Edit]) {
        self.blank = false;
        let files = patch::parse(patch_text);
        for file in &files {
            if file.deleted {
                continue;
            }
            let f = self.file(&file.path);
            let lines: Vec<(usize, Rc<str>)> = file
                .hunks
                .iter()
                .flat_map(|h| {
                    let start = h.new_start;
                    h.side(true).into_iter().enumerate().map(move |(k, t)| (start + k, t))
                })
                .collect();
            // Trace hunks before the view replaces what the lines remember.
            let hunks = self.trace_hunks(f, file);
            self.view(Shown::Lines { path: file.path.clone(), lines, end: None }, CheckedBy::Submission);
            if let Some(e) = final_edits.iter_mut().find(|e| same_file(&e.path, &file.path, &self.roots)) {
                e.trace.hunks = hunks;
            }
        }
    }

    fn trace_hunks(&mut self, f: usize, file: &patch::FileDiff) -> Vec<HunkSource> {
        let mut out = Vec::new();
        let mut unexplained = String::new();
        for h in &file.hunks {
            let mut steps: Vec<usize> = Vec::new();
            // Each line is placed from the file's start.
            if !self.budget.spend(self.files[f].known.segs.len().saturating_mul(h.lines.len() + 1)) {
                out.push(HunkSource { hunk: h.header.clone(), steps, explained: false });
                continue;
            }
            let mut explained = true;
            let mut known = self.files[f].known.clone();
            let mut n = h.new_start;
            let mut touched = false;
            for (mark, text) in &h.lines {
                if *mark == '-' {
                    continue;
                }
                let seg = known.materialize(n, false).and_then(|i| match &known.segs[i] {
                    super::known::Seg::Line(l) => Some(l.clone()),
                    _ => None,
                });
                n += 1;
                let origin = seg.as_ref().filter(|l| l.text.as_deref() == Some(text.as_str())).and_then(|l| l.origin);
                for id in [origin, seg.as_ref().and_then(|l| l.seam)].into_iter().flatten() {
                    if let Some(s) = self.recs.get(id).and_then(|r| r.edit.step) {
                        touched = true;
                        if !steps.contains(&s) {
                            steps.push(s);
                        }
                    }
                }
                if *mark == '+' && origin.is_none() {
                    if !self.budget.spend(self.recs.len()) {
                        explained = false;
                        continue;
                    }
                    // Text no traced line holds: the latest applied edit that wrote it.
                    let by = self.recs.iter().rev().find(|r| {
                        r.file == f
                            && !r.edit.status.is_rejection()
                            && r.edit.trace.undone_at.is_none()
                            && r.edit.new_text.as_deref().is_some_and(|t| t.lines().any(|l| l == text))
                    });
                    match by.and_then(|r| r.edit.step) {
                        Some(s) => {
                            touched = true;
                            if !steps.contains(&s) {
                                steps.push(s);
                            }
                        }
                        None => explained = false,
                    }
                }
            }
            if !touched && h.lines.iter().any(|(m, _)| *m == '-') {
                explained = false;
            }
            if !explained {
                unexplained.push_str(&h.header);
                unexplained.push('\n');
                for (m, t) in &h.lines {
                    unexplained.push(*m);
                    unexplained.push_str(t);
                    unexplained.push('\n');
                }
            }
            steps.sort_unstable();
            out.push(HunkSource { hunk: h.header.clone(), steps, explained });
        }
        // A script that wrote the file made what no edit explains.
        if !unexplained.is_empty()
            && let Some(&id) = self.files[f].pending.last()
        {
            let rec = &mut self.recs[id];
            let path = rec.edit.path.trim_start_matches('/').to_string();
            rec.edit.diff = Some(format!("--- a/{path}\n+++ b/{path}\n{unexplained}"));
            rec.certainty = Some(Certainty::Attributed);
            rec.confirmed = Some(CheckedBy::Submission);
            let step = rec.edit.step;
            for hs in out.iter_mut().filter(|h| !h.explained) {
                hs.steps.extend(step);
                hs.steps.sort_unstable();
                hs.explained = true;
            }
            self.files[f].pending.clear();
        }
        out
    }

    /// The edits, each with its certainty and how it was checked, in the order made.
    pub fn finish(self) -> Vec<Edit> {
        self.recs
            .into_iter()
            .map(|r| {
                let mut e = r.edit;
                if r.tool {
                    return e;
                }
                let mut base = r.certainty.unwrap_or(Certainty::Unknown);
                // Unknown, and nothing later showed what it did: the command's own text.
                if base == Certainty::Unknown
                    && e.diff.is_none()
                    && let Some(d) = r.unplaced
                {
                    e.diff = Some(d);
                    base = Certainty::Attributed;
                }
                let (certainty, checked) = match (&r.contradicted, r.confirmed) {
                    (Some((by, both)), _) if base != Certainty::Attributed => {
                        e.trace.shown = Some(both.clone());
                        (Certainty::Contradicted, Some(*by))
                    }
                    (_, Some(by)) if base == Certainty::Simulated => (Certainty::Verified, Some(by)),
                    (_, by) if base == Certainty::Attributed => (Certainty::Attributed, by),
                    _ => (base, None),
                };
                e.trace.certainty = Some(certainty);
                e.trace.checked_by = checked;
                e
            })
            .collect()
    }
}

/// How far apart two numberings of one file may be (a tool that counts a form feed as a line
/// break, a view taken across an edit the run does not show) and still be told apart from a
/// change.
const SHIFT: usize = 3;

/// Whether a view disagrees with the known lines only because its numbering is off by a few
/// lines: shown at an offset, every known line agrees (and at least two do). Such a view is no
/// evidence about the edits.
fn shifted(block: &[Rc<str>], around: &[Option<Rc<str>>], lead: usize) -> bool {
    let at = |k: usize, d: isize| -> Option<&Rc<str>> {
        let i = (lead + k) as isize + d;
        usize::try_from(i).ok().and_then(|i| around.get(i)).and_then(Option::as_ref)
    };
    let differs = block.iter().enumerate().any(|(k, t)| at(k, 0).is_some_and(|w| w != t));
    if !differs {
        return false;
    }
    (1..=SHIFT as isize).flat_map(|d| [d, -d]).any(|d| {
        let mut agree = 0;
        for (k, t) in block.iter().enumerate() {
            match at(k, d) {
                Some(w) if w == t => agree += 1,
                Some(_) => return false,
                None => {}
            }
        }
        agree >= 2
    })
}

/// Fill a windowed edit's replaced text from the known lines `a..=b`, and draw its diff there.
fn fill_window(edit: &mut Edit, known: &mut Known, a: usize, b: usize) {
    if edit.old_text.is_some() || b < a {
        return;
    }
    let Some(range) = known.materialize_range(a, b, false) else { return };
    let Some(texts) = known.texts(range) else { return };
    let old: String = texts.iter().map(|t| format!("{t}\n")).collect();
    if let Some(new) = &edit.new_text {
        edit.diff = unified_diff(&edit.path, &old, new).map(|d| diff_at_line(&d, a));
    }
    edit.old_text = Some(old);
}
