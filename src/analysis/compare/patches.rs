//! The runs' submissions compared file by file and hunk by hunk, with the gold patch when it is
//! known. Two hunks are the same when they remove and add the same lines (trailing blanks aside),
//! wherever in the file they do it.

use crate::analysis::edits::{hunks, split_patch};
use serde::Serialize;
use std::collections::BTreeMap;

/// One file some patch touches: which runs (and whether the gold patch) touch it, and its hunks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilePresence {
    pub path: String,
    /// Per run, in the order of the comparison: whether its submission touches the file.
    pub runs: Vec<bool>,
    /// Whether the gold patch touches it; `None` when no gold patch is known.
    pub gold: Option<bool>,
    pub hunks: Vec<HunkPresence>,
}

/// One distinct change to a file, and who made it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HunkPresence {
    /// The `@@` line of the first patch that has it.
    pub header: String,
    /// The hunk as that patch has it.
    pub diff: String,
    pub runs: Vec<bool>,
    pub gold: Option<bool>,
    #[serde(skip)]
    changes: Vec<String>,
}

impl HunkPresence {
    /// Made by every run (and the gold patch, when known).
    pub fn in_all(&self) -> bool {
        self.runs.iter().all(|&r| r) && self.gold != Some(false)
    }

    /// How many of the patches (runs and gold) have it.
    pub fn count(&self) -> usize {
        self.runs.iter().filter(|&&r| r).count() + usize::from(self.gold == Some(true))
    }
}

/// Files of the runs' patches (`None`: the run submitted nothing) and the gold patch, in path
/// order, each with its distinct hunks in the order first met.
pub fn compare_patches(patches: &[Option<&str>], gold: Option<&str>) -> Vec<FilePresence> {
    let n = patches.len();
    let mut files: BTreeMap<String, FilePresence> = BTreeMap::new();
    let sources = patches.iter().copied().chain(std::iter::once(gold));
    for (k, patch) in sources.enumerate() {
        let Some(patch) = patch else { continue };
        for file in split_patch(patch) {
            let entry = files.entry(file.path.clone()).or_insert_with(|| FilePresence {
                path: file.path.clone(),
                runs: vec![false; n],
                gold: gold.map(|_| false),
                hunks: Vec::new(),
            });
            mark(&mut entry.runs, &mut entry.gold, k);
            for h in hunks(&file.diff) {
                if h.changes.is_empty() {
                    continue;
                }
                let at = match entry.hunks.iter().position(|e| e.changes == h.changes) {
                    Some(at) => at,
                    None => {
                        entry.hunks.push(HunkPresence {
                            header: h.header,
                            diff: h.text,
                            runs: vec![false; n],
                            gold: gold.map(|_| false),
                            changes: h.changes,
                        });
                        entry.hunks.len() - 1
                    }
                };
                let hunk = &mut entry.hunks[at];
                mark(&mut hunk.runs, &mut hunk.gold, k);
            }
        }
    }
    files.into_values().collect()
}

/// Source `k` has it: a run, or (past the runs) the gold patch.
fn mark(runs: &mut [bool], gold: &mut Option<bool>, k: usize) {
    match runs.get_mut(k) {
        Some(r) => *r = true,
        None => *gold = Some(true),
    }
}
