//! The run list: a table of the visible window only.

use super::ViewCtx;
use crate::store::read::RunSummary;
use crate::tui::action::Viewport;
use crate::tui::app::App;
use crate::tui::text;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

struct Column {
    title: &'static str,
    width: u16,
    value: fn(&RunSummary) -> String,
    /// Columns with a lower priority are dropped first on narrow screens.
    priority: u8,
}

fn resolved(r: &RunSummary) -> String {
    match r.resolved {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
    .to_string()
}

const COLUMNS: &[Column] = &[
    Column { title: "id", width: 6, value: |r| r.id.to_string(), priority: 1 },
    Column { title: "agent", width: 14, value: |r| r.agent.clone().unwrap_or_default(), priority: 2 },
    Column { title: "model", width: 22, value: |r| r.model.clone().unwrap_or_default(), priority: 3 },
    Column { title: "exit", width: 18, value: |r| r.exit_status.clone().unwrap_or_default(), priority: 4 },
    Column { title: "res", width: 4, value: resolved, priority: 5 },
    Column { title: "steps", width: 6, value: |r| r.steps.to_string(), priority: 5 },
    Column {
        title: "edits",
        width: 6,
        value: |r| if r.rejected_edits > 0 { format!("{}!{}", r.edits, r.rejected_edits) } else { r.edits.to_string() },
        priority: 4,
    },
    Column { title: "cost", width: 7, value: |r| r.cost.map(|c| format!("{c:.2}")).unwrap_or_default(), priority: 2 },
];

/// Instance is the flexible column; at least this wide.
const INSTANCE_MIN: u16 = 24;

pub fn draw(frame: &mut Frame, header: Rect, area: Rect, app: &App, ctx: &mut ViewCtx) -> Viewport {
    let theme = &ctx.theme;
    let list = &app.list;
    let total = list.total.map_or_else(|| list.runs.len().to_string(), |t| t.to_string());
    let loading = if list.complete { "" } else { " (loading…)" };
    let filter = if list.filter_text.is_empty() { String::new() } else { format!(" · filter: {}", list.filter_text) };
    let queue = match app.review.queue {
        crate::review::Queue::All => String::new(),
        q => format!(" · queue: {}", q.name()),
    };
    let title = format!(
        " trajan · {} · {} of {} runs{} · sort {}{}{}",
        ctx.source,
        list.visible.len(),
        total,
        loading,
        list.sort.label(),
        filter,
        queue
    );
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(text::fit(&title, usize::from(header.width)), theme.title))),
        header,
    );

    // Keep the columns that fit, most important first, shown in their usual order.
    let inner = area.width.saturating_sub(2);
    let mut by_priority: Vec<usize> = (0..COLUMNS.len()).collect();
    by_priority.sort_by_key(|&i| std::cmp::Reverse(COLUMNS[i].priority));
    let mut keep = vec![false; COLUMNS.len()];
    let mut used = INSTANCE_MIN;
    for i in by_priority {
        if used + COLUMNS[i].width < inner {
            used += COLUMNS[i].width + 1;
            keep[i] = true;
        }
    }
    let shown: Vec<&Column> = COLUMNS.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c).collect();
    let instance_width = inner.saturating_sub(shown.iter().map(|c| c.width + 1).sum::<u16>()).max(INSTANCE_MIN);
    let mut widths = vec![Constraint::Length(instance_width)];
    widths.extend(shown.iter().map(|c| Constraint::Length(c.width)));

    let rows = usize::from(area.height.saturating_sub(3));
    let mut head = vec![Cell::from("instance")];
    head.extend(shown.iter().map(|c| Cell::from(c.title)));
    let body: Vec<Row> = list
        .visible
        .iter()
        .enumerate()
        .skip(list.offset)
        .take(rows)
        .filter_map(|(pos, &i)| list.runs.get(i).map(|r| (pos, r)))
        .map(|(pos, r)| {
            // RetryAgent attempts share an instance: number them.
            let name = match r.attempt {
                Some(a) => format!("{} #{a}", r.instance_id),
                None => r.instance_id.clone(),
            };
            // ✓ labelled by this reviewer, ≠ reviewers disagree (no mark: not yet reviewed).
            let name = match app.review.states.get(&r.id) {
                Some(s) if s.disagreement => format!("≠ {name}"),
                Some(s) if s.mine => format!("✓ {name}"),
                _ => name,
            };
            // Marked for comparison (`m`, then `c`).
            let name = if app.marked.contains(&r.id) { format!("+ {name}") } else { name };
            let mut cells = vec![Cell::from(text::fit(&name, usize::from(instance_width)))];
            cells.extend(shown.iter().map(|c| Cell::from(text::fit(&(c.value)(r), usize::from(c.width)))));
            let style = if pos == list.cursor {
                theme.selection
            } else if r.resolved == Some(true) {
                // Resolved runs recede; failures and unknowns are what a reviewer reads.
                theme.muted
            } else {
                theme.text
            };
            Row::new(cells).style(style)
        })
        .collect();
    let block = Block::default().borders(Borders::ALL).border_style(theme.border_focus).title(" runs ");
    let table = Table::new(body, widths).header(Row::new(head).style(theme.header)).block(block).column_spacing(1);
    frame.render_widget(table, area);
    if list.visible.is_empty() {
        let msg = if list.runs.is_empty() && list.complete {
            "no runs in this database: trajan ingest PATH... first"
        } else if list.runs.is_empty() {
            "loading…"
        } else {
            "no run matches the filter"
        };
        let inner = Rect { x: area.x + 2, y: area.y + 2, width: area.width.saturating_sub(4), height: 1 };
        frame.render_widget(Paragraph::new(Span::styled(msg, theme.muted)), inner);
    }
    Viewport { rows, ..Viewport::default() }
}
