//! What happened to every run of a group, labelled or not: how many were resolved, failed or
//! have no verdict, the resolve rate, and the spread of steps and cost of the failed and the
//! resolved runs (what `stats --json` prints under `outcomes`, and the charts draw).

use crate::store::read::RunSummary;
use serde::Serialize;

/// Five numbers of a sample: least, quartiles (linear interpolation between the order
/// statistics, numpy's default) and greatest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for an empty sample; NaN values are left out.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        v.sort_by(f64::total_cmp);
        let (first, last) = (*v.first()?, *v.last()?);
        let at = |q: f64| {
            let pos = q * (v.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        Some(Spread { n: v.len(), min: first, q1: at(0.25), median: at(0.5), q3: at(0.75), max: last })
    }
}

/// One group's runs by verdict. Column names are stable (docs/LABELLING.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OutcomeRow {
    pub group: String,
    /// Every run of the group, whatever its verdict.
    pub runs: usize,
    pub resolved: usize,
    pub failed: usize,
    /// Runs without a verdict (no evaluation ingested).
    pub unknown: usize,
    /// Evaluations of the group's instances that matched no run because no trajectory of
    /// theirs is stored (`runs --evaluations`), with a verdict or not, and how many of them are
    /// resolved and failed: they count in the resolve rate.
    pub no_trajectory: usize,
    pub no_trajectory_resolved: usize,
    pub no_trajectory_failed: usize,
    /// (resolved + failed evaluations without a trajectory that are resolved) / every verdict
    /// (runs and evaluations without a trajectory); runs without a verdict are not counted.
    pub resolve_rate: Option<f64>,
    /// Steps of the failed runs, of the resolved runs.
    pub steps_failed: Option<Spread>,
    pub steps_resolved: Option<Spread>,
    /// Cost of the failed and resolved runs that record one.
    pub cost_failed: Option<Spread>,
    pub cost_resolved: Option<Spread>,
}

/// The row of `group` over `runs`.
pub fn outcome_row(group: String, runs: &[&RunSummary]) -> OutcomeRow {
    let with = |verdict: bool| runs.iter().filter(move |r| r.resolved == Some(verdict));
    let steps = |verdict| Spread::of(&with(verdict).map(|r| r.steps as f64).collect::<Vec<_>>());
    let cost = |verdict| Spread::of(&with(verdict).filter_map(|r| r.cost).collect::<Vec<_>>());
    let (resolved, failed) = (with(true).count(), with(false).count());
    OutcomeRow {
        group,
        runs: runs.len(),
        resolved,
        failed,
        unknown: runs.len() - resolved - failed,
        no_trajectory: 0,
        no_trajectory_resolved: 0,
        no_trajectory_failed: 0,
        resolve_rate: rate(resolved, failed),
        steps_failed: steps(false),
        steps_resolved: steps(true),
        cost_failed: cost(false),
        cost_resolved: cost(true),
    }
}

fn rate(resolved: usize, failed: usize) -> Option<f64> {
    (resolved + failed > 0).then(|| resolved as f64 / (resolved + failed) as f64)
}

impl OutcomeRow {
    /// The resolve rate's figures: the resolved verdicts (runs, and evaluations without a
    /// trajectory) and every verdict; the rate is the first over the second.
    pub fn verdicts(&self) -> (usize, usize) {
        let resolved = self.resolved + self.no_trajectory_resolved;
        (resolved, resolved + self.failed + self.no_trajectory_failed)
    }

    /// `X of Y (P%)` with P = X/Y, then what the figures leave out or take in: runs without a
    /// verdict, evaluations without a trajectory.
    pub fn rate_text(&self) -> String {
        let (resolved, verdicts) = self.verdicts();
        let mut out = match verdicts {
            0 => "no verdict".to_string(),
            n => format!("{resolved} of {n} ({:.1}%)", resolved as f64 * 100.0 / n as f64),
        };
        if self.no_trajectory > 0 {
            out.push_str(&format!(", {} without a trajectory", self.no_trajectory));
        }
        if self.unknown > 0 {
            out.push_str(&format!(", {} runs without a verdict", self.unknown));
        }
        out
    }

    /// Count an evaluation without a trajectory (its verdict, if any) in the row.
    pub fn add_without_trajectory(&mut self, resolved: Option<bool>) {
        self.no_trajectory += 1;
        match resolved {
            Some(true) => self.no_trajectory_resolved += 1,
            Some(false) => self.no_trajectory_failed += 1,
            None => {}
        }
        self.resolve_rate = rate(self.resolved + self.no_trajectory_resolved, self.failed + self.no_trajectory_failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_as_numpy_does() {
        // numpy.percentile([1, 2, 3, 4, 10], [0, 25, 50, 75, 100]) = [1, 2, 3, 4, 10]
        let s = Spread::of(&[10.0, 1.0, 3.0, 2.0, 4.0]).unwrap_or_else(|| panic!("a sample"));
        assert_eq!((s.n, s.min, s.q1, s.median, s.q3, s.max), (5, 1.0, 2.0, 3.0, 4.0, 10.0));
        // numpy.percentile([1, 2, 4, 8], [25, 50, 75]) = [1.75, 3.0, 5.0]
        let s = Spread::of(&[8.0, 4.0, 2.0, 1.0]).unwrap_or_else(|| panic!("a sample"));
        assert_eq!((s.q1, s.median, s.q3), (1.75, 3.0, 5.0));
        assert_eq!(Spread::of(&[f64::NAN]), None);
    }

    #[test]
    fn the_resolve_rate_leaves_out_runs_without_a_verdict() {
        let run = |resolved, steps, cost| RunSummary {
            id: 1,
            instance_id: "a__b-1".into(),
            format: crate::model::Format::SweAgent,
            format_version: None,
            agent: None,
            model: None,
            exit_status: None,
            resolved,
            steps,
            edits: 0,
            rejected_edits: 0,
            cost,
            attempt: None,
            source: "f".into(),
            has_patch: false,
            dataset: None,
        };
        let runs = [run(Some(true), 10, Some(1.0)), run(Some(false), 30, None), run(None, 5, Some(2.0))];
        let row = outcome_row("g".into(), &runs.iter().collect::<Vec<_>>());
        assert_eq!((row.runs, row.resolved, row.failed, row.unknown), (3, 1, 1, 1));
        assert_eq!(row.resolve_rate, Some(0.5));
        assert_eq!(row.steps_failed.map(|s| s.median), Some(30.0));
        assert_eq!(row.cost_failed, None, "the failed run records no cost");
        assert_eq!(row.cost_resolved.map(|s| s.n), Some(1));
    }
}
