//! Exports of labels and statistics as CSV, JSON, JSON lines or Markdown. Every export names the
//! taxonomy and version of its labels, and LLM labels carry their model and prompt hash. The
//! column names are stable (docs/LABELLING.md lists them).
//!
//! The text of every format is safe whatever reads it (`cells`): CSV and Markdown show control
//! characters as visible symbols and CSV text cells never start a spreadsheet formula; JSON
//! escapes every control character. Files are written by `file`.

pub mod atif;
mod cells;
mod file;
mod new_file;
pub mod parquet;
pub mod report;
pub mod tables;

pub use cells::{clean, escape_c1};
pub use file::{WhyNot, WriteError, write_file};
pub use new_file::{NAMES, write_new};

use super::stats::{Row, Stats};
use crate::label::Label;
use crate::store::labels::LabelRow;
use cells::Cell;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Format {
    Csv,
    Json,
    Jsonl,
    #[strum(to_string = "markdown", serialize = "md")]
    Markdown,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        s.parse().ok()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write the export: {0}")]
pub struct ExportError(String);

/// Today (UTC), as charts and reports are stamped and named: `2025-06-30`.
pub fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// A label as exported (and imported by `import-labels`): the label whole, with the run it is
/// about named by more than its local id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedLabel {
    /// The shape of this record: 1. Older exports without it are read as 1.
    #[serde(default = "format_one")]
    pub format_version: u32,
    pub label_id: i64,
    /// The run is `label.run_id` (this database's id); elsewhere it is found by instance id,
    /// run model and agent.
    pub instance_id: Option<String>,
    pub run_model: Option<String>,
    pub run_agent: Option<String>,
    /// The RetryAgent attempt the run is, when it is one.
    #[serde(default)]
    pub run_attempt: Option<i64>,
    pub created_at: String,
    pub note: Option<String>,
    /// Whether it was its rater's current label for the run when exported (the latest per run,
    /// source, rater and taxonomy: what `stats` and `agreement` read). Not read back on import:
    /// the importing database decides what is current.
    #[serde(default)]
    pub current: bool,
    #[serde(flatten)]
    pub label: Label,
}

fn format_one() -> u32 {
    1
}

impl ExportedLabel {
    pub fn new(row: &LabelRow, run: Option<&crate::store::read::RunSummary>) -> ExportedLabel {
        ExportedLabel {
            format_version: 1,
            label_id: row.id,
            instance_id: row.instance_id.clone(),
            run_model: run.and_then(|r| r.model.clone()),
            run_agent: run.and_then(|r| r.agent.clone()),
            run_attempt: run.and_then(|r| r.attempt),
            created_at: row.created_at.clone(),
            note: row.note.clone(),
            current: row.current,
            label: row.label.clone(),
        }
    }
}

/// The CSV columns of a label, in order.
pub const LABEL_COLUMNS: &[&str] = &[
    "label_id",
    "run_id",
    "instance_id",
    "run_model",
    "run_agent",
    "source",
    "rater",
    "taxonomy",
    "taxonomy_version",
    "current",
    "created_at",
    "unclassified",
    "modes",
    "confidences",
    "evidence",
    "weighed",
    "exit_category",
    "summary",
    "note",
    "llm_model",
    "prompt_hash",
    "tokens_in",
    "tokens_out",
    "cost",
    "latency_ms",
    "onset_step",
    "onset_confidence",
    "blame",
];

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

fn label_record(e: &ExportedLabel) -> Vec<Cell> {
    let l = &e.label;
    let p = &l.provenance;
    let llm = l.source == crate::label::Source::Llm;
    let onset = l.judgement.onset.as_ref();
    let join = |f: &dyn Fn(&crate::label::ModeVerdict) -> String| l.modes.iter().map(f).collect::<Vec<_>>().join(";");
    let text = Cell::Text;
    let number = |n: String| Cell::Number(n);
    vec![
        number(e.label_id.to_string()),
        number(l.run_id.to_string()),
        text(opt(&e.instance_id)),
        text(opt(&e.run_model)),
        text(opt(&e.run_agent)),
        text(l.source.name().into()),
        text(l.rater.clone()),
        text(l.taxonomy.clone()),
        text(l.taxonomy_version.clone()),
        text(e.current.to_string()),
        text(e.created_at.clone()),
        text(l.is_unclassified().to_string()),
        text(join(&|m| m.mode.clone())),
        text(join(&|m| format!("{:.2}", m.confidence))),
        text(join(&|m| {
            format!("{}:{}", m.mode, m.evidence.iter().map(|x| x.step.to_string()).collect::<Vec<_>>().join(","))
        })),
        text(l.considered.iter().map(|m| m.mode.clone()).collect::<Vec<_>>().join(";")),
        text(l.exit_category.clone()),
        text(l.summary.clone()),
        text(opt(&e.note)),
        text(if llm { opt(&p.model) } else { String::new() }),
        text(if llm { opt(&p.input_hash) } else { String::new() }),
        number(opt(&p.tokens_in)),
        number(opt(&p.tokens_out)),
        number(opt(&p.cost)),
        number(opt(&p.latency_ms)),
        number(opt(&onset.and_then(|o| o.step))),
        number(opt(&onset.map(|o| o.confidence))),
        text(l.judgement.blame.as_ref().and_then(|b| b.value).map(|b| b.name().to_string()).unwrap_or_default()),
    ]
}

/// The header's names are text cells too (a `mode:<id>` column names a taxonomy's mode).
fn csv(header: &[String], rows: &[Vec<Cell>]) -> Result<String, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let err = |e: ::csv::Error| ExportError(e.to_string());
    w.write_record(header.iter().map(|h| cells::csv_text(h))).map_err(err)?;
    for r in rows {
        w.write_record(r.iter().map(|c| match c {
            Cell::Text(t) => cells::csv_text(t),
            Cell::Number(n) => n.clone(),
        }))
        .map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| ExportError(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| ExportError(e.to_string()))
}

fn markdown(title: &str, header: &[String], rows: &[Vec<Cell>]) -> String {
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = format!("{}\n\n", cells::markdown_line(title));
    out.push_str(&row(header.iter().map(|h| cells::markdown_cell(h)).collect()));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        out.push_str(&row(r
            .iter()
            .map(|c| match c {
                Cell::Text(t) => cells::markdown_cell(t),
                Cell::Number(n) => n.clone(),
            })
            .collect()));
    }
    out
}

/// JSON with the C1 controls escaped too (serde_json escapes only C0).
fn json<T: Serialize + ?Sized>(v: &T, pretty: bool) -> Result<String, ExportError> {
    let text = if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
    text.map(|t| escape_c1(&t)).map_err(|e| ExportError(e.to_string()))
}

pub fn labels(rows: &[ExportedLabel], format: Format) -> Result<String, ExportError> {
    let header: Vec<String> = LABEL_COLUMNS.iter().map(|c| c.to_string()).collect();
    match format {
        Format::Csv => csv(&header, &rows.iter().map(label_record).collect::<Vec<_>>()),
        Format::Json => Ok(json(rows, true)? + "\n"),
        Format::Jsonl => rows.iter().map(|r| json(r, false).map(|l| l + "\n")).collect(),
        Format::Markdown => {
            let taxonomies: std::collections::BTreeSet<String> =
                rows.iter().map(|r| format!("{}@{}", r.label.taxonomy, r.label.taxonomy_version)).collect();
            let title = format!(
                "# Labels ({} labels; taxonomy {})",
                rows.len(),
                taxonomies.into_iter().collect::<Vec<_>>().join(", ")
            );
            Ok(markdown(&title, &header, &rows.iter().map(label_record).collect::<Vec<_>>()))
        }
    }
}

/// The CSV columns of a note on a step, in order.
pub const NOTE_COLUMNS: &[&str] = &["note_id", "run_id", "instance_id", "step", "rater", "created_at", "text"];

/// Reviewers' notes on steps (`export notes`).
pub fn notes(rows: &[crate::store::notes::NoteRow], format: Format) -> Result<String, ExportError> {
    let header: Vec<String> = NOTE_COLUMNS.iter().map(|c| c.to_string()).collect();
    let record = |n: &crate::store::notes::NoteRow| {
        vec![
            Cell::Number(n.id.to_string()),
            Cell::Number(n.run_id.to_string()),
            Cell::Text(opt(&n.instance_id)),
            Cell::Number(n.step.to_string()),
            Cell::Text(n.rater.clone()),
            Cell::Text(n.created_at.clone()),
            Cell::Text(n.text.clone()),
        ]
    };
    let records: Vec<Vec<Cell>> = rows.iter().map(record).collect();
    match format {
        Format::Csv => csv(&header, &records),
        Format::Json => Ok(json(rows, true)? + "\n"),
        Format::Jsonl => rows.iter().map(|r| json(r, false).map(|l| l + "\n")).collect(),
        Format::Markdown => Ok(markdown(&format!("# Notes on steps ({} notes)", rows.len()), &header, &records)),
    }
}

/// The CSV columns of a statistics row; then one `mode:<id>` column per mode.
pub const STATS_COLUMNS: &[&str] = &[
    "taxonomy",
    "source",
    "by",
    "group",
    "runs",
    "labelled",
    "with_mode",
    "coverage",
    "compared",
    "agreement",
    "blamed_task",
    "blamed_environment",
    "blame_unjudged",
];

fn ratio(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_default()
}

fn stats_record(s: &Stats, r: &Row, modes: &[String]) -> Vec<Cell> {
    let number = |n: String| Cell::Number(n);
    let mut v = vec![
        Cell::Text(s.taxonomy.clone()),
        Cell::Text(s.source.clone()),
        Cell::Text(s.by.clone()),
        Cell::Text(r.group.clone()),
        number(r.runs.to_string()),
        number(r.labelled.to_string()),
        number(r.with_mode.to_string()),
        number(ratio(r.coverage)),
        number(r.compared.to_string()),
        number(ratio(r.agreement)),
        number(r.blamed_task.to_string()),
        number(r.blamed_environment.to_string()),
        number(r.blame_unjudged.to_string()),
    ];
    v.extend(modes.iter().map(|m| number(r.modes.get(m).copied().unwrap_or(0).to_string())));
    v
}

/// The resolve rates of every group, runs and evaluations without a trajectory together, as the
/// charts and the report give them.
fn resolve_table(s: &Stats) -> String {
    let number = |n: usize| Cell::Number(n.to_string());
    let header: Vec<String> =
        ["group", "runs", "resolved", "failed", "unknown", "without a trajectory", "resolve rate"]
            .map(String::from)
            .to_vec();
    let rows: Vec<Vec<Cell>> = s
        .outcomes
        .iter()
        .chain(std::iter::once(&s.outcomes_total))
        .map(|o| {
            vec![
                Cell::Text(o.group.clone()),
                number(o.runs),
                number(o.resolved),
                number(o.failed),
                number(o.unknown),
                number(o.no_trajectory),
                Cell::Text(o.rate_text()),
            ]
        })
        .collect();
    format!("\n{}", markdown("## Resolve rates (runs, and evaluations without a trajectory)", &header, &rows))
}

/// "Failure modes", or "Failure modes by model" when grouped.
fn stats_title(by: &str) -> String {
    if by == super::stats::By::All.name() { "Failure modes".to_string() } else { format!("Failure modes by {by}") }
}

/// `modes`: the taxonomy's modes, one column each.
pub fn stats(s: &Stats, modes: &[String], format: Format) -> Result<String, ExportError> {
    let mut header: Vec<String> = STATS_COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(modes.iter().map(|m| format!("mode:{m}")));
    let rows: Vec<Vec<Cell>> =
        s.rows.iter().chain(std::iter::once(&s.total)).map(|r| stats_record(s, r, modes)).collect();
    let llm = if s.llm_models.is_empty() {
        String::new()
    } else {
        let models: Vec<String> = s.llm_models.iter().map(|(m, n)| format!("{m} ({n} prompts)")).collect();
        format!("; LLM labels from {}", models.join(", "))
    };
    match format {
        Format::Csv => csv(&header, &rows),
        Format::Json => Ok(json(s, true)? + "\n"),
        Format::Jsonl => s
            .rows
            .iter()
            .chain(std::iter::once(&s.total))
            .map(|r| {
                let line = serde_json::json!({"taxonomy": s.taxonomy, "source": s.source, "by": s.by, "llm_models": s.llm_models, "blame_note": s.blame_note, "row": r});
                json(&line, false).map(|l| l + "\n")
            })
            .collect(),
        Format::Markdown => {
            // Read by people: the agreement columns only when some run has two raters to
            // compare, else a line that says why they are not there.
            let compared = s.rows.iter().chain(std::iter::once(&s.total)).any(|r| r.compared > 0);
            let keep = |i: usize| i >= 3 && (compared || !matches!(STATS_COLUMNS.get(i), Some(&"compared" | &"agreement")));
            let pick = |r: &[Cell]| r.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| c.clone()).collect();
            let header: Vec<String> = header.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, h)| h.clone()).collect();
            let mut text = markdown(
                &format!("# {} ({}; labels: {}{llm})", stats_title(&s.by), s.taxonomy, s.source),
                &header,
                &rows.iter().map(|r| pick(r)).collect::<Vec<Vec<Cell>>>(),
            );
            if let Some(note) = super::stats::agreement_note(s) {
                let note = note.strip_prefix("agreement: ").unwrap_or(&note);
                text.push_str(&format!("\nAgreement: {note} `trajan agreement`.\n"));
            }
            // Runs set apart by their blame, never silently.
            text.push_str(&format!("\nBlame: {}\n", cells::markdown_line(&s.blame_note)));
            if let Some(note) = super::stats::gold_note(s) {
                text.push_str(&format!("\nGold patch: {note}.\n"));
            }
            text.push_str(&resolve_table(s));
            Ok(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An LLM label on a run whose instance id, model, agent and note are formulas or carry
    /// escape sequences, with a negative cost (a number, which must stay one).
    fn hostile_label() -> ExportedLabel {
        let label = serde_json::json!({
            "label_id": 7, "run_id": 3, "instance_id": "=HYPERLINK(\"http://x\",\"y\")", "run_model": "@SUM(1+1)",
            "run_agent": "-agent", "created_at": "2025-01-01T00:00:00.000Z", "note": "+1\u{1b}]0;t\u{7}|a\\|b\nc",
            "source": "llm", "rater": "\tm", "taxonomy": "t", "taxonomy_version": "1.0", "modes": [],
            "provenance": {"model": "=m", "input_hash": "h", "tokens_in": 1, "tokens_out": 2, "cost": -0.5, "latency_ms": 3}
        });
        serde_json::from_value(label).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn csv_text_cells_never_start_a_formula_and_numbers_stay_numbers() {
        let text = labels(&[hostile_label()], Format::Csv).unwrap_or_else(|e| panic!("{e}"));
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> =
            reader.headers().map(|h| h.iter().map(str::to_string).collect()).unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<::csv::StringRecord> = reader.records().map(|r| r.unwrap_or_else(|e| panic!("{e}"))).collect();
        assert_eq!(rows.len(), 1);
        let get = |column: &str| {
            let i = header.iter().position(|h| h == column).unwrap_or_else(|| panic!("no column {column}"));
            rows[0].get(i).unwrap_or_default().to_string()
        };
        assert_eq!(get("instance_id"), "'=HYPERLINK(\"http://x\",\"y\")");
        assert_eq!(get("run_model"), "'@SUM(1+1)");
        assert_eq!(get("run_agent"), "'-agent");
        assert_eq!(get("rater"), "'\tm");
        assert_eq!(get("note"), "'+1\u{241b}]0;t\u{2407}|a\\|b\nc");
        assert_eq!(get("llm_model"), "'=m");
        assert_eq!(
            (get("label_id"), get("run_id"), get("cost"), get("tokens_in")),
            ("7".into(), "3".into(), "-0.5".into(), "1".into())
        );
    }

    #[test]
    fn markdown_rows_keep_their_cells_whatever_the_text() {
        let text = labels(&[hostile_label()], Format::Markdown).unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 3, "header, rule, one label:\n{text}");
        // Cells are split at pipes no backslash escapes.
        let cells = |row: &str| {
            let (mut n, mut escaped) = (0, false);
            for c in row.chars() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '|' => n += 1,
                    _ => {}
                }
            }
            n - 1
        };
        assert_eq!(cells(rows[2]), LABEL_COLUMNS.len(), "{}", rows[2]);
        assert!(
            rows[2].contains("| =HYPERLINK(\"http://x\",\"y\") | @SUM(1+1) |"),
            "no quote outside CSV: {}",
            rows[2]
        );
        assert!(rows[2].contains("+1\u{241b}]0;t\u{2407}\\|a\\\\\\|b c"), "{}", rows[2]);
    }

    #[test]
    fn json_exports_escape_every_control() {
        for format in [Format::Json, Format::Jsonl] {
            let mut label = hostile_label();
            label.note = Some("c1\u{9b}31m del\u{7f} esc\u{1b}".into());
            let text = labels(std::slice::from_ref(&label), format).unwrap_or_else(|e| panic!("{e}"));
            assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
            assert!(text.contains("c1\\u009b31m del\\u007f esc\\u001b"), "{text}");
        }
    }
}
