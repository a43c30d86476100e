//! The PostgreSQL backend against a real server (`.ci/run` starts one; without it these tests
//! pass and say they were skipped), each test on a database of its own, each compared with the
//! SQLite backend given the same writes.

#[path = "../../testkit/pg_server.rs"]
mod pg_server;

use super::url::PgUrl;
use super::{Pg, dec, enc};
use crate::model::{Edit, EditKind, EditStatus, Format, Message, Parsed, Run, TestCase, TestOutcome};
use crate::store::read::RunFilter;
use crate::store::sql::Sql;
pub(super) use crate::store::tests::{ok, placed, record, step};
use crate::store::{Store, copy};
use std::borrow::Cow;

/// A fresh PostgreSQL database (migrated), or `None` when no server was given.
pub(in crate::store) fn database() -> Option<(pg_server::TestDb, PgUrl)> {
    let db = pg_server::database(&|url| {
        let url = PgUrl::parse(url).map_err(|e| e.to_string())?;
        Pg::migrate(&url).map(drop).map_err(|e| e.to_string())
    })?;
    let url = ok(PgUrl::parse(&db.url));
    Some((db, url))
}

/// An applied `str_replace` of `a` by `b` in `path` at `step`.
fn a_to_b(step: usize, path: &str) -> Edit {
    Edit {
        step: Some(step),
        path: path.into(),
        kind: EditKind::StrReplace,
        status: EditStatus::Applied,
        old_text: Some("a".into()),
        new_text: Some("b".into()),
        diff: Some("-a\n+b\n".into()),
        lint_codes: Vec::new(),
        trace: Default::default(),
    }
}

/// A run `name` of `steps` steps whose observations are `lines` numbered lines each, with
/// `edits`, written to SQLite and to the database at `url`: the SQLite store, the PostgreSQL one
/// opened read-only, and the run's id.
fn written_to_both(url: &PgUrl, name: &str, steps: usize, lines: usize, edits: Vec<Edit>) -> (Store, Pg, i64) {
    let obs = |i: usize| (0..lines).map(|j| format!("line {i}.{j} of the output\n")).collect::<String>();
    let run = Run {
        instance_id: name.into(),
        format: Some(Format::SweAgent),
        steps: (0..steps).map(|i| step(&format!("thought {i}"), "ls", &obs(i))).collect(),
        edits,
        ..Run::default()
    };
    let parsed = Parsed { runs: vec![run], ..Parsed::default() };
    let path = format!("/{name}.traj");
    let mut sqlite = ok(Store::open_in_memory());
    ok(sqlite.write_source(&record(&path, &[2; 32]), &parsed));
    ok(ok(Store::connect(url)).write_source(&record(&path, &[2; 32]), &parsed));
    let id = ok(sqlite.resolve_run(name));
    (sqlite, ok(Pg::open_read_only(url)), id)
}

/// Runs whose texts hold what tokenizers disagree on, a NUL, a step larger than a piece of
/// terms, and an edit.
fn runs() -> Parsed {
    let long: String = (0..150_000).map(|i| format!("word{i} ")).collect();
    let mut first = Run {
        instance_id: "inst\0ance-1".into(),
        format: Some(Format::SweAgent),
        model: Some("gpt\u{10FFFF}-x".into()),
        submission: Some("diff --git a/x b/x\n+nul \0 here\n".into()),
        steps: vec![
            step("I'll open __init__.py", "cat pkg/__init__.py", "line 1\nTraceback: ZeroDivisionError at 2.0"),
            step("Ünïcödé ΣΊΣΥΦΟΣ 日本語", "echo 'ﬁnal straße'", "naïve café ①②"),
            step("", "grep -r pydicom .", &long),
            step("tab\there", "nul\0byte", "\u{FFFE}\u{FFFF}x \u{1b}[31mred\u{1b}[0m"),
        ],
        history: vec![Message { role: "system".into(), content: "You are \0 an agent".into(), extra: None }],
        ..Run::default()
    };
    first.edits.push(a_to_b(0, "pkg/__init__.py"));
    let outcome = TestOutcome {
        instance_id: "inst\0ance-1".into(),
        format: Some(Format::SwebenchReport),
        resolved: Some(false),
        log: Some("FAILED \0 test_x".into()),
        tests: vec![TestCase { name: "test_x".into(), group: None, passed: false, message: Some("\0".into()) }],
        ..TestOutcome::default()
    };
    Parsed { runs: vec![first], outcomes: vec![outcome], ..Parsed::default() }
}

/// Both backends given the same writes: (SQLite, PostgreSQL), or `None` without a server.
fn pair() -> Option<(Store, Store, pg_server::TestDb)> {
    let (db, url) = database()?;
    let mut pg = ok(Store::connect(&url));
    let mut sqlite = ok(Store::open_in_memory());
    for store in [&mut sqlite, &mut pg] {
        ok(store.write_source(&record("/a.traj", &[1; 32]), &runs()));
    }
    Some((sqlite, pg, db))
}

#[test]
fn reads_are_the_same_on_both_backends() {
    let Some((sqlite, pg, _db)) = pair() else { return };
    assert_eq!(ok(sqlite.list_runs(RunFilter::default())).to_json(), ok(pg.list_runs(RunFilter::default())).to_json());
    let id = ok(sqlite.resolve_run("inst\0ance-1"));
    assert_eq!(id, ok(pg.resolve_run("inst\0ance-1")));
    assert_eq!(ok(sqlite.run_detail(id, None)).to_json(), ok(pg.run_detail(id, None)).to_json());
    let detail = ok(pg.run_detail(id, None));
    assert_eq!(detail.submission.as_deref(), Some("diff --git a/x b/x\n+nul \0 here\n"), "a NUL reads back");
    assert_eq!(detail.step_list[3].action, "nul\0byte");
    assert_eq!(format!("{:?}", ok(sqlite.run_data(id))), format!("{:?}", ok(pg.run_data(id))));
    assert_eq!(format!("{:?}", ok(sqlite.run_rest(id))), format!("{:?}", ok(pg.run_rest(id))));
    assert_eq!(format!("{:?}", ok(sqlite.step_body(id, 2))), format!("{:?}", ok(pg.step_body(id, 2))));
    assert_eq!(ok(sqlite.run_table()), ok(pg.run_table()));
}

/// A label's onset and blame read back as written, and as the statistics read them, the same on
/// both backends.
#[test]
fn onset_and_blame_read_back_as_on_sqlite() {
    use crate::label::{Blame, BlameVerdict, Evidence, Judgement, Label, Onset, Source};
    let Some((sqlite, pg, _db)) = pair() else { return };
    let id = ok(sqlite.resolve_run("inst\0ance-1"));
    let judged = |source: Source, rater: &str, judgement: Judgement| Label {
        judgement,
        ..crate::store::labels::blank_label(id, source, rater)
    };
    let onset = Onset {
        step: Some(2),
        evidence: vec![Evidence { step: 2, note: "the first edit".into() }],
        confidence: 0.6,
        rationale: "r".into(),
        missing: vec!["no gold patch".into()],
    };
    let labels = [
        judged(
            Source::Heuristic,
            "heuristic",
            Judgement { onset: Some(onset), blame: Some(BlameVerdict::of(Blame::Agent, "a")) },
        ),
        judged(Source::Human, "ann", Judgement { onset: None, blame: Some(BlameVerdict::of(Blame::Task, "t")) }),
        judged(Source::Human, "bob", Judgement::default()),
    ];
    for store in [&sqlite, &pg] {
        for l in &labels {
            ok(store.add_label(l, None));
        }
    }
    let read = |store: &Store| ok(store.labels(Some(id), false)).into_iter().map(|r| r.label).collect::<Vec<_>>();
    assert_eq!(read(&pg), labels.to_vec());
    assert_eq!(read(&sqlite), read(&pg));
    let sets = |store: &Store| -> Vec<(String, bool, Option<usize>, Option<Blame>)> {
        ok(store.current_label_sets("refactoring", "1.0"))
            .into_iter()
            .map(|s| (s.rater, s.judged, s.onset_step, s.blame))
            .collect()
    };
    assert_eq!(sets(&pg), sets(&sqlite));
    assert_eq!(sets(&pg)[0], ("heuristic".to_string(), true, Some(2), Some(Blame::Agent)));
}

/// The TUI reads a step a key: each step's body as SQLite gives it, a step without edits in one
/// round trip (its chunk, shared with the steps around it, is not fetched again).
#[test]
fn stepping_through_a_run_reads_each_step_as_sqlite_does_in_one_round_trip() {
    use crate::store::backend::Browse;
    let Some((_db, url)) = database() else { return };
    // Observations of about 50 KB: a few steps to a chunk.
    let (sqlite, pg, id) = written_to_both(&url, "steps", 12, 2_000, vec![a_to_b(5, "a.py")]);
    // The statements prepared.
    assert_eq!(ok(Browse::step_body(&pg, id, 5)).edits.len(), 1);
    let before = pg.trips.get();
    for i in 0..12 {
        assert_eq!(
            format!("{:?}", ok(sqlite.step_body(id, i))),
            format!("{:?}", ok(Browse::step_body(&pg, id, i))),
            "step {i}"
        );
    }
    let trips = pg.trips.get() - before;
    assert!(trips <= 12 + 2, "{trips} round trips for 12 steps, one of them with an edit");
}

/// A run in full (`show`) names a chunk every step or two: its texts come as SQLite gives them,
/// the chunks fetched in batches rather than a round trip each.
#[test]
fn a_long_run_in_full_reads_its_chunks_in_batches() {
    use super::Cells;
    let Some((_db, url)) = database() else { return };
    // Observations larger than a chunk: each step's texts a chunk of their own.
    let steps = 70;
    let (sqlite, pg, id) = written_to_both(&url, "long", steps, 5_500, Vec::new());
    let chunks = pg.one("SELECT count(*) FROM text_chunks", &[]).and_then(|r| r.int(0));
    assert!(ok(chunks) >= steps as i64, "a chunk a step");
    let before = pg.trips.get();
    let detail = ok(crate::store::backend::Reads::run_detail(&pg, id, None));
    let trips = pg.trips.get() - before;
    assert_eq!(detail.to_json(), ok(sqlite.run_detail(id, None)).to_json());
    // About 17 statements for the run's rows (19 with the chunks one at a time: 87), and one a
    // batch of 64 chunks.
    assert!(trips <= 21, "{trips} round trips for a run of {steps} chunks");
}

/// A run's format stored under a name this trajan does not know is an error naming it, as on
/// SQLite; a run without a format is not written.
#[test]
fn a_stored_format_this_trajan_does_not_know_is_an_error_naming_it() {
    let Some((_db, url)) = database() else { return };
    let mut store = ok(Store::connect(&url));
    ok(store.write_source(&record("/p.traj", &[1; 32]), &placed(&["a-1"])));
    let raw = ok(Pg::connect(&url, false));
    ok(raw.run("UPDATE runs SET format = 'swe-agent-9'"));
    let e = store.list_runs(RunFilter::default()).err();
    assert!(
        matches!(&e, Some(crate::error::StoreError::UnknownName { what: "format", value }) if value == "swe-agent-9"),
        "{e:?}"
    );
    let formless = Parsed { runs: vec![Run { format: None, ..placed(&["b-2"]).runs.remove(0) }], ..Parsed::default() };
    let e = store.write_source(&record("/q.traj", &[2; 32]), &formless);
    assert!(matches!(&e, Err(crate::error::StoreError::Invalid(m)) if m.contains("\"b-2\" has no format")), "{e:?}");
}

/// A read model as JSON, for comparing those that do not implement `PartialEq`.
trait ToJson {
    fn to_json(&self) -> String;
}

impl<T: serde::Serialize> ToJson for T {
    fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[test]
fn search_finds_what_sqlite_finds() {
    let Some((sqlite, pg, _db)) = pair() else { return };
    let long_phrase: String = (1000..20_000).map(|i| format!("word{i} ")).collect();
    let phrases = [
        "__init__.py",
        "init",
        "line 1",
        "2.0",
        "ZeroDiv",
        "pydicom",
        "STRASSE",
        "strasse",
        "final",
        "ﬁnal",
        "cafe",
        "ΣΊΣΥΦΟΣ",
        "σίσυφος",
        "日本語",
        "red",
        "31mred",
        "byte",
        "nul",
        "tab here",
        "word149999",
        "word99999 word100000",
        "here cat",
        "...",
        "x",
        "word1",
        long_phrase.as_str(),
    ];
    for phrase in phrases {
        let (a, b) = (ok(sqlite.search(phrase, None, 50)), ok(pg.search(phrase, None, 50)));
        assert_eq!(a.to_json(), b.to_json(), "{:.60}", phrase);
        let run = a.first().map_or(1, |h| h.run_id);
        assert_eq!(ok(sqlite.search_run(run, phrase)), ok(pg.search_run(run, phrase)), "{:.60}", phrase);
    }
    assert!(!ok(pg.search(&long_phrase, None, 5)).is_empty(), "a phrase longer than a piece's overlap is found");
}

/// A phrase whose terms many steps hold apart before any holds it: the candidates are read in
/// batches, in step order, until enough are confirmed, and the limit counts confirmed steps.
#[test]
fn a_phrase_found_after_many_steps_holding_its_words_apart_is_found_as_on_sqlite() {
    let Some((db, url)) = database() else { return };
    let mut pg = ok(Store::connect(&url));
    let mut sqlite = ok(Store::open_in_memory());
    let steps = (0..300)
        .map(|i| match i % 3 {
            _ if i < 200 => step("parser config", &format!("cat f{i}"), "the config, then a parser"),
            0 => step("", "", "config parser"),
            _ => step("", "", "configs parsers"),
        })
        .collect();
    let parsed = Parsed {
        runs: vec![Run { instance_id: "many".into(), format: Some(Format::SweAgent), steps, ..Run::default() }],
        ..Parsed::default()
    };
    for store in [&mut sqlite, &mut pg] {
        ok(store.write_source(&record("/many.traj", &[2; 32]), &parsed));
    }
    for (phrase, limit) in [("config parser", 5), ("config parser", 50), ("config pars", 70), ("parser config", 3)] {
        let (a, b) = (ok(sqlite.search(phrase, None, limit)), ok(pg.search(phrase, None, limit)));
        assert_eq!(a.to_json(), b.to_json(), "{phrase} {limit}");
        assert_eq!(a.len(), limit.min(if phrase == "parser config" { 200 } else { 33 }), "{phrase} {limit}");
    }
    let run = ok(sqlite.resolve_run("many"));
    assert_eq!(ok(sqlite.search_run(run, "config parser")), ok(pg.search_run(run, "config parser")));
    drop(db);
}

/// The index's keys (terms and pairs of neighbours, cut to 500 characters) narrow a phrase to
/// candidates; what they cannot tell apart is confirmed: a phrase whose pairs a step holds apart,
/// terms longer than a key, a term's prefix against a pair, pairs across fields.
#[test]
fn phrases_the_keys_alone_cannot_answer_are_found_as_on_sqlite() {
    let Some((db, url)) = database() else { return };
    let mut pg = ok(Store::connect(&url));
    let mut sqlite = ok(Store::open_in_memory());
    let long = "y".repeat(600);
    let steps = vec![
        step("alpha beta gamma", "", ""),
        step("alpha beta delta beta gamma", "", ""),
        step(&format!("{long}z tail"), "", ""),
        step(&format!("{long} tail"), "alpha", "beta gamma"),
        step("betamax alphabet", "", ""),
    ];
    let parsed = Parsed {
        runs: vec![Run { instance_id: "keys".into(), format: Some(Format::SweAgent), steps, ..Run::default() }],
        ..Parsed::default()
    };
    for store in [&mut sqlite, &mut pg] {
        ok(store.write_source(&record("/keys.traj", &[4; 32]), &parsed));
    }
    let prefix = &long[..550];
    let phrases = [
        "alpha beta gamma".to_string(),
        "alpha beta".into(),
        "beta gamma".into(),
        "beta gam".into(),
        "delta beta gamma".into(),
        "alpha beta delta beta gamma".into(),
        "alpha".into(),
        "alpha bet".into(),
        "beta".into(),
        long.clone(),
        format!("{long}z"),
        format!("{long}z tail"),
        format!("{long} tail"),
        prefix.to_string(),
        format!("{long} ta"),
        "tail alpha".into(),
    ];
    for phrase in &phrases {
        let (a, b) = (ok(sqlite.search(phrase, None, 50)), ok(pg.search(phrase, None, 50)));
        assert_eq!(a.to_json(), b.to_json(), "{phrase:.40}");
        let run = ok(sqlite.resolve_run("keys"));
        assert_eq!(ok(sqlite.search_run(run, phrase)), ok(pg.search_run(run, phrase)), "{phrase:.40}");
    }
    let steps_of = |phrase: &str| ok(pg.search(phrase, None, 50)).iter().map(|h| h.step).collect::<Vec<_>>();
    assert_eq!(steps_of("alpha beta gamma"), [0], "pairs held apart are not the phrase");
    assert_eq!(steps_of(&format!("{long} ta")), [3], "a pair longer than a key is confirmed");
    assert_eq!(steps_of(prefix), [2, 3], "a term longer than a key, as a prefix");
    assert_eq!(steps_of("tail alpha"), Vec::<i64>::new(), "no pair across fields");
    drop(db);
}

#[test]
fn a_copy_to_postgresql_and_back_holds_every_row() {
    let Some((sqlite, pg, _db)) = pair() else { return };
    drop(pg);
    let Some((_db2, url)) = database() else { return };
    let mut target = ok(Store::connect(&url));
    let copied = ok(copy::copy(&sqlite, &mut target, &mut |_| {}));
    assert!(copied.rows > 10, "{copied:?}");
    assert_eq!(ok(copy::compare(&sqlite, &target, &mut |_| {})), copied.rows);
    let mut back = ok(Store::open_in_memory());
    ok(copy::copy(&target, &mut back, &mut |_| {}));
    assert_eq!(ok(copy::compare(&target, &back, &mut |_| {})), copied.rows);
    assert_eq!(ok(target.search("pydicom", None, 5)).len(), 1, "the copy is searchable");
    // Every row there already (a copy stopped while it built the index): compared, not copied.
    let again = ok(copy::copy(&sqlite, &mut target, &mut |_| {}));
    assert!(again.resumed && again.rows == copied.rows, "{again:?}");
    ok(back.write_source(&record("/more.jsonl", &[9; 32]), &placed(&["z__z-1"])));
    assert!(matches!(copy::copy(&sqlite, &mut back, &mut |_| {}), Err(crate::error::StoreError::NotEmpty(_))));
}

#[test]
fn a_dropped_connection_is_an_error_then_the_store_reconnects() {
    let Some((db, url)) = database() else { return };
    let store = ok(Store::connect_read_only(&url));
    assert_eq!(ok(store.count_runs()), 0);
    let admin = pg_server::server().unwrap_or_default();
    let mut client = ok(postgres::Client::connect(&admin, postgres::NoTls));
    let name = db.url.rsplit('/').next().unwrap_or_default().to_string();
    ok(client.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'trajan'",
        &[&name],
    ));
    let lost = store.count_runs().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(lost.contains("lost") || lost.contains("terminat"), "{lost}");
    assert_eq!(ok(store.count_runs()), 0, "the next call reconnects");
}

/// A database dropped and made again under its name while a store is connected: the store's
/// next call reconnects and reads the new database's texts, not the chunks it kept from the old
/// one (its chunk ids start again at 1).
#[test]
fn a_database_made_again_under_its_name_is_read_afresh_after_reconnecting() {
    use crate::store::backend::Browse;
    let Some((db, url)) = database() else { return };
    let parsed = |observation: &str| Parsed {
        runs: vec![Run {
            instance_id: "again".into(),
            format: Some(Format::SweAgent),
            steps: vec![step("thought", "ls", observation)],
            ..Run::default()
        }],
        ..Parsed::default()
    };
    ok(ok(Store::connect(&url)).write_source(&record("/a.traj", &[3; 32]), &parsed("the first database")));
    let pg = ok(Pg::open_read_only(&url));
    let id = ok(crate::store::backend::Reads::resolve_run(&pg, "again"));
    assert_eq!(ok(Browse::step_body(&pg, id, 0)).step.observation, "the first database");
    db.make_again();
    ok(ok(Store::connect(&url)).write_source(&record("/a.traj", &[4; 32]), &parsed("the second one")));
    // The connection went with the old database: an error, then the store reconnects.
    let _ = Browse::step_body(&pg, id, 0);
    assert_eq!(ok(Browse::step_body(&pg, id, 0)).step.observation, "the second one");
}

#[test]
fn labels_of_one_key_are_written_in_turn_and_an_import_is_appended_once() {
    let Some((_db, url)) = database() else { return };
    let label = |rater: &str, mode: &str| crate::label::Label {
        modes: vec![crate::label::ModeVerdict {
            mode: mode.into(),
            confidence: 1.0,
            evidence: Vec::new(),
            rationale: String::new(),
        }],
        ..crate::store::labels::blank_label(7, crate::label::Source::Human, rater)
    };
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let url = url.clone();
            let l = label("ann", &format!("mode{i}"));
            std::thread::spawn(move || {
                let store = ok(Store::connect(&url));
                let key = crate::store::labels::LabelKey::of(&l);
                ok(store.append_history(&key, &mut |history| {
                    if history.iter().any(|r| r.created_at == "2026-01-01T00:00:00Z") {
                        return Vec::new();
                    }
                    vec![crate::store::labels::NewLabel {
                        label: l.clone(),
                        note: None,
                        created_at: Some("2026-01-01T00:00:00Z".into()),
                    }]
                }))
            })
        })
        .collect();
    let appended: usize = threads.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    assert_eq!(appended, 1, "eight importers of one label append it once");
    let store = ok(Store::connect(&url));
    assert_eq!(ok(store.labels(Some(7), false)).len(), 1);
}

#[test]
fn a_live_write_reads_as_a_whole_write_does() {
    let Some((_db, url)) = database() else { return };
    let mut pg = ok(Store::connect(&url));
    let parsed = runs();
    let run = &parsed.runs[0];
    let mut lw = ok(pg.live_begin("/live.traj", "file", "swe-agent", "reading"));
    let id = ok(pg.live_run(&mut lw, run));
    ok(pg.live_steps(&mut lw, &run.steps[..2], &[]));
    ok(pg.live_commit(&mut lw));
    assert_eq!(ok(pg.step_lines(id, 0)).len(), 2, "committed steps are seen");
    ok(pg.live_steps(&mut lw, &run.steps[2..], &[]));
    ok(pg.live_commit(&mut lw));
    let ending = Parsed { runs: vec![run.clone()], outcomes: parsed.outcomes.clone(), ..Parsed::default() };
    ok(pg.live_finish(lw, &record("/live.traj", &[2; 32]), ending, &[], &[Vec::new()], &mut |_, _, _| Ok(())));
    let mut whole = ok(Store::open_in_memory());
    ok(whole.write_source(&record("/live.traj", &[2; 32]), &parsed));
    let (a, b) = (ok(pg.run_detail(id, None)), ok(whole.run_detail(ok(whole.resolve_run("inst\0ance-1")), None)));
    assert!(a.step_list.to_json() == b.step_list.to_json(), "the steps differ");
    assert!(a.edit_list.to_json() == b.edit_list.to_json(), "the edits differ");
    assert_eq!(ok(pg.source_fingerprint("/live.traj")), Some((1, vec![2; 32])));
}

/// The flags a live write's end sets (a step's fixed up) and adds (the steps the
/// reconstruction edited, many of them alike), the same on both backends.
#[test]
fn the_flags_a_live_write_ends_with_are_the_same_on_both_backends() {
    let Some((_db, url)) = database() else { return };
    let parsed = runs();
    let run = &parsed.runs[0];
    let set = crate::model::StepFlags { error: true, test_run: true, ..Default::default() };
    // Step 1 set, then given the edit flag; steps 0 and 3 given it too, 2 left as it was.
    let (fixups, edited) = ([(0, 1, set)], [vec![0, 1, 3]]);
    let mut flags = Vec::new();
    for mut store in [ok(Store::open_in_memory()), ok(Store::connect(&url))] {
        let mut lw = ok(store.live_begin("/live.traj", "file", "swe-agent", "reading"));
        let id = ok(store.live_run(&mut lw, run));
        ok(store.live_steps(&mut lw, &run.steps, &[]));
        let ending = Parsed { runs: vec![run.clone()], ..Parsed::default() };
        ok(store.live_finish(lw, &record("/live.traj", &[2; 32]), ending, &fixups, &edited, &mut |_, _, _| Ok(())));
        let steps = ok(store.run_detail(id, None)).step_list;
        flags.push(steps.iter().map(|s| s.flags).collect::<Vec<_>>());
    }
    let before: Vec<crate::model::StepFlags> = run.steps.iter().map(|s| s.flags).collect();
    assert_eq!(flags[1], flags[0], "PostgreSQL against SQLite");
    let with_edit = |f: crate::model::StepFlags| crate::model::StepFlags { edit: true, ..f };
    assert_eq!(flags[0], [with_edit(before[0]), with_edit(set), before[2], with_edit(before[3])]);
}

#[test]
fn replacing_a_source_keeps_run_ids_and_removing_it_leaves_nothing() {
    let Some((_db, url)) = database() else { return };
    let mut pg = ok(Store::connect(&url));
    ok(pg.write_source(&record("/a.traj", &[1; 32]), &runs()));
    let id = ok(pg.resolve_run("inst\0ance-1"));
    let stats = ok(pg.write_source(&record("/a.traj", &[3; 32]), &runs()));
    assert!(stats.replaced);
    assert_eq!(ok(pg.resolve_run("inst\0ance-1")), id, "the run keeps its id");
    assert_eq!(ok(pg.search("pydicom", None, 5)).len(), 1, "the old terms went with the old steps");
    assert!(ok(pg.remove_source("/a.traj")));
    assert_eq!(ok(pg.count_runs()), 0);
    assert!(ok(pg.is_empty_store()) || ok(pg.source_hashes()).is_empty());
    assert_eq!(ok(pg.integrity_check()), "ok");
    assert_eq!(terms_rows(&url), (0, 0), "the terms went with their steps");
}

/// Rows of `step_terms` and `step_lexemes`.
fn terms_rows(url: &PgUrl) -> (i64, i64) {
    use super::Cells;
    let pg = ok(Pg::open(url));
    let r = ok(pg.one("SELECT (SELECT count(*) FROM step_terms), (SELECT count(*) FROM step_lexemes)", &[]));
    (ok(r.int(0)), ok(r.int(1)))
}

/// The terms of a unit commit (on the terms connection) before the unit; a batch given up after
/// that has them deleted again, and one given up before has them rolled back.
#[test]
fn terms_of_units_given_up_are_not_left_behind() {
    use crate::store::backend::Writes;
    let Some((_db, url)) = database() else { return };
    let mut pg = ok(Pg::open(&url));
    ok(pg.begin_batch());
    let mut w = ok(pg.begin_source(&record("/a.traj", &[1; 32])));
    ok(pg.append(&mut w, &runs()));
    ok(pg.commit_source(w));
    assert!(terms_rows(&url).0 > 0, "the unit's terms are committed before it");
    pg.rollback();
    assert!(pg.commit_batch().is_err(), "the batch was rolled back");
    assert_eq!(terms_rows(&url), (0, 0), "the terms of the batch given up are deleted");

    let mut w = ok(pg.begin_source(&record("/b.traj", &[1; 32])));
    ok(pg.append(&mut w, &runs()));
    pg.rollback_source();
    assert_eq!(terms_rows(&url), (0, 0), "the terms of a unit given up are rolled back");
    let mut w = ok(pg.begin_source(&record("/b.traj", &[1; 32])));
    ok(pg.append(&mut w, &runs()));
    ok(pg.commit_source(w));
    let found = ok(ok(Store::connect_read_only(&url)).search("pydicom", None, 5));
    assert_eq!(found.len(), 1, "a committed unit is searchable from another connection");
}

// The text codec of COPY, without a server.

#[test]
fn text_with_nul_and_the_escape_reads_back_as_written() {
    for s in ["plain", "a\0b", "\u{10FFFF}", "\u{10FFFF}0\0\u{10FFFF}1", ""] {
        assert_eq!(dec(&enc(s)), s);
        assert!(!enc(s).contains('\0'));
    }
    assert!(matches!(enc("plain"), Cow::Borrowed(_)));
}

/// The tables of the store and their columns, as `(table, column)`.
type Columns = std::collections::BTreeSet<(String, String)>;

/// Issue 43: the DDL is written once per dialect (`sqlite/schema.rs`, `pg/schema.rs`); after
/// migrating, both stores hold the same tables with the same columns. What only one backend
/// has is its search index (SQLite's FTS5 tables, PostgreSQL's terms) and its own bookkeeping,
/// named here.
#[test]
fn both_stores_have_the_same_tables_and_columns_after_migrating() {
    let Some((_db, url)) = database() else { return };
    let pg = ok(Pg::open_read_only(&url));
    let sql = "SELECT table_name::text, column_name::text FROM information_schema.columns \
               WHERE table_schema = current_schema()";
    let on_pg: Columns = ok(pg.rows(sql, &[])).iter().map(|r| (r.get(0), r.get(1))).collect();
    let dir = ok(tempfile::tempdir());
    let path = dir.path().join("s.db");
    drop(ok(Store::open(&path)));
    let conn = ok(rusqlite::Connection::open(&path));
    let mut stmt = ok(conn
        .prepare("SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'"));
    let rows = ok(stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))));
    let mut on_sqlite: Columns = rows.map(ok).collect();
    // A table whose rows keep the order they were written in (`copy::TABLES`' key `None`) has
    // it in SQLite's `rowid`, in PostgreSQL's column `id`.
    for t in copy::TABLES.iter().filter(|t| t.key.is_none()) {
        on_sqlite.insert((t.name.into(), "id".into()));
    }
    let only = |a: &Columns, b: &Columns| -> Vec<String> {
        a.difference(b).filter(|(t, _)| !backend_own(t)).map(|(t, c)| format!("{t}.{c}")).collect()
    };
    assert_eq!(only(&on_sqlite, &on_pg), Vec::<String>::new(), "columns SQLite has and PostgreSQL lacks");
    assert_eq!(only(&on_pg, &on_sqlite), Vec::<String>::new(), "columns PostgreSQL has and SQLite lacks");
    assert!(on_pg.contains(&("runs".into(), "metadata".into())), "the comparison saw the tables: {on_pg:?}");
}

/// A table one backend has for itself: its search index (SQLite's FTS5 tables, built after the
/// write from the runs `search_pending` lists; PostgreSQL's terms and lexemes) or its schema's
/// version (SQLite keeps it in `user_version`).
fn backend_own(table: &str) -> bool {
    table.starts_with("steps_fts")
        || table.starts_with("sqlite_")
        || matches!(table, "search_pending" | "step_terms" | "step_lexemes" | "trajan_schema")
}
