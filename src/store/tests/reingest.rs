//! A source written again (issue 24, item 1), on any store: its old version stays until the new
//! one commits, and labels and notes follow their runs by identity (source, instance, attempt,
//! which of them), through any re-ingest.

use super::{ok, on_each_store, placed, record};
use crate::label::{Label, Source};
use crate::model::Parsed;
use crate::store::Store;
use crate::store::read::RunFilter;

fn label(run_id: i64, rater: &str) -> Label {
    crate::store::labels::blank_label(run_id, Source::Human, rater)
}

fn run_ids(store: &Store) -> Vec<(String, i64)> {
    let mut runs: Vec<(String, i64)> =
        ok(store.list_runs(RunFilter::default())).into_iter().map(|r| (r.instance_id, r.id)).collect();
    runs.sort();
    runs
}

fn ids_of(store: &Store, path: &str) -> Vec<i64> {
    ok(store.runs_of_sources(&[path.to_string()]))
}

/// (instance of the run it names, rater) of every current label.
fn labelled(store: &Store) -> Vec<(Option<String>, String)> {
    let mut rows: Vec<(Option<String>, String)> =
        ok(store.labels(None, true)).into_iter().map(|r| (r.instance_id, r.label.rater)).collect();
    rows.sort();
    rows
}

/// (instance of the run it names, rater, text) of every note.
fn noted(store: &Store) -> Vec<(Option<String>, String, String)> {
    let mut rows: Vec<_> = ok(store.notes(None)).into_iter().map(|n| (n.instance_id, n.rater, n.text)).collect();
    rows.sort();
    rows
}

/// A new version streamed in parts that fails leaves the version stored before, ids and all;
/// one that commits replaces it at once, runs keeping their ids.
#[test]
fn a_source_stored_before_keeps_its_old_version_until_the_new_one_commits() {
    on_each_store(the_old_version_stays_until_the_new_one_commits);
}

fn the_old_version_stays_until_the_new_one_commits(store: &mut Store, reader: &dyn Fn() -> Store) {
    ok(store.write_source(&record("/o.jsonl", &[1; 32]), &placed(&["a__a-1", "b__b-2", "c__c-3"])));
    let before = run_ids(store);
    // The new version is streamed in parts (a part of it written, a part committed, more
    // written) and then fails, as a line the reader could not survive made it fail.
    let mut w = ok(store.begin_source(&record("/o.jsonl", &[2; 32])));
    ok(store.append(&mut w, &placed(&["a__a-1"])));
    ok(store.commit_part(&mut w));
    assert_eq!(run_ids(&reader()), before, "readers see the old version while the new one is written");
    ok(store.append(&mut w, &placed(&["b__b-2"])));
    store.rollback_source();
    assert_eq!(run_ids(store), before, "the old version, with its runs' ids");
    assert_eq!(ok(store.source_hashes()).get("/o.jsonl"), Some(&vec![1u8; 32]), "and its hash");
    assert_eq!(ok(store.integrity_check()), "ok");
    // A new version that commits replaces it at once, runs keeping their ids.
    let mut w = ok(store.begin_source(&record("/o.jsonl", &[3; 32])));
    ok(store.append(&mut w, &placed(&["a__a-1", "b__b-2"])));
    ok(store.commit_part(&mut w));
    ok(store.append(&mut w, &Parsed::default()));
    ok(store.commit_source(w));
    assert_eq!(run_ids(store), before[..2].to_vec());
}

#[test]
fn labels_follow_their_runs_through_a_source_removed_and_ingested_again() {
    on_each_store(|store, _| labels_follow_their_runs(store));
}

fn labels_follow_their_runs(store: &mut Store) {
    // The same instance twice in one file: the first and the second are told apart.
    ok(store.write_source(&record("/o.jsonl", &[1; 32]), &placed(&["a__a-1", "b__b-2", "a__a-1"])));
    let ids = ids_of(store, "/o.jsonl");
    let (second_a, b) = (ids[2], ids[1]);
    ok(store.add_label(&label(second_a, "ann"), Some("the second a")));
    ok(store.add_label(&label(b, "bob"), None));
    ok(store.remove_source("/o.jsonl"));
    assert_eq!(labelled(store), [(None, "ann".into()), (None, "bob".into())], "(run gone)");
    // Back, with a run added in front: every run gets a new id; the labels follow.
    ok(store.write_source(&record("/o.jsonl", &[2; 32]), &placed(&["c__c-3", "a__a-1", "b__b-2", "a__a-1"])));
    let now = ids_of(store, "/o.jsonl");
    assert!(now.iter().all(|id| !ids.contains(id)), "new ids: {ids:?} then {now:?}");
    let ann = ok(store.labels(Some(now[3]), false));
    assert_eq!((ann.len(), ann[0].note.as_deref()), (1, Some("the second a")), "the second a's label");
    assert_eq!(ok(store.labels(Some(now[2]), false))[0].label.rater, "bob");
    assert!(ok(store.labels(Some(now[1]), false)).is_empty(), "the first a has none");
    // Another file's run of the same instance is another run.
    ok(store.write_source(&record("/p.jsonl", &[3; 32]), &placed(&["b__b-2"])));
    assert_eq!(ok(store.labels(Some(now[2]), false)).len(), 1);
}

#[test]
fn notes_follow_their_runs_through_a_source_removed_and_ingested_again() {
    on_each_store(|store, _| notes_follow_their_runs(store));
}

fn notes_follow_their_runs(store: &mut Store) {
    ok(store.write_source(&record("/o.jsonl", &[1; 32]), &placed(&["a__a-1", "b__b-2", "a__a-1"])));
    let ids = ids_of(store, "/o.jsonl");
    ok(store.set_note(ids[2], 0, "ann", "the second a"));
    ok(store.set_note(ids[1], 0, "bob", "b here"));
    ok(store.remove_source("/o.jsonl"));
    assert_eq!(noted(store).iter().filter(|n| n.0.is_none()).count(), 2, "(run gone)");
    // Another source's runs never take the ids the notes name.
    ok(store.write_source(&record("/p.jsonl", &[4; 32]), &placed(&["d__d-4", "e__e-5", "f__f-6"])));
    assert_eq!(noted(store).iter().filter(|n| n.0.is_none()).count(), 2, "no other run takes their ids");
    // Back, with a run added in front: every run gets a new id; the notes follow.
    ok(store.write_source(&record("/o.jsonl", &[2; 32]), &placed(&["c__c-3", "a__a-1", "b__b-2", "a__a-1"])));
    let now = ids_of(store, "/o.jsonl");
    assert!(now.iter().all(|id| !ids.contains(id)), "new ids: {ids:?} then {now:?}");
    let on = |id: i64| ok(store.notes(Some(id))).into_iter().map(|n| n.text).collect::<Vec<_>>();
    assert_eq!(on(now[3]), ["the second a"]);
    assert_eq!(on(now[2]), ["b here"]);
    assert!(on(now[1]).is_empty(), "the first a has none");
    assert!(noted(store).iter().all(|n| n.0.is_some()), "{:?}", noted(store));
}
