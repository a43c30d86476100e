//! Signals from the edits: rejections and what followed them, reverted hunks, edits that
//! silently changed nothing.

use super::paths::{Roots, build_copy_target, is_build_copy};
use super::{After, FileActivity, LostEdit, LostWhy, Rejection, Revert};
use crate::analysis::markers::runs_tests;
use crate::analysis::reconstruct::command::{RedirectOp, parse};
use crate::classify::input::{Edit, Step};
use crate::model::{EditKind, EditStatus};
use std::collections::HashMap;

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
        let changed = crate::analysis::diff::changed_lines(self.diff.as_deref().unwrap_or(""));
        let side = |mark: char| changed.iter().filter(|l| l.mark == mark).map(|l| l.text.trim_end()).collect();
        (side('-'), side('+'))
    }
}

/// Steps after a rejection within which a shell write to the same file is a bypass.
const BYPASS_WINDOW: usize = 3;

/// Every rejected or refused edit, with what the agent did to that file next. One pass from
/// the end, keeping each file's next applied edit: linear in the edits.
pub(super) fn rejections(edits: &[EditEvent]) -> Vec<Rejection> {
    let mut out = Vec::new();
    let mut next_applied: HashMap<&str, &EditEvent> = HashMap::new();
    for e in edits.iter().rev() {
        if let Some(step) = e.step.filter(|_| e.rejected()) {
            let after = match next_applied.get(e.path.as_str()) {
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
        } else if e.step.is_some() {
            next_applied.insert(e.path.as_str(), e);
        }
    }
    out.reverse();
    out
}

/// Applied edits whose diff undoes an earlier applied edit of the same file: each edit's lines
/// read once and looked up by what would undo them, linear in the edits.
pub(super) fn reverts(edits: &[EditEvent]) -> Vec<Revert> {
    // (path, removed, added) of the edits seen so far -> the step of the latest.
    type Change<'a> = (&'a str, Vec<&'a str>, Vec<&'a str>);
    let mut seen: HashMap<Change<'_>, Option<usize>> = HashMap::new();
    let mut out = Vec::new();
    for b in edits.iter().filter(|e| e.changed()) {
        let (b_removed, b_added) = b.hunk_lines();
        if !b_removed.is_empty() || !b_added.is_empty() {
            let undoing = (b.path.as_str(), b_added.clone(), b_removed.clone());
            if let (Some(a_step), Some(step)) = (seen.get(&undoing), b.step) {
                out.push(Revert { step, path: b.path.clone(), reverts_step: a_step.unwrap_or(0) });
            }
        }
        seen.insert((b.path.as_str(), b_removed, b_added), b.step);
    }
    out
}

/// The run's stored edits, repository-relative, in step order. Shell edits are the
/// reconstruction's (`analysis::reconstruct`): placed in the folder their command ran in.
pub(super) fn events(rows: &[Edit], steps: &[Step], roots: &Roots) -> Vec<EditEvent> {
    let dirs: HashMap<i64, &str> = steps.iter().filter_map(|s| Some((s.index, s.working_dir.as_deref()?))).collect();
    let wd = |step: Option<i64>| step.and_then(|i| dirs.get(&i).copied());
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
    // Each file's edits, found once: linear in the edits, whatever the number of files.
    let mut by_path: HashMap<&str, Vec<&EditEvent>> = HashMap::new();
    for e in edits {
        by_path.entry(e.path.as_str()).or_default().push(e);
    }
    let reverted: std::collections::HashSet<(&str, usize)> =
        reverts.iter().map(|r| (r.path.as_str(), r.step)).collect();
    for f in files {
        let of_file = by_path.get(f.path.as_str()).map_or(&[][..], Vec::as_slice);
        // Tests and docs the agent touched and put back are not the change.
        let kind = super::paths::FileKind::of(&f.path);
        let aside =
            f.created || f.scratch || matches!(kind, super::paths::FileKind::Test | super::paths::FileKind::Doc);
        // The last step that changed the file (a reversed patch undoes: it is not a change; nor
        // is a shell edit that changed nothing).
        let last = of_file.iter().filter(|e| e.changed() && !e.undoes()).filter_map(|e| e.step).max();
        // The last attempt at the file changed nothing, and nothing changed it after.
        let noop = of_file.iter().filter(|e| e.changed_nothing).filter_map(|e| e.step).max();
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
        if reverted.contains(&(f.path.as_str(), last)) {
            continue;
        }
        // Undone by git (the reconstruction's `undone_at`), or by a reversed patch after it.
        let at_last = |e: &&&EditEvent| e.step == Some(last);
        let by_git = of_file.iter().filter(at_last).filter(|e| e.changed() && !e.undoes()).filter_map(|e| e.undone_at);
        let by_patch = of_file.iter().filter(|e| e.undoes()).filter_map(|e| e.step).filter(|s| *s > last);
        let reset = by_git.chain(by_patch).min();
        let shell = of_file.iter().filter(at_last).any(|e| e.kind == EditKind::ShellWrite);
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

#[cfg(test)]
impl EditEvent {
    /// An applied `str_replace` through the tool with `diff`, for the signals' tests.
    pub fn tool(step: Option<usize>, path: &str, diff: &str) -> EditEvent {
        EditEvent {
            step,
            path: path.into(),
            kind: EditKind::StrReplace,
            status: EditStatus::Applied,
            codes: Vec::new(),
            diff: Some(diff.into()),
            changed_nothing: false,
            append: false,
            via: Via::Tool,
            script: None,
            undone_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(step: usize, path: &str, kind: EditKind, status: EditStatus, diff: &str) -> EditEvent {
        EditEvent { kind, status, ..EditEvent::tool(Some(step), path, diff) }
    }

    /// Issue 42: the passes over a run's edits are one look-up per edit (20,001 edits took
    /// 12.9 s to classify when each looked through all the others). What they find is as
    /// before: each rejection's next applied edit of its own file, each revert's latest undone
    /// edit, among edits of thousands of files interleaved.
    #[test]
    fn rejections_and_reverts_over_many_files_find_their_own_files_edits() {
        const FILES: usize = 3_000;
        let mut edits = Vec::new();
        for f in 0..FILES {
            let p = format!("src/m{f}.py");
            let s = 10 * f;
            edits.push(edit(s, &p, EditKind::StrReplace, EditStatus::RejectedByLinter, "@@ -1 +1 @@\n-a\n+b\n"));
            edits.push(edit(s + 1, &p, EditKind::StrReplace, EditStatus::Applied, "@@ -1 +1 @@\n-a\n+b\n"));
            edits.push(edit(s + 2, &p, EditKind::StrReplace, EditStatus::Applied, "@@ -1 +1 @@\n-b\n+a\n"));
            if f % 2 == 0 {
                edits.push(edit(s + 3, &p, EditKind::StrReplace, EditStatus::RefusedByTool, "@@ -1 +1 @@\n-x\n+y\n"));
            }
        }
        edits.sort_by_key(|e| (e.step, e.path.clone()));
        let rejections = rejections(&edits);
        assert_eq!(rejections.len(), FILES + FILES / 2);
        for r in &rejections {
            let f: usize = r.path.trim_start_matches("src/m").trim_end_matches(".py").parse().unwrap_or(usize::MAX);
            let expected = if r.step == 10 * f { After::Recovered { step: 10 * f + 1 } } else { After::Abandoned };
            assert_eq!(r.after, expected, "{r:?}");
        }
        let reverts = reverts(&edits);
        assert_eq!(reverts.len(), FILES);
        assert!(reverts.iter().enumerate().all(|(f, r)| {
            r.path == format!("src/m{f}.py") && (r.step, r.reverts_step) == (10 * f + 2, 10 * f + 1)
        }));
    }

    /// Issue 43: lines starting `--` / `++` (`---i;`, `+++k;` in the diff) are the edit's: an
    /// edit that also adds `++k;` does not undo one that also removed `--i;`.
    #[test]
    fn lines_starting_with_two_dashes_or_pluses_are_changes() {
        let p = "src/c.c";
        let edits = [
            edit(1, p, EditKind::StrReplace, EditStatus::Applied, "@@ -1,2 +1 @@\n-x\n---i;\n+y\n"),
            edit(2, p, EditKind::StrReplace, EditStatus::Applied, "@@ -1 +1,2 @@\n-y\n+x\n+++k;\n"),
        ];
        assert_eq!(reverts(&edits), []);
    }
}
