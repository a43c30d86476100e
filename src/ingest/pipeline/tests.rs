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

/// Counts, at each piece written, the runs another connection to the database sees.
struct Watcher {
    db: PathBuf,
    seen: std::sync::Mutex<Vec<i64>>,
}

impl Progress for Watcher {
    fn start(&self, _: usize, _: u64) {}
    fn advance(&self, _: u64, _: &std::path::Path) {
        let runs = Store::open_read_only(&self.db).and_then(|s| s.count_runs()).unwrap_or(-1);
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(runs);
        }
    }
    fn finish(&self) {}
}

#[test]
fn a_streamed_file_is_committed_in_parts_that_other_readers_see_as_they_come() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("t.db");
    let mut store = ok(Store::open(&db));
    // A part per batch, a batch per line (three runs).
    let opts = Options { part_bytes: 1, ..streaming() };
    let watcher = Watcher { db: db.clone(), seen: std::sync::Mutex::new(Vec::new()) };
    let report = ingest(&mut store, &[corpus_openhands()], &opts, &watcher);
    assert!(!report.has_problems(), "{:?}", report.results);
    let seen = ok(watcher.seen.lock()).clone();
    assert!(seen.iter().any(|&n| n > 0 && n < 3), "runs seen while the file was written: {seen:?}");
    assert_eq!(ok(store.count_runs()), 3);
    // The file's hash is recorded once it is written whole: ingesting it again changes nothing.
    let again = ingest(&mut store, &[corpus_openhands()], &opts, &Silent);
    assert_eq!(again.unchanged(), 1);
    assert_eq!(ok(store.integrity_check()), "ok");
}

/// A document written as it is read is written with a small page cache; the store's own limit
/// (`trajan FILE` sets one for its writer) comes back after it, and after one that fails.
#[test]
fn the_page_cache_is_the_stores_own_again_after_a_document_written_as_read() {
    let dir = ok(tempfile::tempdir());
    let mut store = ok(Store::open(&dir.path().join("t.db")));
    ok(store.limit_cache(16 * 1024));
    let mini = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/corpus/mini-swe-agent-1/django__django-16560/django__django-16560.traj.json"
    );
    let swe = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/swe-agent-1.1/pytest-dev__pytest-6202.traj");
    let report = ingest(&mut store, &[PathBuf::from(mini), PathBuf::from(swe)], &streaming(), &Silent);
    assert_eq!((report.ingested(), report.stepwise), (2, 2), "{:?}", report.results);
    assert_eq!(ok(store.limit_cache(16 * 1024)), 16 * 1024);
    // Cut midway: rolled back, read whole, refused.
    let text = ok(std::fs::read_to_string(swe));
    let cut = dir.path().join("cut.traj");
    ok(std::fs::write(&cut, &text[..text.len() / 2]));
    let report = ingest(&mut store, &[cut], &streaming(), &Silent);
    assert_eq!(report.stepwise, 0, "{:?}", report.results);
    assert_eq!(ok(store.limit_cache(16 * 1024)), 16 * 1024);
}

/// What a progress display is told, in order.
#[derive(Default)]
struct Told(std::sync::Mutex<Vec<String>>);

impl Progress for Told {
    fn start(&self, units: usize, _: u64) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(format!("start {units}"));
    }
    fn advance(&self, _: u64, path: &std::path::Path) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(format!("done {name}"));
    }
    fn current(&self, path: &std::path::Path) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(format!("now {name}"));
    }
    fn finish(&self) {}
}

/// Every file is named as the current one before it is done (issue 38: the display never
/// stalls on "10/181 files" while a slow file is read: it names that file).
#[test]
fn each_file_is_shown_as_the_current_one_before_it_is_done() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/formats"));
    let told = Told::default();
    let mut store = ok(Store::open_in_memory());
    ingest(&mut store, &[dir], &Options::default(), &told);
    let events = told.0.into_inner().unwrap_or_else(|p| p.into_inner());
    let done: Vec<&String> = events.iter().filter(|e| e.starts_with("done ")).collect();
    assert!(done.len() > 5, "{events:?}");
    for d in done {
        let name = &d["done ".len()..];
        let at = events.iter().position(|e| e == d).unwrap_or(0);
        assert!(
            events[..at].iter().any(|e| *e == format!("now {name}")),
            "{name} done before it was shown: {events:?}"
        );
    }
}
