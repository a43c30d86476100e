//! Where the harness wrote an instance's files, read from its `run_instance.log`.
//!
//! The harness logs each file it writes with the path it wrote it to:
//! `... - INFO - Intermediate patch for django__django-11099 written to
//! logs/run_evaluation/<run_id>/<model>/django__django-11099/patch.diff, now applying to
//! container...` (also `Eval script ... written to .../eval.sh; copying to container...` and
//! `Test output ... written to .../test_output.txt`). A copied folder (`logs/<instance>/`,
//! `<instance>/eval/`) has lost those levels; the log still names them.

/// The run id, model folder and instance a `run_instance.log` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub run_id: String,
    /// The model folder: `model_name_or_path` with `/` spelled `__`.
    pub model: String,
    pub instance: String,
}

const WRITTEN_TO: &str = " written to ";

/// The harness's verdict line, the last one for `instance`: `Result for <instance>: resolved:
/// True` (or `False`), written after the report as a Python dict.
pub fn verdict(log: &str, instance: &str) -> Option<bool> {
    let head = format!("Result for {instance}: resolved: ");
    log.lines().rev().find_map(|line| {
        let (_, rest) = line.split_once(&head)?;
        match rest.trim() {
            "True" => Some(true),
            "False" => Some(false),
            _ => None,
        }
    })
}

/// The first `... written to <...>/run_evaluation/<run_id>/<model>/<instance>/<file>` of the log.
pub fn location(log: &str) -> Option<Location> {
    log.lines().filter_map(|line| line.split_once(WRITTEN_TO).map(|(_, rest)| rest)).find_map(parse_path)
}

/// `<...>/run_evaluation/<run_id>/<model>/<instance>/<file>[, ...|; ...]`.
fn parse_path(rest: &str) -> Option<Location> {
    let path = rest.split([',', ';']).next()?.trim();
    let parts: Vec<&str> = path.split('/').collect();
    let at = parts.iter().rposition(|p| *p == "run_evaluation")?;
    match parts.get(at + 1..)? {
        [run_id, model, instance, file] if ![*run_id, *model, *instance, *file].iter().any(|p| p.trim().is_empty()) => {
            Some(Location { run_id: run_id.to_string(), model: model.to_string(), instance: instance.to_string() })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_line_is_read_for_its_instance() {
        let log = "2024-08-25 10:00:01,123 - INFO - report: {'a__b-1': {'resolved': True}}\n\
                   Result for a__b-1: resolved: True\n";
        assert_eq!(verdict(log, "a__b-1"), Some(true));
        assert_eq!(verdict(&log.replace("True\n", "False\n"), "a__b-1"), Some(false));
        assert_eq!(verdict(log, "a__b-2"), None, "another instance's line");
        assert_eq!(verdict("Result for a__b-1: resolved: maybe", "a__b-1"), None);
    }

    #[test]
    fn the_patch_line_names_run_model_and_instance() {
        let log = "2024-09-28 15:04:07,970 - INFO - Container for pytest-dev__pytest-7373 created: 00075ca2\n\
                   2024-09-28 15:04:08,283 - INFO - Intermediate patch for pytest-dev__pytest-7373 written to \
                   logs/run_evaluation/verify_one/opera-ai/pytest-dev__pytest-7373/patch.diff, now applying to container...\n";
        assert_eq!(
            location(log),
            Some(Location {
                run_id: "verify_one".into(),
                model: "opera-ai".into(),
                instance: "pytest-dev__pytest-7373".into()
            })
        );
    }

    #[test]
    fn absolute_paths_and_the_eval_script_line() {
        let log = "x - INFO - Eval script for a__b-1 written to /home/u/SWE-bench/logs/run_evaluation/r 2/org__m/a__b-1/eval.sh; copying to container...";
        let loc = location(log).unwrap_or_else(|| panic!("no location"));
        assert_eq!((loc.run_id.as_str(), loc.model.as_str(), loc.instance.as_str()), ("r 2", "org__m", "a__b-1"));
    }

    #[test]
    fn other_lines_name_nothing() {
        assert_eq!(location("Result for a__b-1: resolved: True\n"), None);
        assert_eq!(location("Test output for a written to logs/a/test_output.txt\n"), None);
        assert_eq!(location("patch written to run_evaluation/r/m/patch.diff\n"), None, "a level is missing");
    }
}
