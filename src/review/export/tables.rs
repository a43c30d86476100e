//! The tables `export runs|steps|edits|labels` write, as typed columns: one definition each,
//! shared by CSV and Parquet, so both carry the same column names (docs/LABELLING.md lists them).

use crate::label::Blame;
use crate::store::export::{EditTableRow, StepTableRow};
use crate::store::read::RunRow;

/// A column's type (Parquet: INT64, DOUBLE, BOOLEAN, UTF8 strings; all nullable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Text,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
    Text(Option<String>),
}

impl Value {
    /// As a CSV cell: numbers as written, booleans `true` / `false`, nothing as empty.
    pub(super) fn csv(&self) -> super::cells::Cell {
        use super::cells::Cell;
        match self {
            Value::Int(v) => Cell::Number(v.map(|n| n.to_string()).unwrap_or_default()),
            Value::Float(v) => Cell::Number(v.map(|n| n.to_string()).unwrap_or_default()),
            Value::Bool(v) => Cell::Text(v.map(|b| b.to_string()).unwrap_or_default()),
            Value::Text(v) => Cell::Text(v.clone().unwrap_or_default()),
        }
    }
}

pub type Columns = &'static [(&'static str, Kind)];

pub const RUN_COLUMNS: Columns = &[
    ("run_id", Kind::Int),
    ("instance_id", Kind::Text),
    ("format", Kind::Text),
    ("format_version", Kind::Text),
    ("agent", Kind::Text),
    ("model", Kind::Text),
    ("exit_status", Kind::Text),
    ("resolved", Kind::Bool),
    ("steps", Kind::Int),
    ("edits", Kind::Int),
    ("rejected_edits", Kind::Int),
    ("cost", Kind::Float),
    ("tokens_sent", Kind::Int),
    ("tokens_received", Kind::Int),
    ("api_calls", Kind::Int),
    ("attempt", Kind::Int),
    ("source", Kind::Text),
    ("blame", Kind::Text),
];

/// A run's values in [`RUN_COLUMNS`] order; `blame`: the run's blame as the statistics read it
/// (`review::stats::run_blames`).
pub fn run_values(r: &RunRow, blame: Option<Blame>) -> Vec<Value> {
    use Value::*;
    let (s, u) = (&r.summary, &r.usage);
    vec![
        Int(Some(s.id)),
        Text(Some(s.instance_id.clone())),
        Text(Some(s.format.name().to_string())),
        Text(s.format_version.clone()),
        Text(s.agent.clone()),
        Text(s.model.clone()),
        Text(s.exit_status.clone()),
        Bool(s.resolved),
        Int(Some(s.steps)),
        Int(Some(s.edits)),
        Int(Some(s.rejected_edits)),
        Float(s.cost),
        Int(u.tokens_sent),
        Int(u.tokens_received),
        Int(u.api_calls),
        Int(s.attempt),
        Text(Some(s.source.clone())),
        Text(blame.map(|b| b.name().to_string())),
    ]
}

pub const STEP_COLUMNS: Columns = &[
    ("run_id", Kind::Int),
    ("instance_id", Kind::Text),
    ("step", Kind::Int),
    ("tool", Kind::Text),
    ("edit", Kind::Bool),
    ("edit_rejected", Kind::Bool),
    ("error", Kind::Bool),
    ("output_clipped", Kind::Bool),
    ("test_run", Kind::Bool),
    ("format_error", Kind::Bool),
    ("observation_chars", Kind::Int),
    ("tokens_in", Kind::Int),
    ("tokens_out", Kind::Int),
    ("execution_time", Kind::Float),
    ("timestamp", Kind::Text),
    ("thought", Kind::Text),
    ("action", Kind::Text),
    ("observation", Kind::Text),
];

pub fn step_values(r: StepTableRow) -> Vec<Value> {
    use Value::*;
    let f = r.flags;
    vec![
        Int(Some(r.run_id)),
        Text(Some(r.instance_id)),
        Int(Some(r.step)),
        Text(r.tool),
        Bool(Some(f.edit)),
        Bool(Some(f.edit_rejected)),
        Bool(Some(f.error)),
        Bool(Some(f.output_clipped)),
        Bool(Some(f.test_run)),
        Bool(Some(f.format_error)),
        Int(Some(r.observation_chars)),
        Int(r.tokens_in),
        Int(r.tokens_out),
        Float(r.execution_time),
        Text(r.timestamp),
        Text(Some(r.thought)),
        Text(Some(r.action)),
        Text(Some(r.observation)),
    ]
}

pub const EDIT_COLUMNS: Columns = &[
    ("run_id", Kind::Int),
    ("instance_id", Kind::Text),
    ("step", Kind::Int),
    ("path", Kind::Text),
    ("kind", Kind::Text),
    ("status", Kind::Text),
    ("lint_codes", Kind::Text),
    ("diff", Kind::Text),
];

pub fn edit_values(r: EditTableRow) -> Vec<Value> {
    use Value::*;
    vec![
        Int(Some(r.run_id)),
        Text(Some(r.instance_id)),
        Int(r.step),
        Text(Some(r.path)),
        Text(Some(r.kind)),
        Text(Some(r.status)),
        Text(Some(r.lint_codes)),
        Text(r.diff),
    ]
}

/// The label columns of [`super::LABEL_COLUMNS`], typed.
pub const LABEL_KINDS: Columns = &[
    ("label_id", Kind::Int),
    ("run_id", Kind::Int),
    ("instance_id", Kind::Text),
    ("run_model", Kind::Text),
    ("run_agent", Kind::Text),
    ("source", Kind::Text),
    ("rater", Kind::Text),
    ("taxonomy", Kind::Text),
    ("taxonomy_version", Kind::Text),
    ("current", Kind::Bool),
    ("created_at", Kind::Text),
    ("unclassified", Kind::Bool),
    ("modes", Kind::Text),
    ("confidences", Kind::Text),
    ("evidence", Kind::Text),
    ("weighed", Kind::Text),
    ("exit_category", Kind::Text),
    ("summary", Kind::Text),
    ("note", Kind::Text),
    ("llm_model", Kind::Text),
    ("prompt_hash", Kind::Text),
    ("tokens_in", Kind::Int),
    ("tokens_out", Kind::Int),
    ("cost", Kind::Float),
    ("latency_ms", Kind::Int),
    ("onset_step", Kind::Int),
    ("onset_confidence", Kind::Float),
    ("blame", Kind::Text),
];

/// A label's values in [`LABEL_KINDS`] order: the CSV record's cells, typed.
pub fn label_values(e: &super::ExportedLabel) -> Vec<Value> {
    super::label_record(e)
        .into_iter()
        .zip(LABEL_KINDS)
        .map(|(cell, (_, kind))| {
            let text = match cell {
                super::cells::Cell::Text(t) | super::cells::Cell::Number(t) => t,
            };
            let blank = text.is_empty();
            match kind {
                Kind::Int => Value::Int(text.parse().ok()),
                Kind::Float => Value::Float(text.parse().ok()),
                Kind::Bool => Value::Bool(text.parse().ok()),
                Kind::Text => Value::Text((!blank).then_some(text)),
            }
        })
        .collect()
}

/// A table as CSV (the same cells rules as every CSV export).
pub fn csv(columns: Columns, rows: impl Iterator<Item = Vec<Value>>) -> Result<String, super::ExportError> {
    let header: Vec<String> = columns.iter().map(|(n, _)| n.to_string()).collect();
    let cells: Vec<Vec<super::cells::Cell>> = rows.map(|r| r.iter().map(Value::csv).collect()).collect();
    super::csv(&header, &cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_kinds_name_the_csv_columns_in_order() {
        let names: Vec<&str> = LABEL_KINDS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, super::super::LABEL_COLUMNS);
    }
}
