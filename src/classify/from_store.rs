//! The one place the classifier's input meets the store: a run read in full
//! ([`crate::store::read::RunDetail`]) becomes a [`RunInput`], keeping what the signals, the
//! rules and the prompt read and nothing else.

use super::input::{Edit, Outcome, RunInput, Step, Task};
use crate::error::StoreError;
use crate::store::Store;
use crate::store::read::{EditRow, RunDetail, StepRow};

/// Run `run_id` read in full, as the classifier reads it.
pub fn run_input(store: &Store, run_id: i64) -> Result<RunInput, StoreError> {
    Ok(store.run_detail(run_id, None)?.into())
}

impl From<RunDetail> for RunInput {
    fn from(d: RunDetail) -> RunInput {
        let s = d.summary;
        RunInput {
            id: s.id,
            instance_id: s.instance_id,
            format: s.format,
            agent: s.agent,
            model: s.model,
            exit_status: s.exit_status,
            resolved: s.resolved,
            submission: d.submission,
            outcome: d.outcome.map(|o| Outcome { tests: o.tests }),
            task: d.task.map(|t| Task { instruction: t.instruction, gold_patch: t.gold_patch }),
            edits: d.edit_list.into_iter().map(Edit::from).collect(),
            steps: d.step_list.into_iter().map(Step::from).collect(),
        }
    }
}

impl From<StepRow> for Step {
    fn from(s: StepRow) -> Step {
        Step {
            index: s.index,
            thought: s.thought,
            response: s.response,
            action: s.action,
            args: s.args,
            observation: s.observation,
            observation_chars: s.observation_chars,
            open_file: s.open_file,
            working_dir: s.working_dir,
            flags: s.flags,
        }
    }
}

impl From<EditRow> for Edit {
    fn from(e: EditRow) -> Edit {
        Edit {
            step: e.step,
            path: e.path,
            kind: e.kind,
            status: e.status,
            lint_codes: e.lint_codes,
            diff: e.diff,
            certainty: e.certainty,
            command: e.command,
            undone_at: e.undone_at,
        }
    }
}
