//! Script edits carry a diff (issue 23): real mini-swe-agent runs of the labelled set (Gemini 3
//! Pro) whose Python edit scripts, written by a here-document and run in a later step, had no
//! diff before the scripts were simulated.

use crate::common::*;
use trajan::ingest::{Outcome, parse_file};
use trajan::model::{Certainty, Edit, EditKind, Run};

fn run(name: &str) -> Run {
    let path = fixtures_dir("labelled").join("runs/google_gemini-3-pro-preview").join(name);
    let bytes = must(std::fs::read(&path), "read the run");
    let Outcome::Parsed { mut parsed, .. } = must(parse_file(&path, &bytes, None), "parse") else {
        panic!("{name}: not parsed as a run")
    };
    parsed.runs.pop().unwrap_or_else(|| panic!("{name}: no run"))
}

/// The shell edit of `path` by the step whose action ends with `command`.
fn edit<'a>(r: &'a Run, command: &str, path: &str) -> &'a Edit {
    r.edits
        .iter()
        .filter(|e| e.kind == EditKind::ShellWrite && e.path.ends_with(path))
        .find(|e| e.step.and_then(|s| r.steps.get(s)).is_some_and(|s| s.action.trim_end().ends_with(command)))
        .unwrap_or_else(|| panic!("no edit of {path} by `{command}`"))
}

fn lines(e: &Edit, mark: char) -> Vec<String> {
    let diff = e.diff.as_deref().unwrap_or_else(|| panic!("no diff: {e:#?}"));
    diff.lines()
        .filter(|l| l.starts_with(mark) && !l.starts_with("---") && !l.starts_with("+++"))
        .map(|l| l[1..].to_string())
        .collect()
}

#[test]
fn lines_replaced_by_index_in_a_file_partly_shown() {
    // `update_utils.py` reads `requests/utils.py`'s lines, checks line 991 and replaces lines
    // 991-996 with literals; the run had shown those lines (`sed -n`), not the whole file.
    let r = run("psf__requests-6028.traj.json");
    let e = edit(&r, "python3 update_utils.py", "requests/utils.py");
    assert!(matches!(e.trace.certainty, Some(Certainty::Simulated | Certainty::Verified)), "{e:#?}");
    assert!(lines(e, '-').contains(&"    parsed = urlparse(url)".to_string()), "{:?}", e.diff);
    assert!(lines(e, '+').contains(&"    parsed = parse_url(url)".to_string()), "{:?}", e.diff);
    assert!(
        e.diff.as_deref().is_some_and(|d| d
            .contains("@@ -988,12 +988,22 @@\n \n     :rtype: (str,str)\n     \"\"\"\n-    parsed = urlparse(url)\n")),
        "{:?}",
        e.diff
    );
}

#[test]
fn a_literal_replace_in_a_heredoc_script_run_later() {
    // `apply_mysql_fix.py`: `content.replace(old, new)` on `operations.py`, written back.
    let r = run("django__django-11138.traj.json");
    let e = edit(&r, "python3 apply_mysql_fix.py", "django/db/backends/mysql/operations.py");
    assert!(matches!(e.trace.certainty, Some(Certainty::Simulated | Certainty::Verified)), "{e:#?}");
    assert!(lines(e, '+').iter().any(|l| l.contains("db_timezone")), "{:?}", e.diff);
}

#[test]
fn an_early_docker_observation_is_read_without_its_wrapper() {
    // mini-swe-agent of July 2025 wrapped each observation in `<args>`, `<returncode>`,
    // `<stdout>`, `<stderr>`: the `cat` at step 5 shows the file, not the wrapper, so the
    // heredoc that rewrites it at step 8 is drawn against the file's lines alone.
    let path = fixtures_dir("corpus").join("mini-swe-agent-0/early-2025-07.traj.json");
    let bytes = must(std::fs::read(&path), "read the run");
    let Outcome::Parsed { mut parsed, .. } = must(parse_file(&path, &bytes, None), "parse") else {
        panic!("not parsed as a run")
    };
    let r = parsed.runs.pop().unwrap_or_else(|| panic!("no run"));
    let e = edit(&r, "EOF", "tests/missing_colon.py");
    assert_eq!(e.step, Some(8));
    let diff = e.diff.as_deref().unwrap_or_else(|| panic!("no diff: {e:#?}"));
    for wrapper in ["<args>", "</args>", "<returncode>", "<stdout>", "</stdout>", "<stderr>", "docker"] {
        assert!(!diff.contains(wrapper), "{wrapper} in {diff}");
    }
    assert_eq!(lines(e, '+'), ["    if b == 0:", "        raise ValueError(\"Cannot divide by zero\")"], "{diff}");
    // The file's last line, empty, goes (as the submitted patch says).
    assert_eq!(lines(e, '-'), [""], "{diff}");
    // The sed at step 4 is checked by the `cat` at step 5.
    let sed = edit(&r, "tests/missing_colon.py", "tests/missing_colon.py");
    assert_eq!(sed.step, Some(4));
    assert_eq!(sed.trace.certainty, Some(Certainty::Verified), "{sed:#?}");
}
