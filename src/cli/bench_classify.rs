//! `trajan bench classify`: the heuristic classifier's throughput on synthetic failed runs, in
//! release mode; and the runs `bench llm` (`bench_llm.rs`) classifies.

use super::memory::proc_status_kb;
use super::output::emit;
use super::synth;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use trajan::classify::pipeline::classify_heuristic;
use trajan::label::taxonomy::Taxonomy;
use trajan::model::Parsed;
use trajan::store::{SourceRecord, Store};

/// A fresh database of `runs` synthetic failed runs (with tasks and outcomes), in sources of
/// 1,000 runs. Returns how long building took.
pub(super) fn build(db: &Path, runs: usize) -> Result<Duration> {
    let started = Instant::now();
    let mut store = Store::open(db)?;
    let hash = [0u8; 32];
    for chunk in 0..runs.div_ceil(1000) {
        let mut parsed = Parsed::default();
        for i in chunk * 1000..((chunk + 1) * 1000).min(runs) {
            let f = synth::failed_run(i as u64);
            parsed.runs.push(f.run);
            parsed.tasks.push(f.task);
            parsed.outcomes.push(f.outcome);
        }
        let path = format!("/synthetic/failed-{chunk:04}.jsonl");
        let record = SourceRecord { path: &path, kind: "file", format: "swe-agent", size: 0, hash: &hash };
        store.write_source(&record, &parsed)?;
    }
    store.checkpoint()?;
    Ok(started.elapsed())
}

pub fn heuristic(runs: usize) -> Result<i32> {
    let tmp = super::bench_scratch::Scratch::new()?;
    let db = tmp.path().join("classify.db");
    let built = build(&db, runs)?;
    let mut store = Store::open(&db)?;
    let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| unreachable!("the default preset is embedded"));
    // Every run, resolved ones too: the target is 10,000 runs.
    let ids = store.classify_candidates(None)?;
    let rss_before = proc_status_kb("VmRSS")?;
    let started = Instant::now();
    let first = classify_heuristic(&mut store, &taxonomy, &ids, |_| {})?;
    let took = started.elapsed();
    let again = Instant::now();
    let second = classify_heuristic(&mut store, &taxonomy, &ids, |_| {})?;
    let took_again = again.elapsed();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "database         {runs} synthetic runs built in {:.1} s; classifying all {}",
        built.as_secs_f64(),
        ids.len()
    );
    let _ = writeln!(
        out,
        "heuristic        {} runs in {:.2} s: {:.0} runs/s, {:.3} ms per run (target: 10,000 in under 10 s)",
        first.labelled,
        took.as_secs_f64(),
        first.labelled as f64 / took.as_secs_f64(),
        took.as_secs_f64() * 1000.0 / first.labelled.max(1) as f64
    );
    let _ = writeln!(out, "modes            {} runs with modes: {:?}", first.with_modes, first.by_mode);
    let _ = writeln!(
        out,
        "again            {} unchanged in {:.2} s (signals recomputed, no label written)",
        second.unchanged,
        took_again.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "memory           {:.0} MB before, peak {:.0} MB (VmHWM)",
        rss_before as f64 / 1024.0,
        proc_status_kb("VmHWM")? as f64 / 1024.0
    );
    emit(&out)?;
    Ok(0)
}
