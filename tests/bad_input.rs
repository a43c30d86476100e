//! Bad input: each case sits in a folder next to one good trajectory. Each must give a clear
//! error naming the file (and the line or byte where that means something), never a panic, keep
//! the good run, leave the database sound (`PRAGMA integrity_check`), and give the same result
//! when the folder is ingested again.

mod common;

use common::*;
use std::collections::BTreeSet;
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
fn gzip_compressed_trajectory_is_binary_not_a_crash() {
    // What a user would most often feed by mistake: a gzip file (`1f 8b 08 00 ...`).
    let case = Case::new();
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    bytes.extend(garbage(4096, 100));
    let bad = case.write("some__run-1.traj.gz", &bytes);
    let message = assert_rejected(&case, &bad);
    assert!(message.starts_with(&format!("{}: byte 3: ", bad.display())), "{message}");
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
// JSON of no known format

#[test]
fn json_object_of_no_known_format_lists_its_keys() {
    let case = Case::new();
    let bad = case.write("mystery.json", br#"{"foo": 1, "bar": [1,2]}"#);
    let message = assert_rejected(&case, &bad);
    assert_eq!(
        message,
        format!("{}: not a known trajectory or test-output format: a JSON object with keys [foo, bar]", bad.display())
    );
}

#[test]
fn json_array_of_numbers_is_of_no_known_format() {
    let case = Case::new();
    let bad = case.write("numbers.json", b"[1, 2, 3]\n");
    let message = assert_rejected(&case, &bad);
    assert_eq!(
        message,
        format!(
            "{}: not a known trajectory or test-output format: a JSON array whose items match no format",
            bad.display()
        )
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
        case.write("c-garbage.bin", &garbage(2048, 10)),
        case.write("d-mystery.json", br#"{"foo": 1}"#),
        case.write("e-deep.json", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).as_bytes()),
    ];
    let link = case.root.join("f-broken.traj");
    must(std::os::unix::fs::symlink("/nonexistent/y", &link), "symlink");
    let (report, store) = case.ingest();
    assert_eq!(report.results.len(), bad.len() + 2, "{:#?}", report.results);
    assert_good(&report, &case, true);
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
    let bad = case.write("mystery.json", br#"{"foo": 1, "bar": [1,2]}"#);
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
