//! The labels panel: each source's latest label (heuristic, LLM, reviewers), its modes with
//! confidence and rationale, and the evidence steps (the one under the cursor marked).

use super::text;
use crate::tui::app::RunView;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use std::sync::Arc;

pub fn lines(run: &RunView, width: u16, theme: &Theme) -> (String, Arc<Vec<Line<'static>>>) {
    let w = usize::from(width.max(1));
    let here = run.step_index();
    let mut out: Vec<Line<'static>> = Vec::new();
    if run.data.labels.is_empty() {
        out.push(Line::from(Span::styled("no labels yet: `trajan classify` labels failed runs", theme.muted)));
        return ("labels".into(), Arc::new(out));
    }
    for row in &run.data.labels {
        let l = &row.label;
        if !out.is_empty() {
            out.push(Line::default());
        }
        let who =
            if l.rater == l.source.name() { l.rater.clone() } else { format!("{} · {}", l.source.name(), l.rater) };
        let stamp = format!("  {}@{} · exit {}", l.taxonomy, l.taxonomy_version, l.exit_category);
        let who = text::fit(&who, w.saturating_sub(stamp.chars().count()).max(8));
        let stamp = text::fit(&stamp, w.saturating_sub(who.chars().count()));
        out.push(Line::from(vec![Span::styled(who, theme.header), Span::styled(stamp, theme.muted)]));
        if !l.summary.is_empty() {
            out.extend(text::wrap(&l.summary, w).into_iter().map(|t| Line::from(Span::styled(t, theme.text))));
        }
        if l.modes.is_empty() {
            out.push(Line::from(Span::styled("unclassified", theme.muted)));
        }
        for (assigned, verdicts) in [(true, &l.modes), (false, &l.considered)] {
            for m in verdicts {
                let (mark, style) =
                    if assigned { ("● ", theme.error) } else { ("○ weighed, not assigned: ", theme.muted) };
                out.push(Line::from(vec![
                    Span::styled(mark, style),
                    Span::styled(
                        text::fit(&m.mode, w.saturating_sub(12)),
                        if assigned { theme.accent } else { theme.muted },
                    ),
                    Span::styled(format!("  {:.2}", m.confidence), theme.muted),
                ]));
                for t in text::wrap(&m.rationale, w.saturating_sub(2)) {
                    out.push(Line::from(Span::styled(format!("  {t}"), theme.muted)));
                }
                for e in &m.evidence {
                    let current = here == Some(e.step as i64);
                    let prefix = format!("{}step {:>4}  ", if current { "▸ " } else { "  " }, e.step);
                    let note = text::fit(&e.note, w.saturating_sub(prefix.chars().count()));
                    let style = if current { theme.selection } else { theme.text };
                    out.push(Line::from(vec![Span::styled(prefix, theme.search_match), Span::styled(note, style)]));
                }
            }
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("v / V: next / previous evidence step", theme.muted)));
    (format!("labels · {}", run.data.labels.len()), Arc::new(out))
}
