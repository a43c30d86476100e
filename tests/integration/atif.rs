//! ATIF in and out: Harbor job folders (Terminal-Bench 2.0, Harbor-run SWE-bench) ingested with
//! their verdicts; every corpus run exported as ATIF passes the RFC's checks and reads back as the
//! run it was (steps, actions, observations, tokens, history, edits).

use std::path::{Path, PathBuf};
use trajan::atif::validate::validate;
use trajan::ingest::pipeline::{self, Options, Silent, UnitResult};
use trajan::review::export::atif;
use trajan::store::Store;
use trajan::store::read::RunFilter;

use crate::common;

fn fixtures() -> PathBuf {
    common::fixtures().to_path_buf()
}

fn ingest(paths: &[PathBuf]) -> (Store, pipeline::Report) {
    let mut store = Store::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    let report = pipeline::ingest(&mut store, paths, &Options::default(), &Silent);
    (store, report)
}

fn failures(report: &pipeline::Report) -> Vec<String> {
    report.failures().map(|e| e.to_string()).collect()
}

#[test]
fn harbor_job_folders_give_runs_with_their_verdicts() {
    let (store, report) = ingest(&[fixtures().join("layouts/harbor")]);
    assert_eq!(failures(&report), Vec::<String>::new());
    // Four trials; the job files, episode logs and recordings are not read.
    let trials = report.results.iter().filter(|r| matches!(r, UnitResult::Ingested { .. })).count();
    assert_eq!(trials, 4, "{:?}", report.results);
    let runs = store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}"));
    let verdict = |instance: &str| {
        let r = runs.iter().find(|r| r.instance_id == instance).unwrap_or_else(|| panic!("no run {instance}"));
        (r.resolved, r.steps, r.format.name(), r.exit_status.clone())
    };
    assert_eq!(verdict("hello-world"), (Some(true), 3, "atif", None));
    assert_eq!(verdict("fix-git"), (Some(false), 2, "atif", Some("AgentTimeoutError".into())));
    // The verdict from verifier/reward.json when result.json has none.
    assert_eq!(verdict("django__django-11099"), (Some(true), 3, "atif", None));
    // A trial without a trajectory: no run, an evaluation without one, said in a note naming the trial.
    assert!(!runs.iter().any(|r| r.instance_id == "astropy__astropy-12907"));
    assert!(report.warnings().any(|w| w.contains("astropy__astropy-12907__Zz9yY8x")
        && w.contains("no trajectory")
        && w.contains("an evaluation without a run")));

    let id = runs.iter().find(|r| r.instance_id == "hello-world").map(|r| r.id).unwrap_or_default();
    let detail = store.run_detail(id, None).unwrap_or_else(|e| panic!("{e}"));
    let s0 = &detail.step_list[0];
    assert_eq!(s0.action, "printf 'Hello, world!\\n' > /app/hello.txt\ncat /app/hello.txt");
    assert!(s0.thought.starts_with("The task wants exactly") && s0.thought.contains("Plan: Write the file"));
    assert_eq!((s0.tokens_in, s0.tokens_out, s0.tool.as_deref()), (Some(1874), Some(212), Some("bash_command")));
    assert_eq!((detail.usage.tokens_sent, detail.usage.tokens_received), (Some(6625), Some(307)));
    // The summarization handoff is context management, before the second agent step.
    let rest = store.run_rest(id).unwrap_or_else(|e| panic!("{e}"));
    let meta: serde_json::Value =
        serde_json::from_str(rest.metadata.as_deref().unwrap_or("{}")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(meta["atif"]["compactions"][0]["kind"], "summarization");
    assert_eq!(meta["atif"]["compactions"][0]["before_step"], 1);
    assert_eq!(meta["harbor"]["reward"], 1.0);
    assert_eq!(rest.history.len(), 3, "the task, the handoff and the summary's answer");

    // v1.7: extra.context_management kept whole, and the step that compacted.
    let id = runs.iter().find(|r| r.instance_id == "fix-git").map(|r| r.id).unwrap_or_default();
    let rest = store.run_rest(id).unwrap_or_else(|e| panic!("{e}"));
    let meta: serde_json::Value =
        serde_json::from_str(rest.metadata.as_deref().unwrap_or("{}")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(meta["atif"]["context_management"]["strategy"], "observation_masking");
    assert_eq!(meta["atif"]["compactions"][0]["before_step"], 1);
    assert_eq!(meta["atif"]["compactions"][0]["detail"]["tokens_after"], 1402);
    assert_eq!(meta["harbor"]["exception"]["exception_type"], "AgentTimeoutError");
}

#[test]
fn each_trial_joins_its_own_verdict() {
    // Two trials of one task by one model: one resolved, one not. Each run gets its own.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let src = fixtures().join("layouts/harbor/terminal-bench-2.0/2025-11-05__14-22-31/hello-world__Kp3mZ7q");
    for (trial, reward) in [("hello-world__Aaaaaa1", "1"), ("hello-world__Bbbbbb2", "0")] {
        let to = dir.path().join("job").join(trial);
        copy_dir(&src, &to);
        let result = to.join("result.json");
        let text = std::fs::read_to_string(&result).unwrap_or_else(|e| panic!("{e}"));
        let text = text.replace("\"reward\": 1.0", &format!("\"reward\": {reward}.0"));
        std::fs::write(&result, text).unwrap_or_else(|e| panic!("{e}"));
    }
    let (store, report) = ingest(&[dir.path().to_path_buf()]);
    assert_eq!(failures(&report), Vec::<String>::new());
    let runs = store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut got: Vec<(String, Option<bool>)> = runs
        .iter()
        .map(|r| {
            (Path::new(&r.source).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), r.resolved)
        })
        .collect();
    got.sort();
    assert_eq!(got, vec![("hello-world__Aaaaaa1".into(), Some(true)), ("hello-world__Bbbbbb2".into(), Some(false))]);
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap_or_else(|e| panic!("{e}"));
        } else {
            std::fs::copy(entry.path(), &dest).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// The corpus runs of several formats, and the Harbor fixtures.
fn sources() -> Vec<PathBuf> {
    let c = fixtures().join("corpus");
    vec![
        c.join("swe-agent-1.1"),
        c.join("swe-agent-0.x"),
        c.join("mini-swe-agent-1"),
        c.join("swe-agent-1.0"),
        c.join("swe-agent-replays"),
        c.join("openhands-java"),
        c.join("openhands-events"),
        fixtures().join("layouts/harbor"),
        fixtures().join("demo"),
    ]
}

#[test]
fn exported_runs_pass_the_rfc_checks_and_read_back_as_they_were() {
    let (store, report) = ingest(&sources());
    assert_eq!(failures(&report), Vec::<String>::new());
    let runs = store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}"));
    let formats: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.format.name()).collect();
    assert!(formats.len() >= 5, "several formats: {formats:?}");
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut files = Vec::new();
    for r in &runs {
        let detail = store.run_detail(r.id, None).unwrap_or_else(|e| panic!("{e}"));
        let rest = store.run_rest(r.id).unwrap_or_else(|e| panic!("{e}"));
        let t = atif::trajectory(&detail, &rest);
        let text = atif::to_json(&t).unwrap_or_else(|e| panic!("{e}"));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(validate(&value), Vec::<String>::new(), "run {} ({})", r.id, r.format);
        assert_eq!(value["schema_version"], "ATIF-v1.7");
        let file = out.path().join(format!("run-{}.json", r.id));
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        files.push((r.id, file));
    }
    let (again, report) = ingest(&[out.path().to_path_buf()]);
    assert_eq!(failures(&report), Vec::<String>::new());
    assert_eq!(report.warnings().count(), 0, "{:?}", report.warnings().collect::<Vec<_>>());
    for (id, file) in &files {
        let key = file.to_string_lossy().into_owned();
        let back = again
            .list_runs(RunFilter::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .find(|r| r.source == key)
            .unwrap_or_else(|| panic!("no run from {key}"));
        let (a, b) = (store.run_detail(*id, None), again.run_detail(back.id, None));
        let (a, b) = (a.unwrap_or_else(|e| panic!("{e}")), b.unwrap_or_else(|e| panic!("{e}")));
        let what = format!("run {id} ({} {})", a.summary.format, a.summary.instance_id);
        let run = |d: &trajan::store::read::RunDetail| {
            let s = &d.summary;
            serde_json::json!([
                s.instance_id,
                s.format,
                s.format_version,
                s.agent,
                s.model,
                s.exit_status,
                s.steps,
                s.edits,
                s.rejected_edits,
                s.cost,
                s.attempt,
                d.usage.tokens_sent,
                d.usage.tokens_received,
                d.usage.api_calls,
                d.submission
            ])
        };
        assert_eq!(run(&a), run(&b), "{what}");
        assert_eq!(a.step_list.len(), b.step_list.len(), "{what}");
        for (x, y) in a.step_list.iter().zip(&b.step_list) {
            let step = |s: &trajan::store::read::StepRow| {
                serde_json::json!([
                    s.index,
                    s.thought,
                    s.action,
                    s.observation,
                    s.response,
                    s.tool,
                    s.args,
                    s.tokens_in,
                    s.tokens_out,
                    s.timestamp,
                    s.open_file,
                    s.working_dir,
                    s.execution_time,
                    s.flags.bits()
                ])
            };
            assert_eq!(step(x), step(y), "{what} step {}", x.index);
        }
        let (ra, rb) = (store.run_rest(*id), again.run_rest(back.id));
        let (ra, rb) = (ra.unwrap_or_else(|e| panic!("{e}")), rb.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(ra.history, rb.history, "{what}");
        assert_eq!(ra.metadata, rb.metadata, "{what}");
        assert_eq!(ra.best_attempt, rb.best_attempt, "{what}");
        let edits = |r: &trajan::store::export::RunRest| {
            r.edits
                .iter()
                .map(|e| {
                    (e.step, e.path.clone(), e.kind, e.status, e.diff.clone(), e.lint_codes.clone(), e.trace.clone())
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(edits(&ra), edits(&rb), "{what}");
    }
}

#[test]
fn the_labels_sidecar_keys_evidence_by_trajectory_and_step() {
    let (store, report) = ingest(&[fixtures().join("layouts/harbor")]);
    assert_eq!(failures(&report), Vec::<String>::new());
    let id = store.resolve_run("fix-git").unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = out.path().join("t.db");
    // Through the binary: ingest, label with evidence at step 1, export with -o.
    let trajan = |args: &[&str]| {
        let o = common::command()
            .arg("--db")
            .arg(&db)
            .args(args)
            .env("XDG_CONFIG_HOME", out.path())
            .env("HOME", out.path())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let harbor = fixtures().join("layouts/harbor").to_string_lossy().into_owned();
    let _ = common::command().arg("--db").arg(&db).args(["ingest", &harbor]).output();
    let _ = id;
    let file = out.path().join("fix-git.json");
    let file_s = file.to_string_lossy().into_owned();
    trajan(&[
        "--rater",
        "ann",
        "label",
        "fix-git",
        "--mode",
        "context_flooding",
        "--evidence",
        "1",
        "--note",
        "tests still fail",
    ]);
    trajan(&["export", "run", "fix-git", "--format", "atif", "-o", &file_s]);
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(validate(&t), Vec::<String>::new());
    let side: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("fix-git.json.labels.json")).unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(side["trajectory_id"], t["trajectory_id"]);
    let step = &side["steps"][0];
    // trajan step 1 is the second agent step, after the system prompt and the task: step_id 4.
    assert_eq!((step["trajan_step"].as_i64(), step["step_id"].as_i64()), (Some(1), Some(4)), "{side}");
    assert_eq!(t["steps"][3]["source"], "agent");
    assert_eq!(step["mode"], "context_flooding");
    assert_eq!(side["labels"][0]["rater"], "ann");
}

/// A foreign ATIF trajectory whose agent edits with the shell (Claude Code's `Bash`): the `sed -i`
/// gets a diff drawn on the lines `grep -n` showed, checked by the `cat` that follows.
#[test]
fn shell_edits_of_a_foreign_trajectory_are_reconstructed() {
    let step = |id: i64, command: &str, output: &str| {
        serde_json::json!({"step_id": id, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": format!("t{id}"), "function_name": "Bash", "arguments": {"command": command}}],
            "observation": {"results": [{"source_call_id": format!("t{id}"), "content": output}]}})
    };
    let doc = serde_json::json!({
        "schema_version": "ATIF-v1.6",
        "agent": {"name": "claude-code", "version": "2.0.31"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Anchor the regexes."},
            step(2, "grep -n 'regex' /testbed/v.py", "12:    regex = r'^x$'\n22:    regex = r'^y$'\n"),
            step(3, "sed -i 's/\\^x\\$/\\\\Ax\\\\Z/' /testbed/v.py", ""),
            step(4, "sed -n '12p' /testbed/v.py", "    regex = r'\\Ax\\Z'\n"),
        ]
    });
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("trajectory.json");
    std::fs::write(&file, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let (store, report) = ingest(&[file]);
    assert_eq!(failures(&report), Vec::<String>::new());
    let runs = store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}"));
    let detail = store.run_detail(runs[0].id, None).unwrap_or_else(|e| panic!("{e}"));
    let edit = detail.edit_list.iter().find(|e| e.step == Some(1)).unwrap_or_else(|| panic!("{:?}", detail.edit_list));
    assert_eq!(edit.kind, trajan::model::EditKind::ShellWrite);
    assert_eq!(edit.certainty, Some(trajan::model::Certainty::Verified), "{edit:?}");
    let diff = edit.diff.as_deref().unwrap_or_default();
    assert!(diff.contains("-    regex = r'^x$'") && diff.contains("+    regex = r'\\Ax\\Z'"), "{diff}");
}

/// Terminus types keystrokes: its observation is the terminal screen (prompts, echoed commands),
/// which shows no file. The `printf` write is drawn, and the `cat` after it checks nothing.
#[test]
fn a_terminal_screen_is_no_view_of_a_file() {
    let (store, report) = ingest(&[fixtures().join("layouts/harbor/terminal-bench-2.0")]);
    assert_eq!(failures(&report), Vec::<String>::new());
    let runs = store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}"));
    let hello = runs.iter().find(|r| r.instance_id == "hello-world").unwrap_or_else(|| panic!("{runs:?}"));
    let detail = store.run_detail(hello.id, None).unwrap_or_else(|e| panic!("{e}"));
    let edit = detail.edit_list.iter().find(|e| e.path == "/app/hello.txt").unwrap_or_else(|| panic!("no edit"));
    assert_eq!(edit.certainty, Some(trajan::model::Certainty::Simulated), "{edit:?}");
    assert!(edit.diff.as_deref().is_some_and(|d| d.ends_with("+Hello, world!\n")), "{edit:?}");
}
