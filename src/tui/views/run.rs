//! The run view: header, step list on the left, a panel on the right (and the state panel as a
//! third column on wide terminals).

use super::{ONSET_MARK, ViewCtx, label_bar, labels, panels, state, step, window};
use crate::analysis::compare::{StepFacts, signature};
use crate::label::Blame;
use crate::store::browse::{EditLine, StepLine};
use crate::tui::action::Viewport;
use crate::tui::app::{App, Panel, RunView, Shown, UNREAD};
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

/// Terminals at least this wide show the state panel beside the step panel.
const WIDE: u16 = 150;

pub fn draw(frame: &mut Frame, header: Rect, area: Rect, app: &App, run: &RunView, ctx: &mut ViewCtx) -> Viewport {
    draw_header(frame, header, app, run, &ctx.theme);
    let list_width = (area.width * 3 / 10).clamp(26, 48);
    let wide = area.width >= WIDE && run.panel != Panel::State;
    let constraints = if wide {
        // The state panel grows with the terminal (paths need room), up to a third of it.
        let state_width = (area.width * 3 / 10).clamp(44, 72);
        vec![Constraint::Length(list_width), Constraint::Min(40), Constraint::Length(state_width)]
    } else {
        vec![Constraint::Length(list_width), Constraint::Min(30)]
    };
    let columns = Layout::horizontal(constraints).split(area);
    let rows = usize::from(columns[0].height.saturating_sub(2));
    draw_steps(frame, columns[0], run, app, &ctx.theme, rows);
    // The label being made stays in sight under the step while the reviewer reads it.
    let panel_area = match label_bar::lines(run, columns[1].width, &ctx.theme) {
        Some(lines) => {
            let [top, bottom] =
                Layout::vertical([Constraint::Min(3), Constraint::Length(lines.len() as u16)]).areas(columns[1]);
            frame.render_widget(Paragraph::new(lines), bottom);
            top
        }
        None => columns[1],
    };
    let (panel_lines, panel_rows, panel_overflow, match_scroll) =
        draw_panel(frame, panel_area, run, run.panel, ctx, true);
    if wide {
        draw_panel(frame, columns[2], run, Panel::State, ctx, false);
    }
    Viewport { rows, panel_lines, panel_rows, panel_overflow, help_max: None, match_scroll }
}

fn draw_header(frame: &mut Frame, area: Rect, app: &App, run: &RunView, theme: &Theme) {
    let s = &run.data.summary;
    let resolved = match s.resolved {
        Some(true) => ("resolved", theme.ok),
        Some(false) => ("unresolved", theme.error),
        None => ("outcome unknown", theme.muted),
    };
    // Steps are numbered from 0 everywhere (CLI, JSON, evidence): the header names the range,
    // and says when it is still growing (the run is being read).
    let reading = app.reading.as_ref().is_some_and(|r| r.stored(run.run_id()).is_some());
    let step = match (run.step_index(), run.data.steps.last()) {
        (Some(i), Some(last)) if reading => format!("step {i} of 0–{} (reading…)", last.index),
        (Some(i), Some(last)) => format!("step {i} of 0–{}", last.index),
        _ => "no steps".to_string(),
    };
    // Most telling first: a narrow terminal cuts the end of the line.
    let mut spans = vec![
        Span::styled(format!(" run {} ", s.id), theme.title),
        Span::styled(format!("{step} · "), theme.text),
        Span::styled(resolved.0, resolved.1),
        Span::styled(" · ", theme.text),
        Span::styled(text::fit(&s.instance_id, 48), theme.accent),
    ];
    // The onset and blame the run is shown with, as long as the room left allows.
    if let Some(shown) = run.shown_onset() {
        let used: usize = spans.iter().map(|s| s.width()).sum();
        spans.extend(onset_spans(&shown, run.data.steps.len(), usize::from(area.width).saturating_sub(used), theme));
    }
    if let Some(search) = &run.search {
        let hits = format!(" · /{} ({} hits)", text::fit(&search.query, 20), search.hits.len());
        spans.push(Span::styled(hits, theme.muted));
    }
    match (&s.exit_status, &s.model) {
        // Being read, the end of the file (exit, model) is not known yet: the file is.
        (None, None) if reading => {
            let file = s.source.rsplit('/').next().unwrap_or(&s.source);
            spans.push(Span::styled(format!(" · {}", text::fit(file, 40)), theme.muted));
        }
        (exit, model) => {
            let exit = exit.as_deref().unwrap_or("-");
            spans.push(Span::styled(format!(" · {}", text::fit(exit, 28)), theme.text));
            spans.push(Span::styled(format!(" · {}", text::fit(model.as_deref().unwrap_or("-"), 32)), theme.text));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The onset and blame shown, after a ` · `, in the longest words that fit `room` columns:
/// `onset step 15/49 · blame agent (heuristic)`, `onset 15/49 agent (heuristic)`, `onset 15/49
/// agent`, `✗15`; a task's or
/// environment's failure names its blame. Nothing when not even the shortest fits.
pub(super) fn onset_spans(shown: &Shown, steps: usize, room: usize, theme: &Theme) -> Vec<Span<'static>> {
    let by = shown.by.name();
    let words = match (shown.onset, shown.blame) {
        (Some(s), Some(b)) => [
            format!("onset step {s}/{steps} · blame {} ({by})", b.name()),
            format!("onset {s}/{steps} {} ({by})", b.name()),
            format!("onset {s}/{steps} {}", b.name()),
            format!("{ONSET_MARK}{s}"),
        ],
        (Some(s), None) => [
            format!("onset step {s}/{steps} ({by})"),
            format!("onset {s}/{steps} ({by})"),
            format!("onset {s}/{steps}"),
            format!("{ONSET_MARK}{s}"),
        ],
        (None, Some(b)) => {
            let none = if b == Blame::Agent { "no onset step" } else { "no onset" };
            let b = b.name();
            [format!("blame {b}, {none} ({by})"), format!("blame {b} ({by})"), format!("blame {b}"), b.to_string()]
        }
        (None, None) => return Vec::new(),
    };
    let room = room.saturating_sub(3);
    match words.into_iter().find(|w| unicode_width::UnicodeWidthStr::width(w.as_str()) <= room) {
        Some(w) => vec![Span::styled(" · ", theme.text), Span::styled(w, theme.onset)],
        None => Vec::new(),
    }
}

/// Four marker columns: the edit (`E` applied, `R` rejected or refused), an error or format
/// error (`!`), clipped output (`~`), a test run (`T`).
fn markers(step: &StepLine, theme: &Theme) -> Vec<Span<'static>> {
    let f = step.flags;
    let mark = |on: bool, c: &'static str, style: Style| Span::styled(if on { c } else { " " }, style);
    let edit =
        if f.edit_rejected { Span::styled("R", theme.marker_rejected) } else { mark(f.edit, "E", theme.marker_edit) };
    vec![
        edit,
        mark(f.error || f.format_error, "!", theme.marker_error),
        mark(f.output_clipped, "~", theme.marker_clipped),
        mark(f.test_run, "T", theme.marker_test),
    ]
}

/// A short kind for the step list: what the step did.
pub fn kind(step: &StepLine) -> &'static str {
    let head = step.action_head.trim_start();
    if step.flags.format_error || head.is_empty() {
        return match (step.flags.format_error, &step.says) {
            (true, _) => "format",
            // A step without an action said something: a message.
            (false, Some(_)) => "say",
            (false, None) => "-",
        };
    }
    if step.flags.edit {
        return "edit";
    }
    if step.flags.test_run {
        return "test";
    }
    match step.tool.as_deref() {
        Some("think") => "think",
        Some("message") => "say",
        Some("read") => "view",
        // The rest as the comparison reads the step (`nl -ba f | sed -n`, `cd d && cat f`: a
        // view; `grep`, `ls`, `find`: a search), so the step list and the compared rows agree.
        tool => {
            let facts = StepFacts { tool, head, flags: step.flags, edited: None };
            signature(&facts).kind.name()
        }
    }
}

/// A tool's step named by its tool when its action's own words name nothing a command would
/// (code, JSON arguments: `write_file {"file_path": ...}` is `write_file`, not `{"file_path"`).
fn named(step: &StepLine, brief: crate::analysis::brief::Brief) -> String {
    let text = brief.text();
    match step.tool.as_deref() {
        Some(tool)
            if !text.is_empty()
                && !text.starts_with(tool)
                && !text.starts_with(|c: char| c.is_alphanumeric() || c == '.' || c == '/') =>
        {
            tool.to_string()
        }
        _ => text,
    }
}

/// What tells the step from its neighbours, in at most `width` columns: for an edit the file
/// (and line) it changed, for other steps the command word and its main argument. When that is
/// too long, a file and line keep their end (`…aints.py:144`) and the command word goes first.
pub(super) fn summary(step: &StepLine, edits: &[EditLine], width: usize) -> String {
    let text = summary_text(step, edits);
    if text.chars().count() <= width {
        return text;
    }
    let brief = crate::analysis::brief::brief(&step.action_head);
    match brief.place().filter(|_| !step.flags.edit && brief.line.is_some()) {
        Some(place) => text::fit_left(&place, width),
        None if step.flags.edit => text::fit_left(&text, width),
        None => text::fit(&text, width),
    }
}

fn summary_text(step: &StepLine, edits: &[EditLine]) -> String {
    // A message, not an unparsed reply (that one is a format error, and says so).
    if step.action_head.trim().is_empty()
        && !step.flags.format_error
        && let Some(says) = &step.says
    {
        return says.clone();
    }
    let brief = crate::analysis::brief::brief(&step.action_head);
    if !step.flags.edit {
        return named(step, brief);
    }
    let start = edits.partition_point(|e| e.step.is_some_and(|s| s < step.index));
    let files: Vec<&str> = edits[start..]
        .iter()
        .take_while(|e| e.step == Some(step.index))
        .map(|e| e.path.rsplit('/').next().unwrap_or(&e.path))
        .collect();
    let Some(first) = files.first() else { return brief.text() };
    // The line the command addressed, when it was about this file.
    let line = brief.line.filter(|_| brief.target.as_deref().is_none_or(|t| t == *first));
    let mut out = match line {
        Some(n) => format!("{first}:{n}"),
        None => first.to_string(),
    };
    if files.len() > 1 {
        out.push_str(&format!(" +{}", files.len() - 1));
    }
    out
}

fn draw_steps(frame: &mut Frame, area: Rect, run: &RunView, app: &App, theme: &Theme, rows: usize) {
    let hits = run.search.as_ref().map(|s| &s.hits);
    let onset = run.shown_onset().and_then(|o| o.onset).map(|s| s as i64);
    let width = usize::from(area.width.saturating_sub(2));
    let lines: Vec<Line> = run
        .data
        .steps
        .iter()
        .enumerate()
        .skip(run.offset)
        .take(rows)
        .map(|(pos, s)| {
            let selected = pos == run.cursor;
            let hit = hits.is_some_and(|h| h.binary_search(&s.index).is_ok());
            let number = match (hit, onset == Some(s.index)) {
                (true, _) => theme.search_match,
                (false, true) => theme.onset,
                (false, false) => theme.muted,
            };
            let mut spans = vec![Span::styled(format!("{:>4}", s.index), number)];
            if s.obs_chars == UNREAD {
                spans.push(Span::styled("      not read yet", theme.muted));
                let line = Line::from(spans);
                return if selected { line.style(theme.selection) } else { line };
            }
            // The onset step (O goes there), else steps a label cites as evidence (v / V jump
            // between them), else steps with a note.
            spans.push(if onset == Some(s.index) {
                Span::styled(ONSET_MARK, theme.onset)
            } else if run.is_evidence(s.index) {
                Span::styled("◆", theme.marker_error)
            } else if run.notes_of(s.index).next().is_some() {
                Span::styled("✎", theme.accent)
            } else {
                Span::raw(" ")
            });
            spans.extend(markers(s, theme));
            // Narrow lists drop the kind column: the markers and the brief tell enough.
            let with_kind = width >= 34;
            let room = width.saturating_sub(if with_kind { 17 } else { 10 });
            let what = summary(s, &run.data.edits, room);
            let what = if what.is_empty() { kind(s).to_string() } else { what };
            let summary = if with_kind { format!(" {:<6} {what}", kind(s)) } else { format!(" {what}") };
            spans.push(Span::styled(text::fit(&summary, width.saturating_sub(9)), theme.text));
            let line = Line::from(spans);
            if selected { line.style(theme.selection) } else { line }
        })
        .collect();
    let focus = app.prompt.is_none();
    // A run being read says so: more steps are coming.
    let coming = app.reading.as_ref().is_some_and(|r| r.stored(run.run_id()).is_some());
    let title = format!(" steps {}{} ", run.data.steps.len(), if coming { "…" } else { "" });
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(if focus { theme.border_focus } else { theme.border })
        .title(Span::styled(title, theme.title));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// Draw one panel (`focused`: the one keys scroll and Tab cycles); returns (content lines,
/// visible rows, columns past the right edge) for scrolling.
fn draw_panel(
    frame: &mut Frame,
    area: Rect,
    run: &RunView,
    panel: Panel,
    ctx: &mut ViewCtx,
    focused: bool,
) -> (usize, usize, usize, Option<usize>) {
    let width = area.width.saturating_sub(2);
    let rows = usize::from(area.height.saturating_sub(2));
    let (title, lines) = match panel {
        Panel::Step => step::lines(run, width, ctx),
        Panel::State => state::lines(run, width, &ctx.theme),
        Panel::Tests => panels::tests_and_task(run, width, focused && run.hscroll > 0, &ctx.theme),
        Panel::FinalPatch | Panel::GoldPatch => panels::patch(run, panel, width, ctx),
        Panel::Labels => labels::lines(run, width, &ctx.theme),
    };
    // A search just landed on this step: the panel opens where the match is, not at its top.
    let match_scroll = (focused && panel == Panel::Step && run.to_match && run.body().is_some())
        .then(|| match_line(&lines, run.search.as_ref().map(|s| s.query.as_str())).map_or(0, |l| l.saturating_sub(2)));
    let (scroll, hscroll) = if focused { (match_scroll.unwrap_or(run.scroll), run.hscroll) } else { (0, 0) };
    let (visible, overflow) = window(&lines, scroll, rows, hscroll, usize::from(width));
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(ctx.theme.border)
        .title(Span::styled(format!(" {title} "), ctx.theme.title));
    if focused {
        // Where the window is when the panel holds more than it shows (Space/b scroll it).
        let lines_shown = if lines.len() > rows {
            let first = scroll.min(lines.len() - rows) + 1;
            format!(" lines {first}–{} of {} ·", first + rows - 1, lines.len())
        } else {
            String::new()
        };
        let sideways = if hscroll > 0 { format!(" ⇤ {hscroll} columns ·") } else { String::new() };
        let next = run.panel.cycle(true).title();
        let footer = format!("{lines_shown}{sideways} Tab: {next} ");
        block = block.title_bottom(Line::from(Span::styled(footer, ctx.theme.muted)).right_aligned());
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
    (lines.len(), rows, overflow, match_scroll)
}

/// The first of `lines` holding the search `query` (as the body marks it: the whole phrase, any
/// case), else the first holding one of its words (the index matches words; a phrase may be
/// wrapped across lines).
fn match_line(lines: &[Line<'static>], query: Option<&str>) -> Option<usize> {
    let phrase = text::search_words(query);
    let words: Vec<String> = query
        .unwrap_or_default()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_ascii_lowercase)
        .collect();
    let plain: Vec<String> = lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().to_ascii_lowercase())
        .collect();
    [phrase, words].iter().find_map(|wanted| plain.iter().position(|l| wanted.iter().any(|w| l.contains(w.as_str()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(tool: Option<&str>, head: &str, says: Option<&str>) -> StepLine {
        StepLine {
            index: 0,
            tool: tool.map(str::to_string),
            flags: crate::model::StepFlags::default(),
            obs_chars: 0,
            action_head: head.into(),
            says: says.map(str::to_string),
            open_file: None,
            working_dir: None,
        }
    }

    /// The step list and the comparison's rows name a step's kind alike: a numbered listing
    /// piped to `sed -n` is a view (it was `run` here while the comparison aligned it as a view).
    #[test]
    fn a_numbered_listing_is_a_view_as_the_comparison_reads_it() {
        for (tool, head) in [
            (Some("bash"), "nl -ba /testbed/src/a.py | sed -n '10,40p'"),
            (None, "cd /testbed && nl -ba src/a.py | sed -n 1,80p"),
            (Some("bash"), "sed -n '10,40p' src/a.py"),
            (Some("str_replace_editor"), "str_replace_editor view /testbed/src/a.py"),
        ] {
            assert_eq!(kind(&line(tool, head, None)), "view", "{head}");
        }
        assert_eq!(kind(&line(Some("bash"), "cd /r && grep -rn needle src", None)), "search");
        assert_eq!(kind(&line(Some("bash"), "python reproduce.py", None)), "run");
        assert_eq!(kind(&line(Some("submit"), "submit", None)), "submit");
    }

    #[test]
    fn a_message_only_step_shows_its_words_and_a_tool_its_name() {
        let said = line(None, "", Some("The helper and the regex are in place."));
        assert_eq!((kind(&said), summary_text(&said, &[]).as_str()), ("say", "The helper and the regex are in place."));
        assert_eq!(kind(&line(None, "", None)), "-", "nothing said, nothing done");
        // A tool whose action opens with code or JSON is named by the tool.
        let code = line(Some("execute_code"), "{\"code\": 1}", None);
        assert_eq!(summary_text(&code, &[]), "execute_code");
        let file = line(Some("read_file"), "read_file /app/sample.log", None);
        assert_eq!(summary_text(&file, &[]), "read_file sample.log");
    }
}
