//! What the classifier reads of a run: the signals, the rules and the LLM prompt take a
//! [`RunInput`], the classifier's own type, holding exactly what they read. It is made from the
//! store's rows in one place (`classify::from_store`), so nothing pure here depends on how the
//! store reads a run.

use crate::model::{Certainty, EditKind, EditStatus, Format, StepFlags, TestCase};

/// One run as the classifier sees it.
#[derive(Debug, Clone)]
pub struct RunInput {
    pub id: i64,
    pub instance_id: String,
    pub format: Format,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub exit_status: Option<String>,
    /// true / false from the joined test outcome; `None` when no outcome is known.
    pub resolved: Option<bool>,
    /// The patch the run submitted, as it submitted it.
    pub submission: Option<String>,
    /// The joined evaluation, when there is one.
    pub outcome: Option<Outcome>,
    /// The task, when the database knows it.
    pub task: Option<Task>,
    /// The run's edits in step order, the final patch's last.
    pub edits: Vec<Edit>,
    pub steps: Vec<Step>,
}

/// The joined evaluation: its tests (none when it reports only a verdict).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub tests: Vec<TestCase>,
}

/// The task's statement and gold patch, either of which may be unknown.
#[derive(Debug, Clone, Default)]
pub struct Task {
    pub instruction: Option<String>,
    pub gold_patch: Option<String>,
}

/// One step: what the agent thought, did and saw.
#[derive(Debug, Clone)]
pub struct Step {
    pub index: i64,
    pub thought: String,
    /// The model's whole reply, when the format keeps it apart from the thought.
    pub response: Option<String>,
    pub action: String,
    /// The tool call's arguments.
    pub args: Option<serde_json::Value>,
    pub observation: String,
    /// The observation's length as stored (the text may be cut).
    pub observation_chars: i64,
    /// The file the agent's editor had open (SWE-agent).
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
    pub flags: StepFlags,
}

/// One edit: a tool's, a reconstructed shell edit, or the final patch's (no step).
#[derive(Debug, Clone)]
pub struct Edit {
    pub step: Option<i64>,
    pub path: String,
    pub kind: EditKind,
    pub status: EditStatus,
    pub lint_codes: Vec<String>,
    pub diff: Option<String>,
    /// Reconstructed (shell) edits: how sure the diff is.
    pub certainty: Option<Certainty>,
    /// The shell command that made it.
    pub command: Option<String>,
    /// The step whose `git checkout`/`restore`/`stash` undid it.
    pub undone_at: Option<i64>,
}

impl Edit {
    /// A reconstructed edit that changed nothing (its pattern or address matched no line).
    pub fn changed_nothing(&self) -> bool {
        self.certainty == Some(Certainty::Unchanged)
    }
}

#[cfg(test)]
impl Step {
    /// A step with these texts and nothing else, run in `/testbed` (for tests).
    pub fn sample(index: i64, action: &str, observation: &str) -> Step {
        Step {
            index,
            thought: String::new(),
            response: None,
            action: action.into(),
            args: None,
            observation: observation.into(),
            observation_chars: observation.chars().count() as i64,
            open_file: None,
            working_dir: Some("/testbed".into()),
            flags: StepFlags::default(),
        }
    }
}
