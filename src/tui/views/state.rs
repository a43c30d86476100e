//! The state panel: what the agent has done up to the current step — files edited (with
//! counts), rejected edits, the open file and working directory, the last edits, and the context
//! ledger (observation characters so far, as a sparkline over the steps).

use crate::tui::app::RunView;
use crate::tui::text;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use std::collections::BTreeMap;
use std::sync::Arc;

const SPARK: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const LAST_EDITS: usize = 5;

#[derive(Default)]
struct FileCounts {
    applied: usize,
    rejected: usize,
    other: usize,
}

pub fn lines(run: &RunView, width: u16, theme: &Theme) -> (String, Arc<Vec<Line<'static>>>) {
    let w = usize::from(width.max(1));
    let Some(here) = run.step_index() else {
        return ("state".into(), Arc::new(vec![Line::from(Span::styled("no steps", theme.muted))]));
    };
    let mut out: Vec<Line<'static>> = Vec::new();
    let heading = |out: &mut Vec<Line<'static>>, t: &str| {
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.push(Line::from(Span::styled(t.to_string(), theme.header)));
    };

    if run.while_read {
        heading(&mut out, "not yet reconstructed");
        let note = "the run is being read: its shell edits are reconstructed when the reading ends, \
                    so the files below are those its other edits changed so far";
        out.extend(text::wrap(note, w).into_iter().map(|l| Line::from(Span::styled(l, theme.muted))));
    }
    // Files edited so far (a shell edit that changed nothing edited nothing).
    let edits: Vec<_> = run.data.edits.iter().filter(|e| e.step.is_some_and(|s| s <= here)).collect();
    let mut files: BTreeMap<&str, FileCounts> = BTreeMap::new();
    for e in edits.iter().filter(|e| !e.changed_nothing()) {
        let c = files.entry(e.path.as_str()).or_default();
        if e.is_rejected() {
            c.rejected += 1;
        } else if e.status == crate::model::EditStatus::Applied {
            c.applied += 1;
        } else {
            c.other += 1;
        }
    }
    heading(&mut out, &format!("files edited so far · {}", files.len()));
    if files.is_empty() {
        out.push(Line::from(Span::styled("  none yet", theme.muted)));
    }
    let mut by_count: Vec<_> = files.into_iter().collect();
    by_count.sort_by_key(|(path, c)| (std::cmp::Reverse(c.applied + c.rejected + c.other), *path));
    for (path, c) in by_count {
        let counts = format!("{:>3} ok {:>2} rej {:>2} ?  ", c.applied, c.rejected, c.other);
        out.push(Line::from(vec![
            Span::styled(counts.clone(), if c.rejected > 0 { theme.warning } else { theme.muted }),
            Span::styled(text::fit_left(path, w.saturating_sub(counts.chars().count())), theme.text),
        ]));
    }

    // Rejections.
    let rejected: Vec<i64> = edits.iter().filter(|e| e.is_rejected()).filter_map(|e| e.step).collect();
    heading(&mut out, &format!("rejected or refused edits · {}", rejected.len()));
    if !rejected.is_empty() {
        let steps: Vec<String> = rejected.iter().map(i64::to_string).collect();
        for l in text::wrap(&format!("steps {}", steps.join(", ")), w.saturating_sub(2)) {
            out.push(Line::from(Span::styled(format!("  {l}"), theme.error)));
        }
    }

    // Where the agent is.
    let upto = &run.data.steps[..=run.cursor.min(run.data.steps.len().saturating_sub(1))];
    let open = upto.iter().rev().find_map(|s| s.open_file.clone());
    let wd = upto.iter().rev().find_map(|s| s.working_dir.clone());
    heading(&mut out, "where");
    out.push(Line::from(vec![
        Span::styled("  open file  ", theme.muted),
        Span::styled(text::fit_left(open.as_deref().unwrap_or("unknown"), w.saturating_sub(13)), theme.text),
    ]));
    out.push(Line::from(vec![
        Span::styled("  directory  ", theme.muted),
        Span::styled(text::fit_left(wd.as_deref().unwrap_or("unknown"), w.saturating_sub(13)), theme.text),
    ]));

    // Last edits.
    heading(&mut out, "last edits");
    for e in edits.iter().rev().take(LAST_EDITS) {
        // A reconstructed edit says how sure its diff is; a tool edit, its verdict.
        let (what, doubtful) = match (e.undone_at, e.certainty) {
            (Some(_), _) => ("undone".to_string(), true),
            (None, Some(c)) => {
                use crate::model::Certainty::*;
                (c.words().to_string(), matches!(c, Contradicted | Unchanged | Unknown | TooLarge))
            }
            (None, None) => (e.status.words(), e.status != crate::model::EditStatus::Applied),
        };
        let head = format!("  {:>4} {:<18} ", e.step.unwrap_or(0), what);
        let path = text::fit_left(&e.path, w.saturating_sub(head.chars().count()));
        let style = if doubtful { theme.warning } else { theme.text };
        out.push(Line::from(Span::styled(format!("{head}{path}"), style)));
    }
    if edits.is_empty() {
        out.push(Line::from(Span::styled("  none yet", theme.muted)));
    }

    // Context ledger.
    let so_far: i64 = upto.iter().map(|s| s.obs_chars).sum();
    let this = upto.last().map_or(0, |s| s.obs_chars);
    let largest = upto.iter().max_by_key(|s| s.obs_chars);
    heading(&mut out, "context ledger");
    out.push(Line::from(Span::styled(
        text::fit(&format!("  {} observation chars so far · this step {}", group(so_far), group(this)), w),
        theme.text,
    )));
    if let Some(big) = largest {
        out.push(Line::from(Span::styled(
            text::fit(&format!("  largest: step {} · {} chars", big.index, group(big.obs_chars)), w),
            theme.muted,
        )));
    }
    let values: Vec<i64> = upto.iter().map(|s| s.obs_chars).collect();
    out.push(Line::from(Span::styled(format!("  {}", sparkline(&values, w.saturating_sub(2))), theme.sparkline)));
    (format!("state at step {here}"), Arc::new(out))
}

/// Thousands separated by commas.
fn group(n: i64) -> String {
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// One character per bucket of steps (the maximum of the bucket), scaled to the largest.
pub fn sparkline(values: &[i64], width: usize) -> String {
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let buckets = values.len().min(width);
    let per = values.len().div_ceil(buckets);
    let maxima: Vec<i64> = values.chunks(per).map(|c| c.iter().copied().max().unwrap_or(0)).collect();
    let top = maxima.iter().copied().max().unwrap_or(0).max(1);
    maxima
        .iter()
        .map(|&v| {
            let level = (v.max(0) as f64 / top as f64 * (SPARK.len() - 1) as f64).round() as usize;
            SPARK[level.min(SPARK.len() - 1)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_buckets_and_scales() {
        assert_eq!(sparkline(&[0, 50, 100], 10), "▁▅█");
        assert_eq!(sparkline(&[1, 1, 1, 100], 2), "▁█");
        assert_eq!(sparkline(&[], 10), "");
    }

    /// A reconstructed shell edit that changed nothing edited nothing: the file is not counted,
    /// and the last edits say how sure each reconstructed diff is.
    #[test]
    fn shell_edits_that_changed_nothing_edit_no_file() {
        use crate::model::{Certainty, EditKind};
        let mut data = crate::tui::app::tests::run_data(1, 10);
        for e in &mut data.edits {
            e.kind = EditKind::ShellWrite;
            e.status = crate::model::EditStatus::Applied;
        }
        data.edits[0].certainty = Some(Certainty::Unchanged);
        data.edits[1].certainty = Some(Certainty::Verified);
        data.edits[1].path = "/r/b.py".into();
        let mut run = RunView::new(data);
        run.cursor = 9;
        let (_, lines) = lines(&run, 60, &Theme::default());
        let text: Vec<String> = lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
        assert!(text.iter().any(|l| l == "files edited so far · 1"), "{text:#?}");
        assert!(text.iter().any(|l| l.contains("/r/b.py") && l.contains("1 ok")), "{text:#?}");
        assert!(!text.iter().any(|l| l.contains("/r/a.py") && l.contains("ok")), "{text:#?}");
        assert!(text.iter().any(|l| l.contains("changed nothing") && l.contains("/r/a.py")), "{text:#?}");
        assert!(text.iter().any(|l| l.contains("verified") && l.contains("/r/b.py")), "{text:#?}");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(group(12), "12");
    }
}
