//! The statistics screen's state: the numbers (loaded by the driver) and what is selected.

use super::{Effect, Screen};
use crate::agreement::AgreementReport;
use crate::review::chart::Kind;
use crate::review::stats::{By, Stats};
use crate::review::summary::StatsReport;
use crate::tui::action::Command;

#[derive(Debug, Clone)]
pub struct StatsView {
    pub stats: Stats,
    /// Agreement of every rater with the reference, per mode; `None` before any label.
    pub report: Option<AgreementReport>,
    pub by: By,
    /// The mode whose confusion matrix is shown.
    pub mode: usize,
    /// The rater scored against the reference in the confusion matrix.
    pub rater: usize,
    /// Blind review: the numbers cover only the runs this reviewer labelled.
    pub blind: bool,
    /// Lines scrolled (a narrow screen shows every section in one column).
    pub scroll: usize,
    /// The chart drawn (where the terminal is large enough) and written by `e`.
    pub chart: Kind,
}

impl StatsView {
    /// The screen for freshly loaded numbers, at the top, on the first mode and rater.
    pub fn new(r: StatsReport) -> StatsView {
        StatsView {
            stats: r.stats,
            report: r.agreement,
            by: r.by,
            mode: 0,
            rater: 0,
            blind: r.blind,
            scroll: 0,
            chart: Kind::Modes,
        }
    }
}

/// The grouping after `by`.
pub fn next_by(by: By) -> By {
    match by {
        By::All => By::Model,
        By::Model => By::Agent,
        By::Agent => By::Benchmark,
        By::Benchmark => By::Exit,
        By::Exit => By::All,
    }
}

impl super::App {
    pub(super) fn load_stats(&self, by: By) -> Effect {
        Effect::LoadStats { taxonomy: Box::new(self.review.taxonomy.clone()), ask: self.stats_ask(by) }
    }

    pub(super) fn stats_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(view) = self.stats.as_mut() else {
            self.screen = Screen::List;
            return Vec::new();
        };
        let modes = view.stats.total.modes.len().max(self.review.taxonomy.modes.len());
        let raters = view.report.as_ref().and_then(|r| r.modes.first()).map_or(0, |m| m.against_reference.len());
        match cmd {
            Command::Back | Command::Stats => self.screen = self.stats_from,
            Command::Down => view.mode = (view.mode + 1).min(modes.saturating_sub(1)),
            Command::Up => view.mode = view.mode.saturating_sub(1),
            Command::ScrollDown => view.scroll += 3,
            Command::ScrollUp => view.scroll = view.scroll.saturating_sub(3),
            Command::PageDown => view.scroll += self.rows,
            Command::PageUp => view.scroll = view.scroll.saturating_sub(self.rows),
            Command::NextPanel if raters > 0 => view.rater = (view.rater + 1) % raters,
            Command::SortNext => {
                let by = next_by(view.by);
                return vec![self.load_stats(by)];
            }
            Command::NextChart => view.chart = view.chart.next(),
            Command::ExportChart => return self.export_chart(),
            _ => {}
        }
        Vec::new()
    }
}
