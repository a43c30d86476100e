//! A simulated script's files recorded as the step's edits on the replay.

use super::Written;
use crate::analysis::reconstruct::known::Known;
use crate::analysis::reconstruct::ops::Step;
use crate::analysis::reconstruct::replay::Replay;
use crate::analysis::reconstruct::shown::resolve;
use crate::model::Certainty;

impl Replay {
    /// Simulate Python `code` run by `command`: each file it wrote becomes an edit (simulated,
    /// or unknown until a view says). False when the script is not read as edits.
    pub(in crate::analysis::reconstruct) fn simulate_python(
        &mut self,
        code: &str,
        command: &str,
        cwd: &Option<String>,
        step: &Step<'_>,
    ) -> bool {
        let Some(tree) = self.trees.tree(code) else { return false };
        let read = |p: &str| self.known_of(&resolve(p, cwd.as_deref())).cloned().unwrap_or_default();
        let Some(files) = super::simulate(code, &tree, &read) else { return false };
        let first = command.lines().next().unwrap_or(command);
        for (p, wrote) in files {
            let (after, pairs) = match wrote {
                Written::Text(d) => (Some(d), None),
                Written::Replaced(pairs) => (None, Some(pairs)),
                Written::Unknown => (None, None),
            };
            let path = resolve(&p, cwd.as_deref());
            let f = self.file(&path);
            let before: Known = self.files[f].known.clone();
            let id = self.next_id();
            let partial = after.as_ref().is_some_and(|d| d.assumed);
            let text = after.as_ref().filter(|d| d.known.is_whole()).and_then(|d| d.known.text());
            let after = after.map(|d| d.sealed(id));
            self.shell_edit_partial(step.index, &path, f, first, step.status, before, after, None, partial);
            // The text written, as a whole-file write carries it (the submitted patch's hunks
            // are traced to it).
            if let Some(r) = self.recs.last_mut().filter(|r| r.certainty != Some(Certainty::Unchanged)) {
                r.edit.new_text = text;
            }
            if let Some(pairs) = pairs {
                self.unplaced(&path, &pairs);
            }
        }
        true
    }
}
