//! A whole-text script run in place (`perl -0777 -pi`, `sed -z -i`) recorded as the step's
//! edit of each file it names.

use super::Slurp;
use crate::analysis::reconstruct::command::{Simple, Word};
use crate::analysis::reconstruct::ops::Step;
use crate::analysis::reconstruct::replay::Replay;
use crate::analysis::reconstruct::shown::resolve;

impl Replay {
    /// Each file named: the script simulated on what the run knows of it (`None`: a script not
    /// read here, the edit is unknown until a view says); a script of plain replacements on a
    /// file it cannot be placed in gets their text as its diff, unplaced.
    pub(in crate::analysis::reconstruct) fn whole_text(
        &mut self,
        script: Option<&Slurp>,
        files: &[&Word],
        cwd: &Option<String>,
        c: &Simple,
        step: &Step<'_>,
    ) {
        let unread = self.budget.take_trip();
        for f in files {
            let path = resolve(&f.text, cwd.as_deref());
            let fi = self.file(&path);
            let before = self.files[fi].known.clone();
            let usable = script.filter(|_| !f.dynamic && !self.lost_cwd && !self.budget.exhausted());
            let (bytes, lines) = before.weight();
            let doc = match usable {
                // Every byte goes through every pattern.
                Some(s) if self.budget.spend(lines + bytes / 64 * s.len()) => s.run(&before),
                _ => None,
            };
            if unread {
                self.budget.trip();
            }
            let id = self.next_id();
            let partial = doc.as_ref().is_some_and(|d| d.assumed);
            let after = doc.map(|d| d.sealed(id));
            let placed = after.is_some();
            self.shell_edit_partial(step.index, &path, fi, &c.raw, step.status, before, after, None, partial);
            if !placed && let Some(pairs) = usable.and_then(Slurp::literals) {
                self.unplaced(&path, &pairs);
            }
        }
    }
}
