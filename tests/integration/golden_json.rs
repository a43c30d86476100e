//! The JSON the CLI prints about the real corpus, byte for byte: `runs`, `show` (each run, and
//! its steps one by one), `search`, `signals` and `compare` (the three marshmallow-1867 replays), compared with the digests in
//! `tests/golden/json.digests`. A refactoring of the read side must leave them unchanged; a
//! change meant to alter the output re-blesses them with `TRAJAN_BLESS=1 cargo test --test
//! golden_json` (and the diff of that file shows which outputs changed).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::common;

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/json.digests")
}

/// The store: a file, or a PostgreSQL URL; and a folder for the configuration (none in it).
struct Db<'a> {
    at: &'a OsStr,
    config: &'a Path,
}

fn trajan(db: &Db<'_>, args: &[String]) -> Vec<u8> {
    let out = common::command()
        .arg("--db")
        .arg(db.at)
        .args(args)
        .env("XDG_CONFIG_HOME", db.config)
        .output()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"));
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Every output, keyed by its command line, with the corpus folder written as `CORPUS` (the
/// checkout's location must not matter).
fn outputs(db: &Db<'_>) -> BTreeMap<String, String> {
    let mut ingest = vec!["ingest".to_string()];
    ingest.extend(common::corpus_paths());
    trajan(db, &ingest);
    let corpus = common::corpus().to_string_lossy().into_owned();
    let mut out = BTreeMap::new();
    let mut record = |args: Vec<String>| {
        let text = String::from_utf8_lossy(&trajan(db, &args)).replace(&corpus, "CORPUS");
        out.insert(args.join(" "), text);
    };
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    record(args(&["runs", "--json"]));
    record(args(&["runs", "--failed", "--json"]));
    let runs: Vec<serde_json::Value> =
        serde_json::from_slice(&trajan(db, &args(&["runs", "--json"]))).unwrap_or_else(|e| panic!("{e}"));
    for run in &runs {
        let id = run["id"].to_string();
        record(args(&["show", &id, "--json"]));
        record(args(&["signals", &id, "--json"]));
        for step in 0..run["steps"].as_i64().unwrap_or(0) {
            record(args(&["show", &id, "--step", &step.to_string(), "--json"]));
        }
    }
    // The three SWE-agent runs of one instance under three configurations, compared.
    let replays = runs.iter().filter(|r| r["source"].as_str().is_some_and(|s| s.contains("/swe-agent-replays/")));
    let mut compare = args(&["compare"]);
    compare.extend(replays.map(|r| r["id"].to_string()));
    assert_eq!(compare.len(), 4, "the corpus holds three replays of marshmallow-1867");
    compare.push("--json".into());
    record(compare);
    for query in ["error", "def ", "edit", "ZeroDivisionError", "constraints.py"] {
        record(args(&["search", query, "--json", "--limit", "200"]));
    }
    out
}

fn digest(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..32].to_string()
}

#[test]
fn the_cli_json_on_the_corpus_is_unchanged() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("golden.db");
    check(outputs(&Db { at: file.as_os_str(), config: dir.path() }), true);
}

/// The same commands on a PostgreSQL store print the same bytes: the backends answer alike.
#[test]
fn on_postgresql_the_cli_json_is_the_same() {
    let Some(pg) = common::pg_database() else { return };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    check(outputs(&Db { at: OsStr::new(&pg.url), config: dir.path() }), false);
}

/// The digests of `outputs` against the blessed ones (re-blessed when asked and `bless`).
fn check(outputs: BTreeMap<String, String>, bless: bool) {
    let digests: BTreeMap<String, String> = outputs.iter().map(|(k, v)| (k.clone(), digest(v))).collect();
    let text: String = digests.iter().map(|(k, d)| format!("{d}  {k}\n")).collect();
    if bless && std::env::var_os("TRAJAN_BLESS").is_some() {
        std::fs::create_dir_all(golden().parent().unwrap_or(Path::new("."))).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(golden(), &text).unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    let want = std::fs::read_to_string(golden()).unwrap_or_else(|e| panic!("{}: {e}", golden().display()));
    let want: BTreeMap<&str, &str> = want.lines().filter_map(|l| l.split_once("  ")).map(|(d, k)| (k, d)).collect();
    let changed: Vec<&String> =
        digests.iter().filter(|(k, d)| want.get(k.as_str()) != Some(&d.as_str())).map(|(k, _)| k).collect();
    let gone: Vec<&&str> = want.keys().filter(|k| !digests.contains_key(**k)).collect();
    assert!(
        changed.is_empty() && gone.is_empty(),
        "{} outputs differ from tests/golden/json.digests (TRAJAN_BLESS=1 re-blesses a change meant to be): {changed:?}; no longer printed: {gone:?}",
        changed.len()
    );
}
