//! What a write of a source is made of, whatever the backend: the source's identity, the
//! counts a write reports, an open write's state, a source written while it is read.

use crate::model::Edit;
use std::collections::{BTreeSet, HashMap};

/// The name a run's format is stored under. A run without a format is refused: its row could
/// not be read back (a stored format this trajan does not know is an error, not a default).
pub fn run_format(run: &crate::model::Run) -> Result<&'static str, crate::error::StoreError> {
    run.format.map(crate::model::Format::name).ok_or_else(|| {
        crate::error::StoreError::Invalid(format!("run {:?} has no format: not written", run.instance_id))
    })
}

/// The hash of a source still being written (`trajan PATH`): no file's.
pub const UNFINISHED: [u8; 32] = [0; 32];

/// What identifies a source and its content.
pub struct SourceRecord<'a> {
    pub path: &'a str,
    pub kind: &'a str,
    pub format: &'a str,
    pub size: u64,
    pub hash: &'a [u8; 32],
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteStats {
    pub runs: usize,
    pub steps: usize,
    pub outcomes: usize,
    pub predictions: usize,
    /// Tasks with a gold patch or test lists (dataset tasks; not the task statements every
    /// trajectory carries).
    pub tasks: usize,
    /// True when the source existed before and was replaced.
    pub replaced: bool,
}

/// An open write of one source (see [`crate::store::backend::Writes::begin_source`]).
#[derive(Debug, Default)]
pub struct SourceWrite {
    pub(super) source_id: i64,
    /// The source's path (what writers of one file take turns on).
    pub(super) path: String,
    /// The file's hash, recorded when the write ends (`commit_part` leaves a placeholder until
    /// then).
    pub(super) hash: Vec<u8>,
    pub(super) instances: BTreeSet<String>,
    /// The runs of the source before this write, by (position, instance, attempt): a run keeps
    /// its id across a replace when it is the same run.
    pub(super) old_ids: HashMap<RunKey, i64>,
    /// The id the next new run gets (SQLite, once it has given one; PostgreSQL takes ids from a
    /// sequence).
    pub(super) next_run_id: i64,
    pub(super) warnings: Vec<String>,
    pub(super) stats: WriteStats,
}

/// What makes two runs of one source the same run: its place in the source, its instance and
/// its RetryAgent attempt.
pub type RunKey = (i64, String, Option<i64>);

/// The key of a run.
pub fn run_key(run: &crate::model::Run) -> RunKey {
    (run.position, run.instance_id.clone(), run.attempt)
}

/// What a run's rows hold beside its own row, or a part of them: its history, its steps from
/// the `first`th on, and edits.
pub struct StepsOf<'a> {
    pub run_id: i64,
    pub first: usize,
    pub steps: &'a [crate::model::Step],
    pub edits: &'a [Edit],
    pub history: &'a [crate::model::Message],
}

impl<'a> StepsOf<'a> {
    /// Everything of a run.
    pub fn run(run_id: i64, run: &'a crate::model::Run) -> StepsOf<'a> {
        StepsOf { run_id, first: 0, steps: &run.steps, edits: &run.edits, history: &run.history }
    }

    /// Nothing of run `run_id` yet: the parts are set on it.
    pub fn none(run_id: i64) -> StepsOf<'a> {
        StepsOf { run_id, first: 0, steps: &[], edits: &[], history: &[] }
    }
}

/// The counts a run row keeps of its steps and edits.
#[derive(Debug, Default, Clone, Copy)]
pub struct RunCounts {
    pub steps: usize,
    /// Edits made by steps (not the final patch's).
    pub edits: usize,
    pub rejected: usize,
}

impl RunCounts {
    pub fn of(steps: usize, edits: &[Edit]) -> RunCounts {
        RunCounts {
            steps,
            edits: edits.iter().filter(|e| e.step.is_some()).count(),
            rejected: edits.iter().filter(|e| e.status.is_rejection()).count(),
        }
    }

    pub fn add(&mut self, other: RunCounts) {
        self.steps += other.steps;
        self.edits += other.edits;
        self.rejected += other.rejected;
    }
}

/// A task's FAIL_TO_PASS / PASS_TO_PASS list as stored (JSON), or nothing for an empty one.
pub fn json_list(items: &[String]) -> Option<String> {
    (!items.is_empty()).then(|| serde_json::Value::from(items.to_vec()).to_string())
}

/// The message hash of content-addressed storage (`blobs`): 16 bytes of blake3 over the role,
/// content and extra, each with its length.
pub fn message_hash(m: &crate::model::Message) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    for part in [m.role.as_str(), m.content.as_str(), m.extra.as_deref().unwrap_or("")] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let mut hash = [0u8; 16];
    hash.copy_from_slice(&h.finalize().as_bytes()[..16]);
    hash
}

/// A source being written while it is read (see `LiveWrites`).
#[derive(Debug)]
pub struct LiveWrite {
    pub(super) w: SourceWrite,
    pub(super) runs: Vec<LiveRun>,
    /// A transaction is open.
    pub(super) open: bool,
}

#[derive(Debug)]
pub(super) struct LiveRun {
    pub(super) id: i64,
    pub(super) counts: RunCounts,
    /// Steps whose counts the run row does not show yet.
    pub(super) changed: bool,
}

impl LiveWrite {
    /// The ids of the runs begun, in order.
    pub fn run_ids(&self) -> Vec<i64> {
        self.runs.iter().map(|r| r.id).collect()
    }

    /// The source had been stored before (this write replaces it).
    pub fn replaces(&self) -> bool {
        self.w.stats.replaced
    }

    /// Steps written (committed or not) of each run begun.
    pub fn steps(&self) -> Vec<usize> {
        self.runs.iter().map(|r| r.counts.steps).collect()
    }

    /// The document's end describes the runs begun, one for one.
    pub(super) fn check_ending(&self, ending: &crate::model::Parsed) -> Result<(), crate::error::StoreError> {
        if ending.runs.len() == self.runs.len() {
            return Ok(());
        }
        Err(crate::error::StoreError::Inconsistent(format!(
            "{} runs began but the document's end describes {}",
            self.runs.len(),
            ending.runs.len()
        )))
    }

    /// The steps whose flags change at the end of a read: (run id, step, flags to set, or flags
    /// to add): the `fixups` (run, step, flags) as given, then the `edit` flag of `edited[run]`.
    pub(super) fn flag_changes(
        &self,
        fixups: &[(usize, usize, crate::model::StepFlags)],
        edited: &[Vec<usize>],
    ) -> Vec<(i64, i64, FlagChange)> {
        let edit = crate::model::StepFlags { edit: true, ..crate::model::StepFlags::default() }.bits();
        let set = fixups.iter().filter_map(|&(run, step, flags)| {
            Some((self.runs.get(run)?.id, step as i64, FlagChange::Set(flags.bits())))
        });
        let add = self
            .runs
            .iter()
            .zip(edited)
            .flat_map(|(live, steps)| steps.iter().map(move |&s| (live.id, s as i64, FlagChange::Add(edit))));
        set.chain(add).collect()
    }
}

/// How a step's flags change at the end of a read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum FlagChange {
    Set(i64),
    Add(i64),
}

/// Text of reconstructed edits written together at the end of a read (`live_finish`): their
/// texts compress together, and memory stays bounded by a batch.
pub const EDIT_BATCH_BYTES: usize = 4 << 20;

/// The long texts an edit holds in memory.
pub fn text_bytes(e: &Edit) -> usize {
    [&e.diff, &e.old_text, &e.new_text, &e.trace.shown].iter().map(|t| t.as_ref().map_or(0, String::len)).sum()
}

/// The end of a read's edits in batches of about [`EDIT_BATCH_BYTES`] of text, each edit
/// completed by `fill` just before its batch is written by `write` and its texts dropped after.
pub fn in_edit_batches(
    edits: &mut [Edit],
    fill: &mut dyn FnMut(usize, &mut Edit) -> Result<(), crate::error::StoreError>,
    write: &mut dyn FnMut(&[Edit]) -> Result<(), crate::error::StoreError>,
) -> Result<(), crate::error::StoreError> {
    let mut start = 0;
    while start < edits.len() {
        let (mut end, mut bytes) = (start, 0);
        while end < edits.len() && (end == start || bytes < EDIT_BATCH_BYTES) {
            fill(end, &mut edits[end])?;
            bytes += text_bytes(&edits[end]);
            end += 1;
        }
        write(&edits[start..end])?;
        for e in &mut edits[start..end] {
            (e.diff, e.old_text, e.new_text, e.trace.shown) = (None, None, None, None);
        }
        start = end;
    }
    Ok(())
}
