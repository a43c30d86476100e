//! Signals from the edits: rejections and what followed them, reverted hunks, edits that
//! silently changed nothing.

use super::paths::{build_copy_target, is_build_copy, is_scratch};
use super::views::simple_commands;
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
        }
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

/// A `git checkout`/`restore`/`stash`/`reset --hard` step and the files it resets (empty: all).
struct GitReset {
    step: usize,
    files: Vec<String>,
}

fn git_resets(steps: &[StepRow], roots: &super::paths::Roots) -> (Vec<GitReset>, Vec<usize>) {
    let mut resets = Vec::new();
    let mut restores = Vec::new();
    for s in steps {
        for c in simple_commands(&s.action) {
            if c.first().map(String::as_str) != Some("git") {
                continue;
            }
            let sub = c.get(1).map(String::as_str).unwrap_or("");
            let rest: Vec<&String> = c.iter().skip(2).collect();
            let files = || -> Vec<String> {
                rest.iter()
                    .filter(|a| !a.starts_with('-') && a.as_str() != "." && (a.contains('.') || a.contains('/')))
                    .map(|a| roots.rel(a, s.working_dir.as_deref()))
                    .collect()
            };
            let step = s.index as usize;
            match sub {
                "checkout" | "restore" if !rest.is_empty() && !rest.iter().any(|a| *a == "-b" || *a == "-B") => {
                    let all = rest.iter().any(|a| *a == ".");
                    let f = files();
                    if all || !f.is_empty() {
                        resets.push(GitReset { step, files: if all { Vec::new() } else { f } });
                    }
                }
                "stash" => match rest.first().map(|a| a.as_str()) {
                    None | Some("push") | Some("save") | Some("-u") => {
                        resets.push(GitReset { step, files: Vec::new() })
                    }
                    Some("pop") | Some("apply") => restores.push(step),
                    _ => {}
                },
                "reset" if rest.iter().any(|a| *a == "--hard") => resets.push(GitReset { step, files: Vec::new() }),
                _ => {}
            }
        }
    }
    (resets, restores)
}

/// Edits that left nothing behind: to build or installed copies, undone by git and never
/// re-applied, applied but missing from the submitted patch, or (shell edits) whose pattern or
/// address matched no line, with no later edit of the file that changed it. Scratch files and
/// files the agent created are not the change, and an explicit undo (a reverting edit) was
/// deliberate.
pub(super) fn lost_edits(
    edits: &[EditEvent],
    files: &[FileActivity],
    reverts: &[Revert],
    steps: &[StepRow],
    patch_files: &[String],
    roots: &super::paths::Roots,
) -> Vec<LostEdit> {
    let (resets, restores) = git_resets(steps, roots);
    let mut out = Vec::new();
    for f in files {
        // Tests and docs the agent touched and put back are not the change.
        let kind = super::paths::FileKind::of(&f.path);
        let aside = f.created
            || is_scratch(&f.path)
            || matches!(kind, super::paths::FileKind::Test | super::paths::FileKind::Doc);
        // The last attempt at the file changed nothing, and nothing changed it after.
        let noop = edits.iter().filter(|e| e.path == f.path && e.changed_nothing).filter_map(|e| e.step).max();
        if let Some(step) = noop.filter(|s| f.edited.last().is_none_or(|l| l < s))
            && !aside
        {
            out.push(LostEdit { step, path: f.path.clone(), why: LostWhy::ChangedNothing });
            continue;
        }
        let Some(&last) = f.edited.last() else { continue };
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
            _ => LostWhy::NotInPatch { shell },
        };
        out.push(LostEdit { step: last, path: f.path.clone(), why });
    }
    out
}
