//! `trajan bench llm` (built with `--features bench-llm`): the LLM pipeline's throughput on
//! synthetic failed runs, in release mode, against a local chat-completions server
//! (`src/testkit/chat_server.rs`, the tests' scripted server) that answers after a fixed
//! latency, so the figure is the pipeline's own cost: prompt building, the HTTP client,
//! validation and the database write. The server is test support: a default build leaves it
//! (and this benchmark) out of the binary.

use super::bench_classify::build;
use super::chat_server::{Behaviour, ChatServer};
use super::output::emit;
use anyhow::Result;
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use trajan::classify::llm::client::{LlmClient, LlmSettings};
use trajan::classify::llm::pipeline::{LlmOptions, classify_llm};
use trajan::label::taxonomy::Taxonomy;
use trajan::store::Store;

pub fn run(runs: usize, latency_ms: u64, concurrency: usize) -> Result<i32> {
    let tmp = super::bench_scratch::Scratch::new()?;
    let db = tmp.path().join("llm.db");
    build(&db, runs)?;
    let mut store = Store::open(&db)?;
    let taxonomy = Taxonomy::preset("refactoring").unwrap_or_else(|| unreachable!("the default preset is embedded"));
    let ids = store.classify_candidates(Some(trajan::model::FailedScope::WithUnknown))?;
    let latency = Duration::from_millis(latency_ms);
    let reply = r#"{"modes": [{"mode": "missed_edit_location", "confidence": 0.7, "evidence": [{"step": 1, "note": "viewed"}], "rationale": "synthetic"}], "unclassified": false, "summary": "synthetic", "onset": {"step": 1, "rationale": "synthetic"}, "blame": {"value": "agent", "reason": "synthetic"}}"#;
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
