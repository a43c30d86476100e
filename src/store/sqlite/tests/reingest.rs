//! A source written again (issue 24, item 1; `store::tests::reingest` on both stores): labels
//! and notes of SQLite databases made before runs had identities get them from their runs.

use super::unmarked_trajan;
use crate::store::backend::*;
use crate::store::sqlite::Sqlite;
use crate::store::tests::{ok, placed, record};

#[test]
fn labels_made_before_the_identity_existed_get_it_from_their_run() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("old.db");
    // A database of migration 5 with a run and a label on it.
    unmarked_trajan(&db, 5);
    {
        let conn = ok(rusqlite::Connection::open(&db));
        ok(conn.execute_batch(
            "INSERT INTO sources (id, path, kind, format, size, hash, ingested_at) VALUES (1, '/o.jsonl', 'file', 'test', 1, x'01', 'now');
             INSERT INTO runs (id, source_id, position, instance_id, format, attempt, step_count, edit_count, rejected_count)
                 VALUES (7, 1, 0, 'a__a-1', 'swe-agent', NULL, 0, 0, 0), (8, 1, 1, 'a__a-1', 'swe-agent', NULL, 0, 0, 0);
             INSERT INTO labels (run_id, source, rater, taxonomy, taxonomy_version, unclassified, created_at)
                 VALUES (8, 'human', 'ann', 'refactoring', '1.0', 1, 'then');",
        ));
    }
    let mut store = ok(Sqlite::open(&db));
    let identity: (String, String, Option<i64>, i64) =
        ok(store.conn.query_row("SELECT run_source, run_instance, run_attempt, run_nth FROM labels", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        }));
    assert_eq!(identity, ("/o.jsonl".into(), "a__a-1".into(), None, 1));
    ok(store.remove_source("/o.jsonl"));
    ok(store.write_source(&record("/o.jsonl", &[2; 32]), &placed(&["a__a-1", "a__a-1"])));
    let now: Vec<i64> = ok(store.runs_of_sources(&["/o.jsonl".to_string()]));
    assert_eq!(ok(store.labels(Some(now[1]), false)).len(), 1, "the second run's label follows it");
}

#[test]
fn notes_made_before_the_identity_existed_get_it_from_their_run() {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("old.db");
    // A database of migration 7 (notes, no identities) with a note on a run.
    unmarked_trajan(&db, 7);
    {
        let conn = ok(rusqlite::Connection::open(&db));
        ok(conn.execute_batch(
            "INSERT INTO sources (id, path, kind, format, size, hash, ingested_at) VALUES (1, '/o.jsonl', 'file', 'test', 1, x'01', 'now');
             INSERT INTO runs (id, source_id, position, instance_id, format, attempt, step_count, edit_count, rejected_count)
                 VALUES (7, 1, 0, 'a__a-1', 'swe-agent', NULL, 1, 0, 0), (8, 1, 1, 'a__a-1', 'swe-agent', NULL, 1, 0, 0);
             INSERT INTO notes (run_id, step_idx, rater, text, created_at) VALUES (8, 0, 'ann', 'here', 'then');",
        ));
    }
    let mut store = ok(Sqlite::open(&db));
    ok(store.remove_source("/o.jsonl"));
    ok(store.write_source(&record("/o.jsonl", &[2; 32]), &placed(&["a__a-1", "a__a-1"])));
    let now: Vec<i64> = ok(store.runs_of_sources(&["/o.jsonl".to_string()]));
    assert_eq!(ok(store.notes(Some(now[1]))).len(), 1, "the second run's note follows it");
}
