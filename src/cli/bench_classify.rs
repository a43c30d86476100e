//! `trajan bench classify` and `trajan bench llm`: the classifiers' throughput on synthetic
//! failed runs, in release mode. The LLM benchmark runs against a local chat-completions server
//! (`src/testkit/chat_server.rs`) that answers after a fixed latency, so the figure is the pipeline's
//! own cost: prompt building, the HTTP client, validation and the database write.

use super::chat_server::{Behaviour, ChatServer};
use super::memory::proc_status_kb;
use super::output::emit;
use super::synth;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use trajan::classify::llm::client::{LlmClient, LlmSettings};
use trajan::classify::llm::pipeline::{LlmOptions, classify_llm};
use trajan::classify::pipeline::classify_heuristic;
use trajan::label::taxonomy::Taxonomy;
use trajan::model::Parsed;
use trajan::store::{SourceRecord, Store};

/// A fresh database of `runs` synthetic failed runs (with tasks and outcomes), in sources of
/// 1,000 runs. Returns how long building took.
fn build(db: &Path, runs: usize) -> Result<Duration> {
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
    let tmp = tempfile::tempdir()?;
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

pub fn llm(runs: usize, latency_ms: u64, concurrency: usize) -> Result<i32> {
    let tmp = tempfile::tempdir()?;
    let db = tmp.path().join("llm.db");
    build(&db, runs)?;
    let mut store = Store::open(&db)?;
    let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| unreachable!("the default preset is embedded"));
    let ids = store.classify_candidates(Some(trajan::model::FailedScope::WithUnknown))?;
    let latency = Duration::from_millis(latency_ms);
    let reply = r#"{"modes": [{"mode": "missed_edit_location", "confidence": 0.7, "evidence": [{"step": 1, "note": "viewed"}], "rationale": "synthetic"}], "unclassified": false, "summary": "synthetic"}"#;
    let server = ChatServer::start(move |_| {
        Behaviour::Delay(latency, Box::new(Behaviour::Reply { content: reply.into(), tokens_in: 4000, tokens_out: 80 }))
    })?;
    let mut settings = LlmSettings::new(server.base_url(), "bench-model");
    settings.timeout = Duration::from_secs(30);
    let client = LlmClient::new(settings)?;
    let opts = LlmOptions { concurrency, ..LlmOptions::default() };
    let started = Instant::now();
    let report = classify_llm(&mut store, &taxonomy, &ids, &client, &opts, |_| {})?;
    let wall = started.elapsed();
    let n = report.labelled.max(1) as f64;
    // With `concurrency` requests in flight, each taking `latency`, the ideal wall time is
    // n / concurrency * latency; the rest is the pipeline's own cost.
    let ideal = Duration::from_secs_f64((ids.len() as f64 / concurrency as f64).ceil() * latency.as_secs_f64());
    let per_run_ms = wall.as_secs_f64() * 1000.0 * concurrency as f64 / n;
    let mut lat = report.latencies_ms.clone();
    lat.sort_unstable();
    let pct =
        |p: f64| lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or(0);
    let mut out = String::new();
    let _ =
        writeln!(out, "llm pipeline     {} runs, server latency {latency_ms} ms, concurrency {concurrency}", ids.len());
    let _ = writeln!(out, "labelled         {} ({} failed)", report.labelled, report.failed.len());
    let _ = writeln!(
        out,
        "wall             {:.2} s (ideal {:.2} s): {:.0} runs/s",
        wall.as_secs_f64(),
        ideal.as_secs_f64(),
        n / wall.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "per run          {per_run_ms:.1} ms of a request slot, {:.2} ms beyond the server's latency (target: under 5 ms)",
        per_run_ms - latency_ms as f64
    );
    let _ = writeln!(
        out,
        "request latency  p50 {} ms, p99 {} ms, max {} ms (send to answer, in the client)",
        pct(0.5),
        pct(0.99),
        lat.last().copied().unwrap_or(0)
    );
    let _ = writeln!(out, "requests         {} served", server.request_count());
    emit(&out)?;
    Ok(if report.failed.is_empty() { 0 } else { 1 })
}
