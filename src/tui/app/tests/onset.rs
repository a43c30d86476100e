//! Onset and blame in the run view: which judgement `O` goes to (the reviewer's own, the
//! adjudication's, a classifier's; blind review hiding the classifiers'), and the reviewer's own
//! marked with `t` and `B` and saved with the label.

use super::{app_with_runs, cmd, cursor_step, heuristic_label, run_data};
use crate::label::{Blame, BlameVerdict, Judgement, Onset, Source};
use crate::store::labels::LabelRow;
use crate::tui::action::{Action, Command as C};
use crate::tui::app::{App, Effect};

/// A label of run 2 by `source` / `rater` with this onset step and blame.
fn judged(source: Source, rater: &str, onset: Option<usize>, blame: Option<Blame>) -> LabelRow {
    let mut row = heuristic_label(2, "context_flooding");
    row.label.source = source;
    row.label.rater = rater.into();
    row.label.judgement = Judgement {
        onset: Some(Onset {
            step: onset,
            confidence: 0.6,
            rationale: "the first wrong edit".into(),
            ..Onset::default()
        }),
        blame: blame.map(|b| BlameVerdict::of(b, "its own edit")),
    };
    row
}

/// Run 2 (10 steps) open for reviewer ann, with these labels; blind review as given.
fn app_with_labels(labels: Vec<LabelRow>, blind: bool) -> App {
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    app.review.blind = blind;
    let mut data = run_data(2, 10);
    data.labels = labels;
    app.update(Action::RunLoaded(Box::new(data)));
    app
}

fn status(app: &App) -> String {
    app.status.as_ref().map(|s| s.text.clone()).unwrap_or_default()
}

#[test]
fn o_goes_to_your_onset_else_the_adjudications_else_the_llms_else_the_heuristics() {
    let heuristic = judged(Source::Heuristic, "heuristic", Some(7), Some(Blame::Agent));
    let llm = judged(Source::Llm, "gpt", Some(5), Some(Blame::Agent));
    let other = judged(Source::Human, "bob", Some(1), Some(Blame::Agent));
    let adjudication = judged(Source::Adjudication, "cat", Some(2), Some(Blame::Agent));
    let mut app = app_with_labels(vec![heuristic.clone()], false);
    let effects = cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(7));
    assert_eq!(status(&app), "step 7: the onset (heuristic)");
    assert!(matches!(&effects[..], [Effect::LoadStep { index: 7, .. }]), "its body is asked for: {effects:?}");
    let mut app = app_with_labels(vec![heuristic.clone(), llm.clone(), other.clone()], false);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(5), "the LLM's before the heuristic's; another reviewer's is not shown");
    let mut app = app_with_labels(vec![heuristic, adjudication, llm, other], false);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(2), "the adjudication's before the classifiers'");
    // The reviewer's own, marked now (unsaved), before all of them.
    cmd(&mut app, C::Bottom);
    cmd(&mut app, C::Up);
    cmd(&mut app, C::MarkOnset);
    cmd(&mut app, C::Top);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(8));
    assert_eq!(status(&app), "step 8: the onset (yours)");
}

#[test]
fn blind_review_hides_the_classifiers_onset_until_the_label_is_saved() {
    let heuristic = judged(Source::Heuristic, "heuristic", Some(7), Some(Blame::Agent));
    let mut app = app_with_labels(vec![heuristic.clone()], true);
    assert_eq!(app.run.as_ref().and_then(|r| r.shown_onset()), None, "nothing to show the reviewer yet");
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(0), "O does not reveal the hidden onset");
    assert!(status(&app).contains("blind review"), "{}", status(&app));
    // Saved (modes only): the run comes back unblinded, with the heuristic's onset.
    cmd(&mut app, C::ToggleMode1);
    assert!(matches!(&cmd(&mut app, C::SaveLabel)[..], [Effect::SaveLabel { .. }]));
    app.update(Action::LabelSaved { run: 2, label_id: 3 });
    let mut data = run_data(2, 10);
    data.labels = vec![heuristic];
    app.update(Action::RunLoaded(Box::new(data)));
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(7));
}

#[test]
fn o_says_why_there_is_no_onset() {
    let task = judged(Source::Llm, "gpt", None, Some(Blame::Task));
    let mut app = app_with_labels(vec![task], false);
    cmd(&mut app, C::Down);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(1), "the cursor stays");
    assert_eq!(status(&app), "no onset: the failure is the task's (llm)");
    let environment = judged(Source::Heuristic, "heuristic", None, Some(Blame::Environment));
    let mut app = app_with_labels(vec![environment], false);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(status(&app), "no onset: the failure is the environment's (heuristic)");
    let mut app = app_with_labels(Vec::new(), false);
    cmd(&mut app, C::GotoOnset);
    assert!(status(&app).starts_with("no onset: no label judges this run"), "{}", status(&app));
    // An onset past the run's steps (a label of a longer version of the run) is named, not gone to.
    let far = judged(Source::Heuristic, "heuristic", Some(40), Some(Blame::Agent));
    let mut app = app_with_labels(vec![far], false);
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(0));
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("step 40, not in this run")));
}

#[test]
fn t_marks_the_onset_b_cycles_the_blame_and_both_are_saved() {
    let mut app = app_with_labels(Vec::new(), true);
    let draft = |app: &App| app.run.as_ref().map(|r| (r.draft.onset, r.draft.blame));
    for _ in 0..3 {
        cmd(&mut app, C::Down);
    }
    cmd(&mut app, C::MarkOnset);
    assert_eq!(draft(&app), Some((Some(3), Some(Blame::Agent))), "an onset is the agent's error");
    assert_eq!(status(&app), "your onset: step 3; blame: agent");
    // The task's failure has no onset: the one marked is cleared, and the reviewer told.
    cmd(&mut app, C::CycleBlame);
    assert_eq!(draft(&app), Some((None, Some(Blame::Task))));
    assert_eq!(status(&app), "your blame: task; onset step 3 cleared (an onset is the agent's error)");
    cmd(&mut app, C::CycleBlame);
    assert_eq!(draft(&app), Some((None, Some(Blame::Environment))));
    // Marking an onset makes the blame the agent's again, and says so.
    cmd(&mut app, C::MarkOnset);
    assert_eq!(draft(&app), Some((Some(3), Some(Blame::Agent))));
    assert!(status(&app).contains("blame: agent, not environment"), "{}", status(&app));
    // `t` on the onset unmarks it; on another step moves it.
    cmd(&mut app, C::MarkOnset);
    assert_eq!(draft(&app), Some((None, Some(Blame::Agent))));
    cmd(&mut app, C::MarkOnset);
    cmd(&mut app, C::Down);
    cmd(&mut app, C::MarkOnset);
    assert_eq!(draft(&app), Some((Some(4), Some(Blame::Agent))));
    assert_eq!(status(&app), "your onset: step 4 (was 3)");
    // Saved with the modes: the label carries both.
    cmd(&mut app, C::ToggleMode2);
    let effects = cmd(&mut app, C::SaveLabel);
    let [Effect::SaveLabel { label, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(label.judgement.onset.as_ref().and_then(|o| o.step), Some(4));
    assert_eq!(label.judgement.blame.as_ref().and_then(|b| b.value), Some(Blame::Agent));
    // The blame cycles back to none, and a task's failure is saved without an onset.
    cmd(&mut app, C::CycleBlame);
    cmd(&mut app, C::CycleBlame);
    cmd(&mut app, C::CycleBlame);
    assert_eq!(draft(&app), Some((None, None)));
    cmd(&mut app, C::CycleBlame);
    cmd(&mut app, C::CycleBlame);
    let effects = cmd(&mut app, C::SaveLabel);
    let [Effect::SaveLabel { label, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(label.judgement.onset, None);
    assert_eq!(label.judgement.blame.as_ref().and_then(|b| b.value), Some(Blame::Task));
}

#[test]
fn a_saved_onset_is_the_draft_the_run_starts_from() {
    let mine = judged(Source::Human, "ann", Some(6), Some(Blame::Agent));
    let llm = judged(Source::Llm, "gpt", Some(2), Some(Blame::Agent));
    let mut app = app_with_labels(vec![llm, mine], true);
    let run = app.run.as_ref().unwrap_or_else(|| panic!("a run"));
    assert_eq!((run.draft.onset, run.draft.blame), (Some(6), Some(Blame::Agent)));
    assert_eq!(run.draft, run.saved_draft, "nothing unsaved");
    cmd(&mut app, C::GotoOnset);
    assert_eq!(cursor_step(&app), Some(6));
}
