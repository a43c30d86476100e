use super::*;
use crate::analysis::reconstruct::Exec;
use crate::ingest::stream_doc::StepSink;
use crate::ingest::stream_doc::read;
use crate::model::{Edit, Run};
use std::sync::atomic::AtomicU64;

/// The steps as the reading hands them over, per run.
#[derive(Default)]
struct Steps(Vec<Vec<Step>>);

impl StepSink for Steps {
    fn begin(&mut self, _run: &Run) -> bool {
        self.0.push(Vec::new());
        true
    }
    fn step(&mut self, step: Step, _edits: Vec<Edit>, _how: Exec) -> bool {
        if let Some(run) = self.0.last_mut() {
            run.push(step);
        }
        true
    }
}

/// A step as the screen shows it: everything but its prompt (which the step view does not show,
/// and which is stored as a change against the step before).
fn shown(mut step: Step) -> String {
    step.query = None;
    format!("{step:?}")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every real mini-swe-agent and SWE-agent file of the corpus the step reader takes: each step
/// built from the index is the step the reading to the end builds (its `Fixup`s applied).
#[test]
fn every_step_of_the_corpus_read_out_of_order_is_the_step_read_in_order() {
    let mut all = Vec::new();
    files(&PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus")), &mut all);
    all.sort();
    let (mut checked, mut steps_checked) = (Vec::new(), 0);
    for path in all {
        let mut sink = Steps::default();
        let Ok(doc) = read::read(&path, &mut sink, &AtomicU64::new(0)) else { continue };
        let mut runs = sink.0;
        for f in &doc.ending.fixups {
            if let Some(step) = runs.get_mut(f.run).and_then(|r| r.get_mut(f.step)) {
                step.flags = f.flags;
            }
        }
        let skim = skim_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(index) = Index::new(&path, doc.format, skim).expect("indexed") else {
            assert!(runs.len() != 1 || doc.format != Format::MiniSweAgent, "{}", path.display());
            continue;
        };
        assert_eq!(runs.len(), 1, "{}", path.display());
        let run = runs.remove(0);
        assert_eq!(index.steps(), run.len(), "{}", path.display());
        // The last first, as `G` asks for it.
        for (k, want) in run.into_iter().enumerate().rev() {
            let got = index.step(k).unwrap_or_else(|e| panic!("{} step {k}: {e}", path.display()));
            assert_eq!(shown(got), shown(want), "{} step {k}", path.display());
            steps_checked += 1;
        }
        assert!(index.step(index.steps()).is_err(), "a step past the end is an error");
        checked.push(doc.format);
    }
    let count = |f: Format| checked.iter().filter(|c| **c == f).count();
    assert!(count(Format::MiniSweAgent) >= 3 && count(Format::SweAgent) >= 10, "{checked:?}");
    assert!(steps_checked > 300, "{steps_checked}");
}

/// A file cut after it was indexed: the step asked for is an error, not a panic.
#[test]
fn a_file_that_changed_after_its_skim_gives_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("x.traj.json");
    let text = r#"{"info": {"submission": ""}, "trajectory_format": "mini-swe-agent-1", "messages": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "task"},
        {"role": "assistant", "content": "THOUGHT\n```bash\nls\n```"}, {"role": "user", "content": "<returncode>0</returncode>\na"},
        {"role": "assistant", "content": "done\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"}]}"#;
    std::fs::write(&path, text).expect("write");
    let index =
        Index::new(&path, Format::MiniSweAgent, skim_file(&path).expect("skims")).expect("ok").expect("indexed");
    assert_eq!(index.steps(), 2);
    assert_eq!(index.step(0).expect("step 0").observation, "<returncode>0</returncode>\na");
    std::fs::write(&path, &text[..120]).expect("cut");
    assert!(index.step(1).is_err());
    std::fs::write(&path, text.replace("THOUGHT", "THOUGHT]]]}")).expect("rewrite");
    assert!(index.step(0).is_err(), "bytes that are no longer the element's");
}

/// The steps of `path` as the reading builds them (fixups applied) against the index's.
fn same_steps(path: &Path) -> usize {
    let mut sink = Steps::default();
    let doc = read::read(path, &mut sink, &AtomicU64::new(0)).unwrap_or_else(|e| panic!("{e:?}"));
    let mut run = sink.0.remove(0);
    for f in &doc.ending.fixups {
        if let Some(step) = run.get_mut(f.step) {
            step.flags = f.flags;
        }
    }
    let index = Index::new(path, doc.format, skim_file(path).expect("skims")).expect("ok").expect("indexed");
    assert_eq!(index.steps(), run.len());
    for (k, want) in run.into_iter().enumerate() {
        assert_eq!(shown(index.step(k).expect("step")), shown(want), "step {k}");
    }
    doc.ending.fixups.len()
}

/// A reply that is the submitted patch looks like an error (its removed line is a traceback)
/// but is not one: known only from `info` after the messages (a `Fixup` when read in order),
/// and from the exit message when `info` has no submission.
#[test]
fn a_step_whose_error_flag_the_submission_decides_is_built_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-Traceback (most recent call last): old\n+new\n";
    for info in [serde_json::json!({"submission": patch}), serde_json::json!({"exit_status": "Submitted"})] {
        let messages = serde_json::json!([
            {"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT\n```bash\ngit diff\n```"}, {"role": "user", "content": patch},
            {"role": "assistant", "content": "THOUGHT\n```bash\ncat y.py\n```"},
            {"role": "user", "content": "Traceback (most recent call last):\nValueError"},
            {"role": "assistant", "content": "done\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
            {"role": "exit", "content": patch, "extra": {"exit_status": "Submitted", "submission": patch}}
        ]);
        // `info` after the messages (a `json!` object would sort it first).
        let doc = format!(r#"{{"trajectory_format": "mini-swe-agent-1.1", "messages": {messages}, "info": {info}}}"#);
        let path = dir.path().join("x.traj.json");
        std::fs::write(&path, doc).expect("write");
        assert!(same_steps(&path) >= 1, "the steps whose reply is the patch are fixed up when read in order");
    }
}
