//! `trajan agreement` on the committed rating tables (tests/agreement/*.csv) against the values
//! scikit-learn (`cohen_kappa_score`, `precision_recall_fscore_support`) and the `krippendorff`
//! package computed once (scripts/agreement_reference.py → tests/agreement/reference.json):
//! every value to 1e-9, undefined (NaN / null) exactly where they are undefined.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agreement")
}

fn report(table: &str, reference: &str) -> Value {
    let out = common::command()
        .args(["agreement", "--json", "--resamples", "0", "--reference", reference, "--table"])
        .arg(dir().join(format!("{table}.csv")))
        .env("XDG_CONFIG_HOME", dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"));
    v["report"].clone()
}

/// Equal within 1e-9, or both undefined.
fn close(got: &Value, want: &Value, what: &str) -> usize {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= 1e-9, "{what}: {g} vs {w}"),
        (None, None) => {}
        _ => panic!("{what}: trajan {got}, reference {want}"),
    }
    1
}

#[test]
fn agreement_matches_scikit_learn_and_krippendorff_to_1e_9() {
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("reference.json")).unwrap()).unwrap();
    let mut compared = 0;
    for (name, table) in reference["tables"].as_object().unwrap() {
        let raters: Vec<&str> = table["raters"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        for &against in &raters {
            let got = report(name, against);
            for c in got["coverage"].as_array().unwrap() {
                let rater = c["rater"].as_str().unwrap();
                compared += close(&c["share"], &table["coverage"][rater], &format!("{name}: coverage of {rater}"));
            }
            for m in got["modes"].as_array().unwrap() {
                let mode = m["mode"].as_str().unwrap();
                let want = &table["per_mode"][mode];
                compared += close(&m["alpha"]["alpha"]["value"], &want["alpha"], &format!("{name} {mode}: alpha"));
                for p in m["pairs"].as_array().unwrap() {
                    let w = want["kappa"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|k| (k["a"] == p["a"] && k["b"] == p["b"]) || (k["a"] == p["b"] && k["b"] == p["a"]))
                        .unwrap_or_else(|| panic!("{name} {mode}: no reference for {} ~ {}", p["a"], p["b"]));
                    let what = format!("{name} {mode}: kappa {} ~ {}", p["a"], p["b"]);
                    compared += close(&p["kappa"]["value"], &w["kappa"], &what);
                    compared += close(&p["raw_agreement"], &w["agreement"], &format!("{what} (raw)"));
                    assert_eq!(p["n"], w["n"], "{what}: n");
                }
                for c in m["against_reference"].as_array().unwrap() {
                    let w = want["classification"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|x| x["rater"] == c["rater"] && x["reference"] == against)
                        .unwrap_or_else(|| panic!("{name} {mode}: no reference for {} vs {against}", c["rater"]));
                    let what = format!("{name} {mode}: {} vs {against}", c["rater"]);
                    for k in ["precision", "recall", "f1"] {
                        compared += close(&c[k]["value"], &w[k], &format!("{what}: {k}"));
                    }
                    for k in ["tp", "fp", "fn", "tn", "n"] {
                        let got = if k == "n" { &c["n"] } else { &c["confusion"][k] };
                        assert_eq!(got, &w[k], "{what}: {k}");
                    }
                }
            }
        }
    }
    assert!(compared > 400, "only {compared} values compared");
}

#[test]
fn intervals_are_reproducible_and_hold_the_estimate() {
    let run = |seed: &str| {
        let out = common::command()
            .args(["agreement", "--json", "--resamples", "300", "--seed", seed, "--reference", "alice", "--table"])
            .arg(dir().join("imbalanced.csv"))
            .env("XDG_CONFIG_HOME", dir())
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let (a, b) = (run("7"), run("7"));
    assert_eq!(a, b, "the same seed gives the same intervals");
    let k = &a["report"]["modes"][0]["pairs"][0]["kappa"];
    let (v, lo, hi) =
        (k["value"].as_f64().unwrap(), k["ci"]["low"].as_f64().unwrap(), k["ci"]["high"].as_f64().unwrap());
    assert!(lo <= v && v <= hi, "{lo} <= {v} <= {hi}");
}
