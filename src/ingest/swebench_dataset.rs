//! Dataset files: task instances with their gold patches, of SWE-bench (and its variants),
//! SWE-Bench Pro and multi-SWE-bench.
//!
//! A JSON array of instances, JSON lines (one instance per line), or a single instance object.
//! A SWE-bench instance has at least `instance_id` and `patch` (the gold patch), and usually
//! `problem_statement`, `test_patch`, `repo`, `base_commit`, `FAIL_TO_PASS` and `PASS_TO_PASS`.
//! The two test lists are JSON-encoded strings holding a list in the published dataset, real
//! lists in some re-packagings, and in SWE-Bench Pro (`fail_to_pass`, `pass_to_pass`, lower case
//! in its CSV and JSON copies) Python list literals (`['test/a.js | A works']`): all are read.
//!
//! A multi-SWE-bench instance is a pull request: `org`, `repo`, `number`, `fix_patch` (the gold
//! patch), `test_patch`, `resolved_issues` (`[{number, title, body}]`), and its tests as objects
//! keyed by test name (`{"TestX": {"run": "NONE", "test": "FAIL", "fix": "PASS"}}`):
//! `f2p_tests`, `s2p_tests` and `n2p_tests` must pass with the fix (FAIL_TO_PASS here) and
//! `p2p_tests` must keep passing (PASS_TO_PASS). Its instance is `org__repo-number`, the name
//! its predictions and OpenHands' runs use.
//!
//! Each instance becomes a [`Task`] (no run, no outcome); the store prefers a task with a gold
//! patch when it shows a run of that instance. A record of the wrong shape becomes a warning
//! naming its line (JSON lines) or item (array); the other records are kept.

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
    if v.get("patch").is_none() && v.get("fix_patch").is_some() {
        return multi_swebench_task(v);
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
    let mut tests = |key: &str| match test_list(v.get(key).or_else(|| v.get(key.to_ascii_lowercase().as_str()))) {
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

/// A multi-SWE-bench instance (see the module's comment).
fn multi_swebench_task(v: &Value) -> Result<(Task, Vec<String>), String> {
    if !["test_patch", "f2p_tests", "p2p_tests", "fixed_tests", "resolved_issues"].iter().any(|k| v.get(*k).is_some()) {
        return Err("has a fix_patch but no test_patch or test lists: a prediction, not a task".to_string());
    }
    let instance_id = crate::ingest::predictions::pr_instance_id(v, "org")
        .or_else(|| json::nonempty_str(v, "instance_id"))
        .ok_or("missing org, repo and number (the instance is org__repo-number) and instance_id")?;
    let gold_patch = match v.get("fix_patch") {
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        None | Some(Value::Null) => None,
        Some(_) => return Err(format!("{instance_id}: fix_patch must be a string or null")),
    };
    let mut notes = Vec::new();
    let mut names = |keys: &[&str]| -> Vec<String> {
        let mut out = Vec::new();
        for key in keys {
            match test_names(v.get(*key)) {
                Ok(list) => out.extend(list),
                Err(m) => notes.push(format!("{instance_id}: {key} {m}; left out")),
            }
        }
        out
    };
    let fail_to_pass = names(&["f2p_tests", "s2p_tests", "n2p_tests"]);
    let pass_to_pass = names(&["p2p_tests"]);
    let issues: Vec<String> = v
        .get("resolved_issues")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(title_and_body)
        .filter(|t| !t.is_empty())
        .collect();
    let instruction = json::nonempty_str(v, "problem_statement")
        .or_else(|| Some(issues.join("\n\n")).filter(|t| !t.is_empty()))
        .or_else(|| Some(title_and_body(v)).filter(|t| !t.is_empty()));
    Ok((Task { instance_id, instruction, gold_patch, fail_to_pass, pass_to_pass }, notes))
}

/// `title`, a blank line, `body` (either may be missing).
fn title_and_body(v: &Value) -> String {
    [json::nonempty_str(v, "title"), json::nonempty_str(v, "body")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Test names of a multi-SWE-bench test map (`{"name": {"run": ..., "test": ..., "fix": ...}}`,
/// in the dataset's order), or a list of names.
fn test_names(v: Option<&Value>) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map.keys().cloned().collect()),
        Some(list @ Value::Array(_)) => test_list(Some(list)),
        Some(_) => Err("is not a map or list of test names".to_string()),
    }
}

/// A test list: a JSON list of names, or a string holding one as JSON (the published dataset) or
/// as a Python list literal (SWE-Bench Pro).
fn test_list(v: Option<&Value>) -> Result<Vec<String>, String> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(list) => list,
            Err(e) => {
                return python_list(s).ok_or_else(|| {
                    format!("is a string that is not a JSON list ({})", crate::error::json_message(&e))
                });
            }
        },
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

/// A Python list of string literals, as `repr` writes it: `['a', "b's"]`, with backslash escapes.
/// `None` for anything else.
fn python_list(s: &str) -> Option<Vec<String>> {
    let mut chars = s.trim().chars().peekable();
    let mut out = Vec::new();
    if chars.next()? != '[' {
        return None;
    }
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.next()? {
            ']' if out.is_empty() => break,
            quote @ ('\'' | '"') => {
                let mut item = String::new();
                loop {
                    match chars.next()? {
                        c if c == quote => break,
                        '\\' => item.push(match chars.next()? {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        }),
                        c => item.push(c),
                    }
                }
                out.push(item);
            }
            _ => return None,
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.next()? {
            ',' => {}
            ']' => break,
            _ => return None,
        }
    }
    chars.all(char::is_whitespace).then_some(out)
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

    fn fixture(rel: &str) -> Parsed {
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/formats")).join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        parse(&path, &text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn multi_swe_bench_tasks_have_their_gold_patch_and_test_maps() {
        let p = fixture("multi-swe-bench/c/ponylang__ponyc_dataset.jsonl");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(ids(&p), vec!["ponylang__ponyc-4595", "ponylang__ponyc-4593"]);
        let t = &p.tasks[0];
        assert!(t.gold_patch.as_deref().is_some_and(|g| g.starts_with("diff --git a/src/libponyc/ast/parser.c")));
        // f2p, s2p and n2p must pass with the fix; p2p must keep passing.
        assert_eq!(t.fail_to_pass, vec!["SugarTest.LetInParensIsSingle", "SugarTest.LetInParensIsNotATuple"]);
        assert_eq!(t.pass_to_pass, vec!["SugarTest.LetSingle", "SugarTest.LetTuple"]);
        assert_eq!(
            t.instruction.as_deref(),
            Some(
                "Compiler crash on `let (a) = 1`\n\nThe compiler crashes when a single let binding is written in parentheses."
            )
        );
        use crate::ingest::detect::{Detected, detect, shape};
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/formats/multi-swe-bench/c/ponylang__ponyc_dataset.jsonl"
        ))
        .unwrap_or_default();
        assert_eq!(detect(&shape(&text), &text), Detected::Format(crate::model::Format::MultiSwebenchDataset));
    }

    #[test]
    fn swe_bench_pro_test_lists_are_python_literals_in_lower_case_keys() {
        let p = fixture("swe-bench-pro/swe_bench_pro_test.jsonl");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.tasks[0];
        assert!(t.instance_id.starts_with("instance_NodeBB__NodeBB-cfc237c2"));
        assert!(t.gold_patch.as_deref().is_some_and(|g| g.contains("getIconBackgrounds")));
        assert_eq!(t.fail_to_pass.len(), 2);
        assert_eq!(
            t.pass_to_pass,
            vec![
                "test/user.js | User should get admins and mods",
                "test/user.js | User user info should be member of \"banned-users\" system group only after a ban",
                "test/user.js | User profile methods should update a user's profile",
            ]
        );
        assert!(p.tasks[1].pass_to_pass.is_empty());
    }

    #[test]
    fn python_list_literals() {
        assert_eq!(python_list("[]"), Some(vec![]));
        assert_eq!(
            python_list(r#"['a', "b's", 'c\'d', 'e\\f']"#),
            Some(vec!["a".into(), "b's".into(), "c'd".into(), "e\\f".into()])
        );
        for bad in ["['a'", "['a' 'b']", "[1]", "['a',]", "x", "['a'] tail"] {
            assert_eq!(python_list(bad), None, "{bad}");
        }
    }

    #[test]
    fn classify_fixture_datasets_parse_cleanly() {
        let roots = [
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/classify"),
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/classify-cases"),
        ];
        let mut seen = 0;
        for entry in roots.iter().flat_map(|r| walkdir::WalkDir::new(r).into_iter().flatten()) {
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
        assert!(seen >= 4, "dataset files under fixtures/classify and classify-cases: {seen}");
    }
}
