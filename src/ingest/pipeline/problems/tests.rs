//! Each kind produced by the code that writes it, so a change of wording shows here.

use super::*;
use crate::ingest::{Outcome, parse_file};
use std::path::PathBuf;

/// The warnings of a file read through `parse_file`, and their kinds.
fn warning_kinds(name: &str, bytes: &[u8]) -> Vec<(ProblemKind, String)> {
    let path = PathBuf::from("/r").join(name);
    match parse_file(&path, bytes, None) {
        Ok(Outcome::Parsed { parsed, .. }) => {
            parsed.warnings.into_iter().map(|w| (ProblemKind::of_warning(&path, &w), w)).collect()
        }
        Ok(Outcome::Skipped(skip)) => panic!("{name} skipped: {skip:?}"),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn error_kind(name: &str, bytes: &[u8]) -> ProblemKind {
    match parse_file(&PathBuf::from("/r").join(name), bytes, None) {
        Err(e) => ProblemKind::of_error(&e),
        Ok(_) => panic!("{name} was read"),
    }
}

fn kinds(found: &[(ProblemKind, String)]) -> Vec<ProblemKind> {
    found.iter().map(|(k, _)| *k).collect()
}

const TRAJ: &str = r#"{"trajectory": [{"action": "ls", "observation": "o", "thought": "t", "response": "t"}], "history": [], "info": {}}"#;

#[test]
fn lost_lines_records_and_tails_are_told_apart() {
    let jsonl = "{\"instance_id\": \"a\", \"history\": []}\n{broken\n{\"instance_id\": \"b\", \"history\": 7}\n";
    let found = warning_kinds("output.jsonl", jsonl.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::LineSkipped, ProblemKind::LineSkipped], "{found:?}");

    let cut = "{\"model_name_or_path\": \"m\", \"instance_id\": \"a\", \"model_patch\": \"p\"}\n{\"model_name_or_path\": \"m\", \"inst";
    let found = warning_kinds("all_preds.jsonl", cut.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::LineSkipped], "{found:?}");

    let two = TRAJ.replace("}], \"history\"", "}, {\"action\": \"cat x\", \"observation\": \"long\"}], \"history\"");
    let cut = &two[..two.find("long").unwrap_or(two.len())];
    let found = warning_kinds("cut.traj", cut.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::TruncatedKept], "{found:?}");

    let list = r#"{"messages": [{"role": "system", "content": "s"}, 7, {"role": "assistant", "content": "```bash\nls\n```"}], "info": {}}"#;
    let found = warning_kinds("m.traj.json", list.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::PartSkipped], "{found:?}");

    let dataset = "{\"instance_id\": \"a\", \"patch\": \"d\", \"FAIL_TO_PASS\": \"not json\"}\n{\"instance_id\": \"b\", \"patch\": \"d\"}\n";
    let found = warning_kinds("d.jsonl", dataset.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::PartSkipped], "{found:?}");

    let preds = r#"[{"instance_id": "x__y-1", "model_patch": "d"}, {"instance_id": 7}]"#;
    let found = warning_kinds("preds.json", preds.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::PartSkipped], "{found:?}");
}

#[test]
fn replaced_bytes_and_values_and_notes() {
    let mut bytes = TRAJ.replace("\"o\"", "\"o@\"").into_bytes();
    let at = bytes.iter().position(|b| *b == b'@').unwrap_or(0);
    bytes[at] = 0xff;
    let found = warning_kinds("utf8.traj", &bytes);
    assert_eq!(kinds(&found), vec![ProblemKind::Replaced], "{found:?}");

    let nan = TRAJ.replace("\"info\": {}", "\"info\": {\"model_stats\": {\"instance_cost\": NaN}}");
    let found = warning_kinds("nan.traj", nan.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::Replaced], "{found:?}");

    let summary = r#"{"schema_version": 3, "resolved_ids": ["a"], "unresolved_ids": []}"#;
    let found = warning_kinds("report.json", summary.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::Note], "{found:?}");
    assert!(!ProblemKind::Note.loses_content() && ProblemKind::Replaced.loses_content());

    // Sessions, instances and trials of known agents that hold nothing to review lose nothing.
    let aider = "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.86.1  \n\n# aider chat started at 2025-01-01 11:00:00\n\n#### fix it  \n\nDone.\n";
    let found = warning_kinds(".aider.chat.history.md", aider.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::Note], "{found:?}");
    let repair = "{\"instance_id\": \"a\", \"raw_output\": [\"\"], \"traj\": [], \"try_count\": [0]}\n\
                  {\"instance_id\": \"b\", \"raw_output\": [\"x\"], \"traj\": [{\"prompt\": \"p\", \"response\": \"r\"}], \"try_count\": [1]}\n";
    let found = warning_kinds("output_0.jsonl", repair.as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::Note], "{found:?}");
    let dir = PathBuf::from("/r/run/t/t.1-of-1.run");
    let results = r#"{"task_id": "t", "trial_name": "t.1-of-1.run", "is_resolved": false, "failure_mode": "unset"}"#;
    let trial = crate::ingest::terminal_bench::parse_trial(&dir, &[(dir.join("results.json"), results.to_string())]);
    let warnings = trial.map(|p| p.warnings).unwrap_or_default();
    let found: Vec<ProblemKind> = warnings.iter().map(|w| ProblemKind::of_warning(&dir, w)).collect();
    assert_eq!(found, vec![ProblemKind::Note], "{warnings:?}");
    // A Codex edit of a path outside the working folder, stored as written, is said.
    let patch = "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch\n";
    let call = serde_json::json!({"type": "response_item", "payload": {"type": "custom_tool_call",
        "name": "apply_patch", "input": patch, "call_id": "c1"}});
    let meta = r#"{"timestamp": "2025-11-17T21:30:28Z", "type": "session_meta", "payload": {"id": "s-1", "cli_version": "0.58.0"}}"#;
    let found = warning_kinds("rollout-1.jsonl", format!("{meta}\n{call}\n").as_bytes());
    assert_eq!(kinds(&found), vec![ProblemKind::Note], "{found:?}");
}

#[test]
fn failures_by_kind() {
    assert_eq!(error_kind("empty.traj", b""), ProblemKind::Empty);
    assert_eq!(error_kind("bin.traj", b"{\"a\0"), ProblemKind::Binary);
    assert_eq!(error_kind("x.traj", br#"{"foo": 1}"#), ProblemKind::UnknownFormat);
    assert_eq!(error_kind("bad.traj", br#"{"trajectory": 7, "history": [], "info": {}}"#), ProblemKind::Malformed);
    assert_eq!(error_kind("cut.traj", br#"{"trajectory": [{"action": "ls", "obs"#), ProblemKind::Truncated);
    let missing = IngestError::Io { path: PathBuf::from("/r/x"), source: std::io::Error::other("gone") };
    assert_eq!(ProblemKind::of_error(&missing), ProblemKind::Unreadable);
    let big = crate::ingest::source::too_large(Path::new("/r/x.json"), 5 << 30, 2 << 30);
    assert_eq!(ProblemKind::of_error(&big), ProblemKind::TooLarge);
    assert!(ProblemKind::iter_failures().all(|k| k.is_failure() && k.loses_content()));
}

#[test]
fn a_report_has_problems_only_when_content_was_lost() {
    let note = UnitResult::Ingested {
        path: PathBuf::from("/r/report.json"),
        format: crate::model::Format::SwebenchSummary,
        stats: Default::default(),
        warnings: vec!["/r/report.json: schema_version 3 is not 2; read as version 2".to_string()],
    };
    let skipped = UnitResult::Skipped {
        path: PathBuf::from("/r/metadata.json"),
        skip: crate::ingest::skip::Skip::new(crate::ingest::skip::SkipKind::Json, "not a known format"),
    };
    let mut report = Report { results: vec![note, skipped], ..Report::default() };
    assert!(!report.has_problems(), "a note and a skipped file change nothing");
    report.results.push(UnitResult::Unchanged {
        path: PathBuf::from("/r/o.jsonl"),
        warnings: vec!["/r/o.jsonl: line 2, column 1: key must be a string".to_string()],
    });
    assert!(report.has_problems());
    let problems = report.problems();
    assert_eq!(problems.iter().map(|p| p.kind).collect::<Vec<_>>(), vec![ProblemKind::Note, ProblemKind::LineSkipped]);
}
