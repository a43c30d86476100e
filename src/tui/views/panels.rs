//! The tests-and-task panel and the patch panels (final submission, gold patch).

use super::ViewCtx;
use crate::model::TestGroup;
use crate::tui::app::{Panel, RunView};
use crate::tui::diff::DiffSource;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use std::sync::Arc;

/// `sideways`: the panel is scrolled sideways (`>`), so test names and messages are whole lines
/// the window shifts; otherwise a long test name is cut from the left, keeping its end (the test
/// function), and a message is cut at the right.
pub fn tests_and_task(run: &RunView, width: u16, sideways: bool, theme: &Theme) -> (String, Arc<Vec<Line<'static>>>) {
    let w = usize::from(width.max(1));
    let mut out: Vec<Line<'static>> = Vec::new();
    match &run.data.outcome {
        None => out.push(Line::from(Span::styled("no test outcome known for this run", theme.muted))),
        Some(o) => {
            let (verdict, style) = match o.resolved {
                Some(true) => ("resolved", theme.ok),
                Some(false) => ("not resolved", theme.error),
                None => ("verdict unknown", theme.muted),
            };
            out.push(Line::from(vec![
                Span::styled("outcome  ", theme.header),
                Span::styled(verdict, style),
                Span::styled(format!("  · from {}", o.format), theme.muted),
            ]));
            if o.patch_applied == Some(false) {
                out.push(Line::from(Span::styled("the patch did not apply", theme.error)));
            }
            out.push(Line::from(Span::styled(text::fit_left(&short_source(&o.source), w), theme.muted)));
            if let Some(tests) = &o.tests_source {
                let line = format!("tests from {}", short_source(tests));
                out.push(Line::from(Span::styled(text::fit_left(&line, w), theme.muted)));
            }
            if let Some(says) = o.tests_say_resolved {
                let says = if says { "resolved" } else { "not resolved" };
                let why = format!("the evaluations disagree: the per-test report says {says}");
                out.extend(text::wrap(&why, w).into_iter().map(|l| Line::from(Span::styled(l, theme.warning))));
            }
            // Harness groups in their reading order, ungrouped tests last.
            let mut groups: Vec<Option<TestGroup>> = o.tests.iter().map(|t| t.group).collect();
            groups.sort_by_key(|g| (g.is_none(), *g));
            groups.dedup();
            for group in groups {
                let g = group.map_or("tests", TestGroup::name);
                let tests: Vec<_> = o.tests.iter().filter(|t| t.group == group).collect();
                let failing = tests.iter().filter(|t| !t.passed).count();
                out.push(Line::default());
                let count = if tests.len() == 1 { "1 test".to_string() } else { format!("{} tests", tests.len()) };
                out.push(Line::from(Span::styled(format!("{g} · {count}, {failing} failing"), theme.header)));
                // Failures first: they are what a reviewer looks for.
                let mut ordered = tests.clone();
                ordered.sort_by_key(|t| t.passed);
                for t in ordered {
                    let (mark, style) = if t.passed { ("✓", theme.ok) } else { ("✗", theme.error) };
                    out.push(Line::from(vec![
                        Span::styled(format!("  {mark} "), style),
                        Span::styled(
                            match sideways {
                                true => text::one_line(&t.name),
                                false => text::fit_left(&t.name, w.saturating_sub(4)),
                            },
                            theme.text,
                        ),
                    ]));
                    if let Some(m) = t.message.as_deref().filter(|_| !t.passed) {
                        let m = if sideways { text::one_line(m) } else { text::fit(m, w.saturating_sub(6)) };
                        out.push(Line::from(Span::styled(format!("      {m}"), theme.muted)));
                    }
                }
            }
        }
    }
    // A run without a verdict never passes over in silence an evaluation of its instance that
    // did not join (`show` lists them all, also beside a joined one).
    for u in run.data.unjoined.iter().filter(|_| run.data.outcome.is_none()) {
        let why = format!("evaluation found in {}, not joined: {}", short_source(&u.source), u.reason);
        out.push(Line::default());
        out.extend(text::wrap(&why, w).into_iter().map(|l| Line::from(Span::styled(l, theme.warning))));
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("task", theme.header)));
    match run.data.task.as_ref().and_then(|t| t.instruction.as_deref()) {
        Some(instr) => out.extend(text::wrap(instr, w).into_iter().map(|l| Line::from(Span::styled(l, theme.text)))),
        None => out.push(Line::from(Span::styled("no task instruction in the ingested files", theme.muted))),
    }
    ("tests & task".into(), Arc::new(out))
}

/// The folder and file a verdict came from (the rest of the path is the same for a whole
/// evaluation).
fn short_source(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

pub fn patch(run: &RunView, panel: Panel, width: u16, ctx: &mut ViewCtx) -> (String, Arc<Vec<Line<'static>>>) {
    let theme = ctx.theme.clone();
    let name = if panel == Panel::GoldPatch { "gold patch" } else { "final patch" };
    let Some(files) = run.patch(panel) else {
        let why =
            if panel == Panel::GoldPatch { "no gold patch known for this task" } else { "the run submitted no patch" };
        return (name.into(), Arc::new(vec![Line::from(Span::styled(why, theme.muted))]));
    };
    let Some(file) = files.get(run.file.min(files.len().saturating_sub(1))) else {
        return (name.into(), Arc::new(vec![Line::from(Span::styled("the patch names no file", theme.muted))]));
    };
    let index = run.file.min(files.len() - 1);
    let title = format!("{name} · file {} of {} ({{ }} to switch)", index + 1, files.len());
    let cache_key = super::step::key(run, if panel == Panel::GoldPatch { 2 } else { 1 }, index as i64, width, &theme);
    if let Some(hit) = ctx.bodies.get(&cache_key) {
        return (title, hit);
    }
    let mut out: Vec<Line<'static>> = Vec::new();
    let list: Vec<String> =
        files.iter().enumerate().map(|(i, f)| format!("{}{}", if i == index { "▸ " } else { "  " }, f.path)).collect();
    for l in &list {
        out.push(Line::from(Span::styled(text::fit(l, usize::from(width)), theme.muted)));
    }
    out.push(Line::default());
    // A key per (run, panel, file) for the diff cache, apart from edit ids (small integers).
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ("patch", run.run_id(), panel == Panel::GoldPatch, index).hash(&mut h);
        h.finish() | (1 << 63)
    };
    let rendered = ctx.diff.render(key, &file.path, DiffSource::Unified(&file.diff), run.diff_mode, width, &theme);
    // Cut (and scrolled sideways) when drawn.
    out.extend(rendered.iter().cloned());
    let out = Arc::new(out);
    ctx.bodies.put(cache_key, out.clone());
    (title, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evaluation_that_did_not_join_is_named_with_why() {
        let mut data = crate::tui::app::tests::run_data(2, 3);
        data.unjoined = vec![crate::store::Unjoined {
            source: "/r/logs/x__y-1".into(),
            format: "swebench-harness".into(),
            reason: "its patch differs from this run's submission".into(),
        }];
        let run = RunView::new(data);
        let (_, lines) = tests_and_task(&run, 200, false, &Theme::default());
        let text: Vec<String> = lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
        let want = "evaluation found in logs/x__y-1, not joined: its patch differs from this run's submission";
        assert!(text.iter().any(|l| l == want), "{text:#?}");
    }

    #[test]
    fn a_long_test_name_keeps_its_end_and_scrolls_sideways_whole() {
        let name = "astropy/timeseries/tests/test_sampled.py::test_empty_initialization_invalid";
        let mut data = crate::tui::app::tests::run_data(2, 3);
        data.outcome = Some(crate::store::read::OutcomeRow {
            tests_source: None,
            tests_say_resolved: None,
            format: "swebench-harness".into(),
            source: "/r/logs/x__y-1".into(),
            resolved: Some(false),
            patch_applied: Some(true),
            verdict: crate::store::read::Verdict::Reported,
            tests: vec![crate::model::TestCase {
                name: name.into(),
                group: Some(TestGroup::FailToPass),
                passed: false,
                message: None,
            }],
        });
        let run = RunView::new(data);
        let text = |sideways: bool| -> Vec<String> {
            let (_, lines) = tests_and_task(&run, 40, sideways, &Theme::default());
            lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
        };
        let folded = text(false);
        let line = folded.iter().find(|l| l.contains('✗')).unwrap_or_else(|| panic!("{folded:#?}"));
        assert!(line.ends_with("::test_empty_initialization_invalid"), "the test function stays: {line}");
        assert!(line.contains('…') && unicode_width::UnicodeWidthStr::width(line.as_str()) <= 40, "{line}");
        let whole = text(true);
        assert!(whole.iter().any(|l| l == &format!("  ✗ {name}")), "scrolled sideways, the line is whole: {whole:#?}");
    }
}
