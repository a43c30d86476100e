//! The reviewer's label being made, in a strip under the step panel: the modes chosen,
//! confidence, evidence steps, and whether it is saved, so the step stays in sight while it is
//! labelled (the labels panel, `L`, has the whole form).

use crate::tui::app::{Draft, Panel, RunView};
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};

/// The strip's lines (a rule with the title, then the label wrapped to `width`), or `None` when
/// there is nothing to show: no label begun, or the labels panel is open.
pub fn lines(run: &RunView, width: u16, theme: &Theme) -> Option<Vec<Line<'static>>> {
    let d = &run.draft;
    if run.panel == Panel::Labels || *d == Draft::default() {
        return None;
    }
    let w = usize::from(width.max(1));
    let (state, style) = if *d == run.saved_draft {
        ("saved", theme.ok)
    } else {
        ("unsaved · w saves · W adjudicates", theme.warning)
    };
    let title = format!("─ your label · {state} ");
    let mut out = vec![Line::from(vec![
        Span::styled(text::fit(&title, w), style),
        Span::styled("─".repeat(w.saturating_sub(title.chars().count())), theme.border),
    ])];
    let modes: Vec<String> = run
        .label_modes
        .iter()
        .enumerate()
        .filter(|(_, m)| d.modes.contains(*m))
        .map(|(i, m)| format!("{} {m}", i + 1))
        .collect();
    let what = if d.unclassified {
        "unclassified".to_string()
    } else if modes.is_empty() {
        "no mode yet (1–9)".to_string()
    } else {
        modes.join(", ")
    };
    let steps: Vec<String> = d.evidence.iter().map(|s| s.to_string()).collect();
    let evidence = if steps.is_empty() { String::new() } else { format!(" · evidence steps {}", steps.join(", ")) };
    let note = if d.note.is_empty() { String::new() } else { format!(" · note: {}", d.note) };
    let body = format!("{what} · confidence {:.2}{evidence}{note}", d.confidence);
    // At most two lines: the labels panel (L) has the rest.
    let mut wrapped = text::wrap(&body, w);
    if wrapped.len() > 2 {
        wrapped.truncate(2);
        wrapped[1] = text::fit(&format!("{}…", wrapped[1]), w);
    }
    out.extend(wrapped.into_iter().map(|l| Line::from(Span::styled(l, theme.accent))));
    Some(out)
}
