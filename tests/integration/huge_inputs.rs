//! Huge inputs, made at test time by generators (never committed): sparse files of gigabytes
//! (`File::set_len`: no disk used), a JSON-lines line of tens of megabytes, an observation of tens
//! of megabytes and a word of megabytes in it.
//!
//! Memory is measured in a fresh process: this test binary is run again on one helper
//! (`child_*`, ignored otherwise), which does the work and prints its peak memory (VmHWM from
//! /proc) with what it found, so tests running alongside do not count.

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use trajan::ingest::pipeline::{self, MAX_DOCUMENT, Options, Silent, UnitResult};

const CHILD: &str = "TRAJAN_HUGE_CHILD";

/// Peak memory of this process so far, in kB.
fn peak_kb() -> u64 {
    let status = must(std::fs::read_to_string("/proc/self/status"), "read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/self/status"))
}

/// Run the helper test `name` alone in a new process of this binary with `vars`; its report.
fn in_child(name: &str, vars: &[(&str, String)]) -> Value {
    let exe = must(std::env::current_exe(), "current_exe");
    // The test's whole name in this binary: its module's path without the crate's.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let full = format!("{module}::{name}");
    let out = must(
        Command::new(exe)
            .args([full.as_str(), "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .envs(vars.iter().map(|(k, v)| (*k, v)))
            .output(),
        "run the child",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("CHILD_REPORT ").map(|(_, report)| report))
        .unwrap_or_else(|| panic!("no report from {name}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    must(serde_json::from_str(line), "child report")
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} not set"))
}

/// The helper: ingest `DIR` into `DB` with the options in the environment; report each result
/// and the peak memory.
#[test]
#[ignore = "run by the tests of this file in a fresh process"]
fn child_ingest() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let mut opts = Options::default();
    if let Ok(v) = std::env::var("MAX_DOCUMENT") {
        opts.max_document = must(v.parse(), "MAX_DOCUMENT");
    }
    if let Ok(v) = std::env::var("STREAM_BYTES") {
        opts.stream_bytes = must(v.parse(), "STREAM_BYTES");
    }
    let mut store = must(trajan::store::Store::open(Path::new(&var("DB"))), "open store");
    let report = pipeline::ingest(&mut store, &[var("DIR").into()], &opts, &Silent);
    let results: Vec<Value> = report
        .results
        .iter()
        .map(|r| match r {
            UnitResult::Ingested { path, warnings, stats, .. } => {
                json!({"path": path, "ingested": stats.steps, "warnings": warnings})
            }
            UnitResult::Failed(e) => json!({"path": error_path(e), "error": e.to_string()}),
            other => json!({"path": result_path(other), "other": format!("{other:?}")}),
        })
        .collect();
    println!("CHILD_REPORT {}", json!({"peak_kb": peak_kb(), "results": results}));
}

/// The helper: build the search index of `DB` (the pass the first search after an ingest runs);
/// report the text indexed and the peak memory.
#[test]
#[ignore = "run by the tests of this file in a fresh process"]
fn child_index() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let store = must(trajan::store::Store::open(Path::new(&var("DB"))), "open store");
    let stats = must(store.build_search_index(&mut |_, _| {}), "index");
    println!("CHILD_REPORT {}", json!({"peak_kb": peak_kb(), "bytes": stats.bytes}));
}

/// The helper: search `DB` for `PHRASE`; report the hits and the peak memory.
#[test]
#[ignore = "run by the tests of this file in a fresh process"]
fn child_search() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let store = must(trajan::store::Store::open(Path::new(&var("DB"))), "open store");
    let before = peak_kb();
    let hits = must(store.search(&var("PHRASE"), None, 10), "search");
    let hits: Vec<Value> = hits.iter().map(|h| json!({"field": h.field, "snippet": h.snippet})).collect();
    println!("CHILD_REPORT {}", json!({"peak_kb": peak_kb(), "before_kb": before, "hits": hits}));
}

/// The child's result for `path`.
fn result<'a>(report: &'a Value, path: &Path) -> &'a Value {
    let results = report["results"].as_array().unwrap_or_else(|| panic!("no results: {report}"));
    results
        .iter()
        .find(|r| r["path"].as_str() == path.to_str())
        .unwrap_or_else(|| panic!("no result for {}: {report}", path.display()))
}

fn peak_mb(report: &Value) -> u64 {
    report["peak_kb"].as_u64().unwrap_or_else(|| panic!("no peak: {report}")) / 1024
}

/// A sparse file of `len` bytes whose first bytes are `head` (the rest reads as zeros).
fn sparse(path: &Path, head: &[u8], len: u64) {
    must(std::fs::write(path, head), "write");
    let file = must(std::fs::OpenOptions::new().write(true).open(path), "open");
    must(file.set_len(len), "set_len");
}

// ---------------------------------------------------------------------------------------------
// Files that must not be read at all

/// A 4 GiB file of zeros (a sparse file, a core dump) beside a good trajectory: binary at byte 0,
/// found from its first bytes; reading it whole took 8 GB and half a minute.
#[test]
fn a_sparse_four_gigabyte_file_of_zeros_is_refused_from_its_first_bytes() {
    let case = Case::new();
    let zeros = case.root.join("zeros.traj");
    sparse(&zeros, b"", 4 << 30);
    let report =
        in_child("child_ingest", &[("DIR", case.root.display().to_string()), ("DB", case.db.display().to_string())]);
    assert_eq!(
        result(&report, &zeros)["error"],
        format!("{}: byte 0: binary content (NUL byte): not a trajectory or a test log", zeros.display())
    );
    assert_eq!(result(&report, &case.good_path())["ingested"], 1);
    assert!(peak_mb(&report) < 100, "peak {} MB", peak_mb(&report));
}

/// A JSON document larger than the limit is an error naming its size and the limit, without
/// being read. (Its first 8 KiB are text, so only the limit can stop it.)
#[test]
fn a_file_over_the_limit_for_one_document_is_refused_naming_both_sizes() {
    let case = Case::new();
    let big = case.root.join("huge__run-1.traj");
    let mut head = b"{\"trajectory\": []}\n".to_vec();
    head.resize(16 << 10, b' ');
    sparse(&big, &head, MAX_DOCUMENT + 1);
    let report =
        in_child("child_ingest", &[("DIR", case.root.display().to_string()), ("DB", case.db.display().to_string())]);
    assert_eq!(
        result(&report, &big)["error"],
        format!(
            "{}: 2.0 GiB ({} bytes) is over the limit of 2.0 GiB ({MAX_DOCUMENT} bytes) for a file read whole \
             (a JSON document is parsed in memory; JSON-lines files are read a line at a time)",
            big.display(),
            MAX_DOCUMENT + 1
        )
    );
    assert_eq!(result(&report, &case.good_path())["ingested"], 1);
    assert!(peak_mb(&report) < 100, "peak {} MB", peak_mb(&report));
}

// ---------------------------------------------------------------------------------------------
// A JSON-lines line of 64 MB

/// `output.jsonl`: an OpenHands instance whose command printed `observation`, then a small one.
fn openhands_jsonl(observation: &str) -> String {
    let line = |id: &str, content: &str| {
        json!({
            "instance_id": id,
            "instruction": "do it",
            "history": [
                {"id": 1, "source": "agent", "message": "Running command: cat big", "action": "run",
                 "args": {"command": "cat big"}},
                {"id": 2, "source": "environment", "cause": 1, "observation": "run", "content": content,
                 "extras": {"command": "cat big", "exit_code": 0}}
            ]
        })
        .to_string()
    };
    format!("{}\n{}\n", line("big__line-1", observation), line("small__line-2", "short"))
}

/// Log output of `len` bytes: numbered lines of words, `marker` at the end.
fn log_text(len: usize, marker: &str) -> String {
    let mut text = String::with_capacity(len + 64);
    let mut i = 0u64;
    while text.len() + marker.len() + 80 < len {
        text.push_str(&format!("{i:09} the tool printed one more line of log output here\n"));
        i += 1;
    }
    text.push_str(marker);
    text
}

/// A document is held about three times over while it is parsed and written: the model's
/// string, SQLite's copy of the bound text and the record made of it, plus SQLite's page cache
/// (here the text's own pages). Words repeated, so the full-text index adds little. A bound copy
/// kept until the next insert made it four times (343 MB here against 279).
#[test]
fn ingesting_a_sixty_four_megabyte_observation_holds_it_about_three_times() {
    let case = Case::new();
    let observation = "the tool printed one more line of log output here\n".repeat((64 << 20) / 50);
    let text = swe_agent_traj(&observation);
    let path = case.write("rep__obs-1.traj", text.as_bytes());
    let report =
        in_child("child_ingest", &[("DIR", case.root.display().to_string()), ("DB", case.db.display().to_string())]);
    assert_eq!(result(&report, &path)["ingested"], 1, "{report}");
    let bound = ((4 * text.len() as u64) >> 20) + 32;
    assert!(peak_mb(&report) < bound, "peak {} MB, bound {bound} MB", peak_mb(&report));
}

/// A line over the limit is read through and skipped with a warning naming it, never held: the
/// lines after it are kept.
#[test]
fn a_jsonl_line_over_the_limit_is_skipped_without_being_held() {
    let case = Case::new();
    let path = case.write("output.jsonl", openhands_jsonl(&log_text(64 << 20, "endmarker")).as_bytes());
    let line_len = must(std::fs::read_to_string(&path), "read").find('\n').map_or(0, |i| i + 1);
    let report = in_child(
        "child_ingest",
        &[
            ("DIR", case.root.display().to_string()),
            ("DB", case.db.display().to_string()),
            ("STREAM_BYTES", "0".into()),
            ("MAX_DOCUMENT", (8 << 20).to_string()),
        ],
    );
    let r = result(&report, &path);
    assert_eq!(r["ingested"], 1, "{r}");
    assert_eq!(
        r["warnings"],
        json!([format!(
            "{}: line 1: {:.1} MiB ({line_len} bytes) is over the limit of 8.0 MiB (8388608 bytes) for one line: the line is skipped",
            path.display(),
            line_len as f64 / (1 << 20) as f64
        )])
    );
    assert!(peak_mb(&report) < 60, "peak {} MB", peak_mb(&report));
}

// ---------------------------------------------------------------------------------------------
// Searching a 64 MB observation

/// The search reads the texts in pieces: finding a word at the end of a 64 MB observation (or in
/// a 4 MB word) costs a few megabytes, never the observation, and the snippet is a bounded window.
#[test]
fn searching_a_sixty_four_megabyte_observation_holds_a_window_of_it() {
    let case = Case::new();
    let giant = format!("iVBORw0KGgo{}", "A".repeat(4 << 20));
    let observation = log_text(64 << 20, &format!("zqxendmarker and then {giant} done"));
    let path = case.write("big__obs-1.traj", swe_agent_traj(&observation).as_bytes());
    let ingest =
        in_child("child_ingest", &[("DIR", case.root.display().to_string()), ("DB", case.db.display().to_string())]);
    assert_eq!(result(&ingest, &path)["warnings"], json!([]), "{ingest}");
    // The search index is built after the write, by the first search: here in a process of its
    // own, so the searches below are measured alone.
    let index = in_child("child_index", &[("DB", case.db.display().to_string())]);
    assert!(index["bytes"].as_u64().is_some_and(|b| b > 64 << 20), "{index}");
    let vars = |phrase: &str| [("DB", case.db.display().to_string()), ("PHRASE", phrase.to_string())];

    let found = in_child("child_search", &vars("zqxendmarker"));
    assert_eq!(found["hits"][0]["field"], "observation", "{found}");
    let snippet = found["hits"][0]["snippet"].as_str().unwrap_or_default();
    assert!(snippet.starts_with("...") && snippet.contains("here [zqxendmarker] and then iVBOR"), "{snippet}");
    assert!(peak_mb(&found) < 64, "peak {} MB", peak_mb(&found));

    let word = in_child("child_search", &vars("ivborw0kggo"));
    let snippet = word["hits"][0]["snippet"].as_str().unwrap_or_default();
    assert!(snippet.contains("[iVBORw0KGgoAAAA") && snippet.ends_with("AAA…]..."), "{snippet}");
    assert!(snippet.len() < 400, "{} bytes", snippet.len());
    assert!(peak_mb(&word) < 64, "peak {} MB", peak_mb(&word));
}

// ---------------------------------------------------------------------------------------------
// Shell commands the replay of shell edits reads (issue 24)

/// A mini-swe-agent 1.1 run of one shell step (action, output).
fn mini_step(instance: &str, action: &str, output: &str) -> String {
    let messages = json!([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": format!("THOUGHT: x\n\n```bash\n{action}\n```")},
        {"role": "user", "content": format!("<returncode>0</returncode>\n<output>\n{output}</output>")},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}}
    ]);
    json!({"trajectory_format": "mini-swe-agent-1.1", "messages": messages, "instance_id": instance,
           "info": {"exit_status": "Submitted", "submission": ""}})
    .to_string()
}

/// An ATIF trajectory whose one agent step makes `calls` tool calls.
fn atif_calls(calls: usize) -> String {
    let calls: Vec<Value> = (0..calls)
        .map(|i| {
            json!({"tool_call_id": format!("c{i}"), "function_name": "bash_command",
                        "arguments": {"keystrokes": "ls\n", "duration": 0.1}})
        })
        .collect();
    json!({"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "terminus-2", "version": "2", "model_name": "m"},
           "steps": [{"step_id": 1, "source": "user", "message": "task"},
                     {"step_id": 2, "source": "agent", "message": "m", "tool_calls": calls,
                      "observation": {"results": [{"content": "x"}]}}]})
    .to_string()
}

/// Files read whole cost a bounded multiple of their size, however their text is shaped: a
/// `cat` of millions of short lines, a here-document of as many, a `sed` of a million `-e`, an
/// ATIF step of 60,000 tool calls. They cost 14-100 times their size before the replay was
/// bounded (one known line cost about 100 bytes, one shell word about 64, one tool call's
/// arguments a JSON map each, copied twice).
#[test]
fn files_whose_commands_are_millions_of_short_pieces_cost_a_bounded_multiple_of_their_size() {
    let short: String = (0..2_000_000).map(|i| format!("x{}\n", i % 10)).collect();
    let cases: [(&str, String, u64); 4] = [
        ("cat__short-1.traj.json", mini_step("cat__short-1", "cat big.py", &short), 8),
        (
            "heredoc__short-1.traj.json",
            mini_step("heredoc__short-1", &format!("cat <<'EOF' > big.py\n{short}EOF"), ""),
            8,
        ),
        (
            "sed__many-1.traj.json",
            mini_step("sed__many-1", &format!("sed -i {}f.py", "-e s/a/b/ ".repeat(500_000)), ""),
            8,
        ),
        ("atif__calls-1.json", atif_calls(60_000), 16),
    ];
    for (name, text, times) in cases {
        let case = Case::new();
        let path = case.write(name, text.as_bytes());
        let report = in_child(
            "child_ingest",
            &[("DIR", case.root.display().to_string()), ("DB", case.db.display().to_string())],
        );
        assert_eq!(result(&report, &path)["ingested"].as_u64().map(|n| n > 0), Some(true), "{report}");
        let size_mb = text.len() as u64 >> 20;
        let bound = 40 + times * size_mb;
        eprintln!("{name}: {size_mb} MB, peak {} MB, bound {bound} MB", peak_mb(&report));
        assert!(peak_mb(&report) < bound, "{name}: {size_mb} MB, peak {} MB, bound {bound} MB", peak_mb(&report));
    }
}
