//! Signals from the edits: rejections and what followed them, reverted hunks, edits that
//! silently changed nothing.

use super::actions::{Reset, StepReading, Via};
use super::paths::{Roots, build_copy_target, is_build_copy};
use super::{After, FileActivity, LostEdit, LostWhy, Rejection, Revert};
use crate::analysis::markers::runs_tests;
use crate::model::{EditKind, EditStatus};
use crate::store::read::{EditRow, StepRow};

/// An edit with its path made repository-relative. Shell edits come reconstructed
/// (`analysis::reconstruct`): with a diff, and marked when they changed nothing.
pub(super) struct EditEvent {
    pub step: Option<usize>,
    pub path: String,
    pub kind: EditKind,
    pub status: EditStatus,
    pub codes: Vec<String>,
    pub diff: Option<String>,
    /// Its pattern or address matched no line: the file did not change.
    pub changed_nothing: bool,
    /// Added to the file (`>>`, `tee -a`), not the whole file.
    pub append: bool,
    pub via: Via,
}

impl EditEvent {
    pub fn from_row(e: &EditRow, path: String) -> EditEvent {
        EditEvent {
            step: e.step.map(|s| s as usize),
            path,
            kind: e.kind,
            status: e.status,
            codes: e.lint_codes.clone(),
            diff: e.diff.clone(),
            changed_nothing: e.changed_nothing(),
            append: false,
            via: if e.kind == EditKind::ShellWrite { Via::Shell } else { Via::Tool },
        }
    }

    /// A reversed patch: it undoes, it is not an attempt.
    pub fn undoes(&self) -> bool {
        matches!(self.via, Via::Patch { reverse: true })
    }

    pub fn rejected(&self) -> bool {
        self.status.is_rejection()
    }

    /// Applied and, as far as the run shows, changed the file.
    pub fn changed(&self) -> bool {
        self.step.is_some() && !self.rejected() && !self.changed_nothing
    }

    /// A create, or a shell write of the whole file (heredoc): the file may be new.
    pub fn creates(&self) -> bool {
        self.kind == EditKind::Create
    }

    /// Removed and added lines of the diff, without headers.
    fn hunk_lines(&self) -> (Vec<&str>, Vec<&str>) {
        let mut removed = Vec::new();
        let mut added = Vec::new();
        for line in self.diff.as_deref().unwrap_or("").lines() {
            if line.starts_with("---") || line.starts_with("+++") {
                continue;
            }
            if let Some(l) = line.strip_prefix('-') {
                removed.push(l.trim_end());
            } else if let Some(l) = line.strip_prefix('+') {
                added.push(l.trim_end());
            }
        }
        (removed, added)
    }
}

/// Steps after a rejection within which a shell write to the same file is a bypass.
const BYPASS_WINDOW: usize = 3;

/// Every rejected or refused edit, with what the agent did to that file next.
pub(super) fn rejections(edits: &[EditEvent]) -> Vec<Rejection> {
    let mut out = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let Some(step) = e.step.filter(|_| e.rejected()) else { continue };
        let next = edits[i + 1..].iter().find(|n| n.path == e.path && n.step.is_some() && !n.rejected());
        let after = match next {
            Some(n) if n.kind == EditKind::ShellWrite && n.step.is_some_and(|s| s <= step + BYPASS_WINDOW) => {
                After::Bypassed { step: n.step.unwrap_or(step) }
            }
            Some(n) => After::Recovered { step: n.step.unwrap_or(step) },
            None => After::Abandoned,
        };
        let by = if e.status == EditStatus::RejectedByLinter { "linter" } else { "tool" };
        out.push(Rejection { step, path: e.path.clone(), codes: e.codes.clone(), by: by.into(), after });
    }
    out
}

/// Applied edits whose diff undoes an earlier applied edit of the same file.
pub(super) fn reverts(edits: &[EditEvent]) -> Vec<Revert> {
    let applied: Vec<&EditEvent> = edits.iter().filter(|e| e.changed()).collect();
    let mut out = Vec::new();
    for (j, b) in applied.iter().enumerate() {
        let (b_removed, b_added) = b.hunk_lines();
        if b_removed.is_empty() && b_added.is_empty() {
            continue;
        }
        let undone = applied[..j].iter().rev().find(|a| {
            let (a_removed, a_added) = a.hunk_lines();
            a.path == b.path && a_removed == b_added && a_added == b_removed
        });
        if let (Some(a), Some(step)) = (undone, b.step) {
            out.push(Revert { step, path: b.path.clone(), reverts_step: a.step.unwrap_or(0) });
        }
    }
    out
}

/// The run's edits, repository-relative, in step order: the stored ones (a shell write placed in
/// the folder its command ran in, `cd` followed), then the writes only the reading of the actions
/// finds (scripts, patches, commands the adapter did not read). When the stored edits carry the
/// reconstruction of shell edits, the second part finds nothing new.
pub(super) fn events(rows: &[EditRow], steps: &[StepRow], readings: &[StepReading], roots: &Roots) -> Vec<EditEvent> {
    let wd = |step: Option<i64>| {
        step.and_then(|i| steps.iter().find(|s| s.index == i)).and_then(|s| s.working_dir.as_deref())
    };
    let reading = |step: usize| steps.iter().position(|s| s.index as usize == step).and_then(|i| readings.get(i));
    let mut out: Vec<EditEvent> = Vec::new();
    for e in rows {
        let naive = roots.rel(&e.path, wd(e.step));
        let mut ev = EditEvent::from_row(e, naive.clone());
        if e.kind == EditKind::ShellWrite
            && let Some(w) =
                e.step.and_then(|s| reading(s as usize)).and_then(|r| r.writes.iter().find(|w| w.naive == naive))
        {
            ev.path = w.path.clone();
            ev.append = w.append;
        }
        out.push(ev);
    }
    for (s, r) in steps.iter().zip(readings) {
        let step = s.index as usize;
        for w in &r.writes {
            let known = out.iter().any(|e| e.step == Some(step) && (e.path == w.path || e.path == w.naive));
            if known {
                continue;
            }
            out.push(EditEvent {
                step: Some(step),
                path: w.path.clone(),
                kind: EditKind::ShellWrite,
                status: if r.failed { EditStatus::Unknown } else { EditStatus::Applied },
                codes: Vec::new(),
                diff: None,
                changed_nothing: false,
                append: w.append,
                via: w.via,
            });
        }
    }
    out.sort_by_key(|e| e.step.unwrap_or(usize::MAX));
    out
}

/// Edits that left nothing behind: to build or installed copies, undone by git (or a reversed
/// patch) and never re-applied, applied but missing from the submitted patch (judged only when
/// the submission is known: `submitted`), or (shell edits) whose pattern or address matched no
/// line, with no later edit of the file that changed it. Scratch files and files the agent
/// created are not the change, and an explicit undo (a reverting edit) was deliberate.
pub(super) fn lost_edits(
    edits: &[EditEvent],
    files: &[FileActivity],
    reverts: &[Revert],
    steps: &[StepRow],
    readings: &[StepReading],
    patch_files: &[String],
    submitted: bool,
) -> Vec<LostEdit> {
    let resets: Vec<&Reset> = readings.iter().flat_map(|r| &r.resets).collect();
    let restores: Vec<usize> =
        steps.iter().zip(readings).filter(|(_, r)| r.restores).map(|(s, _)| s.index as usize).collect();
    let mut out = Vec::new();
    for f in files {
        // Tests and docs the agent touched and put back are not the change.
        let kind = super::paths::FileKind::of(&f.path);
        let aside =
            f.created || f.scratch || matches!(kind, super::paths::FileKind::Test | super::paths::FileKind::Doc);
        // The last step that changed the file (a reversed patch undoes: it is not a change; nor
        // is a shell edit that changed nothing).
        let last = edits.iter().filter(|e| e.path == f.path && e.changed() && !e.undoes()).filter_map(|e| e.step).max();
        // The last attempt at the file changed nothing, and nothing changed it after.
        let noop = edits.iter().filter(|e| e.path == f.path && e.changed_nothing).filter_map(|e| e.step).max();
        if let Some(step) = noop.filter(|s| last.is_none_or(|l| l < *s))
            && !aside
        {
            out.push(LostEdit { step, path: f.path.clone(), why: LostWhy::ChangedNothing });
            continue;
        }
        let Some(last) = last else { continue };
        if f.in_patch || aside {
            continue;
        }
        if is_build_copy(&f.path) {
            let target = build_copy_target(&f.path).unwrap_or("");
            if !patch_files.iter().any(|p| p == target) {
                out.push(LostEdit { step: last, path: f.path.clone(), why: LostWhy::BuildCopy });
            }
            continue;
        }
        if reverts.iter().any(|r| r.path == f.path && r.step == last) {
            continue;
        }
        let reset = resets.iter().find(|r| r.step > last && (r.files.is_empty() || r.files.contains(&f.path)));
        let shell = edits.iter().any(|e| e.path == f.path && e.step == Some(last) && e.kind == EditKind::ShellWrite);
        let why = match reset {
            Some(r) if !restores.iter().any(|&p| p > r.step) => {
                let checked = steps.iter().any(|s| {
                    let i = s.index as usize;
                    i > last && i < r.step && (runs_tests(&s.action) || s.action.trim_start().starts_with("python"))
                });
                LostWhy::GitRevert { step: r.step, checked }
            }
            _ if submitted => LostWhy::NotInPatch { shell },
            _ => continue,
        };
        out.push(LostEdit { step: last, path: f.path.clone(), why });
    }
    out
}
