//! SWE-PolyBench per-instance results: `logs/<instance_id>_result.json` in a submission folder
//! (`logs/`, `trajs/`, `metadata.yaml`), one evaluation each: `instance_id`, `patch_applied`,
//! `generation`, `with_logs`, `all_f2p_passed`, `no_p2p_failed`, `resolved` (both of the
//! previous: the verdict), `passed_tests`, `failed_tests` (test names as the runner printed
//! them, TAP `# TODO` entries included; not split into FAIL_TO_PASS and PASS_TO_PASS, and a
//! resolved instance may list failures outside both). `<id>_metrics.json` beside it measures
//! retrieval against the gold patch, not the verdict (skipped as JSON of no known format).

use crate::error::IngestError;
use crate::model::{Format, Parsed, TestCase, TestOutcome};
use serde_json::Value;
use std::path::Path;

/// A result: `all_f2p_passed` and `no_p2p_failed` beside `resolved`.
pub fn is_result(v: &Value) -> bool {
    ["all_f2p_passed", "no_p2p_failed"].iter().all(|k| v.get(*k).is_some())
}

/// The same, told from the top-level keys (`detect`).
pub fn is_result_keys(keys: &[String]) -> bool {
    ["all_f2p_passed", "no_p2p_failed"].iter().all(|k| keys.iter().any(|x| x == k))
}

pub fn parse(path: &Path, v: &Value) -> Result<Parsed, IngestError> {
    let flag = |key: &str| -> Result<Option<bool>, IngestError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(IngestError::shape(path, format!("result: {key} must be true or false, found {other}"))),
        }
    };
    let id = match v.get("instance_id").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => instance_of(path).ok_or_else(|| {
            IngestError::shape(path, "result: no instance_id, and the file is not named <id>_result.json")
        })?,
    };
    let mut parsed = Parsed::default();
    let mut tests = Vec::new();
    for (key, passed) in [("passed_tests", true), ("failed_tests", false)] {
        let items = match v.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => return Err(IngestError::shape(path, format!("result: {key} is not a list"))),
        };
        for item in items {
            match item.as_str() {
                Some(name) => tests.push(TestCase { name: name.to_string(), group: None, passed, message: None }),
                None => parsed.warnings.push(format!("{}: {key}: non-string test name {item} ignored", path.display())),
            }
        }
    }
    parsed.outcomes.push(TestOutcome {
        instance_id: id,
        format: Some(Format::SwebenchReport),
        resolved: flag("resolved")?,
        patch_applied: flag("patch_applied")?,
        patch_exists: flag("generation")?,
        tests,
        ..TestOutcome::default()
    });
    Ok(parsed)
}

/// `<id>_result.json` -> `<id>`.
fn instance_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix("_result.json").filter(|id| !id.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_gives_its_verdict_and_tests() {
        let v = serde_json::json!({
            "instance_id": "a__b-1", "patch_applied": true, "generation": true, "with_logs": true,
            "all_f2p_passed": true, "no_p2p_failed": true, "resolved": true,
            "passed_tests": ["t1", "t2"], "failed_tests": ["ok 3 t3 # TODO later"]
        });
        assert!(is_result(&v));
        let p = parse(Path::new("logs/a__b-1_result.json"), &v).unwrap_or_else(|e| panic!("{e}"));
        let o = &p.outcomes[0];
        assert_eq!((o.instance_id.as_str(), o.resolved, o.tests.len()), ("a__b-1", Some(true), 3));
        assert_eq!(o.tests.iter().filter(|t| !t.passed).count(), 1);
        let mut v = v;
        v.as_object_mut().map(|m| m.remove("instance_id"));
        let p = parse(Path::new("logs/c__d-2_result.json"), &v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.outcomes[0].instance_id, "c__d-2");
    }
}
