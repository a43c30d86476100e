//! The binary end to end on the project's own fixtures: demo, idempotent and replacing
//! ingests, run lookup, output to a closed pipe.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use crate::common::trajan;

fn fixtures() -> PathBuf {
    common::fixtures().to_path_buf()
}

/// `ingest` and the project's own fixtures: the demo data and the classifier's stories.
fn ingest_fixtures() -> [String; 3] {
    let path = |p: &str| fixtures().join(p).to_string_lossy().into_owned();
    ["ingest".into(), path("demo"), path("classify")]
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"))
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn demo_lists_every_fixture_run() {
    let out = common::command().arg("demo").output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    for instance in [
        "demo__calc-1",
        "demo__calc-2",
        "demo__calc-3",
        "demo__empty-1",
        "demo__events-list",
        "demo__mini-1",
        "demo__mini-2",
        "demo__oh-1",
        "demo__retry-1",
        // The agents beyond the SWE-bench family (fixtures/formats).
        "configure-port",
        "fix-permissions.hard",
        "hello-world",
        "sympy__sympy-20590",
    ]
    .into_iter()
    .chain(CLASSIFY.iter().copied())
    {
        assert!(stdout.contains(instance), "{instance} missing from:\n{stdout}");
    }
    assert!(stdout.contains("34 runs"), "{stdout}");
}

/// The runs of fixtures/classify (one per failure-mode story), as named in its expected.toml.
const CLASSIFY: [&str; 12] = [
    "classify__clean-success",
    "classify__cut-off",
    "classify__flooding",
    "classify__format-loop",
    "classify__gave-up-applying",
    "classify__gold-periphery",
    "classify__missed-location-gold",
    "classify__mixture",
    "classify__silent-noop",
    "classify__stale-periphery",
    "classify__temp-errors",
    "classify__wrong-logic",
];

/// The single cases of fixtures/classify-cases (issue 15: a language's rename or re-signature, a
/// defect of real runs), as named in its expected.toml.
const CASES: [&str; 18] = [
    "classify__build-copy",
    "classify__lang-c-header",
    "classify__lang-cpp-header",
    "classify__lang-go-complete",
    "classify__lang-go-rename",
    "classify__lang-java-mvn",
    "classify__lang-java-mvn-complete",
    "classify__lang-java-mvn-elsewhere",
    "classify__lang-java-rename",
    "classify__lang-python-resign",
    "classify__lang-rust-rename",
    "classify__lang-ts-optional",
    "classify__lang-ts-resign",
    "classify__lang-ts-tsc-complete",
    "classify__lang-ts-tsc-rename",
    "classify__located-regression",
    "classify__script-stash",
    "classify__skip-list",
];

/// fixtures/classify/expected.toml is the classifier's oracle: it must describe the data. Each
/// story's run ingests cleanly, joins its outcome (and its dataset task where it has a gold
/// patch), records the exit status the oracle names, and every evidence step exists. Stories are
/// whole runs (10 to 30 steps).
#[test]
fn classify_fixtures_agree_with_their_oracle() {
    let (_dir, db) = oracle_describes_its_runs("classify", &CLASSIFY, 10);
    story_edits_are_detected_as_intended(&db);
}

/// The same of fixtures/classify-cases, whose runs are as short as their case.
#[test]
fn classify_cases_agree_with_their_oracle() {
    oracle_describes_its_runs("classify-cases", &CASES, 4);
}

/// Ingests fixtures/FOLDER and checks its expected.toml against the runs; the database is returned.
fn oracle_describes_its_runs(folder: &str, runs: &[&str], least_steps: i64) -> (tempfile::TempDir, PathBuf) {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let root = fixtures().join(folder);
    let out = trajan(&db, &["ingest", &root.to_string_lossy()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("failed 0") && !stderr.contains("warning"), "{stderr}");
    let text = std::fs::read_to_string(root.join("expected.toml")).unwrap_or_else(|e| panic!("{e}"));
    let oracle: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("expected.toml: {e}"));
    let mut ids: Vec<&str> = oracle.keys().map(String::as_str).collect();
    ids.sort_unstable();
    assert_eq!(ids, runs);
    let modes =
        ["missed_edit_location", "required_temporary_errors", "context_flooding", "incomplete_peripheral_propagation"];
    for (id, entry) in &oracle {
        let detail = stdout_json(&trajan(&db, &["show", id, "--json"]));
        let resolved = entry.get("resolved").and_then(toml::Value::as_bool);
        assert_eq!(detail["outcome"]["resolved"].as_bool(), resolved, "{id}: resolved");
        let exit = entry.get("exit_status").and_then(toml::Value::as_str);
        assert_eq!(detail["exit_status"].as_str(), exit, "{id}: exit status");
        let has_dataset = ["swe-bench.json", "swe-bench.jsonl"].iter().any(|f| root.join(&id[10..]).join(f).exists());
        assert_eq!(detail["task"]["gold_patch"].is_string(), has_dataset, "{id}: gold patch");
        let steps = detail["steps"].as_i64().unwrap_or_default();
        assert!((least_steps..=30).contains(&steps), "{id}: {steps} steps");
        let expected: Vec<&str> = entry
            .get("modes")
            .and_then(toml::Value::as_array)
            .map(|m| m.iter().filter_map(toml::Value::as_str).collect())
            .unwrap_or_else(|| panic!("{id}: no modes"));
        assert!(expected.iter().all(|m| modes.contains(m)), "{id}: unknown mode in {expected:?}");
        let evidence =
            entry.get("evidence").and_then(toml::Value::as_table).unwrap_or_else(|| panic!("{id}: evidence"));
        let mut cited: Vec<&str> = evidence.keys().map(String::as_str).collect();
        let mut listed = expected.clone();
        cited.sort_unstable();
        listed.sort_unstable();
        assert_eq!(cited, listed, "{id}: evidence is listed per expected mode");
        for (mode, list) in evidence {
            for step in list.as_array().into_iter().flatten() {
                let step = step.as_integer().unwrap_or(-1);
                assert!((0..steps).contains(&step), "{id}: {mode} cites step {step} of {steps}");
            }
        }
    }
    (dir, db)
}

fn story_edits_are_detected_as_intended(db: &Path) {
    // The edits the stories hinge on are detected as the stories intend.
    let edits = |id: &str| -> Vec<(i64, String, String, Vec<String>)> {
        let detail = stdout_json(&trajan(db, &["show", id, "--json"]));
        detail["edit_list"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let codes =
                    e["lint_codes"].as_array().into_iter().flatten().filter_map(|c| c.as_str()).map(String::from);
                Some((
                    e["step"].as_i64()?,
                    e["kind"].as_str()?.to_string(),
                    e["status"].as_str()?.to_string(),
                    codes.collect(),
                ))
            })
            .collect()
    };
    let rejected = |id: &str| -> Vec<(i64, Vec<String>)> {
        edits(id).into_iter().filter(|e| e.2 == "rejected_by_linter").map(|e| (e.0, e.3)).collect()
    };
    let e999 = vec!["E999".to_string()];
    let f821 = vec!["F821".to_string()];
    assert_eq!(rejected("classify__gave-up-applying"), vec![(2, e999.clone()), (3, e999.clone()), (4, e999)]);
    assert_eq!(rejected("classify__temp-errors"), vec![(3, f821.clone()), (7, f821.clone())]);
    assert_eq!(rejected("classify__mixture"), vec![(3, f821)]);
    let temp = edits("classify__temp-errors");
    assert!(temp.iter().any(|e| e.0 == 4 && e.1 == "shell_write" && e.2 == "applied"), "{temp:?}");
    let noop = edits("classify__silent-noop");
    assert!(noop.iter().any(|e| e.0 == 3 && e.1 == "shell_write" && e.2 == "applied"), "{noop:?}");
    for id in ["classify__format-loop", "classify__cut-off", "classify__flooding"] {
        assert!(edits(id).is_empty(), "{id}: no edit");
    }
}

#[test]
fn fixture_outcomes_join_their_runs() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    assert_eq!(trajan(&db, &ingest_fixtures()).status.code(), Some(0));
    let runs = stdout_json(&trajan(&db, &["runs", "--json"]));
    let resolved = |instance: &str| -> Vec<Value> {
        runs.as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["instance_id"] == instance)
            .map(|r| r["resolved"].clone())
            .collect()
    };
    // calc-1: harness report resolved; calc-2: its patch did not apply.
    assert_eq!(resolved("demo__calc-1"), vec![Value::Bool(true)]);
    assert_eq!(resolved("demo__calc-2"), vec![Value::Bool(false)]);
    // mini-1: a flat report.json beside the trajectory.
    assert_eq!(resolved("demo__mini-1"), vec![Value::Bool(false)]);
    // RetryAgent: both attempts are runs.
    assert_eq!(resolved("demo__retry-1").len(), 2);
    // The 1.0 run takes its model from its replay config; its prediction (preds.json, dict form)
    // agrees and joins.
    let calc3 = runs.as_array().into_iter().flatten().find(|r| r["instance_id"] == "demo__calc-3").cloned();
    assert_eq!(calc3.as_ref().map(|r| r["model"].clone()), Some(Value::from("demo-model")));
    assert_eq!(calc3.as_ref().map(|r| r["format_version"].clone()), Some(Value::from("1.0")));
    let detail = stdout_json(&trajan(&db, &["show", "demo__calc-3", "--step", "1", "--json"]));
    assert_eq!(detail["edit_list"][0]["kind"], "windowed_edit");
    assert_eq!(detail["edit_list"][0]["status"], "applied");
    // An OpenHands event list in one file.
    let events = stdout_json(&trajan(&db, &["show", "demo__events-list", "--json"]));
    assert_eq!(events["steps"], 2);
    assert!(events["step_list"][0]["flags"].as_array().is_some_and(|f| f.iter().any(|x| x == "error")));
}

/// `show --json` carries a reconstructed shell edit as the TUI shows it: the command, the diff,
/// how sure it is and what checked it; the submitted patch names the steps that made its hunks.
#[test]
fn show_json_carries_reconstructed_shell_edits() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &ingest_fixtures());
    let step = stdout_json(&trajan(&db, &["show", "demo__mini-1", "--step", "3", "--json"]));
    let edit = &step["edit_list"][0];
    assert_eq!(edit["kind"], "shell_write");
    assert_eq!(edit["command"], "sed -i 's/name.upper()/name/' demo/greet.py");
    assert_eq!(edit["certainty"], "verified");
    assert_eq!(edit["checked_by"], "submission");
    assert!(edit["diff"].as_str().is_some_and(|d| d.contains("+    return \"Hello, \" + name\n")), "{edit}");
    let run = stdout_json(&trajan(&db, &["show", "demo__mini-1", "--json"]));
    let patch = run["edit_list"].as_array().into_iter().flatten().find(|e| e["kind"] == "final_patch").cloned();
    let hunks = patch.map(|p| p["hunks"].clone()).unwrap_or_default();
    assert!(
        hunks.as_array().into_iter().flatten().any(|h| h["steps"] == serde_json::json!([3]) && h["explained"] == true),
        "{hunks}"
    );
}

#[test]
fn ingest_builds_the_search_index_after_the_write_unless_told_not_to() {
    let pending = |db: &Path| {
        let store = trajan::store::Store::open_read_only(db).unwrap_or_else(|e| panic!("{e}"));
        store.search_pending().unwrap_or_else(|e| panic!("{e}"))
    };
    let dir = tmp();
    let db = dir.path().join("indexed.db");
    let out = trajan(&db, &ingest_fixtures());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("search index: ") && stderr.contains("stored and searchable: "), "{stderr}");
    assert_eq!(pending(&db), 0, "every run indexed by ingest");

    let db = dir.path().join("deferred.db");
    let out = trajan(&db, &[&ingest_fixtures()[..], &["--no-index".to_string()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("search index: "), "{stderr}");
    assert!(pending(&db) > 0, "left for the first search");
    let hits = stdout_json(&trajan(&db, &["search", "pytest", "--json"]));
    assert!(hits.as_array().is_some_and(|h| !h.is_empty()));
    assert_eq!(pending(&db), 0, "the first search built it");
}

#[test]
fn ingest_is_idempotent_and_a_changed_file_replaces_its_runs() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    let traj = data.join("demo__x-1.traj");
    let write = |obs: &str| {
        let doc = serde_json::json!({
            "trajectory": [{"action": "ls", "observation": obs, "thought": "look", "response": "look",
                            "state": {"working_dir": "/r"}, "execution_time": 0.1}],
            "history": [], "info": {"exit_status": "submitted"}
        });
        std::fs::write(&traj, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    };
    write("first version");
    let first = trajan(&db, &["ingest", &data.to_string_lossy()]);
    assert!(String::from_utf8_lossy(&first.stderr).contains("ingested 1 file (runs 1, steps 1"));
    let again = trajan(&db, &["ingest", &data.to_string_lossy()]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("ingested 0 files (runs 0") && stderr.contains("unchanged 1"), "{stderr}");

    write("second version with more words");
    let replaced = trajan(&db, &["ingest", &data.to_string_lossy()]);
    assert_eq!(replaced.status.code(), Some(0));
    let runs = stdout_json(&trajan(&db, &["runs", "--json"]));
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "replaced, not added");
    let old = stdout_json(&trajan(&db, &["search", "first version", "--json"]));
    assert_eq!(old.as_array().map(Vec::len), Some(0));
    let new = stdout_json(&trajan(&db, &["search", "second version", "--json"]));
    assert_eq!(new.as_array().map(Vec::len), Some(1));
}

#[test]
fn runs_are_named_by_id_or_unique_instance() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &ingest_fixtures());
    let detail = stdout_json(&trajan(&db, &["show", "demo__calc-1", "--step", "2", "--json"]));
    assert_eq!(detail["step_list"].as_array().map(Vec::len), Some(1));
    assert_eq!(detail["step_list"][0]["index"], 2);
    assert_eq!(detail["edit_list"][0]["status"], "rejected_by_linter");
    assert_eq!(detail["edit_list"][0]["lint_codes"], serde_json::json!(["F821"]));
    // As text, `--step` prints the step, not the run's overview (task, tests, other steps).
    let step = String::from_utf8_lossy(&trajan(&db, &["show", "demo__calc-1", "--step", "2"]).stdout).into_owned();
    let lines: Vec<&str> = step.lines().collect();
    assert!(lines[0].starts_with("run ") && lines[0].contains("demo__calc-1"), "{step}");
    assert!(lines[1].is_empty() && lines[2].starts_with("── step 2 · "), "the step comes at once: {step}");
    assert!(!step.contains("task:") && !step.contains("── step 1 ") && !step.contains("\ntests ("), "{step}");
    assert!(step.contains("rejected_by_linter"), "its edit: {step}");

    let ambiguous = trajan(&db, &["show", "demo__retry-1"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&ambiguous.stderr).contains("names 2 runs"));
    // An interrupted run: no steps, no exit status.
    let empty = trajan(&db, &["show", "demo__empty-1", "--step", "0"]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("has no steps"));
    let summary = stdout_json(&trajan(&db, &["show", "demo__empty-1", "--json"]));
    assert_eq!(summary["steps"], 0);
    assert!(summary["exit_status"].is_null());
    let missing = trajan(&db, &["show", "no-such-run"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run matches"));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &ingest_fixtures());
    let mut child = common::command()
        .arg("--db")
        .arg(&db)
        .args(["show", "demo__calc-2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // Close the reading end before the program writes.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

fn text_of(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `trajan completions SHELL` and `trajan man` are generated from the clap definitions: they
/// name the commands and their flags, and need no database.
#[test]
fn completions_and_the_man_page_name_the_commands_and_their_flags() {
    let dir = tmp();
    let db = dir.path().join("none.db");
    let out = trajan(&db, &["completions", "bash"]);
    let (bash, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for name in ["ingest", "runs", "show", "search", "classify", "label", "export", "demo", "completions", "man"] {
        assert!(bash.contains(&format!("trajan,{name})")), "the bash script does not know `{name}`");
    }
    assert!(bash.contains("--failed") && bash.contains("--format"), "subcommand flags are completed");
    // Bash itself completes with it (the script is sourced as a shell would).
    let complete = |words: &str| {
        let script = dir.path().join("trajan.bash");
        std::fs::write(&script, &bash).unwrap_or_else(|e| panic!("{e}"));
        let probe = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
             _trajan trajan \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").arg("-c").arg(probe).output().unwrap_or_else(|e| panic!("bash: {e}"));
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(complete("trajan ing"), ["ingest"]);
    let flags = complete("trajan runs --");
    assert!(flags.iter().any(|f| f == "--failed") && flags.iter().any(|f| f == "--json"), "{flags:?}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = trajan(&db, &["completions", shell]);
        let (script, stderr) = text_of(&out);
        assert_eq!(out.status.code(), Some(0), "{shell}: {stderr}");
        // fish writes `-l failed` for `--failed`.
        assert!(script.contains("ingest") && script.contains("failed"), "{shell}:\n{script}");
    }
    assert!(!db.exists(), "no database is created");

    let out = trajan(&db, &["man"]);
    let (page, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(page.starts_with(".TH trajan 1"), "{}", page.lines().next().unwrap_or_default());
    assert!(page.contains(".SS \"trajan ingest\""), "the page has a section per command");
    // roff escapes dashes: `\-\-failed` is `--failed`.
    for flag in [r"\-\-db", r"\-\-failed", r"\-\-format", r"\-\-task", r"\-\-adjudicate"] {
        assert!(page.contains(flag), "{flag} is missing from the man page");
    }
}

/// `show` cuts a long task to its first lines and says how to read it whole: `--task`.
#[test]
fn a_long_task_is_cut_with_a_hint_and_show_task_prints_it_whole() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    let statement: String = (1..=20).map(|i| format!("statement line {i}\n")).collect();
    let dataset = serde_json::json!([{"instance_id": "demo__task-1", "patch": "diff --git a/x b/x\n",
                                      "problem_statement": statement}]);
    std::fs::write(data.join("dataset.json"), dataset.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let traj = serde_json::json!({
        "trajectory": [{"action": "ls", "observation": "x", "thought": "look", "response": "look",
                        "state": {"working_dir": "/r"}}],
        "history": [], "info": {"exit_status": "submitted"}
    });
    std::fs::write(data.join("demo__task-1.traj"), traj.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let out = trajan(&db, &["ingest", &data.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out).1);

    let (shown, stderr) = text_of(&trajan(&db, &["show", "demo__task-1"]));
    assert!(shown.contains("  statement line 8\n") && !shown.contains("statement line 9\n"), "{shown}{stderr}");
    assert!(shown.contains("  … 12 more lines (use --task for the whole task)\n"), "{shown}");
    assert!(!shown.contains("use --step N"), "the task is not a step:\n{shown}");

    let out = trajan(&db, &["show", "demo__task-1", "--task"]);
    let (task, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(task, statement, "--task prints the statement whole, as it is");
    let json = stdout_json(&trajan(&db, &["show", "demo__task-1", "--task", "--json"]));
    assert_eq!(json["instruction"].as_str(), Some(statement.as_str()));
    let (_, stderr) = text_of(&trajan(&db, &["show", "demo__task-1", "--task", "--step", "0"]));
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// Text cut to a column is marked with `…`, as in the TUI.
#[test]
fn long_cells_are_cut_with_an_ellipsis() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    let instance = "averyveryverylongorganisation__averyverylongrepository-12345";
    let traj = serde_json::json!({
        "trajectory": [{"action": "ls", "observation": "x", "thought": "t", "response": "t", "state": {}}],
        "history": [], "info": {"exit_status": "submitted"}
    });
    std::fs::write(data.join(format!("{instance}.traj")), traj.to_string()).unwrap_or_else(|e| panic!("{e}"));
    trajan(&db, &["ingest", &data.to_string_lossy()]);
    let (table, stderr) = text_of(&trajan(&db, &["runs"]));
    let row = table.lines().find(|l| l.contains("averyvery")).unwrap_or_else(|| panic!("{table}{stderr}"));
    assert!(row.contains(&format!("{}…", &instance[..35])), "{row}");
    assert!(!row.contains('~'), "{row}");
}

/// A file that is not a trajan database is named as such, and left as it was; a database from a
/// newer trajan keeps its own message.
#[test]
fn a_file_that_is_not_a_database_is_named_plainly() {
    let dir = tmp();
    let notes = dir.path().join("notes.txt");
    let content = "these are my notes, not a database\n".repeat(10);
    std::fs::write(&notes, &content).unwrap_or_else(|e| panic!("{e}"));
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    let empty = empty.to_string_lossy().into_owned();
    for args in [vec!["runs"], vec!["ingest", empty.as_str()], vec!["stats"]] {
        let out = trajan(&notes, &args);
        let (_, stderr) = text_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr, format!("error: {} is not a trajan database (not SQLite)\n", notes.display()), "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap_or_default(), content, "the file is untouched");

    let (_, stderr) = text_of(&trajan(dir.path(), &["runs"]));
    assert!(stderr.contains("is a folder, not a trajan database"), "{stderr}");

    let db = dir.path().join("future.db");
    trajan(&db, &["ingest", &fixtures().join("demo/swe-agent-1.1").to_string_lossy()]);
    let conn = rusqlite::Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch("PRAGMA user_version = 99").unwrap_or_else(|e| panic!("{e}"));
    drop(conn);
    let (_, stderr) = text_of(&trajan(&db, &["runs"]));
    assert!(
        stderr.contains("cannot open database") && stderr.contains("newer than this trajan understands"),
        "{stderr}"
    );
}

/// `trajan` with `args` and a config folder of its own, killed (and the test failed) if it has
/// not ended in 60 s: reading a FIFO would block forever.
fn trajan_with_deadline(db: &Path, config: &Path, args: &[&std::ffi::OsStr]) -> Output {
    let mut child = common::command()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"));
    let started = std::time::Instant::now();
    while child.try_wait().unwrap_or_else(|e| panic!("{e}")).is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("trajan {args:?} did not end: it is reading something endless");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Taxonomies, label exports and `config.toml` naming a device, a FIFO or a huge file are
/// refused by what they are, before anything is read.
#[test]
fn devices_fifos_and_huge_files_named_as_inputs_are_refused() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &["ingest", &fixtures().join("demo/swe-agent-1.1").to_string_lossy()]);
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("trajan")).unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("pipe.toml");
    mkfifo(&fifo);
    let huge = dir.path().join("huge.toml");
    std::fs::write(&huge, "#".repeat((1 << 20) + 1)).unwrap_or_else(|e| panic!("{e}"));
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let cases: [(Vec<&std::ffi::OsStr>, String); 5] = [
        (
            vec![os("classify"), os("--taxonomy"), os("/dev/zero")],
            "/dev/zero is not a regular file (a character device)".into(),
        ),
        (
            vec![os("classify"), os("--taxonomy"), fifo.as_os_str()],
            format!("{} is not a regular file (a FIFO)", fifo.display()),
        ),
        (
            vec![os("classify"), os("--taxonomy"), huge.as_os_str()],
            format!("{} is larger than the 1 MiB a taxonomy may be", huge.display()),
        ),
        (vec![os("import-labels"), os("/dev/zero")], "/dev/zero is not a regular file (a character device)".into()),
        (vec![os("import-labels"), fifo.as_os_str()], format!("{} is not a regular file (a FIFO)", fifo.display())),
    ];
    for (args, message) in cases {
        let out = trajan_with_deadline(&db, &config, &args);
        let (_, stderr) = text_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&message), "{args:?}: {stderr}");
    }
    // config.toml itself a FIFO: named in a warning, not waited on (the settings are optional).
    let config_toml = config.join("trajan/config.toml");
    mkfifo(&config_toml);
    let out = trajan_with_deadline(&db, &config, &[os("classify")]);
    let (_, stderr) = text_of(&out);
    assert!(stderr.contains(&format!("cannot read {} (not a regular file)", config_toml.display())), "{stderr}");
}

/// A config folder that cannot be read (here `trajan` is a file, so reading `trajan/config.toml`
/// fails even for root), or a FIFO in the config file's place: commands warn once, naming the
/// file, and go on with the defaults; nothing waits on the FIFO.
#[test]
fn an_unreadable_config_is_a_warning_and_the_defaults() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let out = trajan(&db, &ingest_fixtures());
    assert!(out.status.success(), "{}", text_of(&out).1);
    let not_a_folder = dir.path().join("xdg-file");
    std::fs::create_dir_all(&not_a_folder).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(not_a_folder.join("trajan"), "a file").unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("xdg-fifo");
    std::fs::create_dir_all(fifo.join("trajan")).unwrap_or_else(|e| panic!("{e}"));
    let made = Command::new("mkfifo").arg(fifo.join("trajan/config.toml")).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    for (xdg, why) in [(&not_a_folder, "not a directory"), (&fifo, "not a regular file")] {
        let warning = format!(
            "warning: cannot read {} ({why}); using the default settings\n",
            xdg.join("trajan/config.toml").display()
        );
        let cases: &[&[&str]] = &[
            &["export", "labels", "--format", "json"],
            &["export", "stats", "--format", "json"],
            &["classify", "--json"],
            &["runs", "--failed"],
            &["stats"],
            &["label", "1", "--unclassified", "--rater", "ann"],
        ];
        for args in cases {
            let mut child = common::command()
                .arg("--db")
                .arg(&db)
                .args(*args)
                .env("XDG_CONFIG_HOME", xdg)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run trajan: {e}"));
            // A read of the FIFO would wait for a writer forever: give up after a while.
            let start = std::time::Instant::now();
            while child.try_wait().ok().flatten().is_none() {
                if start.elapsed() > std::time::Duration::from_secs(30) {
                    let _ = child.kill();
                    panic!("{args:?} waited on {}", xdg.display());
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            let (_, stderr) = text_of(&out);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
            assert_eq!(stderr.matches("warning:").count(), 1, "{args:?}: {stderr}");
            assert!(stderr.starts_with(&warning), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn only_the_commands_that_open_the_tui_list_its_flags() {
    let help = |args: &[&str]| -> String {
        let out = common::command().args(args).output().unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for command in ["ingest", "runs", "show", "search", "classify", "labels", "label", "stats", "export", "agreement"] {
        let text = help(&[command, "--help"]);
        for flag in ["--theme", "--mouse", "--color"] {
            assert!(!text.contains(flag), "`{command} --help` lists the TUI's {flag}: {text}");
        }
    }
    for command in
        [&["--help"][..], &["tui", "--help"], &["open", "--help"], &["compare", "--help"], &["demo", "--help"]]
    {
        let text = help(command);
        assert!(
            text.contains("--theme") && text.contains("--color") && text.contains("--mouse"),
            "{command:?}: {text}"
        );
    }
    // Given before or after the command that opens the TUI, they are taken; given to another
    // command, before it, they change nothing.
    let dir = tmp();
    let db = dir.path().join("t.db");
    trajan(&db, &["ingest", &fixtures().join("demo/swe-agent-1.1").to_string_lossy()]);
    for args in [&["--color", "none", "runs"][..], &["--theme", "light", "runs"]] {
        assert!(trajan(&db, args).status.success(), "{args:?}");
    }
    for args in [&["compare", "1", "2", "--theme", "light"][..], &["--theme", "light", "compare", "1", "2"]] {
        let out = trajan(&db, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("needs a terminal") && !stderr.contains("unexpected argument"), "{args:?}: {stderr}");
    }
}

/// Issue 23: a benchmark stopped by a signal removes its scratch folder (a database of synthetic
/// runs, gigabytes for the large ones), as one that returns or fails does.
#[test]
fn a_stopped_benchmark_removes_its_scratch_folder() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let scratch = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(tmp.path()).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
    };
    // More runs than it can build before the signal comes.
    let mut child = common::command()
        .args(["bench", "classify", "--runs", "10000000"])
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = std::time::Instant::now();
    while scratch().is_empty() {
        assert!(child.try_wait().ok().flatten().is_none(), "ended before its folder was seen");
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "no scratch folder");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let signal = rustix::process::Signal::TERM;
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap_or_else(|e| panic!("{e}"));
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(128 + signal.as_raw()), "{status:?}");
    assert!(scratch().is_empty(), "left behind: {:?}", scratch());
}
