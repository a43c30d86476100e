//! Signals: what a run did, measured, per run. The heuristic rules read them, the LLM prompt
//! shows them, and reviewers see them (`trajan signals RUN`). Computed from the stored run
//! ([`RunDetail`]) by pure functions; stored as JSON beside the run. docs/CLASSIFYING.md
//! explains each one.

mod context;
mod edits;
pub mod paths;
mod propagation;
mod table;
mod views;

pub use crate::label::ExitCategory;
use paths::{FileKind, Roots};
pub use table::table;

use crate::store::read::RunDetail;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Bumped when a signal's meaning changes: stored signals of another version are recomputed.
/// 2: shell edits are reconstructed (diffs, edits that changed nothing, script writes).
pub const VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    pub version: u32,
    pub steps: usize,
    pub resolved: Option<bool>,
    pub exit_status: Option<String>,
    pub exit: ExitCategory,
    pub tools: ToolSet,
    /// Files of the agent's final patch (repository paths).
    pub patch_files: Vec<String>,
    pub first_edit_step: Option<usize>,
    /// Every file the run opened, searched into or edited.
    pub files: Vec<FileActivity>,
    /// Where the task needed changes: the gold patch's files, else files the instruction and
    /// failing tests' messages name.
    pub expected: Vec<ExpectedFile>,
    /// Gold files not in the agent's patch over gold files (only with a gold patch).
    pub miss_ratio: Option<f64>,
    pub rejections: Vec<Rejection>,
    /// Rejected edits by lint code.
    pub lint_codes: BTreeMap<String, usize>,
    /// Applied edits that undo an earlier applied edit.
    pub reverts: Vec<Revert>,
    /// Edits that changed nothing in the end (build copies, reverted by git, missing from the
    /// final patch).
    pub lost_edits: Vec<LostEdit>,
    pub context: ContextSignals,
    /// Identical actions repeated long after their first use, or in a loop.
    pub repeats: Vec<Repeat>,
    /// Files opened three or more times with no edit to them in between.
    pub reopened: Vec<Reopen>,
    /// Identifiers the agent's diff removed or renamed that still occur in files it did not change.
    pub stale: Vec<StaleIdentifier>,
    /// With a gold patch: core (definitions) against periphery (call sites, tests, docs, configs).
    pub periphery: Option<Periphery>,
    /// Files named by failing tests' messages that the agent did not change.
    pub failing_test_files: Vec<TestMention>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolSet {
    /// Edit kinds the run used (str_replace, windowed_edit, shell_write...).
    pub edit_kinds: Vec<String>,
    /// Whether a linter gate could refuse edits (windowed `edit`, or a linter rejection seen).
    /// Without a gate there can be no required temporary errors.
    pub gated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileActivity {
    pub path: String,
    pub kind: FileKind,
    /// Steps that opened the file.
    pub opened: Vec<usize>,
    /// First step that showed any of it (opened, or the open file's window moved).
    pub first_seen: Option<usize>,
    /// First step whose search output named it.
    pub first_searched: Option<usize>,
    /// Steps with an applied (or unverdicted shell) edit; not shell edits that changed nothing.
    pub edited: Vec<usize>,
    /// Steps with a rejected or refused edit.
    pub rejected: Vec<usize>,
    pub in_patch: bool,
    /// The agent created it (first edit a create, or a whole-file write).
    pub created: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedWhy {
    Gold,
    Instruction,
    FailingTest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Core,
    Periphery,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectedFile {
    /// As the gold patch or the text named it.
    pub named: String,
    /// The repository file it resolved to, when the run met one.
    pub path: Option<String>,
    pub why: Vec<ExpectedWhy>,
    /// With a gold patch: core or periphery.
    pub role: Option<Role>,
    pub first_seen: Option<usize>,
    pub first_searched: Option<usize>,
    pub edited: bool,
    pub in_patch: bool,
    /// Steps whose edits of it were rejected or refused: the agent found it, but could not apply.
    pub rejected_at: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "then")]
pub enum After {
    /// A later edit through the tool applied.
    Recovered { step: usize },
    /// The file was written through the shell right after (within three steps).
    Bypassed { step: usize },
    /// No later edit to the file at all.
    Abandoned,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    pub step: usize,
    pub path: String,
    pub codes: Vec<String>,
    /// `linter` (a gate refused it) or `tool` (old_str not found, several matches...).
    pub by: String,
    pub after: After,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revert {
    pub step: usize,
    pub path: String,
    pub reverts_step: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum LostWhy {
    /// Edited a build or installed copy, not the repository's file.
    BuildCopy,
    /// `git checkout`/`stash`/`restore`/`reset --hard` at this step undid it, never re-applied;
    /// `checked`: tests or a script ran between the edit and the reset (a before/after check).
    GitRevert { step: usize, checked: bool },
    /// Applied (or written through the shell: `shell`) but absent from the submitted patch.
    NotInPatch { shell: bool },
    /// A shell edit whose pattern or address matched none of the lines the run showed, the
    /// last attempt at the file (`analysis::reconstruct`).
    ChangedNothing,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostEdit {
    pub step: usize,
    pub path: String,
    #[serde(flatten)]
    pub why: LostWhy,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextSignals {
    pub obs_chars: u64,
    /// Thoughts and actions.
    pub model_chars: u64,
    /// obs_chars / (obs_chars + model_chars).
    pub obs_share: f64,
    pub largest_obs: Option<StepSize>,
    /// Steps whose output the tool clipped or elided.
    pub clipped_steps: Vec<usize>,
    /// Steps with an observation of 20,000 characters or more.
    pub large_steps: Vec<usize>,
    /// Unbounded commands (`grep -r` without a limit, `find /`, whole-repo `git diff`, `cat` of a
    /// large file) that printed 5,000 characters or more.
    pub unbounded_steps: Vec<usize>,
    pub exit_context: bool,
    pub format_error_steps: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSize {
    pub step: usize,
    pub chars: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    /// The action's first line, at most 120 characters.
    pub action: String,
    pub steps: Vec<usize>,
    /// Every repetition got the same observation.
    pub same_output: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reopen {
    pub path: String,
    pub steps: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaleIdentifier {
    pub identifier: String,
    /// The file whose definition the agent's diff removed or renamed.
    pub defined_in: String,
    pub renamed_to: Option<String>,
    pub seen_in: Vec<Sighting>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sighting {
    pub path: String,
    pub step: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Periphery {
    pub core: Vec<String>,
    pub core_edited: Vec<String>,
    pub periphery: Vec<PeripheryFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeripheryFile {
    pub path: String,
    pub kind: FileKind,
    pub edited: bool,
    pub first_seen: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestMention {
    pub test: String,
    pub path: String,
}

/// Files met in a run, by repository path, in the order met.
#[derive(Default)]
struct FileTable {
    index: HashMap<String, usize>,
    files: Vec<FileActivity>,
}

impl FileTable {
    fn get(&mut self, path: &str) -> &mut FileActivity {
        let i = match self.index.get(path) {
            Some(&i) => i,
            None => {
                self.files.push(FileActivity {
                    path: path.to_string(),
                    kind: FileKind::of(path),
                    opened: Vec::new(),
                    first_seen: None,
                    first_searched: None,
                    edited: Vec::new(),
                    rejected: Vec::new(),
                    in_patch: false,
                    created: false,
                });
                self.index.insert(path.to_string(), self.files.len() - 1);
                self.files.len() - 1
            }
        };
        &mut self.files[i]
    }

    fn find(&self, path: &str) -> Option<&FileActivity> {
        self.index.get(path).map(|&i| &self.files[i])
    }
}

/// Compute every signal of a run.
pub fn compute(run: &RunDetail) -> Signals {
    let steps = &run.step_list;
    let dirs: HashMap<i64, &str> =
        steps.iter().filter_map(|s| s.working_dir.as_deref().map(|d| (s.index, d))).collect();
    let working_dir = |step: Option<i64>| step.and_then(|i| dirs.get(&i).copied());
    let gold = run.task.as_ref().and_then(|t| t.gold_patch.as_deref()).filter(|g| !g.trim().is_empty());
    let mut relative: Vec<String> = run.edit_list.iter().filter(|e| e.step.is_none()).map(|e| e.path.clone()).collect();
    relative.extend(gold.map(crate::analysis::edits::split_patch).unwrap_or_default().into_iter().map(|f| f.path));
    let roots = Roots::learn(
        run.edit_list.iter().map(|e| e.path.as_str()),
        &relative,
        steps.first().and_then(|s| s.working_dir.as_deref()),
    );
    let edits: Vec<edits::EditEvent> =
        run.edit_list.iter().map(|e| edits::EditEvent::from_row(e, roots.rel(&e.path, working_dir(e.step)))).collect();
    let patch_files: Vec<String> =
        edits.iter().filter(|e| e.step.is_none()).map(|e| e.path.clone()).collect::<Vec<_>>();
    let has_patch = run.submission.as_deref().is_some_and(|s| !s.trim().is_empty()) || !patch_files.is_empty();

    let shown = views::shown(steps, &roots);
    let mut table = FileTable::default();
    for s in &shown {
        for v in &s.views {
            let f = table.get(&v.path);
            f.first_seen.get_or_insert(s.step);
            if v.kind == views::ViewKind::Open {
                f.opened.push(s.step);
            }
        }
        for (path, _) in &s.hits {
            table.get(path).first_searched.get_or_insert(s.step);
        }
    }
    for e in &edits {
        let f = table.get(&e.path);
        match e.step {
            None => f.in_patch = true,
            Some(step) if e.rejected() => f.rejected.push(step),
            // A shell edit that changed nothing edited nothing.
            Some(_) if e.changed_nothing => {}
            Some(step) => {
                // A create, or a shell write to a file the run had neither opened nor met in
                // search output (a scratch script written with `cat > f <<EOF`).
                let unseen = f.first_seen.is_none_or(|s| s >= step) && f.first_searched.is_none_or(|s| s >= step);
                let first = f.edited.is_empty() && f.rejected.is_empty();
                if first && (e.creates() || (e.kind == crate::model::EditKind::ShellWrite && unseen)) {
                    f.created = true;
                }
                f.edited.push(step);
            }
        }
    }

    let failing_test_files = propagation::failing_test_files(run, &patch_files);
    let periphery = gold.map(|g| propagation::periphery(g, &table, &patch_files)).filter(|p| !p.core.is_empty());
    let expected = expected_files(run, gold, &table, &failing_test_files, periphery.as_ref());
    let miss_ratio = gold.map(|_| {
        let gold_files: Vec<&ExpectedFile> = expected.iter().filter(|e| e.why.contains(&ExpectedWhy::Gold)).collect();
        let missed = gold_files.iter().filter(|e| !e.in_patch).count();
        if gold_files.is_empty() { 0.0 } else { missed as f64 / gold_files.len() as f64 }
    });
    let rejections = edits::rejections(&edits);
    let mut lint_codes: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rejections {
        for c in &r.codes {
            *lint_codes.entry(c.clone()).or_default() += 1;
        }
    }
    let reverts = edits::reverts(&edits);
    let lost_edits = if run.submission.is_some() || !patch_files.is_empty() {
        edits::lost_edits(&edits, &table.files, &reverts, steps, &patch_files, &roots)
    } else {
        Vec::new()
    };
    let exit = ExitCategory::classify(run.summary.exit_status.as_deref(), has_patch);
    let context = context::context(steps, exit);
    let repeats = context::repeats(steps);
    let reopened = context::reopened(&shown, &table);
    let stale = propagation::stale_identifiers(run, &shown, &edits, &patch_files);
    let mut edit_kinds: Vec<String> = edits.iter().filter(|e| e.step.is_some()).map(|e| e.kind.to_string()).collect();
    edit_kinds.sort();
    edit_kinds.dedup();
    let gated = edits.iter().any(|e| {
        e.kind == crate::model::EditKind::WindowedEdit || e.status == crate::model::EditStatus::RejectedByLinter
    });
    Signals {
        version: VERSION,
        steps: steps.len(),
        resolved: run.summary.resolved,
        exit_status: run.summary.exit_status.clone(),
        exit,
        tools: ToolSet { edit_kinds, gated },
        first_edit_step: edits.iter().filter(|e| e.changed()).filter_map(|e| e.step).min(),
        patch_files,
        files: table.files,
        expected,
        miss_ratio,
        rejections,
        lint_codes,
        reverts,
        lost_edits,
        context,
        repeats,
        reopened,
        stale,
        periphery,
        failing_test_files,
    }
}

/// The files the task needed: the gold patch's, else those the instruction and failing tests
/// name, each matched to what the run did with it.
fn expected_files(
    run: &RunDetail,
    gold: Option<&str>,
    table: &FileTable,
    failing: &[TestMention],
    periphery: Option<&Periphery>,
) -> Vec<ExpectedFile> {
    let mut named: Vec<(String, ExpectedWhy)> = Vec::new();
    if let Some(g) = gold {
        named.extend(crate::analysis::edits::split_patch(g).into_iter().map(|f| (f.path, ExpectedWhy::Gold)));
    } else {
        if let Some(text) = run.task.as_ref().and_then(|t| t.instruction.as_deref()) {
            named.extend(paths::mentioned_files(text).into_iter().map(|p| (p, ExpectedWhy::Instruction)));
        }
        named.extend(failing.iter().map(|m| (m.path.clone(), ExpectedWhy::FailingTest)));
    }
    let mut out: Vec<ExpectedFile> = Vec::new();
    for (name, why) in named {
        if let Some(e) = out.iter_mut().find(|e| e.named == name || e.path.as_deref() == Some(name.as_str())) {
            if !e.why.contains(&why) {
                e.why.push(why);
            }
            continue;
        }
        // A name from prose counts only when it is a file the run met (opened, searched into or
        // edited): task templates and issue texts name example files that do not exist.
        let path = if why == ExpectedWhy::Gold {
            name.clone()
        } else {
            let met = table.files.iter().map(|f| f.path.as_str()).filter(|p| paths::names_file(p, &name));
            match met.min_by_key(|p| p.len()) {
                Some(p) => p.to_string(),
                None => continue,
            }
        };
        let path = Some(path);
        let activity = path.as_deref().and_then(|p| table.find(p));
        let role = periphery.and_then(|p| {
            if p.core.contains(&name) {
                Some(Role::Core)
            } else {
                p.periphery.iter().any(|f| f.path == name).then_some(Role::Periphery)
            }
        });
        out.push(ExpectedFile {
            named: name,
            first_seen: activity.and_then(|f| f.first_seen),
            first_searched: activity.and_then(|f| f.first_searched),
            edited: activity.is_some_and(|f| !f.edited.is_empty() || f.in_patch),
            in_patch: activity.is_some_and(|f| f.in_patch),
            rejected_at: activity.map(|f| f.rejected.clone()).unwrap_or_default(),
            path,
            why: vec![why],
            role,
        });
    }
    out
}

#[cfg(test)]
mod tests;
