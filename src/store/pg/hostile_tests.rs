//! Hostile input, round 3 (issue 42), against the real server: two ingests of one streamed
//! file at once.

use super::tests::{database, ok};
use crate::ingest::pipeline::{self, Options, Silent};
use crate::store::Store;
use crate::store::read::RunFilter;

/// An OpenHands `output.jsonl` of `n` instances, each line about 300 bytes.
fn output_jsonl(n: usize) -> String {
    (0..n)
        .map(|i| {
            let history = serde_json::json!([
                {"id": 0, "source": "user", "action": "message", "message": "fix it", "args": {"content": "fix it"}},
                {"id": 1, "source": "agent", "action": "run", "message": format!("run {i}"),
                 "args": {"command": format!("ls {i}")}}
            ]);
            format!("{}\n", serde_json::json!({"instance_id": format!("repo__repo-{i}"), "history": history}))
        })
        .collect()
}

/// Two ingests of one JSON-lines file streamed in parts, at once: the second waits for the whole
/// of the first (not for its next commit) and replaces it; the file is stored once.
#[test]
fn two_ingests_of_one_streamed_file_at_once_store_it_once() {
    let Some((_db, url)) = database() else { return };
    let dir = ok(tempfile::tempdir());
    let file = dir.path().join("output.jsonl");
    ok(std::fs::write(&file, output_jsonl(400)));
    // Streamed, a part committed every 8 KB or so: some fifteen parts.
    let opts = Options { stream_bytes: 0, batch_bytes: 4 << 10, part_bytes: 8 << 10, workers: 1, ..Options::default() };
    let start = std::sync::Arc::new(std::sync::Barrier::new(2));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (url, file, opts, start) = (url.clone(), file.clone(), opts.clone(), start.clone());
            std::thread::spawn(move || {
                let mut store = ok(Store::connect(&url));
                start.wait();
                let report = pipeline::ingest(&mut store, &[file], &opts, &Silent);
                report.problems().iter().map(|p| p.message.clone()).collect::<Vec<_>>()
            })
        })
        .collect();
    for w in writers {
        let problems = w.join().unwrap_or_else(|_| panic!("a writer panicked"));
        assert!(problems.is_empty(), "{problems:?}");
    }
    let store = ok(Store::connect(&url));
    let runs = ok(store.list_runs(RunFilter::default()));
    let instances: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.instance_id.as_str()).collect();
    assert_eq!((runs.len(), instances.len()), (400, 400), "each instance once");
}
