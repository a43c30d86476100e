//! Writing what the reviewer is looking at for others: the statistics screen's chart (SVG) and
//! the marked runs, or the run at hand, as an HTML report, into the folder the TUI was started
//! in. The files are written by the worker (`Effect::ExportChart`, `Effect::ExportReport`); the
//! status line names them.

use super::{Effect, Screen};
use crate::review::stats::Pick;
use crate::review::summary::Ask;

impl super::App {
    /// What the statistics screen shows: its grouping, the best labels, the review's scope
    /// and blindness.
    pub(super) fn stats_ask(&self, by: crate::review::stats::By) -> Ask {
        Ask {
            by,
            pick: Pick::Best,
            scope: self.review.scope,
            blind_rater: self.review.blind.then(|| self.review.rater.clone()),
            only: None,
        }
    }

    /// The chart on the statistics screen, to be written.
    pub(super) fn export_chart(&mut self) -> Vec<Effect> {
        let Some((by, kind)) = self.stats.as_ref().map(|v| (v.by, v.chart)) else { return Vec::new() };
        self.set_info(format!("writing the {} chart...", kind.name()));
        vec![Effect::ExportChart {
            taxonomy: Box::new(self.review.taxonomy.clone()),
            ask: self.stats_ask(by),
            kind,
            dir: self.export_dir.clone(),
        }]
    }

    /// The marked runs (in list order), else the open run (in the run view) or the run under
    /// the cursor, to be written as a report.
    pub(super) fn export_report(&mut self) -> Vec<Effect> {
        let marked = self.marked_in_list_order();
        let here = match self.screen {
            Screen::Run => self.run.as_ref().map(|r| r.run_id()),
            _ => self.list.selected().map(|r| r.id),
        };
        let runs = if marked.is_empty() { here.into_iter().collect() } else { marked };
        if runs.is_empty() {
            self.set_error("no run to write: open one, or mark runs (m)".into());
            return Vec::new();
        }
        // A report shows every label: under blind review, only runs this reviewer has labelled.
        if let Some(run) = runs.iter().find(|&&r| self.review.blinded(r)) {
            self.set_error(format!(
                "blind review: run {run} is not labelled by you yet, and a report shows its classifiers' labels"
            ));
            return Vec::new();
        }
        self.set_info(format!("writing a report of {} run{}...", runs.len(), if runs.len() == 1 { "" } else { "s" }));
        let ask = self.stats_ask(crate::review::stats::By::All);
        vec![Effect::ExportReport {
            taxonomy: Box::new(self.review.taxonomy.clone()),
            ask,
            runs,
            dir: self.export_dir.clone(),
        }]
    }
}
