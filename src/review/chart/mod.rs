//! Charts of the statistics: what `stats --json` and `agreement --json` print, drawn. A
//! [`Figure`] is built from a [`StatsReport`] (`figure`), with every number already written as
//! its label, then drawn to SVG or PNG (`draw`, plotters) or on the TUI's statistics screen
//! (ratatui): both read the same figure, so a picture never shows a number the text does not.
//!
//! Text from trajectories (model and agent names) is sanitized and kept on one line here, once.

mod bound;
mod build;
mod draw;

pub use build::{figure, figure_of};
pub use draw::{DrawError, png, svg};

/// Which chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Kind {
    /// Labelled failed runs per failure mode, one bar per group.
    Modes,
    /// Per mode, Krippendorff's alpha over every rater and each rater's kappa against the
    /// reference, with the bootstrap 95% intervals and n.
    Agreement,
    /// Per group, the share of labelled failed runs given at least one mode.
    Coverage,
    /// Per group, resolved runs among those with a verdict.
    Resolve,
    /// Steps of the failed and the resolved runs, per group.
    Steps,
    /// Cost of the failed and the resolved runs, per group.
    Cost,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        s.parse().ok()
    }
    pub fn name(self) -> &'static str {
        self.into()
    }
    /// The kind after this one (the TUI's key cycles through them).
    pub fn next(self) -> Kind {
        use strum::IntoEnumIterator;
        let all: Vec<Kind> = Kind::iter().collect();
        let at = all.iter().position(|k| *k == self).unwrap_or(0);
        all[(at + 1) % all.len()]
    }
}

/// A chart, every number in it written out.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub kind: Kind,
    /// "Failure modes by model".
    pub title: String,
    /// Taxonomy and version, whose labels, the runs counted, the date.
    pub stamp: String,
    /// What the values are ("labelled failed runs with the mode").
    pub axis: String,
    /// What the chart summed or left out to stay within its bounds (`bound`), said on it.
    pub note: Option<String>,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Bars(Bars),
    Boxes(Boxes),
    /// Nothing to draw, and why.
    Empty(String),
}

/// Horizontal bars: per category one bar of each series.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    pub scale: Scale,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Counts, from 0 to the largest.
    Count(f64),
    /// Shares, 0 to 1 (drawn as percentages).
    Share,
    /// Agreement coefficients, -1 to 1.
    Coefficient,
}

impl Scale {
    /// The range the axis spans.
    pub fn range(self) -> (f64, f64) {
        match self {
            Scale::Count(max) => (0.0, max.max(1.0)),
            Scale::Share => (0.0, 1.0),
            Scale::Coefficient => (-1.0, 1.0),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// One per category; `None` where the series has nothing there (a label still says so).
    pub bars: Vec<Bar>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub value: Option<f64>,
    /// The bootstrap 95% interval.
    pub interval: Option<(f64, f64)>,
    /// The numbers, as drawn beside the bar.
    pub label: String,
}

/// Box plots: per row the five numbers of a sample on one scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Boxes {
    pub rows: Vec<BoxRow>,
    /// The largest value of any row (the axis ends there).
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BoxRow {
    /// "model-a · failed (n 12)".
    pub name: String,
    /// Which side of the verdict: the colour (0 failed, 1 resolved).
    pub side: usize,
    pub spread: Option<crate::review::outcomes::Spread>,
    /// The numbers, as drawn beside the box.
    pub label: String,
}

/// The Okabe–Ito palette (colour-blind safe), in the order series take it; a ninth series
/// starts again (and its bars' labels name it).
pub const PALETTE: [(u8, u8, u8); 8] = [
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (213, 94, 0),
    (204, 121, 167),
    (86, 180, 233),
    (240, 228, 66),
    (0, 0, 0),
];

#[cfg(test)]
mod tests;
