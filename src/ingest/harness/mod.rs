//! SWE-bench evaluation harness: per-instance `report.json` (wrapped or flat), instance log
//! folders, and run-level summaries.
//!
//! - `report.json` is `{"<instance_id>": {resolved, tests_status, ...}}` as the harness writes
//!   it, or the inner object alone (copies in the experiments archive); the instance id of a flat
//!   report is its folder's name.
//! - An instance folder holds `report.json`, `run_instance.log`, `test_output.txt`,
//!   `patch.diff`, `eval.sh` (and `image_build_dir`, a symlink that dangles once copied). The
//!   harness writes it at `logs/run_evaluation/<run_id>/<model>/<instance_id>/`; copies keep it
//!   as `logs/<instance_id>/` (SWE-bench/experiments), `<instance_id>/eval/` (beside the
//!   trajectory) or `run_evaluation/<instance_id>/`. The run id and model come from
//!   `run_instance.log`, which names where the harness wrote the files (`run_log`), else from the
//!   canonical levels; a layout word (`logs`, `eval`, `run evaluation`, ...) is never a model.
//! - Without `report.json`, a patch that did not apply (`run_instance.log`) is unresolved, and
//!   `test_output.txt` is read with the harness's own log parser for the instance's repository
//!   (`log_parsers`): the tests are kept as read (`TestOutcome::logged`) and graded against the
//!   task's lists when the task is known (`store::link`); otherwise the verdict is unknown.
//! - Without `report.json`, the verdict line `run_instance.log` ends with (`Result for <id>:
//!   resolved: True`, Multi-SWE-bench submissions keep only the log) is the verdict.
//! - SWE-smith's harness writes a flat report with `model_name_or_path` (the model) and, for an
//!   instance that timed out, `{"timed_out": true, "timeout": N}` (verdict unknown); its
//!   validation reports (bare test lists, no verdict) are a task-building artefact, skipped.
//! - A run summary lists instance ids by verdict (`resolved_ids`, `unresolved_ids`, ...; SWE-smith
//!   `ids_resolved`, `ids_unresolved`; Multi-SWE-bench a `resolved` list);
//!   SWE-bench/experiments' `results/results.json` and AutoCodeRover's `final_report.json` are
//!   read by `ingest::experiments`, SWE-PolyBench's `<id>_result.json` by `ingest::polybench`.

pub mod log_parsers;
mod run_log;
pub(crate) mod test_log;

use crate::error::IngestError;
use crate::ingest::file_name::instance_from_file_name;
use crate::ingest::json;
use crate::model::{Format, Parsed, TestCase, TestGroup, TestOutcome};
use crate::store::is_layout_word;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The log kept when there is no `test_output.txt`: the tail of `run_instance.log`.
const RUN_LOG_TAIL: usize = 64 * 1024;

/// Keys of an instance report; an object with any of them is a flat report.
const REPORT_KEYS: [&str; 7] = [
    "tests_status",
    "resolved",
    "patch_successfully_applied",
    "patch_exists",
    "patch_is_None",
    "infra_failure",
    "timed_out",
];

/// Why a validation report is not read.
const VALIDATION: &str =
    "a SWE-smith validation report (the task's test lists, built with the gold patch): not an agent's verdict";

pub fn parse_report(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let v = json::parse_value(path, text)?;
    if crate::ingest::polybench::is_result(&v) {
        return crate::ingest::polybench::parse(path, &v);
    }
    let mut parsed = Parsed::default();
    if is_validation_report(&v) {
        parsed.nothing = Some(VALIDATION.to_string());
        return Ok(parsed);
    }
    parsed.outcomes = report_outcomes(path, &v, &mut parsed.warnings)?;
    Ok(parsed)
}

/// A SWE-smith validation report: `{FAIL_TO_PASS: [...], PASS_TO_PASS: [...], ...}`, bare lists
/// of test names per group.
fn is_validation_report(v: &Value) -> bool {
    v.as_object().is_some_and(|map| {
        !map.is_empty() && map.iter().all(|(k, v)| TestGroup::from_name(k).is_some() && v.is_array())
    })
}

fn is_instance_report(obj: &Map<String, Value>) -> bool {
    REPORT_KEYS.iter().any(|k| obj.contains_key(*k))
}

/// One outcome per instance of a wrapped report, or one for a flat report.
fn report_outcomes(path: &Path, v: &Value, warnings: &mut Vec<String>) -> Result<Vec<TestOutcome>, IngestError> {
    let Value::Object(map) = v else {
        return Err(IngestError::shape(path, "report: expected a JSON object"));
    };
    if is_instance_report(map) {
        let id = flat_instance_id(path).ok_or_else(|| {
            IngestError::shape(path, "flat report: the instance id comes from the folder name, and there is none")
        })?;
        return Ok(vec![report_outcome(path, &id, map, warnings)?]);
    }
    if map.is_empty() {
        return Err(IngestError::shape(path, "report: empty object, no instance"));
    }
    map.iter()
        .map(|(id, inner)| match inner {
            Value::Object(obj) if is_instance_report(obj) => report_outcome(path, id, obj, warnings),
            _ => Err(IngestError::shape(
                path,
                format!("report: {id:?} is not an instance report (expected an object with resolved / tests_status)"),
            )),
        })
        .collect()
}

/// `.../django__django-11163/report.json` (or `.../django__django-11163/eval/report.json`) ->
/// `django__django-11163`; a flat report under another name is named by its file.
fn flat_instance_id(path: &Path) -> Option<String> {
    let id = if path.file_name().is_some_and(|n| n == "report.json") {
        instance_folder(path.parent()?)?
    } else {
        instance_from_file_name(path)
    };
    (!id.is_empty()).then_some(id)
}

/// The name of the folder that names the instance: the folder itself, or its parent when the
/// folder is a layout word (`<instance>/eval/`).
fn instance_folder(dir: &Path) -> Option<String> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let own = name(dir)?;
    if is_layout_word(&own) { dir.parent().and_then(name) } else { Some(own) }
}

fn report_outcome(
    path: &Path,
    id: &str,
    obj: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<TestOutcome, IngestError> {
    let flag = |key: &str| -> Result<Option<bool>, IngestError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(IngestError::shape(path, format!("report {id}: {key} must be true or false, found {other}")))
            }
        }
    };
    let mut resolved = flag("resolved")?;
    if flag("timed_out")? == Some(true) {
        let after = obj.get("timeout").map(|t| format!(" after {t} s")).unwrap_or_default();
        warnings.push(format!(
            "{}: {id}: the evaluation timed out{after}: the verdict is unknown (an evaluation without tests)",
            path.display()
        ));
    }
    if flag("infra_failure")? == Some(true) {
        warnings.push(format!(
            "{}: {id}: infra_failure is set: the evaluation did not run properly, resolved is unknown",
            path.display()
        ));
        resolved = None;
    }
    let patch_exists = match flag("patch_exists")? {
        Some(b) => Some(b),
        None => flag("patch_is_None")?.map(|none| !none),
    };
    // SWE-smith names the model in the report.
    let model = obj.get("model_name_or_path").and_then(Value::as_str).map(str::trim).filter(|m| !m.is_empty());
    Ok(TestOutcome {
        instance_id: id.to_string(),
        format: Some(Format::SwebenchReport),
        model: model.map(str::to_string),
        resolved,
        patch_applied: flag("patch_successfully_applied")?,
        patch_exists,
        tests: tests_status(path, id, obj.get("tests_status"), warnings)?,
        ..TestOutcome::default()
    })
}

/// `{"FAIL_TO_PASS": {"success": [...], "failure": [...]}, ...}`: one case per name per group.
fn tests_status(
    path: &Path,
    id: &str,
    v: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<Vec<TestCase>, IngestError> {
    let groups = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(groups)) => groups,
        Some(_) => {
            return Err(IngestError::shape(path, format!("report {id}: tests_status is not an object")));
        }
    };
    let mut tests = Vec::new();
    for (key, lists) in groups {
        let Some(group) = TestGroup::from_name(key) else {
            warnings.push(format!("{}: {id}: unknown test group {key:?} ignored", path.display()));
            continue;
        };
        let Value::Object(lists) = lists else {
            return Err(IngestError::shape(path, format!("report {id}: tests_status.{key} is not an object")));
        };
        for (list, passed) in [("success", true), ("failure", false)] {
            let items = match lists.get(list) {
                None | Some(Value::Null) => continue,
                Some(Value::Array(items)) => items,
                Some(_) => {
                    return Err(IngestError::shape(
                        path,
                        format!("report {id}: tests_status.{key}.{list} is not a list"),
                    ));
                }
            };
            for item in items {
                match item.as_str() {
                    Some(name) => {
                        tests.push(TestCase { name: name.to_string(), group: Some(group), passed, message: None })
                    }
                    None => warnings.push(format!(
                        "{}: {id}: tests_status.{key}.{list}: non-string test name {item} ignored",
                        path.display()
                    )),
                }
            }
        }
    }
    Ok(tests)
}

/// Summary file names that say nothing of the model evaluated (`report.json` of SWE-smith,
/// `results.json`, AutoCodeRover's `final_report.json`): no run label.
const GENERIC_NAMES: [&str; 4] = ["report", "results", "final_report", "summary"];

pub fn parse_summary(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let v = json::parse_value(path, text)?;
    if !v.is_object() {
        return Err(IngestError::shape(path, "run summary: expected a JSON object"));
    }
    if crate::ingest::polybench::is_result(&v) {
        return crate::ingest::polybench::parse(path, &v);
    }
    if crate::ingest::experiments::is_final_report(&v) {
        return crate::ingest::experiments::parse_final_report(path, &v);
    }
    // (list, resolved, patch_exists); SWE-smith spells them `ids_resolved`, `ids_unresolved`.
    let lists: [(&str, Option<bool>, Option<bool>); 6] = [
        ("resolved_ids", Some(true), None),
        ("ids_resolved", Some(true), None),
        ("unresolved_ids", Some(false), None),
        ("ids_unresolved", Some(false), None),
        ("empty_patch_ids", Some(false), Some(false)),
        ("error_ids", None, None),
    ];
    if lists.iter().all(|(key, ..)| v.get(*key).is_none()) {
        if crate::ingest::experiments::is_results(&v) {
            return crate::ingest::experiments::parse_results(path, &v);
        }
        return Err(IngestError::shape(
            path,
            "run summary: none of resolved_ids, unresolved_ids, empty_patch_ids, error_ids, ids_resolved, \
             ids_unresolved",
        ));
    }
    let mut parsed = Parsed::default();
    match v.get("schema_version") {
        None => {}
        Some(s) if s.as_i64() == Some(2) => {}
        Some(s) => parsed.warnings.push(format!("{}: schema_version {s} is not 2; read as version 2", path.display())),
    }
    let run_label = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !GENERIC_NAMES.iter().any(|g| g.eq_ignore_ascii_case(s)));
    // Instance id -> (index in outcomes, list it came from).
    let mut seen: HashMap<String, (usize, &str)> = HashMap::new();
    for (key, resolved, patch_exists) in lists {
        // Multi-SWE-bench lists the resolved ids under `resolved` (SWE-smith's is a count).
        let list = match (key, v.get(key)) {
            ("resolved_ids", None) => v.get("resolved").filter(|r| r.is_array()),
            (_, found) => found,
        };
        let items = match list {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(IngestError::shape(path, format!("run summary: {key} is not a list")));
            }
        };
        for item in items {
            let Some(id) = item.as_str() else {
                parsed.warnings.push(format!("{}: {key}: non-string id {item} ignored", path.display()));
                continue;
            };
            if let Some(&(i, first)) = seen.get(id) {
                match parsed.outcomes.get_mut(i) {
                    Some(o) if patch_exists.is_some() => o.patch_exists = patch_exists,
                    _ => parsed
                        .warnings
                        .push(format!("{}: {id} is listed in both {first} and {key}; kept {first}", path.display())),
                }
                continue;
            }
            seen.insert(id.to_string(), (parsed.outcomes.len(), key));
            parsed.outcomes.push(TestOutcome {
                instance_id: id.to_string(),
                format: Some(Format::SwebenchSummary),
                run_label: run_label.clone(),
                resolved,
                patch_exists,
                ..TestOutcome::default()
            });
        }
    }
    Ok(parsed)
}

/// Names of the member files a harness folder may hold.
#[derive(Default)]
struct Members<'a> {
    report: Option<(&'a Path, &'a str)>,
    run_log: Option<&'a str>,
    test_output: Option<&'a str>,
    patch: Option<&'a str>,
}

pub fn parse_dir(path: &Path, files: &[(PathBuf, String)]) -> Result<Parsed, IngestError> {
    let mut parsed = Parsed::default();
    let mut m = Members::default();
    for (p, text) in files {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("report.json") => m.report = Some((p.as_path(), text.as_str())),
            Some("run_instance.log") => m.run_log = Some(text),
            Some("test_output.txt") => m.test_output = Some(text),
            Some("patch.diff") => m.patch = Some(text),
            _ => parsed.warnings.push(format!("{}: not a harness file; ignored", p.display())),
        }
    }
    if m.report.is_none() && m.run_log.is_none() && m.test_output.is_none() && m.patch.is_none() {
        return Err(IngestError::shape(
            path,
            "harness folder: none of report.json, run_instance.log, test_output.txt, patch.diff",
        ));
    }
    let located = m.run_log.and_then(run_log::location);
    let folder_id = located.as_ref().map(|l| l.instance.clone()).or_else(|| instance_folder(path)).unwrap_or_default();

    let mut outcome = match m.report {
        Some((report_path, text)) => {
            let v = json::parse_value(report_path, text)?;
            if is_validation_report(&v) {
                parsed.nothing = Some(VALIDATION.to_string());
                return Ok(parsed);
            }
            let outcomes = report_outcomes(report_path, &v, &mut parsed.warnings)?;
            let keep = outcomes.iter().position(|o| o.instance_id == folder_id).unwrap_or(0);
            if outcomes.len() > 1 {
                parsed.warnings.push(format!(
                    "{}: holds {} instances; the folder keeps only {:?}",
                    report_path.display(),
                    outcomes.len(),
                    outcomes.get(keep).map(|o| o.instance_id.as_str()).unwrap_or_default()
                ));
            }
            outcomes.into_iter().nth(keep).ok_or_else(|| IngestError::shape(report_path, "report: no instance"))?
        }
        None => {
            if folder_id.is_empty() {
                return Err(IngestError::shape(path, "harness folder: no folder name to take the instance id from"));
            }
            let mut o = TestOutcome { instance_id: folder_id, ..TestOutcome::default() };
            if m.run_log.is_some_and(|log| log.contains("Patch Apply Failed")) {
                o.patch_applied = Some(false);
                o.resolved = Some(false);
            } else if let Some(log) = m.test_output {
                read_test_output(&mut o, log);
            }
            if o.resolved.is_none()
                && let Some(verdict) = m.run_log.and_then(|log| run_log::verdict(log, &o.instance_id))
            {
                o.resolved = Some(verdict);
            }
            o
        }
    };
    outcome.format = Some(Format::SwebenchHarness);
    (outcome.model, outcome.run_label) = match located {
        Some(l) => (Some(l.model), Some(l.run_id)),
        None => folder_model(path),
    };
    if let Some(patch) = m.patch {
        if outcome.patch_exists.is_none() {
            outcome.patch_exists = Some(!patch.trim().is_empty());
        }
        outcome.patch = Some(patch.to_string()).filter(|p| !p.trim().is_empty());
    }
    outcome.log = match (m.test_output, m.run_log) {
        (Some(out), _) => Some(out.to_string()),
        (None, Some(log)) => Some(tail(log, RUN_LOG_TAIL).to_string()),
        (None, None) => None,
    };
    parsed.outcomes.push(outcome);
    Ok(parsed)
}

/// A test output without a report, read as the harness reads it: unresolved when the harness
/// says so whatever the task; the tests as its parser reads them, to grade once the task is
/// known; else (no markers, no parser for the repository) the tests as `test_log` reads them
/// and no verdict.
fn read_test_output(o: &mut TestOutcome, log: &str) {
    let messages = test_log::parse_tests(log);
    match log_parsers::read(log, &o.instance_id) {
        log_parsers::Reading::Unresolved(code) => {
            o.resolved = Some(false);
            if code.contains("Patch Apply Failed") {
                o.patch_applied = Some(false);
            }
            o.tests = messages;
        }
        log_parsers::Reading::Tests(mut tests) => {
            for t in &mut tests {
                t.message = messages.iter().find(|c| c.name == t.name && !c.passed).and_then(|c| c.message.clone());
            }
            o.patch_applied = Some(true);
            o.tests = tests.iter().map(crate::store::ungraded).collect();
            o.logged = Some(tests);
        }
        log_parsers::Reading::NoMarkers | log_parsers::Reading::NoParser(_) => o.tests = messages,
    }
}

/// The model and run id a folder's place names: `run_evaluation/<run_id>/<model>/<instance>`
/// (or any `<run_id>/<model>/<instance>`), never a layout word, nothing for `<instance>/eval/`.
fn folder_model(path: &Path) -> (Option<String>, Option<String>) {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    if name(Some(path)).is_some_and(|n| is_layout_word(&n)) {
        return (None, None);
    }
    let model = name(path.parent()).filter(|n| !is_layout_word(n));
    let run = model.as_ref().and_then(|_| name(path.parent().and_then(Path::parent))).filter(|n| !is_layout_word(n));
    (model, run)
}

/// The last `max` bytes of `text`, starting at a character boundary and, when the text is cut,
/// at the start of a line.
fn tail(text: &str, max: usize) -> &str {
    let Some(mut start) = text.len().checked_sub(max) else {
        return text;
    };
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = text.get(start..).unwrap_or(text);
    match cut.find('\n') {
        Some(nl) if nl + 1 < cut.len() => cut.get(nl + 1..).unwrap_or(cut),
        _ => cut,
    }
}

#[cfg(test)]
mod tests;
