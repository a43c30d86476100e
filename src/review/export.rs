//! Exports of labels and statistics as CSV, JSON, JSON lines or Markdown. Every export names the
//! taxonomy and version of its labels, and LLM labels carry their model and prompt hash. The
//! column names are stable (docs/LABELLING.md lists them).

use super::stats::{Row, Stats};
use crate::classify::label::Label;
use crate::store::labels::LabelRow;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    Jsonl,
    Markdown,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "jsonl" => Some(Format::Jsonl),
            "markdown" | "md" => Some(Format::Markdown),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write the export: {0}")]
pub struct ExportError(String);

/// A file that could not be written, and why, in the reader's terms: never the name of the
/// temporary file it was written to first, nor the OS's error code.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {why}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub why: WhyNot,
}

#[derive(Debug, thiserror::Error)]
pub enum WhyNot {
    #[error("the folder {} does not exist", .0.display())]
    NoFolder(PathBuf),
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("it is a folder")]
    IsAFolder,
    #[error("the name ends with a slash (a folder's name); give a file name")]
    FolderName,
    #[error("files cannot be created in the folder {}", .0.display())]
    CannotCreate(PathBuf),
    #[error("permission denied (in the folder {})", .0.display())]
    PermissionDenied(PathBuf),
    #[error("the file system is read-only")]
    ReadOnly,
    #[error("no space left on the device")]
    NoSpace,
    /// Another I/O error: the system's message without its code.
    #[error("{0}")]
    Io(String),
}

/// Write `text` to `path` whole or not at all: into a temporary file beside it, then renamed
/// over it, so a reader never sees half a file and a failed write leaves the old one.
/// The file is readable by others (0644 on Unix), as a shared export should be.
pub fn write_file(path: &Path, text: &str) -> Result<(), WriteError> {
    let fail = |why| WriteError { path: path.to_path_buf(), why };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(fail(WhyNot::IsAFolder));
    }
    if path.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) {
        return Err(fail(WhyNot::FolderName));
    }
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(fail(WhyNot::NotAFolder(dir.to_path_buf()))),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(fail(WhyNot::NoFolder(dir.to_path_buf()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(fail(WhyNot::NotAFolder(nearest_file(dir))));
        }
        Err(e) => return Err(fail(why_not(&e, dir))),
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(why_not(&e, dir)))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(|e| fail(why_not(&e, dir)))?;
    // A temporary file is private (0600); an export is for sharing.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(|e| fail(why_not(&e, dir)))?;
    }
    // On failure the temporary file is removed (dropped with the error).
    tmp.persist(path).map_err(|e| fail(why_not(&e.error, dir)))?;
    Ok(())
}

/// An I/O error as a reason; `dir` is the folder written in.
fn why_not(e: &std::io::Error, dir: &Path) -> WhyNot {
    use std::io::ErrorKind;
    match e.kind() {
        // The folder was there a moment ago (it was checked): a file system like /proc.
        ErrorKind::NotFound if dir.is_dir() => WhyNot::CannotCreate(dir.to_path_buf()),
        ErrorKind::NotFound => WhyNot::NoFolder(dir.to_path_buf()),
        ErrorKind::IsADirectory => WhyNot::IsAFolder,
        ErrorKind::NotADirectory => WhyNot::NotAFolder(nearest_file(dir)),
        ErrorKind::PermissionDenied => WhyNot::PermissionDenied(dir.to_path_buf()),
        ErrorKind::ReadOnlyFilesystem => WhyNot::ReadOnly,
        ErrorKind::StorageFull => WhyNot::NoSpace,
        _ => WhyNot::Io(without_code(e)),
    }
}

/// The first ancestor of `dir` (itself included) that exists and is not a folder: what stands
/// where a folder should be.
fn nearest_file(dir: &Path) -> PathBuf {
    dir.ancestors().find(|a| a.exists() && !a.is_dir()).unwrap_or(dir).to_path_buf()
}

/// "Is a directory (os error 21)" -> "is a directory".
fn without_code(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) => &text[..i],
        None => text.as_str(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
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
];

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

fn label_record(e: &ExportedLabel) -> Vec<String> {
    let l = &e.label;
    let p = &l.provenance;
    let llm = l.source == crate::classify::label::Source::Llm;
    let join = |f: &dyn Fn(&crate::classify::label::ModeVerdict) -> String| {
        l.modes.iter().map(f).collect::<Vec<_>>().join(";")
    };
    vec![
        e.label_id.to_string(),
        l.run_id.to_string(),
        opt(&e.instance_id),
        opt(&e.run_model),
        opt(&e.run_agent),
        l.source.name().into(),
        l.rater.clone(),
        l.taxonomy.clone(),
        l.taxonomy_version.clone(),
        e.created_at.clone(),
        l.is_unclassified().to_string(),
        join(&|m| m.mode.clone()),
        join(&|m| format!("{:.2}", m.confidence)),
        join(&|m| {
            format!("{}:{}", m.mode, m.evidence.iter().map(|x| x.step.to_string()).collect::<Vec<_>>().join(","))
        }),
        l.considered.iter().map(|m| m.mode.clone()).collect::<Vec<_>>().join(";"),
        l.exit_category.clone(),
        l.summary.clone(),
        opt(&e.note),
        if llm { opt(&p.model) } else { String::new() },
        if llm { opt(&p.input_hash) } else { String::new() },
        opt(&p.tokens_in),
        opt(&p.tokens_out),
        opt(&p.cost),
        opt(&p.latency_ms),
    ]
}

fn csv(header: &[String], rows: &[Vec<String>]) -> Result<String, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let err = |e: ::csv::Error| ExportError(e.to_string());
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| ExportError(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| ExportError(e.to_string()))
}

/// A Markdown table cell: pipes escaped, newlines as spaces.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn markdown(title: &str, header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!("{title}\n\n| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len()));
    for r in rows {
        out.push_str(&format!("| {} |\n", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")));
    }
    out
}

fn json<T: Serialize + ?Sized>(v: &T, pretty: bool) -> Result<String, ExportError> {
    let text = if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
    text.map_err(|e| ExportError(e.to_string()))
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

/// The CSV columns of a statistics row; then one `mode:<id>` column per mode.
pub const STATS_COLUMNS: &[&str] =
    &["taxonomy", "source", "by", "group", "runs", "labelled", "with_mode", "coverage", "compared", "agreement"];

fn ratio(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_default()
}

fn stats_record(s: &Stats, r: &Row, modes: &[String]) -> Vec<String> {
    let mut v = vec![
        s.taxonomy.clone(),
        s.source.clone(),
        s.by.clone(),
        r.group.clone(),
        r.runs.to_string(),
        r.labelled.to_string(),
        r.with_mode.to_string(),
        ratio(r.coverage),
        r.compared.to_string(),
        ratio(r.agreement),
    ];
    v.extend(modes.iter().map(|m| r.modes.get(m).copied().unwrap_or(0).to_string()));
    v
}

/// "Failure modes", or "Failure modes by model" when grouped.
fn stats_title(by: &str) -> String {
    if by == super::stats::By::All.name() { "Failure modes".to_string() } else { format!("Failure modes by {by}") }
}

/// `modes`: the taxonomy's modes, one column each.
pub fn stats(s: &Stats, modes: &[String], format: Format) -> Result<String, ExportError> {
    let mut header: Vec<String> = STATS_COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(modes.iter().map(|m| format!("mode:{m}")));
    let rows: Vec<Vec<String>> =
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
                let line = serde_json::json!({"taxonomy": s.taxonomy, "source": s.source, "by": s.by, "llm_models": s.llm_models, "row": r});
                json(&line, false).map(|l| l + "\n")
            })
            .collect(),
        Format::Markdown => Ok(markdown(
            &format!("# {} ({}; labels: {}{llm})", stats_title(&s.by), s.taxonomy, s.source),
            &header[3..],
            &rows.into_iter().map(|r| r[3..].to_vec()).collect::<Vec<_>>(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()).unwrap_or_default())
            .collect();
        names.sort();
        names
    }

    fn message(path: &Path) -> String {
        match write_file(path, "text") {
            Ok(()) => panic!("writing {} should fail", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_failed_write_says_why_in_plain_words_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        std::fs::create_dir(d.join("folder")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("file"), "x").unwrap_or_else(|e| panic!("{e}"));
        let cases = [
            (d.join("missing/out.csv"), format!("the folder {} does not exist", d.join("missing").display())),
            (d.join("folder"), "it is a folder".to_string()),
            (d.join("file/out.csv"), format!("{} is not a folder", d.join("file").display())),
            (d.join("file/sub/out.csv"), format!("{} is not a folder", d.join("file").display())),
            (
                PathBuf::from(format!("{}/new/", d.display())),
                "the name ends with a slash (a folder's name); give a file name".to_string(),
            ),
        ];
        for (path, why) in cases {
            assert_eq!(message(&path), format!("cannot write {}: {why}", path.display()));
        }
        assert_eq!(entries(d), ["file", "folder"], "nothing left behind");
        assert!(entries(&d.join("folder")).is_empty());
    }

    #[test]
    fn a_file_is_replaced_whole_and_readable_by_others() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old content, longer than the new").unwrap_or_else(|e| panic!("{e}"));
        write_file(&path, "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default();
            assert_eq!(mode, 0o644);
        }
        assert_eq!(entries(dir.path()), ["out.csv"]);
    }
}
