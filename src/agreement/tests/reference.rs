//! Every value of tests/agreement/reference.json (scikit-learn and the `krippendorff` package,
//! printed by scripts/agreement_reference.py) recomputed here on the same CSV tables, to 1e-9.
//! `null` in the reference (NaN or an exception there) must be `None` here.

use crate::agreement::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const TOLERANCE: f64 = 1e-9;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agreement")
}

/// Parses `item,rater,modes` (modes separated by `;`, empty = unclassified).
pub(super) fn read_table(name: &str) -> RatingTable {
    let path = dir().join(format!("{name}.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("item,rater,modes"), "{}", path.display());
    let records = lines.filter(|l| !l.trim().is_empty()).map(|line| {
        let mut fields = line.splitn(3, ',');
        let item = fields.next().unwrap_or_default().to_string();
        let rater = fields.next().unwrap_or_else(|| panic!("{}: no rater in {line:?}", path.display())).to_string();
        let modes: Rating =
            fields.next().unwrap_or_default().split(';').filter(|m| !m.is_empty()).map(String::from).collect();
        (item, rater, modes)
    });
    Table::from_records(records).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reference() -> Value {
    let path = dir().join("reference.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn modes(reference: &Value) -> Vec<String> {
    reference["modes"].as_array().into_iter().flatten().filter_map(|m| m.as_str().map(String::from)).collect()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Counts every comparison so a test cannot pass by comparing nothing.
struct Checker {
    compared: usize,
    max_error: f64,
}

impl Checker {
    fn close(&mut self, what: &str, expected: &Value, actual: Option<f64>) {
        self.compared += 1;
        match (expected.as_f64(), actual) {
            (None, None) => assert!(expected.is_null(), "{what}: reference is {expected}"),
            (Some(e), Some(a)) => {
                assert!((e - a).abs() <= TOLERANCE, "{what}: reference {e:?}, computed {a:?}");
                self.max_error = self.max_error.max((e - a).abs());
            }
            (e, a) => panic!("{what}: reference {e:?}, computed {a:?}"),
        }
    }
}

fn column(table: &RatingTable, name: &str) -> usize {
    table.rater_index(name).unwrap_or_else(|| panic!("no rater {name}"))
}

#[test]
fn tables_match_the_reference_values() {
    let reference = reference();
    let modes = modes(&reference);
    assert_eq!(modes.len(), 4);
    let tables = reference["tables"].as_object().unwrap_or_else(|| panic!("no tables"));
    assert_eq!(tables.len(), 4);
    let mut check = Checker { compared: 0, max_error: 0.0 };
    for (name, expected) in tables {
        let table = read_table(name);
        let items: Vec<&str> = expected["items"].as_array().into_iter().flatten().map(s).collect();
        assert_eq!(table.items(), items.as_slice(), "{name}");
        let raters: Vec<&str> = expected["raters"].as_array().into_iter().flatten().map(s).collect();
        assert_eq!(table.raters(), raters.as_slice(), "{name}");

        for (r, rater) in table.raters().iter().enumerate() {
            check.close(&format!("{name} coverage {rater}"), &expected["coverage"][rater], coverage(&table, r).share);
        }

        // Whole sets of modes as nominal categories.
        let nominal = &expected["nominal"];
        for k in nominal["kappa"].as_array().into_iter().flatten() {
            let pairs = table.pairs(column(&table, s(&k["a"])), column(&table, s(&k["b"])));
            let what = format!("{name} nominal {}-{}", k["a"], k["b"]);
            assert_eq!(pairs.len() as u64, u(&k["n"]), "{what} n");
            check.close(&format!("{what} kappa"), &k["kappa"], cohen_kappa(&pairs));
            check.close(&format!("{what} agreement"), &k["agreement"], raw_agreement(&pairs));
        }
        check.close(&format!("{name} nominal alpha"), &nominal["alpha"], krippendorff_alpha(table.rows()));

        for mode in &modes {
            let expected = &expected["per_mode"][mode];
            let binary = table.one_vs_rest(mode);
            let kappas = expected["kappa"].as_array().unwrap_or_else(|| panic!("{name} {mode}: no kappa"));
            assert_eq!(kappas.len(), raters.len() * (raters.len() - 1) / 2);
            for k in kappas {
                let pairs = binary.pairs(column(&table, s(&k["a"])), column(&table, s(&k["b"])));
                let what = format!("{name} {mode} {}-{}", k["a"], k["b"]);
                assert_eq!(pairs.len() as u64, u(&k["n"]), "{what} n");
                check.close(&format!("{what} kappa"), &k["kappa"], cohen_kappa(&pairs));
                let confusion = Confusion::from_pairs(&pairs);
                check.close(&format!("{what} kappa (confusion)"), &k["kappa"], confusion.kappa());
                check.close(&format!("{what} agreement"), &k["agreement"], raw_agreement(&pairs));
                check.close(&format!("{what} agreement (confusion)"), &k["agreement"], confusion.raw_agreement());
            }
            check.close(&format!("{name} {mode} alpha"), &expected["alpha"], krippendorff_alpha(binary.rows()));

            let scores = expected["classification"].as_array().unwrap_or_else(|| panic!("{name} {mode}: no scores"));
            assert_eq!(scores.len(), raters.len() * (raters.len() - 1));
            for e in scores {
                let pairs = binary.pairs(column(&table, s(&e["rater"])), column(&table, s(&e["reference"])));
                let c = Confusion::from_pairs(&pairs);
                let what = format!("{name} {mode} {} vs {}", e["rater"], e["reference"]);
                assert_eq!(
                    (c.n(), c.tp, c.fp, c.fn_, c.tn),
                    (u(&e["n"]), u(&e["tp"]), u(&e["fp"]), u(&e["fn"]), u(&e["tn"])),
                    "{what}"
                );
                check.close(&format!("{what} precision"), &e["precision"], c.precision());
                check.close(&format!("{what} recall"), &e["recall"], c.recall());
                check.close(&format!("{what} f1"), &e["f1"], c.f1());
            }
        }
    }
    // 4 tables: coverage, nominal and per-mode kappa/alpha/P/R/F1 (see reference.json).
    assert!(check.compared > 400, "only {} values compared", check.compared);
    eprintln!("{} values compared, largest difference {:e}", check.compared, check.max_error);
}

/// The report computes the same point values as the functions checked above.
#[test]
fn report_agrees_with_the_reference_values() {
    let reference = reference();
    let modes = modes(&reference);
    let name = "missing";
    let table = read_table(name);
    let raters: Vec<String> = table.raters().to_vec();
    let options = BootstrapOptions { resamples: 50, ..BootstrapOptions::default() };
    let report = agreement_report(&table, &modes, &raters, &Reference::Rater("alice".into()), &options)
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = &reference["tables"][name];
    let mut check = Checker { compared: 0, max_error: 0.0 };
    for m in &report.modes {
        let e = &expected["per_mode"][&m.mode];
        check.close(&format!("{} alpha", m.mode), &e["alpha"], m.alpha.alpha.value);
        for p in &m.pairs {
            let k = e["kappa"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|k| (s(&k["a"]), s(&k["b"])) == (p.a.as_str(), p.b.as_str()))
                .unwrap_or_else(|| panic!("no reference for {} {}-{}", m.mode, p.a, p.b));
            check.close(&format!("{} {}-{} kappa", m.mode, p.a, p.b), &k["kappa"], p.kappa.value);
            check.close(&format!("{} {}-{} agreement", m.mode, p.a, p.b), &k["agreement"], p.raw_agreement);
        }
        assert_eq!(m.against_reference.len(), 3);
        for score in &m.against_reference {
            let e = e["classification"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| (s(&e["rater"]), s(&e["reference"])) == (score.rater.as_str(), "alice"))
                .unwrap_or_else(|| panic!("no reference for {} {}", m.mode, score.rater));
            assert_eq!(score.n, u(&e["n"]));
            check.close(&format!("{} {} precision", m.mode, score.rater), &e["precision"], score.precision.value);
            check.close(&format!("{} {} recall", m.mode, score.rater), &e["recall"], score.recall.value);
            check.close(&format!("{} {} f1", m.mode, score.rater), &e["f1"], score.f1.value);
        }
    }
    for c in &report.coverage {
        check.close(&format!("coverage {}", c.rater), &expected["coverage"][&c.rater], c.share);
    }
    assert!(check.compared > 50, "only {} values compared", check.compared);
}
