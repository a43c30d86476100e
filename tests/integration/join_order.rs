//! Joins never depend on order or timing (issue 21): the real corpus and the results-folder
//! layouts, ingested in one call with one worker or four, one unit at a time in shuffled
//! orders, and in a few calls, give every run the same verdict, the same tests from the same
//! sources and the same reasons for the evaluations it did not get, and the same evaluations
//! that matched no run.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::ingest::source;
use trajan::store::Store;
use trajan::store::read::RunFilter;

use crate::common;

/// What the joins gave, keyed by run (its source and instance, with a count for several runs
/// of one source and instance), plus the evaluations that matched no run.
type Joins = BTreeMap<String, String>;

fn inputs() -> Vec<PathBuf> {
    vec![common::corpus(), common::fixtures_dir("layouts")]
}

/// Every unit of the inputs (a file, a harness folder, a trial), as a path `ingest` takes.
fn units() -> Vec<PathBuf> {
    let found = source::discover(&inputs());
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    assert!(found.units.iter().all(|u| u.archive.is_none()), "no archive in these fixtures");
    found.units.into_iter().map(|u| u.path).collect()
}

/// A shuffle that is the same on every machine (xorshift, seeded).
fn shuffled(mut items: Vec<PathBuf>, seed: u64) -> Vec<PathBuf> {
    let mut state = seed;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = usize::try_from(state % (i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
    items
}

/// Ingest `calls` (each a list of paths) into a new database with `workers` workers; the joins.
fn joins(calls: &[Vec<PathBuf>], workers: usize) -> Joins {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::open(&dir.path().join("t.db")).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options { workers, ..Options::default() };
    for paths in calls {
        let report = pipeline::ingest(&mut store, paths, &opts, &Silent);
        assert_eq!(report.failures().count(), 0, "{paths:?}: {:#?}", report.results);
    }
    let mut out = Joins::new();
    for run in store.list_runs(RunFilter::default()).unwrap_or_else(|e| panic!("{e}")) {
        let detail = store.run_detail(run.id, Some(-1)).unwrap_or_else(|e| panic!("{e}"));
        let o = detail.outcome.as_ref();
        let tests: Vec<String> = o
            .map(|o| o.tests.iter().map(|t| format!("{:?} {} {}", t.group, t.name, t.passed)).collect())
            .unwrap_or_default();
        let mut reasons: Vec<String> =
            detail.unjoined_evaluations.iter().map(|u| format!("{} {}: {}", u.format, u.source, u.reason)).collect();
        reasons.sort();
        let value = serde_json::json!({
            "resolved": o.map(|o| o.resolved),
            "source": o.map(|o| o.source.clone()),
            "verdict": o.map(|o| serde_json::to_value(o.verdict).unwrap_or(Value::Null)),
            "tests_source": o.and_then(|o| o.tests_source.clone()),
            "tests_say_resolved": o.and_then(|o| o.tests_say_resolved),
            "tests": tests,
            "unjoined": reasons,
            "model": run.model,
        });
        let mut key = format!("{} {}", run.source, run.instance_id);
        let mut n = 1;
        while out.contains_key(&key) {
            n += 1;
            key = format!("{} {} #{n}", run.source, run.instance_id);
        }
        out.insert(key, value.to_string());
    }
    for orphan in store.orphan_evaluations().unwrap_or_else(|e| panic!("{e}")) {
        let key = format!("orphan {} {} {}", orphan.source, orphan.instance_id, orphan.format);
        let value = format!("{:?} {} {:?}", orphan.resolved, orphan.tests, orphan.why);
        *out.entry(key).or_default() += &value;
    }
    out
}

fn assert_same(name: &str, want: &Joins, got: &Joins) {
    let differ: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}:\n  all at once: {v}\n  {name}: {:?}", got.get(k)))
        .chain(got.keys().filter(|k| !want.contains_key(*k)).map(|k| format!("{k}: only in {name}")))
        .collect();
    assert!(differ.is_empty(), "{name} differs in {} places:\n{}", differ.len(), differ.join("\n"));
}

#[test]
fn the_same_files_in_any_order_give_the_same_joins() {
    let all = inputs();
    let want = joins(std::slice::from_ref(&all), 1);
    assert!(want.len() > 100, "the corpus and the layouts hold many runs and evaluations: {}", want.len());
    assert!(
        want.values().any(|v| v.contains("\"resolved\":true"))
            && want.values().any(|v| v.contains("\"resolved\":false"))
    );
    assert_same("four workers", &want, &joins(std::slice::from_ref(&all), 4));
    let units = units();
    for seed in [0x9e37_79b9_7f4a_7c15, 0x2545_f491_4f6c_dd1d] {
        let one_at_a_time: Vec<Vec<PathBuf>> = shuffled(units.clone(), seed).into_iter().map(|u| vec![u]).collect();
        assert_same(&format!("one unit at a time (seed {seed:x})"), &want, &joins(&one_at_a_time, 2));
    }
    let mut reversed = shuffled(units, 7);
    reversed.reverse();
    let calls: Vec<Vec<PathBuf>> = reversed.chunks(17).map(<[PathBuf]>::to_vec).collect();
    assert_same("in calls of 17 units", &want, &joins(&calls, 3));
}
