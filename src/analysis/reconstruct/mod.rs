//! Every edit gets a diff: what a run's shell commands (and scripts) did to files,
//! reconstructed once at ingest from what the run showed.
//!
//! **What it reads.** A run's steps in order ([`Run::steps`]): each step's action, its
//! observation and working directory, and how the adapter ran it ([`Exec`]: a shell command
//! with the verdict its exit status gives, keystrokes typed into a terminal whose observation is
//! the screen, Python code, or an editor tool whose edits the adapter already made in
//! [`Run::edits`]); and the submitted patch ([`Run::submission`]).
//!
//! **How.** Each file the run touches is a sparse map of its known lines ([`known::Known`]):
//! the submitted patch's old side seeds it (the repository's own text), and every view fills
//! and corrects it ([`shown`]: `cat`, `cat -n`, `nl -ba`, `sed -n 'A,Bp'`, `head`/`tail`,
//! `grep -n`, `git diff`, the editors' windows and snippets). Edits are simulated on it
//! ([`sed`] for `sed -i` and `perl -pi`, [`slurp`] for the whole-text `perl -0777 -pi` and
//! `sed -z -i`, [`pyscript`] for Python edit scripts, writes of `echo`/`printf`/`cat`/`tee`, `cp`/`mv`,
//! [`patch`] for `git apply`/`patch`; tool edits are applied too, to keep the lines in step)
//! and drawn ([`draw`]) from the lines they changed. A later view of a line checks the edit
//! that wrote it; `git checkout`/`restore`/`stash`/`reset --hard` return a file to what it was
//! before its first edit and mark those edits undone; a script that writes a file
//! ([`script`]) leaves it unknown until a view or the submitted patch shows what changed, and
//! a substitution on a line never shown waits for a view of that line ([`invert`]): attributed
//! when exactly one line before gives the line shown, "changed nothing" when it is the line
//! shown itself, unknown otherwise; a view walks back through the line's chain of plain
//! substitutions and through global ones (`s/a/b/g`, `perl -pi`), attributing each step whose
//! earlier text is determined (a global one only when nothing between could have renumbered the
//! file, marked partial: the lines shown). A script of plain replacements on a file never shown
//! where it changed, that nothing later explains, gets its own old and new text as its diff,
//! not placed ([`unplaced`]: attributed, hunks that name no line).
//! Finally each hunk of the submitted patch is traced to the steps whose edits wrote it.
//!
//! **What it writes.** [`Run::edits`] again: the adapter's tool edits (their diffs renumbered
//! where a snippet was located, windowed edits filled from the known lines), one
//! `shell_write` edit per file per command with its `command`, diff and
//! [`crate::model::Certainty`] (verified, contradicted, simulated, attributed, changed
//! nothing, unknown), `checked_by`, `shown` (what a contradicting view showed) and
//! `undone_at` in [`crate::model::EditTrace`]; the final patch's edits with their
//! [`crate::model::HunkSource`]s. Steps with shell edits get the `edit` flag.
//!
//! **A step at a time.** [`Reconstructor`] is the same pass for a reader that does not hold the
//! whole run (`trajan FILE` reads the file again once its end is known): built from the
//! submission and the working directories, fed each step, finished with the final patch's edits.
//! [`reconstruct`] is a loop over it.
//!
//! **For other users** (the classifier: lost, reverted and scripted edits): read the stored
//! edits (`store::read::EditRow` carries the trace), or call [`reconstruct`] on a [`Run`];
//! [`replay`]'s `Replay` is the state machine, [`ops`] the shell commands it knows.

pub mod budget;
pub mod command;
pub mod draw;
pub mod invert;
pub mod known;
mod ops;
pub mod patch;
pub mod pattern;
pub mod pyscript;
mod replay;
pub mod script;
pub mod sed;
pub mod shown;
pub mod slurp;
pub mod unplaced;

pub use replay::Exec;

use crate::model::{CheckedBy, Edit, EditKind, Run, Step};
use replay::Replay;
use std::collections::HashMap;

/// Reconstruct a run's edits in place. `exec[i]` says how step `i` ran (missing: a tool).
pub fn reconstruct(run: &mut Run, exec: &[Exec]) {
    let dirs = run.steps.iter().filter_map(|s| s.working_dir.as_deref());
    let mut rec = Reconstructor::new(run.submission.as_deref(), dirs);
    let mut tool: Vec<Vec<Edit>> = vec![Vec::new(); run.steps.len()];
    let mut finals = Vec::new();
    for e in std::mem::take(&mut run.edits) {
        match e.step {
            None => finals.push(e),
            Some(s) => {
                if let Some(list) = tool.get_mut(s) {
                    list.push(e);
                }
            }
        }
    }
    for (i, step) in run.steps.iter().enumerate() {
        rec.step(step, exec.get(i).copied().unwrap_or(Exec::Tool), std::mem::take(&mut tool[i]));
    }
    let done = rec.finish(&mut finals);
    for s in done.edit_steps {
        if let Some(step) = run.steps.get_mut(s) {
            step.flags.edit = true;
        }
    }
    run.edits = done.edits;
    run.edits.extend(finals);
}

/// The reconstruction driven a step at a time (what [`reconstruct`] loops over), for a reader
/// that does not hold the whole run: built from what must be known first (the submitted patch,
/// which seeds the known lines, and every working directory of the run, the roots relative
/// paths are read against), fed the steps in order, finished with the final patch's edits. It
/// keeps the files' known lines and the edits, never the steps' texts; with a [`Spill`], not
/// the edits' long texts either.
pub struct Reconstructor {
    r: Replay,
    submission: Option<String>,
    /// Steps fed so far: the next one's index.
    next: usize,
    spill: Option<Box<dyn Spill + Send>>,
    /// Edits whose diff has been handed to the spill (or had none) so far.
    settled: usize,
    /// Spilled texts by edit: the diff, what a contradicting view showed.
    diffs: HashMap<usize, u64>,
    shown: HashMap<usize, u64>,
}

/// Where a [`Reconstructor`] keeps its edits' long texts (diffs, what contradicting views
/// showed) while the run is read, so that its memory does not grow with them; they come back
/// one edit at a time ([`Reconstructed::fill`]). `trajan FILE`: a temporary file.
pub trait Spill {
    /// Keep `text`; its key.
    fn put(&mut self, text: &str) -> std::io::Result<u64>;
    /// The text kept under `key`.
    fn get(&mut self, key: u64) -> std::io::Result<String>;
}

/// What a reconstruction gives: the run's edits (tool and shell, in order; the final patch's
/// not among them) and the steps that get the `edit` flag. Spilled texts are not in `edits`
/// until [`Reconstructed::fill`] puts them back.
pub struct Reconstructed {
    pub edits: Vec<Edit>,
    pub edit_steps: Vec<usize>,
    spill: Option<Box<dyn Spill + Send>>,
    diffs: HashMap<usize, u64>,
    shown: HashMap<usize, u64>,
}

impl Reconstructed {
    /// Put back the spilled texts of `edit`, the `k`th of [`Reconstructed::edits`] (or a copy).
    pub fn fill(&mut self, k: usize, edit: &mut Edit) -> std::io::Result<()> {
        let Some(spill) = self.spill.as_mut() else { return Ok(()) };
        // A diff drawn again after it was spilled (a script's, from a later view) is the one.
        if let Some(&key) = self.diffs.get(&k)
            && edit.diff.is_none()
        {
            edit.diff = Some(spill.get(key)?);
        }
        if let Some(&key) = self.shown.get(&k)
            && edit.trace.shown.is_some()
        {
            edit.trace.shown = Some(spill.get(key)?);
        }
        Ok(())
    }
}

/// The root relative paths are read from before any working directory (SWE-bench's checkout).
pub const FIRST_ROOT: &str = "/testbed";

impl Reconstructor {
    /// `working_dirs`: the steps' working directories, in step order (repeats are fine).
    pub fn new<'a>(submission: Option<&str>, working_dirs: impl IntoIterator<Item = &'a str>) -> Reconstructor {
        let mut roots: Vec<String> = vec![FIRST_ROOT.to_string()];
        for wd in working_dirs {
            if !roots.iter().any(|r| r == wd) {
                roots.push(wd.to_string());
            }
        }
        let mut r = Replay::new(roots, budget::Limits::default());
        if let Some(sub) = submission {
            for f in patch::parse(sub) {
                if f.deleted {
                    continue;
                }
                let i = r.file(&f.path);
                patch::seed(&mut r.files[i].known, &f);
            }
        }
        Reconstructor {
            r,
            submission: submission.map(str::to_string),
            next: 0,
            spill: None,
            settled: 0,
            diffs: HashMap::new(),
            shown: HashMap::new(),
        }
    }

    /// Replay within other bounds than the defaults (tests: small ones).
    pub fn limits(mut self, limits: budget::Limits) -> Reconstructor {
        self.r.budget = budget::Budget::new(limits);
        self.r.roots.truncate(limits.roots);
        self
    }

    /// Keep the edits' long texts in `spill` as the steps are fed.
    pub fn spill_to(mut self, spill: Box<dyn Spill + Send>) -> Reconstructor {
        self.spill = Some(spill);
        self
    }

    /// The next step, how it ran, and the edits the adapter made for it (its tool edits; a
    /// shell step's own `shell_write` edits are dropped: the reconstruction makes them).
    pub fn step(&mut self, step: &Step, how: Exec, edits: Vec<Edit>) {
        let i = self.next;
        self.next += 1;
        let r = &mut self.r;
        r.lost_cwd = false;
        let cwd = step.working_dir.clone();
        let shell_step = matches!(how, Exec::Shell(_) | Exec::Python(_) | Exec::Terminal(_));
        let mut edited = None;
        for e in edits {
            if e.kind == EditKind::ShellWrite && shell_step {
                continue;
            }
            let path = shown::resolve(&e.path, cwd.as_deref());
            edited = Some(path.clone());
            r.tool_edit(e, &path);
        }
        let ctx = ops::Step {
            index: i,
            status: crate::model::EditStatus::Unknown,
            cwd: cwd.clone(),
            observation: &step.observation,
            screen: false,
        };
        match how {
            Exec::Shell(status) => r.shell_step(&step.action, ops::Step { status, ..ctx }),
            Exec::Terminal(status) => r.shell_step(&step.action, ops::Step { status, screen: true, ..ctx }),
            Exec::Python(status) => r.python_code(&step.action, &step.action, &cwd, &ops::Step { status, ..ctx }),
            Exec::Tool if !r.output_fits(&step.observation) => {}
            Exec::Tool => {
                for s in shown::tool_views(&step.observation, cwd.as_deref(), edited.as_deref()) {
                    r.view(s, CheckedBy::Step(i));
                }
            }
        }
        self.settle();
    }

    /// Hand the spill the diffs of the edits made since, and what views that contradicted an
    /// edit showed. Neither is read again before the end: a diff is only ever drawn anew (a
    /// script's, once a view shows what it did), and a contradiction is kept once. A view that
    /// contradicts several edits shows each the same: it is kept once for all of them.
    fn settle(&mut self) {
        let contradicted = std::mem::take(&mut self.r.contradicted);
        let Some(spill) = self.spill.as_mut() else { return };
        for (id, rec) in self.r.recs.iter_mut().enumerate().skip(self.settled) {
            if let Some(d) = rec.edit.diff.take() {
                match spill.put(&d) {
                    Ok(key) => {
                        self.diffs.insert(id, key);
                    }
                    Err(_) => rec.edit.diff = Some(d),
                }
            }
        }
        self.settled = self.r.recs.len();
        let mut last: Option<(u64, String)> = None;
        for id in contradicted {
            let Some((_, both)) = self.r.recs.get_mut(id).and_then(|rec| rec.contradicted.as_mut()) else { continue };
            if both.is_empty() {
                continue;
            }
            let key = match &last {
                Some((key, text)) if text == both => Ok(*key),
                _ => spill.put(both),
            };
            if let Ok(key) = key {
                self.shown.insert(id, key);
                last = Some((key, std::mem::take(both)));
            }
        }
    }

    /// The edits, once every step was fed; `finals` (the final patch's edits) get the steps
    /// their hunks came from.
    pub fn finish(mut self, finals: &mut [Edit]) -> Reconstructed {
        if let Some(sub) = self.submission.take() {
            self.r.submission(&sub, finals);
        }
        let edits = self.r.finish();
        let mut edit_steps: Vec<usize> =
            edits.iter().filter(|e| e.kind == EditKind::ShellWrite).filter_map(|e| e.step).collect();
        edit_steps.dedup();
        Reconstructed { edits, edit_steps, spill: self.spill, diffs: self.diffs, shown: self.shown }
    }
}

#[cfg(test)]
mod tests;
