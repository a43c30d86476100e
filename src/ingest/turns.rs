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

    /// A tool call read from its JSON arguments (Claude Code, OpenClaw, Codex, Rovo Dev): a
    /// shell step when it ran a shell (`Ran::Shell`), a tool step otherwise, with the edits its
    /// arguments make (`analysis::tool_edits::call_edits`: a file and its content, old and new
    /// strings, a patch...) attached as `status` says.
    pub fn call(&mut self, step: Step, ran: Ran, args: &serde_json::Value, status: EditStatus) -> usize {
        let name = step.tool.clone().unwrap_or_default();
        let idx = match ran {
            Ran::Shell(code) => self.shell(step, code),
            Ran::Tool(error) => self.tool(step, error),
        };
        for edit in crate::analysis::tool_edits::call_edits(idx, &name, args, status) {
            self.edit(idx, edit);
        }
        idx
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

/// How a tool call ran: a shell with its exit code, or another tool with the error it said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    Shell(Option<i64>),
    Tool(Option<bool>),
}

/// What became of a call's edits when the tool says whether it failed: refused when it did,
/// applied when it answered, unknown when it never did.
pub fn said_status(error: Option<bool>, answered: bool) -> EditStatus {
    match (error, answered) {
        (Some(true), _) => EditStatus::RefusedByTool,
        (_, true) => EditStatus::Applied,
        _ => EditStatus::Unknown,
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
/// before them). A result finds its call by id in constant time, however many calls wait
/// behind one never answered (a crashed session).
pub struct Queue<C, R> {
    slots: std::collections::VecDeque<Slot<C, R>>,
    waiting: Waiting,
}

struct Slot<C, R> {
    waits: bool,
    call: C,
    result: Option<R>,
}

impl<C, R> Default for Queue<C, R> {
    fn default() -> Self {
        Queue { slots: std::collections::VecDeque::new(), waiting: Waiting::default() }
    }
}

impl<C, R> Queue<C, R> {
    /// A call waiting for the result named `id`.
    pub fn wait(&mut self, id: String, call: C) {
        self.waiting.add(id, self.waiting.first + self.slots.len() as u64);
        self.slots.push_back(Slot { waits: true, call, result: None });
    }

    /// An item that needs no result (a reply).
    pub fn now(&mut self, call: C) {
        self.slots.push_back(Slot { waits: false, call, result: None });
    }

    /// The result of the call `id` (the first made under that id that waits); given back when
    /// no call waits for it.
    pub fn answer(&mut self, id: &str, result: R) -> Result<(), R> {
        let slot = self.waiting.take(id).and_then(|at| self.slots.get_mut(self.waiting.offset(at)?));
        match slot {
            Some(slot) => {
                slot.result = Some(result);
                slot.waits = false;
                Ok(())
            }
            None => Err(result),
        }
    }

    /// The calls at the front that are answered (or need no answer), in order.
    pub fn ready(&mut self) -> Vec<(C, Option<R>)> {
        let mut out = Vec::new();
        while self.slots.front().is_some_and(|s| !s.waits) {
            if let Some(s) = self.slots.pop_front() {
                self.waiting.first += 1;
                out.push((s.call, s.result));
            }
        }
        out
    }

    /// Every call left, answered or not, in order.
    pub fn drain(&mut self) -> Vec<(C, Option<R>)> {
        self.waiting = Waiting { first: self.waiting.first + self.slots.len() as u64, ..Waiting::default() };
        self.slots.drain(..).map(|s| (s.call, s.result)).collect()
    }
}

/// Calls not yet answered, by id: each id's calls by their number in the order they were made
/// (several calls may share an id; the first made is answered first).
#[derive(Default)]
struct Waiting {
    by_id: std::collections::HashMap<String, std::collections::VecDeque<u64>>,
    /// The number of the first call still held (a [`Queue`]'s front).
    first: u64,
}

impl Waiting {
    fn add(&mut self, id: String, at: u64) {
        self.by_id.entry(id).or_default().push_back(at);
    }

    /// The first call waiting under `id`, no longer waiting.
    fn take(&mut self, id: &str) -> Option<u64> {
        let calls = self.by_id.get_mut(id)?;
        let at = calls.pop_front();
        if calls.is_empty() {
            self.by_id.remove(id);
        }
        at
    }

    /// Where the call numbered `at` is among those held.
    fn offset(&self, at: u64) -> Option<usize> {
        usize::try_from(at.checked_sub(self.first)?).ok()
    }
}

/// Tool calls made and not yet answered, in the order they were made, each taken out by its id
/// when its result comes (in any order) in logarithmic time; those never answered are taken
/// all at once, in order.
pub struct Pending<C> {
    calls: std::collections::BTreeMap<u64, C>,
    waiting: Waiting,
    /// The number the next call is given.
    next: u64,
}

impl<C> Default for Pending<C> {
    fn default() -> Self {
        Pending { calls: std::collections::BTreeMap::new(), waiting: Waiting::default(), next: 0 }
    }
}

impl<C> Pending<C> {
    /// A call made under `id`.
    pub fn push(&mut self, id: String, call: C) {
        self.waiting.add(id, self.next);
        self.calls.insert(self.next, call);
        self.next += 1;
    }

    /// The first call made under `id` that is still pending.
    pub fn take(&mut self, id: &str) -> Option<C> {
        let at = self.waiting.take(id)?;
        self.calls.remove(&at)
    }

    /// Every call still pending, in the order they were made.
    pub fn drain(&mut self) -> Vec<C> {
        self.waiting.by_id.clear();
        std::mem::take(&mut self.calls).into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: a call never answered at the front, then 200,000 calls each answered at once.
    /// Every answer once looked at every call behind the lost one (2 x 10^10 comparisons, hours
    /// in a test build); by id it is one look-up each. The order and pairs are unchanged.
    #[test]
    fn answers_behind_a_call_never_answered_find_their_call_by_id() {
        const N: u32 = 200_000;
        let mut q: Queue<u32, u32> = Queue::default();
        q.wait("lost".into(), 0);
        for i in 1..=N {
            q.wait(format!("call-{i}"), i);
            assert_eq!(q.answer(&format!("call-{i}"), i * 10), Ok(()));
            assert!(q.ready().is_empty(), "the lost call holds every call behind it");
        }
        assert_eq!(q.answer("nobody", 7), Err(7), "a result of no call is given back");
        let all = q.drain();
        assert_eq!(all.len(), N as usize + 1);
        assert_eq!(all[0], (0, None));
        assert!(all.iter().skip(1).all(|(c, r)| *r == Some(c * 10)), "each call kept its own answer");
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "in the order the calls were made");
    }

    #[test]
    fn calls_sharing_an_id_are_answered_in_the_order_they_were_made() {
        let mut q: Queue<&str, &str> = Queue::default();
        q.wait("a".into(), "first a");
        q.now("reply");
        q.wait("a".into(), "second a");
        q.wait("b".into(), "b");
        assert_eq!(q.answer("b", "result b"), Ok(()));
        assert!(q.ready().is_empty());
        assert_eq!(q.answer("a", "result 1"), Ok(()));
        assert_eq!(q.ready(), [("first a", Some("result 1")), ("reply", None)]);
        assert_eq!(q.answer("a", "result 2"), Ok(()));
        assert_eq!(q.ready(), [("second a", Some("result 2")), ("b", Some("result b"))]);
        assert_eq!(q.answer("a", "late"), Err("late"));
        q.wait("c".into(), "c");
        assert_eq!(q.answer("c", "result c"), Ok(()), "numbers go on after calls were handed out");
        assert_eq!(q.drain(), [("c", Some("result c"))]);
        q.wait("d".into(), "d");
        assert_eq!(q.answer("d", "result d"), Ok(()), "and after a drain");
        assert_eq!(q.ready(), [("d", Some("result d"))]);
    }

    /// Pending calls taken by id in any order: the last made first, 200,000 of them behind one
    /// never answered (a search from the front made it 2 x 10^10 comparisons).
    #[test]
    fn pending_calls_are_taken_by_id_in_any_order() {
        const N: u32 = 200_000;
        let mut p: Pending<u32> = Pending::default();
        p.push("lost".into(), 0);
        for i in 1..=N {
            p.push(format!("call-{i}"), i);
        }
        for i in (1..=N).rev() {
            assert_eq!(p.take(&format!("call-{i}")), Some(i));
        }
        assert_eq!(p.take("call-1"), None, "taken once");
        p.push("x".into(), 1);
        p.push("x".into(), 2);
        assert_eq!(p.take("x"), Some(1), "the first made under an id first");
        assert_eq!(p.drain(), [0, 2]);
        assert!(p.drain().is_empty());
    }
}
