//! Views: pure draw functions of the app state, one module per screen or panel. The only
//! mutable things they touch are render caches (highlighted diffs, wrapped step bodies).

mod chart;
mod compare;
mod help;
mod label_bar;
mod labels;
mod list;
mod panels;
mod run;
mod state;
mod stats;
mod step;

use crate::tui::action::Viewport;
use crate::tui::app::{App, Screen};
use crate::tui::diff::DiffRenderer;
use crate::tui::keymap::{Context, Keymap};
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use std::sync::Arc;

/// The onset step's mark: in the step list, the labels panel and the comparison.
pub const ONSET_MARK: &str = "✗";

/// The smallest terminal the views lay out in; below it a message is shown instead.
pub const MIN_SIZE: (u16, u16) = (60, 12);

/// Everything the views need besides the state: theme, keymap (for help and hints) and caches.
pub struct ViewCtx {
    pub theme: Theme,
    pub keymap: Keymap,
    pub diff: DiffRenderer,
    pub bodies: step::BodyCache,
    /// Label of the database, for the header.
    pub source: String,
}

impl ViewCtx {
    pub fn new(theme: Theme, keymap: Keymap, source: String) -> ViewCtx {
        ViewCtx { theme, keymap, diff: DiffRenderer::new(), bodies: step::BodyCache::default(), source }
    }

    /// Work deferred so keys stay fast (the syntax colours of long diffs), one piece at a time.
    /// True when the screen should be drawn again.
    pub fn idle(&mut self) -> bool {
        if self.diff.finish_one() {
            // Panels were built from the partly coloured lines.
            self.bodies.clear();
            return true;
        }
        false
    }
}

pub fn draw(frame: &mut Frame, app: &App, ctx: &mut ViewCtx) -> Viewport {
    let area = frame.area();
    ctx.diff.new_frame(area.height);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        too_small(frame, area, &ctx.theme);
        return Viewport::default();
    }
    let [header, main, status] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let mut viewport = match (app.screen, app.run.as_ref(), app.stats.as_ref()) {
        (Screen::Run, Some(run), _) => run::draw(frame, header, main, app, run, ctx),
        (Screen::Stats, _, Some(stats)) => stats::draw(frame, header, main, stats, &ctx.theme),
        (Screen::Compare, _, _) if app.compare.is_some() => compare::draw(frame, header, main, app, ctx),
        _ => list::draw(frame, header, main, app, ctx),
    };
    status_line(frame, status, app, ctx);
    if let Some(picker) = &app.picker {
        compare::draw_picker(frame, main, picker, ctx);
    }
    if let Some(scroll) = app.help {
        let context = if app.picker.is_some() { Context::Pick } else { context(app.screen) };
        let modes: Vec<String> = app.review.taxonomy.mode_ids();
        viewport.help_max = Some(help::draw(frame, area, scroll, context, &modes, ctx));
    }
    viewport
}

fn too_small(frame: &mut Frame, area: Rect, theme: &Theme) {
    // One short line each, so no size is broken across lines.
    let lines: Vec<Line> = [
        "terminal too small".to_string(),
        format!("now {}x{}", area.width, area.height),
        format!("needs {}x{}", MIN_SIZE.0, MIN_SIZE.1),
    ]
    .into_iter()
    .map(|l| Line::from(text::fit(&l, usize::from(area.width))))
    .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).style(theme.warning), area);
}

fn status_line(frame: &mut Frame, area: Rect, app: &App, ctx: &ViewCtx) {
    let theme = &ctx.theme;
    let width = usize::from(area.width);
    let line = if let Some(p) = &app.prompt {
        // The sort picker takes one key: no text cursor.
        let cursor = if p.kind == crate::tui::app::PromptKind::Sort { "" } else { "█" };
        Line::from(vec![
            Span::styled(format!("{}: ", p.kind.label()), theme.accent),
            Span::styled(text::fit(&p.text, width.saturating_sub(p.kind.label().len() + 4)), theme.text),
            Span::styled(cursor, theme.accent),
        ])
    } else if let Some(s) = &app.status {
        Line::from(Span::styled(text::fit(&s.text, width), if s.error { theme.status_error } else { theme.status }))
    } else if let Some(r) = &app.reading {
        // How far the reading is, then the hints (keys work while it goes on).
        let progress = text::fit(&r.describe(), width);
        let rest = width.saturating_sub(unicode_width::UnicodeWidthStr::width(progress.as_str()) + 2);
        Line::from(vec![
            Span::styled(progress, theme.accent),
            Span::styled(format!("  {}", text::fit(&hints(&ctx.keymap, context(app.screen)), rest)), theme.muted),
        ])
    } else {
        Line::from(Span::styled(text::fit(&hints(&ctx.keymap, context(app.screen)), width), theme.muted))
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The keymap context of a screen.
pub fn context(screen: Screen) -> Context {
    match screen {
        Screen::List => Context::List,
        Screen::Run => Context::Run,
        Screen::Stats => Context::Stats,
        Screen::Compare => Context::Compare,
    }
}

/// The few bindings worth showing at the bottom, read from the keymap (so rebinding shows).
pub(super) fn hints(keymap: &Keymap, context: Context) -> String {
    use crate::tui::action::Command as C;
    let wanted: &[(C, &str)] = match context {
        Context::Run => &[
            (C::NextStep, "step"),
            (C::NextEdit, "edit"),
            (C::NextProblem, "problem"),
            (C::Search, "search"),
            (C::NextPanel, "panel"),
            (C::DiffMode, "diff"),
            (C::Help, "help"),
            (C::Back, "back"),
        ],
        Context::Compare => &[
            (C::NextDivergence, "divergence"),
            (C::Search, "search"),
            (C::NextStep, "run"),
            (C::NextPanel, "patches"),
            (C::Open, "open"),
            (C::Help, "help"),
            (C::Back, "back"),
        ],
        Context::Pick => &[(C::Open, "compare"), (C::Help, "help"), (C::Back, "close")],
        Context::Stats => &[
            (C::Down, "mode"),
            (C::NextPanel, "rater"),
            (C::SortNext, "group"),
            (C::NextChart, "chart"),
            (C::ExportChart, "write"),
            (C::Help, "help"),
            (C::Back, "back"),
        ],
        _ => &[
            (C::Open, "open"),
            (C::Filter, "filter"),
            (C::SortNext, "sort"),
            (C::NextQueue, "queue"),
            (C::Stats, "stats"),
            (C::Help, "help"),
            (C::Back, "quit"),
        ],
    };
    wanted
        .iter()
        .filter_map(|(cmd, label)| {
            let keys = keymap.keys_for(context, *cmd);
            keys.first().map(|k| format!("{} {label}", k))
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// A window of `rows` lines starting at `scroll` (clamped so the last page is full), scrolled
/// `hscroll` columns sideways and cut to `width` (with `…` where a line goes on); with how far
/// the window's lines reach past `width` before the sideways scroll.
pub fn window(
    lines: &Arc<Vec<Line<'static>>>,
    scroll: usize,
    rows: usize,
    hscroll: usize,
    width: usize,
) -> (Vec<Line<'static>>, usize) {
    let start = scroll.min(lines.len().saturating_sub(rows));
    let visible = lines.iter().skip(start).take(rows);
    let overflow = visible.clone().map(|l| text::line_width(l).saturating_sub(width)).max().unwrap_or(0);
    let cut = visible.map(|l| text::clip(&text::shift(l, hscroll), width)).collect();
    (cut, overflow)
}
