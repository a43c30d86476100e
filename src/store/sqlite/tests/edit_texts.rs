//! Edit texts compressed in chunks: every reader gets back what was written, and rows written
//! plainly (before chunks, or too long for a record) still read.

use crate::model::{Certainty, Edit, EditKind, EditStatus, EditTrace, HunkSource, Parsed, Run, Step};
use crate::store::SourceRecord;
use crate::store::backend::*;
use crate::store::sqlite::Sqlite as Store;
use crate::store::tests::ok;

fn count(store: &Store, sql: &str) -> i64 {
    ok(store.conn.query_row(&format!("SELECT {sql}"), [], |r| r.get(0)))
}

/// A file edited by `sed -i` thirty times: old and new texts near copies of each other, as the
/// reconstruction stores them; a contradicted edit, an edit with no text, an empty text, and the
/// final patch with its hunks.
fn edits() -> Vec<Edit> {
    let file: String = (0..800).map(|i| format!("    value_{i} = compute({i}) + offset  # über\n")).collect();
    let mut out = Vec::new();
    for i in 0..30 {
        let old = file.replace(&format!("value_{i} "), &format!("value_{i}_old "));
        let new = file.replace(&format!("value_{i} "), &format!("value_{i}_new "));
        out.push(Edit {
            step: Some(i % 3),
            path: "src/app.py".into(),
            kind: EditKind::ShellWrite,
            status: EditStatus::Applied,
            diff: Some(format!("@@ -{i},1 +{i},1 @@\n-    value_{i}_old\n+    value_{i}_new\n")),
            old_text: Some(old),
            new_text: Some(new),
            lint_codes: Vec::new(),
            trace: EditTrace {
                certainty: Some(if i == 4 { Certainty::Contradicted } else { Certainty::Verified }),
                command: Some(format!("sed -i 's/value_{i}_old/value_{i}_new/' src/app.py")),
                shown: (i == 4).then(|| "@@ -1 +1 @@\n-a\n+b\n".to_string()),
                ..EditTrace::default()
            },
        });
    }
    out.push(Edit {
        step: Some(1),
        path: "notes.txt".into(),
        kind: EditKind::ShellWrite,
        status: EditStatus::Unknown,
        old_text: None,
        new_text: None,
        diff: None,
        lint_codes: vec!["E999".into()],
        trace: EditTrace::default(),
    });
    out.push(Edit {
        step: Some(2),
        path: "empty.txt".into(),
        kind: EditKind::Create,
        status: EditStatus::Applied,
        old_text: None,
        new_text: Some(String::new()),
        diff: Some(String::new()),
        lint_codes: Vec::new(),
        trace: EditTrace::default(),
    });
    out.push(Edit {
        step: None,
        path: "src/app.py".into(),
        kind: EditKind::FinalPatch,
        status: EditStatus::Unknown,
        old_text: None,
        new_text: None,
        diff: Some("diff --git a/src/app.py b/src/app.py\n@@ -1 +1 @@\n-x\n+y\n".into()),
        lint_codes: Vec::new(),
        trace: EditTrace {
            hunks: vec![HunkSource { hunk: "@@ -1 +1 @@".into(), steps: vec![0, 2], explained: true }],
            ..EditTrace::default()
        },
    });
    out
}

fn parsed(edits: Vec<Edit>) -> Parsed {
    let steps = (0..3)
        .map(|i| Step { action: format!("sed -i ... {i}"), observation: "done".into(), ..Step::default() })
        .collect();
    let run =
        Run { instance_id: "e-1".into(), format: Some(crate::model::Format::SweAgent), steps, edits, ..Run::default() };
    Parsed { runs: vec![run], ..Parsed::default() }
}

/// What a reader shows of an edit's texts.
type Shown = (Option<String>, Option<String>, Option<String>, Option<String>, Vec<HunkSource>);

fn shown(e: &Edit) -> Shown {
    (e.old_text.clone(), e.new_text.clone(), e.diff.clone(), e.trace.shown.clone(), e.trace.hunks.clone())
}

/// Every reader of the edits' texts agrees with what was written.
fn assert_readers_agree(s: &Store, run_id: i64, want: &[Edit]) {
    let rest = ok(s.run_rest(run_id));
    assert_eq!(rest.edits.iter().map(shown).collect::<Vec<_>>(), want.iter().map(shown).collect::<Vec<_>>());
    let table = ok(s.edit_table());
    assert_eq!(
        table.iter().map(|r| r.diff.clone()).collect::<Vec<_>>(),
        want.iter().map(|e| e.diff.clone()).collect::<Vec<_>>()
    );
    // One step at a time, as the TUI reads them, and the run detail `show --json` prints.
    for step in 0..3 {
        let body = ok(s.step_body(run_id, step));
        let of_step: Vec<&Edit> = want.iter().filter(|e| e.step == Some(step as usize)).collect();
        let got: Vec<Shown> = body
            .edits
            .iter()
            .map(|e| (e.old_text.clone(), e.new_text.clone(), e.diff.clone(), e.shown.clone(), e.hunks.clone()))
            .collect();
        assert_eq!(got, of_step.iter().map(|e| shown(e)).collect::<Vec<_>>(), "step {step}");
    }
    let detail = ok(s.run_detail(run_id, None));
    let mut by_step: Vec<&Edit> = want.iter().collect();
    by_step.sort_by_key(|e| (e.step.is_none(), e.step));
    assert_eq!(
        detail.edit_list.iter().map(|e| (e.diff.clone(), e.shown.clone(), e.hunks.clone())).collect::<Vec<_>>(),
        by_step.iter().map(|e| (e.diff.clone(), e.trace.shown.clone(), e.trace.hunks.clone())).collect::<Vec<_>>()
    );
}

#[test]
fn edit_texts_are_stored_compressed_and_every_reader_gets_them_back() {
    let mut s = ok(Store::open_in_memory());
    let want = edits();
    ok(s.write_source(
        &SourceRecord { path: "/t/e.traj", kind: "file", format: "test", size: 1, hash: &[1; 32] },
        &parsed(want.clone()),
    ));
    let run_id = ok(s.resolve_run("e-1"));
    let plain = "coalesce(length(old_text), 0) + coalesce(length(new_text), 0) + coalesce(length(diff), 0)
                 + coalesce(length(shown), 0) + coalesce(length(hunks), 0)";
    assert_eq!(count(&s, &format!("sum({plain}) FROM edits")), 0, "no edit text left in the rows");
    let raw: usize = want
        .iter()
        .map(|e| e.old_text.as_ref().map_or(0, String::len) + e.new_text.as_ref().map_or(0, String::len))
        .sum();
    let stored =
        count(&s, "sum(length(body)) FROM text_chunks c WHERE EXISTS (SELECT 1 FROM edits e WHERE e.chunk_id = c.id)");
    assert!(stored > 0 && (stored as usize) * 20 < raw, "{stored} bytes stored for {raw} of text");
    assert_eq!(count(&s, "count(*) FROM edits WHERE chunk_id IS NULL"), 1, "only the edit without any text");
    assert_readers_agree(&s, run_id, &want);
}

#[test]
fn edit_texts_written_in_the_rows_still_read() {
    let mut s = ok(Store::open_in_memory());
    let want = edits();
    ok(s.write_source(
        &SourceRecord { path: "/t/e.traj", kind: "file", format: "test", size: 1, hash: &[1; 32] },
        &parsed(want.clone()),
    ));
    let run_id = ok(s.resolve_run("e-1"));
    // As a database written before the chunks holds them (and a record too long for a chunk).
    ok(s.conn.execute(
        "UPDATE edits SET chunk_id = NULL, chunk_at = NULL, diff = ?1, new_text = ?2
         WHERE kind = 'create'",
        rusqlite::params!["", ""],
    ));
    ok(s.conn.execute(
        "UPDATE edits SET chunk_id = NULL, chunk_at = NULL, diff = ?1, hunks = ?2 WHERE kind = 'final_patch'",
        rusqlite::params![
            want.last().and_then(|e| e.diff.clone()),
            ok(serde_json::to_string(&want.last().map(|e| e.trace.hunks.clone()).unwrap_or_default()))
        ],
    ));
    assert_eq!(count(&s, "count(*) FROM edits WHERE chunk_id IS NULL"), 3);
    assert_readers_agree(&s, run_id, &want);
}
