//! The SWE-bench harness's per-instance log of before mid-2024: `<instance>.<model>.eval.log`
//! (the `logs/` folders of SWE-bench/experiments' early submissions). Plain text, whose lines
//! (from swebench 1.0, April 2024) may start with `[<testbed>] [<instance>] `, which is why it
//! starts with `[` and must not be read as JSON:
//!
//! ```text
//! [astropy__astropy__5.0] [astropy__astropy-12907] Task Metadata:
//!     - Instance ID: astropy__astropy-12907
//!     - Testbed: astropy__astropy__5.0
//!     - Evaluation Model: 20240402_sweagent_gpt4
//! ...
//! >>>>> Applied Patch (pred)
//! ... the test command's output (pytest -rA summary, Django's runner, ...)
//! >>>>> Some Tests Failed
//! ```
//!
//! The verdict: the harness graded the tests after `>>>>> Applied Patch (pred)` against the task's
//! FAIL_TO_PASS and PASS_TO_PASS lists, which the log does not hold. So the log gives the tests
//! it ran and their results (no group), whether the prediction applied, and `resolved = false`
//! where the harness could only conclude that: the patch did not apply, or the tests errored or
//! timed out (`>>>>> Patch Apply Failed`, `Tests Errored`, `Tests Timed Out`, `Reset Failed`).
//! Otherwise `resolved` is unknown until graded against the task's lists.

use crate::error::IngestError;
use crate::ingest::harness::test_log;
use crate::model::{Format, LoggedTest, Parsed, TestOutcome, TestStatus};
use std::path::Path;

/// Markers after which the harness graded nothing: the instance is unresolved.
const FAILED_EVALUATION: [&str; 4] =
    [">>>>> Patch Apply Failed", ">>>>> Tests Errored", ">>>>> Tests Timed Out", ">>>>> Reset Failed"];
const APPLIED: &str = ">>>>> Applied Patch";

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let metadata = |key: &str| {
        text.lines()
            .take(40)
            .find_map(|l| l.trim_start().strip_prefix(key))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let instance_id = metadata("- Instance ID:")
        .or_else(|| instance_from_name(path))
        .ok_or_else(|| IngestError::shape(path, "SWE-bench eval log: no `- Instance ID:` line"))?;
    // The prediction's patch (`pred`, `pred_minimal`; `PatchType.PATCH_PRED` in the oldest logs),
    // not the test patch (`test`) nor the dry runs (`pred_try`).
    let applied_at = text.match_indices(APPLIED).find_map(|(at, _)| {
        let rest = &text[at + APPLIED.len()..];
        let kind = rest.trim_start().strip_prefix('(')?.split(')').next()?.to_ascii_lowercase();
        let kind = kind.strip_prefix("patchtype.").unwrap_or(&kind).trim_start_matches("patch_").to_string();
        (kind == "pred" || kind == "pred_minimal").then_some(at)
    });
    let failed = FAILED_EVALUATION.iter().any(|m| text.contains(m));
    let tests = match applied_at {
        Some(at) => test_log::parse_tests(&text[at..]),
        None => Vec::new(),
    };
    let resolved = (failed || applied_at.is_none()).then_some(false);
    // Without a verdict, the tests it ran are graded against the task's lists once they are
    // known (`store::grade`), as a harness test log is.
    let logged = resolved.is_none().then(|| {
        tests
            .iter()
            .map(|t| LoggedTest {
                name: t.name.clone(),
                status: if t.passed { TestStatus::Passed } else { TestStatus::Failed },
                message: t.message.clone(),
            })
            .collect()
    });
    let outcome = TestOutcome {
        instance_id,
        format: Some(Format::SwebenchEvalLog),
        model: metadata("- Evaluation Model:"),
        run_label: None,
        resolved,
        patch_applied: Some(applied_at.is_some()),
        patch_exists: None,
        tests,
        log: Some(text.to_string()),
        patch: None,
        logged,
    };
    Ok(Parsed { outcomes: vec![outcome], ..Parsed::default() })
}

/// `astropy__astropy-12907.20240402_sweagent_gpt4.eval.log` -> `astropy__astropy-12907` (an
/// instance id holds no dot; the model name may).
fn instance_from_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let first = name.split('.').next()?;
    (!first.is_empty() && name.ends_with(".eval.log")).then(|| first.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> TestOutcome {
        let path = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/formats/swebench-eval-log/evaluation/lite/20240402_sweagent_gpt4/logs"
        ))
        .join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut p = parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.outcomes.len(), 1);
        p.outcomes.remove(0)
    }

    #[test]
    fn an_applied_prediction_gives_its_tests_and_an_open_verdict() {
        let o = fixture("astropy__astropy-12907.20240402_sweagent_gpt4.eval.log");
        assert_eq!(o.instance_id, "astropy__astropy-12907");
        assert_eq!(o.model.as_deref(), Some("20240402_sweagent_gpt4"));
        assert_eq!((o.patch_applied, o.resolved), (Some(true), None));
        assert_eq!(o.tests.len(), 15);
        let failed: Vec<&str> = o.tests.iter().filter(|t| !t.passed).map(|t| t.name.as_str()).collect();
        assert_eq!(failed, ["astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]"]);
        assert!(o.tests.iter().all(|t| t.group.is_none()));
        assert!(o.log.as_deref().is_some_and(|l| l.contains(">>>>> Some Tests Failed")));

        // The older form, without the line prefix: Django's runner.
        let o = fixture("django__django-11099.20240402_sweagent_gpt4.eval.log");
        assert_eq!((o.instance_id.as_str(), o.patch_applied), ("django__django-11099", Some(true)));
        assert_eq!(o.tests.len(), 5);
        assert!(o.tests.iter().all(|t| t.passed));
    }

    #[test]
    fn a_prediction_that_did_not_apply_is_unresolved() {
        let o = fixture("sympy__sympy-20590.20240402_sweagent_gpt4.eval.log");
        assert_eq!(o.instance_id, "sympy__sympy-20590");
        assert_eq!((o.patch_applied, o.resolved), (Some(false), Some(false)));
        assert!(o.tests.is_empty());
    }

    #[test]
    fn the_instance_comes_from_the_file_name_when_the_log_lacks_it() {
        let p =
            parse(Path::new("/l/psf__requests-2317.gpt-4.0.eval.log"), ">>>>> Applied Patch (pred)\nPASSED t.py::a\n");
        let o = p.ok().map(|p| p.outcomes).unwrap_or_default();
        assert_eq!(o[0].instance_id, "psf__requests-2317");
        assert_eq!(o[0].tests.len(), 1);
        assert!(parse(Path::new("/l/notes.log"), "nothing here").is_err());
    }
}
