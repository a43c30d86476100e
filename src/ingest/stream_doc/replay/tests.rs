use super::*;
use crate::ingest::swe_agent;
use crate::model::Format;
use serde_json::json;

/// Keeps the steps as the ingest's worker keeps a SWE-agent document's, each piece's writer done
/// with it at once: every step is trimmed to what the reconstruction reads as soon as it is kept.
struct Kept(Held);

impl StepSink for Kept {
    fn begin(&mut self, _run: &Run) -> bool {
        self.0.begin();
        true
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        self.0.step(&step);
        self.0.keep(Arc::from(vec![step]), vec![(how, edits)]);
        true
    }
}

/// A SWE-agent 1.1 run that edits a file with `sed -i`, shows it with `cat` (the second view
/// contradicts the second edit), and edits another with the editor tool; the submission, which
/// seeds the file's lines, comes after the steps.
fn document() -> String {
    let patch =
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = old\n+b = new\n c = 3\n";
    let steps: Vec<_> = (0..20)
        .map(|i| {
            let (action, observation) = match i {
                3 => ("sed -i 's/old/new/' x.py".to_string(), String::new()),
                5 => ("cat x.py".to_string(), "a = 1\nb = new\nc = 3\n".to_string()),
                7 => ("sed -i 's/c = 3/c = 4/' x.py".to_string(), String::new()),
                8 => ("cat x.py".to_string(), "a = 1\nb = new\nc = 3\n".to_string()),
                9 => (
                    "str_replace_editor str_replace /testbed/y.py --old_str 'p = 1' --new_str 'p = 2'".to_string(),
                    "The file /testbed/y.py has been edited.".to_string(),
                ),
                _ => (format!("ls dir{i}"), format!("f{i}.py\n")),
            };
            json!({"action": action, "observation": observation, "thought": format!("step {i}"),
                "response": format!("step {i}: {action}"), "state": {"open_file": "n/a", "working_dir": "/testbed"}})
        })
        .collect();
    json!({"trajectory": steps, "history": [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}],
        "info": {"exit_status": "submitted", "submission": patch}})
    .to_string()
}

#[test]
fn steps_kept_trimmed_once_written_give_the_edits_a_whole_read_gives() {
    let (path, text) = (Path::new("gen__swe-1.traj"), document());
    let whole = swe_agent::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
    let mut kept = Kept(Held::default());
    let ending = swe_agent::read(path, &text, &mut kept, |_| {}).unwrap_or_else(|e| panic!("{e:?}"));
    let mut doc = Document { format: Format::SweAgent, ending, size: 0, hash: [0; 32] };
    let Some(mut done) = kept.0.replay(&mut doc) else { panic!("the runs read are the document's") };
    let run = &mut doc.ending.parsed.runs[0];
    for (k, edit) in run.edits.iter_mut().enumerate() {
        done[0].fill(k, edit).unwrap_or_else(|e| panic!("{e}"));
    }
    let shown = |edits: &[Edit]| edits.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>();
    assert_eq!(shown(&run.edits), shown(&whole.runs[0].edits));
    let sure: Vec<_> = run.edits.iter().map(|e| e.trace.certainty).collect();
    assert!(sure.contains(&Some(crate::model::Certainty::Verified)), "the view was read: {sure:?}");
    assert!(sure.contains(&Some(crate::model::Certainty::Contradicted)), "{sure:?}");
    // The shell edits (the editor's step is flagged by the adapter).
    assert_eq!(done[0].edit_steps, [3, 7]);
}

/// Keeps the first `switch_at` steps, three to a piece (the last piece kept partial when the
/// switch comes), then goes on as the steps come on the submission read ahead, on a thread of
/// its own, as the ingest's worker does once it has come.
struct Switched {
    held: Option<Held>,
    pending: Vec<Step>,
    hows: Vec<(Exec, Vec<Edit>)>,
    along: Option<(Dirs, Beside)>,
    switch_at: usize,
    seen: usize,
    submission: Option<String>,
}

impl Switched {
    fn keep(&mut self) {
        if let Some(held) = &mut self.held {
            held.keep(Arc::from(std::mem::take(&mut self.pending)), std::mem::take(&mut self.hows));
        }
    }
}

impl StepSink for Switched {
    fn begin(&mut self, _run: &Run) -> bool {
        if let Some(held) = &mut self.held {
            held.begin();
        }
        true
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        if self.seen == self.switch_at {
            self.keep();
            if let Some(held) = self.held.take() {
                let Ok(beside) = Beside::spawn() else { return false };
                self.along = Some((held.into_beside(self.submission.clone(), &beside), beside));
            }
        }
        self.seen += 1;
        match (&mut self.held, &mut self.along) {
            (Some(held), _) => {
                held.step(&step);
                self.pending.push(step);
                self.hows.push((how, edits));
                if self.pending.len() == 3 {
                    self.keep();
                }
            }
            (None, Some((dirs, beside))) => {
                dirs.step(&step);
                beside.steps(Arc::from(vec![step]), vec![(how, edits)]);
            }
            (None, None) => return false,
        }
        true
    }
}

#[test]
fn steps_kept_until_the_submission_comes_then_made_as_they_come_give_a_whole_reads_edits() {
    let (path, text) = (Path::new("gen__swe-1.traj"), document());
    let whole = swe_agent::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
    let shown = |edits: &[Edit]| edits.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>();
    let submission = whole.runs[0].submission.clone();
    assert!(submission.is_some());
    // Before, between and after the edits and the views that check them.
    for switch_at in [0, 1, 4, 5, 6, 8, 11, 12, 20] {
        let mut sink = Switched {
            held: Some(Held::default()),
            pending: Vec::new(),
            hows: Vec::new(),
            along: None,
            switch_at,
            seen: 0,
            submission: submission.clone(),
        };
        let ending = swe_agent::read(path, &text, &mut sink, |_| {}).unwrap_or_else(|e| panic!("{e:?}"));
        let mut doc = Document { format: Format::SweAgent, ending, size: 0, hash: [0; 32] };
        sink.keep();
        let done = match (sink.held, sink.along) {
            (Some(held), _) => held.replay(&mut doc),
            (None, Some((_, beside))) => {
                let (finished, done) = beside.finish(doc).unwrap_or_else(|e| panic!("{e:?}"));
                doc = finished;
                done
            }
            (None, None) => None,
        };
        let Some(mut done) = done else { panic!("{switch_at}: what was assumed holds") };
        let run = &mut doc.ending.parsed.runs[0];
        for (k, edit) in run.edits.iter_mut().enumerate() {
            done[0].fill(k, edit).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(shown(&run.edits), shown(&whole.runs[0].edits), "switched at step {switch_at}");
    }
}

/// Feeds a [`Beside`] each piece of three steps, as the worker does; `restart_after`: the
/// document is read again from its start once that many steps were fed.
struct Fed {
    beside: Beside,
    submission: Option<String>,
    pending: Vec<Step>,
    hows: Vec<(Exec, Vec<Edit>)>,
    restart_after: Option<usize>,
    seen: usize,
}

impl Fed {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.beside.steps(Arc::from(std::mem::take(&mut self.pending)), std::mem::take(&mut self.hows));
        }
    }
}

impl StepSink for Fed {
    fn begin(&mut self, _run: &Run) -> bool {
        self.beside.begin_assuming(Some(self.submission.clone()));
        true
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        self.pending.push(step);
        self.hows.push((how, edits));
        if self.pending.len() == 3 {
            self.flush();
        }
        self.seen += 1;
        // A reader that gives up here: the next reading starts over.
        self.restart_after.is_none_or(|n| self.seen < n)
    }
}

#[test]
fn a_reconstruction_on_its_own_thread_gives_a_whole_reads_edits_and_forgets_a_reading_given_up() {
    let (path, text) = (Path::new("gen__swe-1.traj"), document());
    let whole = swe_agent::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
    let shown = |edits: &[Edit]| edits.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>();
    for restart_after in [None, Some(4), Some(9)] {
        let Ok(beside) = Beside::spawn() else { panic!("a thread") };
        let submission = whole.runs[0].submission.clone();
        let mut sink = Fed { beside, submission, pending: Vec::new(), hows: Vec::new(), restart_after, seen: 0 };
        if restart_after.is_some() {
            assert!(swe_agent::read(path, &text, &mut sink, |_| {}).is_err(), "the reading was given up");
            sink.flush();
            sink.beside.restart();
            (sink.restart_after, sink.seen) = (None, 0);
        }
        let ending = swe_agent::read(path, &text, &mut sink, |_| {}).unwrap_or_else(|e| panic!("{e:?}"));
        sink.flush();
        let doc = Document { format: Format::SweAgent, ending, size: 0, hash: [0; 32] };
        let (mut doc, done) = sink.beside.finish(doc).unwrap_or_else(|e| panic!("{e:?}"));
        let Some(mut done) = done else { panic!("{restart_after:?}: what was assumed holds") };
        let run = &mut doc.ending.parsed.runs[0];
        for (k, edit) in run.edits.iter_mut().enumerate() {
            done[0].fill(k, edit).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(shown(&run.edits), shown(&whole.runs[0].edits), "given up after {restart_after:?}");
    }
}
