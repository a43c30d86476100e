//! Runs whose own commands attack the replay of shell edits (issue 24): a `sed` that makes a
//! file ten times larger each step, a chain of `cd` as long as the action, a pattern that
//! backtracks without end. Each run is kept, with the edit it could not replay unknown, and so
//! is every other file of the ingest; `trajan FILE` reads them to the end too.

use crate::common::*;
use serde_json::json;
use std::sync::atomic::AtomicBool;
use trajan::ingest::open::{self, Options};
use trajan::ingest::pipeline::UnitResult;
use trajan::model::Certainty;
use trajan::store::Store;
use trajan::store::read::RunFilter;

/// A mini-swe-agent 1.1 run of shell steps (action, output).
fn mini(instance: &str, steps: &[(String, String)]) -> String {
    let mut messages = vec![json!({"role": "system", "content": "sys"}), json!({"role": "user", "content": "task"})];
    for (action, output) in steps {
        messages.push(json!({"role": "assistant", "content": format!("THOUGHT: x\n\n```bash\n{action}\n```")}));
        messages.push(
            json!({"role": "user", "content": format!("<returncode>0</returncode>\n<output>\n{output}</output>")}),
        );
    }
    messages.push(json!({"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}}));
    json!({"trajectory_format": "mini-swe-agent-1.1", "messages": messages, "instance_id": instance,
           "info": {"exit_status": "Submitted", "submission": ""}})
    .to_string()
}

fn step(action: &str, output: &str) -> (String, String) {
    (action.to_string(), output.to_string())
}

/// The issue's repros, scaled to a test: eight ten-fold `sed`s after `cat` showed 100 `a`s.
fn exponential() -> String {
    let mut steps = vec![step("cat e.py", &format!("{}\n", "a".repeat(100)))];
    steps.extend((0..8).map(|_| step(r#"sed -i "s/a/&&&&&&&&&&/g" e.py"#, "")));
    mini("hostile__exp-1", &steps)
}

/// `cd a; ` 20,000 times, then a `sed`.
fn cd_chain() -> String {
    let chain = format!("{}sed -i s/a/b/ q.py", "cd a; ".repeat(20_000));
    mini("hostile__cd-1", &[step("cat q.py", "a\n"), step(&chain, "")])
}

/// `(a+)+$` over 40 `a`s and a `b`.
fn backtracking() -> String {
    let line = format!("{}b\n", "a".repeat(40));
    mini("hostile__re-1", &[step("cat r.py", &line), step(r#"sed -E -i "s/(a+)+$/x/" r.py"#, "")])
}

/// Each run's shell edits: (instance, step, certainty), in run order.
fn certainties(store: &Store) -> Vec<(String, i64, Option<Certainty>)> {
    let runs = must(store.list_runs(RunFilter::default()), "runs");
    let mut out = Vec::new();
    for r in runs {
        let detail = must(store.run_detail(r.id, None), "run_detail");
        for e in detail.edit_list {
            out.push((r.instance_id.clone(), e.step.unwrap_or(-1), e.certainty));
        }
    }
    out.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    out
}

#[test]
fn runs_whose_replay_passes_a_bound_are_kept_with_that_edit_unknown() {
    let case = Case::new();
    case.write("hostile__exp-1.traj.json", exponential().as_bytes());
    case.write("hostile__cd-1.traj.json", cd_chain().as_bytes());
    case.write("hostile__re-1.traj.json", backtracking().as_bytes());
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    let ingested = report.results.iter().filter(|r| matches!(r, UnitResult::Ingested { .. })).count();
    assert_eq!(ingested, 4, "{:#?}", report.results);
    assert!(!report.has_problems(), "{:#?}", report.results);
    let mut want: Vec<(String, i64, Option<Certainty>)> = vec![("hostile__cd-1".into(), 1, Some(Certainty::TooLarge))];
    // 10^3 .. 10^7 bytes are replayed; 10^8 is past a file's cap; then the file is unknown.
    for s in 1..=5 {
        want.push(("hostile__exp-1".into(), s, Some(Certainty::Simulated)));
    }
    want.push(("hostile__exp-1".into(), 6, Some(Certainty::TooLarge)));
    for s in 7..=8 {
        want.push(("hostile__exp-1".into(), s, Some(Certainty::Unknown)));
    }
    want.push(("hostile__re-1".into(), 1, Some(Certainty::Unknown)));
    assert_eq!(certainties(&store), want);
    assert_integrity(&store);
    // The binary says so in words.
    let runs = must(store.list_runs(RunFilter::default()), "runs");
    let Some(exp) = runs.iter().find(|r| r.instance_id == "hostile__exp-1") else { panic!("no run") };
    let out = case.cli(&["show".as_ref(), exp.id.to_string().as_ref(), "--step".as_ref(), "6".as_ref()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unknown (too large to replay)"), "{text}");
}

#[test]
fn trajan_file_reads_a_run_whose_pattern_backtracks_to_its_end() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = dir.path().join("hostile__re-1.traj.json");
    must(std::fs::write(&file, backtracking()), "write");
    let mut store = must(Store::open(&dir.path().join("t.db")), "open");
    let opened =
        open::open(&mut store, std::slice::from_ref(&file), &Options::default(), &|_| {}, &AtomicBool::new(false));
    assert!(matches!(opened.report.results.as_slice(), [UnitResult::Ingested { .. }]), "{:#?}", opened.report.results);
    assert_eq!(certainties(&store), [("hostile__re-1".to_string(), 1, Some(Certainty::Unknown))]);
}
