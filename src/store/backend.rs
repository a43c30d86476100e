//! The store's interface: what the rest of the program may ask of a database, typed in and typed
//! out. No SQL, row or transaction crosses it. `Reads`, `Browse`, `Exports`, `Labels` and `Notes`
//! are implemented once for both backends (`store::sql`, over its `Sql` trait); each backend
//! (`sqlite`, `pg`) implements the others with its own SQL, and [`crate::store::Store`] hands calls
//! to the one it opened.
//! What both backends compute alike (the runs to classify) is a provided method.

use super::browse::{EditLine, RunData, StepBody, StepLine};
use super::copy::{Table, Value};
use super::export::{EditTableRow, RunRest, StepTableRow};
use super::labels::{CachedReply, Classified, ClassifyErrorRow, LabelKey, LabelRow, LabelSet, NewLabel};
use super::notes::NoteRow;
use super::read::{RunDetail, RunFilter, RunRow, RunSummary, SearchHit};
use super::unmatched::{Joined, Orphan};
use super::write::{LiveWrite, SourceRecord, SourceWrite, WriteStats};
use crate::error::StoreError;
use crate::label::{Label, Source};
use crate::model::{Edit, FailedScope, Message, Parsed, Run, Step, StepFlags};
use std::collections::HashMap;

/// KiB of database pages a connection keeps in memory unless told otherwise
/// ([`LiveWrites::limit_cache`]).
pub const CACHE_KIB: i64 = 128_000;

/// Every part of the interface: what a backend is.
pub trait Backend:
    Admin + Writes + LiveWrites + Reads + Browse + Search + Labels + Notes + Exports + Tables + Send
{
}

impl<T: Admin + Writes + LiveWrites + Reads + Browse + Search + Labels + Notes + Exports + Tables + Send> Backend
    for T
{
}

/// The database as a whole.
pub trait Admin {
    /// Whether this store was opened to read only.
    fn is_read_only(&self) -> bool;

    /// The store to write with: this one, or for a store opened read-only, a store on the same
    /// database opened to write the first time it is asked for (the TUI reads read-only and
    /// writes only when the reviewer saves a label). Its error says why it cannot be written.
    fn writer(&self) -> Result<&dyn Backend, StoreError>;

    /// The number of migrations applied.
    fn schema_version(&self) -> Result<i64, StoreError>;

    /// "ok" when the database is sound (SQLite's `PRAGMA integrity_check`).
    fn integrity_check(&self) -> Result<String, StoreError>;

    /// Fold a write-ahead log into the main file (before measuring its size); nothing where
    /// there is none.
    fn checkpoint(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Bytes the database takes (SQLite: its pages; PostgreSQL: `pg_database_size`).
    fn stored_bytes(&self) -> Result<u64, StoreError>;

    /// Where the database is, for messages: a file's path, or a server's URL without its
    /// password.
    fn location(&self) -> String;

    /// The database user the store logs in as (PostgreSQL, when its URL names one): who labels
    /// when nothing else says (`cli::settings::rater`). `None` for a file.
    fn login(&self) -> Option<String> {
        None
    }
}

/// Writing sources: one unit at a time, or a batch of units in one transaction.
pub trait Writes {
    /// Every source path with its hash, to tell unchanged files before reading them further.
    fn source_hashes(&self) -> Result<HashMap<String, Vec<u8>>, StoreError>;

    /// Problems recorded when a source was ingested (bad JSONL lines, replaced invalid UTF-8).
    fn source_warnings(&self, path: &str) -> Result<Vec<String>, StoreError>;

    /// The size and hash a source was stored with, if it was.
    fn source_fingerprint(&self, path: &str) -> Result<Option<(u64, Vec<u8>)>, StoreError>;

    /// Write (or replace) one source atomically. On error nothing of it is kept.
    fn write_source(&mut self, src: &SourceRecord<'_>, parsed: &Parsed) -> Result<WriteStats, StoreError> {
        let mut w = self.begin_source(src)?;
        if let Err(e) = self.append(&mut w, parsed) {
            self.rollback_source();
            return Err(e);
        }
        self.commit_source(w)
    }

    /// Start writing a source: one transaction until [`Writes::commit_source`] or
    /// [`Writes::rollback_source`]. A source seen before has its old contents removed inside
    /// the transaction, so readers see either the old or the new version. Inside a batch
    /// ([`Writes::begin_batch`]) the source is a savepoint of the batch's transaction instead.
    fn begin_source(&mut self, src: &SourceRecord<'_>) -> Result<SourceWrite, StoreError>;

    /// Add parsed content to an open source write. On error the caller rolls back.
    fn append(&mut self, w: &mut SourceWrite, parsed: &Parsed) -> Result<(), StoreError>;

    /// Join the touched instances, record the warnings, commit.
    fn commit_source(&mut self, w: SourceWrite) -> Result<WriteStats, StoreError>;

    /// Commit what a source write (not in a batch) holds so far and go on in a new transaction:
    /// a streamed file of a gigabyte is written in parts, each seen by other readers once
    /// committed. Until [`Writes::commit_source`] the source's hash is a placeholder, so a write
    /// that never ends is redone by the next ingest; one that fails is removed whole by
    /// [`Writes::rollback_source`].
    fn commit_part(&mut self, w: &mut SourceWrite) -> Result<(), StoreError>;

    /// Abandon an open source write: nothing of it is kept (inside a batch, the sources
    /// committed to the batch before it are kept).
    fn rollback_source(&mut self);

    /// Gather the sources written from here to [`Writes::commit_batch`] into one transaction:
    /// each source rolled back alone when it fails, the batch committed once.
    fn begin_batch(&mut self) -> Result<(), StoreError>;

    /// Whether a batch is open.
    fn in_batch(&self) -> bool;

    /// Commit the open batch (nothing when none is open). On error nothing of the batch is kept.
    fn commit_batch(&mut self) -> Result<(), StoreError>;

    /// Remove a source and everything it contributed; the instances it touched are joined
    /// again. False when there is no such source.
    fn remove_source(&mut self, path: &str) -> Result<bool, StoreError>;

    /// The runs of these sources (by path), in id order.
    fn runs_of_sources(&self, paths: &[String]) -> Result<Vec<i64>, StoreError>;
}

/// A source written while it is read (`trajan PATH`): its steps committed in batches, its end
/// written once the document is read (see `sql/live.rs`).
pub trait LiveWrites {
    /// Begin writing a source read a step at a time; `note` is the warning it carries until it
    /// ends. The transaction stays open until [`LiveWrites::live_commit`].
    fn live_begin(&mut self, path: &str, kind: &str, format: &str, note: &str) -> Result<LiveWrite, StoreError>;

    /// A run begins: its row, with what is known before its steps. Its id.
    fn live_run(&mut self, lw: &mut LiveWrite, run: &Run) -> Result<i64, StoreError>;

    /// The next steps of the run begun last, with the edits they made.
    fn live_steps(&mut self, lw: &mut LiveWrite, steps: &[Step], edits: &[Edit]) -> Result<(), StoreError>;

    /// Commit what was written: readers see it from now on, each run's row with its counts.
    fn live_commit(&mut self, lw: &mut LiveWrite) -> Result<(), StoreError>;

    /// End the write: each run's fields as the document gives them at its end, its history,
    /// the tasks, steps whose flags changed (`fixups`: run, step, flags), the real size and
    /// hash; a run's `edits` replace those written with its steps, `edited[run]` are the steps
    /// that get the `edit` flag, `fill(run, k, edit)` completes the `k`th edit of a run just
    /// before it is written.
    fn live_finish(
        &mut self,
        lw: LiveWrite,
        record: &SourceRecord<'_>,
        ending: Parsed,
        fixups: &[(usize, usize, StepFlags)],
        edited: &[Vec<usize>],
        fill: &mut dyn FnMut(usize, usize, &mut Edit) -> Result<(), StoreError>,
    ) -> Result<WriteStats, StoreError>;

    /// Stop a write without ending it: what was committed stays, marked unfinished; what was
    /// not is rolled back.
    fn live_interrupt(&mut self, lw: LiveWrite);

    /// Give up a write: everything of the source is removed.
    fn live_abandon(&mut self, lw: LiveWrite) -> Result<(), StoreError>;

    /// Hold at most about `kib` KiB of database pages in memory on this connection (a writer
    /// that must stay small while a large file goes through it; [`CACHE_KIB`] by default);
    /// nothing where the server holds the pages. The limit it replaces (`kib` there).
    fn limit_cache(&self, kib: i64) -> Result<i64, StoreError>;
}

/// Runs, steps and edits as the CLI and the TUI read them.
pub trait Reads {
    fn count_runs(&self) -> Result<i64, StoreError>;

    fn list_runs(&self, filter: RunFilter) -> Result<Vec<RunSummary>, StoreError>;

    /// Run `id`'s row: its line in the run list and what it used.
    fn run_row(&self, id: i64) -> Result<RunRow, StoreError>;

    /// Run `id`'s line in the run list.
    fn run_summary(&self, id: i64) -> Result<RunSummary, StoreError> {
        Ok(self.run_row(id)?.summary)
    }

    /// A run named by numeric id, or by an instance id that names exactly one run.
    fn resolve_run(&self, query: &str) -> Result<i64, StoreError>;

    /// Every run of an instance id, in id order (none when no run has it).
    fn runs_of_instance(&self, instance_id: &str) -> Result<Vec<i64>, StoreError>;

    /// The runs whose task has no gold patch stored (the heuristic's rules that need one do not
    /// run on them), in id order.
    fn runs_without_gold(&self) -> Result<Vec<i64>, StoreError>;

    /// A run with its steps (all, or only `only_step`), edits, outcome and task.
    fn run_detail(&self, id: i64, only_step: Option<i64>) -> Result<RunDetail, StoreError>;

    /// The prompt the model saw at a step, rebuilt from the stored deltas (empty when the
    /// format does not store prompts).
    fn step_prompt(&self, run_id: i64, step: i64) -> Result<Vec<Message>, StoreError>;

    /// The evaluations that matched no run, by instance and source, each with why
    /// (`runs --evaluations`; see `store::unmatched`).
    fn orphan_evaluations(&self) -> Result<Vec<Orphan>, StoreError>;

    /// What joined: runs, runs with a verdict, the evaluations that matched no run by why (the
    /// ingest summary's verdict line).
    fn joined(&self) -> Result<Joined, StoreError>;
}

/// What the TUI reads: one screen at a time.
pub trait Browse: Reads {
    /// Everything the run view shows except step bodies.
    fn run_data(&self, id: i64) -> Result<RunData, StoreError>;

    /// One line per step of a run, from step `from` on (a run being read grows).
    fn step_lines(&self, run_id: i64, from: usize) -> Result<Vec<StepLine>, StoreError>;

    /// The edits steps `from` to `until` (excluded) made, without their texts, in step order.
    fn step_edit_lines(&self, run_id: i64, from: usize, until: usize) -> Result<Vec<EditLine>, StoreError>;

    /// One step in full, with its edits' texts and diffs.
    fn step_body(&self, run_id: i64, index: i64) -> Result<StepBody, StoreError>;

    /// The instance of run `base` and its other runs, by id: what the comparison's picker offers.
    fn runs_to_compare_with(&self, base: i64) -> Result<(String, Vec<RunSummary>), StoreError>;
}

/// Full-text search, and its index. An index written with the steps (PostgreSQL's) has nothing
/// waiting for it: what the provided methods say.
pub trait Search {
    /// Steps whose thought, action or observation hold a phrase (its words together, in order,
    /// the last one a prefix), with a snippet of each; the index is brought up to date first.
    fn search(&self, phrase: &str, run: Option<i64>, limit: usize) -> Result<Vec<SearchHit>, StoreError>;

    /// Steps of one run whose thought, action or observation hold the phrase.
    fn search_run(&self, run_id: i64, phrase: &str) -> Result<Vec<i64>, StoreError>;

    /// How many runs wait for the search index.
    fn search_pending(&self) -> Result<i64, StoreError> {
        Ok(0)
    }

    /// Add every run waiting for the search index to it; `progress(done, total)` counts runs.
    fn build_search_index(&self, progress: &mut dyn FnMut(i64, i64)) -> Result<IndexStats, StoreError> {
        self.build_search_index_until(progress, &|| false)
    }

    /// [`Search::build_search_index`] that stops between batches once `stop()` is true: the
    /// batches committed stay indexed, the runs not reached stay listed for a later pass.
    fn build_search_index_until(
        &self,
        _progress: &mut dyn FnMut(i64, i64),
        _stop: &dyn Fn() -> bool,
    ) -> Result<IndexStats, StoreError> {
        Ok(IndexStats::default())
    }

    /// An up-to-date search index before a search reads it.
    fn ensure_search_index(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// After an ingest that wrote runs: what keeps searches fast that the write itself does not.
    /// PostgreSQL: the planner's statistics of the tables a search reads (a bulk load leaves them
    /// empty until autovacuum comes, and the first searches take twice as long); SQLite:
    /// nothing (its index pass is [`Search::build_search_index`]).
    fn after_ingest(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What a pass of [`Search::build_search_index`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct IndexStats {
    pub runs: i64,
    pub steps: i64,
    /// Bytes of text indexed.
    pub bytes: u64,
}

/// Signals, labels (append-only), the LLM reply cache and classification errors.
pub trait Labels: Reads {
    /// Runs to classify: the failed runs of `scope`, or every run (`None`).
    fn classify_candidates(&self, scope: Option<FailedScope>) -> Result<Vec<i64>, StoreError> {
        let mut ids: Vec<i64> =
            self.list_runs(RunFilter { failed: scope, limit: None })?.into_iter().map(|r| r.id).collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The stored signals of a run (JSON), when computed with `version`.
    fn signals_json(&self, run_id: i64, version: u32) -> Result<Option<String>, StoreError>;

    /// The input hash of the latest label per run from `source` and `rater` under a taxonomy
    /// version: what makes classifying again a no-op when nothing changed.
    fn latest_input_hashes(
        &self,
        source: Source,
        rater: &str,
        taxonomy: &str,
        version: &str,
    ) -> Result<HashMap<i64, String>, StoreError>;

    /// Write a batch of runs' signals and new labels in one transaction.
    fn save_classified(&mut self, batch: &[Classified]) -> Result<(), StoreError>;

    /// Append one label (never replacing an earlier one); returns its id.
    fn add_label(&self, label: &Label, note: Option<&str>) -> Result<i64, StoreError> {
        self.add_label_at(label, note, None)
    }

    /// Append one label made at `created_at` (an imported label keeps its time), or now. Takes
    /// `&self` so the TUI can label while reading.
    fn add_label_at(&self, label: &Label, note: Option<&str>, created_at: Option<&str>) -> Result<i64, StoreError>;

    /// Append labels under many keys in one transaction (an import goes in whole or not at
    /// all), `decide(i, history)` choosing those of `keys[i]` from its history (oldest first) as
    /// it stands inside that transaction: writers of one key take turns, so two imports of one
    /// export at once append it once. The number appended.
    fn append_histories(
        &self,
        keys: &[LabelKey<'_>],
        decide: &mut dyn FnMut(usize, &[LabelRow]) -> Vec<NewLabel>,
    ) -> Result<usize, StoreError>;

    /// [`Labels::append_histories`] of one key.
    fn append_history(
        &self,
        key: &LabelKey<'_>,
        decide: &mut dyn FnMut(&[LabelRow]) -> Vec<NewLabel>,
    ) -> Result<usize, StoreError> {
        self.append_histories(std::slice::from_ref(key), &mut |_, history| decide(history))
    }

    /// Labels, oldest first: all of them, or of one run; with `current_only`, the latest per
    /// run, source, rater and taxonomy.
    fn labels(&self, run: Option<i64>, current_only: bool) -> Result<Vec<LabelRow>, StoreError>;

    /// The latest label per run, source and rater under `taxonomy` at `version`, as mode sets.
    fn current_label_sets(&self, taxonomy: &str, version: &str) -> Result<Vec<LabelSet>, StoreError>;

    fn llm_cached(&self, model: &str, prompt_hash: &str) -> Result<Option<CachedReply>, StoreError>;

    /// Keep a validated reply and append its label, in one transaction.
    fn save_llm_label(&mut self, prompt_hash: &str, reply: &CachedReply, label: &Label) -> Result<i64, StoreError>;

    fn record_classify_error(
        &self,
        run_id: i64,
        source: Source,
        model: Option<&str>,
        error: &str,
    ) -> Result<(), StoreError>;

    fn classify_errors(&self, run: Option<i64>) -> Result<Vec<ClassifyErrorRow>, StoreError>;
}

/// Reviewers' notes on steps: one per run, step and reviewer.
pub trait Notes {
    /// Write the reviewer's note on a step (replacing theirs), or remove it when `text` is
    /// empty. Returns whether a note is there now. One short transaction, as labels.
    fn set_note(&self, run_id: i64, step: i64, rater: &str, text: &str) -> Result<bool, StoreError>;

    /// The notes of a run (or of every run), by run and step.
    fn notes(&self, run: Option<i64>) -> Result<Vec<NoteRow>, StoreError>;

    /// A short text that changes whenever a label or a note is written, by anyone (labels are
    /// only ever added; a note written again gets a new time): an open TUI asks for it every
    /// few seconds and reads the labels again when it changed. Cheap: counts and maxima.
    fn review_stamp(&self) -> Result<String, StoreError>;
}

/// Reads for the exports.
pub trait Exports {
    /// What `run_detail` leaves out of a run and an export needs.
    fn run_rest(&self, run_id: i64) -> Result<RunRest, StoreError>;

    /// Every run, in id order.
    fn run_table(&self) -> Result<Vec<RunRow>, StoreError>;

    /// Every step of every run, in run and step order, handed to `each` one at a time (the
    /// texts of a large database are never all in memory); `each` returns false to stop.
    fn each_step(&self, each: &mut dyn FnMut(StepTableRow) -> bool) -> Result<(), StoreError>;

    /// Every edit, in run and edit order.
    fn edit_table(&self) -> Result<Vec<EditTableRow>, StoreError>;
}

/// Whole tables, as they are: what `trajan copy` moves from one store to another.
pub trait Tables {
    /// Every row of `table`, its columns in `table.columns`' order, rows in its key's order.
    fn dump(&self, table: &Table, each: &mut dyn FnMut(Vec<Value>) -> Result<(), StoreError>)
    -> Result<(), StoreError>;

    /// Whether the store holds no data (a copy's target must not).
    fn is_empty_store(&self) -> Result<bool, StoreError>;

    /// Begin a copy into this store: one transaction until [`Tables::end_load`].
    fn begin_load(&mut self) -> Result<(), StoreError>;

    /// Rows of `table` as [`Tables::dump`] gives them.
    fn load(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<(), StoreError>;

    /// The copy is whole: ids given out next come after the copied ones, the search index is
    /// made, the transaction committed.
    fn end_load(&mut self) -> Result<(), StoreError>;

    /// Give a copy up: nothing of it is kept.
    fn abandon_load(&mut self);
}
