//! Ingestion: find units, detect their format, parse them into the normalized [`Parsed`] model.
//!
//! One module per input format; each exposes `parse(path, text) -> Result<Parsed, IngestError>`
//! (folder formats take their member files). This module only decides which one to call.

pub mod agentless;
pub mod aider;
pub mod archive;
pub mod atif;
pub mod claude_code;
pub mod codex;
pub mod ctrf;
pub mod dataset;
pub mod detect;
pub mod eval_log;
pub mod experiments;
pub mod file_name;
pub mod harbor;
pub mod harness;
pub mod json;
pub mod layout;
pub mod lenient;
pub mod mini_swe_agent;
pub mod moatless;
pub mod open;
pub mod openclaw;
pub mod openhands;
pub mod pipeline;
pub mod polybench;
pub mod predictions;
pub mod rovo_dev;
pub mod skip;
pub mod source;
pub mod stream;
pub mod stream_doc;
pub mod swe_agent;
pub mod swebench_dataset;
pub mod terminal_bench;
pub mod truncated;
pub mod turns;
pub mod unittest;

use crate::error::{IngestError, Location};
use crate::model::{Format, Parsed};
use detect::{Detected, Shape};
use skip::{Skip, SkipKind};
use source::{Loaded, UnitKind};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The result of parsing one unit.
pub enum Outcome {
    Parsed {
        format: Format,
        parsed: Parsed,
    },
    /// Not an input of any kind (a README, a run's metadata, an image): counted by kind, not an
    /// error.
    Skipped(Skip),
}

/// Parse a loaded unit. `forced` skips detection (`--format`).
pub fn parse_loaded(loaded: &Loaded, forced: Option<Format>) -> Result<Outcome, IngestError> {
    match loaded.unit.kind {
        UnitKind::HarnessDir => {
            let mut warnings = Vec::new();
            let files: Vec<(PathBuf, String)> =
                loaded.files.iter().map(|(p, b)| (p.clone(), decode(p, b, &mut warnings).into_owned())).collect();
            let mut parsed = harness::parse_dir(&loaded.unit.path, &files)?;
            if let Some(why) = parsed.nothing.take().filter(|_| parsed.is_empty()) {
                return Ok(Outcome::Skipped(Skip::not_read(why)));
            }
            parsed.warnings.extend(warnings);
            Ok(Outcome::Parsed { format: Format::SwebenchHarness, parsed })
        }
        UnitKind::EventDir => {
            let mut events = Vec::with_capacity(loaded.files.len());
            let mut warnings = Vec::new();
            for (p, b) in &loaded.files {
                let text = decode(p, b, &mut warnings);
                match json::parse_value_lenient(p, &text, &mut warnings) {
                    Ok(v) => events.push(v),
                    Err(e) => warnings.push(e.to_string()),
                }
            }
            if events.is_empty() {
                return Err(IngestError::parse(&loaded.unit.path, None, "no readable event files"));
            }
            let mut parsed = openhands::parse_events(&loaded.unit.path, events)?;
            parsed.warnings.extend(warnings);
            Ok(Outcome::Parsed { format: Format::OpenHandsEvents, parsed })
        }
        UnitKind::HarborTrial => {
            let mut warnings = Vec::new();
            let files: Vec<(PathBuf, String)> =
                loaded.files.iter().map(|(p, b)| (p.clone(), decode(p, b, &mut warnings).into_owned())).collect();
            let mut parsed = harbor::parse_trial(&loaded.unit.path, &files)?;
            parsed.warnings.extend(warnings);
            Ok(Outcome::Parsed { format: Format::Atif, parsed })
        }
        UnitKind::Conversation => {
            let mut warnings = Vec::new();
            let (mut state, mut events) = (None, 0);
            let mut conversation = openhands::v1::Conversation::default();
            for (p, b) in &loaded.files {
                let text = decode(p, b, &mut warnings);
                match json::parse_value_lenient(p, &text, &mut warnings) {
                    Ok(v) if p.file_name().is_some_and(|n| n == "base_state.json") => state = Some(v),
                    Ok(v) => {
                        conversation.event(v);
                        events += 1;
                    }
                    Err(e) => warnings.push(e.to_string()),
                }
            }
            if events == 0 {
                return Err(IngestError::parse(&loaded.unit.path, None, "no readable event files"));
            }
            let mut parsed = conversation.finish(&loaded.unit.path, state.as_ref());
            parsed.warnings.splice(0..0, warnings);
            Ok(Outcome::Parsed { format: Format::OpenHandsV1, parsed })
        }
        UnitKind::AgentlessStage => {
            let mut warnings = Vec::new();
            let files: Vec<(PathBuf, String)> =
                loaded.files.iter().map(|(p, b)| (p.clone(), decode(p, b, &mut warnings).into_owned())).collect();
            let mut parsed = agentless::parse_stage(&loaded.unit.path, &files)?;
            parsed.warnings.splice(0..0, warnings);
            Ok(Outcome::Parsed { format: Format::Agentless, parsed })
        }
        UnitKind::TerminalBenchTrial => {
            let mut warnings = Vec::new();
            let files: Vec<(PathBuf, String)> =
                loaded.files.iter().map(|(p, b)| (p.clone(), decode(p, b, &mut warnings).into_owned())).collect();
            let mut parsed = terminal_bench::parse_trial(&loaded.unit.path, &files)?;
            parsed.warnings.splice(0..0, warnings);
            Ok(Outcome::Parsed { format: Format::TerminalBench, parsed })
        }
        UnitKind::File => {
            let (path, bytes) =
                loaded.files.first().ok_or_else(|| IngestError::Empty { path: loaded.unit.path.clone() })?;
            parse_file(path, bytes, forced)
        }
    }
}

/// Parse one file's bytes.
pub fn parse_file(path: &Path, bytes: &[u8], forced: Option<Format>) -> Result<Outcome, IngestError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        // An empty trajectory or log is an error (an interrupted write, a lost file); an empty
        // `__init__.py` or README beside the runs is just not an input.
        return if looks_like_input(path) {
            Err(IngestError::Empty { path: path.to_path_buf() })
        } else {
            Ok(Outcome::Skipped(Skip::empty()))
        };
    }
    if dataset::parquet::is_parquet(bytes) {
        return parquet_outcome(path, bytes, forced);
    }
    if let Some(nul) = bytes.iter().take(source::SNIFF_BYTES).position(|b| *b == 0) {
        return binary_outcome(source::binary(path, nul));
    }
    let mut warnings = Vec::new();
    let text = decode(path, bytes, &mut warnings);
    let outcome = match detect_and_parse(path, bytes, &text, forced) {
        Ok(outcome) => outcome,
        // Only a failed parse looks further: a good file pays nothing for what follows.
        Err(e) => recover(path, bytes, &text, forced, e, &mut warnings)?,
    };
    Ok(match outcome {
        Outcome::Parsed { format, mut parsed } => {
            parsed.warnings.splice(0..0, warnings);
            Outcome::Parsed { format, parsed }
        }
        skipped @ Outcome::Skipped(_) => skipped,
    })
}

/// A Parquet file read from memory (an archive's member): a dataset's shard (the one `forced`
/// names, else the one its columns tell), or skipped with its columns named.
fn parquet_outcome(path: &Path, bytes: &[u8], forced: Option<Format>) -> Result<Outcome, IngestError> {
    match dataset::parquet::parse_bytes(path, bytes.to_vec(), dataset::parquet::Limits::default(), forced)? {
        Some((format, parsed)) => Ok(Outcome::Parsed { format, parsed }),
        None => Ok(Outcome::Skipped(Skip::new(SkipKind::Binary, "Parquet of no known dataset".to_string()))),
    }
}

/// A Parquet shard whose columns name no dataset trajan reads: skipped, its columns named.
pub fn unknown_parquet(columns: &[String]) -> Skip {
    Skip::new(SkipKind::Binary, format!("Parquet of no known dataset (columns: {})", skip::key_list(columns)))
}

/// Binary content (`error` says where): an error when the file's name says it is an input (a
/// `.traj`, `.json`, a log), else skipped: an image or a compiled file beside the runs.
pub fn binary_outcome(error: IngestError) -> Result<Outcome, IngestError> {
    let path = match &error {
        IngestError::Parse { path, .. } => path,
        _ => return Err(error),
    };
    if looks_like_input(path) {
        return Err(error);
    }
    let reason = match &error {
        IngestError::Parse { location: Some(at), message, .. } => format!("{at}: {message}"),
        other => other.to_string(),
    };
    Ok(Outcome::Skipped(Skip::new(SkipKind::Binary, reason)))
}

/// Detect the format (unless forced) and parse the text.
fn detect_and_parse(path: &Path, bytes: &[u8], text: &str, forced: Option<Format>) -> Result<Outcome, IngestError> {
    let format = match forced {
        Some(f) => return parse_forced(f, path, text),
        None => {
            let shape = detect::shape(text);
            match detect::detect(&shape, text) {
                Detected::Format(f) => f,
                // Text that is not valid UTF-8 and not JSON is binary, not a README to skip.
                Detected::NotInput => {
                    return match first_invalid_utf8(bytes) {
                        Some(at) => binary_outcome(IngestError::parse(
                            path,
                            Some(Location::Byte(at)),
                            "binary content (not UTF-8 text): not a trajectory or a test log",
                        )),
                        None => Ok(Outcome::Skipped(Skip::text())),
                    };
                }
                Detected::Demonstration => return Ok(Outcome::Skipped(Skip::demonstration())),
                Detected::NotRead(what) => return Ok(Outcome::Skipped(Skip::not_read(what))),
                // JSON lines are told by their first line's keys alone.
                Detected::NeedsValue if matches!(shape, Shape::Lines(_)) => return unknown(path, &shape),
                Detected::NeedsValue => {
                    let v = json::parse_value(path, text)?;
                    if experiments::is_breakdown(&v) {
                        let why = "a SWE-bench/experiments breakdown of the results (results.json holds the verdicts)";
                        return Ok(Outcome::Skipped(Skip::new(SkipKind::Json, why.to_string())));
                    }
                    match detect::detect_value(&v) {
                        Some(f) => f,
                        None => return unknown(path, &shape),
                    }
                }
            }
        }
    };
    let parsed = parse_as(format, path, text)?;
    match parsed.nothing {
        Some(why) if parsed.is_empty() => Ok(Outcome::Skipped(Skip::not_read(why))),
        _ => Ok(Outcome::Parsed { format, parsed }),
    }
}

/// A file read as the format `--format` named. What reads as nothing (no run, outcome,
/// prediction or task) is an error saying so, never an empty success.
fn parse_forced(format: Format, path: &Path, text: &str) -> Result<Outcome, IngestError> {
    let parsed = parse_as(format, path, text)?;
    if parsed.is_empty() {
        let found = match detect::detect(&detect::shape(text), text) {
            Detected::Format(f) if f != format => format!(" (it reads as {})", f.name()),
            _ => String::new(),
        };
        return Err(IngestError::shape(
            path,
            format!("read as {} (--format), the file gives no run, outcome, prediction or task{found}", format.name()),
        ));
    }
    Ok(Outcome::Parsed { format, parsed })
}

/// A file whose parse failed (`error`): read again with Python's non-standard values (`NaN`,
/// `Infinity`, `1e400`, lone surrogates) replaced (`lenient`), with a warning for each kind; then,
/// if the text ends inside a value, the complete steps before the cut (`salvage`).
fn recover(
    path: &Path,
    bytes: &[u8],
    text: &str,
    forced: Option<Format>,
    error: IngestError,
    warnings: &mut Vec<String>,
) -> Result<Outcome, IngestError> {
    let fixed = lenient::rewrite(text);
    let (text, error) = match &fixed {
        Some(fixed) => {
            warnings.extend(fixed.warnings(path, text, None));
            match detect_and_parse(path, bytes, &fixed.text, forced) {
                Ok(outcome) => return Ok(outcome),
                Err(e) => (fixed.text.as_str(), e),
            }
        }
        None => (text, error),
    };
    if !truncated::is_cut(text) {
        return Err(error);
    }
    let outcome = salvage(path, text, forced, bytes.len(), error)?;
    if truncated::ends_inside_char(bytes) {
        // The cut went through a character: the truncation warning says it all.
        warnings.retain(|w| !w.ends_with("invalid UTF-8 replaced with U+FFFD"));
    }
    Ok(outcome)
}

/// A file cut mid-write (`size` bytes, ending inside a JSON value; `error` is what the normal
/// parse said): the complete steps before the cut, with a warning naming the byte where the file
/// ends. When nothing complete comes before the cut, `error` with that said: a run with no step
/// would tell nothing of what the agent did, yet count as a run.
fn salvage(
    path: &Path,
    text: &str,
    forced: Option<Format>,
    size: usize,
    error: IngestError,
) -> Result<Outcome, IngestError> {
    // JSON lines are read a line at a time: a cut line is a warning naming its number, never
    // salvaged; a one-line file cut mid-line is no different.
    let jsonl = path.extension().is_some_and(|e| e == "jsonl");
    let kept = truncated::scan(text).filter(|_| !jsonl).and_then(|scan| {
        let format = forced.or_else(|| scan.format(text))?;
        let prefix = scan.prefix(text, format)?;
        parse_as(format, path, &prefix).ok().map(|parsed| (format, parsed))
    });
    let Some((format, mut parsed)) = kept else {
        return Err(
            error.with_note(&format!("the file is truncated at byte {size}; nothing before the cut could be kept"))
        );
    };
    let steps: usize = parsed.runs.iter().map(|r| r.steps.len()).sum();
    if steps == 0 {
        return Err(error.with_note(&format!("the file is truncated at byte {size}, before its first complete step")));
    }
    let noun = if steps == 1 { "step" } else { "steps" };
    parsed.warnings.insert(
        0,
        format!("{}: truncated at byte {size}: kept the {steps} complete {noun} before the cut", path.display()),
    );
    Ok(Outcome::Parsed { format, parsed })
}

fn parse_as(format: Format, path: &Path, text: &str) -> Result<Parsed, IngestError> {
    match format {
        Format::SweAgent => swe_agent::parse(path, text),
        Format::SweAgentPreds => predictions::parse(path, text),
        Format::MiniSweAgent => mini_swe_agent::parse(path, text),
        Format::OpenHands => openhands::parse(path, text),
        Format::OpenHandsEvents => {
            let v = json::parse_value(path, text)?;
            let events = match v {
                serde_json::Value::Array(items) => items,
                single => vec![single],
            };
            openhands::parse_events(path, events)
        }
        Format::SwebenchReport => harness::parse_report(path, text),
        Format::SwebenchSummary => harness::parse_summary(path, text),
        Format::SwebenchDataset => swebench_dataset::parse(path, text),
        Format::SwebenchHarness => {
            let dir = path.parent().unwrap_or(path);
            harness::parse_dir(dir, &[(path.to_path_buf(), text.to_string())])
        }
        Format::UnittestText => unittest::parse(path, text),
        Format::Atif => atif::parse(path, text),
        Format::OpenHandsResolver => openhands::resolver::parse(path, text),
        Format::MultiSwebenchPreds => predictions::parse(path, text),
        Format::MultiSwebenchDataset => swebench_dataset::parse(path, text),
        Format::SwebenchEvalLog => eval_log::parse(path, text),
        Format::OpenHandsV1 => openhands::parse_v1(path, text),
        Format::CodexCli => codex::parse(path, text),
        Format::ClaudeCode => claude_code::parse(path, text),
        Format::Aider => aider::parse(path, text),
        Format::Moatless => moatless::parse(path, text),
        Format::Agentless => agentless::parse(path, text),
        Format::TerminalBench => terminal_bench::parse_results(path, text),
        Format::OpenClaw => openclaw::parse(path, text),
        Format::RovoDev => rovo_dev::parse(path, text),
        Format::NebiusSweAgent
        | Format::SweRebenchOpenHands
        | Format::SweSmith
        | Format::OpenSweTraces
        | Format::SweGymOpenHands
        | Format::TerminalBenchRows
        | Format::SweZeroOpenHands
        | Format::R2eGymSft => dataset::parse(path, text, dataset::Kind::of_format(format)),
    }
}

/// JSON of no known format: skipped (run metadata, configs), or an error when the file's name
/// says it is a trajectory (`.traj`): a trajectory trajan cannot read is not a file to pass over.
fn unknown(path: &Path, shape: &Shape) -> Result<Outcome, IngestError> {
    let detail = match shape {
        Shape::Lines(keys) if !keys.is_empty() => format!("JSON lines, first line's keys: {}", skip::key_list(keys)),
        Shape::Array(keys) if !keys.is_empty() => {
            format!("a JSON array whose first item has keys [{}]", skip::key_list(keys))
        }
        Shape::Object(keys) if !keys.is_empty() => format!("a JSON object with keys [{}]", skip::key_list(keys)),
        Shape::Object(_) | Shape::Lines(_) => "a JSON object with no keys".to_string(),
        Shape::Array(_) => "a JSON array whose items match no format".to_string(),
        Shape::Text => "plain text".to_string(),
    };
    if is_trajectory_name(path) {
        return Err(IngestError::UnknownFormat { path: path.to_path_buf(), detail });
    }
    Ok(Outcome::Skipped(Skip::new(SkipKind::Json, format!("not a known format ({detail})"))))
}

/// A name only trajectories have: `.traj`, `.traj.json`.
fn is_trajectory_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name.ends_with(".traj") || name.ends_with(".traj.json")
}

/// Whether a file's name says it is meant to be one of our inputs (JSON, JSON lines, `.traj`,
/// `.pred`, logs, test output).
/// A compressed copy (`x.traj.gz`) is named like its content.
fn looks_like_input(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let name = [".gz", ".zst", ".bz2", ".xz"].iter().find_map(|c| name.strip_suffix(c)).unwrap_or(&name);
    [".traj", ".json", ".jsonl", ".pred", ".log", "test_output.txt"].iter().any(|ext| name.ends_with(ext))
}

/// Bytes as text. Invalid UTF-8 is replaced with U+FFFD and reported (with its byte offset) as a
/// warning: the rest of the file is still worth reading.
pub fn decode<'a>(path: &Path, bytes: &'a [u8], warnings: &mut Vec<String>) -> Cow<'a, str> {
    let text = bytes.strip_prefix(BOM).unwrap_or(bytes);
    match std::str::from_utf8(text) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let at = first_invalid_utf8(bytes).unwrap_or(0);
            warnings.push(format!("{}: byte {at}: invalid UTF-8 replaced with U+FFFD", path.display()));
            Cow::Owned(String::from_utf8_lossy(text).into_owned())
        }
    }
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// Offset in the file (a leading BOM counted) of the first byte that is not UTF-8.
fn first_invalid_utf8(bytes: &[u8]) -> Option<usize> {
    let (skipped, text) = match bytes.strip_prefix(BOM) {
        Some(rest) => (BOM.len(), rest),
        None => (0, bytes),
    };
    std::str::from_utf8(text).err().map(|e| skipped + e.valid_up_to())
}
