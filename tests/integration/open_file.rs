//! `trajan PATH...`: a file opened is ingested as `trajan ingest` ingests it. The database after
//! `trajan FILE` (read a step at a time, committed in batches) is compared, table by table and
//! every full-text entry, with the one after `trajan ingest FILE`: on the real corpus, on
//! generated files that exercise what a step needs from later in the file (0.x states, the last
//! step, a submission after the messages, RetryAgent attempts), and on files the step reader
//! hands to the whole-file path (a cut file, Python's NaN, a trajectory before the attempts).
//! Also: readers see the first steps while the rest is read, a cancelled read leaves nothing, a
//! read stopped by a crash is read again, an unchanged file is not, and how arguments are told
//! apart. And `trajan ingest`, which reads a big document with the same step reader and writes
//! it as it reads (issue 26): the same database as a whole read, nothing of a file bad midway.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use trajan::ingest::open::{self, Batches, Event, Options};
use trajan::ingest::pipeline::{self, UnitResult};
use trajan::store::Store;

use crate::common;

fn must<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn corpus(rel: &str) -> PathBuf {
    common::fixtures_dir("corpus").join(rel)
}

fn trajan(dir: &Path, args: &[&std::ffi::OsStr]) -> Output {
    must(common::command().current_dir(dir).args(args).output(), "run trajan")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Every row of every table that ingest writes, as text, in a stable order: ids as they are
/// (runs, steps and edits get the same ids either way), blob ids replaced by the blobs' hashes
/// (blobs are written in another order when the history comes after the steps), the ingest time
/// left out; the step texts as the store reads them (how they are packed in compressed chunks
/// depends on the batches they were written in); and, once the search index is built, every
/// term of it with its row, column and offset.
fn dump(db: &Path) -> Vec<String> {
    let store = must(trajan::store::Store::open(db), "open the store");
    must(store.build_search_index(&mut |_, _| {}), "build the search index");
    let conn = must(rusqlite::Connection::open(db), "open the database");
    let queries = [
        "SELECT path, kind, format, size, hex(hash), warnings FROM sources ORDER BY path",
        "SELECT * FROM runs ORDER BY id",
        "SELECT * FROM steps ORDER BY id",
        "SELECT step_id, chunk_id IS NULL, action, thought, observation, response, args FROM step_texts
         ORDER BY step_id",
        "SELECT q.step_id, q.pos, hex(b.hash) FROM query_parts q JOIN blobs b ON b.id = q.blob_id ORDER BY 1, 2",
        "SELECT h.run_id, h.pos, hex(b.hash) FROM history h JOIN blobs b ON b.id = h.blob_id ORDER BY 1, 2",
        "SELECT hex(hash), role, content, extra FROM blobs ORDER BY 1",
        "SELECT id, run_id, step_idx, path, kind, status, lint_codes, certainty, command, checked_at, undone_at,
                partial FROM edits ORDER BY id",
        "SELECT * FROM tasks ORDER BY id",
        "SELECT * FROM outcomes ORDER BY id",
        "SELECT * FROM tests ORDER BY outcome_id, name",
        "SELECT * FROM predictions ORDER BY id",
    ];
    let mut out = Vec::new();
    for q in queries {
        out.push(format!("-- {q}"));
        out.extend(rows(&conn, q));
    }
    let mut ids = must(conn.prepare("SELECT id FROM runs ORDER BY id"), "run ids");
    let ids: Vec<i64> = must(ids.query_map([], |r| r.get(0)), "run ids").map(|r| must(r, "run id")).collect();
    out.push("-- runs as the store reads them".into());
    for id in ids {
        let detail = must(store.run_detail(id, None), "read a run");
        out.push(must(serde_json::to_string(&detail), "run as JSON"));
        // The edits' texts, compressed in chunks as the steps' are.
        for e in must(store.run_rest(id), "edits").edits {
            out.push(format!(
                "{id} {:?} {:?} {:?} {:?} {:?} {:?}",
                e.step, e.old_text, e.new_text, e.diff, e.trace.shown, e.trace.hunks
            ));
        }
    }
    must(conn.execute_batch("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, 'steps_fts', 'instance')"), "vocab");
    out.push("-- full-text terms".into());
    out.extend(rows(&conn, "SELECT term, doc, col, offset FROM temp.terms ORDER BY 1, 2, 3, 4"));
    out
}

fn rows(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = must(conn.prepare(sql), sql);
    let n = stmt.column_count();
    let mapped = must(
        stmt.query_map([], |r| {
            let cells: Vec<String> = (0..n).map(|i| format!("{:?}", r.get_ref(i).map(|v| v.to_owned()))).collect();
            Ok(cells.join(" | "))
        }),
        sql,
    );
    mapped.map(|r| must(r, sql)).collect()
}

/// The first difference between two dumps, for the failure message.
fn assert_same(opened: &[String], ingested: &[String], what: &str) {
    if let Some(i) = (0..opened.len().max(ingested.len())).find(|&i| opened.get(i) != ingested.get(i)) {
        let section = opened[..i.min(opened.len())].iter().rev().find(|l| l.starts_with("-- ")).cloned();
        panic!(
            "{what}: the database after opening differs from the one after ingest (in {section:?}):\n  opened:   {:?}\n  ingested: {:?}",
            opened.get(i),
            ingested.get(i)
        );
    }
}

/// `trajan --db A FILE` (not on a terminal: ingest and list) against `trajan --db B ingest FILE`.
fn compare_with_binary(file: &Path) -> String {
    let dir = must(tempfile::tempdir(), "tempdir");
    let (a, b) = (dir.path().join("opened.db"), dir.path().join("ingested.db"));
    let opened = trajan(dir.path(), &["--db".as_ref(), a.as_os_str(), file.as_os_str()]);
    let ingested = trajan(
        dir.path(),
        &["--db".as_ref(), b.as_os_str(), "ingest".as_ref(), "--no-index".as_ref(), file.as_os_str()],
    );
    assert_eq!(opened.status.code(), ingested.status.code(), "{}\n{}", text(&opened), text(&ingested));
    assert_same(&dump(&a), &dump(&b), &file.display().to_string());
    text(&opened)
}

/// The library's open with a commit every `every` steps, into a new database; with the events.
fn open_in_batches(db: &Path, file: &Path, every: usize) -> (open::Opened, Vec<Event>) {
    let mut store = must(Store::open(db), "open");
    let events = Mutex::new(Vec::new());
    let opts = Options { batches: Batches { every: Some(every), ..Batches::default() }, ..Options::default() };
    let opened = open::open(
        &mut store,
        &[file.to_path_buf()],
        &opts,
        &|e| events.lock().unwrap_or_else(|p| p.into_inner()).push(e),
        &AtomicBool::new(false),
    );
    (opened, events.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Opened in batches of `every` steps against `trajan ingest`; the events of the opening. The
/// step reader read the file unless `whole` (then it gave it to the whole-file path).
fn compare_in_batches(file: &Path, every: usize, whole: bool) -> Vec<Event> {
    let dir = must(tempfile::tempdir(), "tempdir");
    let (a, b) = (dir.path().join("opened.db"), dir.path().join("ingested.db"));
    let (opened, events) = open_in_batches(&a, file, every);
    let ingested = trajan(
        dir.path(),
        &["--db".as_ref(), b.as_os_str(), "ingest".as_ref(), "--no-index".as_ref(), file.as_os_str()],
    );
    assert!(!opened.cancelled);
    assert_eq!(
        opened.report.has_problems(),
        ingested.status.code() == Some(1),
        "{:?}\n{}",
        opened.report,
        text(&ingested)
    );
    assert_same(&dump(&a), &dump(&b), &format!("{} in batches of {every}", file.display()));
    let read_whole = events.iter().any(|e| matches!(e, Event::Whole(_)));
    assert_eq!(read_whole, whole, "{}: read whole? {events:?}", file.display());
    events
}

/// Steps the events said were stored, per run, at the last event.
fn grown(events: &[Event]) -> Vec<(i64, usize)> {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Grown { runs, .. } => Some(runs.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// A document's members in the order the file writes them (`serde_json::Value` sorts keys, and
/// the order matters here: SWE-agent writes `trajectory` first, mini-swe-agent `info` first).
type Doc = Vec<(&'static str, Value)>;

fn to_text(doc: &Doc) -> String {
    let members: Vec<String> = doc
        .iter()
        .map(|(k, v)| {
            format!("  {}: {}", must(serde_json::to_string(k), "key"), must(serde_json::to_string_pretty(v), "json"))
        })
        .collect();
    format!("{{\n{}\n}}\n", members.join(",\n"))
}

fn write(dir: &Path, name: &str, doc: &Doc) -> PathBuf {
    let path = dir.join(name);
    must(std::fs::write(&path, to_text(doc)), "write");
    path
}

fn member<'a>(doc: &'a Doc, key: &str) -> &'a Value {
    doc.iter().find(|(k, _)| *k == key).map(|(_, v)| v).unwrap_or(&Value::Null)
}

/// A SWE-agent 0.x run: states are JSON strings recorded before each action, windowed edits
/// rejected by the linter then applied, a format error before the last step, `info` and the
/// history after the trajectory.
fn swe_agent_0x(steps: usize) -> Doc {
    let state = |file: &str| json!(format!("{{\"open_file\": \"{file}\", \"working_dir\": \"/repo\"}}"));
    let mut trajectory = Vec::new();
    for i in 0..steps {
        let (action, observation) = match i % 5 {
            0 => (
                "open src/mod.py".to_string(),
                format!("[File: /repo/src/mod.py (40 lines total)]\n1:def f{i}():\n2:    return {i}\n"),
            ),
            1 => (
                "edit 1:2\ndef f():\n    return (\nend_of_edit".to_string(),
                "Your proposed edit has introduced new syntax error(s).\nE999 SyntaxError".to_string(),
            ),
            2 => ("edit 1:2\ndef f():\n    return 1\nend_of_edit".to_string(), "File updated.".to_string()),
            3 => (String::new(), "Your output was not formatted correctly.".to_string()),
            _ => (
                format!("python -m pytest tests -k t{i}"),
                format!("Traceback (most recent call last):\nValueError: step{i}"),
            ),
        };
        let open = if i == 0 { "n/a" } else { "/repo/src/mod.py" };
        trajectory.push(json!({"action": action, "observation": observation, "thought": format!("thought {i}"),
            "response": format!("response {i}"), "state": state(open)}));
    }
    vec![
        ("environment", json!("swe_main")),
        ("trajectory", Value::Array(trajectory)),
        (
            "history",
            json!([
                {"role": "system", "content": "You are an agent."},
                {"role": "user", "content": "demo", "is_demo": true},
                {"role": "user", "content": "We're solving this issue:\nISSUE:\nf returns the wrong value\n\nINSTRUCTIONS:\nfix it"},
                {"role": "assistant", "content": "first"},
                {"role": "user", "content": "later"}
            ]),
        ),
        (
            "info",
            json!({"exit_status": "submitted", "submission": "diff --git a/src/mod.py b/src/mod.py\n--- a/src/mod.py\n+++ b/src/mod.py\n@@ -1 +1 @@\n-a\n+b\n",
                   "model_stats": {"instance_cost": 0.5, "tokens_sent": 1000, "tokens_received": 10, "api_calls": steps}}),
        ),
    ]
}

/// A SWE-agent 1.1 run whose steps carry their prompt (`query`), each the one before plus two
/// messages; `replay_config` last.
fn swe_agent_11(steps: usize) -> Doc {
    let mut query =
        vec![json!({"role": "system", "content": "system prompt"}), json!({"role": "user", "content": "the task"})];
    let mut trajectory = Vec::new();
    for i in 0..steps {
        let action = format!("str_replace_editor view /repo/f{i}.py");
        trajectory.push(json!({"action": action, "observation": format!("Here's the result of running `cat -n` on /repo/f{i}.py:\n     1\tx = {i}\n"),
            "thought": format!("look at f{i}"), "response": format!("look at f{i}"), "execution_time": 0.5,
            "state": {"open_file": format!("/repo/f{i}.py"), "working_dir": "/repo"}, "query": query.clone()}));
        query.push(json!({"role": "assistant", "content": format!("look at f{i}")}));
        query.push(json!({"role": "user", "content": format!("observation {i}")}));
    }
    vec![
        ("trajectory", Value::Array(trajectory)),
        ("history", Value::Array(query)),
        ("info", json!({"swe_agent_version": "1.1.0", "exit_status": "submitted"})),
        (
            "replay_config",
            json!(
                "{\"agent\": {\"model\": {\"name\": \"gen/model\"}}, \"problem_statement\": {\"text\": \"the task\"}}"
            ),
        ),
    ]
}

/// A mini-swe-agent 1.1 run with tool calls and an exit message; `info` (with the submission)
/// after the messages, and a step whose reply is the submitted patch and looks like an error: its
/// error flag is known only at the end.
fn mini_info_last(steps: usize) -> Doc {
    let patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-Traceback (most recent call last): old\n+new\n";
    let mut messages =
        vec![json!({"role": "system", "content": "sys"}), json!({"role": "user", "content": "the task"})];
    for i in 0..steps {
        messages.push(json!({"role": "assistant", "content": format!("THOUGHT: step {i}\n\n```bash\ncat x{i}.py\n```"),
            "extra": {"response": {"usage": {"prompt_tokens": 100 + i, "completion_tokens": 7}}, "cost": 0.01, "timestamp": 1_700_000_000.5 + i as f64}}));
        let content = if i == steps / 2 {
            patch.to_string()
        } else {
            format!("<returncode>0</returncode>\n<output>\nline {i}\n</output>")
        };
        messages.push(json!({"role": "user", "content": content}));
    }
    messages.push(json!({"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"}));
    messages
        .push(json!({"role": "exit", "content": patch, "extra": {"exit_status": "Submitted", "submission": patch}}));
    vec![
        ("trajectory_format", json!("mini-swe-agent-1.1")),
        ("messages", Value::Array(messages)),
        ("instance_id", json!("gen__mini-1")),
        ("info", json!({"exit_status": "Submitted", "submission": patch, "model_stats": {"api_calls": steps}})),
    ]
}

/// A mini-swe-agent 1.1 run that edits a file with `sed -i` and shows it with `cat`, `info`
/// (with the submission, which seeds the file's lines) after the messages: the shell edit can be
/// drawn and checked only once the whole file is read.
fn mini_shell_edits(steps: usize) -> Doc {
    let patch =
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = old\n+b = new\n c = 3\n";
    let ok = |out: &str| format!("<returncode>0</returncode>\n<output>\n{out}</output>");
    let mut messages =
        vec![json!({"role": "system", "content": "sys"}), json!({"role": "user", "content": "the task"})];
    for i in 0..steps {
        let (action, out) = match i {
            _ if i == steps / 2 => ("sed -i 's/old/new/' x.py".to_string(), ok("")),
            _ if i == steps / 2 + 2 => ("cat x.py".to_string(), ok("a = 1\nb = new\nc = 3\n")),
            // Contradicted by the next view: what it showed is kept with the edit.
            _ if i == steps / 2 + 4 => ("sed -i 's/c = 3/c = 4/' x.py".to_string(), ok("")),
            _ if i == steps / 2 + 5 => ("cat x.py".to_string(), ok("a = 1\nb = new\nc = 3\n")),
            _ => (format!("ls dir{i}"), ok(&format!("f{i}.py\n"))),
        };
        messages.push(json!({"role": "assistant", "content": format!("THOUGHT: step {i}\n\n```bash\n{action}\n```")}));
        messages.push(json!({"role": "user", "content": out}));
    }
    messages
        .push(json!({"role": "exit", "content": patch, "extra": {"exit_status": "Submitted", "submission": patch}}));
    vec![
        ("trajectory_format", json!("mini-swe-agent-1.1")),
        ("messages", Value::Array(messages)),
        ("instance_id", json!("gen__mini-2")),
        ("info", json!({"exit_status": "Submitted", "submission": patch})),
    ]
}

/// A SWE-agent 1.1 run that edits a file with `sed -i` early and shows it with `cat`, its
/// submission (which seeds the file's lines) in `info` after the trajectory: the shell edits are
/// reconstructed once the document is read, from steps written long before.
fn swe_shell_edits(steps: usize) -> Doc {
    let patch =
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = old\n+b = new\n c = 3\n";
    let mut trajectory = Vec::new();
    for i in 0..steps {
        let (action, out) = match i {
            10 => ("sed -i 's/old/new/' x.py".to_string(), String::new()),
            12 => ("cat x.py".to_string(), "a = 1\nb = new\nc = 3\n".to_string()),
            // Contradicted by the next view: what it showed is kept with the edit.
            14 => ("sed -i 's/c = 3/c = 4/' x.py".to_string(), String::new()),
            15 => ("cat x.py".to_string(), "a = 1\nb = new\nc = 3\n".to_string()),
            _ => (format!("ls dir{i}"), format!("f{i}.py\n")),
        };
        trajectory.push(json!({"action": action, "observation": out, "thought": format!("step {i}"),
            "response": format!("step {i}\n\n```\n{action}\n```"), "execution_time": 0.1,
            "state": {"open_file": "n/a", "working_dir": "/testbed"}}));
    }
    vec![
        ("trajectory", Value::Array(trajectory)),
        ("history", json!([{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}])),
        ("info", json!({"swe_agent_version": "1.1.0", "exit_status": "submitted", "submission": patch})),
    ]
}

/// The document with its steps from `from` on in working directory `dir`, the first of them
/// editing the submitted file there (which only a reconstruction that knew the folder from the
/// start takes for the file the submission names).
fn moved_to(mut doc: Doc, from: usize, dir: &str) -> Doc {
    for (key, value) in &mut doc {
        if let ("trajectory", Value::Array(steps)) = (*key, value) {
            for step in steps.iter_mut().skip(from) {
                step["state"]["working_dir"] = json!(dir);
            }
            if let Some(step) = steps.get_mut(from) {
                step["action"] = json!("sed -i 's/a = 1/a = 2/' x.py");
            }
        }
    }
    doc
}

/// The document with its `info` member moved to the front (where mini-swe-agent writes it).
fn info_first(mut doc: Doc) -> Doc {
    doc.sort_by_key(|(key, _)| *key != "info");
    doc
}

/// A RetryAgent file as SWE-agent writes it: `attempts` first, then the best attempt repeated at
/// the top level.
fn retry_agent(attempts_first: bool) -> Doc {
    let attempt = |n: usize| {
        let doc = swe_agent_0x(3 + n);
        json!({"trajectory": member(&doc, "trajectory"), "history": member(&doc, "history"), "info": {"exit_status": format!("attempt {n}")}})
    };
    let best = swe_agent_0x(4);
    let attempts = ("attempts", json!([attempt(0), attempt(1)]));
    let mut doc = Vec::new();
    if attempts_first {
        doc.push(attempts.clone());
    }
    doc.push(("trajectory", member(&best, "trajectory").clone()));
    doc.push(("history", member(&best, "history").clone()));
    if !attempts_first {
        doc.push(attempts);
    }
    doc.push(("info", json!({"best_attempt_idx": 1, "exit_status": "submitted"})));
    doc.push((
        "replay_config",
        json!({"agent": {"type": "retry", "agent_configs": [{"model": {"name": "m/a"}}, {"model": {"name": "m/b"}}]}}),
    ));
    doc
}

#[test]
fn opening_a_corpus_file_gives_the_database_ingest_gives() {
    for rel in [
        "swe-agent-0.x/pydicom__pydicom-1458.traj",
        "swe-agent-1.0/marshmallow-code__marshmallow-1867.traj",
        "swe-agent-1.0/6e44b9__sweagenttestrepo-1c2844.traj",
        "swe-agent-1.1/pytest-dev__pytest-6202.traj",
        "swe-agent-1.1/pylint-dev__pylint-4604.traj",
        "mini-swe-agent-1/django__django-16560/django__django-16560.traj.json",
        "mini-swe-agent-1/astropy__astropy-13033/astropy__astropy-13033.traj.json",
        // Not a run: the whole-file path says so, as ingest does.
        "swe-agent-demonstrations/function_calling_simple.traj",
        "openhands/multi_swe_bench_output.jsonl",
        // Bare lists of messages (mini-swe-agent before `trajectory_format`): read whole.
        "mini-swe-agent-0/local.traj.json",
        "mini-swe-agent-0/github_issue.traj.json",
    ] {
        compare_with_binary(&corpus(rel));
    }
    // A 0.x run's model from the `args.yaml` beside it (known at the end of the read), and an
    // ATIF trajectory (read whole).
    let layouts = common::fixtures_dir("layouts");
    for rel in [
        "swe-agent-0.x/trajectories/carlos/gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1/marshmallow-code__marshmallow-1343.traj",
        "harbor/terminal-bench-2.0/2025-11-05__14-22-31/fix-git__Qw8rT2x/agent/trajectory.json",
    ] {
        compare_with_binary(&layouts.join(rel));
    }
    // Several batches, each committed: the same rows.
    for rel in ["swe-agent-0.x/pydicom__pydicom-1458.traj", "swe-agent-1.1/pytest-dev__pytest-6202.traj"] {
        compare_in_batches(&corpus(rel), 5, false);
    }
    let events =
        compare_in_batches(&corpus("mini-swe-agent-1/django__django-16560/django__django-16560.traj.json"), 7, false);
    assert_eq!(grown(&events), vec![(1, 145)]);
    let told: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Event::Grown { runs, .. } => runs.first().map(|r| r.1),
            _ => None,
        })
        .collect();
    assert!(told.len() > 10 && told.windows(2).all(|w| w[0] <= w[1]), "the steps grow batch by batch: {told:?}");
}

#[test]
fn what_a_step_needs_from_later_in_the_file_is_the_same_as_a_whole_read() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let files = [
        write(dir.path(), "gen__swe0x-1.traj", &swe_agent_0x(23)),
        write(dir.path(), "gen__swe11-1.traj", &swe_agent_11(30)),
        write(dir.path(), "gen__mini-1.traj.json", &mini_info_last(21)),
        write(dir.path(), "gen__retry-1.traj", &retry_agent(true)),
        // The top-level trajectory before the attempts: only a whole read can leave it out.
        write(dir.path(), "gen__retry-2.traj", &retry_agent(false)),
    ];
    for (i, f) in files.iter().enumerate() {
        for every in [1, 4] {
            compare_in_batches(f, every, i == 4);
        }
        compare_with_binary(f);
    }
    // The mini run's step whose reply is the patch: not an error, known from `info` at the end.
    let db = dir.path().join("mini.db");
    open_in_batches(&db, &files[2], 3);
    let store = must(Store::open_read_only(&db), "open");
    let detail = must(store.run_detail(1, Some(10)), "step 10");
    assert!(!detail.step_list[0].flags.error, "the submitted patch is no error: {:?}", detail.step_list[0].flags);
    // The attempts are the runs, opened as they began.
    let dbr = dir.path().join("retry.db");
    let (opened, events) = open_in_batches(&dbr, &files[3], 2);
    assert_eq!(opened.runs, vec![1, 2]);
    let begun: Vec<i64> =
        events.iter().filter_map(|e| if let Event::Begun(id) = e { Some(*id) } else { None }).collect();
    assert_eq!(begun, vec![1, 2]);
}

#[test]
fn shell_edits_are_reconstructed_when_the_reading_ends() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__mini-2.traj.json", &mini_shell_edits(20));
    for every in [1, 4] {
        compare_in_batches(&file, every, false);
    }
    compare_with_binary(&file);
    // The sed drawn from the submitted patch's lines, verified by the later cat, the patch's
    // hunk traced to it, and its step flagged as an edit.
    let db = dir.path().join("opened.db");
    open_in_batches(&db, &file, 3);
    // The edits' texts are compressed: read back through the store.
    let store = must(Store::open_read_only(&db), "open");
    let edits = must(store.run_rest(1), "edits").edits;
    let shell: Vec<String> = edits
        .iter()
        .filter(|e| e.kind == trajan::model::EditKind::ShellWrite)
        .map(|e| {
            let certainty = e.trace.certainty.map_or("", |c| c.into());
            let checked = e.trace.checked_by.map_or(String::new(), |c| c.to_column().to_string());
            let drawn = e.diff.as_deref().is_some_and(|d| d.contains("-b = old\n+b = new"));
            format!("{} {certainty} {checked} {}", e.step.unwrap_or_default(), u8::from(drawn))
        })
        .collect();
    assert_eq!(shell, ["10 verified 12 1", "14 contradicted 15 0"], "step, certainty, checked by, the diff");
    let shown = edits.iter().find(|e| e.step == Some(14)).and_then(|e| e.trace.shown.clone());
    assert!(shown.as_deref().is_some_and(|s| s.contains("-c = 4\n+c = 3")), "what the view showed: {shown:?}");
    let hunks = edits.iter().find(|e| e.step.is_none()).map(|e| format!("{:?}", e.trace.hunks));
    assert!(hunks.as_deref().is_some_and(|h| h.contains("10")), "the patch's hunk from step 10: {hunks:?}");
    let detail = must(store.run_detail(1, None), "steps");
    let flagged: Vec<i64> = detail.step_list.iter().filter(|s| s.flags.edit).map(|s| s.index).collect();
    assert_eq!(flagged, vec![10, 14]);
    // The edits written at the end share compressed chunks, not one frame each.
    let conn = must(rusqlite::Connection::open(&db), "open");
    let (edits, chunks): (i64, i64) = must(
        conn.query_row("SELECT COUNT(*), COUNT(DISTINCT chunk_id) FROM edits WHERE chunk_id IS NOT NULL", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        }),
        "chunks",
    );
    assert!(edits >= 3 && chunks == 1, "{edits} edits in {chunks} chunks");
    // The second reading says how far it is, with every step of the run stored.
    let mut store = must(Store::open(&dir.path().join("told.db")), "open");
    let events = Mutex::new(Vec::new());
    let opts = Options { batches: Batches { interval: Duration::ZERO, ..Batches::default() }, ..Options::default() };
    let push = |e| events.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    open::open(&mut store, std::slice::from_ref(&file), &opts, &push, &AtomicBool::new(false));
    let events = events.into_inner().unwrap_or_else(|p| p.into_inner());
    let told: Vec<_> = events.iter().filter(|e| matches!(e, Event::Edits { .. })).collect();
    assert!(!told.is_empty(), "{events:?}");
    assert!(told.iter().all(|e| matches!(e, Event::Edits { runs, .. } if runs == &[(1, 20)])), "{told:?}");
}

#[test]
fn files_the_step_reader_gives_up_on_are_read_whole_as_ingest_reads_them() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let whole = to_text(&swe_agent_0x(12));
    // Cut mid-write, after a few steps: the complete steps before the cut are kept, with a
    // warning.
    let at = whole.find("thought 7").unwrap_or(whole.len() / 2);
    let cut = dir.path().join("gen__cut-1.traj");
    must(std::fs::write(&cut, &whole[..at]), "write");
    // Python's NaN in a step.
    let nan = dir.path().join("gen__nan-1.traj");
    must(std::fs::write(&nan, whole.replacen("\"thought 3\"", "NaN", 1)), "write");
    // Not JSON at all past the first step.
    let broken = dir.path().join("gen__broken-1.traj");
    must(std::fs::write(&broken, whole.replacen("\"thought 5\"", "\"thought 5\" oops", 1)), "write");
    for f in [&cut, &nan, &broken] {
        compare_in_batches(f, 2, true);
        compare_with_binary(f);
    }
    // The cut file's run kept the id the step reader gave it.
    let db = dir.path().join("cut.db");
    let (opened, events) = open_in_batches(&db, &cut, 2);
    assert!(events.contains(&Event::Begun(1)) && opened.runs == vec![1], "{events:?} {:?}", opened.runs);
    let out = text(&trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "show".as_ref(), "1".as_ref()]));
    assert!(out.contains("steps: 7") || out.contains("7 steps"), "{out}");
    // The broken file is an error, and nothing of it stays.
    let db = dir.path().join("broken.db");
    let (opened, _) = open_in_batches(&db, &broken, 2);
    assert!(opened.report.failures().next().is_some() && opened.runs.is_empty());
    assert!(dump(&db).iter().all(|l| l.starts_with("-- ")), "the database holds nothing of the broken file");
}

#[test]
fn archives_and_atif_objects_are_read_as_ingest_reads_them() {
    let dir = must(tempfile::tempdir(), "tempdir");
    // A trajectory compressed: its member is keyed `ARCHIVE!/member`, as ingest keys it.
    let gz = dir.path().join("pydicom__pydicom-1458.traj.gz");
    let raw = must(std::fs::read(corpus("swe-agent-0.x/pydicom__pydicom-1458.traj")), "read");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    must(std::io::Write::write_all(&mut enc, &raw), "gzip");
    must(std::fs::write(&gz, must(enc.finish(), "gzip")), "write");
    compare_with_binary(&gz);
    // A `trajectory` member first, but `schema_version`, `agent` and `steps` make it ATIF to
    // ingest: the step reader gives it up at its end.
    let atif: Doc = vec![
        ("trajectory", json!([{"action": "ls", "observation": "a.py", "thought": "look"}])),
        ("schema_version", json!("ATIF-v1.7")),
        ("session_id", json!("s-1")),
        ("agent", json!({"name": "terminus-2", "version": "2.0.0", "model_name": "m/x"})),
        (
            "steps",
            json!([{"step_id": 1, "source": "user", "message": "fix it"}, {"step_id": 2, "source": "agent", "message": "done"}]),
        ),
    ];
    let file = write(dir.path(), "gen__atif-1.json", &atif);
    let out = compare_with_binary(&file);
    assert!(out.contains("ingested 1 file"), "{out}");
    compare_in_batches(&file, 1, true);
}

#[test]
fn readers_see_the_first_steps_while_the_rest_is_read() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__swe11-2.traj", &swe_agent_11(40));
    let db = dir.path().join("t.db");
    let mut store = must(Store::open(&db), "open");
    let seen = Mutex::new(Vec::new());
    let opts = Options { batches: Batches { every: Some(10), ..Batches::default() }, ..Options::default() };
    let opened = open::open(
        &mut store,
        std::slice::from_ref(&file),
        &opts,
        &|e| {
            if let Event::Grown { runs, .. } = e {
                // Another connection, as the TUI's: what is committed is there.
                let reader = must(Store::open_read_only(&db), "reader");
                let lines = must(reader.step_lines(1, 0), "steps");
                seen.lock().unwrap_or_else(|p| p.into_inner()).push((runs[0].1, lines.len()));
            }
        },
        &AtomicBool::new(false),
    );
    assert!(opened.report.results.iter().all(|r| matches!(r, UnitResult::Ingested { .. })));
    let seen = seen.into_inner().unwrap_or_else(|p| p.into_inner());
    assert_eq!(seen.first(), Some(&(10, 10)), "the first batch, alone, is readable: {seen:?}");
    assert!(seen.iter().all(|(told, read)| told == read), "{seen:?}");
    assert_eq!(seen.last(), Some(&(40, 40)));
}

/// Issue 26: the last steps waited for the second reading (the shell edits) to end, which on a
/// 200 MB file is seconds after the first reading reached them.
#[test]
fn the_last_steps_are_readable_before_the_shell_edits_are_reconstructed() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__mini-3.traj.json", &mini_shell_edits(20));
    let db = dir.path().join("t.db");
    let mut store = must(Store::open(&db), "open");
    let seen = Mutex::new(Vec::new());
    // One commit after the first steps, then none until the end but the one this test is for.
    let batches = Batches { first_steps: 3, interval: Duration::from_secs(3600), ..Batches::default() };
    let opts = Options { batches, ..Options::default() };
    let opened = open::open(
        &mut store,
        std::slice::from_ref(&file),
        &opts,
        &|e| {
            if let Event::Grown { runs, .. } = e {
                let reader = must(Store::open_read_only(&db), "reader");
                let lines = must(reader.step_lines(1, 0), "steps").len();
                let hash = must(reader.source_fingerprint(&file.to_string_lossy()), "source").map(|(_, h)| h);
                let finished = hash.is_some_and(|h| h != trajan::store::UNFINISHED);
                seen.lock().unwrap_or_else(|p| p.into_inner()).push((runs[0].1, lines, finished));
            }
        },
        &AtomicBool::new(false),
    );
    assert!(opened.report.results.iter().all(|r| matches!(r, UnitResult::Ingested { .. })));
    let seen = seen.into_inner().unwrap_or_else(|p| p.into_inner());
    assert!(seen.contains(&(20, 20, false)), "all 20 steps readable while the file is unfinished: {seen:?}");
    assert_eq!(seen.last(), Some(&(20, 20, true)));
}

#[test]
fn a_cancelled_read_leaves_nothing_and_a_read_stopped_by_a_crash_is_read_again() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__swe0x-2.traj", &swe_agent_0x(30));
    // Cancelled once the first steps are in: the database keeps nothing of the file.
    let db = dir.path().join("cancel.db");
    let mut store = must(Store::open(&db), "open");
    let cancel = AtomicBool::new(false);
    let opts = Options { batches: Batches { every: Some(3), ..Batches::default() }, ..Options::default() };
    let opened = open::open(
        &mut store,
        std::slice::from_ref(&file),
        &opts,
        &|e| {
            if matches!(e, Event::Begun(_)) {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        },
        &cancel,
    );
    assert!(opened.cancelled);
    assert!(dump(&db).iter().all(|l| l.starts_with("-- ")), "nothing of the cancelled file stays");
    assert_eq!(must(store.integrity_check(), "integrity"), "ok");

    // A read that stopped without ending (trajan killed): its source is marked unfinished, so
    // the file is not taken for unchanged, and the next ingest replaces it.
    let db = dir.path().join("crash.db");
    {
        let mut store = must(Store::open(&db), "open");
        let key = must(file.canonicalize(), "canonical").to_string_lossy().into_owned();
        let mut lw = must(store.live_begin(&key, "file", "swe-agent", "unfinished"), "begin");
        let run = trajan::model::Run {
            instance_id: "gen__swe0x-2".into(),
            format: Some(trajan::model::Format::SweAgent),
            ..Default::default()
        };
        must(store.live_run(&mut lw, &run), "run");
        let step = trajan::model::Step { action: "ls".into(), ..Default::default() };
        must(store.live_steps(&mut lw, &[step], &[]), "step");
        must(store.live_commit(&mut lw), "commit");
        // Dropped without an end, as a killed process leaves it.
    }
    let out = trajan(
        dir.path(),
        &["--db".as_ref(), db.as_os_str(), "ingest".as_ref(), "--no-index".as_ref(), file.as_os_str()],
    );
    assert!(text(&out).contains("ingested 1 file (runs 1, steps 30"), "{}", text(&out));
    let fresh = dir.path().join("fresh.db");
    let out = trajan(
        dir.path(),
        &["--db".as_ref(), fresh.as_os_str(), "ingest".as_ref(), "--no-index".as_ref(), file.as_os_str()],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_same(&dump(&db), &dump(&fresh), "after an unfinished read");
}

#[test]
fn an_unchanged_file_is_not_read_again_and_a_changed_one_keeps_its_run() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__mini-2.traj.json", &mini_info_last(9));
    let db = dir.path().join("t.db");
    let args = ["--db".as_ref(), db.as_os_str(), file.as_os_str()];
    let first = trajan(dir.path(), &args);
    assert!(text(&first).contains("ingested 1 file (runs 1, steps 10"), "{}", text(&first));
    // Where the runs went is said: a new database, then the same one.
    let place = format!("stored in {}", db.display());
    assert!(text(&first).contains(&format!("{place} (a new database")), "{}", text(&first));
    let again = trajan(dir.path(), &args);
    assert!(text(&again).contains("ingested 0 files (") && text(&again).contains("unchanged 1"), "{}", text(&again));
    assert!(text(&again).contains(&place) && !text(&again).contains("a new database"), "{}", text(&again));
    assert!(text(&again).contains("gen__mini-1"), "the run is listed: {}", text(&again));
    // Changed: read again, same run id, and the same rows as ingest gives.
    write(dir.path(), "gen__mini-2.traj.json", &mini_info_last(12));
    let changed = trajan(dir.path(), &args);
    assert!(text(&changed).contains("ingested 1 file (runs 1, steps 13"), "{}", text(&changed));
    let runs = must(must(Store::open_read_only(&db), "open").list_runs(Default::default()), "runs");
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1]);
}

/// A version read to its end stays until a new one is written whole (issue 24, item 1): the
/// new one goes through the pipeline's one transaction, so a version the reader gives up on
/// halfway and the pipeline cannot read leaves the old one, its runs' ids and their labels.
#[test]
fn a_file_read_before_stays_until_its_new_version_is_written_whole() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__swe0x-3.traj", &swe_agent_0x(12));
    let db = dir.path().join("t.db");
    let (opened, _) = open_in_batches(&db, &file, 2);
    assert_eq!(opened.runs, vec![1]);
    let store = must(Store::open(&db), "open");
    let label = trajan::label::Label {
        run_id: 1,
        source: trajan::label::Source::Human,
        rater: "ann".into(),
        taxonomy: "refactoring".into(),
        taxonomy_version: "1.0".into(),
        modes: Vec::new(),
        considered: Vec::new(),
        exit_category: String::new(),
        summary: String::new(),
        provenance: trajan::label::Provenance::default(),
        judgement: Default::default(),
    };
    must(store.add_label(&label, None), "label");
    drop(store);
    let before = dump(&db);
    // Broken past its fifth step: the step reader would have begun writing it.
    let whole = to_text(&swe_agent_0x(14));
    must(std::fs::write(&file, whole.replacen("\"thought 5\"", "\"thought 5\" oops", 1)), "write");
    let (opened, events) = open_in_batches(&db, &file, 2);
    assert!(opened.report.failures().next().is_some(), "{:?}", opened.report);
    assert!(
        events.iter().any(|e| matches!(e, Event::Whole(_))) && !events.iter().any(|e| matches!(e, Event::Begun(_)))
    );
    assert_same(&dump(&db), &before, "the old version after a failed new one");
    let store = must(Store::open(&db), "open");
    assert_eq!(must(store.labels(Some(1), true), "labels").len(), 1);
    drop(store);
    // A good new version replaces it, the run keeping its id and its label.
    write(dir.path(), "gen__swe0x-3.traj", &swe_agent_0x(14));
    let (opened, _) = open_in_batches(&db, &file, 2);
    assert!(!opened.report.has_problems() && opened.runs == vec![1], "{:?}", opened.report);
    let store = must(Store::open(&db), "open");
    assert_eq!(must(store.labels(Some(1), true), "labels").len(), 1);
}

/// `trajan ingest`'s pipeline into `db`, documents of at least `stream_bytes` read a step at a
/// time and written as they are read (0: every one; `u64::MAX`: none, each read whole).
fn ingest_with(db: &Path, files: &[PathBuf], stream_bytes: u64) -> pipeline::Report {
    let mut store = must(Store::open(db), "open");
    let opts = pipeline::Options { stream_bytes, ..pipeline::Options::default() };
    pipeline::ingest(&mut store, files, &opts, &pipeline::Silent)
}

/// What a report says of each unit, beside its path: the result, the counts and the warnings.
fn results(report: &pipeline::Report) -> Vec<String> {
    report
        .results
        .iter()
        .map(|r| match r {
            UnitResult::Ingested { format, stats, warnings, .. } => {
                format!("ingested {format:?} {stats:?} {warnings:?}")
            }
            UnitResult::Unchanged { warnings, .. } => format!("unchanged {warnings:?}"),
            UnitResult::Skipped { skip, .. } => format!("skipped {skip:?}"),
            UnitResult::Failed(e) => format!("failed {e}"),
        })
        .collect()
}

/// Issue 26: `trajan ingest` reads a big mini-swe-agent document a step at a time and writes it
/// as it reads; the database (every row, every edit's texts, every full-text
/// entry) and the report are the ones a whole read gives, for a first ingest, an unchanged one
/// and a changed one. The documents the step reader does not take are read whole, the same.
#[test]
fn ingest_writes_a_big_document_as_it_reads_it_into_the_database_a_whole_read_gives() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut files: Vec<PathBuf> = [
        "mini-swe-agent-1/django__django-16560/django__django-16560.traj.json",
        "mini-swe-agent-1/astropy__astropy-13033/astropy__astropy-13033.traj.json",
        "swe-agent-0.x/pydicom__pydicom-1458.traj",
        "swe-agent-1.0/marshmallow-code__marshmallow-1867.traj",
        "swe-agent-1.1/pytest-dev__pytest-6202.traj",
        "swe-agent-1.1/pylint-dev__pylint-4604.traj",
        "mini-swe-agent-0/local.traj.json",
    ]
    .iter()
    .map(|rel| corpus(rel))
    .collect();
    files.extend([
        write(dir.path(), "gen__mini-2.traj.json", &mini_shell_edits(40)),
        // `info` first, as mini-swe-agent writes it: the shell edits are made during the reading.
        write(dir.path(), "gen__mini-3.traj.json", &info_first(mini_shell_edits(40))),
        write(dir.path(), "gen__swe0x-1.traj", &swe_agent_0x(23)),
        write(dir.path(), "gen__swe11-1.traj", &swe_agent_11(30)),
        write(dir.path(), "gen__swe11-2.traj", &swe_shell_edits(400)),
        // A working directory met only after the first steps: the edits made as the steps came
        // assumed the wrong roots, and the file is read a second time for them.
        write(dir.path(), "gen__swe11-3.traj", &moved_to(swe_shell_edits(40), 30, "/elsewhere")),
        write(dir.path(), "gen__mini-1.traj.json", &mini_info_last(21)),
        write(dir.path(), "gen__retry-1.traj", &retry_agent(true)),
        write(dir.path(), "gen__retry-2.traj", &retry_agent(false)),
    ]);
    let cut = dir.path().join("gen__cut-1.traj");
    let whole = to_text(&swe_agent_0x(12));
    must(std::fs::write(&cut, &whole[..whole.find("thought 7").unwrap_or(whole.len() / 2)]), "write");
    let nan = dir.path().join("gen__nan-1.traj");
    must(std::fs::write(&nan, whole.replacen("\"thought 3\"", "NaN", 1)), "write");
    // A SWE-agent trajectory that also has the members of an ATIF one: the whole-file path's
    // detection decides, as for a smaller file.
    let mut atif = swe_agent_11(6);
    atif.extend([
        ("schema_version", json!("ATIF-v1.2")),
        ("agent", json!({"name": "x", "version": "1"})),
        ("steps", json!([])),
    ]);
    files.extend([cut, nan, write(dir.path(), "gen__atif-1.traj", &atif)]);
    for (n, file) in files.iter().enumerate() {
        let name = file.display().to_string();
        let (a, b) = (dir.path().join(format!("steps{n}.db")), dir.path().join(format!("whole{n}.db")));
        let (stepwise, read_whole) =
            (ingest_with(&a, std::slice::from_ref(file), 0), ingest_with(&b, std::slice::from_ref(file), u64::MAX));
        assert_eq!(results(&stepwise), results(&read_whole), "{name}");
        assert_eq!(read_whole.stepwise, 0, "{name}");
        // The files the step reader takes were written as they were read (a SWE-agent document
        // read into memory first, `pipeline::document`); the rest read whole.
        let taken = !["mini-swe-agent-0", "gen__cut", "gen__nan", "gen__atif"].iter().any(|n| name.contains(n));
        assert_eq!(stepwise.stepwise, usize::from(taken), "{name}: written as it was read?");
        assert_same(&dump(&a), &dump(&b), &name);
        // Again: unchanged, nothing read.
        let again = ingest_with(&a, std::slice::from_ref(file), 0);
        assert_eq!((again.unchanged(), again.stepwise), (1, 0), "{name}: {:?}", again.results);
    }
    // A changed file replaces the version stored before, its run keeping its id, as a whole
    // read of the same two versions does.
    let file = write(dir.path(), "gen__mini-3.traj.json", &mini_shell_edits(20));
    let (a, b) = (dir.path().join("changed-steps.db"), dir.path().join("changed-whole.db"));
    ingest_with(&a, std::slice::from_ref(&file), 0);
    ingest_with(&b, std::slice::from_ref(&file), u64::MAX);
    write(dir.path(), "gen__mini-3.traj.json", &mini_shell_edits(30));
    let (stepwise, read_whole) =
        (ingest_with(&a, std::slice::from_ref(&file), 0), ingest_with(&b, std::slice::from_ref(&file), u64::MAX));
    assert_eq!((stepwise.ingested(), stepwise.stepwise), (1, 1), "{:?}", stepwise.results);
    assert_eq!(results(&stepwise), results(&read_whole));
    assert_same(&dump(&a), &dump(&b), "a changed file");
}

/// A big document that turns out bad midway, once the step reader has written its first steps:
/// an error naming the file and the place, nothing of it in the database (a version stored before
/// stays whole), and the other files of the ingest ingested.
#[test]
fn a_big_document_bad_midway_leaves_nothing_of_it_and_the_other_files_are_ingested() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let good = write(dir.path(), "gen__mini-4.traj.json", &mini_shell_edits(20));
    let file = write(dir.path(), "gen__mini-5.traj.json", &mini_shell_edits(40));
    let db = dir.path().join("t.db");
    let first = ingest_with(&db, std::slice::from_ref(&file), 0);
    assert_eq!((first.ingested(), first.stepwise), (1, 1), "{:?}", first.results);
    // What the database must hold after: that version, then the good file, read whole.
    let expected = dir.path().join("expected.db");
    ingest_with(&expected, std::slice::from_ref(&file), u64::MAX);
    // The new version breaks past step 30: its run is written into the open transaction by then.
    let text = to_text(&mini_shell_edits(44));
    must(std::fs::write(&file, text.replacen("\"THOUGHT: step 30", "oops \"THOUGHT: step 30", 1)), "write");
    let report = ingest_with(&db, &[file.clone(), good.clone()], 0);
    let failures: Vec<String> = report.failures().map(|e| e.to_string()).collect();
    assert_eq!(failures.len(), 1, "{:?}", report.results);
    assert!(failures[0].contains("gen__mini-5.traj.json") && failures[0].contains(", column "), "{}", failures[0]);
    assert_eq!((report.ingested(), report.stepwise), (1, 1), "the other file: {:?}", report.results);
    ingest_with(&expected, std::slice::from_ref(&good), u64::MAX);
    assert_same(&dump(&db), &dump(&expected), "the old version beside the other file");
    // New to the database: nothing of it.
    let (db, expected) = (dir.path().join("new.db"), dir.path().join("new-expected.db"));
    let report = ingest_with(&db, &[file.clone(), good.clone()], 0);
    assert_eq!((report.failures().count(), report.ingested()), (1, 1), "{:?}", report.results);
    ingest_with(&expected, std::slice::from_ref(&good), u64::MAX);
    assert_same(&dump(&db), &dump(&expected), "only the other file");
}

#[test]
fn arguments_are_paths_when_they_name_a_file_or_folder_or_have_a_slash() {
    let dir = must(tempfile::tempdir(), "tempdir");
    write(dir.path(), "1", &swe_agent_0x(2));
    let db = dir.path().join("t.db");
    // `./1` is the file; `1` alone, in a folder where a file `1` exists, is the file too.
    let out = trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "open".as_ref(), "./1".as_ref()]);
    assert!(text(&out).contains("ingested 1 file (runs 1"), "{}", text(&out));
    let out = trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "1".as_ref()]);
    assert!(text(&out).contains("unchanged 1"), "{}", text(&out));
    // A word that is no file is a command mistyped, not a path.
    let out = trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "rnus".as_ref()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("unrecognized subcommand \"rnus\""), "{}", text(&out));
    // Options after the paths are options.
    let other = dir.path().join("other.db");
    let out = trajan(dir.path(), &["./1".as_ref(), "--db".as_ref(), other.as_os_str()]);
    assert!(other.exists() && text(&out).contains("ingested 1 file (runs 1"), "{}", text(&out));
    // `open` takes one run, or paths; a missing path is said so.
    let out = trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "open".as_ref(), "./1".as_ref(), "7".as_ref()]);
    assert!(text(&out).contains("\"7\" is no file or folder"), "{}", text(&out));
    let out = trajan(dir.path(), &["--db".as_ref(), db.as_os_str(), "open".as_ref(), "nope/x.traj".as_ref()]);
    assert!(text(&out).contains("nope/x.traj: no such file or folder"), "{}", text(&out));
}

/// `after_first` for the test below: how often it was called, and whether a run had been told
/// as begun (its first steps committed) every time it was.
static AFTER_FIRST_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static BEGUN_TOLD: AtomicBool = AtomicBool::new(false);
static CALLED_EARLY: AtomicBool = AtomicBool::new(false);

fn after_first() {
    use std::sync::atomic::Ordering::SeqCst;
    AFTER_FIRST_CALLS.fetch_add(1, SeqCst);
    if !BEGUN_TOLD.load(SeqCst) {
        CALLED_EARLY.store(true, SeqCst);
    }
}

#[test]
fn the_reading_threads_step_aside_only_once_the_first_steps_are_committed() {
    use std::sync::atomic::Ordering::SeqCst;
    let dir = must(tempfile::tempdir(), "tempdir");
    let file = write(dir.path(), "gen__swe11-3.traj", &swe_agent_11(400));
    let db = dir.path().join("t.db");
    let mut store = must(Store::open(&db), "open");
    let batches = Batches { every: Some(5), ..Batches::default() };
    let opts = Options { batches, after_first: Some(after_first), ..Options::default() };
    let opened = open::open(
        &mut store,
        std::slice::from_ref(&file),
        &opts,
        &|e| {
            if matches!(e, Event::Begun(_)) {
                BEGUN_TOLD.store(true, SeqCst);
            }
        },
        &AtomicBool::new(false),
    );
    assert!(opened.report.results.iter().all(|r| matches!(r, UnitResult::Ingested { .. })));
    assert!(!CALLED_EARLY.load(SeqCst), "called before the first steps were committed");
    // The writer once; the reader once more if it had steps left to read by then.
    let calls = AFTER_FIRST_CALLS.load(SeqCst);
    assert!((1..=2).contains(&calls), "called {calls} times");
}

/// The skim's steps were looked at (by the test below): the reading may go on.
static LOOKED: (Mutex<bool>, std::sync::Condvar) = (Mutex::new(false), std::sync::Condvar::new());

/// Called by the reading and writing threads once the first steps are committed: they wait
/// (10 s at most) until the test has looked at the steps the skim finds, so those are looked at
/// before they are stored however the threads are scheduled.
fn wait_for_the_look() {
    let (looked, cv) = &LOOKED;
    let guard = looked.lock().unwrap_or_else(|p| p.into_inner());
    let _ = cv.wait_timeout_while(guard, Duration::from_secs(10), |done| !*done);
}

/// Issue 26: the steps asked for before the reading gets to them (`G`, `:N`), read from the
/// file through its skim, against the same steps once the file is read; and the database after
/// that early look against `trajan ingest`'s.
#[test]
fn a_step_viewed_before_the_reading_ends_is_the_step_stored_and_the_database_is_ingests() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let files = [
        write(dir.path(), "gen__mini-2.traj.json", &mini_shell_edits(40)),
        write(dir.path(), "gen__mini-1.traj.json", &mini_info_last(40)),
        write(dir.path(), "gen__swe-0x.traj", &swe_agent_0x(40)),
        write(dir.path(), "gen__swe-11.traj", &swe_agent_11(40)),
        corpus("mini-swe-agent-1/django__django-16560/django__django-16560.traj.json"),
    ];
    for file in files {
        let name = file.display().to_string();
        let (a, b) = (dir.path().join("opened.db"), dir.path().join("ingested.db"));
        let _ = (std::fs::remove_file(&a), std::fs::remove_file(&b));
        let mut store = must(Store::open(&a), "open");
        // The first steps committed at once, then nothing until the end: the steps looked at
        // when the file is skimmed are not stored yet.
        let batches = Batches { first_steps: 3, interval: Duration::from_secs(3600), ..Batches::default() };
        let opts = Options { batches, after_first: Some(wait_for_the_look), ..Options::default() };
        *LOOKED.0.lock().unwrap_or_else(|p| p.into_inner()) = false;
        let early = Mutex::new(Vec::new());
        let opened = open::open(
            &mut store,
            std::slice::from_ref(&file),
            &opts,
            &|e| {
                let Event::Indexed { run, peek } = e else { return };
                let reader = must(Store::open_read_only(&a), "reader");
                let stored = must(reader.step_lines(run, 0), "steps").len();
                // `G`, then `:N` at the middle, then the first (stored already).
                let n = peek.steps();
                for k in [n - 1, n / 2, 0] {
                    let step = must(peek.step(k), "the step read early");
                    let body = trajan::store::browse::StepBody::unstored(run, k as i64, &step);
                    let line = trajan::store::browse::StepLine::unstored(k as i64, &step);
                    early.lock().unwrap_or_else(|p| p.into_inner()).push((run, k, stored, line, body));
                }
                *LOOKED.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
                LOOKED.1.notify_all();
            },
            &AtomicBool::new(false),
        );
        assert!(opened.report.results.iter().all(|r| matches!(r, UnitResult::Ingested { .. })), "{name}");
        let early = early.into_inner().unwrap_or_else(|p| p.into_inner());
        assert_eq!(early.len(), 3, "{name}: the file was skimmed and its steps read early");
        let reader = must(Store::open_read_only(&a), "reader");
        for (run, k, stored, line, body) in early {
            if k > 0 {
                assert!(stored <= k, "{name}: step {k} was looked at before it was stored ({stored} stored)");
            }
            let want = must(reader.step_body(run, k as i64), "the stored step");
            let want_line = must(reader.step_lines(run, k), "the stored line").remove(0);
            // What only the end of the reading gives: the shell edits reconstructed, and the
            // `edit` flag of their steps. Everything else is the same.
            let (mut row, mut want_row) = (body.step.clone(), want.step.clone());
            let reconstructed = want.edits.iter().any(|e| e.line.certainty.is_some());
            if reconstructed {
                (row.flags.edit, want_row.flags.edit) = (false, false);
            }
            let json = |r: &trajan::store::read::StepRow| must(serde_json::to_value(r), "json");
            assert_eq!(json(&row), json(&want_row), "{name}: step {k}");
            assert_eq!(row.flags, want_row.flags, "{name}: step {k}");
            assert!(body.edits.is_empty());
            let (mut line, mut want_line) = (line, want_line);
            if reconstructed {
                (line.flags.edit, want_line.flags.edit) = (false, false);
            }
            assert_eq!(line, want_line, "{name}: the line of step {k}");
        }
        let ingested = trajan(
            dir.path(),
            &["--db".as_ref(), b.as_os_str(), "ingest".as_ref(), "--no-index".as_ref(), file.as_os_str()],
        );
        assert_eq!(ingested.status.code(), Some(0), "{}", text(&ingested));
        drop(store);
        assert_same(&dump(&a), &dump(&b), &name);
    }
}
