//! Onset and blame on screen, driven by keys over the classified demo (the heuristic judges
//! demo__calc-2's onset at step 2, the agent's failure): hidden by blind review, the reviewer's
//! own marked with `t` and `B` and saved, the step list's `✗`, the header, the label strip, the
//! run list's columns; and each compared run's onset on its row.

use super::screens::both_classified;
use super::{Harness, ok};

/// The header line.
fn header(screen: &str) -> &str {
    screen.lines().next().unwrap_or("")
}

/// The step-list lines that carry the onset's mark.
fn marked(screen: &str) -> Vec<&str> {
    screen.lines().filter(|l| l.trim_start_matches('"').starts_with('│') && l.contains('✗')).collect()
}

#[test]
fn the_classifiers_onset_is_hidden_until_the_reviewer_saves_then_o_goes_there() {
    let mut h = Harness::classified(160, 48);
    // `]`: demo__calc-2, not labelled by ann: blind.
    h.press("] O");
    let screen = h.screen();
    assert!(header(&screen).contains("demo__calc-2") && !header(&screen).contains("onset"), "{screen}");
    assert!(marked(&screen).is_empty(), "no onset marked: {screen}");
    assert!(screen.contains("blind review: the classifiers' onset is hidden"), "{screen}");
    // Saved (a mode, no onset of ann's): the heuristic's onset is shown, and O goes there.
    h.press("1 w");
    h.ui.settle();
    h.press("O");
    let screen = h.screen();
    assert!(header(&screen).contains("step 2 of 0–6"), "{screen}");
    assert!(header(&screen).contains("onset step 2/7 · blame agent (heuristic)"), "{screen}");
    assert!(screen.contains("step 2: the onset (heuristic)"), "{screen}");
    let marks = marked(&screen);
    assert!(marks.len() == 1 && marks[0].contains("   2✗"), "step 2 marked: {screen}");
}

#[test]
fn the_reviewer_marks_the_onset_and_blame() {
    // Step 3 marked, the strip and header say so (unsaved); then saved.
    both_classified("onset_draft", |h| h.press("] j j j t"));
    both_classified("onset_saved", |h| {
        h.press("] j j j t B B t 1 w");
        h.ui.settle();
        let label = ok(h.ui.store.labels(None, true)).into_iter().find(|l| l.label.rater == "ann");
        let judged = label.map(|l| {
            let j = l.label.judgement;
            (j.onset.and_then(|o| o.step), j.blame.and_then(|b| b.value))
        });
        assert_eq!(judged, Some((Some(3), Some(crate::label::Blame::Agent))));
    });
    // The list: demo__calc-2's onset of its 7 steps and blame; demo__mini-1's (the heuristic's)
    // stays hidden from ann, who has not labelled it.
    both_classified("onset_list", |h| {
        h.press("] j j j t 1 w");
        h.ui.settle();
        h.press("q");
        let screen = h.screen();
        let row = |instance: &str| screen.lines().find(|l| l.contains(instance)).unwrap_or("").to_string();
        assert!(row("demo__calc-2").contains("3/7") && row("demo__calc-2").contains("agent"), "{screen}");
        assert!(!row("demo__mini-1").contains("3/8"), "the heuristic's onset of demo__mini-1: {screen}");
    });
}

#[test]
fn a_task_blame_clears_the_onset_and_says_so() {
    let mut h = Harness::classified(80, 24);
    h.press("] j j j t B");
    let screen = h.screen();
    assert!(marked(&screen).is_empty(), "{screen}");
    assert!(screen.contains("your blame: task; onset step 3 cleared"), "{screen}");
    assert!(screen.contains("blame task"), "the strip: {screen}");
    // The header says whose failure it is (the task's, no onset).
    assert!(header(&screen).contains("blame task"), "{screen}");
}

/// `verdict` for run `run` (of `steps` steps) by `rater`, as a label.
fn made(run: i64, steps: usize, rater: &str, verdict: crate::label::HumanVerdict) -> crate::label::Label {
    let taxonomy = crate::label::taxonomy::Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("preset"));
    verdict.into_label(run, rater, &taxonomy, steps, "submitted".into()).unwrap_or_else(|e| panic!("{e}"))
}

/// The rows of the comparison's aligned steps (under the summaries, inside the frame).
fn aligned(screen: &str) -> impl Iterator<Item = &str> {
    screen.lines().skip(9).filter(|l| l.trim_start_matches('"').starts_with('│'))
}

#[test]
fn each_compared_runs_onset_is_marked_on_its_row() {
    use crate::label::{Blame, HumanVerdict, Source};
    let mut h = Harness::replays(200, 50);
    let runs: Vec<(i64, usize)> =
        h.ui.app.list.visible.iter().map(|&i| &h.ui.app.list.runs[i]).map(|r| (r.id, r.steps as usize)).collect();
    let verdict = |onset: Option<usize>, blame: Blame| HumanVerdict {
        modes: vec!["context_flooding".into()],
        confidence: 1.0,
        evidence: Vec::new(),
        note: None,
        adjudication: true,
        onset,
        blame: Some(blame),
    };
    // The first run's adjudication: onset at its step 5; the second's: the task's failure; the
    // third's onset only the heuristic's (blind review hides it from a reviewer who has not
    // labelled the run).
    let mut heuristic = made(runs[2].0, runs[2].1, "cat", verdict(Some(4), Blame::Agent));
    heuristic.source = Source::Heuristic;
    heuristic.rater = "heuristic".into();
    let labels = [
        made(runs[0].0, runs[0].1, "cat", verdict(Some(5), Blame::Agent)),
        made(runs[1].0, runs[1].1, "cat", verdict(None, Blame::Task)),
        heuristic,
    ];
    let writer = ok(h.ui.store.writer());
    for l in &labels {
        ok(writer.add_label(l, None));
    }
    h.press("m j m j m c");
    let view = h.ui.app.compare.as_ref().unwrap_or_else(|| panic!("no comparison"));
    assert_eq!(
        view.data.runs.iter().map(|r| r.summary.id).collect::<Vec<_>>(),
        runs.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    let screen = h.screen();
    let steps: Vec<&str> = aligned(&screen).filter(|l| l.contains('✗')).collect();
    assert_eq!(steps.len(), 1, "one onset on the rows: {screen}");
    // The first column's cell (after the gutter) holds step 5, marked.
    let cell: String = steps[0].trim_start_matches('"').chars().skip(3).take(5).collect();
    assert_eq!(cell, "   5✗", "{screen}");
    assert!(screen.contains("onset 5/14 agent"), "{screen}");
    assert!(screen.contains("blame task (adjudication)"), "{screen}");
    assert!(screen.contains("▶ divergence · ✗ onset"), "the legend names the mark: {screen}");
    // Blind review off: the heuristic's onset of the third run is shown too.
    h.ui.app.review.blind = false;
    h.ui.draw();
    let screen = h.screen();
    assert_eq!(aligned(&screen).filter(|l| l.contains('✗')).count(), 2, "{screen}");
    assert!(screen.contains("onset 4/11 agent (heuristic)"), "{screen}");
}
