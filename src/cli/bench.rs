//! `trajan bench`: generate synthetic data and measure ingest (run in release mode).

use super::synth::{self, Kind};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::store::{Location, Store};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Write synthetic SWE-agent 1.1 and/or mini-swe-agent trajectories into DIR.
    Gen {
        dir: PathBuf,
        /// Total size, e.g. 10M, 100M, 1G.
        #[arg(long, default_value = "100M")]
        size: String,
        /// swe-agent, mini, mixed, openhands (one output.jsonl of the whole size), one file of
        /// the whole size of openhands-v1, codex, claude-code, openclaw, aider, moatless,
        /// agentless or terminal-bench (its trial's agent.cast), or Parquet shards of a published
        /// dataset's schema: nebius (nebius/SWE-agent-trajectories), rebench
        /// (nebius/SWE-rebench-openhands-trajectories), smith (SWE-bench/SWE-smith-trajectories), openswe (nvidia/Open-SWE-Traces),
        /// swegym (SWE-Gym/OpenHands-Sampled-Trajectories), tb2 (Terminal-Bench 2 trials as rows:
        /// ATIF in a column, reward, cost, CTRF report), swezero
        /// (nvidia/SWE-Zero-openhands-trajectories), r2egym (R2E-Gym/R2EGym-SFT-Trajectories).
        #[arg(long, default_value = "mixed")]
        kind: String,
    },
    /// Time the TUI: first screen on 100,000 runs, keypresses in a 20,000-step run of 100 KB
    /// observations, memory while scrolling; then a never-seen 200 MB file opened (`trajan
    /// FILE`). Builds DB and the file on first use (takes a few minutes).
    Tui {
        /// The benchmark database; built when missing, reused after. A PostgreSQL URL names an
        /// empty database made by `trajan migrate`: filled the same way on first use.
        #[arg(long, default_value = "/tmp/trajan-bench-tui.db")]
        db: PathBuf,
        #[arg(long, default_value_t = 100_000)]
        runs: usize,
        #[arg(long, default_value_t = 20_000)]
        steps: usize,
        #[arg(long, default_value_t = 100_000)]
        obs_bytes: usize,
        /// Only open a never-seen 200 MB file (`trajan FILE`): first screen, keys while it is
        /// read, peak memory.
        #[arg(long)]
        open_only: bool,
    },
    /// Ingest DIR (a folder or one file) into a fresh database and report throughput, database
    /// size and peak memory; then ingest it again to time the unchanged path.
    Ingest {
        #[arg(required_unless_present = "big")]
        dir: Option<PathBuf>,
        /// Instead of DIR, one big file: the 200 MB mini-swe-agent (`mini`) or 220 MB SWE-agent
        /// (`swe-agent`) trajectory of 20,000 steps `bench tui` opens (generated once, kept in
        /// /tmp for both benchmarks).
        #[arg(long, conflicts_with = "dir", value_parser = ["mini", "swe-agent"])]
        big: Option<String>,
        /// Keep the database at this path (it must not exist yet) instead of a temporary one.
        #[arg(long, conflicts_with = "server")]
        keep_db: Option<PathBuf>,
        /// Ingest into this empty PostgreSQL database (`postgres://...`, made by `trajan migrate`)
        /// instead of a file.
        #[arg(long)]
        server: Option<String>,
        /// Read every file whole, none streamed nor read a step at a time (how a big document
        /// was ingested before issue 26: for comparison).
        #[arg(long)]
        whole: bool,
    },
    /// Time 20 phrases searched (each several times) on a store: median and p99 per search.
    Search {
        /// The store: a file or a `postgres://` URL.
        db: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Shell edits that get a diff, per format, and how sure they are (verified, contradicted,
    /// simulated, attributed, changed nothing, unknown): on the trajectories named and on
    /// synthetic shell-only runs graded against their true file states.
    Edits {
        /// Trajectory files or folders (e.g. fixtures/corpus).
        paths: Vec<PathBuf>,
        /// Synthetic runs to generate and grade (0: none).
        #[arg(long, default_value_t = 200)]
        synthetic: usize,
        /// Also a row per run: its shell edits, and the share that carry a diff or changed
        /// nothing.
        #[arg(long)]
        per_run: bool,
    },
    /// Charts and HTML reports: each chart's SVG and PNG render time; the report of the corpus,
    /// of 1,000 runs of a 100,000-run synthetic database, and of one 20,000-step run: size, time
    /// to write, time to load in headless Chromium. Builds the database on first use.
    Report {
        /// The corpus folder (the checkout's real samples).
        #[arg(long, default_value = "fixtures/corpus")]
        corpus: PathBuf,
        /// The synthetic database; built when missing, reused after.
        #[arg(long, default_value = "/tmp/trajan-bench-report.db")]
        db: PathBuf,
        #[arg(long, default_value_t = 100_000)]
        runs: usize,
        #[arg(long, default_value_t = 20_000)]
        steps: usize,
        /// Bytes of each step's output in the long run.
        #[arg(long, default_value_t = 2_000)]
        obs_bytes: usize,
    },
    /// How far the classifier can be trusted: ingest a labelled set (default: the development
    /// set in fixtures/labelled), classify every run, and score the labels against the set's
    /// reference: per mode precision, recall and F1 with bootstrap 95% intervals, coverage, a
    /// reliability table by confidence, and every disagreement with both sides' evidence.
    Validity(super::bench_validity::ValidityArgs),
    /// Classify synthetic failed runs with the heuristic; report runs/s and memory.
    Classify {
        #[arg(long, default_value_t = 10_000)]
        runs: usize,
    },
    /// The LLM pipeline against a local chat-completions server answering after a fixed
    /// latency: what the pipeline adds per run beyond the server's latency (a build with
    /// `--features bench-llm`).
    Llm {
        #[arg(long, default_value_t = 2_000)]
        runs: usize,
        #[arg(long, default_value_t = 50)]
        latency_ms: u64,
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
}

pub fn run(cmd: BenchCommand) -> Result<i32> {
    // Stopped (Ctrl-C, a closed terminal), a benchmark removes what it wrote (`bench_scratch`).
    trajan::interrupt::catch()?;
    match cmd {
        BenchCommand::Gen { dir, size, kind } => {
            let bytes = parse_size(&size)?;
            let kind = Kind::parse(&kind).with_context(|| {
                let agents: Vec<&str> = synth::agents::Agent::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "unknown kind {kind:?}: swe-agent, mini, mixed, openhands, {}, nebius, rebench, smith, openswe, swegym, tb2, swezero, r2egym",
                    agents.join(", ")
                )
            })?;
            let g = synth::generate(&dir, kind, bytes)?;
            super::output::emit(&format!(
                "generated {} files, {} steps, {:.1} MB in {}\n",
                g.files,
                g.steps,
                g.bytes as f64 / 1e6,
                dir.display()
            ))?;
            Ok(0)
        }
        BenchCommand::Ingest { dir, big, keep_db, server, whole } => {
            let dir = match (dir, big.as_deref()) {
                (Some(dir), _) => dir,
                (None, Some("swe-agent")) => big_file(1)?,
                (None, _) => big_file(0)?,
            };
            let tmp = super::bench_scratch::Scratch::new()?;
            let at = match server {
                Some(url) => Location::parse(url.as_ref())?,
                None => Location::File(keep_db.unwrap_or_else(|| tmp.path().join("bench.db"))),
            };
            let opts = match whole {
                true => Options { stream_bytes: u64::MAX, ..Options::default() },
                false => Options::default(),
            };
            ingest(&dir, &at, &opts)
        }
        BenchCommand::Search { db, rounds } => search(&Location::parse(db.as_os_str())?, rounds),
        BenchCommand::Validity(args) => super::bench_validity::run(&args),
        BenchCommand::Classify { runs } => super::bench_classify::heuristic(runs),
        BenchCommand::Edits { paths, synthetic, per_run } => super::bench_edits::run(&paths, synthetic, per_run),
        #[cfg(feature = "bench-llm")]
        BenchCommand::Llm { runs, latency_ms, concurrency } => super::bench_llm::run(runs, latency_ms, concurrency),
        #[cfg(not(feature = "bench-llm"))]
        BenchCommand::Llm { .. } => bail!(
            "`bench llm` runs the tests' scripted chat server, which a default build leaves out: build with \
             `cargo build --release --features bench-llm`"
        ),
        BenchCommand::Report { corpus, db, runs, steps, obs_bytes } => {
            super::bench_report::run(&corpus, &db, &super::bench_tui::Sizes { runs, steps, obs_bytes })
        }
        BenchCommand::Tui { db, runs, steps, obs_bytes, open_only } => super::bench_tui::run(
            &Location::parse(db.as_os_str())?,
            &super::bench_tui::Sizes { runs, steps, obs_bytes },
            open_only,
        ),
    }
}

/// `bench_open`'s big file number `n`.
fn big_file(n: usize) -> Result<PathBuf> {
    let (_, file, generate) = super::bench_open::FILES[n];
    super::bench_open::big_file(file, generate)
}

fn ingest(dir: &Path, db: &Location, opts: &Options) -> Result<i32> {
    if let Location::File(path) = db
        && path.exists()
    {
        bail!("{} exists; the benchmark needs a fresh database", path.display());
    }
    let mut store = Store::open_at(db, false)?;
    if !store.is_empty_store()? {
        bail!("{} holds data; the benchmark needs an empty database", db.shown());
    }
    let (process_before, writer_before) = (cpu_seconds("/proc/self/stat"), cpu_seconds("/proc/thread-self/stat"));
    let first = pipeline::ingest(&mut store, &[dir.to_path_buf()], opts, &Silent);
    let process_cpu = cpu_seconds("/proc/self/stat") - process_before;
    // The writer is the thread that called the pipeline.
    let writer_cpu = cpu_seconds("/proc/thread-self/stat") - writer_before;
    store.checkpoint()?;
    let stored_bytes = store.stored_bytes()?;
    // The search index, built after the write (on one thread: its CPU time bounds it), for the
    // runs not indexed as they were written.
    let (started, cpu_before) = (Instant::now(), cpu_seconds("/proc/self/stat"));
    let indexed = store.build_search_index(&mut |_, _| {})?;
    store.after_ingest()?;
    let (index_wall, index_cpu) = (started.elapsed().as_secs_f64(), cpu_seconds("/proc/self/stat") - cpu_before);
    store.checkpoint()?;
    let db_bytes = store.stored_bytes()?;
    let second = pipeline::ingest(&mut store, &[dir.to_path_buf()], opts, &Silent);
    let mb = first.bytes as f64 / 1e6;
    let t = first.totals();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "input            {:.1} MB in {} files ({} runs, {} steps)",
        mb,
        first.ingested(),
        t.runs,
        t.steps
    );
    let _ = writeln!(
        out,
        "first ingest     {:.2} s  = {:.1} MB/s (stored, browsable)",
        first.elapsed.as_secs_f64(),
        mb / first.elapsed.as_secs_f64()
    );
    let _ = writeln!(out, "  writer busy    {:.2} s (database transactions)", first.write_time.as_secs_f64());
    let _ = writeln!(out, "  written as read {} documents (a step at a time)", first.stepwise);
    // Wall time depends on what else the machine runs; CPU time does not. On two idle cores the
    // ingest takes at least the writer's CPU time and at least half of all the CPU time.
    let bound = writer_cpu.max(process_cpu / 2.0);
    let _ = writeln!(
        out,
        "  cpu            {process_cpu:.2} s in all, {writer_cpu:.2} s writer thread  = {:.1} MB/s on 2 idle cores",
        mb / bound.max(1e-3)
    );
    if indexed.runs == 0 {
        // Documents written as they are read are indexed in their write (`Store::live_steps`).
        let _ = writeln!(out, "search index     {index_wall:.2} s: no run waited for it (indexed as written)");
    } else {
        let _ = writeln!(
            out,
            "search index     {index_wall:.2} s = {:.1} MB/s of input, {index_cpu:.2} s cpu ({} runs, {:.1} MB of text = {:.1} MB/s of text by cpu)",
            mb / index_wall.max(1e-3),
            indexed.runs,
            indexed.bytes as f64 / 1e6,
            indexed.bytes as f64 / 1e6 / index_cpu.max(1e-3)
        );
    }
    // End to end, as `trajan ingest` does it: the write, then the index pass.
    let _ = writeln!(
        out,
        "stored and searchable  {:.2} s  = {:.1} MB/s ({:.1} MB/s on 2 idle cores)",
        first.elapsed.as_secs_f64() + index_wall,
        mb / (first.elapsed.as_secs_f64() + index_wall).max(1e-3),
        mb / (bound + index_cpu).max(1e-3)
    );
    let _ = writeln!(out, "unchanged again  {:.2} s  ({} unchanged)", second.elapsed.as_secs_f64(), second.unchanged());
    let _ = writeln!(
        out,
        "database         {:.1} MB  = {:.3} x input ({:.3} before the search index)",
        db_bytes as f64 / 1e6,
        db_bytes as f64 / first.bytes.max(1) as f64,
        stored_bytes as f64 / first.bytes.max(1) as f64
    );
    for phrase in SEARCHES {
        let started = Instant::now();
        let hits = store.search(phrase, None, 50)?;
        let _ =
            writeln!(out, "search {phrase:<14}  {:.1} ms ({} hits)", started.elapsed().as_secs_f64() * 1e3, hits.len());
    }
    let _ = writeln!(out, "peak memory      {:.0} MB (VmHWM)", super::memory::proc_status_kb("VmHWM")? as f64 / 1024.0);
    let _ = writeln!(out, "integrity        {}", store.integrity_check()?);
    super::output::emit(&out)?;
    Ok(if first.has_problems() { 1 } else { 0 })
}

/// Phrases timed on the ingested data: common words of every synthetic kind, and a phrase
/// found nowhere.
const SEARCHES: [&str; 3] = ["config parser", "keep the cache", "zebra quokka"];

/// The 20 phrases `bench search` times: words and phrases of the synthetic kinds, code-ish
/// tokens, prefixes, and phrases found nowhere.
const TWENTY: [&str; 20] = [
    "config parser",
    "keep the cache",
    "zebra quokka",
    "error",
    "Traceback",
    "def ",
    "import",
    "test_",
    "ValueError",
    "assert",
    "self.",
    "return None",
    "__init__.py",
    "line 1",
    "2.0",
    "cache",
    "the",
    "fix the bug",
    "submit",
    "no such phrase anywhere",
];

/// `bench search`: each of [`TWENTY`] searched `rounds` times (the first round warms the
/// caches and is not counted), at most 50 hits each, as `trajan search` does.
fn search(db: &Location, rounds: usize) -> Result<i32> {
    let store = Store::open_at(db, true)?;
    store.ensure_search_index()?;
    let mut times = Vec::new();
    let mut out = String::new();
    for phrase in TWENTY {
        store.search(phrase, None, 50)?;
        let mut mine = Vec::new();
        for _ in 0..rounds.max(1) {
            let started = Instant::now();
            store.search(phrase, None, 50)?;
            mine.push(started.elapsed().as_secs_f64() * 1e3);
        }
        mine.sort_by(f64::total_cmp);
        let _ = writeln!(out, "search {phrase:<24} median {:.1} ms", mine[mine.len() / 2]);
        times.extend(mine);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
    let _ = writeln!(
        out,
        "{} searches on {}: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        times.len(),
        db.shown(),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    super::output::emit(&out)?;
    Ok(0)
}

/// User and system CPU seconds from a `/proc/.../stat` file (fields 14 and 15, in clock ticks
/// of 1/100 s); 0 when it cannot be read (not Linux).
fn cpu_seconds(stat: &str) -> f64 {
    let Ok(text) = std::fs::read_to_string(stat) else { return 0.0 };
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = text.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest.split_whitespace().skip(11).take(2).filter_map(|f| f.parse::<u64>().ok()).sum();
    ticks as f64 / 100.0
}

fn parse_size(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1e3),
        Some('M' | 'm') => (&s[..s.len() - 1], 1e6),
        Some('G' | 'g') => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    let n: f64 = num.parse().with_context(|| format!("bad size {s:?}: use e.g. 10M, 1G"))?;
    if n <= 0.0 {
        bail!("size must be positive");
    }
    Ok((n * mult) as u64)
}
