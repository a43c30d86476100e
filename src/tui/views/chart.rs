//! A statistics figure (`review::chart`, the one `trajan export chart` draws) on the terminal:
//! counts and shares as ratatui's horizontal bar chart, a bar per group under each category,
//! each bar labelled with the numbers the exported chart prints; agreement coefficients (which
//! may be negative) and spreads of steps and cost as text bars on one scale.

use crate::review::chart::{Bars, Body, Boxes, Figure, PALETTE, Scale};
use crate::tui::color::for_depth;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Direction, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Borders, Paragraph};

fn colour(i: usize, theme: &Theme) -> Style {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    Style::default().fg(for_depth(Color::Rgb(r, g, b), theme.depth))
}

pub fn draw(frame: &mut Frame, area: Rect, fig: &Figure, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(format!(" {} ", fig.title), theme.title))
        .title_bottom(Line::from(Span::styled(" c: next chart · e: write it as SVG ", theme.muted)).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut head = vec![Line::from(Span::styled(text::fit(&fig.axis, width), theme.muted))];
    if let Some(note) = &fig.note {
        head.push(Line::from(Span::styled(text::fit(note, width), theme.muted)));
    }
    match &fig.body {
        Body::Bars(b) if b.series.len() > 1 => head.push(legend(b, width, theme)),
        _ => {}
    }
    let rows = head.len() as u16;
    frame.render_widget(Paragraph::new(head), Rect { height: rows.min(inner.height), ..inner });
    let rest = Rect { y: inner.y + rows, height: inner.height.saturating_sub(rows + 1), ..inner };
    match &fig.body {
        Body::Bars(b) if b.scale != Scale::Coefficient => bar_chart(frame, rest, b, theme),
        Body::Bars(b) => frame.render_widget(Paragraph::new(coefficients(b, width, theme)), rest),
        Body::Boxes(b) => frame.render_widget(Paragraph::new(boxes(b, width, theme)), rest),
        Body::Empty(why) => {
            frame.render_widget(Paragraph::new(Line::from(Span::styled(why.clone(), theme.muted))), rest)
        }
    }
}

fn legend(b: &Bars, width: usize, theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, s) in b.series.iter().enumerate() {
        spans.push(Span::styled("■ ", colour(i, theme)));
        spans.push(Span::styled(format!("{}  ", s.name), theme.text));
    }
    text::clip(&Line::from(spans), width)
}

/// Counts and shares: a group of bars per category (one per series), the category's name
/// under its group (or, with one series, beside each bar).
fn bar_chart(frame: &mut Frame, area: Rect, b: &Bars, theme: &Theme) {
    let (_, hi) = b.scale.range();
    let scale = |v: f64| match b.scale {
        Scale::Share => (v * 1000.0).round().max(0.0) as u64,
        _ => v.round().max(0.0) as u64,
    };
    let max = match b.scale {
        Scale::Share => 1000,
        _ => hi.round().max(1.0) as u64,
    };
    let single = b.series.len() == 1;
    let name_width = if single { b.categories.iter().map(|c| c.chars().count()).max().unwrap_or(0).min(30) } else { 0 };
    let mut chart = BarChart::default()
        .direction(Direction::Horizontal)
        .bar_width(1)
        .bar_gap(0)
        .group_gap(if single { 0 } else { 1 })
        .max(max)
        .value_style(theme.text)
        .label_style(theme.header);
    for (c, category) in b.categories.iter().enumerate() {
        let bars: Vec<Bar> = b
            .series
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let bar = s.bars.get(c)?;
                let mut out = Bar::default()
                    .value(bar.value.map_or(0, scale))
                    .text_value(format!(" {}", bar.label))
                    .style(colour(i, theme));
                if single {
                    out = out.label(Line::from(text::fit(category, name_width)));
                }
                Some(out)
            })
            .collect();
        let group = if single { BarGroup::default() } else { BarGroup::default().label(Line::from(category.clone())) };
        chart = chart.data(group.bars(&bars));
    }
    frame.render_widget(chart, area);
}

/// One text bar per line: a name column, the bar on a shared scale, the numbers.
fn row(name: &str, name_width: usize, cells: Vec<Span<'static>>, label: &str, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("{:<name_width$} ", text::fit(name, name_width)), theme.text)];
    spans.extend(cells);
    spans.push(Span::styled(format!(" {label}"), theme.text));
    Line::from(spans)
}

/// A scale of `cells` columns from `lo` to `hi`: the column of `v`.
fn column(v: f64, lo: f64, hi: f64, cells: usize) -> usize {
    let t = if hi > lo { ((v - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.0 };
    ((t * cells.saturating_sub(1) as f64).round() as usize).min(cells.saturating_sub(1))
}

fn coefficients(b: &Bars, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let name_width = b.categories.iter().map(|c| c.chars().count()).max().unwrap_or(4).min(28).min(width / 4);
    let cells = width.saturating_sub(name_width + 28).max(10);
    let zero = column(0.0, -1.0, 1.0, cells);
    let mut out = Vec::new();
    for (c, category) in b.categories.iter().enumerate() {
        for (i, s) in b.series.iter().enumerate() {
            let Some(bar) = s.bars.get(c) else { continue };
            let mut line: Vec<char> = vec![' '; cells];
            line[zero] = '│';
            if let Some((lo, hi)) = bar.interval {
                for ch in &mut line[column(lo, -1.0, 1.0, cells)..=column(hi, -1.0, 1.0, cells)] {
                    *ch = '─';
                }
            }
            if let Some(v) = bar.value {
                let at = column(v, -1.0, 1.0, cells);
                for ch in &mut line[at.min(zero)..=at.max(zero)] {
                    *ch = '█';
                }
            }
            let name = if i == 0 { category.as_str() } else { "" };
            let bar_text: String = line.into_iter().collect();
            out.push(row(name, name_width, vec![Span::styled(bar_text, colour(i, theme))], &bar.label, theme));
        }
    }
    out
}

fn boxes(b: &Boxes, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let name_width = b.rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(4).min(32).min(width / 3);
    let cells = width.saturating_sub(name_width + 2 + 52).clamp(10, 48);
    b.rows
        .iter()
        .map(|r| {
            let mut line: Vec<char> = vec![' '; cells];
            if let Some(s) = r.spread {
                let at = |v| column(v, 0.0, b.max, cells);
                for ch in &mut line[at(s.min)..=at(s.max)] {
                    *ch = '─';
                }
                for ch in &mut line[at(s.q1)..=at(s.q3)] {
                    *ch = '█';
                }
                line[at(s.median)] = '┃';
            }
            let style = colour(if r.side == 0 { 3 } else { 0 }, theme);
            row(&r.name, name_width, vec![Span::styled(line.into_iter().collect::<String>(), style)], &r.label, theme)
        })
        .collect()
}
