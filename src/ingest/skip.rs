//! Files that are not inputs of any kind, and why: a README, a run's `metadata.json`, an image,
//! a SWE-agent demonstration. They are skipped, counted by kind in the summary, never failed:
//! every results folder holds some.

/// What kind of file was skipped. Declared in the order the summary lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::EnumIter)]
pub enum SkipKind {
    /// A SWE-agent demonstration (only `history`): a prompt example, not a run.
    Demonstration,
    /// A file of a known agent or harness that is not read, named with what it is: a cache of
    /// events read from elsewhere, a conversation's state, a raw log beside the run read, a
    /// summary of trials read one by one.
    NotRead,
    /// JSON or JSON lines of no known format (OpenHands `metadata.json`, AutoCodeRover
    /// `cost.json`, configs).
    Json,
    /// Text that is not a log or report (READMEs, YAML, scripts, licences).
    Text,
    /// Binary content (images, compiled files) in a file whose name is not an input's.
    Binary,
    /// An empty file whose name is not an input's (`__init__.py`).
    Empty,
    /// A hidden file or folder (`.DS_Store`, `.git/`): not walked.
    Hidden,
}

impl SkipKind {
    /// How the summary names files of this kind, for `n` of them.
    pub fn noun(self, n: usize) -> &'static str {
        let one = n == 1;
        match self {
            SkipKind::Demonstration if one => "demonstration (a prompt example, not a run)",
            SkipKind::Demonstration => "demonstrations (prompt examples, not runs)",
            SkipKind::NotRead if one => "agent file not read (a cache, state, raw log or summary; --verbose names it)",
            SkipKind::NotRead => "agent files not read (caches, state, raw logs, summaries; --verbose names them)",
            SkipKind::Json => "JSON of no known format (run metadata, configs)",
            SkipKind::Text if one => "text file (README, config, script)",
            SkipKind::Text => "text files (READMEs, configs, scripts)",
            SkipKind::Binary if one => "binary file",
            SkipKind::Binary => "binary files",
            SkipKind::Empty if one => "empty file",
            SkipKind::Empty => "empty files",
            SkipKind::Hidden if one => "hidden file or folder",
            SkipKind::Hidden => "hidden files or folders",
        }
    }
}

/// Why one file was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub kind: SkipKind,
    /// In words, for `ingest --verbose`: "JSON lines, not a known format (first line's keys: ...)".
    pub reason: String,
}

impl Skip {
    pub fn new(kind: SkipKind, reason: impl Into<String>) -> Skip {
        Skip { kind, reason: reason.into() }
    }

    pub fn demonstration() -> Skip {
        Skip::new(SkipKind::Demonstration, "a SWE-agent demonstration (only `history`): a prompt example, not a run")
    }

    pub fn text() -> Skip {
        Skip::new(SkipKind::Text, "text that is not a trajectory, log, report, dataset or prediction file")
    }

    pub fn empty() -> Skip {
        Skip::new(SkipKind::Empty, "empty")
    }

    /// A known agent's or harness's file that is not read, and what it is.
    pub fn not_read(what: impl Into<String>) -> Skip {
        Skip::new(SkipKind::NotRead, what)
    }

    pub fn hidden(folder: bool) -> Skip {
        Skip::new(SkipKind::Hidden, if folder { "a hidden folder: not walked" } else { "a hidden file" })
    }
}

/// Keys named for a message: at most 8, then `...`.
pub fn key_list(keys: &[String]) -> String {
    let mut shown: Vec<&str> = keys.iter().take(8).map(String::as_str).collect();
    if keys.len() > 8 {
        shown.push("...");
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{Outcome, parse_file};
    use crate::model::Format;
    use std::path::{Path, PathBuf};

    fn corpus(rel: &str) -> (PathBuf, Vec<u8>) {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus")).join(rel);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        (path, bytes)
    }

    fn skipped(path: &Path, bytes: &[u8]) -> Skip {
        match parse_file(path, bytes, None) {
            Ok(Outcome::Skipped(skip)) => skip,
            Ok(Outcome::Parsed { format, .. }) => panic!("{} read as {format:?}", path.display()),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn run_metadata_and_demonstrations_of_the_corpus_are_skipped_with_their_reason() {
        let (path, bytes) = corpus("openhands-2024/metadata.json");
        let skip = skipped(&path, &bytes);
        assert_eq!(skip.kind, SkipKind::Json);
        assert_eq!(
            skip.reason,
            "not a known format (a JSON object with keys [Dataset, Data split, Number of Samples, Agent class, Model name, Start_time, End_time, Final Accuracy])"
        );
        let (path, bytes) = corpus("swe-agent-demonstrations/function_calling_simple.traj");
        assert_eq!(skipped(&path, &bytes), Skip::demonstration());
        let (path, bytes) = corpus("refactorbench/scripts/descriptive_instances.yaml");
        assert_eq!(skipped(&path, &bytes).kind, SkipKind::Text);
    }

    #[test]
    fn unknown_json_lines_name_their_first_line_keys() {
        let text = "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": 0.4}\n";
        let skip = skipped(Path::new("/r/metrics.jsonl"), text.as_bytes());
        assert_eq!(skip.kind, SkipKind::Json);
        assert_eq!(skip.reason, "not a known format (JSON lines, first line's keys: step, loss)");
        // AutoCodeRover's cost.json: an object of no known format.
        let skip =
            skipped(Path::new("/r/cost.json"), br#"{"model": "gpt-4", "total_input_tokens": 10, "total_cost": 0.1}"#);
        assert_eq!(skip.kind, SkipKind::Json);
    }

    #[test]
    fn binary_content_is_skipped_unless_the_name_says_input() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let skip = skipped(Path::new("/r/plot.png"), png);
        assert_eq!(skip.kind, SkipKind::Binary);
        assert!(skip.reason.starts_with("byte 8: binary content"), "{}", skip.reason);
        let latin1 = b"caf\xe9 au lait\n";
        assert_eq!(skipped(Path::new("/r/notes.txt"), latin1).kind, SkipKind::Binary);
        for name in ["x.traj", "x.json", "x.traj.gz", "run_instance.log"] {
            let e = parse_file(&Path::new("/r").join(name), png, None).err().map(|e| e.to_string());
            assert!(e.is_some_and(|e| e.contains("binary content")), "{name}");
        }
        assert_eq!(skipped(Path::new("/r/pkg/__init__.py"), b"\n").kind, SkipKind::Empty);
    }

    #[test]
    fn json_of_no_known_format_named_as_a_trajectory_is_an_error() {
        let e = parse_file(Path::new("/r/x.traj"), br#"{"foo": 1}"#, None).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("/r/x.traj: not a known trajectory or test-output format: a JSON object with keys [foo]")
        );
    }

    #[test]
    fn a_forced_format_that_reads_nothing_is_an_error_saying_what_the_file_is() {
        let (path, bytes) = corpus("openhands/multi_swe_bench_patch.jsonl");
        let e =
            parse_file(&path, &bytes, Some(Format::SwebenchDataset)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 1: has a fix_patch but no test_patch or test lists: a prediction, not a task"), "{e}");
        // Every adapter fails on what is not its format; what still reads as nothing is refused.
        let nothing = br#"{"resolved_ids": [], "unresolved_ids": []}"#;
        assert!(matches!(parse_file(Path::new("/r/s.json"), nothing, None), Ok(Outcome::Parsed { .. })));
        let e = parse_file(Path::new("/r/s.json"), nothing, Some(Format::SwebenchSummary)).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("/r/s.json: read as swebench-summary (--format), the file gives no run, outcome, prediction or task")
        );
        // The case of issue 12: OpenDevin's 2024 lines forced as OpenHands are read whole now.
        let (path, bytes) = corpus("openhands-2024/output.jsonl");
        match parse_file(&path, &bytes, Some(Format::OpenHands)) {
            Ok(Outcome::Parsed { parsed, .. }) => {
                assert_eq!(parsed.runs.iter().map(|r| r.steps.len()).sum::<usize>(), 23)
            }
            _ => panic!("not read"),
        }
    }
}
