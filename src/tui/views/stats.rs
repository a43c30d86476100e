//! The statistics screen: failure modes over the failed runs as bars, the groups (by model,
//! agent, benchmark or exit) with coverage and agreement, and the confusion matrix of one rater
//! against the reference for one mode.

use super::{Viewport, text};
use crate::tui::app::StatsView;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, Block, Borders, Paragraph};

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_else(|| "—".into())
}

fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "—".into())
}

pub fn draw(frame: &mut Frame, header: Rect, area: Rect, view: &StatsView, theme: &Theme) -> Viewport {
    let s = &view.stats;
    let t = &s.total;
    let blind = if view.blind { " · blind review: the runs you labelled" } else { "" };
    let title = format!(
        " statistics · {}{blind} · labels: {} · {} failed runs, {} labelled, coverage {}",
        s.taxonomy,
        s.source,
        t.runs,
        t.labelled,
        pct(t.coverage)
    );
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(text::fit(&title, usize::from(header.width)), theme.title))),
        header,
    );
    let [left, right] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let modes: Vec<String> = match &view.report {
        Some(r) => r.modes.iter().map(|m| m.mode.clone()).collect(),
        None => t.modes.keys().cloned().collect(),
    };
    let bars_height = (modes.len() as u16 * 2 + 2).min(left.height / 2).max(3);
    let [bars_area, groups_area] = Layout::vertical([Constraint::Length(bars_height), Constraint::Min(3)]).areas(left);
    let bars: Vec<Bar> = modes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let n = t.modes.get(m).copied().unwrap_or(0);
            let share = if t.labelled > 0 { n as f64 / t.labelled as f64 } else { 0.0 };
            let style = if i == view.mode { theme.accent } else { theme.sparkline };
            Bar::with_label(text::fit(m, 34), n as u64).text_value(format!("{n} ({:.0}%)", share * 100.0)).style(style)
        })
        .collect();
    let chart = BarChart::horizontal(bars)
        .bar_width(1)
        .bar_gap(1)
        .block(
            Block::default().borders(Borders::ALL).border_style(theme.border).title(" modes of labelled failed runs "),
        )
        .label_style(theme.text)
        .value_style(theme.header);
    frame.render_widget(chart, bars_area);

    let mut lines = vec![Line::from(Span::styled(
        format!("{:<28} {:>5} {:>8} {:>8} {:>9}", format!("by {}", s.by), "runs", "labelled", "coverage", "agreement"),
        theme.header,
    ))];
    for r in s.rows.iter().chain(std::iter::once(t)) {
        let row = format!(
            "{:<28} {:>5} {:>8} {:>8} {:>9}",
            text::fit(&r.group, 28),
            r.runs,
            r.labelled,
            pct(r.coverage),
            pct(r.agreement)
        );
        lines.push(Line::from(Span::styled(row, theme.text)));
    }
    let groups = Paragraph::new(lines)
        .block(Block::default().borders(Borders::ALL).border_style(theme.border).title(" groups (s: group by) "));
    frame.render_widget(groups, groups_area);

    frame.render_widget(
        Paragraph::new(confusion(view, &modes, theme)).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border_focus)
                .title(" confusion against the reference (j/k mode, Tab rater) "),
        ),
        right,
    );
    Viewport { rows: usize::from(area.height), panel_lines: 0, panel_rows: 0, help_max: None }
}

fn confusion(view: &StatsView, modes: &[String], theme: &Theme) -> Vec<Line<'static>> {
    let Some(report) = &view.report else {
        return vec![Line::from(Span::styled("no labels yet: trajan classify, then label runs (1–9, w)", theme.muted))];
    };
    let Some(m) = report.modes.get(view.mode.min(modes.len().saturating_sub(1))) else {
        return vec![Line::from(Span::styled("the taxonomy has no modes", theme.muted))];
    };
    let mut out = vec![Line::from(Span::styled(m.mode.clone(), theme.accent))];
    out.push(Line::from(Span::styled(
        format!("Krippendorff's alpha {} over {} runs", num(m.alpha.alpha.value), m.alpha.units),
        theme.text,
    )));
    let Some(c) = m.against_reference.get(view.rater.min(m.against_reference.len().saturating_sub(1))) else {
        out.push(Line::from(Span::styled("no rater to score against the reference", theme.muted)));
        return out;
    };
    if c.n == 0 {
        out.push(Line::from(Span::styled(
            "no reference yet: reviewers' labels (or an adjudication) make it",
            theme.muted,
        )));
    }
    let f = &c.confusion;
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        text::fit(&format!("{} against the reference (n {})", c.rater, c.n), 60),
        theme.header,
    )));
    out.push(Line::from(Span::styled(format!("{:<14}{:>14}{:>14}", "", "reference yes", "reference no"), theme.muted)));
    out.push(Line::from(vec![
        Span::styled(format!("{:<14}", "rater yes"), theme.muted),
        Span::styled(format!("{:>14}", f.tp), theme.ok),
        Span::styled(format!("{:>14}", f.fp), theme.error),
    ]));
    out.push(Line::from(vec![
        Span::styled(format!("{:<14}", "rater no"), theme.muted),
        Span::styled(format!("{:>14}", f.fn_), theme.error),
        Span::styled(format!("{:>14}", f.tn), theme.ok),
    ]));
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        format!(
            "precision {}  recall {}  F1 {}  kappa {}",
            num(c.precision.value),
            num(c.recall.value),
            num(c.f1.value),
            num(c.kappa.value)
        ),
        theme.text,
    )));
    out.push(Line::default());
    out.push(Line::from(Span::styled("coverage (rated runs with any mode)", theme.header)));
    for cov in &report.coverage {
        out.push(Line::from(Span::styled(
            format!("  {:<24} {}", text::fit(&cov.rater, 24), pct(cov.share)),
            theme.text,
        )));
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("intervals and every pair's kappa: trajan agreement", theme.muted)));
    out
}
