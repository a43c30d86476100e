//! Hostile input, round 3 (issue 42), through the real binary: token sums and costs no run can
//! have, a copy killed while it builds the search index, a disk that takes no more during the
//! index phase, and `agreement` between many raters. Every input is made here, small.

use serde_json::{Value, json};
use std::path::Path;

use crate::common;
use crate::common::{both, must, trajan};

/// An OpenClaw session whose assistant messages report these (tokens in and out, cost).
fn openclaw_session(usages: &[(i64, f64)]) -> String {
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/app"}),
        json!({"type": "message", "id": "m0", "parentId": null, "timestamp": "2026-01-01T00:00:01Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]}}),
    ];
    for (i, (tokens, cost)) in usages.iter().enumerate() {
        lines.push(json!({"type": "message", "id": format!("m{}", i + 1), "parentId": format!("m{i}"),
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {"role": "assistant", "model": "m", "content": [{"type": "text", "text": format!("reply {i}")}],
                        "usage": {"input": tokens, "output": tokens, "cost": {"total": cost}}}}));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn token_sums_saturate_and_costs_no_run_can_have_are_refused() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let db = dir.path().join("t.db");
    let inputs = dir.path().join("in");
    must(std::fs::create_dir(&inputs), "mkdir");
    must(std::fs::write(inputs.join("max.jsonl"), openclaw_session(&[(i64::MAX, 0.5); 3])), "write");
    must(std::fs::write(inputs.join("huge.jsonl"), openclaw_session(&[(1, 1e308)])), "write");
    let out = trajan(&db, &["ingest".as_ref(), inputs.as_os_str()]);
    let said = both(&out);
    // The cost replaced by nothing is a value replaced: said, and the exit status says so.
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("a cost of 1e308 is not a run's cost (0 to 1e6 US dollars); read as null"), "{said}");
    let runs = common::json(&db, &["runs", "--json"]);
    let by_source = |name: &str| -> Value {
        let found =
            runs.as_array().into_iter().flatten().find(|r| r["source"].as_str().is_some_and(|s| s.ends_with(name)));
        found.cloned().unwrap_or_else(|| panic!("no run of {name}: {runs}"))
    };
    let max = by_source("max.jsonl");
    assert_eq!(max["cost"].as_f64(), Some(1.5));
    let shown = common::json(&db, &["show", &max["id"].to_string(), "--json"]);
    assert_eq!((shown["tokens_sent"].as_i64(), shown["tokens_received"].as_i64()), (Some(i64::MAX), Some(i64::MAX)));
    assert_eq!(by_source("huge.jsonl")["cost"], Value::Null);
    let table = common::text(&db, &["runs"]);
    assert!(!table.contains("00000000000"), "no number of hundreds of digits: {table}");
}

/// A store written before costs were bounded shows no cost past the bound.
#[test]
fn a_cost_stored_before_the_bound_is_not_shown() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let db = dir.path().join("t.db");
    let input = dir.path().join("s.jsonl");
    must(std::fs::write(&input, openclaw_session(&[(1, 0.5)])), "write");
    assert!(trajan(&db, &["ingest".as_ref(), input.as_os_str()]).status.success());
    let conn = must(rusqlite::Connection::open(&db), "open");
    must(conn.execute("UPDATE runs SET cost = -1e308", []), "update");
    drop(conn);
    let runs = common::json(&db, &["runs", "--json"]);
    assert_eq!(runs[0]["cost"], Value::Null, "{runs}");
    assert!(!common::text(&db, &["runs"]).contains("00000000000"));
}

/// `count(*)` of a table of the SQLite store at `db`, read beside a writer (0 when it cannot).
fn count(db: &Path, table: &str) -> i64 {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    rusqlite::Connection::open_with_flags(db, flags)
        .and_then(|c| c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)))
        .unwrap_or(0)
}

/// `copy` into SQLite killed once its rows are committed, while it builds the search index: run
/// again, it finds every row there, compares them and finishes the index.
#[test]
fn a_copy_killed_while_it_builds_the_search_index_is_finished_when_run_again() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let (source, target, inputs) = (dir.path().join("a.db"), dir.path().join("b.db"), dir.path().join("in"));
    // Text enough that the index takes a while.
    wordy_runs(&inputs, 60, 64);
    let ingested = trajan(&source, &["ingest".as_ref(), "--no-index".as_ref(), inputs.as_os_str()]);
    assert!(ingested.status.success(), "{}", both(&ingested));
    let args = ["copy".as_ref(), "--from".as_ref(), source.as_os_str(), "--to".as_ref(), target.as_os_str()];
    let mut child = must(common::command().args(args).stderr(std::process::Stdio::null()).spawn(), "spawn");
    let since = std::time::Instant::now();
    while count(&target, "runs") == 0 && since.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    must(child.kill(), "kill");
    let _ = child.wait();
    assert_eq!(count(&target, "runs"), 60, "the rows were committed before the kill");
    if count(&target, "search_pending") == 0 {
        // The index was finished before the kill landed: leave it as a kill a moment sooner would.
        let conn = must(rusqlite::Connection::open(&target), "open");
        let sql = "INSERT INTO steps_fts (steps_fts) VALUES ('delete-all');
                   INSERT INTO search_pending (run_id) SELECT DISTINCT run_id FROM steps";
        must(conn.execute_batch(sql), "unindex");
    }
    let again = trajan(&source, &args);
    let said = both(&again);
    assert!(again.status.success(), "{said}");
    assert!(said.contains("already held every row") && said.contains("compared equal"), "{said}");
    assert_eq!(count(&target, "search_pending"), 0);
    let found = common::json(&target, &["search", "marker59", "--json"]);
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found}");
    // A target holding other data is still refused, and told why.
    let other = dir.path().join("c.db");
    let one = inputs.join("r__r-0.traj");
    assert!(trajan(&other, &["ingest".as_ref(), one.as_os_str()]).status.success());
    let args = ["copy".as_ref(), "--from".as_ref(), source.as_os_str(), "--to".as_ref(), other.as_os_str()];
    let refused = both(&trajan(&source, &args));
    assert!(refused.contains("already holds data that is not a copy of the source"), "{refused}");
}

/// Trajectories of `runs` runs with about `kb` KB of distinct words each, the run `i` holding
/// the word `marker{i}`, in a new folder `inputs`.
fn wordy_runs(inputs: &Path, runs: usize, kb: usize) {
    must(std::fs::create_dir(inputs), "mkdir");
    for i in 0..runs {
        let obs: String = (0..kb * 1024 / 32).map(|j| format!("word{i}x{j} of output line {j}\n")).collect();
        let traj = common::swe_agent_traj(&format!("{obs} marker{i}"));
        must(std::fs::write(inputs.join(format!("r__r-{i}.traj")), traj), "write");
    }
}

/// `trajan --db DB ARGS` where no file may grow past `bytes` (the disk is full for it): the
/// shell ignores SIGXFSZ, so a write past the limit fails as a write on a full disk does.
fn trajan_on_full_disk(db: &Path, bytes: u64, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let script = format!("trap '' XFSZ; ulimit -f {}; exec \"$@\"", bytes / 512);
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &script, "sh", env!("CARGO_BIN_EXE_trajan")]).arg("--db").arg(db).args(args);
    for var in ["TRAJAN_DB", "NO_COLOR", "COLUMNS", "LINES", "TRAJAN_RATER"] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", common::empty_home()).env("XDG_CONFIG_HOME", common::empty_home());
    must(cmd.output(), "run trajan under a file size limit")
}

/// The disk fills during ingest's index phase: the files stay stored, the summary says the index
/// was not written (exit 1, no error), and a search on the full disk indexes the runs left for
/// itself; once there is room the index is written.
#[cfg(unix)]
#[test]
fn a_full_disk_during_the_index_phase_leaves_searches_working() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let (db, inputs) = (dir.path().join("t.db"), dir.path().join("in"));
    wordy_runs(&inputs, 30, 128);
    let stored = trajan(&db, &["ingest".as_ref(), "--no-index".as_ref(), inputs.as_os_str()]);
    assert!(stored.status.success(), "{}", both(&stored));
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let full = size(&db) + 64 * 1024;
    let out = trajan_on_full_disk(&db, full, &["ingest".as_ref(), inputs.as_os_str()]);
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("search index: not written:") && !said.contains("error:"), "{said}");
    assert!(said.contains("the 30 runs left are indexed by the first search"), "{said}");
    let found = trajan_on_full_disk(&db, full, &["search".as_ref(), "marker29".as_ref(), "--json".as_ref()]);
    assert!(found.status.success(), "a search on the full disk: {}", both(&found));
    let hits: Value = must(serde_json::from_slice(&found.stdout), "search --json");
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    assert_eq!(common::json(&db, &["search", "marker3", "--json"]).as_array().map(Vec::len), Some(1));
    assert_eq!(count(&db, "search_pending"), 0, "written once there is room");
}

/// `agreement --table` of a generated CSV (`item,rater,modes`) at `path`.
fn agreement_of_table(path: &Path) -> Value {
    let args = ["agreement", "--json", "--resamples", "20", "--reference", "r39", "--table"];
    let out = must(common::command().args(args).arg(path).output(), "run trajan");
    assert!(out.status.success(), "{}", both(&out));
    let v: Value = must(serde_json::from_slice(&out.stdout), "agreement --json");
    v["report"].clone()
}

/// Kappa between raters is listed for the pairs of at most 20 raters (the reference and those who
/// rated most), the rest counted; alpha and the scores against the reference cover everyone, and
/// the pairs listed have the figures they have when only those raters are compared.
#[test]
fn agreement_lists_the_pairs_of_at_most_twenty_raters() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mode = "missed_edit_location";
    // Raters r00-r19 rated three runs, r20-r39 all six; their ratings differ run by run.
    let rows = |raters: std::ops::Range<usize>| -> String {
        let mut csv = String::from("item,rater,modes\n");
        for r in raters {
            for item in 0..if r < 20 { 3 } else { 6 } {
                let m = if (r * 7 + item * 3) % 5 < 2 { mode } else { "" };
                csv.push_str(&format!("run{item},r{r:02},{m}\n"));
            }
        }
        csv
    };
    let (all, most) = (dir.path().join("all.csv"), dir.path().join("most.csv"));
    must(std::fs::write(&all, rows(0..40)), "write");
    must(std::fs::write(&most, rows(20..40)), "write");
    let report = agreement_of_table(&all);
    let names = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|n| n.as_str().map(str::to_string)).collect()
    };
    let twenty: Vec<String> = (20..40).map(|r| format!("r{r:02}")).collect();
    assert_eq!(names(&report["pair_raters"]), twenty);
    assert_eq!(report["pairs_left_out"].as_u64(), Some(40 * 39 / 2 - 20 * 19 / 2));
    assert_eq!(report["raters"].as_array().map(Vec::len), Some(40));
    let only = agreement_of_table(&most);
    let modes = |r: &Value| r["modes"].as_array().cloned().unwrap_or_default();
    let on = |r: &Value| modes(r).into_iter().find(|m| m["mode"] == mode).unwrap_or(Value::Null);
    let (bounded, alone) = (on(&report), on(&only));
    assert_eq!(bounded["pairs"].as_array().map(Vec::len), Some(190));
    assert_eq!(bounded["pairs"], alone["pairs"], "the pairs listed are as when only those raters are compared");
    assert_eq!(bounded["against_reference"].as_array().map(Vec::len), Some(39), "everyone against r39");
    assert_ne!(bounded["alpha"]["values"], alone["alpha"]["values"], "alpha over all forty");
}

/// Issue 42, item 1, against the test server (which trusts its loopback: any password works):
/// a password with an unencoded `?` connects and is never printed (`migrate`, `copy`); one with
/// `@` or `/` is refused before any connection, showing nothing of it; libpq's `key=value` pairs
/// name the server, never a file.
#[test]
fn a_password_with_a_slash_a_question_mark_or_an_at_is_never_printed() {
    let Some(db) = common::pg_database() else { return };
    let (base, name) = db.url.rsplit_once('/').unwrap_or_else(|| panic!("{}", db.url));
    let at = base.rsplit_once('@').map_or(base, |(_, at)| at);
    let (host, port) = at.split_once(':').unwrap_or_else(|| panic!("{at}"));
    let with = |password: &str| format!("postgres://postgres:{password}@{at}/{name}");
    let secret = |said: &str| said.contains("Sekr1t") || said.contains("Xy9");
    let migrate = trajan(Path::new(&with("Sekr1t?Xy9")), &["migrate"]);
    let said = both(&migrate);
    assert!(migrate.status.success() && said.contains(&format!("postgres://postgres:***@{at}/{name}")), "{said}");
    assert!(!secret(&said), "{said}");
    let dir = must(tempfile::tempdir(), "tempdir");
    let (file, input) = (dir.path().join("a.db"), dir.path().join("s.jsonl"));
    must(std::fs::write(&input, openclaw_session(&[(1, 0.5)])), "write");
    assert!(trajan(&file, &["ingest".as_ref(), input.as_os_str()]).status.success());
    let copied = trajan(
        &file,
        &["copy".as_ref(), "--from".as_ref(), file.as_os_str(), "--to".as_ref(), with("Sekr1t?Xy9").as_ref()],
    );
    assert!(copied.status.success() && !secret(&both(&copied)), "{}", both(&copied));
    for password in ["Sekr1t@Xy9", "Sekr1t/Xy9", "Sekr1t/Xy9?k=v"] {
        let out = trajan(Path::new(&with(password)), &["runs"]);
        let said = both(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(!secret(&said) && said.contains("%40"), "{said}");
    }
    let pairs = format!("host={host} port={port} user=postgres password='Sekr1t Xy9' dbname={name}");
    let out = common::command().current_dir(dir.path()).args(["--db", &pairs, "migrate"]).output();
    let out = must(out, "run trajan");
    let said = both(&out);
    assert!(out.status.success() && said.contains("password=***") && !secret(&said), "{said}");
    let files: Vec<String> =
        must(std::fs::read_dir(dir.path()), "ls").flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    assert!(!files.iter().any(|f| f.contains("host=")), "no file made of the pairs: {files:?}");
}
