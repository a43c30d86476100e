mod edit_texts;
mod reingest;
mod texts;
use super::Sqlite as Store;
use super::*;
use crate::error::StoreError;
use crate::model::{Format, Message, Parsed, Run, TestCase, TestGroup, TestOutcome};
use crate::store::backend::*;
use crate::store::read::RunFilter;
use crate::store::tests::{ok, record, run};
use std::path::PathBuf;

fn outcome(instance: &str, model: Option<&str>, resolved: bool) -> TestOutcome {
    TestOutcome {
        instance_id: instance.to_string(),
        format: Some(Format::SwebenchReport),
        model: model.map(str::to_string),
        resolved: Some(resolved),
        tests: vec![TestCase {
            name: "t1".into(),
            group: Some(TestGroup::FailToPass),
            passed: resolved,
            message: None,
        }],
        ..TestOutcome::default()
    }
}

fn count(store: &Store, table: &str) -> i64 {
    store.conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap_or(-1)
}

#[test]
fn outcomes_join_whether_written_before_or_after_the_run() {
    let mut s = ok(Store::open_in_memory());
    let parsed_outcome = Parsed { outcomes: vec![outcome("a-1", None, false)], ..Parsed::default() };
    ok(s.write_source(&record("/logs/a-1/report.json", &[1; 32]), &parsed_outcome));
    let parsed_run = Parsed { runs: vec![run("a-1", None, "x"), run("b-2", None, "y")], ..Parsed::default() };
    ok(s.write_source(&record("/trajs/a.traj", &[2; 32]), &parsed_run));
    let runs = ok(s.list_runs(RunFilter::default()));
    assert_eq!(
        runs.iter().map(|r| (r.instance_id.as_str(), r.resolved)).collect::<Vec<_>>(),
        vec![("a-1", Some(false)), ("b-2", None)]
    );
    let later = Parsed { outcomes: vec![outcome("b-2", None, true)], ..Parsed::default() };
    ok(s.write_source(&record("/logs/b-2/report.json", &[3; 32]), &later));
    let runs = ok(s.list_runs(RunFilter::default()));
    assert_eq!(runs[1].resolved, Some(true));
    let failed = ok(s.list_runs(RunFilter { failed: Some(crate::model::FailedScope::Failed), limit: None }));
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].instance_id, "a-1");
}

#[test]
fn shared_instances_join_by_model() {
    let mut s = ok(Store::open_in_memory());
    let runs = Parsed {
        runs: vec![run("x-1", Some("org/model-a"), "a"), run("x-1", Some("org/model-b"), "b")],
        ..Parsed::default()
    };
    ok(s.write_source(&record("/t/x.jsonl", &[1; 32]), &runs));
    let outs = Parsed {
        outcomes: vec![outcome("x-1", Some("org__model-b"), true), outcome("x-1", Some("org__model-a"), false)],
        ..Parsed::default()
    };
    ok(s.write_source(&record("/logs/summary.json", &[2; 32]), &outs));
    let listed = ok(s.list_runs(RunFilter::default()));
    let by_model: Vec<_> = listed.iter().map(|r| (r.model.clone().unwrap_or_default(), r.resolved)).collect();
    assert!(by_model.contains(&("org/model-a".to_string(), Some(false))), "{by_model:?}");
    assert!(by_model.contains(&("org/model-b".to_string(), Some(true))), "{by_model:?}");
}

#[test]
fn contradicting_candidates_are_never_joined() {
    let mut s = ok(Store::open_in_memory());
    // A summary that names another model, and a report for another patch.
    let mut r = run("p-1", Some("org/llama-3"), "x");
    r.submission = Some("diff --git a/x b/x\n+mine\n".into());
    let mut retry_lost = run("r-1", None, "a");
    retry_lost.attempt = Some(0);
    retry_lost.best_attempt = Some(false);
    let mut retry_won = run("r-1", None, "b");
    retry_won.attempt = Some(1);
    retry_won.best_attempt = Some(true);
    ok(s.write_source(
        &record("/t/runs.jsonl", &[1; 32]),
        &Parsed { runs: vec![r, retry_lost, retry_won], ..Parsed::default() },
    ));
    let mut summary = outcome("p-1", None, false);
    summary.run_label = Some("run_report.org_deepseek-v3.SWE-bench".into());
    let mut other_patch = outcome("p-1", None, true);
    other_patch.patch = Some("diff --git a/x b/x\n+theirs\n".into());
    let retry_outcome = outcome("r-1", None, true);
    let outs = Parsed { outcomes: vec![summary, other_patch, retry_outcome], ..Parsed::default() };
    ok(s.write_source(&record("/logs/all.json", &[2; 32]), &outs));
    let listed = ok(s.list_runs(RunFilter::default()));
    let got: Vec<(String, Option<i64>, Option<bool>)> =
        listed.iter().map(|r| (r.instance_id.clone(), r.attempt, r.resolved)).collect();
    assert_eq!(
        got,
        vec![
            ("p-1".to_string(), None, None),
            ("r-1".to_string(), Some(0), None),
            ("r-1".to_string(), Some(1), Some(true))
        ]
    );
}

#[test]
fn replacing_a_source_keeps_counts_and_frees_unused_blobs() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(
        &record("/t/a.traj", &[1; 32]),
        &Parsed { runs: vec![run("a", None, "first")], ..Parsed::default() },
    ));
    ok(s.write_source(
        &record("/t/b.traj", &[2; 32]),
        &Parsed { runs: vec![run("b", None, "second")], ..Parsed::default() },
    ));
    // The system prompt is shared: 1 + one user message per run.
    assert_eq!(count(&s, "blobs"), 3);
    let mut changed = run("a", None, "changed");
    changed.history[1].content = "Fix a, again".into();
    let stats =
        ok(s.write_source(&record("/t/a.traj", &[9; 32]), &Parsed { runs: vec![changed], ..Parsed::default() }));
    assert!(stats.replaced);
    assert_eq!(count(&s, "runs"), 2);
    // The replaced run kept its id.
    assert_eq!(ok(s.resolve_run("a")), 1);
    assert_eq!(count(&s, "steps"), 2);
    assert_eq!(count(&s, "blobs"), 3, "the old user message is gone, the shared prompt stays");
    assert!(ok(s.search("first", None, 10)).is_empty(), "old text left the index");
    assert_eq!(ok(s.search("changed", None, 10)).len(), 1);
    assert_eq!(ok(s.integrity_check()), "ok");
}

#[test]
fn a_failed_write_leaves_nothing_behind() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(
        &record("/t/a.traj", &[1; 32]),
        &Parsed { runs: vec![run("a", None, "one")], ..Parsed::default() },
    ));
    // Drop a table the write needs, so the transaction fails part-way.
    ok(s.conn.execute_batch("DROP TABLE tests"));
    let bad =
        Parsed { runs: vec![run("b", None, "two")], outcomes: vec![outcome("b", None, true)], ..Parsed::default() };
    assert!(s.write_source(&record("/t/b.traj", &[2; 32]), &bad).is_err());
    assert_eq!(count(&s, "runs"), 1);
    assert_eq!(count(&s, "sources"), 1);
    assert!(ok(s.search("two", None, 10)).is_empty());
}

#[test]
fn prompts_are_rebuilt_exactly_from_deltas() {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/corpus/swe-agent-1.1/pytest-dev__pytest-6202.traj"
    ));
    let text = ok(std::fs::read_to_string(&path));
    let parsed = ok(crate::ingest::swe_agent::parse(&path, &text));
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(&record("/c/pytest.traj", &[1; 32]), &parsed));
    let raw: serde_json::Value = ok(serde_json::from_str(&text));
    let id = ok(s.resolve_run("pytest-dev__pytest-6202"));
    for step in [0usize, 1, 2, 17, 40, 54, 55] {
        let expected: Vec<Message> = raw["trajectory"][step]["query"]
            .as_array()
            .map(|q| q.iter().map(Message::from_value).collect())
            .unwrap_or_default();
        let rebuilt = ok(s.step_prompt(id, step as i64));
        assert_eq!(rebuilt.len(), expected.len(), "step {step}");
        assert!(rebuilt == expected, "step {step} differs");
    }
    // Stored once: far fewer prompt blobs than prompt messages across steps.
    let total: usize = raw["trajectory"]
        .as_array()
        .map(|t| t.iter().map(|s| s["query"].as_array().map_or(0, Vec::len)).sum())
        .unwrap_or(0);
    assert!((count(&s, "query_parts") as usize) * 5 < total);
}

#[test]
fn ambiguous_and_missing_runs_are_named() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(
        &record("/t/a", &[1; 32]),
        &Parsed { runs: vec![run("dup", None, "a"), run("dup", None, "b")], ..Parsed::default() },
    ));
    let err = s.resolve_run("dup").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("names 2 runs"), "{err}");
    assert!(matches!(s.resolve_run("nope"), Err(crate::error::StoreError::NoSuchRun(_))));
    assert_eq!(ok(s.resolve_run("1")), 1);
}

#[test]
fn migrations_are_recorded_and_newer_schemas_refused() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("t.db");
    let s = ok(Store::open(&db));
    assert_eq!(ok(s.schema_version()), schema::MIGRATIONS.len() as i64);
    ok(s.conn.execute_batch("PRAGMA user_version = 999"));
    drop(s);
    assert!(matches!(Store::open(&db), Err(crate::error::StoreError::TooNew { found: 999, .. })));
}

/// A file that is not a trajan database is refused, named, and left as it was.
#[test]
fn files_that_are_not_trajan_databases_are_refused_untouched() {
    let dir = ok(tempfile::tempdir());
    let text = dir.path().join("notes.txt");
    ok(std::fs::write(&text, "not a database, but long enough to have a header's worth of bytes: ".repeat(4)));
    let before = ok(std::fs::read(&text));
    let err = Store::open(&text).err();
    assert!(matches!(&err, Some(StoreError::NotADatabase(p)) if p == &text), "{err:?}");
    let message = err.map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(message, format!("{} is not a trajan database (not SQLite)", text.display()));
    assert_eq!(ok(std::fs::read(&text)), before);

    let other = dir.path().join("other.sqlite");
    let conn = ok(rusqlite::Connection::open(&other));
    ok(conn.execute_batch("CREATE TABLE bookmarks (url TEXT);"));
    drop(conn);
    let before = ok(std::fs::read(&other));
    let err = Store::open(&other).err();
    assert!(matches!(&err, Some(StoreError::NotTrajan(p)) if p == &other), "{err:?}");
    assert_eq!(ok(std::fs::read(&other)), before, "another program's database is not modified");
    assert!(!dir.path().join("other.sqlite-wal").exists());
}

#[test]
fn a_deleted_runs_id_is_never_given_to_another_run_while_labels_name_it() {
    use crate::label::Source;
    let mut store = Store::open_in_memory().unwrap();
    let two = Parsed { runs: vec![run("a__a-1", None, "x"), run("b__b-2", None, "y")], ..Parsed::default() };
    let mut second = run("b__b-2", None, "y");
    second.position = 1;
    let two = Parsed { runs: vec![two.runs[0].clone(), second], ..Parsed::default() };
    store.write_source(&record("/o.jsonl", &[1; 32]), &two).unwrap();
    let b = store.resolve_run("b__b-2").unwrap();
    let label = crate::store::labels::blank_label(b, Source::Human, "ann");
    store.add_label(&label, None).unwrap();
    // The file changes: b's place now holds another instance.
    let mut other = run("c__c-3", None, "z");
    other.position = 1;
    let changed = Parsed { runs: vec![two.runs[0].clone(), other], ..Parsed::default() };
    store.write_source(&record("/o.jsonl", &[2; 32]), &changed).unwrap();
    let c = store.resolve_run("c__c-3").unwrap();
    assert_ne!(c, b, "the label of b must not attach to c");
    let rows = store.labels(None, true).unwrap();
    assert_eq!((rows[0].label.run_id, rows[0].instance_id.as_deref()), (b, None), "the label's run is gone");
}

fn file_bytes(path: &std::path::Path) -> Vec<u8> {
    ok(std::fs::read(path))
}

/// A trajan database as one made before the application id: the schema, no mark.
pub(super) fn unmarked_trajan(path: &std::path::Path, migrations: usize) {
    let conn = ok(rusqlite::Connection::open(path));
    for sql in schema::MIGRATIONS.iter().take(migrations) {
        ok(conn.execute_batch(sql));
    }
    ok(conn.pragma_update(None, "user_version", migrations as i64));
}

fn application_id(path: &std::path::Path) -> i32 {
    let conn = ok(rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY));
    ok(conn.query_row("PRAGMA application_id", [], |r| r.get(0)))
}

#[test]
fn the_tables_of_each_migration_are_read_from_its_sql() {
    let first: Vec<&str> = schema::created_tables(schema::MIGRATIONS[0]).collect();
    assert_eq!(first.first(), Some(&"sources"));
    assert!(first.contains(&"runs") && first.contains(&"steps_fts"), "{first:?}");
    let second: Vec<&str> = schema::created_tables(schema::MIGRATIONS[1]).collect();
    assert_eq!(second, ["signals", "labels", "label_modes", "llm_cache", "classify_errors"]);
}

/// New databases carry trajan's application id; one made before it is known by its version and
/// tables, marked when opened to write, and left as it is when opened to read.
#[test]
fn trajan_databases_are_marked_and_older_ones_recognised() {
    assert_eq!(APPLICATION_ID.to_be_bytes(), *b"TRJN");
    let dir = ok(tempfile::tempdir());
    let new = dir.path().join("new.db");
    drop(ok(Store::open(&new)));
    assert_eq!(application_id(&new), APPLICATION_ID);

    let old = dir.path().join("old.db");
    unmarked_trajan(&old, schema::MIGRATIONS.len());
    let before = file_bytes(&old);
    let reader = ok(Store::open_read_only(&old));
    assert_eq!(ok(reader.list_runs(RunFilter::default())).len(), 0);
    drop(reader);
    assert_eq!(file_bytes(&old), before, "reading does not mark it");
    drop(ok(Store::open(&old)));
    assert_eq!(application_id(&old), APPLICATION_ID);

    // An older schema is migrated by a writer; a reader refuses it, untouched.
    let older = dir.path().join("older.db");
    unmarked_trajan(&older, 1);
    let before = file_bytes(&older);
    let err = Store::open_read_only(&older).err();
    assert!(matches!(&err, Some(StoreError::TooOld { found: 1, .. })), "{err:?}");
    assert_eq!(file_bytes(&older), before);
    let s = ok(Store::open(&older));
    assert_eq!(ok(s.schema_version()), schema::MIGRATIONS.len() as i64);
    drop(s);
    assert_eq!(application_id(&older), APPLICATION_ID);
}

/// Another program's database that uses `user_version` too, or has an application id of its
/// own, is not taken for trajan's and is left as it was.
#[test]
fn other_programs_databases_with_a_version_or_an_id_are_refused_untouched() {
    let dir = ok(tempfile::tempdir());
    let versioned = dir.path().join("versioned.sqlite");
    let conn = ok(rusqlite::Connection::open(&versioned));
    ok(conn.execute_batch("CREATE TABLE bookmarks (url TEXT); PRAGMA user_version = 1;"));
    drop(conn);
    let identified = dir.path().join("identified.sqlite");
    let conn = ok(rusqlite::Connection::open(&identified));
    ok(conn.execute_batch("PRAGMA application_id = 1234;"));
    // An application id alone: an empty database of another program.
    drop(conn);
    for path in [&versioned, &identified] {
        let before = file_bytes(path);
        for opened in [Store::open(path), Store::open_read_only(path)] {
            let err = opened.err();
            assert!(matches!(&err, Some(StoreError::NotTrajan(p)) if p == path), "{}: {err:?}", path.display());
        }
        assert_eq!(file_bytes(path), before, "{}", path.display());
    }
}

#[test]
fn a_newer_database_is_refused_when_reading_too() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("t.db");
    let s = ok(Store::open(&db));
    ok(s.conn.execute_batch("PRAGMA user_version = 999"));
    drop(s);
    let before = file_bytes(&db);
    assert!(matches!(Store::open_read_only(&db), Err(StoreError::TooNew { found: 999, .. })));
    assert_eq!(file_bytes(&db), before);
}

/// Opened to read, the connection is SQLite's read-only one: an empty file stays empty, a write
/// fails; the store's writer is a read-write store on the same file, whose label the reader
/// then sees.
#[test]
fn a_read_only_store_never_writes_and_opens_a_writer_when_asked() {
    let dir = ok(tempfile::tempdir());
    let empty = dir.path().join("empty.db");
    ok(std::fs::write(&empty, b""));
    assert!(matches!(Store::open_read_only(&empty), Err(StoreError::Empty(p)) if p == empty));
    assert_eq!(file_bytes(&empty).len(), 0);

    let db = dir.path().join("t.db");
    let mut s = ok(Store::open(&db));
    ok(s.write_source(
        &record("/t/a.traj", &[1; 32]),
        &Parsed { runs: vec![run("a", None, "x")], ..Parsed::default() },
    ));
    drop(s);
    let reader = ok(Store::open_read_only(&db));
    assert!(reader.is_read_only());
    assert!(ok(reader.conn.is_readonly(rusqlite::MAIN_DB)), "opened with SQLITE_OPEN_READONLY");
    let label = crate::store::labels::blank_label(ok(reader.resolve_run("a")), crate::label::Source::Human, "ann");
    let refused = reader.add_label(&label, None).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("readonly"), "{refused}");
    let writer = ok(reader.writer());
    assert!(!writer.is_read_only());
    ok(writer.add_label(&label, None));
    assert_eq!(ok(reader.labels(None, true)).len(), 1, "the reader sees what its writer wrote");
}

#[test]
fn immutable_uris_escape_what_sqlite_would_read_as_syntax() {
    use std::path::Path;
    assert_eq!(open::immutable_uri(Path::new("/d/t.db")), "file:///d/t.db?immutable=1");
    assert_eq!(open::immutable_uri(Path::new("//host/t.db")), "file:////host/t.db?immutable=1");
    assert_eq!(open::immutable_uri(Path::new("a b/x?y#z%.db")), "file:a%20b/x%3Fy%23z%25.db?immutable=1");
    assert_eq!(open::immutable_uri(Path::new("é.db")), "file:%C3%A9.db?immutable=1");
}

/// Several writers creating one new database at the same moment: the schema is applied once,
/// every one of them opens it.
#[test]
fn writers_opening_a_new_database_at_once_all_succeed() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("new.db");
    let barrier = std::sync::Barrier::new(8);
    let opened: Vec<Result<i64, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    Store::open(&db).and_then(|s| s.schema_version()).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect()
    });
    for o in opened {
        assert_eq!(o, Ok(schema::MIGRATIONS.len() as i64));
    }
    assert_eq!(application_id(&db), APPLICATION_ID);
}

/// Switching a new file to WAL while another connection holds its write lock fails busy at once,
/// without SQLite's busy handler: the open tries again until the lock is released.
#[test]
fn the_switch_to_wal_waits_for_another_writer() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("new.db");
    ok(std::fs::write(&db, b""));
    let other = ok(rusqlite::Connection::open(&db));
    ok(other.execute_batch("BEGIN IMMEDIATE"));
    let holder = std::thread::spawn(move || {
        // Long enough for the open below to meet the lock (the test checks that it waits, not
        // how long).
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(other);
    });
    let opened = Store::open(&db).and_then(|s| s.schema_version()).map_err(|e| e.to_string());
    assert!(holder.join().is_ok());
    assert_eq!(opened, Ok(schema::MIGRATIONS.len() as i64));
}

/// A name stored for a run's format or a label's source that this trajan does not know is an
/// error naming it, never read as a default; a run without a format is not written.
#[test]
fn a_stored_name_this_trajan_does_not_know_is_an_error_naming_it() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(
        &record("/trajs/a.traj", &[1; 32]),
        &Parsed { runs: vec![run("a-1", None, "x")], ..Parsed::default() },
    ));
    let id = ok(s.resolve_run("a-1"));
    assert_eq!(ok(s.run_summary(id)).format, Format::SweAgent);
    ok(s.conn.execute("UPDATE runs SET format = 'swe-agent-9'", []));
    for e in [s.list_runs(RunFilter::default()).err(), s.run_detail(id, None).err(), s.run_table().err()] {
        assert!(
            matches!(&e, Some(StoreError::UnknownName { what: "format", value }) if value == "swe-agent-9"),
            "{e:?}"
        );
    }
    let message = s.list_runs(RunFilter::default()).err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(message, "the database is damaged: \"swe-agent-9\" is not a known format");

    ok(s.record_classify_error(id, crate::label::Source::Llm, Some("gpt"), "timed out"));
    assert_eq!(ok(s.classify_errors(None))[0].source, crate::label::Source::Llm);
    ok(s.conn.execute("UPDATE classify_errors SET source = 'robot'", []));
    let e = s.classify_errors(None).err();
    assert!(matches!(&e, Some(StoreError::UnknownName { what: "label source", value }) if value == "robot"), "{e:?}");

    let formless = Run { format: None, ..run("b-2", None, "y") };
    let e = s.write_source(&record("/trajs/b.traj", &[2; 32]), &Parsed { runs: vec![formless], ..Parsed::default() });
    assert!(matches!(&e, Err(StoreError::Invalid(m)) if m.contains("\"b-2\" has no format")), "{e:?}");
    assert_eq!(count(&s, "runs"), 1, "nothing of the refused source is written");
}
