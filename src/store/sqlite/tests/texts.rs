//! Compressed step texts, the search index built after the write, batches of sources, and
//! databases written before these existed.

use crate::model::{Parsed, Run, Step};
use crate::store::backend::*;
use crate::store::read::StepRow;
use crate::store::sqlite::Sqlite as Store;
use crate::store::sqlite::*;
use crate::store::tests::{ok, record, step};

fn count(store: &Store, sql: &str) -> i64 {
    ok(store.conn.query_row(&format!("SELECT COUNT(*) FROM {sql}"), [], |r| r.get(0)))
}

fn run(instance: &str, steps: Vec<Step>) -> Parsed {
    let run =
        Run { instance_id: instance.into(), format: Some(crate::model::Format::SweAgent), steps, ..Run::default() };
    Parsed { runs: vec![run], ..Parsed::default() }
}

/// Steps of every shape a record holds: missing and present response and args, non-ASCII text,
/// empty texts, observations larger than a chunk.
fn varied_steps() -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..40 {
        let mut s = step(&format!("thought {i} über"), &format!("cat file_{i}.py"), &format!("line {i}\n").repeat(900));
        s.response = (i % 3 == 0).then(|| format!("THOUGHT: thought {i}\n```bash\ncat\n```"));
        s.args = (i % 4 == 0).then(|| format!("{{\"command\":\"cat file_{i}.py\"}}"));
        steps.push(s);
    }
    steps.push(step("", "", ""));
    let mut big = "0123456789 abcdef\n".repeat(200_000);
    big.push_str("needle at the very end of a long observation");
    steps.push(step("big one", "cat big.log", &big));
    steps
}

fn texts(r: &StepRow) -> (String, String, String, Option<String>, Option<serde_json::Value>) {
    (r.thought.clone(), r.action.clone(), r.observation.clone(), r.response.clone(), r.args.clone())
}

#[test]
fn compressed_texts_read_back_exactly_as_written() {
    let mut s = ok(Store::open_in_memory());
    let steps = varied_steps();
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", steps.clone())));
    assert!(count(&s, "text_chunks") > 1, "several chunks");
    assert_eq!(count(&s, "step_texts WHERE chunk_id IS NULL"), 0, "every step compressed");
    let id = ok(s.resolve_run("a-1"));
    let detail = ok(s.run_detail(id, None));
    assert_eq!(detail.step_list.len(), steps.len());
    for (row, want) in detail.step_list.iter().zip(&steps) {
        let args = want.args.as_deref().map(|a| ok(serde_json::from_str::<serde_json::Value>(a)));
        let want = (want.thought.clone(), want.action.clone(), want.observation.clone(), want.response.clone(), args);
        assert_eq!(texts(row), want, "step {}", row.index);
        // One step at a time, as the TUI reads them: each text within the step view's bound
        // (the big observation's head and tail only, streamed from its chunk).
        let body = ok(s.step_body(id, row.index)).step;
        let (observation, cut) = crate::store::texts::cut(row.observation.clone(), crate::store::SHOWN);
        assert_eq!(
            texts(&body),
            (row.thought.clone(), row.action.clone(), observation, row.response.clone(), row.args.clone())
        );
        assert_eq!(body.cuts, [None, None, cut], "step {}", row.index);
        assert_eq!(cut.is_some(), row.observation.len() > 320 << 10, "step {}", row.index);
    }
}

#[test]
fn the_steps_table_export_reads_compressed_and_plain_texts() {
    let dir = ok(tempfile::tempdir());
    let path = dir.path().join("old.db");
    old_database(&path);
    let mut s = ok(Store::open(&path));
    let steps = varied_steps();
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", steps.clone())));
    let mut rows = Vec::new();
    ok(s.each_step(&mut |r| {
        rows.push((r.instance_id, r.step, r.thought, r.action, r.observation));
        true
    }));
    let mut want =
        vec![("old-1".to_string(), 0, "an ancient thought".into(), "grep -rn legacy".into(), "old observation".into())];
    want.extend(
        steps.iter().enumerate().map(|(i, st)| {
            ("a-1".to_string(), i as i64, st.thought.clone(), st.action.clone(), st.observation.clone())
        }),
    );
    assert_eq!(rows, want);
}

#[test]
fn search_reads_compressed_texts_in_pieces_and_finds_what_the_plain_texts_held() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", varied_steps())));
    let hits = ok(s.search("needle at the very", None, 10));
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].step, hits[0].field), (41, "observation"));
    assert!(hits[0].snippet.contains("[needle at the very]"), "{}", hits[0].snippet);
    let hits = ok(s.search("thought 7 über", None, 10));
    assert_eq!((hits.len(), hits[0].step, hits[0].field), (1, 7, "thought"));
    let hits = ok(s.search("file_12", None, 10));
    assert_eq!((hits[0].step, hits[0].field), (12, "action"));
}

#[test]
fn a_long_run_is_indexed_through_the_helper_as_a_short_one_is_on_the_writer() {
    let mut s = ok(Store::open_in_memory());
    // Words behind colour codes (found once sanitized), over many chunks.
    let steps: Vec<Step> = (0..300)
        .map(|i| step(&format!("thought {i}"), "cat f.py", &format!("\x1b[31mred{i}\x1b[0mword line\n").repeat(300)))
        .collect();
    ok(s.write_source(&record("/t/long.traj", &[1; 32]), &run("long-1", steps.clone())));
    ok(s.write_source(&record("/t/short.traj", &[2; 32]), &run("short-1", steps[..10].to_vec())));
    assert!(count(&s, "text_chunks") > 10, "many chunks on their way at once");
    let (long, short) = (ok(s.resolve_run("long-1")), ok(s.resolve_run("short-1")));
    for i in [0, 7, 150, 298, 299] {
        assert_eq!(ok(s.search_run(long, &format!("red{i}word"))), vec![i], "step {i}");
    }
    for i in [0, 7, 9] {
        assert_eq!(ok(s.search_run(short, &format!("red{i}word"))), vec![i], "step {i}");
    }
    assert_eq!(ok(s.search_run(long, "thought")).len(), 300);
    assert_eq!(ok(s.integrity_check()), "ok");
}

#[test]
fn a_written_run_waits_for_the_index_and_a_search_brings_it_in() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", vec![step("look", "ls", "alpha beta")])));
    assert_eq!(ok(s.search_pending()), 1);
    assert_eq!(count(&s, "steps_fts"), 0, "nothing indexed at write time");
    assert_eq!(ok(s.search("alpha beta", None, 10)).len(), 1);
    assert_eq!(ok(s.search_pending()), 0);
    // The in-run search of the TUI brings it in too.
    ok(s.write_source(&record("/t/b.traj", &[2; 32]), &run("b-1", vec![step("x", "y", "gamma")])));
    let b = ok(s.resolve_run("b-1"));
    assert_eq!(ok(s.search_run(b, "gamma")), vec![0]);
    assert_eq!(ok(s.integrity_check()), "ok");
}

#[test]
fn a_reader_that_cannot_write_searches_waiting_runs_through_its_own_index() {
    let dir = ok(tempfile::tempdir());
    let (here, moved) = (dir.path().join("here"), dir.path().join("moved"));
    ok(std::fs::create_dir(&here));
    let path = here.join("t.db");
    let mut w = ok(Store::open(&path));
    ok(w.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", varied_steps())));
    ok(w.build_search_index(&mut |_, _| {}));
    ok(w.write_source(&record("/t/b.traj", &[2; 32]), &run("b-1", vec![step("look", "ls", "needle at the very top")])));
    let found = |s: &Store| {
        ok(s.search("needle at the very", None, 10)).into_iter().map(|h| (h.instance_id, h.step)).collect::<Vec<_>>()
    };
    let r = ok(Store::open_read_only(&path));
    // The folder moves away (even root cannot open a writer on it now); open connections stay.
    ok(std::fs::rename(&here, &moved));
    assert!(r.writer().is_err());
    assert_eq!(found(&r), vec![("a-1".to_string(), 41), ("b-1".to_string(), 0)]);
    let b = ok(r.resolve_run("b-1"));
    assert_eq!(ok(r.search_run(b, "needle")), vec![0]);
    assert_eq!(ok(r.search_pending()), 1, "the database is left as it was");
    // Another connection replaces b-1 (same run id, the phrase now at step 1), indexing nothing:
    // the reader's own index follows.
    let steps = vec![step("x", "y", "nothing here"), step("look", "ls", "a needle at the very end")];
    ok(w.write_source(&record("/t/b.traj", &[3; 32]), &run("b-1", steps)));
    let want = vec![("a-1".to_string(), 41), ("b-1".to_string(), 1)];
    assert_eq!(found(&r), want);
    assert_eq!(ok(r.search_run(b, "needle")), vec![1]);
    // A reader that can write brings the index up to date for good, with the same answers.
    ok(std::fs::rename(&moved, &here));
    let r2 = ok(Store::open_read_only(&path));
    assert_eq!(found(&r2), want);
    assert_eq!(ok(r2.search_pending()), 0);
    assert_eq!(found(&r), want, "the first reader, its own index dropped");
}

#[test]
fn an_index_pass_that_stops_or_fails_midway_leaves_its_runs_listed() {
    let mut s = ok(Store::open_in_memory());
    for (i, word) in ["apple", "banana", "cherry"].iter().enumerate() {
        let path = format!("/t/{word}.traj");
        ok(s.write_source(&record(&path, &[i as u8; 32]), &run(word, vec![step("t", "a", word)])));
    }
    // A process that dies after its first batch (one run per batch here).
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = s.build_search_index_in(1, &mut |_, _| panic!("killed"), &|| false);
    }));
    assert!(died.is_err());
    assert_eq!(ok(s.search_pending()), 2, "the committed batch is indexed, the others still listed");
    // A batch that fails (a damaged chunk) is rolled back whole: nothing half-indexed.
    ok(s.conn.execute_batch(
        "UPDATE text_chunks SET body = x'00' WHERE run_id = (SELECT id FROM runs WHERE instance_id = 'cherry')",
    ));
    let fts_rows = count(&s, "steps_fts");
    assert!(s.build_search_index_in(1 << 20, &mut |_, _| {}, &|| false).is_err());
    assert_eq!((ok(s.search_pending()), count(&s, "steps_fts")), (2, fts_rows));
    // A search never answers from an index that lacks a run.
    assert!(s.search("banana", None, 10).is_err());
    ok(s.conn.execute_batch("DELETE FROM runs WHERE instance_id = 'cherry'"));
    for word in ["apple", "banana"] {
        assert_eq!(ok(s.search(word, None, 10)).len(), 1, "{word}");
    }
}

#[test]
fn an_index_pass_asked_to_stop_ends_after_its_batch_and_the_next_pass_finishes() {
    let mut s = ok(Store::open_in_memory());
    for (i, word) in ["apple", "banana", "cherry"].iter().enumerate() {
        let path = format!("/t/{word}.traj");
        ok(s.write_source(&record(&path, &[i as u8; 32]), &run(word, vec![step("t", "a", word)])));
    }
    // Interrupted (Ctrl-C in `trajan ingest`) once the first batch (one run here) is committed.
    let batches = std::cell::Cell::new(0);
    let stats = ok(s.build_search_index_in(1, &mut |_, _| batches.set(batches.get() + 1), &|| batches.get() >= 1));
    assert_eq!((stats.runs, ok(s.search_pending())), (1, 2), "one run indexed, two left listed");
    assert_eq!(ok(s.integrity_check()), "ok");
    let stats = ok(s.build_search_index_until(&mut |_, _| {}, &|| false));
    assert_eq!((stats.runs, ok(s.search_pending())), (2, 0));
    assert_eq!(ok(s.search("cherry", None, 10)).len(), 1);
}

#[test]
fn replacing_a_source_removes_its_old_steps_from_the_index_whether_indexed_or_not() {
    let mut s = ok(Store::open_in_memory());
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", vec![step("t", "a", "alpha beta")])));
    assert_eq!(ok(s.search("alpha", None, 10)).len(), 1);
    // Replaced once indexed, then again before the index took the new version.
    ok(s.write_source(&record("/t/a.traj", &[2; 32]), &run("a-1", vec![step("t", "a", "gamma delta")])));
    ok(s.write_source(&record("/t/a.traj", &[3; 32]), &run("a-1", vec![step("t", "a", "epsilon zeta")])));
    assert!(ok(s.search("alpha", None, 10)).is_empty());
    assert!(ok(s.search("gamma", None, 10)).is_empty());
    assert_eq!(ok(s.search("epsilon zeta", None, 10)).len(), 1);
    assert_eq!(count(&s, "steps_fts"), 1);
    assert_eq!(count(&s, "text_chunks"), 1, "the replaced versions' chunks are gone");
    assert_eq!(ok(s.integrity_check()), "ok");
}

#[test]
fn a_new_source_written_in_parts_is_redone_after_a_crash_and_removed_when_it_fails() {
    let dir = ok(tempfile::tempdir());
    let path = dir.path().join("parts.db");
    let mut s = ok(Store::open(&path));
    // Killed after its first part: the part is kept, but under a hash no file has.
    let mut w = ok(s.begin_source(&record("/t/big.jsonl", &[7; 32])));
    ok(s.append(&mut w, &run("one", vec![step("t", "a", "first part")])));
    ok(s.commit_part(&mut w));
    ok(s.append(&mut w, &run("two", vec![step("t", "a", "second part")])));
    drop(w);
    drop(s);
    let mut s = ok(Store::open(&path));
    assert_eq!(ok(s.count_runs()), 1, "the committed part is there");
    let hashes = ok(s.source_hashes());
    assert_ne!(hashes.get("/t/big.jsonl").map(Vec::as_slice), Some(&[7u8; 32][..]), "so the next ingest redoes it");
    // A new file failing after a part: nothing of it is left.
    let mut w = ok(s.begin_source(&record("/t/other.jsonl", &[8; 32])));
    ok(s.append(&mut w, &run("three", vec![step("t", "a", "first part")])));
    ok(s.commit_part(&mut w));
    s.rollback_source();
    assert!(!ok(s.source_hashes()).contains_key("/t/other.jsonl"));
    assert_eq!((ok(s.count_runs()), count(&s, "sources")), (1, 1), "the killed write's part only");
    // A file stored before (here the killed write's part) is replaced in one transaction: a
    // replacement that fails leaves the version stored before, its placeholder hash with it.
    let mut w = ok(s.begin_source(&record("/t/big.jsonl", &[7; 32])));
    ok(s.append(&mut w, &run("one", vec![step("t", "a", "first part")])));
    ok(s.commit_part(&mut w));
    s.rollback_source();
    assert_eq!((ok(s.count_runs()), count(&s, "sources")), (1, 1));
    assert_ne!(ok(s.source_hashes()).get("/t/big.jsonl").map(Vec::as_slice), Some(&[7u8; 32][..]));
    // Written whole: its hash is recorded.
    let mut w = ok(s.begin_source(&record("/t/big.jsonl", &[7; 32])));
    ok(s.append(&mut w, &run("one", vec![step("t", "a", "first part")])));
    ok(s.commit_part(&mut w));
    ok(s.commit_source(w));
    assert_eq!(ok(s.source_hashes()).get("/t/big.jsonl").map(Vec::as_slice), Some(&[7u8; 32][..]));
    assert_eq!(ok(s.integrity_check()), "ok");
}

#[test]
fn a_failed_source_in_a_batch_leaves_nothing_and_its_neighbours_are_kept() {
    let mut s = ok(Store::open_in_memory());
    ok(s.conn.execute_batch(
        // Fails a write after its steps and chunks are in.
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON search_pending
         WHEN NEW.run_id = (SELECT id FROM runs WHERE instance_id = 'b-1') BEGIN SELECT RAISE(ABORT, 'boom'); END;",
    ));
    ok(s.begin_batch());
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", vec![step("t", "a", "alpha")])));
    let bad = run("b-1", vec![step("t", "a", "bravo")]);
    assert!(s.write_source(&record("/t/b.traj", &[2; 32]), &bad).is_err());
    ok(s.write_source(&record("/t/c.traj", &[3; 32]), &run("c-1", vec![step("t", "a", "charlie")])));
    ok(s.commit_batch());
    assert!(!s.in_batch());
    let sources: Vec<String> = ok(s
        .conn
        .prepare("SELECT path FROM sources ORDER BY path")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect()));
    assert_eq!(sources, vec!["/t/a.traj", "/t/c.traj"]);
    assert_eq!(
        (count(&s, "runs"), count(&s, "steps"), count(&s, "text_chunks"), count(&s, "search_pending")),
        (2, 2, 2, 2)
    );
    assert!(ok(s.search("bravo", None, 10)).is_empty());
    assert_eq!(ok(s.search("charlie", None, 10)).len(), 1);
}

/// A batch whose transaction an error rolled back (SQLite's full disk) takes no more sources until
/// it is committed, which says it was lost; the next batch begins afresh.
#[test]
fn a_batch_rolled_back_whole_takes_no_more_sources_and_is_reported_lost() {
    use crate::store::sql::Sql;
    let mut s = ok(Store::open_in_memory());
    ok(s.begin_batch());
    ok(s.write_source(&record("/t/a.traj", &[1; 32]), &run("a-1", vec![step("t", "a", "alpha")])));
    s.rollback();
    ok(s.begin_batch());
    let refused = s.write_source(&record("/t/b.traj", &[2; 32]), &run("b-1", vec![step("t", "a", "bravo")]));
    assert!(matches!(refused, Err(crate::error::StoreError::BatchRolledBack(_))), "{refused:?}");
    assert!(s.commit_batch().is_err(), "the batch was lost");
    ok(s.begin_batch());
    ok(s.write_source(&record("/t/b.traj", &[2; 32]), &run("b-1", vec![step("t", "a", "bravo")])));
    ok(s.commit_batch());
    assert_eq!((count(&s, "sources"), count(&s, "runs")), (1, 1));
}

/// A database as trajan wrote it before compressed texts: four migrations, texts in
/// `step_texts`' columns, every step in the index at write time.
fn old_database(path: &std::path::Path) {
    let conn = ok(rusqlite::Connection::open(path));
    for sql in schema::MIGRATIONS.iter().take(4) {
        ok(conn.execute_batch(sql));
    }
    ok(conn.pragma_update(None, "user_version", 4));
    ok(conn.pragma_update(None, "application_id", APPLICATION_ID));
    ok(conn.execute_batch(
        "INSERT INTO sources (id, path, kind, format, size, hash, ingested_at)
             VALUES (1, '/old/a.traj', 'file', 'swe-agent', 1, x'00', '2025-01-01');
         INSERT INTO runs (id, source_id, position, instance_id, format, step_count, edit_count, rejected_count)
             VALUES (1, 1, 0, 'old-1', 'swe-agent', 1, 0, 0);
         INSERT INTO steps (id, run_id, idx, flags, obs_chars, action_head) VALUES (1, 1, 0, 0, 15, 'grep -rn legacy');
         INSERT INTO step_texts (step_id, action, thought, observation, response, args)
             VALUES (1, 'grep -rn legacy', 'an ancient thought', 'old observation', 'an old response', '{\"command\":\"grep\"}');
         INSERT INTO steps_fts (rowid, thought, action, observation)
             VALUES (1, 'an ancient thought', 'grep -rn legacy', 'old observation');",
    ));
}

#[test]
fn a_database_written_before_compression_keeps_working_and_is_migrated_by_the_next_writer() {
    let dir = ok(tempfile::tempdir());
    let path = dir.path().join("old.db");
    old_database(&path);
    assert!(matches!(Store::open_read_only(&path), Err(StoreError::TooOld { .. })));
    let mut s = ok(Store::open(&path));
    assert_eq!(ok(s.schema_version()), schema::MIGRATIONS.len() as i64);
    let first = &ok(s.run_detail(1, None)).step_list[0];
    assert_eq!((first.thought.as_str(), first.observation.as_str()), ("an ancient thought", "old observation"));
    assert_eq!(first.response.as_deref(), Some("an old response"));
    assert_eq!(ok(s.search_pending()), 0, "old runs were indexed when written");
    let hits = ok(s.search("old observation", None, 10));
    assert_eq!((hits.len(), hits[0].snippet.as_str()), (1, "[old observation]"));
    // New runs beside the old one; then the old source replaced: its index entries go with it.
    ok(s.write_source(&record("/new/b.traj", &[2; 32]), &run("new-1", vec![step("t", "a", "new observation")])));
    assert_eq!(ok(s.search("observation", None, 10)).len(), 2);
    ok(s.write_source(&record("/old/a.traj", &[3; 32]), &run("old-1", vec![step("t", "a", "rewritten")])));
    assert!(ok(s.search("old observation", None, 10)).is_empty());
    assert_eq!(ok(s.search("rewritten", None, 10)).len(), 1);
    assert_eq!(ok(s.integrity_check()), "ok");
    drop(s);
    let read = ok(Store::open_read_only(&path));
    assert_eq!(ok(read.search("new observation", None, 10)).len(), 1);
}
