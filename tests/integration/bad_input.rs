//! Bad input: each case sits in a folder next to one good trajectory. Each must give a clear
//! error naming the file (and the line or byte where that means something), never a panic, keep
//! the good run, leave the database sound (`PRAGMA integrity_check`), and give the same result
//! when the folder is ingested again.

use crate::common::*;
use serde_json::value::RawValue;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use trajan::ingest::pipeline::UnitResult;
use trajan::model::Format;
use trajan::store::read::RunFilter;

// ---------------------------------------------------------------------------------------------
// Empty files

#[test]
fn empty_file_is_reported_as_empty() {
    let case = Case::new();
    let bad = case.write("empty.traj", b"");
    let message = assert_rejected(&case, &bad);
    assert_eq!(message, format!("{}: empty file", bad.display()));
}

#[test]
fn empty_files_that_are_not_inputs_are_skipped() {
    let case = Case::new();
    case.write("pkg/__init__.py", b"");
    case.write("notes.md", b"");
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    assert_eq!(report.skipped(), 2, "{:#?}", report.results);
    assert!(!report.has_problems(), "{:#?}", report.results);
    assert_integrity(&store);
}

#[test]
fn whitespace_only_file_is_reported_as_empty() {
    let case = Case::new();
    let bad = case.write("blank.json", b"  \n\t\r\n   \n");
    let message = assert_rejected(&case, &bad);
    assert_eq!(message, format!("{}: empty file", bad.display()));
}

// ---------------------------------------------------------------------------------------------
// Truncated JSON

#[test]
fn json_cut_mid_string_names_line_and_column() {
    let case = Case::new();
    let full = serde_json::to_string_pretty(&serde_json::json!({
        "environment": "swe_main",
        "trajectory": [{
            "action": "cat README.md",
            "observation": "The quick brown fox jumps over the lazy dog",
            "thought": "read it",
            "response": "read it",
            "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/r\"}"
        }],
        "history": [],
        "info": {"exit_status": "submitted"}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    // Cut inside the observation string, after "The quick br".
    let cut = full.find("brown").unwrap_or_else(|| panic!("no brown")) + 2;
    let text = &full[..cut];
    let bad = case.write("cut__mid-1.traj", text.as_bytes());
    let message = assert_rejected(&case, &bad);
    // serde_json reports the end of the input: the last line, its last column (1-based).
    let line = text.matches('\n').count() + 1;
    let column = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
    assert!(line > 1, "the fixture must be multi-line to test line numbers");
    assert_eq!(line_column(&message, &bad), (line, column), "{message}");
    assert!(message.contains("EOF while parsing a string"), "{message}");
    // Nothing of the cut file reached the store (checked in assert_rejected), not even its task.
    let store = case.open();
    assert!(instances(&store).iter().all(|i| i != "cut__mid-1"));
}

// ---------------------------------------------------------------------------------------------
// Truncated trajectories: a real file cut mid-write keeps the complete steps before the cut. The
// expectation is computed here from the whole file (serde_json's raw values give each step's
// end offset), not by the salvage code.

/// Where `part` (a slice of `text`) starts in it.
fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// The raw value of a top-level member of a JSON object.
fn member<'a>(text: &'a str, key: &str) -> &'a RawValue {
    let top: HashMap<&str, &RawValue> = must(serde_json::from_str(text), "a JSON object");
    top.get(key).copied().unwrap_or_else(|| panic!("no {key:?} member"))
}

/// The items of a JSON array (a slice of `text`), each with the offset just past it in `text`.
fn items<'a>(text: &'a str, array: &'a str) -> Vec<(serde_json::Value, usize)> {
    let raw: Vec<&RawValue> = must(serde_json::from_str(array), "a JSON array");
    raw.into_iter()
        .map(|r| (must(serde_json::from_str(r.get()), "an item"), offset_in(text, r.get()) + r.get().len()))
        .collect()
}

/// SWE-agent: a step is an item of `trajectory`.
fn swe_agent_step_ends(text: &str) -> Vec<usize> {
    items(text, member(text, "trajectory").get()).into_iter().map(|(_, end)| end).collect()
}

/// mini-swe-agent (v1, text actions): a step is an assistant message and the message that
/// answers it.
fn mini_swe_agent_step_ends(text: &str) -> Vec<usize> {
    let messages = items(text, member(text, "messages").get());
    let assistant = |i: usize| messages[i].0["role"] == "assistant";
    (0..messages.len())
        .filter(|i| assistant(*i))
        .map(|i| messages.get(i + 1).map_or(usize::MAX, |(_, end)| *end))
        .collect()
}

/// OpenHands: a step is an agent action other than `system`, with the observation whose
/// `cause` is its id when there is one (MANIFEST: "agent actions other than `system`").
fn openhands_step_ends(text: &str, events: &str) -> Vec<usize> {
    let events = items(text, events);
    events
        .iter()
        .filter(|(e, _)| e["source"] == "agent" && e["action"].is_string() && e["action"] != "system")
        .map(|(action, end)| {
            let answer = events.iter().filter(|(o, _)| o["observation"].is_string() && o["cause"] == action["id"]);
            answer.map(|(_, e)| *e).fold(*end, usize::max)
        })
        .collect()
}

/// Cut offsets: every tenth of the file, its last byte, and around a few step ends (on the
/// closing brace, just after it, after the comma).
fn cut_points(text: &str, ends: &[usize]) -> Vec<usize> {
    let len = text.trim_end().len();
    let mut cuts: BTreeSet<usize> = (1..10).map(|k| len * k / 10).collect();
    cuts.insert(len - 1);
    for end in [ends.first(), ends.get(ends.len() / 2), ends.last()].into_iter().flatten() {
        cuts.extend([end - 1, *end, end + 1, end + 2].into_iter().filter(|c| *c < len));
    }
    cuts.into_iter().collect()
}

/// Cut `text` at each offset into its own file (`cut-<offset><ext>`) beside the good trajectory
/// and the whole file, and ingest the folder once. Each cut keeps exactly the steps whose end
/// comes before it — the whole file's first steps, unchanged — with one warning naming the
/// byte where it ends; or, with no step complete, fails naming that byte. Returns how many
/// cuts kept steps and how many failed.
fn check_cuts(text: &str, ext: &str, ends: &[usize], cuts: &[usize]) -> (usize, usize) {
    assert!(ends.windows(2).all(|w| w[0] < w[1]), "step ends in order: {ends:?}");
    let case = Case::new();
    let whole = case.write(&format!("whole{ext}"), text.as_bytes());
    let paths: Vec<(usize, PathBuf)> =
        cuts.iter().map(|&cut| (cut, case.write(&format!("cut-{cut:08}{ext}"), &text.as_bytes()[..cut]))).collect();
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    assert!(matches!(result_for(&report, &whole), UnitResult::Ingested { warnings, .. } if warnings.is_empty()));
    assert!(report.has_problems(), "a truncated file lost part of its content");
    let runs = must(store.list_runs(RunFilter::default()), "list_runs");
    let steps_of = |path: &Path| {
        let run = runs.iter().find(|r| Path::new(&r.source) == path).unwrap_or_else(|| panic!("no run of {path:?}"));
        must(store.run_detail(run.id, None), "run_detail").step_list
    };
    let whole_steps = steps_of(&whole);
    assert_eq!(whole_steps.len(), ends.len(), "the whole file's steps");
    let (mut kept, mut failed) = (0, 0);
    for (cut, path) in &paths {
        let expected = ends.iter().filter(|end| **end <= *cut).count();
        if expected == 0 {
            let message = failure_for(&report, path);
            assert!(message.starts_with(&format!("{}: ", path.display())), "{message}");
            assert!(message.contains(&format!("the file is truncated at byte {cut}")), "{message}");
            failed += 1;
            continue;
        }
        let noun = if expected == 1 { "step" } else { "steps" };
        match result_for(&report, path) {
            UnitResult::Ingested { stats, warnings, .. } => {
                assert_eq!(stats.steps, expected, "cut at byte {cut}: {warnings:?}");
                let warning = format!(
                    "{}: truncated at byte {cut}: kept the {expected} complete {noun} before the cut",
                    path.display()
                );
                assert_eq!(warnings, &vec![warning]);
            }
            other => panic!("cut at byte {cut}: expected the complete steps to be kept, got {other:#?}"),
        }
        let steps = steps_of(path);
        assert_eq!(steps.len(), expected);
        for (cut_step, full) in steps.iter().zip(&whole_steps) {
            assert_eq!(
                (&cut_step.thought, &cut_step.action, &cut_step.observation),
                (&full.thought, &full.action, &full.observation),
                "cut at byte {cut}: step {} differs from the whole file's",
                full.index
            );
        }
        kept += 1;
    }
    assert_integrity(&store);
    drop(store);
    // Again: nothing changed, the same warnings are repeated.
    let (again, store) = case.ingest();
    assert_eq!(again.unchanged(), kept + 2, "{:#?}", again.results);
    assert!(again.has_problems());
    assert_integrity(&store);
    (kept, failed)
}

fn corpus_text(rel: &str) -> String {
    must(std::fs::read_to_string(corpus().join(rel)), rel)
}

#[test]
fn truncated_swe_agent_1_0_keeps_the_complete_steps_before_each_cut() {
    let text = corpus_text("swe-agent-1.0/marshmallow-code__marshmallow-1867.traj");
    let ends = swe_agent_step_ends(&text);
    assert_eq!(ends.len(), 13, "MANIFEST: 13 steps");
    let (kept, failed) = check_cuts(&text, ".traj", &ends, &cut_points(&text, &ends));
    assert!(kept > 5 && failed > 0, "kept {kept}, failed {failed}");
}

#[test]
fn truncated_swe_agent_0_x_and_1_1_keep_the_complete_steps_before_each_cut() {
    for rel in ["swe-agent-0.x/pydicom__pydicom-1458.traj", "swe-agent-1.1/pytest-dev__pytest-6202.traj"] {
        let text = corpus_text(rel);
        let ends = swe_agent_step_ends(&text);
        let len = text.len();
        let cuts = [len / 20, len / 5, len / 2, len * 4 / 5, ends[ends.len() - 1] + 1, len - 3];
        let (kept, _) = check_cuts(&text, ".traj", &ends, &cuts);
        assert!(kept >= 4, "{rel}: kept {kept}");
    }
}

#[test]
fn truncated_mini_swe_agent_keeps_the_turns_whose_reply_was_written() {
    let text = corpus_text("mini-swe-agent-1/django__django-11163/django__django-11163.traj.json");
    let ends = mini_swe_agent_step_ends(&text);
    assert_eq!(ends.len(), 13, "MANIFEST: 13 assistant turns");
    let mut cuts = cut_points(&text, &ends);
    // Just after an assistant message whose reply is not written yet: that turn goes.
    let messages = items(&text, member(&text, "messages").get());
    let asked = messages.iter().filter(|(m, _)| m["role"] == "assistant").nth(5).map(|(_, end)| *end);
    cuts.extend(asked.map(|end| [end, end + 2]).into_iter().flatten());
    let (kept, failed) = check_cuts(&text, ".traj.json", &ends, &cuts);
    assert!(kept > 5 && failed > 0, "kept {kept}, failed {failed}");
}

#[test]
fn truncated_openhands_event_list_keeps_the_answered_actions() {
    let text = corpus_text("openhands-events/basic.json");
    let ends = openhands_step_ends(&text, &text);
    assert_eq!(ends.len(), 2, "an edit answered by an observation, then a finish");
    let mut cuts = cut_points(&text, &ends);
    // After the edit action, before its observation: the edit is not a complete step.
    let events = items(&text, &text);
    cuts.extend([events[1].1, events[1].1 + 3, events[2].1 - 1]);
    let (kept, failed) = check_cuts(&text, ".json", &ends, &cuts);
    assert!(kept > 2 && failed > 2, "kept {kept}, failed {failed}");
}

#[test]
fn truncated_openhands_instance_keeps_the_complete_events_of_its_history() {
    // One instance of an evaluation output as a single JSON document, cut inside its history
    // (and after it: then its test result is kept too).
    let jsonl = corpus_text("openhands/multi_swe_bench_output.jsonl");
    let text = jsonl.lines().next().unwrap_or_else(|| panic!("no line"));
    let ends = openhands_step_ends(text, member(text, "history").get());
    assert_eq!(ends.len(), 23, "MANIFEST: 23 agent actions other than `system`");
    let (kept, failed) = check_cuts(text, ".json", &ends, &cut_points(text, &ends));
    assert!(kept > 5 && failed > 0, "kept {kept}, failed {failed}");
}

#[test]
fn truncated_jsonl_keeps_the_complete_lines_and_names_the_cut_line() {
    let case = Case::new();
    let jsonl = corpus_text("openhands/multi_swe_bench_output.jsonl");
    let third = jsonl.match_indices('\n').nth(1).map_or(0, |(i, _)| i + 1);
    let cut = third + (jsonl.len() - third) / 2;
    let path = case.write("output.jsonl", &jsonl.as_bytes()[..cut]);
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    match result_for(&report, &path) {
        UnitResult::Ingested { stats, warnings, .. } => {
            assert_eq!(stats.runs, 2, "the two complete lines");
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert!(warnings[0].starts_with(&format!("{}: line 3, column ", path.display())), "{}", warnings[0]);
            assert!(
                warnings[0].ends_with("(the file is truncated inside this line: the line is not kept)"),
                "{}",
                warnings[0]
            );
        }
        other => panic!("expected the complete lines to be kept: {other:#?}"),
    }
    assert_eq!(instances(&store).len(), 3, "{:?}", instances(&store));
    assert!(report.has_problems());
    assert_integrity(&store);
}

#[test]
fn truncated_through_a_multibyte_character_warns_once() {
    let case = Case::new();
    let step = |i: usize| serde_json::json!({"action": format!("echo {i}"), "observation": "caf\u{e9} \u{1f600} na\u{ef}ve", "thought": "t"});
    // Written in SWE-agent's order (`json!` would sort `info` first).
    let full =
        format!(r#"{{"trajectory": [{}, {}, {}], "info": {{"exit_status": "submitted"}}}}"#, step(0), step(1), step(2));
    // Cut inside the emoji of the third step's observation.
    let emoji = full.rmatch_indices('\u{1f600}').next().map_or(0, |(i, _)| i);
    let bytes = &full.as_bytes()[..emoji + 2];
    assert!(std::str::from_utf8(bytes).is_err());
    let path = case.write("cut__emoji-1.traj", bytes);
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    match result_for(&report, &path) {
        UnitResult::Ingested { stats, warnings, .. } => {
            assert_eq!(stats.steps, 2);
            let expected = format!(
                "{}: truncated at byte {}: kept the 2 complete steps before the cut",
                path.display(),
                bytes.len()
            );
            assert_eq!(warnings, &vec![expected], "no separate invalid UTF-8 warning for the cut character");
        }
        other => panic!("{other:#?}"),
    }
    let run =
        must(store.list_runs(RunFilter::default()), "list_runs").into_iter().find(|r| r.instance_id == "cut__emoji-1");
    let run = run.unwrap_or_else(|| panic!("no run"));
    assert_eq!(run.exit_status, None, "`info` came after the cut: outcome unknown");
    assert_integrity(&store);
}

#[test]
fn cli_ingest_of_a_truncated_file_warns_and_exits_1() {
    let case = Case::new();
    let text = corpus_text("swe-agent-1.0/marshmallow-code__marshmallow-1867.traj");
    let ends = swe_agent_step_ends(&text);
    let cut = ends[3] + 100;
    let path = case.write("marshmallow-code__marshmallow-1867.traj", &text.as_bytes()[..cut]);
    for _ in 0..2 {
        let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "a truncated file lost part of its content: {stderr}");
        let expected =
            format!("warning: {}: truncated at byte {cut}: kept the 4 complete steps before the cut", path.display());
        assert!(stderr.lines().any(|l| l == expected), "missing {expected:?} in:\n{stderr}");
        assert!(!stderr.contains("error:"), "{stderr}");
    }
    let out = case.cli(&[OsStr::new("runs"), OsStr::new("--json")]);
    let runs: serde_json::Value = must(serde_json::from_slice(&out.stdout), "runs --json output");
    let run = runs.as_array().and_then(|r| r.iter().find(|r| r["instance_id"] == "marshmallow-code__marshmallow-1867"));
    let run = run.unwrap_or_else(|| panic!("no run in {runs}"));
    assert_eq!(
        (run["steps"].as_i64(), &run["exit_status"], &run["resolved"]),
        (Some(4), &serde_json::Value::Null, &serde_json::Value::Null)
    );
}

// ---------------------------------------------------------------------------------------------
// Binary garbage

/// Deterministic pseudo-random bytes (no NUL before `nul_at`, a NUL at `nul_at`).
fn garbage(len: usize, nul_at: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    for b in &mut out[..nul_at] {
        if *b == 0 {
            *b = 0xa5;
        }
    }
    out[nul_at] = 0;
    out
}

#[test]
fn binary_garbage_names_the_byte_offset() {
    let case = Case::new();
    let bytes = garbage(64 * 1024, 1234);
    assert!(std::str::from_utf8(&bytes).is_err(), "the fixture must not be text");
    let bad = case.write("garbage.traj", &bytes);
    let message = assert_rejected(&case, &bad);
    assert!(message.starts_with(&format!("{}: byte 1234: ", bad.display())), "{message}");
    assert!(message.contains("binary"), "{message}");
}

#[test]
fn binary_garbage_without_nul_is_still_an_error_naming_a_byte() {
    let case = Case::new();
    let mut bytes = garbage(20_000, 0);
    for b in &mut bytes {
        if *b == 0 {
            *b = 0xa5;
        }
    }
    let first_invalid = match std::str::from_utf8(&bytes) {
        Err(e) => e.valid_up_to(),
        Ok(_) => panic!("the fixture must not be UTF-8"),
    };
    let bad = case.write("noisy.traj", &bytes);
    let message = assert_rejected(&case, &bad);
    assert!(message.starts_with(&format!("{}: byte {first_invalid}: ", bad.display())), "{message}");
}

#[test]
fn corrupt_gzip_is_an_error_naming_the_member_not_a_crash() {
    // A gzip file is read as the file inside it (tests/archives.rs); one whose data is corrupt
    // (`1f 8b 08 00` and garbage) is an error naming the archive and its member.
    let case = Case::new();
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    bytes.extend(garbage(4096, 100));
    let bad = case.write("some__run-1.traj.gz", &bytes);
    let member = std::path::PathBuf::from(format!("{}!/some__run-1.traj", bad.display()));
    let message = assert_rejected(&case, &member);
    assert!(message.contains("corrupt deflate stream"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Invalid UTF-8 inside strings

/// A valid SWE-agent file whose observation holds a 0xFF byte; returns the bytes and the offset
/// of that byte.
fn traj_with_invalid_utf8(prefix: &[u8]) -> (Vec<u8>, usize) {
    let text = swe_agent_traj("before @@BAD@@ after zebrafish");
    let (before, after) = text.split_once("@@BAD@@").unwrap_or_else(|| panic!("no placeholder"));
    let mut bytes = prefix.to_vec();
    bytes.extend_from_slice(before.as_bytes());
    let offset = bytes.len();
    bytes.push(0xff);
    bytes.extend_from_slice(after.as_bytes());
    (bytes, offset)
}

fn check_invalid_utf8_is_replaced(prefix: &[u8]) {
    let case = Case::new();
    let (bytes, offset) = traj_with_invalid_utf8(prefix);
    let path = case.write("utf8__bad-1.traj", &bytes);
    let expected_warning = format!("{}: byte {offset}: invalid UTF-8 replaced with U+FFFD", path.display());

    let (report, store) = case.ingest();
    assert_eq!(report.results.len(), 2, "{:#?}", report.results);
    assert_good(&report, &case, true);
    match result_for(&report, &path) {
        UnitResult::Ingested { format, stats, warnings, .. } => {
            assert_eq!(*format, Format::SweAgent);
            assert_eq!((stats.runs, stats.steps), (1, 1));
            assert_eq!(warnings, &vec![expected_warning.clone()]);
        }
        other => panic!("expected the file to be ingested with a warning: {other:#?}"),
    }
    assert!(report.has_problems(), "a replaced byte is a problem the exit status must show");
    assert_eq!(instances(&store), vec![GOOD_INSTANCE, "utf8__bad-1"]);
    assert_integrity(&store);

    // The text around the bad byte is stored, readable and searchable.
    let runs = must(store.list_runs(RunFilter::default()), "list_runs");
    let run = runs.iter().find(|r| r.instance_id == "utf8__bad-1").unwrap_or_else(|| panic!("no run"));
    let detail = must(store.run_detail(run.id, None), "run_detail");
    assert_eq!(detail.step_list.len(), 1);
    assert_eq!(detail.step_list[0].observation, "before \u{fffd} after zebrafish");
    let hits = must(store.search("after zebrafish", None, 10), "search");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!((hits[0].run_id, hits[0].step, hits[0].field), (run.id, 0, "observation"));
    drop(store);

    // Second ingest: unchanged, the warning is repeated, nothing duplicated.
    let (again, store) = case.ingest();
    assert_good(&again, &case, false);
    match result_for(&again, &path) {
        UnitResult::Unchanged { warnings, .. } => assert_eq!(warnings, &vec![expected_warning]),
        other => panic!("expected unchanged: {other:#?}"),
    }
    assert!(again.has_problems());
    assert_eq!(instances(&store), vec![GOOD_INSTANCE, "utf8__bad-1"]);
    assert_integrity(&store);
}

#[test]
fn invalid_utf8_inside_a_string_is_replaced_and_warned_with_its_byte() {
    check_invalid_utf8_is_replaced(b"");
}

#[test]
fn invalid_utf8_after_a_bom_names_the_byte_in_the_file() {
    check_invalid_utf8_is_replaced(b"\xef\xbb\xbf");
}

// ---------------------------------------------------------------------------------------------
// What Python's json.dumps writes that JSON does not have: NaN, Infinity, -Infinity, numbers out
// of range, lone surrogates

#[test]
fn python_nan_infinity_and_lone_surrogates_are_read_with_warnings() {
    let case = Case::new();
    let text = concat!(
        "{\"trajectory\": [{\"action\": \"ls\", \"observation\": \"smile \\ud83d here\", \"thought\": \"t\",\n",
        "  \"response\": \"t\", \"state\": \"{}\"}], \"history\": [],\n",
        "  \"info\": {\"exit_status\": \"submitted\", \"model_stats\": {\"instance_cost\": NaN, \"tokens_sent\": 1e400,\n",
        "  \"tokens_received\": Infinity, \"api_calls\": -Infinity}}}\n"
    );
    let path = case.write("py__dumps-1.traj", text.as_bytes());
    let (report, store) = case.ingest();
    assert_good(&report, &case, true);
    let at = |needle: &str| place(text, needle, &path);
    let expected = vec![
        format!("{}: lone surrogate \\ud83d read as U+FFFD", at("\\ud83d")),
        format!("{}: NaN read as null (JSON has no NaN or Infinity) (3 such values in the file)", at("NaN")),
        format!("{}: number 1e400 out of range, read as null", at("1e400")),
    ];
    match result_for(&report, &path) {
        UnitResult::Ingested { format, stats, warnings, .. } => {
            assert_eq!(*format, Format::SweAgent);
            assert_eq!((stats.runs, stats.steps), (1, 1));
            assert_eq!(warnings, &expected);
        }
        other => panic!("expected the file to be ingested with warnings: {other:#?}"),
    }
    let run = must(store.list_runs(RunFilter::default()), "list_runs")
        .into_iter()
        .find(|r| r.instance_id == "py__dumps-1")
        .unwrap_or_else(|| panic!("no run"));
    assert_eq!((run.cost, run.exit_status.as_deref()), (None, Some("submitted")));
    let detail = must(store.run_detail(run.id, None), "run_detail");
    assert_eq!(detail.step_list[0].observation, "smile \u{fffd} here");
    drop(store);
    let (again, _) = case.ingest();
    match result_for(&again, &path) {
        UnitResult::Unchanged { warnings, .. } => assert_eq!(warnings, &expected),
        other => panic!("expected unchanged: {other:#?}"),
    }
}

/// A cut file with a NaN before the cut: read leniently, then the complete steps kept.
#[test]
fn a_truncated_file_with_nan_keeps_its_complete_steps() {
    let case = Case::new();
    let step = |obs: &str| {
        format!(
            "{{\"action\": \"ls\", \"observation\": \"{obs}\", \"thought\": \"t\", \"response\": \"t\", \"execution_time\": NaN}}"
        )
    };
    let whole = format!("{{\"trajectory\": [{}, {}], \"history\": [], \"info\": {{}}}}", step("one"), step("two"));
    let cut = &whole[..whole.find("two").unwrap_or_else(|| panic!("no two"))];
    let path = case.write("cut__nan-1.traj", cut.as_bytes());
    let (report, _) = case.ingest();
    match result_for(&report, &path) {
        UnitResult::Ingested { stats, warnings, .. } => {
            assert_eq!(stats.steps, 1);
            assert_eq!(
                warnings,
                &vec![
                    format!("{}: NaN read as null (JSON has no NaN or Infinity)", place(cut, "NaN", &path)),
                    format!(
                        "{}: truncated at byte {}: kept the 1 complete step before the cut",
                        path.display(),
                        cut.len()
                    ),
                ]
            );
        }
        other => panic!("expected the complete step to be kept: {other:#?}"),
    }
}

/// `"<path>: line L, column C"` of the first `needle` in `text` (1-based; columns in bytes).
fn place(text: &str, needle: &str, path: &Path) -> String {
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle:?}"));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    format!("{}: line {}, column {}", path.display(), text[..at].matches('\n').count() + 1, at - line_start + 1)
}

/// JSON lines: each line is read leniently on its own, whole or streamed, and the warning names
/// the line.
#[test]
fn python_values_in_json_lines_keep_their_line() {
    let line = |id: &str, cost: &str, instruction: &str| {
        format!(
            "{{\"instance_id\": \"{id}\", \"instruction\": \"{instruction}\", \"metrics\": {{\"accumulated_cost\": {cost}}}, \"history\": [{{\"id\": 1, \"source\": \"agent\", \"action\": \"run\", \"args\": {{\"command\": \"ls\"}}}}]}}\n"
        )
    };
    let text = format!("{}{}{}", line("oh-1", "0.5", "a"), line("oh-2", "NaN", "b"), line("oh-3", "1", "c \\udc00"));
    for stream_bytes in [u64::MAX, 0] {
        let case = Case::new();
        let path = case.write("output.jsonl", text.as_bytes());
        let mut store = case.open();
        let opts = trajan::ingest::pipeline::Options { stream_bytes, ..Default::default() };
        let report = trajan::ingest::pipeline::ingest(
            &mut store,
            std::slice::from_ref(&case.root),
            &opts,
            &trajan::ingest::pipeline::Silent,
        );
        match result_for(&report, &path) {
            UnitResult::Ingested { stats, warnings, .. } => {
                assert_eq!(stats.runs, 3, "streamed: {}", stream_bytes == 0);
                assert_eq!(
                    warnings,
                    &vec![
                        format!("{}: NaN read as null (JSON has no NaN or Infinity)", place(&text, "NaN", &path)),
                        format!("{}: lone surrogate \\udc00 read as U+FFFD", place(&text, "\\udc00", &path)),
                    ]
                );
            }
            other => panic!("expected the file to be ingested with warnings: {other:#?}"),
        }
        assert_eq!(instances(&store), vec![GOOD_INSTANCE, "oh-1", "oh-2", "oh-3"]);
        assert_integrity(&store);
    }
}

// ---------------------------------------------------------------------------------------------
// File names that are not UTF-8

/// Two Latin-1 names that differ only in their invalid byte (`café`, `cafè`) are two sources:
/// neither replaces the other, on the first ingest or a later one.
#[test]
fn names_differing_only_in_invalid_utf8_bytes_are_two_sources() {
    use std::os::unix::ffi::OsStrExt;
    let case = Case::new();
    let mut paths = Vec::new();
    for (byte, word) in [(0xe9u8, "acuteword"), (0xe8, "graveword")] {
        let mut name = b"caf".to_vec();
        name.extend_from_slice(&[byte]);
        name.extend_from_slice(b".traj");
        let path = case.root.join(OsStr::from_bytes(&name));
        must(std::fs::write(&path, swe_agent_traj(&format!("latin-1 name {word}"))), "write");
        paths.push(path);
    }
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.contains("ingested 3 files "), "{stderr}");

    let (again, store) = case.ingest();
    assert_eq!(again.unchanged(), 3, "{:#?}", again.results);
    for word in ["acuteword", "graveword"] {
        assert_eq!(must(store.search(word, None, 10), "search").len(), 1, "{word}");
    }
    assert_eq!(instances(&store).len(), 3);
    let keys: BTreeSet<String> = must(store.source_hashes(), "source_hashes").into_keys().collect();
    let expected = [case.good_path().to_string_lossy().into_owned()]
        .into_iter()
        .chain(["E9", "E8"].map(|hex| format!("{}//caf%{hex}.traj", case.root.display())))
        .collect::<BTreeSet<_>>();
    assert_eq!(keys, expected);
    assert_integrity(&store);
}

// ---------------------------------------------------------------------------------------------
// JSON of no known format

/// A JSON file of no known format beside the runs (a run's `metadata.json`, a `cost.json`) is not
/// an input: skipped with its keys named, and no problem for the exit status.
fn assert_skipped_as_json(case: &Case, file: &Path, reason: &str) {
    for first_time in [true, false] {
        let (report, store) = case.ingest();
        assert_good(&report, case, first_time);
        match result_for(&report, file) {
            UnitResult::Skipped { skip, .. } => {
                assert_eq!(skip.kind, trajan::ingest::skip::SkipKind::Json);
                assert_eq!(skip.reason, reason);
            }
            other => panic!("expected {} to be skipped: {other:#?}", file.display()),
        }
        assert!(!report.has_problems(), "{:#?}", report.results);
        assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
        assert_integrity(&store);
    }
}

#[test]
fn json_object_of_no_known_format_is_skipped_naming_its_keys() {
    let case = Case::new();
    let file = case.write("mystery.json", br#"{"foo": 1, "bar": [1,2]}"#);
    assert_skipped_as_json(&case, &file, "not a known format (a JSON object with keys [foo, bar])");
}

#[test]
fn json_array_of_numbers_is_skipped_as_no_known_format() {
    let case = Case::new();
    let file = case.write("numbers.json", b"[1, 2, 3]\n");
    assert_skipped_as_json(&case, &file, "not a known format (a JSON array whose items match no format)");
}

#[test]
fn unknown_json_lines_are_skipped_naming_the_first_line_keys_not_a_parse_error() {
    let case = Case::new();
    let file = case.write("metrics.jsonl", b"{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": 0.4}\n");
    assert_skipped_as_json(&case, &file, "not a known format (JSON lines, first line's keys: step, loss)");
}

#[test]
fn a_trajectory_of_no_known_format_is_rejected_naming_its_keys() {
    let case = Case::new();
    let bad = case.write("mystery.traj", br#"{"foo": 1, "bar": [1,2]}"#);
    let message = assert_rejected(&case, &bad);
    assert_eq!(
        message,
        format!("{}: not a known trajectory or test-output format: a JSON object with keys [foo, bar]", bad.display())
    );
}

// ---------------------------------------------------------------------------------------------
// JSONL with one bad line

#[test]
fn jsonl_bad_line_is_reported_by_number_and_good_lines_are_kept() {
    let case = Case::new();
    let text = concat!(
        r#"{"instance_id": "oh__first-1", "history": [], "instruction": "do the first"}"#,
        "\n",
        r#"{"instance_id": "oh__second-2", "history": [{"id": 0, "source": "user""#,
        "\n",
        r#"{"instance_id": "oh__third-3", "history": [], "instruction": "do the third"}"#,
        "\n",
    );
    let path = case.write("output.jsonl", text.as_bytes());

    let check = |first_time: bool| {
        let (report, store) = case.ingest();
        assert_eq!(report.results.len(), 2, "{:#?}", report.results);
        assert_good(&report, &case, first_time);
        let warnings = match result_for(&report, &path) {
            UnitResult::Ingested { format, stats, warnings, .. } if first_time => {
                assert_eq!(*format, Format::OpenHands);
                assert_eq!(stats.runs, 2);
                warnings.clone()
            }
            UnitResult::Unchanged { warnings, .. } if !first_time => warnings.clone(),
            other => panic!("expected the JSONL file to be kept (first time: {first_time}): {other:#?}"),
        };
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with(&format!("{}: line 2, column ", path.display())),
            "the warning must name the file and line 2: {}",
            warnings[0]
        );
        assert!(report.has_problems());
        assert_eq!(instances(&store), vec![GOOD_INSTANCE, "oh__first-1", "oh__third-3"]);
        assert_eq!(sources(&store), BTreeSet::from([case.good_path(), path.clone()]));
        assert_integrity(&store);
    };
    check(true);
    check(false);
}

#[test]
fn jsonl_with_only_bad_lines_fails_naming_the_first_bad_line() {
    let case = Case::new();
    // Line 1 is JSON but not an instance (`history` is a number), lines 2 and 3 are not JSON.
    let text = "{\"instance_id\": \"a\", \"history\": 7}\n{\"instance_id\": \"b\", \"history\": [\n{oops\n";
    let bad = case.write("output.jsonl", text.as_bytes());
    let message = assert_rejected(&case, &bad);
    assert!(message.starts_with(&format!("{}: line 1", bad.display())), "{message}");
}

// ---------------------------------------------------------------------------------------------
// A 50 MB observation

#[test]
fn fifty_megabyte_observation_is_stored_whole_and_searchable() {
    const SIZE: usize = 50 * 1024 * 1024;
    const MARKER: &str = "zqxendmarker";
    let case = Case::new();
    let mut observation = String::with_capacity(SIZE + 64);
    let mut i = 0u64;
    while observation.len() < SIZE {
        observation.push_str(&format!("{i:09} the tool printed one more line of log output here\n"));
        i += 1;
    }
    observation.truncate(SIZE - MARKER.len() - 1);
    observation.push(' ');
    observation.push_str(MARKER);
    assert_eq!(observation.len(), SIZE);
    let path = case.write("big__obs-1.traj", swe_agent_traj(&observation).as_bytes());

    let (report, store) = case.ingest();
    assert_eq!(report.results.len(), 2, "{:#?}", report.results);
    assert_good(&report, &case, true);
    match result_for(&report, &path) {
        UnitResult::Ingested { stats, warnings, .. } => {
            assert_eq!((stats.runs, stats.steps), (1, 1));
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        other => panic!("expected the big file to be ingested: {other:#?}"),
    }
    assert!(!report.has_problems());
    assert_integrity(&store);
    assert_eq!(instances(&store), vec!["big__obs-1", GOOD_INSTANCE]);

    let hits = must(store.search(MARKER, None, 10), "search");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].instance_id, "big__obs-1");
    assert_eq!(hits[0].field, "observation");
    assert!(hits[0].snippet.contains(&format!("[{MARKER}]")), "{}", hits[0].snippet);
    // The good run is still found by its own word.
    let good_hits = must(store.search(GOOD_WORD, None, 10), "search");
    assert_eq!(good_hits.len(), 1);
    assert_eq!(good_hits[0].instance_id, GOOD_INSTANCE);

    let detail = must(store.run_detail(hits[0].run_id, None), "run_detail");
    assert_eq!(detail.step_list.len(), 1);
    let step = &detail.step_list[0];
    assert_eq!(step.observation.len(), SIZE);
    assert_eq!(step.observation_chars, SIZE as i64);
    assert!(step.observation == observation, "the stored observation differs from the input");
    drop(store);

    let (again, store) = case.ingest();
    assert!(matches!(result_for(&again, &path), UnitResult::Unchanged { .. }));
    assert_eq!(instances(&store), vec!["big__obs-1", GOOD_INSTANCE]);
    assert_integrity(&store);
}

// ---------------------------------------------------------------------------------------------
// 10,000 levels of nesting

/// Run `f` on a thread with a 512 KiB stack. A parser that recursed once per nesting level
/// would need tens of megabytes for 10,000 levels and overflow it (aborting the test process).
/// serde_json stops at 128 levels; in an unoptimized build 128 nested *objects* alone take
/// about 300 KiB of stack (measured: 256 KiB overflows at 127 valid levels, 512 KiB never does,
/// whatever the depth), hence 512 KiB rather than 256 KiB.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .name("small-stack".into())
        .stack_size(512 * 1024)
        .spawn(f)
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

fn check_deep_nesting(name: &'static str, text: String) {
    on_small_stack(move || {
        // The parser itself, on this thread's small stack.
        let path = PathBuf::from("/somewhere").join(name);
        match trajan::ingest::parse_file(&path, text.as_bytes(), None) {
            Err(e) => {
                let message = e.to_string();
                let (line, _column) = line_column(&message, &path);
                assert_eq!(line, 1);
                assert!(message.contains("recursion limit exceeded"), "{message}");
            }
            Ok(_) => panic!("{name}: 10,000 levels of nesting must be rejected"),
        }
        // And the whole pipeline.
        let case = Case::new();
        let bad = case.write(name, text.as_bytes());
        let message = assert_rejected(&case, &bad);
        let (line, column) = line_column(&message, &bad);
        assert_eq!(line, 1);
        assert!(column < 1000, "the parser must give up early, not at column {column}");
        assert!(message.contains("recursion limit exceeded"), "{message}");
    });
}

#[test]
fn ten_thousand_levels_in_a_trajectory_field_fail_cleanly() {
    let text = format!("{{\"trajectory\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
    check_deep_nesting("deep__traj-1.traj", text);
}

#[test]
fn ten_thousand_nested_arrays_fail_cleanly() {
    check_deep_nesting("deep-array.json", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)));
}

#[test]
fn ten_thousand_nested_objects_fail_cleanly() {
    check_deep_nesting("deep-object.json", format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000)));
}

#[test]
fn ten_thousand_levels_on_a_jsonl_line_fail_cleanly() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let text =
        format!("{{\"instance_id\": \"a\", \"history\": {deep}}}\n{{\"instance_id\": \"b\", \"history\": {deep}}}\n");
    on_small_stack(move || {
        let case = Case::new();
        let bad = case.write("output.jsonl", text.as_bytes());
        let message = assert_rejected(&case, &bad);
        assert!(message.starts_with(&format!("{}: line 1, column ", bad.display())), "{message}");
        assert!(message.contains("recursion limit exceeded"), "{message}");
    });
}

// ---------------------------------------------------------------------------------------------
// Unreadable files in a folder

#[test]
fn dangling_symlink_is_an_error_naming_the_file() {
    let case = Case::new();
    let link = case.root.join("broken.traj");
    must(std::os::unix::fs::symlink("/nonexistent/x", &link), "symlink");
    let message = assert_rejected(&case, &link);
    assert!(message.starts_with(&format!("{}: cannot read: ", link.display())), "{message}");
    assert!(message.contains("No such file or directory"), "{message}");
}

fn mkfifo(path: &Path) {
    let status = must(std::process::Command::new("mkfifo").arg(path).status(), "run mkfifo");
    assert!(status.success(), "mkfifo failed");
}

/// Ingest the case's folder (or `paths`) on another thread; fail if it has not finished in time.
/// On timeout, open `fifo` for writing so a reader blocked on it wakes up and the thread ends.
fn ingest_with_deadline(case: &Case, paths: Vec<PathBuf>, fifo: &Path) -> trajan::ingest::pipeline::Report {
    let (tx, rx) = mpsc::channel();
    let db = case.db.clone();
    std::thread::spawn(move || {
        let mut store = must(trajan::store::Store::open(&db), "open store");
        let report = trajan::ingest::pipeline::ingest(
            &mut store,
            &paths,
            &trajan::ingest::pipeline::Options::default(),
            &trajan::ingest::pipeline::Silent,
        );
        let _ = tx.send(report);
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(report) => report,
        Err(_) => {
            // Unblock the reader (opening the write end succeeds once a reader waits), then fail.
            let _ = std::fs::OpenOptions::new().write(true).open(fifo);
            panic!("ingest blocked on the FIFO {}", fifo.display());
        }
    }
}

#[test]
fn fifo_in_a_folder_is_skipped_without_blocking() {
    let case = Case::new();
    let fifo = case.root.join("pipe.traj");
    mkfifo(&fifo);
    for first_time in [true, false] {
        let report = ingest_with_deadline(&case, vec![case.root.clone()], &fifo);
        assert_eq!(report.results.len(), 1, "only the good file is a unit: {:#?}", report.results);
        assert_good(&report, &case, first_time);
        assert!(!report.has_problems());
        let store = case.open();
        assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
        assert_integrity(&store);
    }
}

#[test]
fn symlink_to_a_fifo_does_not_block() {
    let case = Case::new();
    let fifo_dir = must(tempfile::tempdir(), "tempdir");
    let fifo = fifo_dir.path().join("pipe");
    mkfifo(&fifo);
    let link = case.root.join("pipe-link.traj");
    must(std::os::unix::fs::symlink(&fifo, &link), "symlink");
    let report = ingest_with_deadline(&case, vec![case.root.clone()], &fifo);
    assert_good(&report, &case, true);
    // Skipped silently or reported as not a regular file: either way it must name the link.
    for r in &report.results {
        assert!(result_path(r) == case.good_path() || result_path(r) == link, "{r:#?}");
    }
    let store = case.open();
    assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
    assert_integrity(&store);
}

#[test]
fn fifo_named_directly_is_an_error_not_a_hang() {
    let case = Case::new();
    let fifo = case.root.join("pipe.traj");
    mkfifo(&fifo);
    let report = ingest_with_deadline(&case, vec![fifo.clone(), case.good_path()], &fifo);
    assert_good(&report, &case, true);
    let message = failure_for(&report, &fifo);
    assert!(message.starts_with(&format!("{}: ", fifo.display())), "{message}");
    assert_integrity(&case.open());
}

/// A FIFO named like a compressed file (issue 24): in a folder it is passed over, named it is
/// an error; never opened to be unpacked (which blocked `ingest` forever).
#[test]
fn fifo_named_like_an_archive_does_not_block() {
    let case = Case::new();
    let fifo = case.root.join("runs.traj.gz");
    mkfifo(&fifo);
    let report = ingest_with_deadline(&case, vec![case.root.clone()], &fifo);
    assert_good(&report, &case, true);
    assert_eq!(report.results.len(), 1, "{:#?}", report.results);
    let report = ingest_with_deadline(&case, vec![fifo.clone(), case.good_path()], &fifo);
    let message = failure_for(&report, &fifo);
    assert!(
        message.starts_with(&format!("{}: ", fifo.display())) && message.contains("not a regular file"),
        "{message}"
    );
    assert_integrity(&case.open());
}

#[test]
fn unreadable_subfolder_is_an_error_naming_it() {
    if is_root() {
        // Root reads through mode 000, so there is nothing to test; the dangling symlink test
        // covers the unreadable-file path.
        eprintln!("skipped: running as root");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let case = Case::new();
    let sub = case.root.join("locked");
    case.write("locked/inside.traj", good_traj().as_bytes());
    must(std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o000)), "chmod");
    let (report, store) = case.ingest();
    // Restore so the temp folder can be removed.
    must(std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)), "chmod");
    assert_good(&report, &case, true);
    let message = failure_for(&report, &sub);
    assert!(message.starts_with(&format!("{}: cannot read: ", sub.display())), "{message}");
    assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
    assert_integrity(&store);
}

// ---------------------------------------------------------------------------------------------
// Everything at once: one folder with every bad input, nothing else disturbed

#[test]
fn all_bad_inputs_together_leave_the_good_run_intact() {
    let case = Case::new();
    let bad: Vec<PathBuf> = vec![
        case.write("a-empty.traj", b""),
        case.write("b-cut.traj", br#"{"trajectory": [{"action": "ls", "observation": "hel"#),
        case.write("c-garbage.traj", &garbage(2048, 10)),
        case.write("d-mystery.traj", br#"{"foo": 1}"#),
        case.write("e-deep.json", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).as_bytes()),
    ];
    // Not inputs: skipped, beside the failures.
    case.write("g-garbage.bin", &garbage(2048, 10));
    case.write("h-mystery.json", br#"{"foo": 1}"#);
    let link = case.root.join("f-broken.traj");
    must(std::os::unix::fs::symlink("/nonexistent/y", &link), "symlink");
    let (report, store) = case.ingest();
    assert_eq!(report.results.len(), bad.len() + 4, "{:#?}", report.results);
    assert_good(&report, &case, true);
    assert_eq!(report.skipped(), 2, "{:#?}", report.results);
    for p in bad.iter().chain([&link]) {
        let message = failure_for(&report, p);
        assert!(message.starts_with(&format!("{}: ", p.display())), "{message}");
    }
    assert_eq!(instances(&store), vec![GOOD_INSTANCE]);
    assert_eq!(sources(&store), BTreeSet::from([case.good_path()]));
    assert_integrity(&store);
    let hits = must(store.search(GOOD_WORD, None, 10), "search");
    assert_eq!(hits.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// The command line, end to end

#[test]
fn cli_ingest_reports_the_bad_file_and_exits_1() {
    let case = Case::new();
    let bad = case.write("mystery.traj", br#"{"foo": 1, "bar": [1,2]}"#);
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let expected = format!(
        "error: {}: not a known trajectory or test-output format: a JSON object with keys [foo, bar]",
        bad.display()
    );
    assert!(stderr.lines().any(|l| l == expected), "missing {expected:?} in stderr:\n{stderr}");
    assert!(stderr.contains("ingested 1 "), "summary: {stderr}");
    assert!(stderr.contains("failed 1"), "summary: {stderr}");

    let out = case.cli(&[OsStr::new("runs"), OsStr::new("--json")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let runs: serde_json::Value = must(serde_json::from_slice(&out.stdout), "runs --json output");
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap_or_else(|| panic!("runs --json is not a list: {runs}"))
        .iter()
        .filter_map(|r| r["instance_id"].as_str())
        .collect();
    assert_eq!(ids, vec![GOOD_INSTANCE]);
    assert_eq!(runs[0]["source"].as_str(), Some(case.good_path().to_string_lossy().as_ref()));

    // Again: still exit 1 (the bad file is still bad), still one run.
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let out = case.cli(&[OsStr::new("runs"), OsStr::new("--json")]);
    let runs: serde_json::Value = must(serde_json::from_slice(&out.stdout), "runs --json output");
    assert_eq!(runs.as_array().map(Vec::len), Some(1));
}

#[test]
fn cli_ingest_skips_what_is_not_an_input_and_exits_0() {
    // What every results folder holds beside its runs: metadata, a README, an image.
    let case = Case::new();
    case.write("metadata.json", br#"{"agent_class": "CodeActAgent", "model_name": "m"}"#);
    case.write("README.md", b"# Results\n");
    case.write("plot.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "skipped, not inputs: 1 JSON of no known format (run metadata, configs), 1 text file (README, config, script), 1 binary file"
    );
    // --verbose says why each was skipped.
    let out = case.cli(&[OsStr::new("ingest"), OsStr::new("--verbose"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "skipped: {}: byte 8: binary content (NUL byte): not a trajectory or a test log",
        case.root.join("plot.png").display()
    );
    assert!(stderr.lines().any(|l| l == line), "{stderr}");
}

#[test]
fn cli_problems_come_grouped_before_the_summary_with_a_few_examples_each() {
    let case = Case::new();
    for i in 0..5 {
        case.write(&format!("empty-{i}.traj"), b"");
    }
    let text = "{\"instance_id\": \"oh__a-1\", \"history\": []}\n{broken\n";
    case.write("output.jsonl", text.as_bytes());
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines[0], "empty input files (5 files):", "{stderr}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("error: ") && l.ends_with(": empty file")).count(), 3, "{stderr}");
    assert_eq!(lines[4], "  … 2 more (ingest --verbose lists them all)", "{stderr}");
    assert_eq!(lines[5], "JSON-lines lines skipped (1 in 1 file):", "{stderr}");
    assert!(lines[6].starts_with("warning: ") && lines[6].contains("output.jsonl: line 2, column "), "{stderr}");
    assert!(lines[7].starts_with("ingested 2 "), "the summary comes last: {stderr}");
    assert!(lines[8].starts_with("verdicts: 0 of 2 runs; "), "then what joined: {stderr}");
    assert!(lines[9].starts_with("search index: 1 runs, "), "then the index phase's line: {stderr}");
    assert_eq!(lines.len(), 10, "{stderr}");
    let out = case.cli(&[OsStr::new("ingest"), OsStr::new("-v"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().filter(|l| l.ends_with(": empty file")).count(), 5, "{stderr}");
}

#[test]
fn cli_ingest_of_a_clean_folder_exits_0() {
    let case = Case::new();
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    assert!(stderr.contains("ingested 1 "), "{stderr}");
}

#[test]
fn cli_ingest_warning_only_exits_1() {
    // A JSONL file with one bad line is kept but is still a problem for the exit status.
    let case = Case::new();
    let text = "{\"instance_id\": \"oh__a-1\", \"history\": []}\n{broken\n";
    let path = case.write("output.jsonl", text.as_bytes());
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let prefix = format!("warning: {}: line 2, column ", path.display());
    assert!(stderr.lines().any(|l| l.starts_with(&prefix)), "missing {prefix:?} in:\n{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
}
