//! Hand-checkable cases, degenerate cases, and properties (bootstrap determinism and coverage of
//! the point estimate, symmetry, bounds) on seeded random tables.

mod reference;

use super::bootstrap::SplitMix64;
use super::*;

fn close(a: Option<f64>, b: f64) {
    match a {
        Some(a) => assert!((a - b).abs() < 1e-12, "{a} != {b}"),
        None => panic!("None != {b}"),
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn rating(modes: &[&str]) -> Rating {
    modes.iter().map(|m| m.to_string()).collect()
}

fn repeat(pair: (bool, bool), n: usize) -> impl Iterator<Item = (bool, bool)> {
    std::iter::repeat_n(pair, n)
}

#[test]
fn kappa_of_the_textbook_two_by_two() {
    // 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15.
    // p_o = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; kappa = (0.7 − 0.5) / (1 − 0.5) = 0.4.
    let pairs: Vec<(bool, bool)> = repeat((true, true), 20)
        .chain(repeat((true, false), 5))
        .chain(repeat((false, true), 10))
        .chain(repeat((false, false), 15))
        .collect();
    close(cohen_kappa(&pairs), 0.4);
    close(raw_agreement(&pairs), 0.7);
    let c = Confusion::from_pairs(&pairs);
    assert_eq!((c.tp, c.fp, c.fn_, c.tn, c.n()), (20, 5, 10, 15, 50));
    close(c.kappa(), 0.4);
    close(c.precision(), 20.0 / 25.0);
    close(c.recall(), 20.0 / 30.0);
    close(c.f1(), 40.0 / 55.0);
}

#[test]
fn kappa_of_three_categories() {
    // Rows a, columns b: [[2,1,0],[0,3,1],[1,0,2]]; n = 10, p_o = 0.7,
    // marginals a = (3,4,3), b = (3,4,3): p_e = (9+16+9)/100 = 0.34; kappa = 0.36/0.66.
    close(cohen_kappa_from_matrix(&[2, 1, 0, 0, 3, 1, 1, 0, 2], 3), 0.36 / 0.66);
    let pairs = [("x", "x"), ("x", "x"), ("x", "y"), ("y", "y"), ("y", "y"), ("y", "y"), ("y", "z")]
        .into_iter()
        .chain([("z", "x"), ("z", "z"), ("z", "z")])
        .collect::<Vec<_>>();
    close(cohen_kappa(&pairs), 0.36 / 0.66);
}

#[test]
fn kappa_degenerate_cases() {
    let none: [(bool, bool); 0] = [];
    assert_eq!(cohen_kappa(&none), None, "no item");
    assert_eq!(raw_agreement(&none), None);
    assert_eq!(cohen_kappa(&[(true, true), (true, true)]), None, "both constant and equal (sklearn: nan)");
    close(raw_agreement(&[(true, true), (true, true)]), 1.0);
    close(cohen_kappa(&[(true, false), (true, false)]), 0.0); // constant and different (sklearn: 0)
    close(cohen_kappa(&[(true, true), (false, false)]), 1.0);
    close(cohen_kappa(&[(true, false), (false, true)]), -1.0);
    assert_eq!(cohen_kappa_from_matrix(&[1, 2, 3], 2), None, "not k × k");
    assert_eq!(cohen_kappa_from_matrix(&[], 0), None);
}

#[test]
fn alpha_of_krippendorffs_example() {
    // Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal data with
    // missing values: 3 observers, 15 units (one with no value, two with a single one); alpha = 56/81 ≈ 0.691.
    let rows: [[Option<u8>; 3]; 15] = [
        [None, Some(1), None],
        [None, None, None],
        [None, Some(2), Some(2)],
        [None, Some(1), Some(1)],
        [None, Some(3), Some(3)],
        [Some(3), Some(3), Some(4)],
        [Some(4), Some(4), Some(4)],
        [Some(1), Some(3), None],
        [Some(2), None, Some(2)],
        [Some(1), None, Some(1)],
        [Some(1), None, Some(1)],
        [Some(3), None, Some(3)],
        [Some(3), None, Some(3)],
        [None, None, None],
        [Some(3), None, Some(4)],
    ];
    let units: Vec<Vec<Option<u8>>> = rows.iter().map(|r| r.to_vec()).collect();
    close(krippendorff_alpha(&units), 56.0 / 81.0);
    let counts = AlphaCounts::from_units(&units);
    assert_eq!((counts.categories, counts.units.len(), counts.pairable_values()), (4, 12, 26));
}

#[test]
fn alpha_degenerate_cases() {
    let empty: Vec<Vec<Option<bool>>> = Vec::new();
    assert_eq!(krippendorff_alpha(&empty), None, "no unit");
    assert_eq!(krippendorff_alpha(&[vec![Some(true), None], vec![None, Some(false)]]), None, "nothing pairable");
    assert_eq!(
        krippendorff_alpha(&[vec![Some(false), Some(false)], vec![Some(false), Some(false)]]),
        None,
        "one value"
    );
    // A second value only in a unit with one rating: still one pairable value (package: nan).
    assert_eq!(krippendorff_alpha(&[vec![Some(false), Some(false)], vec![Some(true), None]]), None);
    close(krippendorff_alpha(&[vec![Some(false), Some(false)], vec![Some(true), Some(true)]]), 1.0);
    // Total disagreement with two values: n = 4, D_o = 4, D_e = 8/3: alpha = 1 − 1.5.
    close(krippendorff_alpha(&[vec![Some(false), Some(true)], vec![Some(true), Some(false)]]), -0.5);
    assert_eq!(krippendorff_alpha_counts(&[vec![1, 1]], 3), None, "row of the wrong length is ignored");
}

#[test]
fn classification_degenerate_cases() {
    let c = Confusion::default();
    assert_eq!((c.precision(), c.recall(), c.f1(), c.kappa(), c.raw_agreement()), (None, None, None, None, None));
    // The rater never names the mode, the reference does: precision undefined, recall and F1 0.
    let c = Confusion::from_pairs(&[(false, true), (false, false)]);
    assert_eq!((c.precision(), c.recall(), c.f1()), (None, Some(0.0), Some(0.0)));
    // Nobody names it: all three undefined (sklearn zero_division=nan).
    let c = Confusion::from_pairs(&[(false, false), (false, false)]);
    assert_eq!((c.precision(), c.recall(), c.f1()), (None, None, None));
    let sum = Confusion { tp: 1, fp: 2, fn_: 3, tn: 4 } + Confusion { tp: 10, fp: 20, fn_: 30, tn: 40 };
    assert_eq!(sum, Confusion { tp: 11, fp: 22, fn_: 33, tn: 44 });
    let json = serde_json::to_value(sum).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json, serde_json::json!({"tp": 11, "fp": 22, "fn": 33, "tn": 44}));
}

#[test]
fn table_construction_and_projection() {
    let records = vec![
        ("r1".to_string(), "h".to_string(), rating(&["a", "b"])),
        ("r1".to_string(), "x".to_string(), rating(&[])),
        ("r2".to_string(), "x".to_string(), rating(&["b"])),
    ];
    let t = Table::from_records(records.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.items(), ["r1", "r2"]);
    assert_eq!(t.raters(), ["h", "x"]);
    assert_eq!(t.get(1, 0), None);
    let b = t.one_vs_rest("b");
    assert_eq!(b.rows(), &[vec![Some(true), Some(false)], vec![None, Some(true)]]);
    assert_eq!(t.one_vs_rest("zzz").rows(), &[vec![Some(false), Some(false)], vec![None, Some(false)]]);
    assert_eq!(b.pairs(0, 1), vec![(true, false)]);
    assert_eq!(b.column(1), vec![Some(&false), Some(&true)]);
    assert_eq!(b.column(7), vec![None, None]);

    let mut dup = records;
    dup.push(("r2".to_string(), "x".to_string(), rating(&[])));
    assert_eq!(Table::from_records(dup), Err(AgreementError::DuplicateCell { item: "r2".into(), rater: "x".into() }));
    assert!(matches!(
        Table::<bool>::new(vec!["a".into(), "a".into()], vec![]),
        Err(AgreementError::Duplicate { kind: "item", .. })
    ));
    assert!(matches!(
        Table::<bool>::from_rows(vec!["a".into()], vec!["r".into()], vec![vec![None, None]]),
        Err(AgreementError::Shape(_))
    ));
    assert!(matches!(Table::<bool>::from_rows(vec!["a".into()], vec![], vec![]), Err(AgreementError::Shape(_))));
    let mut t = Table::<bool>::new(names("i", 2), names("r", 2)).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.set(1, 1, Some(true)).is_ok());
    assert!(t.set(2, 0, Some(true)).is_err());
    assert_eq!(t.get(1, 1), Some(&true));
    assert!(t.select_raters(&[0, 0]).is_err());
    assert_eq!(t.select_raters(&[1]).map(|s| s.rows().to_vec()), Ok(vec![vec![None], vec![Some(true)]]));
}

#[test]
fn coverage_counts_rated_items_only() {
    let t = Table::from_rows(
        names("i", 4),
        names("r", 2),
        vec![
            vec![Some(rating(&["a"])), None],
            vec![Some(rating(&[])), None],
            vec![None, None],
            vec![Some(rating(&["a", "b"])), None],
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let c = coverage(&t, 0);
    assert_eq!((c.rater.as_str(), c.rated, c.classified), ("r0", 3, 2));
    close(c.share, 2.0 / 3.0);
    assert_eq!(coverage(&t, 1).share, None, "rated nothing");
}

#[test]
fn consensus_is_a_strict_majority() {
    assert_eq!(majority([true, true, false]), Some(true));
    assert_eq!(majority([false]), Some(false));
    assert_eq!(majority([true, false]), None, "tie");
    assert_eq!(majority([]), None, "no rating");
    let t = Table::from_rows(
        names("i", 4),
        vec!["h".into(), "alice".into(), "bob".into(), "carol".into()],
        vec![
            vec![Some(rating(&["m"])), Some(rating(&["m"])), Some(rating(&["m"])), Some(rating(&[]))],
            vec![Some(rating(&["m"])), Some(rating(&["m"])), Some(rating(&[])), None],
            vec![Some(rating(&["m"])), None, None, None],
            vec![None, Some(rating(&[])), None, None],
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let humans: Vec<String> = vec!["alice".into(), "bob".into(), "carol".into()];
    let c = human_consensus(&t, &humans, &["m".to_string()]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.get("m"), Some(&vec![Some(true), None, None, Some(false)]));
    assert_eq!(human_consensus(&t, &["dave".to_string()], &[]), Err(AgreementError::UnknownRater("dave".into())));
}

/// A random binary table: `n` items, `raters` columns that copy a hidden truth with probability
/// `1 − noise`, each cell missing with probability `missing`.
fn random_binary(rng: &mut SplitMix64, n: usize, raters: usize, noise: f64, missing: f64) -> Vec<Vec<Option<bool>>> {
    let unit = |rng: &mut SplitMix64| rng.next_u64() as f64 / u64::MAX as f64;
    (0..n)
        .map(|_| {
            let truth = unit(rng) < 0.3;
            (0..raters)
                .map(|_| {
                    let flip = unit(rng) < noise;
                    (unit(rng) >= missing).then_some(truth ^ flip)
                })
                .collect()
        })
        .collect()
}

#[test]
fn bootstrap_is_deterministic_for_a_seed() {
    let mut rng = SplitMix64::new(7);
    let rows = random_binary(&mut rng, 80, 2, 0.2, 0.0);
    let pairs: Vec<(bool, bool)> = rows.iter().filter_map(|r| Some((r[0]?, r[1]?))).collect();
    let stat = |ix: &[usize]| {
        let c = Confusion::from_pairs(ix.iter().filter_map(|&i| pairs.get(i)));
        [c.kappa(), c.f1()]
    };
    let options = BootstrapOptions { resamples: 300, ..BootstrapOptions::default() };
    let a = bootstrap_intervals(pairs.len(), &options, stat);
    let b = bootstrap_intervals(pairs.len(), &options, stat);
    assert_eq!(a, b);
    let other = bootstrap_intervals(pairs.len(), &BootstrapOptions { seed: 8, ..options }, stat);
    assert_ne!(a, other, "another seed, other resamples");
    for ci in a.unwrap_or_else(|e| panic!("{e}")) {
        let ci = ci.unwrap_or_else(|| panic!("undefined interval"));
        assert_eq!(ci.defined, 300);
        assert!(ci.low <= ci.high);
    }
}

#[test]
fn bootstrap_interval_contains_the_estimate_on_reasonable_data() {
    let options = BootstrapOptions::default();
    for seed in 0..20 {
        let mut rng = SplitMix64::new(seed);
        let rows = random_binary(&mut rng, 120, 3, 0.15, 0.1);
        let pairs: Vec<(bool, bool)> = rows.iter().filter_map(|r| Some((r[0]?, r[1]?))).collect();
        let all = Confusion::from_pairs(&pairs);
        let estimates = [all.kappa(), all.precision(), all.recall(), all.f1()];
        let cis = bootstrap_intervals(pairs.len(), &options, |ix| {
            let c = Confusion::from_pairs(ix.iter().filter_map(|&i| pairs.get(i)));
            [c.kappa(), c.precision(), c.recall(), c.f1()]
        })
        .unwrap_or_else(|e| panic!("{e}"));
        for (e, ci) in estimates.iter().zip(cis) {
            let (e, ci) = (e.unwrap_or_else(|| panic!("seed {seed}")), ci.unwrap_or_else(|| panic!("seed {seed}")));
            assert!(ci.low <= e && e <= ci.high, "seed {seed}: {e} not in {ci:?}");
            assert!(ci.high - ci.low < 0.6, "seed {seed}: {ci:?} too wide for 100 items");
        }
        let counts = AlphaCounts::from_units(&rows);
        let alpha = krippendorff_alpha(&rows).unwrap_or_else(|| panic!("seed {seed}"));
        let [ci] = bootstrap_intervals(counts.units.len(), &options, |ix| {
            let units: Vec<Vec<u64>> = ix.iter().filter_map(|&i| counts.units.get(i).cloned()).collect();
            [krippendorff_alpha_counts(&units, counts.categories)]
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let ci = ci.unwrap_or_else(|| panic!("seed {seed}"));
        assert!(ci.low <= alpha && alpha <= ci.high, "seed {seed}: alpha {alpha} not in {ci:?}");
    }
}

#[test]
fn bootstrap_edge_cases() {
    let options = BootstrapOptions::default();
    assert_eq!(bootstrap_intervals(0, &options, |_| [Some(1.0)]), Ok([None]), "no item");
    let off = BootstrapOptions { resamples: 0, ..options };
    assert_eq!(bootstrap_intervals(5, &off, |_| [Some(1.0)]), Ok([None]), "bootstrap off");
    // A constant statistic: a degenerate interval.
    let [ci] = bootstrap_intervals(5, &options, |_| [Some(0.25)]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ci, Some(Interval { low: 0.25, high: 0.25, defined: 1000 }));
    // Undefined unless item 0 is drawn: (4/5)^5 ≈ 33% of resamples undefined, enough remain...
    let [ci] =
        bootstrap_intervals(5, &options, |ix| [ix.contains(&0).then_some(1.0)]).unwrap_or_else(|e| panic!("{e}"));
    let ci = ci.unwrap_or_else(|| panic!("two thirds of the resamples are defined"));
    assert!(ci.defined > 550 && ci.defined < 800, "{ci:?}");
    // ...but not when a statistic is defined in a tenth of them, nor NaN ever.
    let [rare, nan] =
        bootstrap_intervals(5, &options, |ix| [(ix.iter().sum::<usize>() == 0).then_some(1.0), Some(f64::NAN)])
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rare, nan), (None, None));
    for bad in [BootstrapOptions { level: 1.0, ..options }, BootstrapOptions { min_defined: 2.0, ..options }] {
        assert!(matches!(bootstrap_intervals(5, &bad, |_| [Some(1.0)]), Err(AgreementError::InvalidOption(_))));
    }
    // The percentiles of 0..=999 drawn exactly once each would be 24.975 and 974.025: check the
    // interpolation on a statistic that is the resample's first index (uniform over 0..n).
    let [ci] = bootstrap_intervals(1000, &BootstrapOptions { resamples: 4000, ..options }, |ix| {
        [ix.first().map(|&i| i as f64)]
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let ci = ci.unwrap_or_else(|| panic!("defined"));
    assert!((ci.low - 25.0).abs() < 15.0 && (ci.high - 975.0).abs() < 15.0, "{ci:?}");
}

#[test]
fn random_tables_keep_the_invariants() {
    let mut rng = SplitMix64::new(42);
    for _ in 0..200 {
        let rows = random_binary(&mut rng, 25, 3, 0.3, 0.3);
        let table = Table::from_rows(names("i", 25), names("r", 3), rows.clone()).unwrap_or_else(|e| panic!("{e}"));
        for a in 0..3 {
            for b in 0..3 {
                let ab = table.pairs(a, b);
                let ba: Vec<(bool, bool)> = table.pairs(b, a).into_iter().map(|(x, y)| (y, x)).collect();
                assert_eq!(ab, ba);
                let k = cohen_kappa(&ab);
                assert_eq!(k, cohen_kappa(&table.pairs(b, a)), "symmetric");
                assert_eq!(k, Confusion::from_pairs(&ab).kappa(), "generic = binary");
                if let Some(k) = k {
                    assert!((-1.0..=1.0 + 1e-12).contains(&k), "{k}");
                }
                if a == b {
                    assert!(k.is_none() || k == Some(1.0));
                }
            }
        }
        if let Some(alpha) = krippendorff_alpha(&rows) {
            assert!(alpha <= 1.0 + 1e-12, "{alpha}");
        }
        // The raters' order does not matter to alpha.
        let reversed: Vec<Vec<Option<bool>>> = rows.iter().map(|r| r.iter().rev().copied().collect()).collect();
        assert_eq!(krippendorff_alpha(&rows), krippendorff_alpha(&reversed));
    }
}

#[test]
fn report_with_a_consensus_reference() {
    let mut rng = SplitMix64::new(3);
    let modes = ["m1".to_string(), "m2".to_string(), "never".to_string()];
    let raters: Vec<String> = ["heuristic", "llm", "alice", "bob", "carol"].map(String::from).to_vec();
    let rows: Vec<Vec<Option<Rating>>> = random_binary(&mut rng, 60, 5, 0.2, 0.1)
        .into_iter()
        .zip(random_binary(&mut rng, 60, 5, 0.2, 0.1))
        .map(|(m1, m2)| {
            m1.iter()
                .zip(&m2)
                .map(|(a, b)| {
                    let (a, b) = ((*a)?, b.unwrap_or(false));
                    Some(modes[..2].iter().zip([a, b]).filter(|(_, on)| *on).map(|(m, _)| m.clone()).collect())
                })
                .collect()
        })
        .collect();
    let table = Table::from_rows(names("run", 60), raters.clone(), rows).unwrap_or_else(|e| panic!("{e}"));
    let humans = raters[2..].to_vec();
    let options = BootstrapOptions { resamples: 200, ..BootstrapOptions::default() };
    let report = agreement_report(&table, &modes, &raters, &Reference::Consensus(humans.clone()), &options)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.items, 60);
    assert_eq!(report.coverage.len(), 5);
    assert_eq!(report.modes.len(), 3);
    let consensus = human_consensus(&table, &humans, &modes).unwrap_or_else(|e| panic!("{e}"));
    for m in &report.modes {
        assert_eq!(m.pairs.len(), 10);
        let scored: Vec<&str> = m.against_reference.iter().map(|s| s.rater.as_str()).collect();
        assert_eq!(scored, ["heuristic", "llm"], "humans are not scored against their own consensus");
        let reference = consensus.get(&m.mode).unwrap_or_else(|| panic!("{}", m.mode));
        let binary = table.one_vs_rest(&m.mode);
        for s in &m.against_reference {
            let r = table.rater_index(&s.rater).unwrap_or_else(|| panic!("{}", s.rater));
            let pairs: Vec<(bool, bool)> =
                binary.rows().iter().zip(reference).filter_map(|(row, c)| Some((row[r]?, (*c)?))).collect();
            assert_eq!(s.confusion, Confusion::from_pairs(&pairs));
            assert_eq!(s.f1.value, s.confusion.f1());
        }
        if m.mode == "never" {
            assert!(m.pairs.iter().all(|p| p.kappa.value.is_none() && p.kappa.ci.is_none()));
            assert_eq!(m.alpha.alpha.value, None);
            assert!(m.against_reference.iter().all(|s| s.precision.value.is_none() && s.f1.value.is_none()));
        } else {
            let alpha = m.alpha.alpha;
            let (value, ci) =
                (alpha.value.unwrap_or_else(|| panic!("alpha")), alpha.ci.unwrap_or_else(|| panic!("ci")));
            assert!(ci.low <= value && value <= ci.high, "{value} {ci:?}");
        }
    }
    let micro = &report.micro;
    assert_eq!(micro.len(), 2);
    let summed = report.modes.iter().map(|m| m.against_reference[0].confusion).fold(Confusion::default(), |a, b| a + b);
    assert_eq!(micro[0].confusion, summed);

    let json = serde_json::to_value(&report).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["reference"]["consensus"], serde_json::json!(["alice", "bob", "carol"]));
    assert!(json["modes"][0]["pairs"][0]["kappa"]["ci"]["low"].is_f64(), "{json}");
    assert!(json["modes"][2]["alpha"]["alpha"]["value"].is_null());
    assert!(json["modes"][0]["against_reference"][0]["confusion"]["fn"].is_u64());

    // Determinism of the whole report.
    let again = agreement_report(&table, &modes, &raters, &Reference::Consensus(humans), &options);
    assert_eq!(again.as_ref(), Ok(&report));
}

#[test]
fn report_errors() {
    let table = Table::from_rows(names("i", 1), names("r", 2), vec![vec![Some(Rating::new()), None]])
        .unwrap_or_else(|e| panic!("{e}"));
    let options = BootstrapOptions::default();
    let raters = names("r", 2);
    assert_eq!(
        agreement_report(&table, &[], &raters, &Reference::Rater("nobody".into()), &options),
        Err(AgreementError::UnknownRater("nobody".into()))
    );
    assert_eq!(
        agreement_report(&table, &[], &["x".to_string()], &Reference::Rater("r0".into()), &options),
        Err(AgreementError::UnknownRater("x".into()))
    );
    assert!(matches!(
        agreement_report(&table, &[], &["r0".into(), "r0".into()], &Reference::Rater("r0".into()), &options),
        Err(AgreementError::Duplicate { .. })
    ));
    let bad = BootstrapOptions { level: 0.0, ..options };
    assert!(matches!(
        agreement_report(&table, &[], &raters, &Reference::Rater("r0".into()), &bad),
        Err(AgreementError::InvalidOption(_))
    ));
    let ok = agreement_report(&table, &["m".into()], &raters, &Reference::Rater("r0".into()), &options)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.modes[0].against_reference.len(), 1);
    assert_eq!(ok.modes[0].pairs[0].n, 0);
    assert_eq!(ok.modes[0].pairs[0].raw_agreement, None);
}
