//! Figures from the numbers of a [`StatsReport`]: each bar's and box's label is the number
//! `stats --json` / `agreement --json` prints, formatted.

use super::bound;
use super::{Bar, Bars, Body, BoxRow, Boxes, Figure, Kind, Scale, Series};
use crate::agreement::{AgreementReport, Estimate};
use crate::review::outcomes::{OutcomeRow, Spread};
use crate::review::stats::{By, Row, Stats};
use crate::review::summary::StatsReport;

/// The figure of `kind` over `report`; `modes` are the taxonomy's, in its order; `date` is
/// stamped on it as it is (`YYYY-MM-DD`).
pub fn figure(kind: Kind, report: &StatsReport, modes: &[String], date: &str) -> Figure {
    figure_of(kind, &report.stats, report.agreement.as_ref(), report.blind, modes, date)
}

/// [`figure`] from the report's parts (the TUI keeps them apart).
pub fn figure_of(
    kind: Kind,
    s: &Stats,
    agreement: Option<&AgreementReport>,
    blind: bool,
    modes: &[String],
    date: &str,
) -> Figure {
    let grouped = s.by != By::All.name();
    let by = |what: &str| if grouped { format!("{what} by {}", s.by) } else { what.to_string() };
    let (s, note) = bound::stats(kind, s);
    let s = s.as_ref();
    let mut notes: Vec<String> = note.into_iter().collect();
    let (title, axis, body) = match kind {
        Kind::Modes => (
            by("Failure modes"),
            "labelled failed runs with the mode (share of the group's labelled failed runs)",
            modes_body(s, modes, &mut notes),
        ),
        Kind::Coverage => (
            by("Coverage"),
            "labelled failed runs given at least one mode",
            share_body(
                failed_rows(s, grouped),
                "coverage",
                |r| r.coverage,
                |r| match r.coverage {
                    Some(c) => format!("{} of {} ({})", r.with_mode, r.labelled, pct(c)),
                    None => "no labelled runs".into(),
                },
            ),
        ),
        Kind::Resolve => (
            by("Resolve rate"),
            "resolved among every verdict: runs, and evaluations without a trajectory",
            share_body(outcome_rows(s, grouped), "resolve rate", |o| o.resolve_rate, |o| o.rate_text()),
        ),
        Kind::Steps => (
            by("Steps of failed and resolved runs"),
            "steps per run: quartiles (box), median (line), least and most (whiskers)",
            boxes(s, grouped, |o| [o.steps_failed, o.steps_resolved], |x| format!("{x}")),
        ),
        Kind::Cost => (
            by("Cost of failed and resolved runs"),
            "cost per run, of the runs that record one: quartiles (box), median (line), least and most",
            boxes(s, grouped, |o| [o.cost_failed, o.cost_resolved], |x| format!("{x:.3}")),
        ),
        Kind::Agreement => (
            "Agreement per failure mode".to_string(),
            "Krippendorff's alpha over every rater, Cohen's kappa of each rater against the reference; 95% bootstrap intervals",
            match agreement {
                Some(a) => agreement_body(a, &mut notes),
                None => Body::Empty("no labels yet: trajan classify, trajan label".into()),
            },
        ),
    };
    let axis = match (kind, s.total.blamed_task + s.total.blamed_environment) {
        (Kind::Modes | Kind::Coverage, apart @ 1..) => {
            format!("{axis}; not counting {apart} blamed on the task or the environment")
        }
        _ => axis.to_string(),
    };
    let note = (!notes.is_empty()).then(|| clean(&notes.join("; ")));
    Figure { kind, title, stamp: stamp(kind, s, blind, date), axis, note, body }
}

/// Untrusted text (a model's name) as one safe line.
fn clean(s: &str) -> String {
    crate::sanitize::sanitize(s).replace(['\n', '\t'], " ")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn stamp(kind: Kind, s: &Stats, blind: bool, date: &str) -> String {
    let runs = match (kind, s.scope) {
        (Kind::Resolve | Kind::Steps | Kind::Cost, _) => "every run",
        (_, "failed") => "failed runs",
        _ => "failed and outcome-unknown runs",
    };
    let labels = match kind {
        Kind::Agreement => "every rater's current labels".to_string(),
        _ => format!("labels: {}, current", s.source),
    };
    let blind = if blind { " · blind review: the runs you labelled" } else { "" };
    format!("{} · {labels} · {runs}{blind} · {date}", clean(&s.taxonomy))
}

/// The groups, and the total when there are groups.
fn failed_rows(s: &Stats, grouped: bool) -> Vec<&Row> {
    let mut rows: Vec<&Row> = s.rows.iter().collect();
    if grouped || rows.is_empty() {
        rows.push(&s.total);
    }
    rows
}

fn outcome_rows(s: &Stats, grouped: bool) -> Vec<&OutcomeRow> {
    let mut rows: Vec<&OutcomeRow> = s.outcomes.iter().collect();
    if grouped || rows.is_empty() {
        rows.push(&s.outcomes_total);
    }
    rows
}

/// Per mode one bar per group: the labelled failed runs with the mode. Past the bound, the
/// modes used least are one row: their labels summed (a run may count under several).
fn modes_body(s: &Stats, modes: &[String], notes: &mut Vec<String>) -> Body {
    if s.total.labelled == 0 {
        return Body::Empty("no labelled failed runs yet: trajan classify, trajan label".into());
    }
    let used = |m: &&String| s.total.modes.get(*m).copied().unwrap_or(0);
    let allowed = bound::categories(s.rows.len());
    let (kept, rest) = match modes.len() > allowed {
        true => bound::split(modes.iter().collect(), allowed - 1, used),
        false => (modes.iter().collect(), Vec::new()),
    };
    let mut categories: Vec<String> = kept.iter().map(|m| clean(m)).collect();
    if !rest.is_empty() {
        categories.push(format!("{} other modes, labels summed", rest.len()));
        notes.push(format!(
            "the {} modes used most drawn; the labels of the other {} summed as one row",
            kept.len(),
            rest.len()
        ));
    }
    let series: Vec<Series> = s
        .rows
        .iter()
        .map(|r| {
            let count = |m: &String| r.modes.get(m).copied().unwrap_or(0);
            let mut bars: Vec<Bar> = kept
                .iter()
                .map(|m| {
                    let n = count(m);
                    let label = match r.labelled {
                        0 => format!("{n}"),
                        of => format!("{n} ({})", pct(n as f64 / of as f64)),
                    };
                    Bar { value: Some(n as f64), interval: None, label }
                })
                .collect();
            if !rest.is_empty() {
                let n: usize = rest.iter().map(|m| count(m)).sum();
                bars.push(Bar { value: Some(n as f64), interval: None, label: format!("{n} labels") });
            }
            Series { name: clean(&r.group), bars }
        })
        .collect();
    let most = s.rows.iter().flat_map(|r| r.modes.values()).copied().max().unwrap_or(0) as f64;
    let max = series.iter().flat_map(|x| &x.bars).filter_map(|b| b.value).fold(most, f64::max);
    Body::Bars(Bars { categories, series, scale: Scale::Count(max) })
}

/// One series of shares, a bar per row.
fn share_body<R>(rows: Vec<&R>, name: &str, value: impl Fn(&R) -> Option<f64>, label: impl Fn(&R) -> String) -> Body
where
    R: Grouped,
{
    let bars = rows.iter().map(|r| Bar { value: value(r), interval: None, label: label(r) }).collect();
    Body::Bars(Bars {
        categories: rows.iter().map(|r| clean(r.group())).collect(),
        series: vec![Series { name: name.to_string(), bars }],
        scale: Scale::Share,
    })
}

trait Grouped {
    fn group(&self) -> &str;
}

impl Grouped for Row {
    fn group(&self) -> &str {
        &self.group
    }
}

impl Grouped for OutcomeRow {
    fn group(&self) -> &str {
        &self.group
    }
}

/// Per group, the failed runs' spread then the resolved runs'.
fn boxes(
    s: &Stats,
    grouped: bool,
    pick: impl Fn(&OutcomeRow) -> [Option<Spread>; 2],
    num: impl Fn(f64) -> String,
) -> Body {
    let mut rows = Vec::new();
    for o in outcome_rows(s, grouped) {
        for (side, spread) in pick(o).into_iter().enumerate() {
            let verdict = ["failed", "resolved"][side];
            let name = if grouped { format!("{} · {verdict}", clean(&o.group)) } else { verdict.to_string() };
            let label = match &spread {
                Some(x) => format!(
                    "n {} · median {} · quartiles {}–{} · range {}–{}",
                    x.n,
                    num(x.median),
                    num(x.q1),
                    num(x.q3),
                    num(x.min),
                    num(x.max)
                ),
                None => "no runs".into(),
            };
            rows.push(BoxRow { name, side, spread, label });
        }
    }
    if rows.iter().all(|r| r.spread.is_none()) {
        return Body::Empty("no failed or resolved runs (no verdicts ingested)".into());
    }
    let max = rows.iter().filter_map(|r| r.spread.map(|x| x.max)).fold(0.0, f64::max);
    Body::Boxes(Boxes { rows, max })
}

fn estimate_bar(e: &Estimate, n: impl std::fmt::Display) -> Bar {
    let interval = e.ci.map(|c| (c.low, c.high));
    let label = match (e.value, interval) {
        (None, _) => format!("— n {n}"),
        (Some(v), Some((lo, hi))) => format!("{v:.2} [{lo:.2}, {hi:.2}] n {n}"),
        (Some(v), None) => format!("{v:.2} n {n}"),
    };
    Bar { value: e.value, interval, label }
}

/// Per mode: alpha over every rater, then each scored rater's kappa against the reference. Past
/// the bounds, the first raters and the modes with the most units (coefficients do not add up).
fn agreement_body(a: &AgreementReport, notes: &mut Vec<String>) -> Body {
    let mut raters: Vec<String> =
        a.modes.first().map(|m| m.against_reference.iter().map(|c| c.rater.clone()).collect()).unwrap_or_default();
    if raters.len() > bound::SERIES - 1 {
        notes.push(format!("{} more raters' kappas not drawn", raters.len() - (bound::SERIES - 1)));
        raters.truncate(bound::SERIES - 1);
    }
    let (modes, rest) = bound::split(a.modes.iter().collect(), bound::categories(raters.len() + 1), |m| m.alpha.units);
    if !rest.is_empty() {
        notes.push(format!(
            "the {} modes with the most units drawn; {} more not (coefficients do not add up)",
            modes.len(),
            rest.len()
        ));
    }
    let mut series = vec![Series {
        name: "alpha, every rater".into(),
        bars: modes.iter().map(|m| estimate_bar(&m.alpha.alpha, m.alpha.units)).collect(),
    }];
    for (i, rater) in raters.iter().enumerate() {
        series.push(Series {
            name: format!("kappa, {} against the reference", clean(rater)),
            bars: modes
                .iter()
                .map(|m| match m.against_reference.get(i) {
                    Some(c) => estimate_bar(&c.kappa, c.n),
                    None => Bar { value: None, interval: None, label: "— n 0".into() },
                })
                .collect(),
        });
    }
    Body::Bars(Bars { categories: modes.iter().map(|m| clean(&m.mode)).collect(), series, scale: Scale::Coefficient })
}
