//! A database of an earlier schema, holding data, brought up to date by `Pg::migrate`: the data
//! kept, the search keys made from the stored terms as the writer makes them.

use super::term_rows::{key_rows, keys, pieces};
use super::tests::{database, ok, record, step};
use super::{Cells, Pg, enc, schema};
use crate::model::{Format, Parsed, Run};
use crate::sanitize::sanitize;
use crate::store::{Store, terms};

/// A step's texts, as schema version 3 stored them: inline, with their terms in pieces.
const STEPS: [(&str, &str, &str); 3] = [
    ("I'll open __init__.py", "cat pkg/__init__.py", "line 1\nTraceback: ZeroDivisionError at 2.0"),
    ("Ünïcödé ΣΊΣΥΦΟΣ", "echo 'ﬁnal straße'", "it's a \u{10FFFF} back\\slash"),
    ("", "grep -r marker .", ""),
];

fn document(thought: &str, action: &str, observation: &str) -> String {
    terms::document(&[&sanitize(thought), &sanitize(action), &sanitize(observation)])
}

/// Version 3's tables, filled as its writer filled them: a source, a run, its steps with their
/// texts and terms (one step longer than a piece of terms), a label with a mode, a note.
fn version_3(client: &mut postgres::Client, long: &str) {
    let mut run = |sql: &str| client.batch_execute(sql).unwrap_or_else(|e| panic!("{e}: {sql:.80}"));
    run("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
    for sql in &schema::MIGRATIONS[..3] {
        run(sql);
    }
    run("INSERT INTO trajan_schema VALUES ('trajan', 3);
         INSERT INTO sources (path, kind, format, size, hash, ingested_at)
             VALUES ('/old.traj', 'file', 'swe-agent', 1, '\\x01', '2026-11-01T00:00:00Z');
         INSERT INTO runs (id, source_id, position, instance_id, format, step_count, edit_count, rejected_count)
             VALUES (nextval('runs_id_seq'), 1, 0, 'old-1', 'swe-agent', 3, 0, 0);
         INSERT INTO labels (run_id, source, rater, taxonomy, taxonomy_version, unclassified, created_at,
                             run_source, run_instance, run_attempt, run_nth)
             VALUES (1, 'human', 'ann', 'refactoring', '1.0', 0, '2026-11-02T00:00:00Z', '/old.traj', 'old-1', NULL, 0);
         INSERT INTO label_modes (label_id, mode, assigned, confidence, evidence, rationale)
             VALUES (1, 'gave-up', 1, 1.0, '[]', '');
         INSERT INTO notes (run_id, step_idx, rater, text, created_at, run_source, run_instance, run_attempt, run_nth)
             VALUES (1, 0, 'ann', 'look here', '2026-11-02T00:00:00Z', '/old.traj', 'old-1', NULL, 0);");
    for (idx, (thought, action, observation)) in STEPS.iter().enumerate() {
        let observation = if idx == 2 { long } else { observation };
        let idx = idx as i64;
        let id: i64 = client
            .query_one(
                "INSERT INTO steps (run_id, idx, flags, obs_chars, action_head) VALUES (1, $1, 0, 0, '') RETURNING id",
                &[&idx],
            )
            .and_then(|r| r.try_get(0))
            .unwrap_or_else(|e| panic!("{e}"));
        client
            .execute(
                "INSERT INTO step_texts (step_id, action, thought, observation) VALUES ($1, $2, $3, $4)",
                &[&id, &enc(action), &enc(thought), &enc(observation)],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let doc = enc(&document(thought, action, observation)).into_owned();
        for (piece, text) in pieces(&doc).enumerate() {
            client
                .execute(
                    "INSERT INTO step_terms (step_id, piece, terms) VALUES ($1, $2, $3)",
                    &[&id, &(piece as i64), &text],
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn a_version_3_database_with_data_is_migrated_and_found_by_search() {
    let Some((db, url)) = database() else { return };
    let long: String = (0..150_000).map(|i| format!("marker{i} ")).collect();
    let mut client = ok(postgres::Client::connect(&db.url, postgres::NoTls));
    version_3(&mut client, &long);
    assert_eq!(ok(Pg::migrate(&url)), (3, schema::MIGRATIONS.len() as i64));

    // The search keys were made from the stored terms, as the writer makes them (the long step's
    // in several rows, numbered alike).
    let pg = ok(Pg::open(&url));
    for (idx, (thought, action, observation)) in STEPS.iter().enumerate() {
        let observation = if idx == 2 { long.as_str() } else { observation };
        let doc = enc(&document(thought, action, observation)).into_owned();
        let want: Vec<(i64, String)> = key_rows(&keys(&doc))
            .into_iter()
            .map(|(row, text)| {
                let r = ok(pg.one("SELECT $1::text::tsvector::text", &[&text]));
                (row as i64, ok(r.text(0)))
            })
            .collect();
        let got: Vec<(i64, String)> = ok(pg.rows(
            "SELECT l.piece, l.lexemes::text FROM step_lexemes l JOIN steps s ON s.id = l.step_id
             WHERE s.idx = $1 ORDER BY l.piece",
            &[&(idx as i64)],
        ))
        .iter()
        .map(|r| (ok(r.int(0)), ok(r.text(1))))
        .collect();
        assert!(want.len() == got.len() && want == got, "step {idx}: {} rows, {} wanted", got.len(), want.len());
        if idx == 2 {
            assert!(got.len() > 2, "the long step's keys are in several rows");
        }
    }

    // The data kept, and found.
    let store = ok(Store::connect(&url));
    let run = ok(store.resolve_run("old-1"));
    let labels = ok(store.labels(Some(run), false));
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].label.modes[0].mode, "gave-up");
    for (phrase, step) in [
        ("__init__.py", 0),
        ("line 1", 0),
        ("2.0", 0),
        ("ZeroDiv", 0),
        ("sisyphos", 99),
        ("ΣΊΣΥΦΟΣ", 1),
        ("ﬁnal straße", 1),
        ("it s a", 1),
        ("back slash", 1),
        ("marker149999", 2),
        ("marker99999 marker100000", 2),
        ("marker12 marker13 marker14", 2),
    ] {
        let found: Vec<i64> = ok(store.search(phrase, None, 50)).iter().map(|h| h.step).collect();
        let want: Vec<i64> = if step == 99 { Vec::new() } else { vec![step] };
        assert_eq!(found, want, "{phrase}");
        assert_eq!(ok(store.search_run(run, phrase)), want, "{phrase}");
    }

    // Written after the upgrade: found too; removed, its keys go with its steps.
    let mut store = store;
    let parsed = Parsed {
        runs: vec![Run {
            instance_id: "new-1".into(),
            format: Some(Format::SweAgent),
            steps: vec![step("", "cat setup.py", "line 1 of setup")],
            ..Run::default()
        }],
        ..Parsed::default()
    };
    ok(store.write_source(&record("/new.traj", &[3; 32]), &parsed));
    assert_eq!(ok(store.search("line 1", None, 50)).len(), 2);
    ok(store.remove_source("/old.traj"));
    let left = ok(pg.one("SELECT count(*) FROM step_lexemes", &[]));
    assert_eq!(ok(left.int(0)), 1, "the old run's keys went with its steps");
    assert_eq!(ok(store.search("line 1", None, 50)).len(), 1);
}
