//! Where the submitted change was first written: for each source file of the final patch, the
//! first step whose edit wrote lines the final patch still holds. That step committed the run to
//! the change it submitted (failure-modes.md, onset: "a choice that shows only in the edit: the
//! edit"). An edit made by running a script the run wrote earlier was written when the script
//! was: that step is kept beside it.

use super::FileTable;
use super::edits::{EditEvent, Via};
use super::paths::FileKind;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// A source file of the final patch.
    pub path: String,
    /// The first step whose edit wrote lines the final patch holds.
    pub step: usize,
    /// The step that wrote the script that edit ran, when the run wrote it earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<usize>,
    /// How many of the final patch's added lines of the file that edit wrote.
    pub lines: usize,
}

impl Origin {
    /// The step the change was first written at: the script's, else the edit's.
    pub fn first(&self) -> usize {
        self.written_at.unwrap_or(self.step)
    }
}

/// Lines shorter than this (trimmed) say too little to tell one edit's from another's: a
/// closing bracket, `else:`, `return`.
const MIN_LINE: usize = 8;

/// The added lines of a diff that say something, trimmed.
fn added(diff: &str) -> HashSet<&str> {
    crate::analysis::diff::changed_lines(diff)
        .into_iter()
        .filter(|l| l.mark == '+')
        .map(|l| l.text.trim())
        .filter(|l| l.chars().count() >= MIN_LINE)
        .collect()
}

/// For each source file of the final patch that is not the agent's scratch, the first edit
/// whose added lines the final patch holds (in the order of the patch's files).
pub(super) fn origins(edits: &[EditEvent], table: &FileTable) -> Vec<Origin> {
    let mut out: Vec<Origin> = Vec::new();
    for patch in edits.iter().filter(|e| e.step.is_none()) {
        let path = &patch.path;
        let scratch = table.find(path).is_some_and(|f| f.scratch);
        if scratch || FileKind::of(path) != FileKind::Source || out.iter().any(|o| &o.path == path) {
            continue;
        }
        let last: HashSet<&str> = added(patch.diff.as_deref().unwrap_or(""));
        if last.is_empty() {
            continue;
        }
        let first = edits
            .iter()
            .filter(|e| &e.path == path && e.changed() && !e.undoes())
            .filter_map(|e| Some((e, added(e.diff.as_deref()?).intersection(&last).count())))
            .find(|(_, n)| *n > 0);
        let Some((e, lines)) = first else { continue };
        let Some(step) = e.step else { continue };
        out.push(Origin { path: path.clone(), step, written_at: script_written(edits, e, step), lines });
    }
    out
}

/// The last step before `step` that wrote the script `e` ran (matched by its file name), when
/// the edit was made by running one.
fn script_written(edits: &[EditEvent], e: &EditEvent, step: usize) -> Option<usize> {
    if e.via != Via::Script {
        return None;
    }
    let script = e.script.as_deref()?;
    let name = script.rsplit('/').next().unwrap_or(script);
    edits
        .iter()
        .filter(|w| w.step.is_some_and(|s| s < step) && w.changed())
        .filter(|w| w.path.rsplit('/').next() == Some(name))
        .filter_map(|w| w.step)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edit whose diff is one hunk (a header without numbers) of `lines`.
    fn edit(step: Option<usize>, path: &str, lines: &str) -> EditEvent {
        EditEvent::tool(step, path, &format!("@@\n{lines}"))
    }

    #[test]
    fn the_first_edit_whose_lines_the_patch_holds_and_the_script_it_ran() {
        let mut table = FileTable::default();
        table.get("pkg/mod.py");
        let mut scripted = edit(Some(7), "pkg/mod.py", "+    value = compute(x) or None\n");
        scripted.via = Via::Script;
        scripted.script = Some("./apply_fix.py".into());
        let edits = vec![
            // A first attempt, taken back: none of its lines are in the patch.
            edit(Some(3), "pkg/mod.py", "+    value = wrong(x)\n"),
            edit(Some(6), "apply_fix.py", "+open('pkg/mod.py').read().replace(...)\n"),
            scripted,
            edit(Some(9), "pkg/mod.py", "+    return value + 1\n"),
            edit(None, "pkg/mod.py", "+    value = compute(x) or None\n+    return value + 1\n"),
        ];
        let o = origins(&edits, &table);
        assert_eq!(o, vec![Origin { path: "pkg/mod.py".into(), step: 7, written_at: Some(6), lines: 1 }]);
        assert_eq!(o[0].first(), 6);
        // Tests and docs of the patch are not where the change was written.
        let docs = vec![
            edit(Some(2), "docs/a.rst", "+a long line of docs\n"),
            edit(None, "docs/a.rst", "+a long line of docs\n"),
        ];
        assert_eq!(origins(&docs, &table), vec![]);
    }

    /// Issue 43: an added line starting `++` (`+++count_widgets;` in the diff) is added.
    #[test]
    fn an_added_line_starting_with_two_pluses_is_added() {
        let diff = "@@ -1 +1,2 @@\n x\n+++count_widgets;\n";
        assert!(added(diff).contains("++count_widgets;"));
    }
}
