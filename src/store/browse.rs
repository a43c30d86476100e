//! Reads for the TUI: what one screen needs, no more.

use crate::error::StoreError;
use crate::store::cells::{Cells, named, opt_named};
use crate::store::read::{OutcomeRow, RunSummary, TaskRow};
use crate::store::texts;

/// A run as the run view needs it: its summary, one line per step, the edits without their
/// texts, outcome and task. Step bodies are loaded one at a time ([`StepBody`]).
#[derive(Debug, Clone)]
pub struct RunData {
    pub summary: RunSummary,
    pub steps: Vec<StepLine>,
    pub edits: Vec<EditLine>,
    pub outcome: Option<OutcomeRow>,
    pub task: Option<TaskRow>,
    pub submission: Option<String>,
    /// The latest label of each source and rater (heuristic, LLM, reviewers).
    pub labels: Vec<crate::store::labels::LabelRow>,
    /// Evaluations of the instance the run did not get, each with why.
    pub unjoined: Vec<super::Unjoined>,
    /// Reviewers' notes on its steps, by step.
    pub notes: Vec<super::notes::NoteRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub index: i64,
    pub tool: Option<String>,
    pub flags: crate::model::StepFlags,
    pub obs_chars: i64,
    /// First line of the action, at most 200 characters (raw; sanitized when drawn).
    pub action_head: String,
    /// A step without an action: the first words of its message.
    pub says: Option<String>,
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditLine {
    pub id: i64,
    pub step: Option<i64>,
    pub path: String,
    pub kind: crate::model::EditKind,
    pub status: crate::model::EditStatus,
    pub lint_codes: Vec<String>,
    /// Reconstructed (shell) edits: how sure their diff is.
    pub certainty: Option<crate::model::Certainty>,
    /// The step whose `git checkout`/`restore`/`stash` undid it.
    pub undone_at: Option<i64>,
}

impl StepLine {
    /// A row of [`STEP_LINE`]'s columns.
    pub fn from_row(r: &dyn Cells) -> Result<StepLine, StoreError> {
        Ok(StepLine {
            index: r.int(0)?,
            tool: r.opt_text(1)?,
            flags: crate::model::StepFlags::from_bits(r.int(2)?),
            obs_chars: r.int(3)?,
            action_head: r.text(4)?,
            open_file: r.opt_text(5)?,
            working_dir: r.opt_text(6)?,
            says: r.opt_text(7)?,
        })
    }

    /// The line of step `index` not yet stored (a file being read: `trajan FILE`'s `G`), as it
    /// will read once stored.
    pub fn unstored(index: i64, step: &crate::model::Step) -> StepLine {
        StepLine {
            index,
            tool: step.tool.clone(),
            flags: step.flags,
            obs_chars: step.observation.chars().count() as i64,
            action_head: action_head(&step.action),
            says: says(step),
            open_file: step.open_file.clone(),
            working_dir: step.working_dir.clone(),
        }
    }
}

/// The columns of a [`StepLine`], in the order [`StepLine::from_row`] reads them.
pub const STEP_LINE: &str = "idx, tool, flags, obs_chars, action_head, open_file, working_dir, says";

/// What a step's line shows of its action: its first line that is not a comment (a tool's code
/// that opens with `// Check the file` is named by its code), at most 200 characters.
pub fn action_head(action: &str) -> String {
    let comment = |l: &&str| {
        let t = l.trim_start();
        t.is_empty() || t.starts_with("//") || (t.starts_with('#') && !t.starts_with("#!")) || t.starts_with("--")
    };
    let mut lines = action.trim_start().lines();
    let first = lines.clone().find(|l| !comment(l)).or_else(|| lines.next()).unwrap_or("");
    first.trim_start().chars().take(200).collect()
}

/// Words of a message shown for a step without an action.
const SAYS: usize = 80;

/// What a step without an action says: the first line of its message (its thought, else its
/// reply), at most 80 characters; `None` for a step with an action, or with nothing said.
pub fn says(step: &crate::model::Step) -> Option<String> {
    if !step.action.trim().is_empty() {
        return None;
    }
    let text =
        [Some(step.thought.as_str()), step.response.as_deref()].into_iter().flatten().find(|t| !t.trim().is_empty())?;
    let line = text.trim_start().lines().next().unwrap_or("").trim();
    Some(line.chars().take(SAYS).collect()).filter(|l: &String| !l.is_empty())
}

impl StepBody {
    /// The body of step `index` of run `run_id` not yet stored, as it will read once stored
    /// (its texts within the step view's bound), without its edits (they are stored with it, or
    /// reconstructed when the reading ends).
    pub fn unstored(run_id: i64, index: i64, step: &crate::model::Step) -> StepBody {
        use crate::store::texts::{SHOWN, cut};
        let (thought, c0) = cut(step.thought.clone(), SHOWN);
        let (action, c1) = cut(step.action.clone(), SHOWN);
        let (observation, c2) = cut(step.observation.clone(), SHOWN);
        let row = crate::store::read::StepRow {
            index,
            tool: step.tool.clone(),
            thought,
            action,
            observation,
            response: step.response.clone(),
            args: step.args.as_deref().and_then(|a| serde_json::from_str(a).ok()),
            execution_time: step.execution_time,
            tokens_in: step.tokens_in,
            tokens_out: step.tokens_out,
            timestamp: step.timestamp.clone(),
            open_file: step.open_file.clone(),
            working_dir: step.working_dir.clone(),
            flags: step.flags,
            observation_chars: step.observation.chars().count() as i64,
            cuts: [c0, c1, c2],
        };
        StepBody { run_id, step: row, edits: Vec::new() }
    }
}

/// The columns of an [`EditLine`], in the order [`EditLine::from_row`] reads them.
pub const EDIT_LINE: &str = "id, step_idx, path, kind, status, lint_codes, certainty, undone_at";

impl EditLine {
    /// A row of the [`EDIT_LINE`] columns.
    pub fn from_row(r: &dyn Cells) -> Result<EditLine, StoreError> {
        let codes = r.opt_text(5)?;
        Ok(EditLine {
            id: r.int(0)?,
            step: r.opt_int(1)?,
            path: r.text(2)?,
            kind: named(r, 3, "edit kind")?,
            status: named(r, 4, "edit status")?,
            lint_codes: codes.map(|c| c.split(',').map(str::to_string).collect()).unwrap_or_default(),
            certainty: opt_named(r, 6, "certainty")?,
            undone_at: r.opt_int(7)?,
        })
    }

    /// Rejected by the linter or refused by the tool: not applied.
    pub fn is_rejected(&self) -> bool {
        self.status.is_rejection()
    }

    /// A reconstructed edit that changed nothing (its pattern or address matched no line).
    pub fn changed_nothing(&self) -> bool {
        self.certainty == Some(crate::model::Certainty::Unchanged)
    }
}

/// One step in full, with the edits it made (texts and diffs).
#[derive(Debug, Clone)]
pub struct StepBody {
    pub run_id: i64,
    pub step: crate::store::read::StepRow,
    pub edits: Vec<EditText>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditText {
    pub line: EditLine,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    pub diff: Option<String>,
    /// The shell command that made it.
    pub command: Option<String>,
    pub checked_by: Option<crate::model::CheckedBy>,
    /// Contradicted: what the later view showed, as a diff from the reconstructed lines.
    pub shown: Option<String>,
    /// Final patch: the steps that made each hunk.
    pub hunks: Vec<crate::model::HunkSource>,
    /// The diff shows the lines the run had shown; others may have changed too.
    pub partial: bool,
}

/// The columns of an [`EditText`], in the order [`EditText::from_row`] reads them: an
/// [`EditLine`]'s, then `command, checked_at, partial`, then the texts as the row holds them.
pub const EDIT_TEXT: &str = "id, step_idx, path, kind, status, lint_codes, certainty, undone_at, command, checked_at,
    partial, old_text, new_text, diff, shown, hunks, chunk_id, chunk_at";

impl EditText {
    /// A row of the [`EDIT_TEXT`] columns, and where its texts are (read by [`EditText::filled`]).
    pub fn from_row(r: &dyn Cells) -> Result<(EditText, texts::EditPlace), StoreError> {
        let edit = EditText {
            line: EditLine::from_row(r)?,
            old_text: None,
            new_text: None,
            diff: None,
            command: r.opt_text(8)?,
            checked_by: r.opt_int(9)?.map(crate::model::CheckedBy::from_column),
            shown: None,
            hunks: Vec::new(),
            partial: r.opt_int(10)?.is_some_and(|p| p != 0),
        };
        Ok((edit, texts::edit_place(r, 11)?))
    }

    /// The edit with its texts, decompressed from its chunk if it has one.
    pub fn filled(
        mut self,
        place: texts::EditPlace,
        cache: &mut texts::ChunkCache,
        chunks: &dyn texts::Chunks,
    ) -> Result<EditText, StoreError> {
        let t = cache.edit(chunks, place)?;
        self.old_text = t.old_text;
        self.new_text = t.new_text;
        self.diff = t.diff;
        self.shown = t.shown;
        self.hunks = t.hunks.and_then(|h| serde_json::from_str(&h).ok()).unwrap_or_default();
        Ok(self)
    }
}

impl From<EditText> for crate::store::read::EditRow {
    fn from(e: EditText) -> crate::store::read::EditRow {
        crate::store::read::EditRow {
            step: e.line.step,
            path: e.line.path,
            kind: e.line.kind,
            status: e.line.status,
            lint_codes: e.line.lint_codes,
            diff: e.diff,
            certainty: e.line.certainty,
            command: e.command,
            checked_by: e.checked_by,
            shown: e.shown,
            undone_at: e.line.undone_at,
            hunks: e.hunks,
            partial: e.partial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_head_skips_comments_and_a_message_only_step_says_its_first_words() {
        assert_eq!(action_head("  ls -la\ncat x"), "ls -la");
        assert_eq!(action_head("// Check the file\nconst x = read('a');"), "const x = read('a');");
        assert_eq!(action_head("# look first\n\ngrep -n f a.py"), "grep -n f a.py");
        assert_eq!(action_head("#!/bin/bash\necho"), "#!/bin/bash");
        assert_eq!(action_head("// only a comment"), "// only a comment");
        let step = |action: &str, thought: &str| crate::model::Step {
            action: action.into(),
            thought: thought.into(),
            ..crate::model::Step::default()
        };
        assert_eq!(
            says(&step("", "\n  Line 2 has no IPv4 address.\nMore.")).as_deref(),
            Some("Line 2 has no IPv4 address.")
        );
        assert_eq!(says(&step("ls", "Looking.")), None, "a step with an action says what it does");
        assert_eq!(says(&step("", "  ")), None);
        assert_eq!(says(&step("", &"w".repeat(300))).map(|s| s.chars().count()), Some(SAYS));
    }
}
