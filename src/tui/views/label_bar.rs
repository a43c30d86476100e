//! The reviewer's label being made, in a strip under the step panel: the modes chosen, onset
//! and blame, confidence, evidence steps, and whether it is saved, so the step stays in sight while it is
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
    let saved = *d == run.saved_draft;
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
    let onset = d.onset.map(|s| format!(" · onset step {s}")).unwrap_or_default();
    let blame = d.blame.map(|b| format!(" · blame {}", b.name())).unwrap_or_default();
    let body = format!("{what}{onset}{blame} · confidence {:.2}{evidence}{note}", d.confidence);
    if saved {
        // Saved, it folds to one line: the step gets the rows back.
        let line = text::fit(&format!("─ your label · saved: {body} "), w);
        let rule = "─".repeat(w.saturating_sub(unicode_width::UnicodeWidthStr::width(line.as_str())));
        return Some(vec![Line::from(vec![Span::styled(line, theme.ok), Span::styled(rule, theme.border)])]);
    }
    let title = "─ your label · unsaved · w saves · W adjudicates ";
    let mut out = vec![Line::from(vec![
        Span::styled(text::fit(title, w), theme.warning),
        Span::styled("─".repeat(w.saturating_sub(title.chars().count())), theme.border),
    ])];
    // At most two lines: the labels panel (L) has the rest.
    let mut wrapped = text::wrap(&body, w);
    if wrapped.len() > 2 {
        wrapped.truncate(2);
        wrapped[1] = text::fit(&format!("{}…", wrapped[1]), w);
    }
    out.extend(wrapped.into_iter().map(|l| Line::from(Span::styled(l, theme.accent))));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_label_folds_to_one_line_and_an_unsaved_one_shows_the_keys() {
        let mut run = RunView::new(crate::tui::app::tests::run_data(2, 3));
        run.label_modes = vec!["missed_edit_location".into(), "context_flooding".into()];
        run.draft.modes.insert("context_flooding".into());
        run.draft.evidence.insert(1);
        let unsaved = lines(&run, 78, &Theme::default()).unwrap_or_default();
        assert!(unsaved.len() >= 2, "{unsaved:?}");
        run.saved_draft = run.draft.clone();
        let saved = lines(&run, 78, &Theme::default()).unwrap_or_default();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let text: String = saved[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.starts_with("─ your label · saved: 2 context_flooding"), "{text}");
    }
}
