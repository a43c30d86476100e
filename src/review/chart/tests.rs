//! Charts of many groups and modes, and names the bundled font cannot draw (issue 42).

use super::draw::{drawable, layout};
use super::*;
use crate::review::outcomes::OutcomeRow;
use crate::review::stats::{Row, Stats};
use std::collections::BTreeMap;

/// Statistics of `groups` models over `modes` modes: model i has i % 7 + 1 labelled runs, each
/// with mode i % modes.
fn stats(groups: usize, modes: usize) -> (Stats, Vec<String>) {
    let names: Vec<String> = (0..modes).map(|m| format!("mode-{m}")).collect();
    let mut total = Row { group: "total".into(), ..Row::default() };
    let rows: Vec<Row> = (0..groups)
        .map(|i| {
            let n = i % 7 + 1;
            let mode = names[i % modes].clone();
            total.labelled += n;
            total.with_mode += n;
            *total.modes.entry(mode.clone()).or_default() += n;
            let modes = BTreeMap::from([(mode, n)]);
            Row {
                group: format!("model-{i}"),
                runs: n,
                labelled: n,
                with_mode: n,
                coverage: Some(1.0),
                modes,
                ..Row::default()
            }
        })
        .collect();
    let outcomes = (0..groups)
        .map(|i| OutcomeRow {
            group: format!("model-{i}"),
            runs: 2,
            resolved: 1,
            failed: 1,
            resolve_rate: Some(0.5),
            ..OutcomeRow::default()
        })
        .collect();
    let s = Stats {
        taxonomy: "t@1".into(),
        source: "best".into(),
        by: "model".into(),
        llm_models: BTreeMap::new(),
        rows,
        total,
        scope: "failed",
        outcome_unknown_left_out: 0,
        outcomes,
        outcomes_total: OutcomeRow {
            group: "total".into(),
            runs: 2 * groups,
            resolved: groups,
            failed: groups,
            ..OutcomeRow::default()
        },
        blame_note: String::new(),
        without_gold: 0,
    };
    (s, names)
}

fn bars(fig: &Figure) -> &Bars {
    match &fig.body {
        Body::Bars(b) => b,
        other => panic!("{other:?}"),
    }
}

/// Issue 42: a chart of 5,000 models (and one of a 10,000-mode taxonomy) drew every one: an
/// image 4.35 GB large, or an allocation that aborted. At most 8 series, 30 categories and 160
/// bars are drawn; the rest summed as one, which the chart says; every label still counted.
#[test]
fn many_groups_and_modes_are_drawn_within_bounds_the_rest_summed() {
    let (s, modes) = stats(5_000, 40);
    let fig = figure_of(Kind::Modes, &s, None, false, &modes, "2026-12-07");
    let b = bars(&fig);
    assert_eq!(b.series.len(), 8);
    assert_eq!(b.series[7].name, "4993 other models, summed");
    assert!(b.categories.len() * b.series.len() <= 160, "{} categories", b.categories.len());
    assert_eq!(b.categories.last().map(String::as_str), Some("21 other modes, labels summed"));
    let drawn: f64 = b.series.iter().flat_map(|x| &x.bars).filter_map(|bar| bar.value).sum();
    assert_eq!(drawn, s.total.labelled as f64, "every label is in a bar");
    let note = fig.note.as_deref().unwrap_or_default();
    assert!(note.contains("the other 4993 summed as one") && note.contains("the other 21 summed as one row"), "{note}");
    assert!(layout(&fig).height < 4_000, "{}", layout(&fig).height);

    let (s, modes) = stats(3, 10_000);
    let fig = figure_of(Kind::Modes, &s, None, false, &modes, "2026-12-07");
    assert_eq!(bars(&fig).categories.len(), 30);
    assert!(layout(&fig).height < 4_000);

    for kind in [Kind::Coverage, Kind::Resolve, Kind::Steps] {
        let (s, modes) = stats(20_000, 4);
        let fig = figure_of(kind, &s, None, false, &modes, "2026-12-07");
        assert!(layout(&fig).height < 4_000, "{kind:?}: {}", layout(&fig).height);
        assert!(fig.note.is_some(), "{kind:?}");
    }
    let (s, modes) = stats(20_000, 4);
    let fig = figure_of(Kind::Resolve, &s, None, false, &modes, "2026-12-07");
    let summed = &bars(&fig).series[0].bars[28];
    assert_eq!(summed.label, "19972 of 39944 (50.0%)");
    // A chart within the bounds says nothing more.
    let (s, modes) = stats(5, 4);
    assert_eq!(figure_of(Kind::Modes, &s, None, false, &modes, "2026-12-07").note, None);
}

/// Issue 42: an emoji in a model's name was an empty box in a PNG (the bundled font has no
/// glyph for it). It is written as its code points, a sequence as one; what the font draws
/// stays.
#[test]
fn characters_the_font_cannot_draw_are_their_code_points() {
    assert_eq!(drawable("gpt-5 🚀 fast"), "gpt-5 [U+1F680] fast");
    assert_eq!(drawable("team 👩‍💻"), "team [U+1F469 U+200D U+1F4BB]");
    assert_eq!(drawable("modèle α → ok"), "modèle α → ok");
}
