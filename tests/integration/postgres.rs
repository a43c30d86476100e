//! The binary on a PostgreSQL store (the server `.ci/run` starts; without one these tests pass
//! and say they were skipped): every reading command answers as on SQLite for the same input
//! (corpus and fixtures: runs, show, search of many phrases, classify, labels, agreement, stats,
//! exports; onset and blame in them), eight processes labelling, importing and classifying at once, `trajan copy` there and
//! back, and the faults: a wrong password, a server that does not answer, a connection killed in
//! the middle of an ingest. The password is never printed nor stored.

use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;

fn trajan(db: &OsStr, args: &[&str]) -> Output {
    common::command().arg("--db").arg(db).args(args).output().unwrap_or_else(|e| panic!("cannot run trajan: {e}"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn ok(db: &OsStr, args: &[&str]) -> String {
    let out = trajan(db, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/classify")
}

/// An SQLite file and a PostgreSQL database given the same ingest.
struct Pair {
    _dir: tempfile::TempDir,
    file: OsString,
    pg: common::pg_server::TestDb,
}

impl Pair {
    fn new(paths: &[PathBuf]) -> Option<Pair> {
        let pg = common::pg_database()?;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("t.db").into_os_string();
        let paths: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap_or_default()).collect();
        for db in [file.as_os_str(), OsStr::new(&pg.url)] {
            let mut args = vec!["ingest"];
            args.extend(&paths);
            ok(db, &args);
        }
        Some(Pair { _dir: dir, file, pg })
    }

    fn pg(&self) -> &OsStr {
        OsStr::new(&self.pg.url)
    }

    /// The same command on both stores prints the same.
    fn same(&self, args: &[&str]) -> String {
        let (a, b) = (ok(&self.file, args), ok(self.pg(), args));
        assert!(a == b, "{args:?} differs between SQLite and PostgreSQL:\n{:.2000}\n---\n{:.2000}", a, b);
        a
    }
}

#[test]
fn search_answers_alike_on_every_phrase_of_the_corpus_tests_and_generated_ones() {
    let generated = generated_runs();
    let Some(pair) = Pair::new(&[common::corpus(), generated.path().to_path_buf()]) else { return };
    // The phrases the corpus tests search for, then punctuation, digits, Unicode, prefixes.
    let mut phrases: Vec<String> = [
        "error",
        "def ",
        "edit",
        "ZeroDivisionError",
        "constraints.py",
        "pydicom",
        "line 1",
        "__init__.py",
        "2.0",
        "Traceback (most recent call last)",
        "self.assert",
        "import numpy as np",
        "goodmarkerword",
        "ZeroDiv",
        "git diff",
        "submit",
        "def test_",
        "sympy",
        "django.db",
        "ValueError:",
        "!!",
        "x",
        "résumé",
        "ΣΊΣΥΦΟΣ",
        "日本",
        "ﬁnal",
        "tab\there",
        "0.5",
        "v1.2.3-rc4",
        "a_b_c",
        "foo.bar(baz)",
        "line 12, in",
        "marker99999 marker100000",
        "marker149999",
    ]
    .map(str::to_string)
    .to_vec();
    phrases.push((20_000..26_000).map(|i| format!("marker{i}")).collect::<Vec<_>>().join(" "));
    for phrase in &phrases {
        pair.same(&["search", phrase, "--json", "--limit", "500"]);
    }
    let long = pair.same(&["search", phrases.last().map_or("", String::as_str), "--json"]);
    assert!(long.contains("marker20000"), "a phrase past a piece's overlap is found");
}

/// Trajectories whose texts tokenizers split differently, and one larger than a piece of terms.
fn generated_runs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let long: String = (0..150_000).map(|i| format!("marker{i} ")).collect();
    let observations = [
        "résumé naïve ﬁnal straße ΣΊΣΥΦΟΣ 日本語",
        "tab\there v1.2.3-rc4 a_b_c foo.bar(baz) 0.5",
        "\u{1b}[31mred\u{1b}[0m \u{FFFE} \u{10FFFF} nul\u{0}byte",
        long.as_str(),
    ];
    for (i, obs) in observations.iter().enumerate() {
        let traj = serde_json::json!({
            "trajectory": [{
                "action": format!("cat gen{i}.py"), "observation": obs, "thought": "looking", "response": "r",
                "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/r\"}"
            }],
            "history": [],
            "info": {"exit_status": "submitted"}
        });
        std::fs::write(dir.path().join(format!("gen__gen-{i}.traj")), traj.to_string())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    dir
}

#[test]
fn classify_label_agreement_stats_and_exports_answer_alike() {
    let Some(pair) = Pair::new(&[fixtures()]) else { return };
    for db in [pair.file.as_os_str(), pair.pg()] {
        ok(db, &["classify"]);
        ok(db, &["label", "classify__mixture", "--mode", "missed_edit_location", "--rater", "ann"]);
        ok(db, &["label", "classify__mixture", "--mode", "context_flooding", "--rater", "bob"]);
    }
    pair.same(&["runs", "--json"]);
    pair.same(&["agreement", "--json", "--resamples", "0"]);
    pair.same(&["stats", "--json"]);
    pair.same(&["stats", "--json", "--by", "model"]);
    let labels = |db: &OsStr| -> Vec<Value> {
        let v: Value = serde_json::from_str(&ok(db, &["labels", "--json"])).unwrap_or_default();
        // Label ids and times are the store's own; the rest must agree.
        v.as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|mut l| {
                l["id"] = Value::Null;
                l["created_at"] = Value::Null;
                l
            })
            .collect()
    };
    assert_eq!(labels(&pair.file), labels(pair.pg()));
    for table in ["runs", "steps", "edits"] {
        pair.same(&["export", table, "--format", "csv"]);
    }
}

#[test]
fn onset_and_blame_in_statistics_agreement_filters_and_exports_answer_alike() {
    let Some(pair) = Pair::new(&[fixtures()]) else { return };
    for db in [pair.file.as_os_str(), pair.pg()] {
        ok(db, &["classify"]);
        ok(db, &["label", "classify__mixture", "--mode", "context_flooding", "--blame", "task", "--rater", "ann"]);
        ok(db, &["label", "classify__cut-off", "--unclassified", "--blame", "environment", "--rater", "ann"]);
        ok(db, &["label", "classify__flooding", "--mode", "context_flooding", "--onset", "2", "--rater", "ann"]);
        ok(db, &["label", "classify__flooding", "--mode", "context_flooding", "--onset", "3", "--rater", "bob"]);
    }
    let stats: Value = serde_json::from_str(&pair.same(&["stats", "--json"])).unwrap_or_default();
    assert_eq!(
        (stats["total"]["blamed_task"].as_u64(), stats["total"]["blamed_environment"].as_u64()),
        (Some(1), Some(1))
    );
    let agreement: Value =
        serde_json::from_str(&pair.same(&["agreement", "--json", "--resamples", "0"])).unwrap_or_default();
    let pairs = agreement["onset_and_blame"]["pairs"].as_array().cloned().unwrap_or_default();
    let ann_bob = pairs.iter().find(|p| p["a"] == "human:ann" && p["b"] == "human:bob");
    assert_eq!(ann_bob.map(|p| p["onset"]["within_1"]["value"].clone()), Some(1.0.into()), "{agreement}");
    let kept: Value =
        serde_json::from_str(&pair.same(&["runs", "--filter", "blame:task", "--json"])).unwrap_or_default();
    assert_eq!(kept.as_array().map(|r| r.len()), Some(1), "{kept}");
    pair.same(&["runs", "--filter", "onset:yes source:human", "--json"]);
    pair.same(&["stats", "--by", "exit", "--source", "human"]);
    pair.same(&["export", "runs", "--format", "csv"]);
}

#[test]
fn verdicts_tests_from_another_evaluation_and_unmatched_evaluations_answer_alike() {
    // A run summary giving the verdict and per-instance reports the tests (runs.tests_outcome_id),
    // one where they disagree, SWE-smith reports with evaluations of no trajectory, a
    // Multi-SWE-bench folder, and an evaluation of another patch beside a trajectory.
    let Some(pair) = Pair::new(&[
        common::fixtures_dir("labelled/runs/google_gemini-3-pro-preview"),
        common::fixtures_dir("labelled/reports/google_gemini-3-pro-preview"),
        common::corpus().join("swe-smith"),
        common::fixtures_dir("layouts").join("multi-swe-bench"),
        common::fixtures_dir("layouts").join("beside-trajectory"),
    ]) else {
        return;
    };
    let runs: Value = serde_json::from_str(&pair.same(&["runs", "--json"])).unwrap_or_default();
    let runs = runs.as_array().cloned().unwrap_or_default();
    assert!(runs.len() > 22, "{}", runs.len());
    let mut tests_elsewhere = 0;
    for run in &runs {
        let show: Value =
            serde_json::from_str(&pair.same(&["show", &run["id"].to_string(), "--json"])).unwrap_or_default();
        tests_elsewhere += usize::from(show["outcome"]["tests_source"].is_string());
    }
    assert_eq!(tests_elsewhere, 22, "the Gemini runs take their tests from their reports");
    let orphans: Value = serde_json::from_str(&pair.same(&["runs", "--evaluations", "--json"])).unwrap_or_default();
    assert!(orphans.as_array().is_some_and(|o| o.len() > 50), "{orphans}");
    pair.same(&["runs", "--evaluations"]);
    pair.same(&["stats", "--json"]);
    // The ingest summary's verdict counts (a second ingest changes nothing, and counts the whole store).
    let verdicts = |db: &OsStr| -> Value {
        let out = ok(db, &["ingest", "--json", &common::corpus().join("swe-smith").to_string_lossy()]);
        serde_json::from_str::<Value>(&out).unwrap_or_default()["verdicts"].clone()
    };
    let (a, b) = (verdicts(&pair.file), verdicts(pair.pg()));
    assert!(a["unmatched"].as_i64().is_some_and(|n| n > 50), "{a}");
    assert_eq!(a, b);
}

#[test]
fn eight_processes_labelling_importing_and_classifying_at_once_lose_and_repeat_nothing() {
    let Some(pair) = Pair::new(&[fixtures()]) else { return };
    // An export of another reviewer's labels, imported by two processes at once.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let other = dir.path().join("other.db");
    ok(other.as_os_str(), &["ingest", fixtures().to_str().unwrap_or_default()]);
    let runs: Vec<String> = serde_json::from_str::<Vec<Value>>(&ok(other.as_os_str(), &["runs", "--json"]))
        .unwrap_or_default()
        .iter()
        .map(|r| r["instance_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(runs.len() >= 10, "{}", runs.len());
    for r in &runs {
        ok(other.as_os_str(), &["label", r, "--mode", "context_flooding", "--rater", "imp"]);
    }
    let export = dir.path().join("imp.jsonl");
    ok(other.as_os_str(), &["export", "labels", "--format", "jsonl", "-o", export.to_str().unwrap_or_default()]);
    let list = runs.join(" ");
    let script = |i: usize| match i {
        0..5 => format!(
            "for r in {list}; do \"$TRAJAN\" --db \"$DB\" label \"$r\" --mode context_flooding --rater r{i} >/dev/null || exit 1; done"
        ),
        5 => "\"$TRAJAN\" --db \"$DB\" classify >/dev/null".to_string(),
        _ => format!("\"$TRAJAN\" --db \"$DB\" import-labels {} >/dev/null", export.display()),
    };
    let run_all = |db: &OsStr, parallel: bool| {
        let spawn = |i: usize| {
            Command::new("sh")
                .arg("-c")
                .arg(script(i))
                .env("TRAJAN", env!("CARGO_BIN_EXE_trajan"))
                .env("DB", db)
                .env("XDG_CONFIG_HOME", dir.path())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let finish = |i: usize, child: std::process::Child| {
            let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            assert!(out.status.success(), "process {i}: {}", String::from_utf8_lossy(&out.stderr));
        };
        if parallel {
            let children: Vec<_> = (0..8).map(spawn).collect();
            for (i, child) in children.into_iter().enumerate() {
                finish(i, child);
            }
        } else {
            for i in 0..8 {
                finish(i, spawn(i));
            }
        }
    };
    run_all(&pair.file, false);
    run_all(pair.pg(), true);
    let history = |db: &OsStr| -> Vec<(String, String, String)> {
        let v: Vec<Value> = serde_json::from_str(&ok(db, &["labels", "--history", "--json"])).unwrap_or_default();
        let mut rows: Vec<(String, String, String)> =
            v.iter().map(|l| (l["rater"].to_string(), l["instance_id"].to_string(), l["modes"].to_string())).collect();
        rows.sort();
        rows
    };
    let (serial, concurrent) = (history(&pair.file), history(pair.pg()));
    assert_eq!(concurrent.len(), serial.len(), "no label lost, none twice");
    assert_eq!(concurrent, serial);
    let imported = concurrent.iter().filter(|l| l.0 == "\"imp\"").count();
    assert_eq!(imported, runs.len(), "two imports at once append each label once");
    pair.same(&["agreement", "--json", "--resamples", "0"]);
}

#[test]
fn a_copy_to_postgresql_and_back_is_compared_table_by_table() {
    let Some(pair) = Pair::new(&[fixtures()]) else { return };
    let Some(target) = common::pg_database() else { return };
    ok(&pair.file, &["label", "classify__mixture", "--mode", "context_flooding", "--rater", "ann"]);
    let copied = trajan(&pair.file, &["copy", "--from", pair.file.to_str().unwrap_or_default(), "--to", &target.url]);
    let (out, progress) = (String::from_utf8_lossy(&copied.stdout), String::from_utf8_lossy(&copied.stderr));
    assert!(out.contains("every table compared equal"), "{out}{progress}");
    // Off a terminal, progress is one line per table copied and compared, and the index built.
    for line in ["steps: ", "building the target's search index", "labels: 1 rows compared equal"] {
        assert!(progress.contains(line), "{line:?} not in {progress}");
    }
    let back = pair._dir.path().join("back.db");
    let out = ok(&pair.file, &["copy", "--from", &target.url, "--to", back.to_str().unwrap_or_default()]);
    assert!(out.contains("every table compared equal"), "{out}");
    let (a, b) = (ok(&pair.file, &["labels", "--json"]), ok(OsStr::new(&target.url), &["labels", "--json"]));
    assert_eq!(a, b, "labels keep their ids and runs");
    assert_eq!(ok(&pair.file, &["search", "edit", "--json"]), ok(back.as_os_str(), &["search", "edit", "--json"]));
    // Again: every row is there (as after a copy killed while SQLite built its index).
    let from = pair.file.to_str().unwrap_or_default();
    let again = ok(&pair.file, &["copy", "--from", from, "--to", &target.url]);
    assert!(again.contains("already held every row") && again.contains("compared equal"), "{again}");
    // A target with other rows is refused.
    ok(&pair.file, &["label", "classify__mixture", "--mode", "context_flooding", "--rater", "bob"]);
    let other = trajan(&pair.file, &["copy", "--from", from, "--to", &target.url]);
    assert_eq!(other.status.code(), Some(2));
    assert!(text(&other).contains("already holds data that is not a copy"), "{}", text(&other));
}

/// The server's host and port, from the test server's URL.
fn host_port() -> Option<String> {
    let url = common::pg_server::server()?;
    let rest = url.split_once('@')?.1;
    Some(rest.split('/').next()?.to_string())
}

#[test]
fn a_wrong_password_or_a_silent_host_is_a_clear_error_naming_host_and_port() {
    let Some(admin) = common::pg_server::server() else { return };
    let Some(at) = host_port() else { return };
    let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let _ = client.batch_execute("CREATE ROLE trajan_secret LOGIN PASSWORD 'right-one'");
    let wrong = format!("postgres://trajan_secret:Hunter2Wrong@{at}/postgres");
    let out = trajan(OsStr::new(&wrong), &["runs"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains(&format!("at {at}")) && said.contains("password"), "{said}");
    assert!(!said.contains("Hunter2Wrong"), "the password is never printed: {said}");
    // A port where nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let url = format!("postgres://ann:Pw0rdXYZ@127.0.0.1:{}/x", closed.unwrap_or(1));
    let out = trajan(OsStr::new(&url), &["runs"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out);
    assert!(said.contains("127.0.0.1:") && said.contains("cannot connect"), "{said}");
    assert!(!said.contains("Pw0rdXYZ") && !said.contains("panicked"), "{said}");
}

#[test]
fn the_password_is_in_no_output_nor_in_the_database() {
    let Some(pg) = common::pg_database() else { return };
    // The server trusts loopback: any password is accepted, and must go nowhere.
    let url = pg.url.replacen("postgres@", "postgres:Pa55w0rdSecret@", 1);
    let db = OsStr::new(&url);
    let mut outputs = String::new();
    for args in [
        vec!["ingest", fixtures().to_str().unwrap_or_default()],
        vec!["runs"],
        vec!["search", "error"],
        vec!["label", "classify__mixture", "--mode", "context_flooding", "--rater", "ann"],
        vec!["classify"],
        vec!["stats"],
        vec!["show", "no-such-run"],
        vec!["migrate"],
    ] {
        outputs.push_str(&text(&trajan(db, &args)));
    }
    assert!(!outputs.contains("Pa55w0rdSecret"), "{outputs:.3000}");
    assert!(outputs.contains("postgres:***@"), "the URL is shown redacted: {outputs:.2000}");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("dump.db");
    ok(db, &["copy", "--from", &url, "--to", file.to_str().unwrap_or_default()]);
    let bytes = std::fs::read(&file).unwrap_or_default();
    assert!(!bytes.windows(14).any(|w| w == b"Pa55w0rdSecret"), "the password is not stored");
}

#[test]
fn tls_is_used_when_the_url_asks_and_the_certificate_checked_when_told_how() {
    let (Some(pg), Ok(ca)) = (common::pg_database(), std::env::var("TRAJAN_TEST_PG_CA")) else { return };
    let with = |params: &str| format!("{}?{params}", pg.url);
    ok(OsStr::new(&with("sslmode=require")), &["runs"]);
    ok(OsStr::new(&with(&format!("sslmode=verify-full&sslrootcert={ca}"))), &["runs"]);
    // A certificate signed by no CA it was given is refused.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let other = dir.path().join("other.pem");
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=other"])
        .arg("-keyout")
        .arg(dir.path().join("k"))
        .arg("-out")
        .arg(&other)
        .output();
    if made.is_ok_and(|o| o.status.success()) {
        let out = trajan(OsStr::new(&with(&format!("sslmode=verify-full&sslrootcert={}", other.display()))), &["runs"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    }
    // The server says the session is encrypted.
    let url = with("sslmode=require");
    let mut child = common::command()
        .args(["--db", &url, "ingest", fixtures().to_str().unwrap_or_default()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let admin = common::pg_server::server().unwrap_or_default();
    let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let name = pg.url.rsplit('/').next().unwrap_or_default().to_string();
    let mut seen = None;
    for _ in 0..200 {
        let row = client
            .query_opt(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
                 WHERE a.datname = $1 AND a.application_name = 'trajan'",
                &[&name],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(r) = row {
            seen = Some(r.get::<_, bool>(0));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.wait();
    assert_eq!(seen, Some(true), "the ingest's connection is encrypted");
}

#[test]
fn a_connection_killed_mid_ingest_leaves_whole_units_and_a_second_ingest_completes() {
    let Some(pg) = common::pg_database() else { return };
    let admin = common::pg_server::server().unwrap_or_default();
    let name = pg.url.rsplit('/').next().unwrap_or_default().to_string();
    let corpus = common::corpus();
    let child = common::command()
        .args(["--db", &pg.url, "ingest", corpus.to_str().unwrap_or_default()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // As a server restart looks to the ingest: its connection ends under it, mid-write.
    let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let mut killed = false;
    for _ in 0..400 {
        let n = client
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity a WHERE datname = $1
                 AND application_name = 'trajan' AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory')",
                &[&name],
            )
            .unwrap_or(0);
        if n > 0 {
            killed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let said = text(&out);
    assert!(!said.contains("panicked"), "{said}");
    assert!(killed, "the ingest's connection was ended while it held a file's lock");
    assert_ne!(out.status.code(), Some(0), "the lost units are reported: {said:.2000}");
    let db = OsStr::new(&pg.url);
    // Every stored step has its texts and chunks: nothing half-written.
    let store =
        trajan::store::Store::connect(&trajan::store::pg::url::PgUrl::parse(&pg.url).unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.integrity_check().unwrap_or_default(), "ok");
    drop(store);
    // The next ingest writes what was lost; then the store holds what a clean ingest holds.
    ok(db, &["ingest", corpus.to_str().unwrap_or_default()]);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let clean = dir.path().join("clean.db");
    ok(clean.as_os_str(), &["ingest", corpus.to_str().unwrap_or_default()]);
    let runs = |db: &OsStr| -> Vec<(String, String, i64)> {
        let v: Vec<Value> = serde_json::from_str(&ok(db, &["runs", "--json"])).unwrap_or_default();
        let mut r: Vec<_> = v
            .iter()
            .map(|r| (r["source"].to_string(), r["instance_id"].to_string(), r["steps"].as_i64().unwrap_or(-1)))
            .collect();
        r.sort();
        r
    };
    assert_eq!(runs(db), runs(clean.as_os_str()));
}

/// A bulk load leaves the planner without statistics of the new rows until autovacuum comes
/// (the first searches took twice as long); `ingest` analyzes the tables a search reads.
#[test]
fn an_ingest_leaves_the_statistics_of_what_it_wrote() {
    let Some(pg) = common::pg_database() else { return };
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let analyzed = |client: &mut postgres::Client| -> i64 {
        client
            .query_one("SELECT count(DISTINCT tablename) FROM pg_stats WHERE tablename IN ('steps', 'step_lexemes', 'step_terms')", &[])
            .and_then(|r| r.try_get(0))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(analyzed(&mut client), 0, "a new database has none");
    ok(OsStr::new(&pg.url), &["ingest", fixtures().to_str().unwrap_or_default()]);
    assert_eq!(analyzed(&mut client), 3);
}

/// The README's two blocks of role SQL (`## A shared store`, Roles), with the names of this test.
fn readme_role_sql(suffix: &str, database: &str) -> (String, String) {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let roles = readme.split("- **Roles.**").nth(1).unwrap_or_else(|| panic!("no Roles in the README"));
    let blocks: Vec<&str> =
        roles.split("```sql\n").skip(1).take(2).map(|b| b.split("```").next().unwrap_or("")).collect();
    assert_eq!(blocks.len(), 2, "the README's Roles give two SQL blocks");
    let named = |sql: &str| {
        sql.replace("reviewers", &format!("reviewers_{suffix}"))
            .replace("readers", &format!("readers_{suffix}"))
            .replace("ROLE ann ", &format!("ROLE ann_{suffix} "))
            .replace("PASSWORD '...'", "PASSWORD 'pw'")
            .replace("DATABASE trajan ", &format!("DATABASE {database} "))
    };
    (named(blocks[0]), named(blocks[1]))
}

/// The README's role SQL works as written (the roles by a superuser, the grants by the owner,
/// here the server's admin role), and its grants are all `trajan copy` needs: a reviewer copies a
/// file onto the server. A role whose grants leave out `UPDATE` on the sequences (as the README's
/// did) is refused before anything is copied, told what to grant, and the target stays empty.
#[test]
fn a_reviewer_with_the_readmes_grants_copies_and_one_without_sequence_updates_is_told_up_front() {
    let Some(target) = common::pg_database() else { return };
    let Some(admin) = common::pg_server::server() else { return };
    let database = target.url.rsplit('/').next().unwrap_or_default().split('?').next().unwrap_or_default().to_string();
    let suffix = format!("{}", std::process::id());
    let (roles, grants) = readme_role_sql(&suffix, &database);
    let mut server = postgres::Client::connect(&admin, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let mut owner = postgres::Client::connect(&target.url, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
    let cleanup = format!(
        "DROP OWNED BY ann_{suffix}, short_{suffix}; DROP ROLE IF EXISTS ann_{suffix}; DROP ROLE IF EXISTS short_{suffix}; \
         DROP ROLE IF EXISTS reviewers_{suffix}; DROP ROLE IF EXISTS readers_{suffix}"
    );
    let _ = server.batch_execute(&format!(
        "DROP ROLE IF EXISTS ann_{suffix}; DROP ROLE IF EXISTS short_{suffix}; DROP ROLE IF EXISTS reviewers_{suffix}; DROP ROLE IF EXISTS readers_{suffix}"
    ));
    server.batch_execute(&roles).unwrap_or_else(|e| panic!("the README's roles: {e}\n{roles}"));
    let granted = owner.batch_execute(&grants);
    // A role with the grants as they were: no UPDATE on the sequences.
    let short = format!("CREATE ROLE short_{suffix} LOGIN; GRANT CONNECT ON DATABASE {database} TO short_{suffix};");
    let short_grants = format!(
        "GRANT USAGE ON SCHEMA public TO short_{suffix}; \
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO short_{suffix}; \
         GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO short_{suffix};"
    );
    let made = server.batch_execute(&short).and_then(|()| owner.batch_execute(&short_grants));
    let as_role = |role: &str| {
        let rest = target.url.split_once('@').map(|(_, r)| r).unwrap_or_default();
        format!("postgres://{role}_{suffix}@{rest}")
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("t.db");
    ok(file.as_os_str(), &["ingest", fixtures().to_str().unwrap_or_default()]);
    let from = file.to_str().unwrap_or_default().to_string();
    let refused = trajan(file.as_os_str(), &["copy", "--from", &from, "--to", &as_role("short")]);
    let empty = ok(OsStr::new(&target.url), &["runs", "--json"]);
    let copied = trajan(file.as_os_str(), &["copy", "--from", &from, "--to", &as_role("ann")]);
    drop(owner);
    let _ = server.batch_execute(&cleanup);
    granted.unwrap_or_else(|e| panic!("the README's grants, as the owner: {e}\n{grants}"));
    made.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let said = text(&refused);
    assert!(
        said.contains(&format!("short_{suffix} may not set the id sequences a copy advances"))
            && said.contains("GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES"),
        "{said}"
    );
    assert!(!said.contains("steps: "), "refused before a table was copied: {said}");
    assert_eq!(empty.trim(), "[]", "nothing was copied");
    assert!(copied.status.success(), "a reviewer with the README's grants copies: {}", text(&copied));
    assert!(text(&copied).contains("every table compared equal"), "{}", text(&copied));
}

/// Without `--rater`, a config's `rater`, `$USER` or `$LOGNAME`, a label on PostgreSQL is the
/// database user's the URL logs in as; on a file there is no such user, and trajan asks who is
/// labelling.
#[test]
fn without_a_rater_the_database_user_labels_on_postgresql() {
    let Some(target) = common::pg_database() else { return };
    let user = target.url.split("://").nth(1).and_then(|r| r.split('@').next()).unwrap_or_default().to_string();
    ok(OsStr::new(&target.url), &["ingest", fixtures().to_str().unwrap_or_default()]);
    let anonymous = |db: &OsStr| {
        common::command()
            .env_remove("USER")
            .env_remove("LOGNAME")
            .arg("--db")
            .arg(db)
            .args(["label", "classify__mixture", "--mode", "context_flooding"])
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let out = anonymous(OsStr::new(&target.url));
    assert!(out.status.success(), "{}", text(&out));
    let labels: Value = serde_json::from_str(&ok(OsStr::new(&target.url), &["labels", "--json"])).unwrap_or_default();
    let human: Vec<&Value> = labels.as_array().into_iter().flatten().filter(|l| l["source"] == "human").collect();
    assert_eq!(human.len(), 1, "{labels}");
    assert_eq!(human[0]["rater"], user.as_str(), "the database user labels: {labels}");
    // A file has no database user.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("t.db");
    ok(file.as_os_str(), &["ingest", fixtures().to_str().unwrap_or_default()]);
    let out = anonymous(file.as_os_str());
    assert!(!out.status.success() && text(&out).contains("who is labelling?"), "{}", text(&out));
}
