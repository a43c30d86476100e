//! The labels panel: each source's latest label (heuristic, LLM, reviewers), its modes with
//! confidence and rationale, and the evidence steps (the one under the cursor marked).

use crate::tui::app::RunView;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use std::sync::Arc;

pub fn lines(run: &RunView, width: u16, theme: &Theme) -> (String, Arc<Vec<Line<'static>>>) {
    let w = usize::from(width.max(1));
    let here = run.step_index();
    let mut out: Vec<Line<'static>> = draft_lines(run, w, theme);
    if run.hidden_labels > 0 {
        let n = run.hidden_labels;
        let what = if n == 1 { "1 classifier label".to_string() } else { format!("{n} classifier labels") };
        let note = format!("{what} hidden until you save yours (blind review)");
        out.extend(text::wrap(&note, w).into_iter().map(|l| Line::from(Span::styled(l, theme.muted))));
    }
    if run.data.labels.is_empty() {
        if run.hidden_labels == 0 {
            out.push(Line::from(Span::styled("no labels yet: `trajan classify` labels failed runs", theme.muted)));
        }
        return ("labels".into(), Arc::new(out));
    }
    let mine = run.data.labels.iter().rev().find(|l| l.label.source.is_human() && l.label.rater == run.rater);
    let mode_set = |l: &crate::label::Label| l.modes.iter().map(|m| m.mode.clone()).collect::<Vec<_>>();
    for row in &run.data.labels {
        let l = &row.label;
        out.push(Line::default());
        // Once the reviewer has labelled the run, every other label says whether it agrees.
        if let Some(m) = mine.filter(|m| m.id != row.id) {
            let (a, b) = (mode_set(&m.label), mode_set(l));
            let (verdict, style) = if a == b {
                ("agrees with your label".to_string(), theme.ok)
            } else {
                let show = |v: &[String]| if v.is_empty() { "unclassified".to_string() } else { v.join(", ") };
                (format!("differs from your label ({})", show(&a)), theme.warning)
            };
            out.push(Line::from(Span::styled(text::fit(&verdict, w), style)));
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
                for t in text::wrap(&m.rationale, w.saturating_sub(2)).into_iter().filter(|_| !m.rationale.is_empty()) {
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
        out.extend(judgement_lines(l, w, theme));
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("v / V: next / previous evidence step", theme.muted)));
    (format!("labels · {}", run.data.labels.len()), Arc::new(out))
}

/// A label's onset and blame, with the reasons it gives: `onset step 4 · blame agent`.
fn judgement_lines(l: &crate::label::Label, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let j = &l.judgement;
    let onset = j.onset.as_ref().and_then(|o| o.step);
    let blame = j.blame.as_ref().and_then(|b| b.value);
    if onset.is_none() && blame.is_none() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    if let Some(s) = onset {
        parts.push(format!("{} onset step {s}", super::ONSET_MARK));
    }
    if let Some(b) = blame {
        parts.push(format!("blame {}", b.name()));
    }
    let mut out = vec![Line::from(Span::styled(text::fit(&parts.join(" · "), w), theme.onset))];
    let why = [j.onset.as_ref().map(|o| o.rationale.as_str()), j.blame.as_ref().map(|b| b.reason.as_str())];
    for reason in why.into_iter().flatten().filter(|r| !r.is_empty()) {
        out.extend(
            text::wrap(reason, w.saturating_sub(2))
                .into_iter()
                .map(|t| Line::from(Span::styled(format!("  {t}"), theme.muted))),
        );
    }
    out
}

/// The reviewer's label being made: the modes by key, unclassified, confidence, evidence, note.
fn draft_lines(run: &RunView, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let d = &run.draft;
    let who = if run.rater.is_empty() { "no reviewer named".to_string() } else { run.rater.clone() };
    let title = format!("your label ({who})");
    let hints = "  w save · W adjudicate";
    // The reviewer's name whole (wrapped if need be): the hints go under it when both do not
    // fit on one line.
    let mut out = match unicode_width::UnicodeWidthStr::width(title.as_str()) + hints.len() <= w {
        true => vec![Line::from(vec![Span::styled(title, theme.header), Span::styled(hints, theme.muted)])],
        false => {
            let mut lines: Vec<Line<'static>> =
                text::wrap(&title, w).into_iter().map(|l| Line::from(Span::styled(l, theme.header))).collect();
            lines.push(Line::from(Span::styled(text::fit(hints.trim_start(), w), theme.muted)));
            lines
        }
    };
    for (i, m) in run.label_modes.iter().enumerate().take(9) {
        let on = d.modes.contains(m);
        let mark = if on { "[x]" } else { "[ ]" };
        out.push(Line::from(vec![
            Span::styled(format!("  {} {mark} ", i + 1), if on { theme.accent } else { theme.muted }),
            Span::styled(text::fit(m, w.saturating_sub(8)), if on { theme.accent } else { theme.text }),
        ]));
    }
    let mark = if d.unclassified { "[x]" } else { "[ ]" };
    out.push(Line::from(Span::styled(
        format!("  u {mark} unclassified"),
        if d.unclassified { theme.accent } else { theme.muted },
    )));
    let steps: Vec<String> = d.evidence.iter().map(|s| s.to_string()).collect();
    let evidence = if steps.is_empty() { "none".to_string() } else { steps.join(", ") };
    let onset = d.onset.map_or("none".to_string(), |s| format!("step {s}"));
    let blame = d.blame.map_or("none", |b| b.name());
    let judged = format!("  onset {onset} (t) · blame {blame} (B)");
    out.extend(text::wrap(&judged, w).into_iter().map(|t| Line::from(Span::styled(t, theme.muted))));
    let line = format!("  confidence {:.2} (+/-) · evidence steps {evidence} (a) · note (c): {}", d.confidence, d.note);
    out.extend(text::wrap(&line, w).into_iter().map(|t| Line::from(Span::styled(t, theme.muted))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reviewers_name_is_never_cut_for_the_hints() {
        let mut run = RunView::new(crate::tui::app::tests::run_data(2, 3));
        run.rater = "newcomer-reviewer-with-a-long-name".into();
        let out = draft_lines(&run, 50, &Theme::default());
        let text: Vec<String> = out.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
        assert_eq!(text[0], "your label (newcomer-reviewer-with-a-long-name)", "{text:#?}");
        assert_eq!(text[1], "w save · W adjudicate", "{text:#?}");
        run.rater = "ann".into();
        let out = draft_lines(&run, 44, &Theme::default());
        let first: String = out[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(first, "your label (ann)  w save · W adjudicate");
    }
}
