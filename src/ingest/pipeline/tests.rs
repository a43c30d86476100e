//! The pipeline end to end on files: streamed and whole reads agree, streamed files keep good
//! lines, re-ingest is idempotent.

use super::*;
use crate::store::read::{RunFilter, RunSummary};

fn corpus_openhands() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/openhands/multi_swe_bench_output.jsonl"))
}

fn streaming() -> Options {
    Options { stream_bytes: 0, batch_bytes: 64 << 10, ..Options::default() }
}

fn runs(store: &Store) -> Vec<RunSummary> {
    let mut runs = store.list_runs(RunFilter::default()).unwrap_or_default();
    for r in &mut runs {
        r.source = String::new();
    }
    runs
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn streamed_and_whole_reads_store_the_same_runs() {
    let mut whole = ok(Store::open_in_memory());
    let a = ingest(&mut whole, &[corpus_openhands()], &Options::default(), &Silent);
    let mut streamed = ok(Store::open_in_memory());
    let b = ingest(&mut streamed, &[corpus_openhands()], &streaming(), &Silent);
    assert!(!a.has_problems() && !b.has_problems(), "{:?} {:?}", a.results, b.results);
    let (ra, rb) = (runs(&whole), runs(&streamed));
    assert_eq!(ra.len(), 3);
    assert_eq!(ra, rb);
    assert_eq!(
        ok(streamed.search("maximum iteration", None, 10)).len(),
        ok(whole.search("maximum iteration", None, 10)).len()
    );
    assert_eq!(ok(streamed.integrity_check()), "ok");
}

#[test]
fn a_streamed_file_keeps_good_lines_and_reingests_idempotently() {
    let dir = ok(tempfile::tempdir());
    let file = dir.path().join("output.jsonl");
    let line = |id: &str| {
        format!(
            "{{\"instance_id\": \"{id}\", \"instruction\": \"do {id}\", \"history\": [{{\"id\": 1, \"source\": \"agent\", \"action\": \"run\", \"args\": {{\"command\": \"ls\"}}}}]}}\n"
        )
    };
    let text = format!("{}{{\"instance_id\": \"broken\n{}", line("s-1"), line("s-2"));
    ok(std::fs::write(&file, &text));
    let mut store = ok(Store::open_in_memory());
    let first = ingest(&mut store, &[dir.path().to_path_buf()], &streaming(), &Silent);
    assert_eq!(first.ingested(), 1);
    let warnings: Vec<&String> = first.warnings().collect();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("line 2"), "{}", warnings[0]);
    let ids: Vec<String> = runs(&store).into_iter().map(|r| r.instance_id).collect();
    assert_eq!(ids, vec!["s-1", "s-2"]);
    let again = ingest(&mut store, &[dir.path().to_path_buf()], &streaming(), &Silent);
    assert_eq!(again.unchanged(), 1);
    // Fixed file: replaced, with the same ids for the runs that stayed.
    let before: Vec<i64> = runs(&store).iter().map(|r| r.id).collect();
    ok(std::fs::write(&file, format!("{}{}", line("s-1"), line("s-2"))));
    let third = ingest(&mut store, &[dir.path().to_path_buf()], &streaming(), &Silent);
    assert_eq!(third.ingested(), 1);
    assert!(!third.has_problems());
    let after: Vec<i64> = runs(&store).iter().map(|r| r.id).collect();
    assert_eq!(before[0], after[0]);
    assert_eq!(ok(store.integrity_check()), "ok");
}

#[test]
fn a_streamed_file_of_bad_lines_fails_and_leaves_nothing() {
    let dir = ok(tempfile::tempdir());
    ok(std::fs::write(
        dir.path().join("x.jsonl"),
        "{\"instance_id\": \"a\", \"history\": 5}\n{\"instance_id\": \"b\", \"history\": 7}\n",
    ));
    let mut store = ok(Store::open_in_memory());
    let report = ingest(&mut store, &[dir.path().to_path_buf()], &streaming(), &Silent);
    assert_eq!(report.failures().count(), 1);
    assert!(runs(&store).is_empty());
    assert_eq!(ok(store.count_runs()), 0);
}

#[test]
fn units_written_in_batches_are_each_reported_in_order_once_committed() {
    let corpus = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/mini-swe-agent-1"));
    let dir = ok(tempfile::tempdir());
    // Names sort in discovery order: good files around a broken one.
    for (i, name) in ["django__django-16560", "astropy__astropy-13033", "django__django-11163"].iter().enumerate() {
        let from = corpus.join(name).join(format!("{name}.traj.json"));
        ok(std::fs::copy(from, dir.path().join(format!("{}-{name}.traj.json", 2 * i))));
    }
    ok(std::fs::write(dir.path().join("1-broken.traj.json"), "{\"messages\": [1, 2"));
    let mut store = ok(Store::open_in_memory());
    let report = ingest(&mut store, &[dir.path().to_path_buf()], &Options::default(), &Silent);
    let kinds: Vec<(&str, String)> = report
        .results
        .iter()
        .map(|r| match r {
            UnitResult::Ingested { path, .. } => ("ingested", path.display().to_string()),
            UnitResult::Failed(e) => ("failed", e.to_string()),
            other => ("other", format!("{other:?}")),
        })
        .collect();
    let order: Vec<&str> = kinds.iter().map(|k| k.0).collect();
    assert_eq!(order, vec!["ingested", "failed", "ingested", "ingested"], "{kinds:?}");
    assert!(kinds[0].1.ends_with("0-django__django-16560.traj.json"), "{kinds:?}");
    assert!(kinds[3].1.ends_with("4-django__django-11163.traj.json"), "{kinds:?}");
    assert_eq!(report.bytes, (0..4).map(|i| report_size(dir.path(), i)).sum::<u64>());
    assert!(!store.in_batch(), "the last batch is committed");
    assert_eq!(ok(store.count_runs()), 3);
    assert_eq!(ok(store.integrity_check()), "ok");
}

fn report_size(dir: &std::path::Path, i: usize) -> u64 {
    let mut names: Vec<PathBuf> = ok(std::fs::read_dir(dir)).filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    names.get(i).and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len())
}
