//! A whole store copied into another (SQLite to PostgreSQL and back): every table that holds
//! data, in an order that keeps the foreign keys, each row as it is (ids included, so labels stay
//! on their runs and step texts in their chunks); the search index is derived and made again by
//! the target. Then both stores are compared table by table.

use super::Store;
use crate::error::StoreError;

/// A column's value, whichever backend read it.
#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
}

impl Value {
    /// Bytes the value holds (for batching).
    pub fn size(&self) -> usize {
        match self {
            Value::Text(t) => t.len(),
            Value::Bytes(b) => b.len(),
            _ => 8,
        }
    }

    /// Fed to a hash, with its kind and length, so different rows never hash alike by accident.
    fn hash_into(&self, h: &mut blake3::Hasher) {
        match self {
            Value::Null => h.update(&[0]),
            Value::Int(v) => h.update(&[1]).update(&v.to_le_bytes()),
            Value::Real(v) => h.update(&[2]).update(&v.to_bits().to_le_bytes()),
            Value::Text(t) => h.update(&[3]).update(&(t.len() as u64).to_le_bytes()).update(t.as_bytes()),
            Value::Bytes(b) => h.update(&[4]).update(&(b.len() as u64).to_le_bytes()).update(b),
        };
    }
}

/// A table both backends hold alike: its columns, and the columns its rows are ordered by
/// (`None`: the order rows were written in, SQLite's `rowid`, PostgreSQL's `id`).
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [&'static str],
    pub key: Option<&'static [&'static str]>,
}

impl Table {
    /// Every row, its columns in order, ordered by its key or else by `row_order` (the order rows
    /// were written in: SQLite's `rowid`, PostgreSQL's `id`).
    pub fn select(&self, row_order: &str) -> String {
        let key = self.key.map_or_else(|| row_order.to_string(), |k| k.join(", "));
        format!("SELECT {} FROM {} ORDER BY {key}", self.columns.join(", "), self.name)
    }
}

const ID: Option<&[&str]> = Some(&["id"]);

/// The labels (`store::sql::labels` writes them in bulk, these columns in this order).
pub const LABELS: Table = Table {
    name: "labels",
    columns: &[
        "id",
        "run_id",
        "source",
        "rater",
        "taxonomy",
        "taxonomy_version",
        "unclassified",
        "exit_category",
        "summary",
        "note",
        "model",
        "input_hash",
        "tokens_in",
        "tokens_out",
        "cost",
        "latency_ms",
        "created_at",
        "run_source",
        "run_instance",
        "run_attempt",
        "run_nth",
        "judgement",
        "onset_step",
        "blame",
    ],
    key: ID,
};

/// Each label's verdicts on modes.
pub const LABEL_MODES: Table = Table {
    name: "label_modes",
    columns: &["label_id", "mode", "assigned", "confidence", "evidence", "rationale"],
    key: None,
};

/// Every table of data, parents before children.
pub const TABLES: &[Table] = &[
    Table {
        name: "sources",
        columns: &["id", "path", "kind", "format", "size", "hash", "warnings", "ingested_at"],
        key: ID,
    },
    Table { name: "blobs", columns: &["id", "hash", "role", "content", "extra"], key: ID },
    Table {
        name: "tasks",
        columns: &["id", "source_id", "instance_id", "instruction", "gold_patch", "fail_to_pass", "pass_to_pass"],
        key: ID,
    },
    Table {
        name: "outcomes",
        columns: &[
            "id",
            "source_id",
            "instance_id",
            "format",
            "model",
            "run_label",
            "resolved",
            "patch_applied",
            "patch_exists",
            "test_count",
            "log",
            "patch",
            "logged",
        ],
        key: ID,
    },
    Table { name: "tests", columns: &["outcome_id", "name", "grp", "passed", "message"], key: None },
    Table { name: "predictions", columns: &["id", "source_id", "instance_id", "model", "patch"], key: ID },
    Table {
        name: "runs",
        columns: &[
            "id",
            "source_id",
            "position",
            "instance_id",
            "format",
            "format_version",
            "agent",
            "model",
            "exit_status",
            "submission",
            "cost",
            "tokens_sent",
            "tokens_received",
            "api_calls",
            "attempt",
            "best_attempt",
            "step_count",
            "edit_count",
            "rejected_count",
            "metadata",
            "outcome_id",
            "prediction_id",
            "tests_outcome_id",
        ],
        key: ID,
    },
    Table { name: "history", columns: &["run_id", "pos", "blob_id"], key: Some(&["run_id", "pos"]) },
    Table { name: "text_chunks", columns: &["id", "run_id", "body"], key: ID },
    Table {
        name: "steps",
        columns: &[
            "id",
            "run_id",
            "idx",
            "tool",
            "flags",
            "obs_chars",
            "action_head",
            "execution_time",
            "tokens_in",
            "tokens_out",
            "timestamp",
            "open_file",
            "working_dir",
            "query_keep",
            "says",
        ],
        key: ID,
    },
    Table {
        name: "step_texts",
        columns: &["step_id", "action", "thought", "observation", "response", "args", "chunk_id", "chunk_at"],
        key: Some(&["step_id"]),
    },
    Table { name: "query_parts", columns: &["step_id", "pos", "blob_id"], key: Some(&["step_id", "pos"]) },
    Table {
        name: "edits",
        columns: &[
            "id",
            "run_id",
            "step_idx",
            "path",
            "kind",
            "status",
            "old_text",
            "new_text",
            "diff",
            "lint_codes",
            "certainty",
            "command",
            "checked_at",
            "shown",
            "undone_at",
            "hunks",
            "partial",
            "chunk_id",
            "chunk_at",
        ],
        key: ID,
    },
    Table { name: "signals", columns: &["run_id", "version", "hash", "json"], key: Some(&["run_id"]) },
    LABELS,
    LABEL_MODES,
    Table {
        name: "llm_cache",
        columns: &["model", "prompt_hash", "reply", "tokens_in", "tokens_out", "latency_ms", "created_at"],
        key: Some(&["model", "prompt_hash"]),
    },
    Table { name: "classify_errors", columns: &["id", "run_id", "source", "model", "error", "created_at"], key: ID },
    Table {
        name: "notes",
        columns: &[
            "id",
            "run_id",
            "step_idx",
            "rater",
            "text",
            "created_at",
            "run_source",
            "run_instance",
            "run_attempt",
            "run_nth",
        ],
        key: ID,
    },
];

/// Rows sent to the target at once, at most about this many bytes.
const BATCH_BYTES: usize = 16 << 20;

/// What a copy did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub tables: usize,
    pub rows: u64,
    /// The target held every row already (a copy stopped while it built the target's search
    /// index): the rows were compared equal (`rows` of them), and the index finished.
    pub resumed: bool,
}

/// How far a copy or a comparison has come, for a reviewer watching a copy of gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// Rows of `table` read so far (and their bytes); `done` once the table is whole.
    Copying { table: &'a str, rows: u64, bytes: u64, done: bool },
    /// Every row is in the target; its search index (derived data) is being built.
    Indexing,
    /// Both stores' rows of `table` hashed and found equal.
    Compared { table: &'a str, rows: u64 },
}

/// Copy every table of `from` into `to`, which must hold no data, telling `progress` after each
/// batch and each table. On error nothing of the copy is kept in `to`. A target that holds
/// exactly the rows of `from` is a copy stopped after its rows were committed (SQLite builds
/// the search index after that): it is finished ([`Copied::resumed`]). Any other target that
/// holds data is refused.
pub fn copy(from: &Store, to: &mut Store, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Copied, StoreError> {
    if !to.is_empty_store()? {
        return resume(from, to, progress);
    }
    to.begin_load()?;
    let copied = (|| {
        let mut copied = Copied::default();
        for table in TABLES {
            let (mut batch, mut bytes, mut rows, mut read) = (Vec::new(), 0, 0u64, 0u64);
            from.dump(table, &mut |row| {
                let size = row.iter().map(Value::size).sum::<usize>();
                bytes += size;
                read += size as u64;
                batch.push(row);
                rows += 1;
                if bytes >= BATCH_BYTES {
                    to.load(table, &batch)?;
                    (batch, bytes) = (Vec::new(), 0);
                    progress(Progress::Copying { table: table.name, rows, bytes: read, done: false });
                }
                Ok(())
            })?;
            if !batch.is_empty() {
                to.load(table, &batch)?;
            }
            progress(Progress::Copying { table: table.name, rows, bytes: read, done: true });
            copied.tables += 1;
            copied.rows += rows;
        }
        Ok(copied)
    })();
    match copied {
        Ok(c) => {
            progress(Progress::Indexing);
            to.end_load()?;
            Ok(c)
        }
        Err(e) => {
            to.abandon_load();
            Err(e)
        }
    }
}

/// A target that holds data: compared with `from` (the first table that differs ends it), and
/// when equal, its search index built.
fn resume(from: &Store, to: &mut Store, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Copied, StoreError> {
    let rows = match compare(from, to, progress) {
        Ok(rows) => rows,
        Err(StoreError::Differs { .. }) => return Err(StoreError::NotEmpty(to.location())),
        Err(e) => return Err(e),
    };
    progress(Progress::Indexing);
    to.build_search_index(&mut |_, _| {})?;
    Ok(Copied { tables: TABLES.len(), rows, resumed: true })
}

/// Compare two stores table by table (every row, in order): the rows compared, or an error
/// naming the first table that differs; `progress` after each table.
pub fn compare(a: &Store, b: &Store, progress: &mut dyn FnMut(Progress<'_>)) -> Result<u64, StoreError> {
    let mut total = 0;
    for table in TABLES {
        let digest = |s: &Store| -> Result<(u64, blake3::Hash), StoreError> {
            let (mut h, mut n) = (blake3::Hasher::new(), 0u64);
            s.dump(table, &mut |row| {
                for v in &row {
                    v.hash_into(&mut h);
                }
                n += 1;
                Ok(())
            })?;
            Ok((n, h.finalize()))
        };
        let (left, right) = (digest(a)?, digest(b)?);
        if left != right {
            return Err(StoreError::Differs {
                table: table.name.to_string(),
                why: format!("{} rows in {}, {} in {}", left.0, a.location(), right.0, b.location()),
            });
        }
        total += left.0;
        progress(Progress::Compared { table: table.name, rows: left.0 });
    }
    Ok(total)
}
