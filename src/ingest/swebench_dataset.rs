//! SWE-bench dataset files: task instances with their gold patches.
//!
//! A JSON array of instances, JSON lines (one instance per line), or a single instance object.
//! An instance has at least `instance_id` and `patch` (the gold patch), and usually
//! `problem_statement`, `test_patch`, `repo`, `base_commit`, `FAIL_TO_PASS` and `PASS_TO_PASS`.
//! The two test lists are JSON-encoded strings holding a list in the published dataset, and
//! real lists in some re-packagings: both are read. Each instance becomes a [`Task`] (no run, no
//! outcome); the store prefers a task with a gold patch when it shows a run of that instance.
//!
//! A record of the wrong shape becomes a warning naming its line (JSON lines) or item (array);
//! the other records are kept.

use crate::error::IngestError;
use crate::ingest::json;
use crate::model::{Parsed, Task};
use serde_json::Value;
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    if is_jsonl(path, text) {
        // Bad lines first (in line order), then notes on lines that were read.
        let mut notes = Vec::new();
        json::for_each_jsonl_line(path, text, &mut parsed.warnings, |line, v| {
            let one = parse_line(path, line, &v)?;
            parsed.tasks.extend(one.tasks);
            notes.extend(one.warnings);
            Ok(())
        })?;
        parsed.warnings.extend(notes);
        return Ok(parsed);
    }
    match json::parse_value(path, text)? {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                match task(item) {
                    Ok((t, notes)) => {
                        parsed.tasks.push(t);
                        parsed.warnings.extend(notes.into_iter().map(|n| format!("{}: item {i}: {n}", path.display())));
                    }
                    Err(m) => parsed.warnings.push(format!("{}: item {i}: {m}", path.display())),
                }
            }
            if parsed.tasks.is_empty() {
                let why = parsed.warnings.first().cloned().unwrap_or_else(|| "the list is empty".to_string());
                return Err(IngestError::shape(path, format!("SWE-bench dataset: no readable instance ({why})")));
            }
        }
        v @ Value::Object(_) => {
            let (t, notes) = task(&v).map_err(|m| IngestError::shape(path, format!("SWE-bench dataset: {m}")))?;
            parsed.tasks.push(t);
            parsed.warnings.extend(notes.into_iter().map(|n| format!("{}: {n}", path.display())));
        }
        _ => return Err(IngestError::shape(path, "SWE-bench dataset: expected a list of instances or one instance")),
    }
    Ok(parsed)
}

/// One line of a JSON-lines dataset (also used to read large files a line at a time).
pub fn parse_line(path: &Path, line: usize, v: &Value) -> Result<Parsed, IngestError> {
    let (t, notes) = task(v).map_err(|m| IngestError::shape(path, format!("line {line}: {m}")))?;
    Ok(Parsed {
        tasks: vec![t],
        warnings: notes.into_iter().map(|n| format!("{}: line {line}: {n}", path.display())).collect(),
        ..Parsed::default()
    })
}

/// JSON lines: named `.jsonl`, or shaped like it.
fn is_jsonl(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "jsonl") || crate::ingest::detect::is_jsonl(text)
}

/// One instance, with notes about fields that could not be read (the task is kept without them).
fn task(v: &Value) -> Result<(Task, Vec<String>), String> {
    if !v.is_object() {
        return Err("an instance must be a JSON object".to_string());
    }
    let instance_id = match v.get("instance_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        None | Some(Value::Null) => return Err("missing instance_id".to_string()),
        Some(other) => return Err(format!("instance_id must be a non-empty string, found {other}")),
    };
    let gold_patch = match v.get("patch") {
        None => return Err(format!("{instance_id}: missing patch (the gold patch)")),
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Some(_) => return Err(format!("{instance_id}: patch must be a string or null")),
    };
    let mut notes = Vec::new();
    let mut tests = |key: &str| match test_list(v.get(key)) {
        Ok(list) => list,
        Err(m) => {
            notes.push(format!("{instance_id}: {key} {m}; left empty"));
            Vec::new()
        }
    };
    let fail_to_pass = tests("FAIL_TO_PASS");
    let pass_to_pass = tests("PASS_TO_PASS");
    Ok((
        Task {
            instruction: json::nonempty_str(v, "problem_statement"),
            gold_patch,
            fail_to_pass,
            pass_to_pass,
            instance_id,
        },
        notes,
    ))
}

/// A test list: a JSON list of names, or a string holding one as JSON (the published dataset).
fn test_list(v: Option<&Value>) -> Result<Vec<String>, String> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .map_err(|e| format!("is a string that is not a JSON list ({})", crate::error::json_message(&e)))?,
        Some(other) => other.clone(),
    };
    let Value::Array(items) = list else {
        return Err("is not a list of test names".to_string());
    };
    items
        .into_iter()
        .map(|i| match i {
            Value::String(s) => Ok(s),
            other => Err(format!("has a test name that is not a string ({other})")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str, text: &str) -> Parsed {
        parse(Path::new(path), text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn ids(p: &Parsed) -> Vec<&str> {
        p.tasks.iter().map(|t| t.instance_id.as_str()).collect()
    }

    const GOLD: &str = "diff --git a/src/pkg/core.py b/src/pkg/core.py\n--- a/src/pkg/core.py\n+++ b/src/pkg/core.py\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn array_of_instances_with_string_encoded_test_lists() {
        let text = serde_json::json!([{
            "repo": "org/pkg",
            "instance_id": "org__pkg-1",
            "base_commit": "0123abc",
            "patch": GOLD,
            "test_patch": "diff --git a/tests/t.py b/tests/t.py\n",
            "problem_statement": "core returns a",
            "FAIL_TO_PASS": "[\"tests/t.py::test_b\"]",
            "PASS_TO_PASS": "[\"tests/t.py::test_a\", \"tests/t.py::test_c\"]"
        }])
        .to_string();
        let p = ok("swe-bench.json", &text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.runs.is_empty() && p.outcomes.is_empty() && p.predictions.is_empty());
        let t = &p.tasks[0];
        assert_eq!(t.instance_id, "org__pkg-1");
        assert_eq!(t.instruction.as_deref(), Some("core returns a"));
        assert_eq!(t.gold_patch.as_deref(), Some(GOLD));
        assert_eq!(t.fail_to_pass, vec!["tests/t.py::test_b"]);
        assert_eq!(t.pass_to_pass, vec!["tests/t.py::test_a", "tests/t.py::test_c"]);
    }

    #[test]
    fn jsonl_with_real_lists_and_a_bad_line_named_by_number() {
        let good = |id: &str| {
            serde_json::json!({"instance_id": id, "patch": GOLD, "problem_statement": "p",
                "FAIL_TO_PASS": ["t::x"], "PASS_TO_PASS": []})
            .to_string()
        };
        let text = format!("{}\n{{\"instance_id\": \"b\", \"patch\n{}\n{{\"patch\": \"x\"}}\n", good("a"), good("c"));
        let p = ok("dataset.jsonl", &text);
        assert_eq!(ids(&p), vec!["a", "c"]);
        assert_eq!(p.tasks[0].fail_to_pass, vec!["t::x"]);
        assert!(p.tasks[1].pass_to_pass.is_empty());
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(p.warnings[0].contains("dataset.jsonl: line 2"), "{}", p.warnings[0]);
        assert!(p.warnings[1].contains("dataset.jsonl") && p.warnings[1].contains("line 4: missing instance_id"));
    }

    #[test]
    fn unreadable_test_lists_are_warnings_and_the_task_is_kept() {
        let text = "{\"instance_id\": \"a\", \"patch\": \"d\", \"FAIL_TO_PASS\": \"not json\"}\n\
                    {\"instance_id\": \"b\", \"patch\": null, \"PASS_TO_PASS\": [1]}\n";
        let p = ok("d.jsonl", text);
        assert_eq!(ids(&p), vec!["a", "b"]);
        assert_eq!(p.tasks[1].gold_patch, None);
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(p.warnings[0].contains("line 1: a: FAIL_TO_PASS is a string that is not a JSON list"));
        assert!(p.warnings[1].contains("line 2: b: PASS_TO_PASS has a test name that is not a string"));
    }

    #[test]
    fn array_items_of_the_wrong_shape_are_named_by_index() {
        let text = r#"[{"instance_id": "a", "patch": "d"}, {"instance_id": "b"}, 3]"#;
        let p = ok("d.json", text);
        assert_eq!(ids(&p), vec!["a"]);
        assert_eq!(p.warnings.len(), 2);
        assert!(p.warnings[0].contains("d.json: item 1: b: missing patch"), "{}", p.warnings[0]);
        assert!(p.warnings[1].contains("item 2: an instance must be a JSON object"), "{}", p.warnings[1]);
    }

    #[test]
    fn malformed_files_are_errors_naming_the_file() {
        let e = parse(Path::new("d.json"), "[\n  {\"instance_id\": \"a\",\n  \"patch\": \n").err();
        assert!(e.is_some_and(|e| e.to_string().contains("d.json: line")));
        assert!(parse(Path::new("d.json"), "[]").is_err());
        assert!(parse(Path::new("d.json"), "[{\"patch\": \"x\"}]").is_err());
        assert!(parse(Path::new("d.jsonl"), "{oops\n{oops\n").is_err());
        let e = parse(Path::new("one.json"), r#"{"instance_id": 7, "patch": "d"}"#).err();
        assert!(e.is_some_and(|e| e.to_string().contains("one.json") && e.to_string().contains("instance_id must be")));
    }

    #[test]
    fn datasets_are_detected_and_predictions_and_openhands_lines_are_not() {
        use crate::ingest::detect::{Detected, detect, shape};
        use crate::model::Format;
        let dataset = Detected::Format(Format::SwebenchDataset);
        let array = r#"[{"repo": "o/p", "instance_id": "a", "patch": "d", "FAIL_TO_PASS": "[]"}, {"x": 1}]"#;
        assert_eq!(detect(&shape(array), array), dataset);
        let lines = "{\"instance_id\": \"a\", \"patch\": \"d\"}\n{\"instance_id\": \"b\", \"patch\": \"d\"}\n";
        assert_eq!(detect(&shape(lines), lines), dataset);
        let one = "{\"instance_id\": \"a\", \"patch\": \"d\", \"problem_statement\": \"p\"}";
        assert_eq!(detect(&shape(one), one), dataset);

        let preds = "{\"instance_id\": \"a\", \"model_patch\": \"d\", \"model_name_or_path\": \"m\"}\n\
                     {\"instance_id\": \"b\", \"model_patch\": \"d\", \"model_name_or_path\": \"m\"}\n";
        assert_eq!(detect(&shape(preds), preds), Detected::Format(Format::SweAgentPreds));
        // A prediction list that also carries the gold patch is still predictions.
        let preds = r#"[{"instance_id": "a", "patch": "g", "model_patch": "d"}]"#;
        assert_eq!(detect(&shape(preds), preds), Detected::NeedsValue);
        let oh = "{\"instance_id\": \"a\", \"instance\": {\"patch\": \"g\"}, \"history\": []}\n\
                  {\"instance_id\": \"b\", \"instance\": {\"patch\": \"g\"}, \"history\": []}\n";
        assert_eq!(detect(&shape(oh), oh), Detected::Format(Format::OpenHands));
        let no_history = "{\"instance_id\": \"a\", \"patch\": \"g\", \"instance\": {}, \"test_result\": {}}";
        assert_eq!(detect(&shape(no_history), no_history), Detected::NeedsValue);
    }

    #[test]
    fn classify_fixture_datasets_parse_cleanly() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/classify");
        let mut seen = 0;
        for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
            let name = entry.file_name().to_string_lossy();
            if !name.starts_with("swe-bench") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_else(|e| panic!("{e}"));
            let p = ok(&entry.path().to_string_lossy(), &text);
            assert!(p.warnings.is_empty(), "{:?}", p.warnings);
            assert!(p.tasks.iter().all(|t| t.gold_patch.is_some() && !t.fail_to_pass.is_empty()));
            seen += 1;
        }
        assert!(seen >= 4, "dataset files under fixtures/classify: {seen}");
    }
}
