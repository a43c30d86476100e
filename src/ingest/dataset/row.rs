//! What every dataset's reader shares: the datasets told by their columns ([`Kind`]), their
//! published schemas, where a row is ([`RowAt`]), why it could not be read ([`RowError`]), the
//! typed reading of a row's columns, the dataset's name and split from the shard's path.

use crate::model::{Format, Run, TestCase};
use serde_json::{Map, Value};
use std::path::Path;

/// The run label of an outcome read in a dataset's row: `row:N`, N the run's position in its
/// shard. `store::link` joins such a verdict to that row's run only.
pub use crate::store::ROW_VERDICT;

/// The datasets trajan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter)]
pub enum Kind {
    /// nebius/SWE-agent-trajectories: SWE-agent's `role`/`text` messages, `target` the verdict.
    Nebius,
    /// nebius/SWE-rebench-openhands-trajectories: OpenHands' OpenAI chat messages with tool calls.
    Rebench,
    /// SWE-bench/SWE-smith-trajectories: `messages` as a JSON string, splits tool, xml, ticks.
    Smith,
    /// nvidia/Open-SWE-Traces: OpenHands' and SWE-agent's OpenAI chat messages, `resolved` 1/0/-1.
    OpenSwe,
    /// SWE-Gym/OpenHands-Sampled-Trajectories: OpenHands' chat messages, `test_result` a struct.
    SweGym,
    /// Terminal-Bench 2 trials as rows: an ATIF trajectory in a column, `reward`, `cost_usd`,
    /// `test_report`.
    TerminalBench,
    /// nvidia/SWE-Zero-openhands-trajectories (and SWE-Hero): OpenHands' chat messages with tool
    /// calls, `dataset` the task's source; no verdict.
    SweZero,
    /// R2E-Gym/R2EGym-SFT-Trajectories: `messages` alone, calls as `<function=...>` text; no
    /// verdict, no instance id.
    R2eGym,
}

/// How a dataset's columns tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// Every one of these present (the shard may have more).
    AllOf(&'static [&'static str]),
    /// These and no other: a column many datasets have (`messages`) tells nothing beside others.
    Exactly(&'static [&'static str]),
}

impl Told {
    /// Whether a row's columns (a shard's schema, a JSON line's keys) are the dataset's.
    pub fn by(self, columns: &[String]) -> bool {
        let (wanted, exact) = match self {
            Told::AllOf(c) => (c, false),
            Told::Exactly(c) => (c, true),
        };
        wanted.iter().all(|c| columns.iter().any(|x| x == c)) && (!exact || columns.len() == wanted.len())
    }
}

/// A column of OpenAI chat messages with tool calls as the datasets publish it (SWE-rebench's,
/// Open-SWE-Traces', SWE-Zero's): `{content, name, role, tool_call_id, tool_calls}`, each call
/// `{function: {arguments, name}, id, type}`. A literal, for [`Kind::schema`]'s `concat!`.
macro_rules! chat_messages {
    ($column:literal) => {
        concat!(
            "optional group ",
            $column,
            " (LIST) {
              repeated group list {
                optional group element {
                  optional binary content (STRING);
                  optional binary name (STRING);
                  optional binary role (STRING);
                  optional binary tool_call_id (STRING);
                  optional group tool_calls (LIST) {
                    repeated group list {
                      optional group element {
                        optional group function {
                          optional binary arguments (STRING);
                          optional binary name (STRING);
                        }
                        optional binary id (STRING);
                        optional binary type (STRING);
                      }
                    }
                  }
                }
              }
            }"
        )
    };
}

/// The `tools` column of function definitions (SWE-rebench's, SWE-Gym's). A literal.
macro_rules! function_tools {
    () => {
        "optional group tools (LIST) {
          repeated group list {
            optional group element {
              optional group function {
                optional binary description (STRING);
                optional binary name (STRING);
                optional binary parameters (STRING);
              }
              optional binary type (STRING);
            }
          }
        }"
    };
}

impl Kind {
    pub fn format(self) -> Format {
        match self {
            Kind::Nebius => Format::NebiusSweAgent,
            Kind::Rebench => Format::SweRebenchOpenHands,
            Kind::Smith => Format::SweSmith,
            Kind::OpenSwe => Format::OpenSweTraces,
            Kind::SweGym => Format::SweGymOpenHands,
            Kind::TerminalBench => Format::TerminalBenchRows,
            Kind::SweZero => Format::SweZeroOpenHands,
            Kind::R2eGym => Format::R2eGymSft,
        }
    }

    pub fn of_format(format: Format) -> Option<Kind> {
        match format {
            Format::NebiusSweAgent => Some(Kind::Nebius),
            Format::SweRebenchOpenHands => Some(Kind::Rebench),
            Format::SweSmith => Some(Kind::Smith),
            Format::OpenSweTraces => Some(Kind::OpenSwe),
            Format::SweGymOpenHands => Some(Kind::SweGym),
            Format::TerminalBenchRows => Some(Kind::TerminalBench),
            Format::SweZeroOpenHands => Some(Kind::SweZero),
            Format::R2eGymSft => Some(Kind::R2eGym),
            _ => None,
        }
    }

    /// The dataset's name on the Hugging Face Hub.
    pub fn dataset(self) -> &'static str {
        match self {
            Kind::Nebius => "nebius/SWE-agent-trajectories",
            Kind::Rebench => "nebius/SWE-rebench-openhands-trajectories",
            Kind::Smith => "SWE-bench/SWE-smith-trajectories",
            Kind::OpenSwe => "nvidia/Open-SWE-Traces",
            Kind::SweGym => "SWE-Gym/OpenHands-Sampled-Trajectories",
            // Harbor's name for the benchmark (`harbor run -d terminal-bench@2.0`): rows of its
            // trials are published under many owners' names, found on the shard's path.
            Kind::TerminalBench => "terminal-bench@2.0",
            // SWE-Hero's shards have the same schema: the cache's folder names which.
            Kind::SweZero => "nvidia/SWE-Zero-openhands-trajectories",
            Kind::R2eGym => "R2E-Gym/R2EGym-SFT-Trajectories",
        }
    }

    /// The columns that tell the dataset.
    pub fn told(self) -> Told {
        match self {
            Kind::Nebius => Told::AllOf(&["instance_id", "model_name", "target", "trajectory", "generated_patch"]),
            Kind::Rebench => Told::AllOf(&["trajectory_id", "instance_id", "trajectory", "model_patch", "resolved"]),
            Kind::Smith => Told::AllOf(&["messages", "instance_id", "resolved", "traj_id", "patch"]),
            Kind::OpenSwe => Told::AllOf(&["instance_id", "trajectory_id", "messages", "resolved", "metadata"]),
            Kind::SweGym => Told::AllOf(&["instance_id", "run_id", "resolved", "messages", "test_result"]),
            Kind::TerminalBench => Told::AllOf(&["trajectory", "reward", "cost_usd", "test_report"]),
            Kind::SweZero => {
                Told::AllOf(&["trajectory_id", "instance_id", "trajectory", "model_patch", "dataset", "license"])
            }
            Kind::R2eGym => Told::Exactly(&["messages"]),
        }
    }

    /// The dataset a row's columns (a shard's schema, a JSON line's keys) belong to.
    pub fn of_columns(columns: &[String]) -> Option<Kind> {
        use strum::IntoEnumIterator;
        Kind::iter().find(|k| k.told().by(columns))
    }

    /// [`Kind::of_columns`] for a JSON document (`text`, a record or JSON lines of them), which
    /// must also bear the kind's sign where its columns alone say little: a record of
    /// `messages` alone is R2E-Gym's only when it wraps an issue in `<github_issue>` (an
    /// OpenAI fine-tuning file's lines are `{"messages": [...]}` too, and stay unknown).
    pub fn of_record(columns: &[String], text: &str) -> Option<Kind> {
        Kind::of_columns(columns).filter(|k| k.signed_by(text))
    }

    /// Whether the kind's columns alone say little, so that a record needs its sign too
    /// ([`Kind::signed_by`]).
    pub fn needs_sign(self) -> bool {
        matches!(self.told(), Told::Exactly(_))
    }

    /// Whether `text` (a record, or the start of a file of them) bears the kind's sign: R2E-Gym's
    /// rows wrap their issue in `<github_issue>`; the other kinds' columns are sign enough.
    pub fn signed_by(self, text: &str) -> bool {
        match self {
            Kind::R2eGym => memchr::memmem::find(text.as_bytes(), b"<github_issue>").is_some(),
            _ => true,
        }
    }

    /// The schema the dataset's shards are published with (the generator and the tests write it).
    pub fn schema(self) -> &'static str {
        match self {
            Kind::Nebius => {
                "message schema {
                  optional binary instance_id (STRING);
                  optional binary model_name (STRING);
                  optional boolean target;
                  optional group trajectory (LIST) {
                    repeated group list {
                      optional group element {
                        optional binary cutoff_date (STRING);
                        optional boolean mask;
                        optional binary role (STRING);
                        optional binary system_prompt (STRING);
                        optional binary text (STRING);
                      }
                    }
                  }
                  optional binary exit_status (STRING);
                  optional binary generated_patch (STRING);
                  optional binary eval_logs (STRING);
                }"
            }
            Kind::Rebench => {
                concat!(
                    "message schema {
                  optional binary trajectory_id (STRING);
                  optional binary instance_id (STRING);
                  optional binary repo (STRING);
                  ",
                    chat_messages!("trajectory"),
                    function_tools!(),
                    "
                  optional binary model_patch (STRING);
                  optional binary exit_status (STRING);
                  optional int64 resolved;
                  optional double gen_tests_correct;
                  optional double pred_passes_gen_tests;
                }"
                )
            }
            Kind::Smith => {
                "message schema {
                  optional binary messages (STRING);
                  optional binary instance_id (STRING);
                  optional boolean resolved;
                  optional binary model (STRING);
                  optional binary traj_id (STRING);
                  optional binary patch (STRING);
                }"
            }
            Kind::OpenSwe => {
                concat!(
                    "message schema {
                  optional binary instance_id (STRING);
                  optional binary repo (STRING);
                  optional binary license (STRING);
                  optional binary language (STRING);
                  optional binary trajectory_id (STRING);
                  ",
                    chat_messages!("messages"),
                    "
                  optional group tools (LIST) {
                    repeated group list {
                      optional binary element (STRING);
                    }
                  }
                  optional int32 resolved;
                  optional group metadata {
                    optional binary category (STRING);
                    optional group reference_patch {
                      optional binary patch (STRING);
                    }
                    optional group teacher_model {
                      optional binary name (STRING);
                      optional boolean enable_thinking;
                      optional binary reasoning_effort (STRING);
                    }
                  }
                  optional binary hf_dataset_name (STRING);
                }"
                )
            }
            Kind::SweGym => {
                concat!(
                    "message schema {
                  optional binary instance_id (STRING);
                  optional binary run_id (STRING);
                  optional boolean resolved;
                  optional group messages (LIST) {
                    repeated group list {
                      optional group element {
                        optional binary content (STRING);
                        optional binary function_call (STRING);
                        optional binary name (STRING);
                        optional binary role (STRING);
                        optional binary tool_call_id (STRING);
                          optional group tool_calls (LIST) {
                            repeated group list {
                              optional group element {
                                optional group function {
                                  optional binary arguments (STRING);
                                  optional binary name (STRING);
                                }
                                optional binary id (STRING);
                                optional int64 index;
                                optional binary type (STRING);
                              }
                            }
                          }
                      }
                    }
                  }
                  ",
                    function_tools!(),
                    "
                  optional group test_result {
                    optional binary git_patch (STRING);
                  }
                }"
                )
            }
            Kind::TerminalBench => {
                "message schema {
                  optional binary task_name (STRING);
                  optional binary trial_name (STRING);
                  optional binary agent_name (STRING);
                  optional binary model_name (STRING);
                  optional binary trajectory (STRING);
                  optional double reward;
                  optional double cost_usd;
                  optional int64 n_input_tokens;
                  optional int64 n_output_tokens;
                  optional binary exception_type (STRING);
                  optional binary test_report (STRING);
                }"
            }
            // The card's `dataset_info` (its first revision lacked `name` and `tool_call_id`).
            Kind::SweZero => {
                concat!(
                    "message schema {
                  optional binary instance_id (STRING);
                  optional binary repo (STRING);
                  optional binary license (STRING);
                  optional binary trajectory_id (STRING);
                  ",
                    chat_messages!("trajectory"),
                    "
                  optional binary model_patch (STRING);
                  optional binary dataset (STRING);
                }"
                )
            }
            Kind::R2eGym => {
                "message schema {
                  optional group messages (LIST) {
                    repeated group list {
                      optional group element {
                        optional binary content (STRING);
                        optional binary role (STRING);
                      }
                    }
                  }
                }"
            }
        }
    }

    /// The columns the reader asks a shard for (the others are not read).
    pub fn wanted(self) -> &'static [&'static str] {
        match self {
            Kind::Nebius => {
                &["instance_id", "model_name", "target", "trajectory", "exit_status", "generated_patch", "eval_logs"]
            }
            Kind::Rebench => &[
                "trajectory_id",
                "instance_id",
                "repo",
                "trajectory",
                "model_patch",
                "exit_status",
                "resolved",
                "gen_tests_correct",
                "pred_passes_gen_tests",
            ],
            Kind::Smith => &["messages", "instance_id", "resolved", "model", "traj_id", "patch"],
            Kind::OpenSwe => &[
                "instance_id",
                "repo",
                "license",
                "language",
                "trajectory_id",
                "messages",
                "resolved",
                "metadata",
                "hf_dataset_name",
            ],
            Kind::SweGym => &["instance_id", "run_id", "resolved", "messages", "test_result"],
            Kind::TerminalBench => &[
                "task_name",
                "trial_name",
                "agent_name",
                "model_name",
                "trajectory",
                "reward",
                "cost_usd",
                "n_input_tokens",
                "n_output_tokens",
                "exception_type",
                "test_report",
            ],
            Kind::SweZero => {
                &["instance_id", "repo", "license", "trajectory_id", "trajectory", "model_patch", "dataset"]
            }
            Kind::R2eGym => &["messages"],
        }
    }
}

/// Where a row is: for its warnings and its run's metadata.
#[derive(Debug, Clone)]
pub struct RowAt<'a> {
    pub shard: &'a Path,
    /// The dataset's name (from the Hugging Face cache's folder, else the kind's).
    pub dataset: &'a str,
    /// The split, from the shard's name (`train-00000-of-00012.parquet`: `train`).
    pub split: Option<&'a str>,
    /// Row group and row in it (Parquet), or `None` and the line (JSON lines).
    pub group: Option<usize>,
    pub row: usize,
    /// The row's position in its shard (0-based), the run's `position`.
    pub position: usize,
}

impl RowAt<'_> {
    /// "SHARD: row group G, row R" or "SHARD: line N".
    pub fn name(&self) -> String {
        match self.group {
            Some(g) => format!("{}: row group {g}, row {}", self.shard.display(), self.row),
            None => format!("{}: line {}", self.shard.display(), self.row),
        }
    }
}

/// Why a row could not be read: the column and what was wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowError {
    pub column: String,
    pub why: String,
}

impl RowError {
    pub fn new(column: &str, why: impl Into<String>) -> RowError {
        RowError { column: column.to_string(), why: why.into() }
    }
    pub fn text(&self, at: &RowAt<'_>) -> String {
        format!("{}: column `{}`: {}", at.name(), self.column, self.why)
    }
}

/// A string column, required: present, a string, not blank.
pub fn required_str<'a>(row: &'a Value, column: &str) -> Result<&'a str, RowError> {
    match row.get(column) {
        None | Some(Value::Null) => Err(RowError::new(column, "missing (null)")),
        Some(Value::String(s)) if s.trim().is_empty() => Err(RowError::new(column, "empty")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(RowError::new(column, format!("expected a string, found {}", kind_of(other)))),
    }
}

/// A string column that may be null; another type is an error.
pub fn optional_str<'a>(row: &'a Value, column: &str) -> Result<Option<&'a str>, RowError> {
    match row.get(column) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(RowError::new(column, format!("expected a string, found {}", kind_of(other)))),
    }
}

/// A list column, required.
pub fn required_list<'a>(row: &'a Value, column: &str) -> Result<&'a [Value], RowError> {
    match row.get(column) {
        None | Some(Value::Null) => Err(RowError::new(column, "missing (null)")),
        Some(Value::Array(items)) if items.is_empty() => Err(RowError::new(column, "an empty list: no message")),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(RowError::new(column, format!("expected a list of messages, found {}", kind_of(other)))),
    }
}

/// A list of messages, required: each a record (`COLUMN[i]` names one that is not).
pub fn messages<'a>(row: &'a Value, column: &str) -> Result<&'a [Value], RowError> {
    let items = required_list(row, column)?;
    match items.iter().enumerate().find(|(_, m)| !m.is_object()) {
        Some((i, m)) => {
            Err(RowError::new(&format!("{column}[{i}]"), format!("expected a message, found {}", kind_of(m))))
        }
        None => Ok(items),
    }
}

/// A verdict column: a boolean, or 0/1 (SWE-rebench's `resolved` is an int64); null is unknown.
pub fn verdict(row: &Value, column: &str) -> Result<Option<bool>, RowError> {
    match row.get(column) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(0.0) => Ok(Some(false)),
            Some(1.0) => Ok(Some(true)),
            _ => Err(RowError::new(column, format!("expected a verdict (true/false, 0/1), found {n}"))),
        },
        Some(other) => {
            Err(RowError::new(column, format!("expected a verdict (true/false, 0/1), found {}", kind_of(other))))
        }
    }
}

/// A number column that may be null; a number that is not finite is no value.
pub fn number(row: &Value, column: &str) -> Result<Option<f64>, RowError> {
    match row.get(column) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().filter(|x| x.is_finite())),
        Some(other) => Err(RowError::new(column, format!("expected a number, found {}", kind_of(other)))),
    }
}

/// A count column that may be null: a whole number at least 0.
pub fn count(row: &Value, column: &str) -> Result<Option<i64>, RowError> {
    match number(row, column)? {
        Some(x) if x >= 0.0 && x.fract() == 0.0 => Ok(Some(x.min(i64::MAX as f64) as i64)),
        Some(x) => Err(RowError::new(column, format!("expected a count, found {x}"))),
        None => Ok(None),
    }
}

pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a struct",
    }
}

/// The dataset a shard belongs to: `OWNER/NAME` of a Hugging Face cache folder
/// (`datasets--OWNER--NAME`) on its path, else the kind's published name.
pub fn dataset_name(path: &Path, kind: Kind) -> String {
    for c in path.components().rev() {
        let name = c.as_os_str().to_string_lossy();
        if let Some(rest) = name.strip_prefix("datasets--")
            && let Some((owner, name)) = rest.split_once("--")
            && !owner.is_empty()
            && !name.is_empty()
        {
            return format!("{owner}/{name}");
        }
    }
    kind.dataset().to_string()
}

/// The split a shard's name gives: `train-00000-of-00012.parquet` and `train.parquet` are
/// `train`; `tool-00001-of-00004.parquet` is `tool`. `None` for a name of another shape.
pub fn split_name(path: &Path) -> Option<String> {
    let stem = path.file_name()?.to_string_lossy();
    let stem =
        stem.strip_suffix(".parquet").or_else(|| stem.strip_suffix(".jsonl")).or_else(|| stem.strip_suffix(".json"))?;
    let split = match stem.split_once('-') {
        Some((split, rest)) if rest.split('-').any(|p| p == "of") => split,
        Some(_) => return None,
        None => stem,
    };
    (!split.is_empty() && split.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .then(|| split.to_string())
}

/// What one row gives: its run, and its verdict when it has one.
#[derive(Default)]
pub struct RowRun {
    pub run: Run,
    pub resolved: Option<bool>,
    /// The evaluation's log, when the row keeps it (nebius' `eval_logs`).
    pub log: Option<String>,
    /// The evaluation's tests, when the row reports them (Terminal-Bench's `test_report`).
    pub tests: Vec<TestCase>,
    /// What was odd in the row but did not stop its reading, each named by the row's place.
    pub notes: Vec<String>,
    /// Columns kept in the run's metadata beside where the row is.
    pub extra: Map<String, Value>,
}

/// The warning counting a shard's rows that could not be read.
pub fn rows_lost(path: &Path, failed: usize, total: usize) -> String {
    format!("{}: {failed} of {total} rows could not be read (each named above); the others were", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_are_told_by_their_columns() {
        let cols = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let nebius =
            cols(&["instance_id", "model_name", "target", "trajectory", "exit_status", "generated_patch", "eval_logs"]);
        assert_eq!(Kind::of_columns(&nebius), Some(Kind::Nebius));
        let smith = cols(&["messages", "instance_id", "resolved", "model", "traj_id", "patch"]);
        assert_eq!(Kind::of_columns(&smith), Some(Kind::Smith));
        let rebench = cols(&[
            "trajectory_id",
            "instance_id",
            "repo",
            "trajectory",
            "tools",
            "model_patch",
            "exit_status",
            "resolved",
        ]);
        assert_eq!(Kind::of_columns(&rebench), Some(Kind::Rebench));
        let open_swe = cols(&[
            "instance_id",
            "repo",
            "license",
            "language",
            "trajectory_id",
            "messages",
            "tools",
            "resolved",
            "metadata",
            "hf_dataset_name",
        ]);
        assert_eq!(Kind::of_columns(&open_swe), Some(Kind::OpenSwe));
        let gym = cols(&["instance_id", "run_id", "resolved", "messages", "tools", "test_result"]);
        assert_eq!(Kind::of_columns(&gym), Some(Kind::SweGym));
        let zero = cols(&["instance_id", "repo", "license", "trajectory_id", "trajectory", "model_patch", "dataset"]);
        assert_eq!(Kind::of_columns(&zero), Some(Kind::SweZero));
        // SWE-rebench's rows have a verdict and no `dataset` or `license`; SWE-Zero's the other
        // way round: neither is read as the other.
        assert!(!Kind::SweZero.told().by(&rebench) && !Kind::Rebench.told().by(&zero));
        assert_eq!(Kind::of_columns(&cols(&["messages"])), Some(Kind::R2eGym));
        // `messages` beside anything else is not R2E-Gym's (an OpenAI fine-tuning file's
        // `messages` and `tools`, SWE-smith's, Open-SWE-Traces'): only the columns alone tell it.
        assert_eq!(Kind::of_columns(&cols(&["messages", "tools"])), None);
        assert_eq!(Kind::of_columns(&cols(&["id", "messages"])), None);
        assert!(!Kind::R2eGym.told().by(&smith) && !Kind::R2eGym.told().by(&gym));
        // Chat messages with a verdict and nothing else of either: no dataset.
        assert_eq!(Kind::of_columns(&cols(&["instance_id", "messages", "resolved"])), None);
        // A SWE-bench task has an instance id and a patch, and nothing else of these.
        assert_eq!(Kind::of_columns(&cols(&["instance_id", "patch", "repo", "base_commit"])), None);
    }

    #[test]
    fn names_and_splits_come_from_the_path() {
        let p = Path::new(
            "/h/.cache/huggingface/hub/datasets--nebius--SWE-agent-trajectories/snapshots/abc/data/train-00003-of-00012.parquet",
        );
        assert_eq!(dataset_name(p, Kind::Smith), "nebius/SWE-agent-trajectories");
        assert_eq!(split_name(p).as_deref(), Some("train"));
        assert_eq!(dataset_name(Path::new("/d/x.parquet"), Kind::Smith), "SWE-bench/SWE-smith-trajectories");
        assert_eq!(split_name(Path::new("/d/tool-00000-of-00003.parquet")).as_deref(), Some("tool"));
        assert_eq!(split_name(Path::new("/d/xml.parquet")).as_deref(), Some("xml"));
        assert_eq!(split_name(Path::new("/d/my-shard.parquet")), None);
    }
}
