//! The run list: a table of the visible window only.

use super::ViewCtx;
use crate::label::Blame;
use crate::review::onset;
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
    value: fn(&Listed) -> String,
    /// At most this wide, however long the values (the flexible columns take what is left).
    max: u16,
    /// A flexible column may be narrowed to this before any column is dropped.
    min: u16,
    /// Columns with a lower priority are dropped first on narrow screens.
    priority: u8,
    /// A model: cut, it drops its provider's prefix first (`anthropic/claude-sonnet-4` →
    /// `claude-sonnet-4`), then its end (`claude-sonnet…`): the family is what tells runs apart.
    model: bool,
    /// Onset and blame: shown only when some run has them to show.
    judged: bool,
}

/// A run of the list, with the onset and blame it is shown with (`review::onset::pick`).
struct Listed<'a> {
    run: &'a RunSummary,
    onset: Option<usize>,
    blame: Option<Blame>,
}

fn resolved(c: &Listed) -> String {
    match c.run.resolved {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
    .to_string()
}

/// The blame in five columns: `agent`, `task`, `env`.
fn blame(c: &Listed) -> String {
    match c.blame {
        Some(Blame::Environment) => "env".to_string(),
        Some(b) => b.name().to_string(),
        None => String::new(),
    }
}

/// A column with no onset or blame in it.
const fn column(title: &'static str, value: fn(&Listed) -> String, max: u16, min: u16, priority: u8) -> Column {
    Column { title, value, max, min, priority, model: false, judged: false }
}

/// The instance first (it names the run), then the model: runs of one task differ by model, so
/// it is the last column to go.
const COLUMNS: &[Column] = &[
    column("instance", instance, 60, 16, 11),
    column("id", |c| c.run.id.to_string(), 6, 6, 1),
    column("agent", |c| c.run.agent.clone().unwrap_or_default(), 16, 8, 2),
    Column { model: true, ..column("model", |c| c.run.model.clone().unwrap_or_default(), 40, 12, 10) },
    column("exit", |c| c.run.exit_status.clone().unwrap_or_default(), 24, 9, 4),
    column("res", resolved, 3, 3, 9),
    Column { judged: true, ..column("onset", |c| onset::step_of(c.onset, c.run.steps), 11, 5, 7) },
    Column { judged: true, ..column("blame", blame, 5, 5, 6) },
    column("steps", |c| c.run.steps.to_string(), 6, 5, 8),
    column("edits", edits, 7, 5, 5),
    column("cost", |c| c.run.cost.map(|c| format!("{c:.2}")).unwrap_or_default(), 8, 4, 3),
];

fn instance(c: &Listed) -> String {
    let r = c.run;
    // RetryAgent attempts share an instance: number them.
    match r.attempt {
        Some(a) => format!("{} #{a}", r.instance_id),
        None => r.instance_id.clone(),
    }
}

fn edits(c: &Listed) -> String {
    let r = c.run;
    if r.rejected_edits > 0 { format!("{}!{}", r.edits, r.rejected_edits) } else { r.edits.to_string() }
}

/// A model's name in `width` columns: whole when it fits, else without its provider's prefix
/// (what precedes the last `/`), cut at its end when even that is too long.
fn fit_model(name: &str, width: usize) -> String {
    let whole = text::fit(name, width);
    if !whole.ends_with('…') {
        return whole;
    }
    let own = name.rsplit('/').next().unwrap_or(name);
    text::fit(own, width)
}

/// Whether the run says it submitted yet handed in no patch (marked `∅` in the list).
pub fn submitted_nothing(r: &RunSummary) -> bool {
    !r.has_patch && r.exit_status.as_deref().is_some_and(|e| e.to_ascii_lowercase().starts_with("submitted"))
}

/// Columns of this priority or lower are dropped before any column is narrowed below its need;
/// with onset and blame shown, the exit status too (the blame says more of why a run failed).
const OPTIONAL: u8 = 3;
const OPTIONAL_JUDGED: u8 = 4;

/// The columns that fit `width` and their widths, in the table's order. Each column asks for the
/// width its title and the rows on screen need (`need`, up to its maximum). When they do not fit,
/// the optional columns go first (id, agent, cost: least important first; exit when `judged`); then the widest
/// column gives up width, down to its minimum; then the least important column left goes, and
/// the others ask again. Width left over goes to the columns whose values it shows whole (`want`:
/// their widest value, past their maximum, up to twice it), the most important first; what is still left stays
/// empty at the right, so no column is padded past its widest value. The onset and blame columns
/// are left out unless some run is `judged`.
fn layout(width: u16, need: &[u16], want: &[u16], judged: bool) -> Vec<(usize, u16)> {
    let mut kept: Vec<usize> = (0..COLUMNS.len()).filter(|&i| judged || !COLUMNS[i].judged).collect();
    let optional = if judged { OPTIONAL_JUDGED } else { OPTIONAL };
    let total = |kept: &[usize], widths: &[u16]| -> u32 {
        kept.iter().map(|&i| u32::from(widths[i]) + 1).sum::<u32>().saturating_sub(1)
    };
    let least =
        |kept: &[usize]| kept.iter().enumerate().min_by_key(|(_, i)| COLUMNS[**i].priority).map(|(p, &i)| (p, i));
    while total(&kept, need) > u32::from(width) {
        match least(&kept) {
            Some((pos, i)) if COLUMNS[i].priority <= optional => {
                kept.remove(pos);
            }
            _ => break,
        }
    }
    let mut widths = need.to_vec();
    loop {
        while total(&kept, &widths) > u32::from(width) {
            let Some(&wide) = kept.iter().filter(|&&i| widths[i] > COLUMNS[i].min).max_by_key(|&&i| widths[i]) else {
                break;
            };
            widths[wide] -= 1;
        }
        if total(&kept, &widths) <= u32::from(width) || kept.len() <= 1 {
            break;
        }
        let Some((pos, _)) = least(&kept) else { break };
        kept.remove(pos);
        widths = need.to_vec();
    }
    let mut slack = u16::try_from(u32::from(width).saturating_sub(total(&kept, &widths))).unwrap_or(u16::MAX);
    let mut by_importance = kept.clone();
    by_importance.sort_by_key(|&i| std::cmp::Reverse(COLUMNS[i].priority));
    for i in by_importance {
        // Up to twice its maximum: one long value (an agent's error as its exit) does not take
        // the whole screen.
        let wanted = want.get(i).copied().unwrap_or(0).min(COLUMNS[i].max.saturating_mul(2));
        let more = wanted.saturating_sub(widths[i]).min(slack);
        widths[i] += more;
        slack -= more;
    }
    kept.into_iter().map(|i| (i, widths[i])).collect()
}

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
    // The filter and the queue are what the reviewer set: they stay; the sort order goes when
    // they need its room, and the store's name gives way to them (cut, else left out).
    let width = |s: &str| unicode_width::UnicodeWidthStr::width(s);
    let counts = format!(" · {} of {} runs{}", list.visible.len(), total, loading);
    let sort = format!(" · sort {}", list.sort.label());
    let head = " trajan";
    let fits = |rest: &str| width(head) + " · ".len() + 8 + width(rest) <= usize::from(header.width);
    let with_sort = format!("{counts}{sort}{filter}{queue}");
    let rest = if fits(&with_sort) { with_sort } else { format!("{counts}{filter}{queue}") };
    let room = usize::from(header.width).saturating_sub(width(head) + width(" · ") + width(&rest));
    let title =
        if room >= 4 { format!("{head} · {}{rest}", text::fit(&ctx.source, room)) } else { format!("{head}{rest}") };
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(text::fit(&title, usize::from(header.width)), theme.title))),
        header,
    );

    let rows = usize::from(area.height.saturating_sub(3));
    let review = &app.review;
    let shown = |id: i64| {
        let labels = review.states.get(&id).map(|s| s.labels.as_slice()).unwrap_or_default();
        onset::pick(labels, Some(&review.rater), review.blinded(id)).map(|(_, l)| l)
    };
    let on_screen: Vec<Listed> = list
        .visible
        .iter()
        .skip(list.offset)
        .take(rows)
        .filter_map(|&i| list.runs.get(i))
        .map(|run| {
            let judged = shown(run.id);
            Listed { run, onset: judged.and_then(|l| l.onset), blame: judged.and_then(|l| l.blame) }
        })
        .collect();
    // Onset and blame columns when any run has them to show this reviewer.
    let judged = review.states.keys().any(|&id| shown(id).is_some());
    // Review and comparison marks before the instance: ✓ ≠ + ∅ and a space.
    let want: Vec<u16> = COLUMNS
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let marks = if k == 0 { 4 } else { 0 };
            let values = on_screen
                .iter()
                .map(|r| unicode_width::UnicodeWidthStr::width(text::one_line(&(c.value)(r)).as_str()))
                .max()
                .unwrap_or(0);
            u16::try_from(values.max(c.title.len()) + marks).unwrap_or(u16::MAX)
        })
        .collect();
    let need: Vec<u16> = COLUMNS.iter().zip(&want).map(|(c, &w)| w.clamp(c.min, c.max)).collect();
    let columns = layout(area.width.saturating_sub(2), &need, &want, judged);
    let widths: Vec<Constraint> = columns.iter().map(|&(_, w)| Constraint::Length(w)).collect();
    let head: Vec<Cell> = columns.iter().map(|&(i, _)| Cell::from(COLUMNS[i].title)).collect();
    let body: Vec<Row> = on_screen
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let pos = list.offset + k;
            let cells: Vec<Cell> = columns
                .iter()
                .map(|&(i, w)| {
                    let c = &COLUMNS[i];
                    let value = (c.value)(r);
                    let value = if i == 0 { marked(app, r.run, value) } else { value };
                    let w = usize::from(w);
                    Cell::from(if c.model { fit_model(&value, w) } else { text::fit(&value, w) })
                })
                .collect();
            let style = if pos == list.cursor {
                theme.selection
            } else if r.run.resolved == Some(true) {
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

/// The instance with its marks: `✓` labelled by this reviewer, `≠` reviewers disagree (no mark:
/// not yet reviewed), `+` marked for comparison, `∅` submitted with no patch.
fn marked(app: &App, r: &RunSummary, name: String) -> String {
    let name = if submitted_nothing(r) { format!("∅ {name}") } else { name };
    let name = match app.review.states.get(&r.id) {
        Some(s) if s.disagreement => format!("≠ {name}"),
        Some(s) if s.mine => format!("✓ {name}"),
        _ => name,
    };
    if app.marked.contains(&r.id) { format!("+ {name}") } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need_all(values: &[(&str, u16)]) -> Vec<u16> {
        COLUMNS
            .iter()
            .map(|c| values.iter().find(|(t, _)| *t == c.title).map_or(c.max, |(_, w)| *w).clamp(c.min, c.max))
            .collect()
    }

    fn titles(columns: &[(usize, u16)]) -> Vec<&'static str> {
        columns.iter().map(|&(i, _)| COLUMNS[i].title).collect()
    }

    #[test]
    fn at_80_columns_the_model_stays_and_the_agent_and_cost_go_first() {
        // Three runs of one task by three OpenRouter models: the model tells them apart.
        let need = need_all(&[("instance", 23), ("model", 36), ("exit", 9), ("agent", 9), ("id", 6), ("cost", 4)]);
        let columns = layout(78, &need, &need, false);
        let shown = titles(&columns);
        assert_eq!(shown, ["instance", "model", "exit", "res", "steps", "edits"], "{columns:?}");
        let model = columns[1].1;
        assert!(model >= 24, "the model keeps most of its width: {columns:?}");
        let used: u16 = columns.iter().map(|&(_, w)| w + 1).sum::<u16>() - 1;
        assert_eq!(used, 78, "the width is used whole: {columns:?}");
    }

    #[test]
    fn at_80_columns_onset_and_blame_take_the_place_of_the_exit() {
        let need = need_all(&[
            ("instance", 24),
            ("model", 36),
            ("exit", 9),
            ("agent", 9),
            ("id", 6),
            ("cost", 4),
            ("onset", 7),
            ("steps", 5),
            ("edits", 5),
        ]);
        let columns = layout(78, &need, &need, true);
        let shown = titles(&columns);
        assert_eq!(shown, ["instance", "model", "res", "onset", "blame", "steps", "edits"], "{columns:?}");
        assert_eq!(columns[0].1, 24, "the instance is not cut: {columns:?}");
        assert!(columns[1].1 >= 20, "the model keeps most of its width: {columns:?}");
        // Nothing judged: the columns are not there at all.
        let shown = titles(&layout(78, &need, &need, false));
        assert_eq!(shown, ["instance", "model", "exit", "res", "steps", "edits"]);
    }

    #[test]
    fn a_run_that_submitted_nothing_is_marked() {
        let run = |exit: &str, has_patch: bool| RunSummary {
            exit_status: Some(exit.into()),
            has_patch,
            ..crate::tui::app::tests::summary(1, "a__b-1", Some(false), 3)
        };
        assert!(submitted_nothing(&run("Submitted", false)));
        assert!(submitted_nothing(&run("submitted (exit_format)", false)));
        assert!(!submitted_nothing(&run("submitted", true)));
        assert!(!submitted_nothing(&run("exit_cost", false)), "a run cut off before submitting is not marked");
    }

    #[test]
    fn at_200_columns_a_long_model_is_not_cut_while_the_instance_is_padded() {
        let need = need_all(&[("instance", 23), ("model", 36), ("exit", 9), ("agent", 14)]);
        let columns = layout(198, &need, &need, true);
        let model = columns.iter().find(|&&(i, _)| COLUMNS[i].title == "model").map(|&(_, w)| w);
        assert_eq!(model, Some(36), "{columns:?}");
        assert_eq!(titles(&columns).len(), COLUMNS.len(), "every column fits: {columns:?}");
    }

    /// At 200 columns each column is as wide as its widest value, no wider: the instance is not
    /// padded with the width left over (it took 115 columns for ids of 36); a value past its
    /// column's maximum (an agent's long name) gets what it needs from that width.
    #[test]
    fn at_200_columns_widths_follow_the_values() {
        let want = need_all(&[("instance", 40), ("model", 27), ("exit", 9), ("agent", 20), ("cost", 4)]);
        let mut want = want;
        let agent = COLUMNS.iter().position(|c| c.title == "agent").unwrap_or(0);
        want[agent] = 24;
        let need: Vec<u16> = COLUMNS.iter().zip(&want).map(|(c, &w)| w.clamp(c.min, c.max)).collect();
        let columns = layout(198, &need, &want, false);
        let width = |title: &str| columns.iter().find(|&&(i, _)| COLUMNS[i].title == title).map(|&(_, w)| w);
        assert_eq!(width("instance"), Some(40), "{columns:?}");
        assert_eq!(width("agent"), Some(24), "past its maximum, from the width left: {columns:?}");
        let used: u16 = columns.iter().map(|&(_, w)| w + 1).sum::<u16>() - 1;
        assert!(used < 150, "the rest stays empty: {columns:?}");
    }

    /// A model cut to its column drops its provider first, then its end: the family stays.
    #[test]
    fn a_cut_model_keeps_its_start() {
        assert_eq!(fit_model("google/gemini-3-pro-preview", 25), "gemini-3-pro-preview");
        assert_eq!(fit_model("anthropic/claude-3-5-sonnet-20241022", 20), "claude-3-5-sonnet-2…");
        assert_eq!(fit_model("gpt-4o", 25), "gpt-4o");
        assert_eq!(fit_model("openai/gpt-4o", 25), "openai/gpt-4o", "whole when it fits");
    }
}
