//! The help overlay, generated from the keymap: every binding of the current screen with its
//! description, so a rebound key shows as rebound.

use super::ViewCtx;
use crate::tui::keymap::Context;
use crate::tui::text;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draw the overlay; returns the largest scroll that still shows a full page. `modes`: the
/// taxonomy's modes in key order, so the mode keys say which mode they toggle (and keys past
/// the last mode are not listed).
pub fn draw(frame: &mut Frame, area: Rect, scroll: usize, context: Context, modes: &[String], ctx: &ViewCtx) -> usize {
    let theme = &ctx.theme;
    let width = area.width.saturating_sub(8).min(84);
    let height = area.height.saturating_sub(4);
    let popup = Rect { x: area.x + (area.width - width) / 2, y: area.y + 2, width, height };
    let entries: Vec<_> = ctx
        .keymap
        .help(context)
        .into_iter()
        .filter_map(|mut e| match e.command.mode_index() {
            Some(i) => modes.get(i).map(|m| {
                e.help = format!("your label: toggle {m}");
                e
            }),
            None => Some(e),
        })
        .collect();
    let key_width = entries.iter().map(|e| e.keys.chars().count()).max().unwrap_or(8).min(24);
    // A description longer than the overlay is wrapped under itself, never cut.
    let help_width = usize::from(width).saturating_sub(key_width + 5).max(8);
    let lines: Vec<Line> = entries
        .iter()
        .flat_map(|e| {
            let keys = format!(" {:<key_width$}  ", text::fit(&e.keys, key_width));
            let indent = " ".repeat(key_width + 3);
            text::wrap(&e.help, help_width).into_iter().enumerate().map(move |(i, part)| {
                let lead = if i == 0 { keys.clone() } else { indent.clone() };
                Line::from(vec![Span::styled(lead, theme.help_key), Span::styled(part, theme.text)])
            })
        })
        .collect();
    let rows = usize::from(height.saturating_sub(2));
    let max = lines.len().saturating_sub(rows);
    let start = scroll.min(max);
    let title = format!(" keys · {} · j/k scroll · any other key closes ", context.name());
    let block =
        Block::default().borders(Borders::ALL).border_style(theme.border_focus).title(Span::styled(title, theme.title));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines.into_iter().skip(start).take(rows).collect::<Vec<_>>()).block(block),
        popup,
    );
    max
}
