//! Steps of the session formats (OpenHands V1, Codex CLI, Claude Code, OpenClaw, aider,
//! Terminal-Bench): built one at a time with the flags every adapter sets the same way (an error
//! from the exit code, or from the output when there is none; test runs; clipped output), each
//! step's edits attached to it, and how it ran kept for the reconstruction of shell edits.

use crate::analysis::markers;
use crate::analysis::reconstruct::{Exec, reconstruct};
use crate::model::{Edit, EditStatus, Run, Step};

#[derive(Debug, Default)]
pub struct Turns {
    pub steps: Vec<Step>,
    pub edits: Vec<Edit>,
    exec: Vec<Exec>,
}

impl Turns {
    /// A shell command's step (its `action` the command): an error when the exit code is not 0,
    /// or, with none, when the output reads as one. Its shell writes are reconstructed.
    pub fn shell(&mut self, mut step: Step, exit_code: Option<i64>) -> usize {
        step.flags.error = match exit_code {
            Some(code) => code != 0,
            None => markers::looks_like_error(&step.observation),
        };
        step.flags.test_run = markers::runs_tests(&step.action);
        let status = if exit_code == Some(0) { EditStatus::Applied } else { EditStatus::Unknown };
        self.push(step, Exec::Shell(status))
    }

    /// Keystrokes typed into a terminal whose observation is the screen (Terminal-Bench).
    pub fn terminal(&mut self, mut step: Step) -> usize {
        step.flags.test_run = markers::runs_tests(&step.action);
        self.push(step, Exec::Terminal(EditStatus::Unknown))
    }

    /// A tool call that is not a shell (an editor, a search, a plan): `error` as the tool said,
    /// or, unknown, as its output reads.
    pub fn tool(&mut self, mut step: Step, error: Option<bool>) -> usize {
        step.flags.error = error.unwrap_or_else(|| markers::looks_like_error(&step.observation));
        self.push(step, Exec::Tool)
    }

    /// A step that ran nothing: a reply, a stage of a pipeline.
    pub fn plain(&mut self, step: Step) -> usize {
        self.push(step, Exec::Tool)
    }

    fn push(&mut self, mut step: Step, how: Exec) -> usize {
        step.flags.output_clipped |= markers::output_clipped(&step.observation);
        self.steps.push(step);
        self.exec.push(how);
        self.steps.len() - 1
    }

    /// An edit made by step `idx` (its `step` is set to it).
    pub fn edit(&mut self, idx: usize, mut edit: Edit) {
        if let Some(step) = self.steps.get_mut(idx) {
            step.flags.edit = true;
            step.flags.edit_rejected |= edit.status.is_rejection();
        }
        edit.step = Some(idx);
        self.edits.push(edit);
    }

    /// The last step, to add what came after it (a late result, an error).
    pub fn last_mut(&mut self) -> Option<&mut Step> {
        self.steps.last_mut()
    }

    /// Move the steps and edits into `run` (after its final patch's edits, if any) and
    /// reconstruct its shell edits.
    pub fn into_run(self, run: &mut Run) {
        run.steps = self.steps;
        let finals = std::mem::take(&mut run.edits);
        run.edits = self.edits;
        run.edits.extend(finals);
        reconstruct(run, &self.exec);
    }
}

/// The sum of two counts either of which may be unknown (unknown only when both are). Token
/// counts saturate at `i64::MAX` rather than wrap; a cost summed past any number is infinite,
/// which the store refuses (`store::write::kept_cost`).
pub fn add<T: Plus>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.plus(y)),
        (x, y) => x.or(y),
    }
}

/// Addition that never wraps.
pub trait Plus {
    fn plus(self, other: Self) -> Self;
}

impl Plus for i64 {
    fn plus(self, other: i64) -> i64 {
        self.saturating_add(other)
    }
}

impl Plus for f64 {
    fn plus(self, other: f64) -> f64 {
        self + other
    }
}

/// Tool calls in the order they were made, each waiting for its result, read one record at a
/// time: a call and every call before it are handed out once answered, so steps keep the order
/// of the calls though records are not held (replies need no answer and wait only for the calls
/// before them).
pub struct Queue<C, R> {
    slots: std::collections::VecDeque<Slot<C, R>>,
}

struct Slot<C, R> {
    id: Option<String>,
    call: C,
    result: Option<R>,
}

impl<C, R> Default for Queue<C, R> {
    fn default() -> Self {
        Queue { slots: std::collections::VecDeque::new() }
    }
}

impl<C, R> Queue<C, R> {
    /// A call waiting for the result named `id`.
    pub fn wait(&mut self, id: String, call: C) {
        self.slots.push_back(Slot { id: Some(id), call, result: None });
    }

    /// An item that needs no result (a reply).
    pub fn now(&mut self, call: C) {
        self.slots.push_back(Slot { id: None, call, result: None });
    }

    /// The result of the call `id`; given back when no call waits for it.
    pub fn answer(&mut self, id: &str, result: R) -> Result<(), R> {
        match self.slots.iter_mut().find(|s| s.result.is_none() && s.id.as_deref() == Some(id)) {
            Some(slot) => {
                slot.result = Some(result);
                slot.id = None;
                Ok(())
            }
            None => Err(result),
        }
    }

    /// The calls at the front that are answered (or need no answer), in order.
    pub fn ready(&mut self) -> Vec<(C, Option<R>)> {
        let mut out = Vec::new();
        while self.slots.front().is_some_and(|s| s.id.is_none()) {
            if let Some(s) = self.slots.pop_front() {
                out.push((s.call, s.result));
            }
        }
        out
    }

    /// Every call left, answered or not, in order.
    pub fn drain(&mut self) -> Vec<(C, Option<R>)> {
        self.slots.drain(..).map(|s| (s.call, s.result)).collect()
    }
}
