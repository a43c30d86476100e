//! Predictions: SWE-agent's `all_preds.jsonl`, `preds.json` (dict or list), single `.pred` files,
//! and multi-SWE-bench's `patch.jsonl`.
//!
//! A SWE-bench record is `{model_name_or_path, instance_id, model_patch}`; in a `preds.json` dict
//! the key is the instance id (the record may repeat it). A multi-SWE-bench record is `{org, repo,
//! number, fix_patch}`, its instance `org__repo-number` (as the benchmark's tasks and OpenHands
//! name it). A record of the wrong shape becomes a warning naming its line, key or index; the
//! others are kept.

use crate::error::IngestError;
use crate::ingest::json;
use crate::model::{Parsed, Prediction};
use serde_json::Value;
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    if is_jsonl(path, text) {
        let mut predictions = Vec::new();
        json::for_each_jsonl_line(path, text, &mut parsed.warnings, |line, v| {
            predictions.extend(parse_line(path, line, &v)?.predictions);
            Ok(())
        })?;
        parsed.predictions = predictions;
        return Ok(parsed);
    }

    let v = json::parse_value(path, text)?;
    let keep = |where_: String, r: Result<Prediction, String>, parsed: &mut Parsed| match r {
        Ok(p) => parsed.predictions.push(p),
        Err(m) => parsed.warnings.push(format!("{}: {where_}: {m}", path.display())),
    };
    match &v {
        Value::Object(_) if v.get("instance_id").is_some() => {
            let p = prediction(&v, None).map_err(|m| IngestError::shape(path, m))?;
            parsed.predictions.push(p);
        }
        Value::Object(map) => {
            for (key, item) in map {
                keep(format!("key {key:?}"), prediction(item, Some(key)), &mut parsed);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                keep(format!("item {i}"), prediction(item, None), &mut parsed);
            }
        }
        _ => {
            return Err(IngestError::shape(path, "predictions: expected a JSON object or list"));
        }
    }
    if parsed.predictions.is_empty() {
        let why = parsed.warnings.first().cloned().unwrap_or_else(|| "no records".to_string());
        return Err(IngestError::shape(path, format!("no readable prediction ({why})")));
    }
    Ok(parsed)
}

/// One line of an `all_preds.jsonl` (for reading large files a line at a time).
pub fn parse_line(path: &Path, line: usize, v: &Value) -> Result<Parsed, IngestError> {
    let p = prediction(v, None).map_err(|m| IngestError::shape(path, format!("line {line}: {m}")))?;
    Ok(Parsed { predictions: vec![p], ..Parsed::default() })
}

/// JSON lines: named `.jsonl`, or shaped like it.
fn is_jsonl(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "jsonl") || crate::ingest::detect::is_jsonl(text)
}

/// One record. `key` is the dict key of a `preds.json` entry, used when the record has no
/// `instance_id` of its own.
fn prediction(v: &Value, key: Option<&str>) -> Result<Prediction, String> {
    if !v.is_object() {
        return Err("a prediction must be a JSON object".to_string());
    }
    if v.get("model_patch").is_none() && v.get("fix_patch").is_some() {
        return multi_swebench_prediction(v);
    }
    let instance_id = match v.get("instance_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        None | Some(Value::Null) => match key {
            Some(k) if !k.trim().is_empty() => k.to_string(),
            _ => return Err("missing instance_id".to_string()),
        },
        Some(other) => {
            return Err(format!("instance_id must be a non-empty string, found {other}"));
        }
    };
    let patch = match v.get("model_patch") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Some(_) => {
            return Err(format!("{instance_id}: model_patch must be a string or null"));
        }
    };
    Ok(Prediction { instance_id, model: json::nonempty_str(v, "model_name_or_path"), patch })
}

/// A multi-SWE-bench record: `{org, repo, number, fix_patch}`.
fn multi_swebench_prediction(v: &Value) -> Result<Prediction, String> {
    let instance_id =
        pr_instance_id(v, "org").ok_or("missing org, repo or number (the instance is org__repo-number)")?;
    let patch = match v.get("fix_patch") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Some(_) => return Err(format!("{instance_id}: fix_patch must be a string or null")),
    };
    Ok(Prediction { instance_id, model: json::nonempty_str(v, "model_name_or_path"), patch })
}

/// `org__repo-number`, SWE-bench's name for a task taken from a GitHub pull request or issue, from
/// a record's owner (`org` in multi-SWE-bench, `owner` in the OpenHands resolver), `repo` and
/// `number` (an integer or a string holding one).
pub fn pr_instance_id(v: &Value, owner_key: &str) -> Option<String> {
    let org = json::nonempty_str(v, owner_key)?;
    let repo = json::nonempty_str(v, "repo")?;
    let number = match v.get("number")? {
        Value::Number(n) => n.to_string(),
        Value::String(s) if !s.trim().is_empty() => s.trim().to_string(),
        _ => return None,
    };
    Some(format!("{org}__{repo}-{number}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str, text: &str) -> Parsed {
        parse(Path::new(path), text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn summary(p: &Parsed) -> Vec<(String, Option<String>, bool)> {
        p.predictions.iter().map(|x| (x.instance_id.clone(), x.model.clone(), x.patch.is_some())).collect()
    }

    #[test]
    fn fixture_jsonl_has_two_predictions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/swe-agent-preds/all_preds.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        let p = ok(path, &text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let model = Some("demo-model".to_string());
        assert_eq!(
            summary(&p),
            vec![("demo__calc-1".to_string(), model.clone(), true), ("demo__calc-2".to_string(), model, true)]
        );
        let patch = p.predictions[0].patch.as_deref().unwrap_or_default();
        assert!(patch.starts_with("diff --git a/calc/ops.py"), "{patch}");
    }

    #[test]
    fn real_all_preds_has_one_pydicom_prediction() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/swe-agent-0.x/all_preds.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        let p = ok(path, &text);
        assert_eq!(p.predictions.len(), 1);
        let pred = &p.predictions[0];
        assert_eq!(pred.instance_id, "pydicom__pydicom-1458");
        assert!(pred.model.as_deref().is_some_and(|m| m.starts_with("gpt4__")));
        assert!(pred.patch.as_deref().is_some_and(|d| d.contains("numpy_handler.py")));
    }

    #[test]
    fn bad_jsonl_line_is_a_warning_and_good_lines_are_kept() {
        let text = "{\"instance_id\": \"a__b-1\", \"model_name_or_path\": \"m\", \"model_patch\": \"diff\"}\n\
                    {\"instance_id\": \"a__b-2\", \"model_patch\n";
        let p = ok("all_preds.jsonl", text);
        assert_eq!(summary(&p), vec![("a__b-1".to_string(), Some("m".to_string()), true)]);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("all_preds.jsonl: line 2"), "{}", p.warnings[0]);
    }

    #[test]
    fn jsonl_line_of_wrong_shape_names_its_line() {
        let text = "{\"instance_id\": \"a__b-1\", \"model_patch\": \"\"}\n[1, 2]\n{\"model_patch\": \"x\"}\n";
        let p = ok("preds.jsonl", text);
        // An empty patch is no patch.
        assert_eq!(summary(&p), vec![("a__b-1".to_string(), None, false)]);
        assert_eq!(p.warnings.len(), 2);
        assert!(p.warnings[0].contains("line 2"), "{}", p.warnings[0]);
        assert!(p.warnings[1].contains("line 3: missing instance_id"), "{}", p.warnings[1]);
    }

    #[test]
    fn preds_json_dict_list_and_single_object() {
        let dict = r#"{
  "x__y-1": {"model_name_or_path": "m", "model_patch": "diff --git a/f b/f"},
  "x__y-2": {"model_name_or_path": "m", "instance_id": "x__y-2", "model_patch": null},
  "x__y-3": "not an object"
}"#;
        let p = ok("preds.json", dict);
        assert_eq!(
            summary(&p),
            vec![
                ("x__y-1".to_string(), Some("m".to_string()), true),
                ("x__y-2".to_string(), Some("m".to_string()), false)
            ]
        );
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("key \"x__y-3\""), "{}", p.warnings[0]);

        let list = r#"[{"instance_id": "x__y-1", "model_patch": "d"}, {"instance_id": 7}]"#;
        let p = ok("preds.json", list);
        assert_eq!(summary(&p), vec![("x__y-1".to_string(), None, true)]);
        assert!(p.warnings[0].contains("item 1"), "{}", p.warnings[0]);

        let single = r#"{"model_name_or_path": "m", "instance_id": "x__y-9", "model_patch": "d"}"#;
        let p = ok("x__y-9.pred", single);
        assert_eq!(summary(&p), vec![("x__y-9".to_string(), Some("m".to_string()), true)]);
    }

    /// MANIFEST: multi-SWE-bench predictions, 3 lines of `org`, `repo`, `number`, `fix_patch`.
    #[test]
    fn real_multi_swe_bench_patch_jsonl_names_instances_org_repo_number() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/openhands/multi_swe_bench_patch.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
        let p = ok(path, &text);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let ids: Vec<&str> = p.predictions.iter().map(|p| p.instance_id.as_str()).collect();
        assert_eq!(ids, ["ponylang__ponyc-4595", "ponylang__ponyc-4593", "ponylang__ponyc-4588"]);
        assert!(p.predictions.iter().all(|p| p.model.is_none() && p.patch.is_some()));
        assert!(
            p.predictions[0].patch.as_deref().is_some_and(|d| d.starts_with("diff --git a/src/libponyc/ast/parser.c"))
        );
        // `number` as an integer, and a record that names no repository.
        let text = "{\"org\": \"o\", \"repo\": \"r\", \"number\": 7, \"fix_patch\": \"\"}\n{\"org\": \"o\", \"number\": 8, \"fix_patch\": \"d\"}\n";
        let p = ok("patch.jsonl", text);
        assert_eq!(summary(&p), vec![("o__r-7".to_string(), None, false)]);
        assert!(p.warnings[0].contains("line 2: missing org, repo or number"), "{:?}", p.warnings);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let e = parse(Path::new("preds.json"), "{\n  \"a\": {\"model_patch\": \n").err();
        assert!(e.is_some_and(|e| e.to_string().contains("preds.json: line")));
        let e = parse(Path::new("preds.json"), "42").err();
        assert!(e.is_some_and(|e| e.to_string().contains("expected a JSON object or list")));
        let e = parse(Path::new("p.pred"), r#"{"instance_id": 3}"#).err();
        assert!(e.is_some_and(|e| e.to_string().contains("instance_id must be")));
        assert!(parse(Path::new("preds.json"), "[]").is_err());
        assert!(parse(Path::new("all_preds.jsonl"), "{oops\n").is_err());
    }
}
