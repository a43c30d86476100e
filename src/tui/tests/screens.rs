//! Screens rendered into ratatui's `TestBackend` while real key events drive the app, checked
//! with insta snapshots at 80x24 and 160x48. The database is built from the project's demo
//! fixtures; the effects are performed against it exactly as the driver does.

use super::{Harness, ok};

impl Harness {
    /// The demo fixtures.
    fn demo(width: u16, height: u16) -> Harness {
        // The demo fixtures alone: the classifier's stories (fixtures/classify, checked in
        // tests/cli.rs) would sort before them and move every scenario's keyed navigation onto
        // other runs.
        let demo = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo"));
        Harness::over(&demo, "review.db", width, height)
    }

    /// The same, classified by the heuristic, with reviewer `ann` (blind review on).
    pub(super) fn classified(width: u16, height: u16) -> Harness {
        let mut h = Harness::demo(width, height);
        let taxonomy = crate::label::taxonomy::Taxonomy::preset("refactoring").unwrap_or_else(|| panic!("preset"));
        let runs = ok(h.ui.store.classify_candidates(Some(crate::model::FailedScope::WithUnknown)));
        ok(crate::classify::pipeline::classify_heuristic(&mut h.ui.store, &taxonomy, &runs, |_| {}));
        h.ui.app.review.rater = "ann".into();
        let review = h.ui.app.load_review();
        h.ui.apply(vec![review]);
        h.ui.draw();
        h
    }

    fn type_text(&mut self, text: &str) {
        self.ui.type_text(text);
    }
}

/// Each scenario at both sizes.
fn both(name: &str, scenario: impl Fn(&mut Harness)) {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut harness = Harness::demo(w, h);
        scenario(&mut harness);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), harness.screen());
    }
}

#[test]
fn run_list() {
    both("list", |_| {});
}

#[test]
fn run_list_filtered_to_failed_runs() {
    both("list_filtered", |h| {
        h.press("/");
        h.type_text("resolved:no");
        h.press("Enter");
    });
}

#[test]
fn run_view_at_first_rejected_edit() {
    both("run_rejected_edit", |h| {
        h.press("/");
        h.type_text("calc-2");
        h.press("Enter Enter x");
    });
}

#[test]
fn diff_side_by_side() {
    both("diff_side_by_side", |h| {
        h.press("/");
        h.type_text("calc-2");
        h.press("Enter Enter x e d $");
    });
}

#[test]
fn search_in_a_run() {
    both("search", |h| {
        h.press("/");
        h.type_text("calc-1");
        h.press("Enter Enter /");
        h.type_text("ZeroDivisionError");
        h.press("Enter");
    });
}

/// A `sed -i` edit of a shell-only run: its command, how sure its diff is (verified by the
/// submitted patch), the diff painted like a tool edit's.
#[test]
fn reconstructed_shell_edit() {
    both("shell_edit", |h| {
        h.press("/");
        h.type_text("mini-1");
        h.press("Enter Enter j j j");
    });
}

#[test]
fn help_overlay() {
    both("help", |h| h.press("Enter ?"));
}

#[test]
fn state_panel() {
    both("state", |h| {
        h.press("/");
        h.type_text("calc-1");
        h.press("Enter Enter G Tab");
    });
}

#[test]
fn tests_and_task_panel() {
    both("tests_panel", |h| {
        h.press("/");
        h.type_text("calc-1");
        h.press("Enter Enter Tab Tab");
    });
}

#[test]
fn gold_patch_panel() {
    both("gold_patch", |h| {
        h.press("/");
        h.type_text("oh-1");
        h.press("Enter Enter Tab Tab Tab Tab");
    });
}

#[test]
fn a_run_without_steps() {
    let mut h = Harness::demo(80, 24);
    h.press("/");
    h.type_text("empty");
    h.press("Enter Enter : ");
    h.type_text("3");
    h.press("Enter");
    insta::assert_snapshot!("no_steps_80x24", h.screen());
}

#[test]
fn too_small_terminal() {
    let mut h = Harness::demo(40, 10);
    h.press("j");
    insta::assert_snapshot!("too_small_40x10", h.screen());
}

/// Both sizes of a scenario on the classified database.
pub(super) fn both_classified(name: &str, scenario: impl Fn(&mut Harness)) {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut harness = Harness::classified(w, h);
        scenario(&mut harness);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), harness.screen());
    }
}

#[test]
fn labelling_blind_then_revealed() {
    // `]` opens the first failed run not labelled; its labels panel hides the heuristic's.
    both_classified("labels_blind", |h| h.press("] L"));
    both_classified("labels_saved", |h| h.press("] L 1 a w"));
}

#[test]
fn statistics_screen() {
    both_classified("stats", |h| h.press("] L 1 w q %"));
    // 80x24 shows the sections in one column: scrolled to its end, the rest of it.
    both_classified("stats_scrolled", |h| h.press("] L 1 w q % Space Space Space"));
}

#[test]
fn statistics_charts() {
    // 160x48 draws the chart `c` picks under the numbers: agreement (kappa, alpha), then the
    // coverage by model (`s` groups), the resolve rate, the steps' spreads.
    let mut h = Harness::classified(160, 48);
    h.press("] L 1 w q % c");
    insta::assert_snapshot!("stats_chart_agreement_160x48", h.screen());
    h.press("s c");
    insta::assert_snapshot!("stats_chart_coverage_by_model_160x48", h.screen());
    h.press("c");
    insta::assert_snapshot!("stats_chart_resolve_by_model_160x48", h.screen());
    h.press("c");
    insta::assert_snapshot!("stats_chart_steps_by_model_160x48", h.screen());
}

#[test]
fn the_chart_on_screen_and_the_run_at_hand_are_written_and_named() {
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness::classified(160, 48);
    h.ui.app.export_dir = out.path().to_path_buf();
    h.press("] L 1 w q % c c e");
    let status = h.ui.app.status.clone().map(|s| s.text).unwrap_or_default();
    let written: Vec<std::path::PathBuf> =
        ok(std::fs::read_dir(out.path())).filter_map(|e| e.ok().map(|e| e.path())).collect();
    let [svg] = written.as_slice() else { panic!("one file: {written:?}") };
    let name = svg.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    assert!(name.starts_with("trajan-coverage-by-all-") && name.ends_with(".svg"), "{name}");
    assert!(status.contains(&name), "the status line names it: {status}");
    assert!(ok(std::fs::read_to_string(svg)).contains("Coverage"));
    // In the run view, R writes the run as a report.
    h.press("q q Enter R");
    let status = h.ui.app.status.clone().map(|s| s.text).unwrap_or_default();
    let id = h.ui.app.run.as_ref().map(|r| r.run_id()).unwrap_or_default();
    let page = out.path().join(format!("trajan-report-run-{id}-{}.html", crate::review::export::today()));
    assert!(status.contains("trajan-report-run-") && status.contains("(1 run)"), "{status}");
    let html = ok(std::fs::read_to_string(&page));
    assert_eq!(html.matches("<section class=\"run\"").count(), 1, "{}", page.display());
    // In the list, R writes the marked runs; under blind review only runs the reviewer labelled
    // (a report shows every label).
    h.press("q m j m R");
    let status = h.ui.app.status.clone().unwrap_or_else(|| panic!("a status"));
    assert!(status.error && status.text.starts_with("blind review: run "), "{status:?}");
    h.ui.app.review.blind = false;
    h.press("R");
    let status = h.ui.app.status.clone().map(|s| s.text).unwrap_or_default();
    assert!(status.contains("trajan-report-2-runs-") && status.contains("(2 runs)"), "{status}");
}

#[cfg(unix)]
#[test]
fn the_chart_key_never_writes_through_a_link_put_where_it_writes() {
    let (out, elsewhere) = (ok(tempfile::tempdir()), ok(tempfile::tempdir()));
    let victim = elsewhere.path().join("victim");
    ok(std::fs::write(&victim, "keep me"));
    let stem = format!("trajan-coverage-by-all-{}", crate::review::export::today());
    let name = |n: usize| if n == 1 { format!("{stem}.svg") } else { format!("{stem}-{n}.svg") };
    // Every name the key may write is taken, the last one by a link to a file elsewhere.
    for n in 1..crate::review::export::NAMES {
        ok(std::fs::write(out.path().join(name(n)), "old"));
    }
    let last = out.path().join(name(crate::review::export::NAMES));
    ok(std::os::unix::fs::symlink(&victim, &last));
    let mut h = Harness::classified(160, 48);
    h.ui.app.export_dir = out.path().to_path_buf();
    h.press("] L 1 w q % c c e");
    assert_eq!(ok(std::fs::read_to_string(&victim)), "keep me");
    let status = h.ui.app.status.clone().unwrap_or_else(|| panic!("a status"));
    assert!(status.error && status.text.contains("is taken"), "{status:?}");
    // One name freed: the chart goes there, and the status line says where.
    ok(std::fs::remove_file(out.path().join(name(500))));
    h.press("e");
    assert!(ok(std::fs::read_to_string(out.path().join(name(500)))).contains("Coverage"));
    let status = h.ui.app.status.clone().map(|s| s.text).unwrap_or_default();
    assert!(status.contains(&out.path().join(name(500)).display().to_string()), "{status}");
}

#[test]
fn statistics_from_the_run_view() {
    // `%` works in a run too, and q comes back to it.
    both_classified("stats_from_run", |h| h.press("] % q"));
}

#[test]
fn a_run_read_before_its_end_is_known_names_its_file() {
    // While a big file streams, its exit status and model come at the end: the header names the
    // file instead of `- · -`.
    use crate::tui::action::{Action, Feed};
    let mut h = Harness::demo(120, 30);
    h.press("Enter");
    let (id, n) = h.ui.app.run.as_ref().map(|r| (r.run_id(), r.data.steps.len())).unwrap_or_default();
    if let Some(run) = h.ui.app.run.as_mut() {
        run.data.summary.exit_status = None;
        run.data.summary.model = None;
        run.data.summary.source = "/data/runs/big.traj.json".into();
    }
    let feed = Feed::Progress { label: "big.traj.json".into(), done: 1, total: 9, runs: vec![(id, n)] };
    let effects = h.ui.app.update(Action::Feed(feed));
    h.ui.apply(effects);
    h.ui.draw();
    let header = h.screen().lines().next().unwrap_or_default().to_string();
    assert!(header.contains("· big.traj.json"), "{header}");
    assert!(!header.contains("· - · -"), "{header}");
}

/// A run opened while its file is read, 37% of it: the run's id and the steps stored.
fn open_while_read(h: &mut Harness) -> (i64, usize) {
    use crate::tui::action::{Action, Feed};
    h.press("Enter");
    let (id, n) = h.ui.app.run.as_ref().map(|r| (r.run_id(), r.data.steps.len())).unwrap_or_default();
    let label = "demo.traj.json".to_string();
    let effects = h.ui.app.update(Action::Feed(Feed::Progress { label, done: 37, total: 100, runs: vec![(id, n)] }));
    h.ui.apply(effects);
    (id, n)
}

#[test]
fn run_view_while_its_file_is_read() {
    both("reading", |h| {
        open_while_read(h);
        h.ui.draw();
    });
}

/// Issue 26: the file skimmed, the steps not stored yet are listed; `G` shows the last, read
/// from the file, and says its edits come later.
#[test]
fn run_view_with_steps_read_ahead_of_the_reading() {
    use crate::tui::action::{Action, Feed, PeekStep};
    both("read_ahead", |h| {
        let (id, n) = open_while_read(h);
        let peek = PeekStep(std::sync::Arc::new(move |index| {
            let step = crate::model::Step {
                thought: format!("Step {index}: the end of the file, read before the reading got there"),
                action: "git diff > patch.txt".into(),
                observation: "(the patch)".into(),
                ..crate::model::Step::default()
            };
            let line = crate::store::browse::StepLine::unstored(index, &step);
            Ok((line, crate::store::browse::StepBody::unstored(id, index, &step)))
        }));
        let effects = h.ui.app.update(Action::Feed(Feed::Indexed { run: id, steps: n + 40, peek }));
        h.ui.apply(effects);
        h.press("G");
        h.ui.settle();
        h.ui.draw();
    });
}

#[test]
fn a_note_on_a_step_is_written_shown_marked_and_listed() {
    // `m` on a step: the note is written to the database, drawn at the top of the step and
    // marked in the step list; `m` again shows it for editing, and an empty note removes it.
    let mut h = Harness::demo(100, 30);
    h.ui.app.review.rater = "ann".into();
    h.press("/");
    h.type_text("calc-1");
    h.press("Enter Enter j m");
    h.ui.type_text("the agent misreads the traceback here");
    h.press("Enter");
    h.ui.settle();
    h.ui.draw();
    let run = h.ui.app.run.as_ref().map(|r| r.run_id()).unwrap_or_default();
    let notes = ok(h.ui.store.notes(Some(run)));
    assert_eq!(notes.len(), 1);
    assert_eq!((notes[0].step, notes[0].rater.as_str()), (1, "ann"));
    let screen = h.screen();
    assert!(screen.contains("✎ note · ann"), "{screen}");
    assert!(screen.contains("the agent misreads the traceback here"), "{screen}");
    assert!(screen.lines().any(|l| l.contains("   1✎")), "the step list marks it: {screen}");
    h.press("m");
    assert_eq!(h.ui.app.prompt.as_ref().map(|p| p.text.as_str()), Some("the agent misreads the traceback here"));
    h.press("ctrl-u Enter");
    h.ui.settle();
    assert!(ok(h.ui.store.notes(Some(run))).is_empty(), "an empty note removes it");
}

/// A mini-swe-agent run of three steps whose step 1 observation has 36 lines, the word
/// `needleword` on its 30th (under the fold), in a folder of its own.
fn run_with_a_match_deep_in_a_step() -> tempfile::TempDir {
    let dir = ok(tempfile::tempdir());
    let mut output: Vec<String> = (0..36).map(|i| format!("line {i} of the listing")).collect();
    output[30] = "line 30 holds the needleword here".into();
    let obs = |o: &str| format!("<returncode>0</returncode>\n<output>\n{o}\n</output>");
    let messages = serde_json::json!([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "the task"},
        {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\nls\n```"},
        {"role": "user", "content": obs("a b c")},
        {"role": "assistant", "content": "THOUGHT: list.\n\n```bash\ncat listing.txt\n```"},
        {"role": "user", "content": obs(&output.join("\n"))},
        {"role": "assistant", "content": "THOUGHT: done.\n\n```bash\necho done\n```"},
        {"role": "user", "content": obs("done")},
    ]);
    let traj = serde_json::json!({
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "gen__needle-1",
    });
    ok(std::fs::write(dir.path().join("gen__needle-1.traj.json"), traj.to_string()));
    dir
}

/// In-run search opens the step panel at the line of the match, not at the top of the step,
/// and `n` coming back to it does the same.
#[test]
fn search_opens_the_step_at_the_matching_line() {
    let folder = run_with_a_match_deep_in_a_step();
    let mut h = Harness::over(folder.path(), "needle.db", 80, 24);
    h.press("Enter /");
    h.type_text("needleword");
    h.press("Enter");
    let screen = h.screen();
    assert!(screen.lines().next().is_some_and(|l| l.contains("step 1 of")), "{screen}");
    assert!(screen.contains("line 30 holds the needleword here"), "the match is on screen:\n{screen}");
    assert!(!screen.contains("cat listing.txt"), "the panel is scrolled to the match, past the action:\n{screen}");
    // Away and back with `n`: at the match again.
    h.press("g n");
    let screen = h.screen();
    assert!(screen.contains("line 30 holds the needleword here"), "`n` lands on the match:\n{screen}");
}

/// At 80 columns the header keeps the filter and the queue the reviewer set: a long store name
/// (a PostgreSQL server's) gives way to them.
#[test]
fn at_80_columns_the_header_keeps_the_filter_and_the_queue() {
    let mut h = Harness::demo(80, 24);
    h.ui.app.review.rater = "ann".into();
    h.ui.ctx.source = "reviews-db.internal.example.org:5432/trajan_team_reviews".into();
    h.press("/");
    h.type_text("resolved:no");
    h.press("Enter Q");
    let screen = h.screen();
    let header = screen.lines().next().unwrap_or_default().to_string();
    assert!(header.contains("filter: resolved:no") && header.contains("queue: "), "{header}");
    assert!(header.contains("\" trajan · review"), "the store's name keeps its start: {header}");
}
