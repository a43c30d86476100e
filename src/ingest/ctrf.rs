//! CTRF test reports (Common Test Report Format, `ctrf.json`: `{"results": {"tool", "summary",
//! "tests": [{"name", "status", "duration", "message", "trace"}]}}`), as Harbor's verifier writes
//! them beside `test-stdout.txt`: every test with its status and, for a failure, its message.

use crate::model::{LoggedTest, TestStatus};
use serde::Deserialize;

#[derive(Deserialize)]
struct Report {
    results: Results,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    name: String,
    status: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    trace: Option<String>,
}

/// A failure's message is kept to this many characters (a trace can be the whole log).
const MESSAGE_CAP: usize = 2_000;

/// The tests of a CTRF report, in its order; an error names what is not a report.
pub fn read(text: &str) -> Result<Vec<LoggedTest>, String> {
    let report: Report = serde_json::from_str(text).map_err(|e| format!("not a CTRF report: {e}"))?;
    Ok(report
        .results
        .tests
        .into_iter()
        .map(|t| {
            let status = match t.status.to_ascii_lowercase().as_str() {
                "passed" => TestStatus::Passed,
                "skipped" | "pending" => TestStatus::Skipped,
                "failed" => TestStatus::Failed,
                _ => TestStatus::Error,
            };
            let message = [t.message, t.trace]
                .into_iter()
                .flatten()
                .map(|m| m.trim().to_string())
                .find(|m| !m.is_empty())
                .filter(|_| status != TestStatus::Passed)
                .map(|m| m.chars().take(MESSAGE_CAP).collect());
            LoggedTest { name: t.name, status, message }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_with_their_status_and_failure_message() {
        let text = r#"{"results": {"tool": {"name": "pytest"}, "summary": {"tests": 3, "passed": 1, "failed": 1, "skipped": 1},
            "tests": [{"name": "test_outputs.py::test_a", "status": "passed", "duration": 0.1},
                      {"name": "test_outputs.py::test_b", "status": "failed", "message": "AssertionError: 2 != 3", "trace": "long"},
                      {"name": "test_outputs.py::test_c", "status": "skipped"}]}}"#;
        let tests = read(text).unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(&str, TestStatus, Option<&str>)> =
            tests.iter().map(|t| (t.name.as_str(), t.status, t.message.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("test_outputs.py::test_a", TestStatus::Passed, None),
                ("test_outputs.py::test_b", TestStatus::Failed, Some("AssertionError: 2 != 3")),
                ("test_outputs.py::test_c", TestStatus::Skipped, None),
            ]
        );
        assert!(read(r#"{"tests": []}"#).is_err_and(|e| e.starts_with("not a CTRF report")));
    }
}
