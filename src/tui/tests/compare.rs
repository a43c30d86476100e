//! The comparison screen rendered into ratatui's `TestBackend` while key events drive it, on the
//! three SWE-agent runs of marshmallow-1867 in the corpus (one instance under three
//! configurations), at 80x24 and 200x50.

use crate::ingest::pipeline::{self, Options, Silent};
use crate::store::Store;
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use crate::tui::views::ViewCtx;

use super::{Harness, ok};
use crate::tui::headless::Headless;

impl Harness {
    /// The three replays of marshmallow-1867.
    pub(super) fn replays(width: u16, height: u16) -> Harness {
        Harness::of("", width, height)
    }

    /// The replays, or one of their folders.
    fn of(folder: &str, width: u16, height: u16) -> Harness {
        let replays =
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/swe-agent-replays"))
                .join(folder);
        let mut h = Harness::over(&replays, "compare.db", width, height);
        h.ui.load_all_runs();
        h
    }

    /// The three runs marked in the list and compared.
    fn compared(width: u16, height: u16) -> Harness {
        let mut h = Harness::replays(width, height);
        h.press("m j m j m");
        assert_eq!(h.ui.app.marked.len(), 3);
        assert!(h.screen().contains("+ marshmallow"), "marks are shown: {}", h.screen());
        h.press("c");
        assert_eq!(h.ui.app.screen, crate::tui::app::Screen::Compare, "{}", h.screen());
        h
    }
}

fn both(name: &str, scenario: impl Fn(&mut Harness)) {
    for (w, h) in [(80, 24), (200, 50)] {
        let mut harness = Harness::compared(w, h);
        scenario(&mut harness);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), harness.screen());
    }
}

#[test]
fn three_runs_of_one_instance_aligned() {
    // Opens at the first divergence: the default configuration's `ls`, `open setup.py` and
    // `pip install` that the other two did not take; then every step of the three on one row.
    both("compare_replays", |h| {
        let view = h.ui.app.compare.as_ref().unwrap_or_else(|| panic!("no comparison"));
        assert_eq!(view.data.rows.len(), 14);
        assert_eq!(view.data.divergences.len(), 1);
        assert_eq!(view.data.rows[3], vec![Some(3), Some(0), Some(0)]);
    });
}

#[test]
fn more_runs_than_fit_scroll_sideways() {
    both("compare_sideways", |h| h.press("l l j j j"));
}

#[test]
fn patches_side_by_side() {
    both("compare_patches", |h| h.press("Tab"));
}

#[test]
fn picking_another_run_of_the_instance() {
    for (w, h) in [(80, 24), (200, 50)] {
        let mut harness = Harness::replays(w, h);
        harness.press("c");
        insta::assert_snapshot!(format!("compare_picker_{w}x{h}"), harness.screen());
        harness.press("j Enter");
        let view = harness.ui.app.compare.as_ref().unwrap_or_else(|| panic!("no comparison"));
        let ids: Vec<i64> = view.data.runs.iter().map(|r| r.summary.id).collect();
        assert_eq!(ids, vec![1, 3]);
    }
}

#[test]
fn divergences_and_search_matches_are_walked_with_n() {
    let mut h = Harness::compared(80, 24);
    let cursor = |h: &Harness| h.ui.app.compare.as_ref().map_or(usize::MAX, |v| v.cursor);
    assert_eq!(cursor(&h), 0, "opens at the first divergence");
    h.press("n");
    assert_eq!(cursor(&h), 0, "the only divergence: n stays");
    assert!(h.ui.app.status.as_ref().is_some_and(|s| s.text.contains("no divergence after")));
    // A search: n walks the rows with a matching step, Esc ends it and n walks divergences again.
    h.press("/");
    h.ui.type_text("reproduce.py");
    h.press("Enter");
    let rows = h.ui.app.compare.as_ref().and_then(|v| v.search.as_ref()).map(|s| s.rows.clone()).unwrap_or_default();
    assert!(rows.len() >= 3, "{rows:?}");
    h.press("n");
    assert_eq!(cursor(&h), rows[1]);
    h.press("Esc G N");
    assert_eq!(cursor(&h), 0);
    // y copies the focused run's step on the row (run 1's `pip install -e .[dev]` at row 2).
    h.press("j j y");
    assert!(h.ui.app.status.as_ref().is_some_and(|s| s.text.contains("sent the step's action")));
    h.press("g");
    // Enter opens the focused run at the row's step; q comes back to the comparison.
    h.press("j j j j l Enter");
    assert_eq!(h.ui.app.screen, crate::tui::app::Screen::Run);
    assert_eq!(h.ui.app.run.as_ref().and_then(|r| r.step_index()), Some(1));
    h.press("q");
    assert_eq!(h.ui.app.screen, crate::tui::app::Screen::Compare);
    h.press("q");
    assert_eq!(h.ui.app.screen, crate::tui::app::Screen::List);
}

#[test]
fn a_run_alone_in_its_instance_has_nothing_to_compare_with() {
    let mut h = Harness::of("replay__marshmallow-code__marshmallow-1867__function_calling__install-1", 80, 24);
    h.press("c");
    assert!(h.ui.app.picker.is_none());
    assert!(h.screen().contains("no other run of marshmallow-code__marshmallow-1867"), "{}", h.screen());
    // In the run view too.
    h.press("Enter C");
    assert!(h.ui.app.picker.is_none());
    assert_eq!(h.ui.app.screen, crate::tui::app::Screen::Run);
}

/// Four runs of marshmallow-1867 (the three replays and the SWE-agent 1.0 run in the corpus): four
/// columns at 200x50.
#[test]
fn four_runs_in_four_columns_at_200x50() {
    let (_dir, mut ui) = corpus_ui(&["swe-agent-replays", "swe-agent-1.0/marshmallow-code__marshmallow-1867.traj"]);
    ok(ui.press("m j m j m j m c"));
    let view = ui.app.compare.as_ref().unwrap_or_else(|| panic!("no comparison: {}", ui.screen()));
    assert_eq!(view.data.runs.len(), 4);
    insta::assert_snapshot!("compare_four_200x50", ui.screen());
}

/// A headless UI at 200x50 on these paths of the corpus, ingested in this order.
fn corpus_ui(paths: &[&str]) -> (tempfile::TempDir, Headless) {
    let dir = ok(tempfile::tempdir());
    let mut store = ok(Store::open(&dir.path().join("compare.db")));
    let corpus = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus"));
    let paths: Vec<std::path::PathBuf> = paths.iter().map(|p| corpus.join(p)).collect();
    let report = pipeline::ingest(&mut store, &paths, &Options::default(), &Silent);
    assert!(!report.has_problems(), "{:?}", report.results);
    let ctx = ViewCtx::new(Theme::default(), Keymap::default_map(), "compare.db".into());
    let mut ui = ok(Headless::open(store, ctx, 200, 50));
    ui.load_all_runs();
    (dir, ui)
}

#[test]
fn runs_of_different_instances_are_compared_with_a_warning() {
    // A marshmallow replay (run 1) and the SWE-agent test repository's run (run 4).
    let (_dir, mut ui) = corpus_ui(&["swe-agent-replays", "swe-agent-1.0/6e44b9__sweagenttestrepo-1c2844.traj"]);
    let effects = ui.app.update(crate::tui::action::Action::Compare(vec![1, 4]));
    ui.apply(effects);
    ui.draw();
    let view = ui.app.compare.as_ref().unwrap_or_else(|| panic!("no comparison: {}", ui.screen()));
    assert!(!view.data.gold_patch);
    let header = ui.screen().lines().next().unwrap_or_default().to_string();
    assert!(header.contains("2 different instances"), "{header}");
    assert!(header.contains("the gold patch is left out"), "{header}");
}

#[test]
fn the_picker_offers_runs_the_list_has_not_loaded_yet() {
    // The first screen of a large database holds only some runs; the rest load in the
    // background. The picker asks the store.
    let mut h = Harness::replays(80, 24);
    h.ui.app.list.runs.truncate(1);
    h.ui.app.list.visible = vec![0];
    h.ui.app.list.complete = false;
    h.ui.app.list.cursor = 0;
    h.press("c");
    let picker = h.ui.app.picker.as_ref().unwrap_or_else(|| panic!("no picker: {}", h.screen()));
    let ids: Vec<i64> = picker.runs.iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(!ids.contains(&picker.base));
}

#[test]
fn question_mark_in_the_picker_shows_the_pickers_keys() {
    let mut h = Harness::replays(80, 24);
    h.press("c");
    assert!(h.ui.app.picker.is_some());
    // The picker's hint line is read from the keymap.
    assert!(h.screen().contains("Enter compare  ? help  q close"), "{}", h.screen());
    h.press("?");
    let screen = h.screen();
    assert!(screen.contains("keys · pick"), "{screen}");
    assert!(screen.contains("compare with this run"), "{screen}");
    // Any key closes the help, back to the picker.
    h.press("Esc");
    assert!(h.ui.app.help.is_none());
    assert!(h.ui.app.picker.is_some());
    // A rebound key shows as rebound.
    let keymap = ok(Keymap::with_overrides(
        "[pick]\nopen = { keys = [\"o\"], help = \"compare\" }\n",
        std::path::Path::new("k.toml"),
    ));
    h.ui.ctx.keymap = keymap;
    h.ui.draw();
    assert!(h.screen().contains("o compare  ? help  q close"), "{}", h.screen());
}

#[test]
fn the_selected_row_is_on_screen_and_marked_at_80x24() {
    // At 80x24 the aligned steps do not all fit: jumping past the window (`G`, `n`) draws the
    // cursor's row at once, marked in the gutter (`▸`), which shows without colour too.
    let mut h = Harness::compared(80, 24);
    h.press("G");
    let last = h.ui.app.compare.as_ref().map_or(0, |v| v.rows()) - 1;
    assert_eq!(h.ui.app.compare.as_ref().map(|v| v.cursor), Some(last));
    let screen = h.screen();
    let marked: Vec<&str> = screen.lines().filter(|l| l.contains('▸')).collect();
    assert_eq!(marked.len(), 1, "one row marked: {screen}");
    assert!(marked[0].contains(&format!("{last:>4} ")), "the last row is the marked one: {screen}");
    h.press("g");
    let screen = h.screen();
    let marked: Vec<&str> = screen.lines().filter(|l| l.contains('▸')).collect();
    assert!(marked.len() == 1 && marked[0].contains("   0 "), "back at the first row: {screen}");
}

#[test]
fn blind_review_hides_the_classifiers_modes_in_the_comparison() {
    // The run view hides the classifiers' labels of a run the reviewer has not labelled; the
    // comparison's summaries must not show them either.
    let mut h = Harness::compared(200, 50);
    let ids: Vec<i64> =
        h.ui.app.compare.as_ref().map_or(Vec::new(), |v| v.data.runs.iter().map(|r| r.summary.id).collect());
    if let Some(view) = h.ui.app.compare.as_mut() {
        for run in &mut view.data.runs {
            run.classifier_modes = vec!["context_flooding".to_string()];
        }
    }
    for id in ids {
        let state = h.ui.app.review.states.entry(id).or_default();
        state.labels.push(crate::review::CurrentLabel {
            source: crate::label::Source::Heuristic,
            rater: "heuristic".into(),
            modes: vec!["context_flooding".into()],
            onset: None,
            blame: None,
        });
    }
    assert!(h.ui.app.review.blind, "blind review is the default");
    h.ui.draw();
    let screen = h.screen();
    assert!(!screen.contains("context_flooding"), "{screen}");
    assert!(screen.contains("classifier hidden (blind review)"), "{screen}");
    h.ui.app.review.blind = false;
    h.ui.draw();
    assert!(h.screen().contains("classifier context_flooding"), "{}", h.screen());
}
