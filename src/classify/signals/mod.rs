//! Signals: what a run did, measured, per run. The heuristic rules read them, the LLM prompt
//! shows them, and reviewers see them (`trajan signals RUN`). Computed from the classifier's view
//! of a stored run ([`RunInput`]) by pure functions; stored as JSON beside the run. docs/CLASSIFYING.md
//! explains each one.

mod announced;
mod commands;
mod compiler;
mod context;
mod edits;
mod followers;
mod grading;
mod location;
mod loops;
mod origin;
pub mod paths;
mod propagation;
mod table;
mod undefined;
mod views;

pub use crate::analysis::symbols::ChangeKind;
pub use followers::Follower;
pub use grading::{Grading, Naming, Unstated};
pub use origin::Origin;
pub use propagation::FileSymbols;

pub use crate::label::ExitCategory;
use paths::{FileKind, Roots};
pub use table::table;

use crate::classify::input::{RunInput, Step};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Bumped when a signal's meaning changes: stored signals of another version are recomputed.
/// 2: symbols and actions read; 3: shell edits reconstructed (diffs, edits that changed
/// nothing, script writes); 4: where the patch was written, the final format streak, the
/// grading's signs (onset and blame); 5: the followers of the agent's own change.
pub const VERSION: u32 = 5;

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
    /// First applied edit of a file that is not scratch: the first attempt at the change.
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
    /// Files the task's text names that the agent edited.
    pub task_files_edited: Vec<String>,
    /// The harness's per-test results by group, when known.
    pub tests: Option<TestResults>,
    /// What the agent's diff did to definitions, per file in one of the seven languages.
    pub symbols: Vec<FileSymbols>,
    /// The same check failing the same way after each of several edits.
    pub loops: Vec<TestLoop>,
    /// Where the final patch's source changes were first written.
    #[serde(default)]
    pub origins: Vec<Origin>,
    /// On a format exit, the first step of the final streak of unparsed replies.
    #[serde(default)]
    pub format_streak: Option<usize>,
    /// What the grading shows beyond pass and fail (test ids, the gold's own change, API the
    /// task never names).
    #[serde(default)]
    pub grading: Grading,
    /// Gold sites that follow the agent's own change and that it left (stale periphery).
    #[serde(default)]
    pub followers: Vec<Follower>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResults {
    pub fail_to_pass: Counts,
    pub pass_to_pass: Counts,
}

impl TestResults {
    /// Every FAIL_TO_PASS test passes: the agent found the place and fixed what the task asked;
    /// what fails are regressions elsewhere.
    pub fn located(&self) -> bool {
        self.fail_to_pass.passed > 0 && self.fail_to_pass.failed == 0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestLoop {
    /// The first run's command line, at most 120 characters.
    pub command: String,
    pub runs: Vec<usize>,
    /// Steps that edited between the runs.
    pub edits: Vec<usize>,
    /// How each run failed (numbers folded).
    pub failure: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionLocation {
    /// Scope path of a gold hunk (`QuerySet.filter`).
    pub name: String,
    /// First step that showed its definition.
    pub seen: Option<usize>,
    /// The agent's changes to the file reached it; `None` when the agent's diff of the file is
    /// not known (shell writes with no text, a submission without hunks).
    pub edited: Option<bool>,
    /// The first failing FAIL_TO_PASS test named for it (`test_prepend_scheme_if_needed`): the
    /// harness says the tests that exercise this location fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_test: Option<String>,
    /// What its gold hunks' changed lines call (`get_unpacked_marks`): a call site of a
    /// definition the agent changed follows that change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolSet {
    /// Edit kinds the run used (str_replace, windowed_edit, shell_write...).
    pub edit_kinds: Vec<String>,
    /// Whether a linter gate could refuse the run's edits: a linter rejection seen, or the
    /// windowed `edit` (whose linter checks only Python) used on a Python file. Without a gate
    /// there can be no required temporary errors.
    pub gated: bool,
    /// File extensions the gate checks.
    pub gated_extensions: Vec<String>,
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
    /// The agent's own scratch (a reproduction or check script, a patch file, a file it created
    /// at the repository root or outside it, or created and removed): not part of the change.
    pub scratch: bool,
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
    /// A gold change that only adds test names to a collection (a skip list): periphery at most.
    pub plumbing: bool,
    /// Gold source files: the functions and classes its hunks sit in.
    pub functions: Vec<FunctionLocation>,
}

impl ExpectedFile {
    /// A place the fix had to be: with a gold patch, a source file (or a core header) that is not
    /// plumbing; without one, any named file.
    pub fn required(&self) -> bool {
        if !self.why.contains(&ExpectedWhy::Gold) {
            return true;
        }
        let kind = FileKind::of(&self.named);
        !self.plumbing && (kind == FileKind::Source || self.role == Some(Role::Core))
    }
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
    /// Undefined names of a legitimate intermediate state (a definition or import renamed before
    /// its uses; a name used before what defines it is written).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Undefined names the edit itself made so (it removed their definition with nothing in its
    /// place, or its range swallowed the lines that used them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overwritten: Vec<String>,
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
    GitRevert {
        /// The step that undid it (`reset_at`: the edit's own step is the lost edit's `step`).
        #[serde(rename = "reset_at")]
        step: usize,
        checked: bool,
    },
    /// Applied (or written through the shell: `shell`) but absent from the submitted patch.
    NotInPatch { shell: bool },
    /// A shell edit whose pattern or address matched none of the lines the run showed, the
    /// last attempt at the file (`analysis::reconstruct`).
    ChangedNothing,
    /// Written as an editing tool call in the reply of a step that ran nothing, and never
    /// applied by any later edit (`announced`).
    Announced,
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
    /// The name callers used before the change.
    pub identifier: String,
    /// The file whose definition the agent's diff removed, renamed or re-signed.
    pub defined_in: String,
    pub renamed_to: Option<String>,
    pub change: ChangeKind,
    pub qualified: String,
    pub old_signature: Option<String>,
    pub new_signature: Option<String>,
    pub seen_in: Vec<Sighting>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sighting {
    pub path: String,
    pub step: usize,
    /// How the file still uses it: `call`, `import`, `type`, `member`, `name`, `mention`,
    /// `call with N arguments`, `declaration …`.
    pub how: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Periphery {
    pub core: Vec<String>,
    pub core_edited: Vec<String>,
    pub periphery: Vec<PeripheryFile>,
    /// The core's definitions that the periphery follows (renamed, re-signed, added or removed
    /// by the gold patch and named in the periphery's changes).
    #[serde(default)]
    pub central: Vec<String>,
    /// Of those, the ones the agent's own diff changed too: without one, the agent did not make
    /// the gold's central change and a stale periphery is no propagation of it.
    #[serde(default)]
    pub central_edited: Vec<String>,
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
                    scratch: false,
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
pub fn compute(run: &RunInput) -> Signals {
    let steps = &run.steps;
    let gold = run.task.as_ref().and_then(|t| t.gold_patch.as_deref()).filter(|g| !g.trim().is_empty());
    let dirs: HashMap<i64, &str> =
        steps.iter().filter_map(|s| s.working_dir.as_deref().map(|d| (s.index, d))).collect();
    let mut relative: Vec<String> = run.edits.iter().filter(|e| e.step.is_none()).map(|e| e.path.clone()).collect();
    relative.extend(gold.map(crate::analysis::edits::split_patch).unwrap_or_default().into_iter().map(|f| f.path));
    let absolute: Vec<String> = run
        .edits
        .iter()
        .map(|e| match e.step.and_then(|i| dirs.get(&i)) {
            Some(d) if !e.path.starts_with('/') => format!("{}/{}", d.trim_end_matches('/'), e.path),
            _ => e.path.clone(),
        })
        .collect();
    let roots = Roots::learn(
        absolute.iter().map(String::as_str),
        &relative,
        steps.first().and_then(|s| s.working_dir.as_deref()),
    );
    let edits = edits::events(&run.edits, steps, &roots);
    let patch_files: Vec<String> = edits.iter().filter(|e| e.step.is_none()).map(|e| e.path.clone()).collect();
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
            // A shell edit that changed nothing edited nothing; a reversed patch undoes.
            Some(_) if e.changed_nothing || e.undoes() => {}
            Some(step) => {
                // A create, or a whole-file shell write to a file the run had neither opened nor
                // met in search output (a scratch script written with `cat > f <<EOF`). Appending
                // (`cat >>`) adds to a file that is there.
                let unseen = f.first_seen.is_none_or(|s| s >= step) && f.first_searched.is_none_or(|s| s >= step);
                let first = f.edited.is_empty() && f.rejected.is_empty();
                let whole_write =
                    e.kind == crate::model::EditKind::ShellWrite && !e.append && e.via == edits::Via::Shell;
                if first && (e.creates() || (whole_write && unseen)) {
                    f.created = true;
                }
                f.edited.push(step);
            }
        }
    }
    mark_scratch(&mut table, steps, &roots);

    let failing_test_files = propagation::failing_test_files(run, &patch_files);
    let periphery = gold.map(|g| propagation::periphery(g, &table, &patch_files)).filter(|p| !p.core.is_empty());
    let agent_diff = propagation::agent_diff(run, &edits);
    let symbols = propagation::file_symbols(&agent_diff);
    let periphery = periphery.map(|mut p| {
        p.central_edited = propagation::central_edited(&p, &symbols);
        p
    });
    let against_base = run.submission.as_deref().is_some_and(|s| !s.trim().is_empty());
    let agent = AgentDiff { text: &agent_diff, against_base };
    let expected =
        expected_files(run, gold, &table, &failing_test_files, periphery.as_ref(), (&symbols, agent), &shown);
    let miss_ratio = gold.map(|_| {
        let gold_files: Vec<&ExpectedFile> = expected.iter().filter(|e| e.why.contains(&ExpectedWhy::Gold)).collect();
        let missed = gold_files.iter().filter(|e| !e.in_patch).count();
        if gold_files.is_empty() { 0.0 } else { missed as f64 / gold_files.len() as f64 }
    });
    let mut rejections = edits::rejections(&edits);
    if !rejections.is_empty() {
        let observations: HashMap<usize, &str> =
            steps.iter().map(|s| (s.index as usize, s.observation.as_str())).collect();
        let mut diffs: HashMap<(usize, &str), Option<&str>> = HashMap::new();
        for e in &edits {
            if let Some(step) = e.step {
                diffs.entry((step, e.path.as_str())).or_insert(e.diff.as_deref());
            }
        }
        for r in &mut rejections {
            let observation = observations.get(&r.step).copied().unwrap_or("");
            let diff = diffs.get(&(r.step, r.path.as_str())).copied().flatten();
            undefined::read(r, observation, diff);
        }
    }
    let mut lint_codes: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rejections {
        for c in &r.codes {
            *lint_codes.entry(c.clone()).or_default() += 1;
        }
    }
    let reverts = edits::reverts(&edits);
    let submitted = run.submission.is_some() || !patch_files.is_empty();
    let mut lost_edits = edits::lost_edits(&edits, &table.files, &reverts, steps, &patch_files, submitted);
    lost_edits.extend(announced_lost(steps, &roots, &table, &patch_files));
    let exit = ExitCategory::classify(run.exit_status.as_deref(), has_patch);
    let context = context::context(steps, exit);
    let repeats = context::repeats(steps);
    let reopened = context::reopened(&shown, &table);
    let diagnostics = compiler::diagnostics(steps, &roots);
    let stale = propagation::stale_identifiers(&symbols, &shown, &diagnostics, &edits, &patch_files);
    let scratch = |p: &str| table.find(p).is_some_and(|f| f.scratch);
    let loops = loops::loops(steps, &edits, &scratch);
    let tools = tool_set(&edits);
    let first_edit_step =
        edits.iter().filter(|e| e.changed() && !e.undoes() && !scratch(&e.path)).filter_map(|e| e.step).min();
    let task_files_edited = task_files_edited(run, &table, &patch_files);
    let origins = origin::origins(&edits, &table);
    let format_streak = format_streak(&context, exit, steps.len());
    let grading = grading::grading(run, &expected);
    let followers = gold.map(|g| followers::followers(g, &agent_diff, &expected, &table)).unwrap_or_default();
    Signals {
        version: VERSION,
        steps: steps.len(),
        resolved: run.resolved,
        exit_status: run.exit_status.clone(),
        exit,
        tools,
        first_edit_step,
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
        task_files_edited,
        tests: test_results(run),
        symbols,
        loops,
        origins,
        format_streak,
        grading,
        followers,
    }
}

/// On a format exit, the first step of the final streak of unparsed replies: consecutive format
/// errors that end within two steps of the run's end (earlier streaks were recovered from).
fn format_streak(c: &ContextSignals, exit: ExitCategory, steps: usize) -> Option<usize> {
    let last = *c.format_error_steps.last()?;
    if exit != ExitCategory::Format || last + 3 < steps {
        return None;
    }
    let mut first = last;
    for &s in c.format_error_steps.iter().rev().skip(1) {
        if s + 1 != first {
            break;
        }
        first = s;
    }
    Some(first)
}

/// The agent's diff, and whether it is against the base (a submission) rather than its edits'
/// diffs one after another.
#[derive(Clone, Copy)]
struct AgentDiff<'a> {
    text: &'a str,
    against_base: bool,
}

/// Edits written as text and never run, on repository files no edit changed and the patch does
/// not hold.
fn announced_lost(steps: &[Step], roots: &Roots, table: &FileTable, patch_files: &[String]) -> Vec<LostEdit> {
    let mut out: Vec<LostEdit> = Vec::new();
    for a in announced::announced(steps) {
        let wd = steps.iter().find(|s| s.index as usize == a.step).and_then(|s| s.working_dir.as_deref());
        let path = roots.rel(&a.path, wd);
        let changed = table.find(&path).is_some_and(|f| !f.edited.is_empty() || f.in_patch || f.scratch);
        if changed || paths::is_scratch(&path) || patch_files.contains(&path) || out.iter().any(|l| l.path == path) {
            continue;
        }
        out.push(LostEdit { step: a.step, path, why: LostWhy::Announced });
    }
    out
}

/// Scratch files: by name (reproduction and check scripts, patch files), outside the repository
/// (a path left absolute while the run's others are relative), or created by the agent at the
/// repository root or removed after it created them.
fn mark_scratch(table: &mut FileTable, steps: &[Step], roots: &Roots) {
    let any_relative = table.files.iter().any(|f| !f.path.starts_with('/'));
    // Files removed, by step.
    let removed: Vec<(usize, Vec<String>)> = steps
        .iter()
        .map(|s| (s.index as usize, commands::removed(&s.action, s.working_dir.as_deref(), roots)))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    for f in &mut table.files {
        let removed_later =
            removed.iter().any(|(s, r)| f.edited.first().is_some_and(|&first| *s > first) && r.contains(&f.path));
        let root_level = !f.path.contains('/') && FileKind::of(&f.path) != FileKind::Config;
        f.scratch = paths::is_scratch(&f.path)
            || (any_relative && f.path.starts_with('/'))
            || (f.created && (root_level || removed_later));
    }
}

/// The edit kinds used, and which files a linter gate checks.
fn tool_set(edits: &[edits::EditEvent]) -> ToolSet {
    use crate::model::{EditKind, EditStatus};
    let mut edit_kinds: Vec<String> = edits.iter().filter(|e| e.step.is_some()).map(|e| e.kind.to_string()).collect();
    edit_kinds.sort();
    edit_kinds.dedup();
    let ext = |p: &str| p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let mut gated_extensions: Vec<String> =
        edits.iter().filter(|e| e.status == EditStatus::RejectedByLinter).map(|e| ext(&e.path)).collect();
    // SWE-agent's windowed `edit` lints Python files only.
    if edits.iter().any(|e| e.kind == EditKind::WindowedEdit && ext(&e.path) == "py") {
        gated_extensions.push("py".into());
    }
    gated_extensions.sort();
    gated_extensions.dedup();
    ToolSet { edit_kinds, gated: !gated_extensions.is_empty(), gated_extensions }
}

fn test_results(run: &RunInput) -> Option<TestResults> {
    use crate::model::TestGroup;
    let outcome = run.outcome.as_ref()?;
    let mut r = TestResults::default();
    let mut any = false;
    for t in &outcome.tests {
        let c = match t.group {
            Some(TestGroup::FailToPass) => &mut r.fail_to_pass,
            Some(TestGroup::PassToPass) => &mut r.pass_to_pass,
            _ => continue,
        };
        any = true;
        if t.passed { c.passed += 1 } else { c.failed += 1 }
    }
    any.then_some(r)
}

/// Files the task's text names that the agent changed (in its patch, or edited).
fn task_files_edited(run: &RunInput, table: &FileTable, patch_files: &[String]) -> Vec<String> {
    let Some(text) = run.task.as_ref().and_then(|t| t.instruction.as_deref()) else { return Vec::new() };
    let named = paths::mentioned_files(text);
    let changed = table
        .files
        .iter()
        .filter(|f| (f.in_patch || !f.edited.is_empty()) && !f.scratch)
        .map(|f| f.path.as_str())
        .chain(patch_files.iter().map(String::as_str));
    let mut out: Vec<String> =
        changed.filter(|p| named.iter().any(|n| paths::names_file(p, n))).map(str::to_string).collect();
    out.sort();
    out.dedup();
    out
}

/// The files the task needed: the gold patch's, else those the instruction and failing tests
/// name, each matched to what the run did with it.
fn expected_files(
    run: &RunInput,
    gold: Option<&str>,
    table: &FileTable,
    failing: &[TestMention],
    periphery: Option<&Periphery>,
    (agent, agent_diff): (&[FileSymbols], AgentDiff<'_>),
    shown: &[views::Shown<'_>],
) -> Vec<ExpectedFile> {
    let mut named: Vec<(String, ExpectedWhy)> = Vec::new();
    let gold_files = gold.map(crate::analysis::edits::split_patch).unwrap_or_default();
    if gold.is_some() {
        named.extend(gold_files.iter().map(|f| (f.path.clone(), ExpectedWhy::Gold)));
    } else {
        if let Some(text) = run.task.as_ref().and_then(|t| t.instruction.as_deref()) {
            named.extend(paths::mentioned_files(text).into_iter().map(|p| (p, ExpectedWhy::Instruction)));
        }
        named.extend(failing.iter().map(|m| (m.path.clone(), ExpectedWhy::FailingTest)));
    }
    let failing_tests: Vec<&str> = run
        .outcome
        .iter()
        .flat_map(|o| &o.tests)
        .filter(|t| t.group == Some(crate::model::TestGroup::FailToPass) && !t.passed)
        .map(|t| t.name.as_str())
        .collect();
    // The agent's diff by repository path, split once for every gold file.
    let agent_files: Vec<(String, String)> = crate::analysis::edits::split_patch(agent_diff.text)
        .into_iter()
        .map(|f| (paths::repo_relative(&f.path, None), f.diff))
        .collect();
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
            match paths::resolve_named(table.files.iter().map(|f| f.path.as_str()), &name) {
                Some(p) => p,
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
        let gold_diff = gold_files.iter().find(|f| f.path == name).map(|f| f.diff.as_str());
        let plumbing = gold_diff.is_some_and(location::is_plumbing);
        let functions = match gold_diff {
            Some(d) if FileKind::of(&name) == FileKind::Source && !plumbing => {
                let lang = crate::analysis::symbols::Lang::of_path(&name);
                let mut known = location::base_lines(&name, shown, activity.and_then(|f| f.edited.first().copied()));
                let agent_file: String =
                    agent_files.iter().filter(|(p, _)| *p == name).map(|(_, d)| d.as_str()).collect();
                let touched: Vec<Vec<String>> = match lang {
                    Some(lang) if !agent_file.trim().is_empty() => {
                        // A submission is against the base; edits' diffs one after another are not.
                        if agent_diff.against_base {
                            crate::analysis::symbols::scopes::learn(&agent_file, &mut known);
                            crate::analysis::symbols::scopes::learn(d, &mut known);
                        }
                        let views = location::view_texts(&name, shown);
                        location::touched(lang, &agent_file, agent_diff.against_base.then_some(&mut known), &views)
                    }
                    _ => {
                        let sep = lang.map_or(".", |l| l.separator());
                        agent
                            .iter()
                            .filter(|f| f.path == name)
                            .flat_map(|f| f.touched.iter().map(|t| t.split(sep).map(str::to_string).collect()))
                            .collect()
                    }
                };
                let base_diff = if agent_diff.against_base { agent_file.as_str() } else { "" };
                location::gold_functions(&name, d, &touched, base_diff, &mut known, shown, &failing_tests)
            }
            _ => Vec::new(),
        };
        let role = if plumbing { Some(Role::Periphery) } else { role };
        out.push(ExpectedFile {
            plumbing,
            functions,
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
