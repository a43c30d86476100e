//! SWE-bench/experiments, the public record of every leaderboard submission. A submission is a
//! folder `evaluation/<split>/<date>_<name>/` holding:
//!
//! - `all_preds.jsonl` or `preds.json`: the predictions (`predictions`);
//! - `metadata.yaml`, `README.md`: about the submission, not inputs (skipped as text);
//! - `trajs/`: one file or folder per instance, in the submitting agent's own format;
//! - `logs/<instance_id>/`: the harness's instance folder without its `run_evaluation/<run_id>/
//!   <model>/` levels (`patch.diff`, `report.json`, `test_output.txt`, `run_instance.log`,
//!   `eval.sh`; some only `patch.diff` and `test_output.txt`), read by `harness`;
//! - `results/results.json`: instance ids by verdict (read here), beside breakdowns
//!   (`resolved_by_repo.json`, `resolved_by_time.json`: `{key: {resolved, total}}`, skipped).
//!
//! AutoCodeRover's `final_report.json` (beside the SWE-agent baseline runs it evaluated, in
//! `results/swe-agent-results/<config>/` with `all_preds.jsonl` and 0.x `.traj` files) lists only
//! the resolved ids (`stats`, `resolved`, `resolved_per_project`): an id not listed is unresolved
//! when `all_preds.jsonl` beside it has a prediction for it (read from there; a change to it
//! alone does not make the report be read again).
//!
//! Runs, predictions and evaluations of one submission folder are joined together by
//! `store::link` (they share the folder once `trajs`, `logs`, `results` are taken off).

use crate::error::IngestError;
use crate::model::{Format, Parsed, TestOutcome};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// What being in a list says: (list, resolved, patch_exists, patch_applied).
type Listed = (&'static str, Option<bool>, Option<bool>, Option<bool>);

/// `results.json` lists, first match wins.
/// `resolved`, `no_generation` and `no_logs` are all a newer file has; an older one also lists
/// the stages an instance reached (`generated`, `with_logs`, `applied`, ...). An instance listed
/// as evaluated and not resolved is unresolved; one without logs has no verdict.
const LISTS: [Listed; 10] = [
    ("resolved", Some(true), Some(true), Some(true)),
    ("no_generation", Some(false), Some(false), None),
    ("no_apply", Some(false), Some(true), Some(false)),
    ("install_fail", Some(false), None, None),
    ("reset_failed", Some(false), None, None),
    ("test_errored", Some(false), None, None),
    ("test_timeout", Some(false), None, None),
    ("applied", Some(false), Some(true), Some(true)),
    ("with_logs", Some(false), None, None),
    ("no_logs", None, None, None),
];

/// The keys that tell a `results.json` from its top-level keys (with `resolved`).
pub const RESULTS_KEYS: [&str; 6] =
    ["no_generation", "no_logs", "generated", "with_logs", "applied", "total_instances"];

/// A `results.json`: `resolved` is a list of instance ids.
pub fn is_results(v: &Value) -> bool {
    v.get("resolved").is_some_and(Value::is_array)
}

/// AutoCodeRover's `final_report.json`: `stats`, `resolved` (a list), `resolved_per_project`.
pub fn is_final_report(v: &Value) -> bool {
    is_results(v) && v.get("stats").is_some() && v.get("resolved_per_project").is_some()
}

/// The predictions file read beside a `final_report.json` is at most this large.
const MAX_PREDS: u64 = 256 << 20;

/// One outcome per resolved id, and one unresolved per id `all_preds.jsonl` beside the report
/// predicts and the report does not list.
pub fn parse_final_report(path: &Path, v: &Value) -> Result<Parsed, IngestError> {
    let mut parsed = parse_results(path, v)?;
    let resolved: HashSet<String> = parsed.outcomes.iter().map(|o| o.instance_id.clone()).collect();
    let preds = path
        .parent()
        .map(|d| d.join("all_preds.jsonl"))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_PREDS));
    let Some(preds_path) = preds else {
        parsed.warnings.push(format!(
            "{}: no all_preds.jsonl beside it: only the resolved ids are read (the others' verdict is unknown)",
            path.display()
        ));
        return Ok(parsed);
    };
    let text =
        std::fs::read_to_string(&preds_path).map_err(|source| IngestError::Io { path: preds_path.clone(), source })?;
    let mut seen = resolved;
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            parsed.warnings.push(format!("{}: line {}: not JSON, skipped", preds_path.display(), n + 1));
            continue;
        };
        let Some(id) = v.get("instance_id").and_then(Value::as_str).filter(|id| seen.insert(id.to_string())) else {
            continue;
        };
        let patch = v.get("model_patch").and_then(Value::as_str).unwrap_or_default();
        parsed.outcomes.push(TestOutcome {
            instance_id: id.to_string(),
            format: Some(Format::SwebenchSummary),
            resolved: Some(false),
            patch_exists: Some(!patch.trim().is_empty()),
            ..TestOutcome::default()
        });
    }
    Ok(parsed)
}

/// A breakdown beside `results.json` (`resolved_by_repo.json`, `resolved_by_time.json`):
/// every value is `{resolved, total}`. Not an input.
pub fn is_breakdown(v: &Value) -> bool {
    match v {
        Value::Object(map) if !map.is_empty() => {
            map.values().all(|x| x.get("total").is_some_and(Value::is_number) && x.get("resolved").is_some())
        }
        _ => false,
    }
}

/// One outcome per instance listed, by the first list that names it (`generated` alone is no
/// evaluation). The file name says nothing of the model: no run label.
pub fn parse_results(path: &Path, v: &Value) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    let mut seen: HashSet<&str> = HashSet::new();
    for (key, resolved, patch_exists, patch_applied) in LISTS {
        let items = match v.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => return Err(IngestError::shape(path, format!("results: {key} is not a list"))),
        };
        for item in items {
            let Some(id) = item.as_str() else {
                parsed.warnings.push(format!("{}: {key}: non-string id {item} ignored", path.display()));
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            parsed.outcomes.push(TestOutcome {
                instance_id: id.to_string(),
                format: Some(Format::SwebenchSummary),
                resolved,
                patch_exists,
                patch_applied,
                ..TestOutcome::default()
            });
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_and_older_results_files() {
        let v: Value = serde_json::json!({
            "no_generation": ["a__a-2"], "no_logs": ["a__a-3"], "resolved": ["a__a-1"]
        });
        assert!(is_results(&v));
        let p = match parse_results(Path::new("results.json"), &v) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let got: Vec<(&str, Option<bool>, Option<bool>)> =
            p.outcomes.iter().map(|o| (o.instance_id.as_str(), o.resolved, o.patch_exists)).collect();
        assert_eq!(
            got,
            [("a__a-1", Some(true), Some(true)), ("a__a-2", Some(false), Some(false)), ("a__a-3", None, None)]
        );
        assert!(p.outcomes.iter().all(|o| o.run_label.is_none() && o.model.is_none()));

        let v: Value = serde_json::json!({
            "generated": ["b-1", "b-2", "b-3", "b-4"], "with_logs": ["b-1", "b-2", "b-3"],
            "applied": ["b-1", "b-2"], "no_apply": ["b-3"], "resolved": ["b-1"], "reset_failed": []
        });
        let p = match parse_results(Path::new("results.json"), &v) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let got: Vec<(&str, Option<bool>, Option<bool>)> =
            p.outcomes.iter().map(|o| (o.instance_id.as_str(), o.resolved, o.patch_applied)).collect();
        assert_eq!(
            got,
            [("b-1", Some(true), Some(true)), ("b-3", Some(false), Some(false)), ("b-2", Some(false), Some(true))]
        );
    }

    #[test]
    fn breakdowns_are_told_apart() {
        assert!(is_breakdown(&serde_json::json!({"django/django": {"resolved": 3, "total": 10}})));
        assert!(!is_breakdown(&serde_json::json!({"x": {"resolved": true, "tests_status": {}}})));
        assert!(!is_breakdown(&serde_json::json!({})));
        assert!(!is_results(&serde_json::json!({"resolved": true})));
    }
}
