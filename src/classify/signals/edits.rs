//! Signals from the edits: rejections and what followed them, reverted hunks, edits that
//! silently changed nothing.

use super::paths::{Roots, build_copy_target, is_build_copy};
use super::{After, FileActivity, LostEdit, LostWhy, Rejection, Revert};
use crate::analysis::markers::runs_tests;
use crate::analysis::reconstruct::command::{RedirectOp, parse};
use crate::classify::input::{Edit, Step};
use crate::model::{EditKind, EditStatus};

/// How an edit was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// An edit tool's edit (str_replace, windowed edit, create), as stored.
    Tool,
    /// A shell write: redirection, `sed -i`, `tee`, a heredoc.
    Shell,
    /// A script the run wrote or passed inline (`python fix.py`, `python - <<EOF`).
    Script,
    /// `patch` or `git apply`; `reverse`: `-R`, undoing the patch.
    Patch { reverse: bool },
}

/// How a stored shell edit was made, read from the command the reconstruction stored with it;
/// whether it added to the file (`>>`, `tee -a`) rather than wrote it whole; and the script file
/// it ran (`python fix.py`: `fix.py`; not an inline `-c` or `-` script).
fn via(e: &Edit) -> (Via, bool, Option<String>) {
    if e.kind != EditKind::ShellWrite {
        return (Via::Tool, false, None);
    }
    let parsed = e.command.as_deref().and_then(parse).unwrap_or_default();
    let Some(c) = parsed.first().and_then(|p| p.cmds.first()) else { return (Via::Shell, false, None) };
    let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
    let reverse = args.iter().any(|a| *a == "-R" || *a == "--reverse");
    match c.name().unwrap_or("") {
        n if n.starts_with("python") => {
            let inline = args.iter().any(|a| *a == "-c" || *a == "-");
            let script = args.iter().find(|a| !a.starts_with('-')).filter(|_| !inline).map(|a| a.to_string());
            (Via::Script, false, script)
        }
        "patch" => (Via::Patch { reverse }, false, None),
        "git" if args.first() == Some(&"apply") => (Via::Patch { reverse }, false, None),
        n => {
            let appends = c.redirects.iter().any(|r| r.op == RedirectOp::Append && r.fd.is_none_or(|f| f == 1))
                || (n == "tee" && args.iter().any(|a| *a == "-a" || *a == "--append"));
            (Via::Shell, appends, None)
        }
    }
}

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
    /// The script file a [`Via::Script`] edit ran, as the command wrote it.
    pub script: Option<String>,
    /// The step whose `git checkout`/`restore`/`stash`/`reset --hard` undid it (and no `stash
    /// pop` brought it back), as the reconstruction stored it.
    pub undone_at: Option<usize>,
}

impl EditEvent {
    pub fn from_row(e: &Edit, path: String) -> EditEvent {
        let (via, append, script) = via(e);
        EditEvent {
            step: e.step.map(|s| s as usize),
            path,
            kind: e.kind,
            status: e.status,
            codes: e.lint_codes.clone(),
            diff: e.diff.clone(),
            changed_nothing: e.changed_nothing(),
            append,
            via,
            script,
            undone_at: e.undone_at.map(|s| s as usize),
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
        out.push(Rejection {
            step,
            path: e.path.clone(),
            codes: e.codes.clone(),
            by: by.into(),
            after,
            pending: Vec::new(),
            overwritten: Vec::new(),
        });
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

/// The run's stored edits, repository-relative, in step order. Shell edits are the
/// reconstruction's (`analysis::reconstruct`): placed in the folder their command ran in.
pub(super) fn events(rows: &[Edit], steps: &[Step], roots: &Roots) -> Vec<EditEvent> {
    let wd = |step: Option<i64>| {
        step.and_then(|i| steps.iter().find(|s| s.index == i)).and_then(|s| s.working_dir.as_deref())
    };
    let mut out: Vec<EditEvent> = rows.iter().map(|e| EditEvent::from_row(e, roots.rel(&e.path, wd(e.step)))).collect();
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
    steps: &[Step],
    patch_files: &[String],
    submitted: bool,
) -> Vec<LostEdit> {
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
        // Undone by git (the reconstruction's `undone_at`), or by a reversed patch after it.
        let at_last = |e: &&EditEvent| e.path == f.path && e.step == Some(last);
        let by_git = edits.iter().filter(at_last).filter(|e| e.changed() && !e.undoes()).filter_map(|e| e.undone_at);
        let by_patch =
            edits.iter().filter(|e| e.path == f.path && e.undoes()).filter_map(|e| e.step).filter(|s| *s > last);
        let reset = by_git.chain(by_patch).min();
        let shell = edits.iter().filter(at_last).any(|e| e.kind == EditKind::ShellWrite);
        let why = match reset {
            Some(r) => {
                let checked = steps.iter().any(|s| {
                    let i = s.index as usize;
                    i > last && i < r && (runs_tests(&s.action) || s.action.trim_start().starts_with("python"))
                });
                LostWhy::GitRevert { step: r, checked }
            }
            _ if submitted => LostWhy::NotInPatch { shell },
            _ => continue,
        };
        out.push(LostEdit { step: last, path: f.path.clone(), why });
    }
    out
}
