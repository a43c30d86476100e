//! The statistics screen: failure modes over the failed runs as bars, the groups (by model,
//! agent, benchmark or exit) with coverage and agreement and the runs set apart as the task's or
//! the environment's (`review::blame`, said under the summary), and the confusion matrix of one rater
//! against the reference for one mode. Wide terminals show the confusion beside the rest;
//! narrower ones (80x24 included) show every section in one column that scrolls. Screens wide
//! and tall enough (160x48) draw the chart `c` picks under them (`views::chart`).

use crate::review::chart;
use crate::tui::action::Viewport;
use crate::tui::app::StatsView;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

/// Terminals at least this wide show the confusion matrix in a column of its own.
const WIDE: u16 = 120;
/// Screens at least this tall (and wide) also draw the chosen chart under the numbers.
const TALL: u16 = 36;

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_else(|| "—".into())
}

fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "—".into())
}

fn line(s: String, style: ratatui::style::Style) -> Line<'static> {
    Line::from(Span::styled(s, style))
}

pub fn draw(frame: &mut Frame, header: Rect, area: Rect, view: &StatsView, theme: &Theme) -> Viewport {
    let title = format!(" statistics · {} · labels: {}", view.stats.taxonomy, view.stats.source);
    frame.render_widget(Paragraph::new(line(text::fit(&title, usize::from(header.width)), theme.title)), header);
    let modes: Vec<String> = match &view.report {
        Some(r) => r.modes.iter().map(|m| m.mode.clone()).collect(),
        None => view.stats.total.modes.keys().cloned().collect(),
    };
    let area = if area.width >= WIDE && area.height >= TALL {
        let [numbers, below] = Layout::vertical([Constraint::Percentage(40), Constraint::Fill(1)]).areas(area);
        let fig = chart::figure_of(view.chart, &view.stats, view.report.as_ref(), view.blind, &modes, "");
        super::chart::draw(frame, below, &fig, theme);
        numbers
    } else {
        area
    };
    let (main, side) = if area.width >= WIDE {
        let [left, right] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
        (left, Some(right))
    } else {
        (area, None)
    };
    let width = usize::from(main.width.saturating_sub(2));
    let mut lines = summary(view, width, theme);
    lines.extend(mode_bars(view, &modes, width, theme));
    lines.extend(groups(view, width, theme));
    if let Some(right) = side {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focus)
            .title(Span::styled(" confusion against the reference ", theme.title));
        frame.render_widget(Paragraph::new(confusion(view, &modes, theme)).block(block), right);
    } else {
        lines.push(Line::default());
        lines.push(line("confusion against the reference".into(), theme.header));
        lines.extend(confusion(view, &modes, theme));
    }
    let rows = usize::from(main.height.saturating_sub(2));
    let start = view.scroll.min(lines.len().saturating_sub(rows));
    let more = if lines.len() > rows {
        format!(" lines {}–{} of {} · Space/b scroll ", start + 1, (start + rows).min(lines.len()), lines.len())
    } else {
        String::new()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" failure modes of labelled failed runs ", theme.title))
        .title_bottom(Line::from(Span::styled(more, theme.muted)).right_aligned());
    let shown: Vec<Line> = lines.iter().skip(start).take(rows).map(|l| text::clip(l, width)).collect();
    frame.render_widget(Paragraph::new(shown).block(block), main);
    Viewport { rows, panel_lines: lines.len(), panel_rows: rows, ..Viewport::default() }
}

/// Which runs the numbers cover, wrapped to the width.
fn summary(view: &StatsView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let s = &view.stats;
    let t = &s.total;
    let noun = match (s.scope == "failed", t.runs == 1) {
        (true, true) => "failed run",
        (true, false) => "failed runs",
        (false, true) => "failed or outcome-unknown run",
        (false, false) => "failed or outcome-unknown runs",
    };
    let mut text = format!("{} {noun}, {} labelled, coverage {}", t.runs, t.labelled, pct(t.coverage));
    match s.outcome_unknown_left_out {
        0 => {}
        1 => text.push_str("; 1 run with outcome unknown not counted (--include-unknown)"),
        n => text.push_str(&format!("; {n} runs with outcome unknown not counted (--include-unknown)")),
    }
    if view.blind {
        text.push_str(" · blind review: the runs you labelled");
    }
    let mut out: Vec<Line<'static>> = text::wrap(&text, width).into_iter().map(|l| line(l, theme.text)).collect();
    // Runs set apart by their blame, and whose blame it is: said, never silent.
    let apart = if t.blamed_task + t.blamed_environment > 0 { theme.header } else { theme.muted };
    out.extend(text::wrap(&s.blame_note, width).into_iter().map(|l| line(l, apart)));
    if let Some(note) = crate::review::stats::gold_note(s) {
        out.extend(text::wrap(&note, width).into_iter().map(|l| line(l, theme.muted)));
    }
    out.push(Line::default());
    out
}

/// One bar per mode: its name, the labelled runs showing it and their share, a bar.
fn mode_bars(view: &StatsView, modes: &[String], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let t = &view.stats.total;
    let name_width = modes.iter().map(|m| m.chars().count()).max().unwrap_or(4).min(34).min(width / 2);
    let mut out = Vec::new();
    for (i, m) in modes.iter().enumerate() {
        let n = t.modes.get(m).copied().unwrap_or(0);
        let share = if t.labelled > 0 { n as f64 / t.labelled as f64 } else { 0.0 };
        let value = format!("{n:>4} {:>4}", format!("{:.0}%", share * 100.0));
        let room = width.saturating_sub(name_width + value.chars().count() + 2);
        let bar = "█".repeat((share * room as f64).round() as usize);
        let style = if i == view.mode { theme.accent } else { theme.text };
        out.push(Line::from(vec![
            Span::styled(format!("{:<name_width$} ", text::fit(m, name_width)), style),
            Span::styled(value, theme.header),
            Span::styled(format!(" {bar}"), if i == view.mode { theme.accent } else { theme.sparkline }),
        ]));
    }
    out
}

/// The groups table: runs, labelled, coverage and agreement per group and in total, and the
/// runs set apart as the task's or the environment's.
fn groups(view: &StatsView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let s = &view.stats;
    // Agreement only where some run has two raters to compare; else a line says why.
    let compared = s.rows.iter().chain(std::iter::once(&s.total)).any(|r| r.compared > 0);
    // The numbers keep their columns; the group's name takes what is left.
    let numbers = 5 + 9 + 9 + if compared { 10 } else { 0 } + 6 + 5;
    let name = width.saturating_sub(numbers).clamp(6, 40);
    let row = |group: &str, cells: [String; 6]| {
        let [runs, labelled, coverage, agreement, task, env] = cells;
        let agreement = if compared { format!("{agreement:>10}") } else { String::new() };
        format!("{:<name$}{runs:>5}{labelled:>9}{coverage:>9}{agreement}{task:>6}{env:>5}", text::fit(group, name))
    };
    let head = ["runs", "labelled", "coverage", "agreement", "task", "env"].map(String::from);
    let mut out = vec![Line::default(), line(row(&format!("by {} (s)", s.by), head), theme.header)];
    for r in s.rows.iter().chain(std::iter::once(&s.total)) {
        let cells = [
            r.runs.to_string(),
            r.labelled.to_string(),
            pct(r.coverage),
            pct(r.agreement),
            r.blamed_task.to_string(),
            r.blamed_environment.to_string(),
        ];
        out.push(line(row(&r.group, cells), theme.text));
    }
    if let Some(note) = crate::review::stats::agreement_note(s) {
        let why = format!("{note} the confusion panel, trajan agreement");
        out.extend(text::wrap(&why, width).into_iter().map(|l| line(l, theme.muted)));
    }
    out
}

fn confusion(view: &StatsView, modes: &[String], theme: &Theme) -> Vec<Line<'static>> {
    let Some(report) = &view.report else {
        return vec![line("no labels yet: trajan classify, then label runs (1–9, w)".into(), theme.muted)];
    };
    let Some(m) = report.modes.get(view.mode.min(modes.len().saturating_sub(1))) else {
        return vec![line("the taxonomy has no modes".into(), theme.muted)];
    };
    let mut out = vec![line(format!("{} (j/k: mode)", m.mode), theme.accent)];
    out.push(line(
        format!("Krippendorff's alpha {} over {} runs", num(m.alpha.alpha.value), m.alpha.units),
        theme.text,
    ));
    let Some(c) = m.against_reference.get(view.rater.min(m.against_reference.len().saturating_sub(1))) else {
        out.push(line("no rater to score against the reference".into(), theme.muted));
        return out;
    };
    if c.n == 0 {
        out.push(line("no reference yet: reviewers' labels (or an adjudication) make it".into(), theme.muted));
    }
    let f = &c.confusion;
    out.push(Line::default());
    out.push(line(format!("{} against the reference (n {}; Tab: rater)", c.rater, c.n), theme.header));
    out.push(line(format!("{:<11}{:>15}{:>14}", "", "reference yes", "reference no"), theme.muted));
    out.push(Line::from(vec![
        Span::styled(format!("{:<11}", "rater yes"), theme.muted),
        Span::styled(format!("{:>15}", f.tp), theme.ok),
        Span::styled(format!("{:>14}", f.fp), theme.error),
    ]));
    out.push(Line::from(vec![
        Span::styled(format!("{:<11}", "rater no"), theme.muted),
        Span::styled(format!("{:>15}", f.fn_), theme.error),
        Span::styled(format!("{:>14}", f.tn), theme.ok),
    ]));
    out.push(line(format!("precision {}  recall {}", num(c.precision.value), num(c.recall.value)), theme.text));
    out.push(line(format!("F1 {}  kappa {}", num(c.f1.value), num(c.kappa.value)), theme.text));
    out.push(Line::default());
    out.push(line("coverage (rated runs with any mode)".into(), theme.header));
    for cov in &report.coverage {
        out.push(line(format!("  {:<24} {}", text::fit(&cov.rater, 24), pct(cov.share)), theme.text));
    }
    out.push(Line::default());
    out.push(line("intervals and every pair's kappa: trajan agreement".into(), theme.muted));
    out
}
