//! The comparison screen: a summary per run on top, the aligned steps (or the patches) below,
//! the runs in columns; and the picker of a run to compare with.

use super::{ONSET_MARK, ViewCtx, window};
use crate::review::compare::{ComparedRun, Comparison};
use crate::review::onset::{self, By, Judged};
use crate::tui::action::Viewport;
use crate::tui::app::{App, ComparePanel, CompareView, Picker, Shown, visible_columns};
use crate::tui::diff::DiffSource;
use crate::tui::keymap::Context;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use std::sync::Arc;

/// Lines of each run's summary.
const SUMMARY_LINES: u16 = 5;
/// The divergence gutter left of the columns.
const GUTTER: usize = 2;

pub fn draw(frame: &mut Frame, header: Rect, area: Rect, app: &App, ctx: &mut ViewCtx) -> Viewport {
    let Some(view) = app.compare.as_ref() else { return Viewport::default() };
    let theme = ctx.theme.clone();
    draw_header(frame, header, view, &theme);
    let [top, rest] = Layout::vertical([Constraint::Length(SUMMARY_LINES + 2), Constraint::Min(3)]).areas(area);
    let shown = visible_columns(area.width, view.data.runs.len());
    let first = view.first_column.min(view.data.runs.len().saturating_sub(shown));
    let columns = first..(first + shown).min(view.data.runs.len());
    draw_summaries(frame, top, app, columns.clone(), &theme);
    let rows = usize::from(rest.height.saturating_sub(2));
    match view.panel {
        ComparePanel::Steps => {
            let onsets: Vec<Option<i64>> =
                view.data.runs.iter().map(|r| judged(app, r).and_then(|(_, l)| l.onset).map(|s| s as i64)).collect();
            draw_steps(frame, rest, view, columns, &onsets, &theme);
            Viewport { rows, ..Viewport::default() }
        }
        ComparePanel::Patches => {
            let (panel_lines, panel_rows) = draw_patches(frame, rest, view, ctx);
            Viewport { rows, panel_lines, panel_rows, ..Viewport::default() }
        }
    }
}

fn draw_header(frame: &mut Frame, area: Rect, view: &CompareView, theme: &Theme) {
    let d = &view.data;
    let instance = d.runs.first().map(|r| r.summary.instance_id.as_str()).unwrap_or_default();
    let divergence = match view.divergence_at() {
        Some(i) => format!("divergence {} of {}", i + 1, d.divergences.len()),
        None if d.divergences.is_empty() => "no divergence".to_string(),
        None if d.divergences.len() == 1 => "1 divergence".to_string(),
        None => format!("{} divergences", d.divergences.len()),
    };
    // Most telling first: a narrow terminal cuts the end of the line.
    let mut spans = vec![
        Span::styled(format!(" compare {} runs ", d.runs.len()), theme.title),
        Span::styled(format!("· row {} of {} · ", view.cursor + 1, view.rows()), theme.text),
        Span::styled(divergence, theme.warning),
    ];
    if let Some(s) = &view.search {
        spans.push(Span::styled(format!(" · /{} ({} rows)", text::fit(&s.query, 20), s.rows.len()), theme.muted));
    }
    spans.push(Span::styled(" · ", theme.text));
    match d.instances_warning() {
        Some(warning) => spans.push(Span::styled(text::fit(&warning, usize::from(area.width)), theme.warning)),
        None => spans.push(Span::styled(text::fit(instance, 48), theme.accent)),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The onset and blame a compared run is shown with, and whose: this reviewer's own, else the
/// adjudication's, else a classifier's (hidden by blind review, as in the run view).
fn judged<'a>(app: &App, run: &'a ComparedRun) -> Option<(By, &'a Judged)> {
    onset::pick(&run.judgements, Some(&app.review.rater), app.review.blinded(run.summary.id))
}

/// The column rectangles of `area` (after the gutter) for `n` runs.
fn column_areas(area: Rect, n: usize) -> Vec<Rect> {
    let inner = Rect { x: area.x + GUTTER as u16, width: area.width.saturating_sub(GUTTER as u16), ..area };
    let constraints: Vec<Constraint> = (0..n).map(|_| Constraint::Ratio(1, n.max(1) as u32)).collect();
    Layout::horizontal(constraints).split(inner).to_vec()
}

fn draw_summaries(frame: &mut Frame, area: Rect, app: &App, columns: std::ops::Range<usize>, theme: &Theme) {
    let Some(view) = app.compare.as_ref() else { return };
    let total = view.data.runs.len();
    let title = if columns.len() < total {
        format!(" runs {}–{} of {total} (h/l: more) ", columns.start + 1, columns.end)
    } else {
        format!(" {total} runs ")
    };
    let block =
        Block::default().borders(Borders::ALL).border_style(theme.border).title(Span::styled(title, theme.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let areas = column_areas(Rect { x: inner.x.saturating_sub(1), width: inner.width + 1, ..inner }, columns.len());
    for (k, rect) in columns.zip(areas) {
        let run = &view.data.runs[k];
        let blinded = app.review.hides_classifiers(run.summary.id);
        let w = usize::from(rect.width.saturating_sub(1));
        let mut lines = summary_lines(run, k == view.focus, blinded, w, theme);
        // The onset and blame at the end of the verdict's line, as the run view's header says them.
        if let (Some((by, l)), Some(line)) = (judged(app, run), lines.get_mut(1)) {
            let shown = Shown { by, onset: l.onset, blame: l.blame };
            let steps = usize::try_from(run.summary.steps).unwrap_or(0);
            line.spans.extend(super::run::onset_spans(&shown, steps, w.saturating_sub(line.width()), theme));
        }
        frame.render_widget(Paragraph::new(lines), rect);
    }
}

/// `blinded`: blind review hides the classifiers' labels of a run this reviewer has not labelled,
/// here as in the run view.
fn summary_lines(run: &ComparedRun, focused: bool, blinded: bool, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let s = &run.summary;
    let who = s.model.as_deref().or(s.agent.as_deref()).unwrap_or("-");
    let title = format!("run {} · {who}", s.id);
    let (verdict, style) = match s.resolved {
        Some(true) => ("resolved", theme.ok),
        Some(false) => ("unresolved", theme.error),
        None => ("outcome unknown", theme.muted),
    };
    let cost = s.cost.map_or("-".to_string(), |c| format!("${c:.2}"));
    let facts = format!(" · {} steps · {cost}", s.steps);
    let files =
        format!("viewed {} · edited {} · tests {}", run.files_viewed.len(), run.files_edited.len(), run.tests_run);
    let modes = |label: &str, modes: &[String]| {
        let list = if modes.is_empty() { "-".to_string() } else { modes.join(", ") };
        Line::from(vec![
            Span::styled(format!("{label} "), theme.muted),
            Span::styled(text::fit(&list, w.saturating_sub(label.len() + 1)), theme.text),
        ])
    };
    vec![
        Line::from(Span::styled(
            text::fit(&title, w),
            if focused { theme.title.patch(theme.selection) } else { theme.title },
        )),
        Line::from(vec![
            Span::styled(verdict, style),
            Span::styled(text::fit(&facts, w.saturating_sub(verdict.len())), theme.text),
        ]),
        Line::from(Span::styled(text::fit(&files, w), theme.text)),
        match blinded {
            true => Line::from(vec![
                Span::styled("classifier ", theme.muted),
                Span::styled(text::fit("hidden (blind review)", w.saturating_sub(11)), theme.muted),
            ]),
            false => modes("classifier", &run.classifier_modes),
        },
        modes("reviewers", &run.reviewer_modes),
    ]
}

/// `onsets`: per run, the step of the onset it is shown with (its row marked).
fn draw_steps(
    frame: &mut Frame,
    area: Rect,
    view: &CompareView,
    columns: std::ops::Range<usize>,
    onsets: &[Option<i64>],
    theme: &Theme,
) {
    let onset = if onsets.iter().any(Option::is_some) { format!(" · {ONSET_MARK} onset") } else { String::new() };
    let footer = format!(" ▶ divergence{onset} · Tab: patches ");
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focus)
        .title(Span::styled(format!(" steps aligned · {} rows ", view.rows()), theme.title))
        .title_bottom(Line::from(Span::styled(footer, theme.muted)).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = usize::from(inner.height);
    let d = &view.data;
    let areas = column_areas(inner, columns.len());
    let hits = view.search.as_ref().map(|s| &s.rows);
    let mut gutter: Vec<Line> = Vec::new();
    let mut cells: Vec<Vec<Line>> = vec![Vec::new(); columns.len()];
    // The cursor's row is always drawn, whatever the last frame's window was (`n` may jump
    // past it before the next frame reports its size).
    let offset = crate::tui::app::keep_in_view(view.cursor, view.offset, rows, view.rows());
    for (r, row) in d.positions.iter().enumerate().skip(offset).take(rows) {
        let selected = r == view.cursor;
        let same = d.agreed.get(r).copied().unwrap_or(false);
        let mark = match d.divergence_of(r) {
            Some(x) if x.row == r => Span::styled("▶ ", theme.warning),
            Some(_) => Span::styled("│ ", theme.warning),
            None => Span::raw("  "),
        };
        let hit = hits.is_some_and(|h| h.binary_search(&r).is_ok());
        let mark = if hit { Span::styled("* ", theme.search_match) } else { mark };
        // The selected row is marked in the gutter too, so it shows without colour (NO_COLOR).
        let mark = match selected {
            true => Span::styled(format!("{}▸", mark.content.chars().next().unwrap_or(' ')), mark.style),
            false => mark,
        };
        gutter.push(Line::from(mark));
        for (slot, k) in columns.clone().enumerate() {
            let w = usize::from(areas[slot].width.saturating_sub(1));
            let run = &d.runs[k];
            let line = match row.get(k).copied().flatten().and_then(|i| run.steps.get(i)) {
                None => Line::from(Span::styled(format!("{:>4} ·", ""), theme.muted)),
                Some(step) => {
                    let what = super::run::summary(step, &run.edits, w.saturating_sub(12));
                    let what = if what.is_empty() { super::run::kind(step).to_string() } else { what };
                    let style = if same { theme.text } else { theme.warning };
                    let number = match onsets.get(k).copied().flatten() == Some(step.index) {
                        true => Span::styled(format!("{:>4}{ONSET_MARK}", step.index), theme.onset),
                        false => Span::styled(format!("{:>4} ", step.index), theme.muted),
                    };
                    Line::from(vec![
                        number,
                        Span::styled(
                            text::fit(&format!("{:<6} {what}", super::run::kind(step)), w.saturating_sub(5)),
                            style,
                        ),
                    ])
                }
            };
            let line = match (selected, k == view.focus) {
                (true, true) => line.style(theme.selection.patch(theme.accent)),
                (true, false) => line.style(theme.selection),
                _ => line,
            };
            cells[slot].push(line);
        }
    }
    let gutter_area = Rect { width: GUTTER as u16, ..inner };
    frame.render_widget(Paragraph::new(gutter), gutter_area);
    for (lines, rect) in cells.into_iter().zip(areas) {
        frame.render_widget(Paragraph::new(lines), rect);
    }
}

/// Who has a file or a hunk: `only in run 3`, `in runs 3, 5 and gold`, `in every run and gold`.
fn who(runs: &[bool], gold: Option<bool>, d: &Comparison) -> String {
    let names: Vec<String> =
        runs.iter().zip(&d.runs).filter(|(on, _)| **on).map(|(_, r)| r.summary.id.to_string()).collect();
    let all = names.len() == runs.len();
    let gold_on = gold == Some(true);
    match (names.len(), gold_on) {
        (0, true) => "only in the gold patch".to_string(),
        (0, false) => "in no patch".to_string(),
        _ if all && gold_on => "in every run and the gold patch".to_string(),
        _ if all && gold.is_some() => "in every run, not in the gold patch".to_string(),
        _ if all => "in every run".to_string(),
        (1, false) => format!("only in run {}", names[0]),
        _ => {
            let mut list = names.join(", ");
            if gold_on {
                list.push_str(" and gold");
            }
            format!("in run{} {list}", if names.len() > 1 { "s" } else { "" })
        }
    }
}

fn draw_patches(frame: &mut Frame, area: Rect, view: &CompareView, ctx: &mut ViewCtx) -> (usize, usize) {
    let theme = ctx.theme.clone();
    let d = &view.data;
    let width = area.width.saturating_sub(2);
    let w = usize::from(width);
    let rows = usize::from(area.height.saturating_sub(2));
    let mut out: Vec<Line<'static>> = Vec::new();
    let order: Vec<String> = d.runs.iter().map(|r| r.summary.id.to_string()).collect();
    let legend = format!(
        "files (● touched, per run {}{})",
        order.join(" "),
        if d.gold_patch { " gold" } else { "; no gold patch known" }
    );
    out.push(Line::from(Span::styled(text::fit(&legend, w), theme.header)));
    if d.patches.is_empty() {
        out.push(Line::from(Span::styled("no run submitted a patch", theme.muted)));
    }
    for (i, f) in d.patches.iter().enumerate() {
        let mut marks: String = f.runs.iter().map(|&on| if on { '●' } else { '·' }).collect();
        if let Some(g) = f.gold {
            marks.push(' ');
            marks.push(if g { '●' } else { '·' });
        }
        let sel = if i == view.file { "▸ " } else { "  " };
        let line = format!("{sel}{marks}  {}  ({})", f.path, who(&f.runs, f.gold, d));
        out.push(Line::from(Span::styled(text::fit(&line, w), if i == view.file { theme.text } else { theme.muted })));
    }
    if let Some(file) = d.patches.get(view.file) {
        for (h, hunk) in file.hunks.iter().enumerate() {
            out.push(Line::default());
            let style = if hunk.in_all() {
                theme.ok
            } else if hunk.count() == 1 {
                theme.warning
            } else {
                theme.text
            };
            let title = format!("hunk {} of {} · {}", h + 1, file.hunks.len(), who(&hunk.runs, hunk.gold, d));
            out.push(Line::from(Span::styled(text::fit(&title, w), style)));
            let key = {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                ("compare", &order, &file.path, h).hash(&mut hasher);
                hasher.finish() | (1 << 63)
            };
            let text = format!("--- a/{0}\n+++ b/{0}\n{1}", file.path, hunk.diff);
            let rendered = ctx.diff.render(key, &file.path, DiffSource::Unified(&text), view.diff_mode, width, &theme);
            out.extend(rendered.iter().cloned());
        }
    }
    let lines = Arc::new(out);
    let (visible, _) = window(&lines, view.scroll, rows, 0, w);
    let title = match d.patches.len() {
        0 => " patches ".to_string(),
        n => format!(" patches · file {} of {n} ({{ }} to switch) ", view.file.min(n - 1) + 1),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focus)
        .title(Span::styled(title, theme.title))
        .title_bottom(Line::from(Span::styled(" d: diff layout · Tab: steps ", theme.muted)).right_aligned());
    frame.render_widget(Paragraph::new(visible).block(block), area);
    (lines.len(), rows)
}

/// The other runs of an instance, to pick one to compare with.
pub fn draw_picker(frame: &mut Frame, area: Rect, picker: &Picker, ctx: &ViewCtx) {
    let theme = &ctx.theme;
    let width = area.width.saturating_sub(8).min(90);
    let height = (picker.runs.len() as u16 + 2).min(area.height.saturating_sub(2)).max(3);
    let popup = Rect { x: area.x + (area.width - width) / 2, y: area.y + 1, width, height };
    let w = usize::from(width.saturating_sub(2));
    let rows = usize::from(height.saturating_sub(2));
    let offset = crate::tui::app::keep_in_view(picker.cursor, 0, rows, picker.runs.len());
    let lines: Vec<Line> = picker
        .runs
        .iter()
        .enumerate()
        .skip(offset)
        .take(rows)
        .map(|(i, r)| {
            let verdict = match r.resolved {
                Some(true) => "resolved",
                Some(false) => "unresolved",
                None => "unknown",
            };
            let who = r.model.as_deref().or(r.agent.as_deref()).unwrap_or("-");
            let text = format!("{:>5}  {:<10} {:>5} steps  {who}", r.id, verdict, r.steps);
            let line = Line::from(Span::styled(text::fit(&text, w), theme.text));
            if i == picker.cursor { line.style(theme.selection) } else { line }
        })
        .collect();
    let title = format!(" compare run {} with · {} ", picker.base, text::fit(&picker.instance, 40));
    let hints = text::fit(&super::hints(&ctx.keymap, Context::Pick), w.saturating_sub(2));
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border_focus)
        .title(Span::styled(title, theme.title))
        .title_bottom(Line::from(Span::styled(format!(" {hints} "), theme.muted)).right_aligned());
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block).style(Style::default()), popup);
}
