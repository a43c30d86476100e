//! The datasets whose rows carry no verdict: nvidia/SWE-Zero-openhands-trajectories (and
//! SWE-Hero, one schema) and R2E-Gym/R2EGym-SFT-Trajectories (no instance id either: the issue
//! names the task). Their runs have no verdict, never one made up; each task is written once.

use super::{RunLine, assert_clean, edit_kinds, failures, generated, ingest, line, list, rows, runs, shard, warnings};
use crate::common::must;
use serde_json::Value;
use std::path::Path;
use trajan::ingest::dataset::Kind;
use trajan::model::{EditKind, Format};
use trajan::store::Store;

/// The task rows the database holds: (instance, instruction).
pub(super) fn tasks(db: &Path) -> Vec<(String, String)> {
    let conn = must(rusqlite::Connection::open(db), "open");
    let mut q = must(conn.prepare("SELECT instance_id, instruction FROM tasks ORDER BY id"), "prepare");
    let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default())));
    must(rows, "query").map(|r| must(r, "row")).collect()
}

fn metadata(store: &Store, id: i64) -> Value {
    let rest = must(store.run_rest(id), "run rest");
    must(serde_json::from_str(rest.metadata.as_deref().unwrap_or("{}")), "metadata")
}

/// SWE-Zero: OpenHands' tool calls read as steps and edits, `model_patch` the submission, the
/// card's model, no verdict; `dataset`, `repo`, `trajectory_id`, `license` in the metadata; a
/// row written as the card's first revision had them (no `name`, no `tool_call_id`) reads the
/// same; the two runs of one instance write its task once.
#[test]
fn swe_zero_rows_are_openhands_runs_without_a_verdict() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("swezero-rows.json"));
    let p = shard(Kind::SweZero, &dir.path().join("data/train-00000-of-00001.parquet"), &rows, 2);
    let db = dir.path().join("t.db");
    let (report, store) = ingest(&db, std::slice::from_ref(&p));
    assert_clean(&report, "");
    let runs = runs(&store);
    let got: Vec<RunLine<'_>> = runs.iter().map(line).collect();
    let (qwen, zero) = (Some("Qwen/Qwen3-Coder-480B-A35B-Instruct"), Format::SweZeroOpenHands);
    assert_eq!(
        got,
        [
            ("python__mypy-11135", qwen, None, zero, 4, true),
            ("python__mypy-11135", qwen, None, zero, 4, true),
            ("marshmallow-code__marshmallow-2041", qwen, None, zero, 4, true),
        ]
    );
    assert!(runs.iter().all(|r| r.agent.as_deref() == Some("openhands")));
    assert!(runs.iter().all(|r| r.dataset.as_deref() == Some("nvidia/SWE-Zero-openhands-trajectories")));
    for r in &runs[..2] {
        let detail = must(store.run_detail(r.id, None), "detail");
        assert!(detail.step_list[0].action.starts_with("grep -"), "{:?}", detail.step_list[0].action);
        assert!(detail.step_list[2].observation.starts_with("3 passed"), "{:?}", detail.step_list[2].observation);
        assert!(detail.outcome.is_none(), "no evaluation is made up");
        let kinds = edit_kinds(&store, r.id);
        assert!(kinds.contains(&EditKind::StrReplace) && kinds.contains(&EditKind::FinalPatch), "{kinds:?}");
        let task = detail.task.and_then(|t| t.instruction);
        assert!(task.as_deref().is_some_and(|t| t.starts_with("Crash when a TypedDict key")), "{task:?}");
    }
    let meta = metadata(&store, runs[2].id);
    assert_eq!(
        (&meta["dataset"]["task_source"], &meta["dataset"]["repo"], &meta["dataset"]["license"]),
        (&Value::from("SWE-rebench"), &Value::from("marshmallow-code/marshmallow"), &Value::from("MIT"))
    );
    assert_eq!(meta["dataset"]["trajectory_id"], "swe-zero-7b1d44a0-0001");
    let t = tasks(&db);
    assert_eq!(t.len(), 2, "one task per instance: {t:?}");
    drop(store);
    let (again, _) = ingest(&db, &[p]);
    assert_eq!((again.ingested(), again.unchanged()), (0, 1));
    assert_eq!(tasks(&db).len(), 2, "read again: nothing added");
}

/// SWE-Hero's rows as a JSON-lines export in the Hugging Face cache: the same reader, named by
/// the cache's folder; a row whose `trajectory` is no list is named by its line, the others read.
#[test]
fn swe_hero_rows_as_json_lines_take_the_cache_s_name_and_a_bad_row_is_named() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("swezero-rows.json"));
    rows[1]["trajectory"] = Value::String("[]".into());
    let root = dir.path().join("hub/datasets--nvidia--SWE-Hero-openhands-trajectories/snapshots/9e8d7c6/data");
    must(std::fs::create_dir_all(&root), "mkdir");
    let p = root.join("train.jsonl");
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    must(std::fs::write(&p, text), "write");
    let (report, store) = ingest(&dir.path().join("t.db"), std::slice::from_ref(&p));
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let w = warnings(&report);
    let named = format!("{}: line 2: column `trajectory`: expected a list of messages, found a string", p.display());
    assert!(w.iter().any(|x| x.contains(&named)), "{w:?}");
    let runs = runs(&store);
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.dataset.as_deref() == Some("nvidia/SWE-Hero-openhands-trajectories")));
    assert!(runs.iter().all(|r| r.format == Format::SweZeroOpenHands && r.resolved.is_none() && r.steps == 4));
}

/// R2E-Gym: `messages` alone; the `<function=...>` calls read as steps and edits, the model of
/// the paper, no verdict, no patch; the instance named by the issue, so the two runs of one
/// issue group together and state its task once; a row with no issue is named, the others read.
#[test]
fn r2e_gym_rows_are_named_by_their_issue() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("r2egym-rows.json"));
    let mut no_issue = rows[2].clone();
    no_issue["messages"][1]["content"] = Value::String("Fix the thumbnail.".into());
    rows.push(no_issue);
    let p = shard(Kind::R2eGym, &dir.path().join("data/train-00000-of-00001.parquet"), &rows, 3);
    let db = dir.path().join("t.db");
    let (report, store) = ingest(&db, std::slice::from_ref(&p));
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let w = warnings(&report);
    let named = format!(
        "{}: row group 1, row 0: column `messages`: the first user message wraps no issue in <github_issue>",
        p.display()
    );
    assert!(w.iter().any(|x| x.starts_with(&named)), "{w:?}");
    let runs = runs(&store);
    let got: Vec<RunLine<'_>> = runs.iter().map(line).collect();
    let (a, b) = (runs[0].instance_id.as_str(), runs[2].instance_id.as_str());
    let (claude, r2e) = (Some("claude-3-5-sonnet-20241022"), Format::R2eGymSft);
    assert_eq!(
        got,
        [(a, claude, None, r2e, 4, false), (a, claude, None, r2e, 4, false), (b, claude, None, r2e, 4, false)]
    );
    assert!(a.starts_with("r2e-gym-") && a.len() == 20 && a != b, "{a} {b}");
    assert!(runs.iter().all(|r| r.agent.as_deref() == Some("r2e-gym")));
    assert!(runs.iter().all(|r| r.dataset.as_deref() == Some("R2E-Gym/R2EGym-SFT-Trajectories")));
    let detail = must(store.run_detail(runs[0].id, None), "detail");
    assert_eq!(
        detail.step_list[0].action, "grep -n 'def _get_result' /testbed/pandas/core/reshape/concat.py",
        "{:?}",
        detail.step_list
    );
    assert!(detail.step_list[0].observation.contains("112:    def _get_result"));
    assert!(edit_kinds(&store, runs[0].id).contains(&EditKind::StrReplace), "{:?}", edit_kinds(&store, runs[0].id));
    let search = must(store.run_detail(runs[1].id, None), "detail");
    assert!(search.step_list[0].action.starts_with("search "), "{:?}", search.step_list[0].action);
    let t = tasks(&db);
    assert_eq!(t.len(), 2, "{t:?}");
    assert!(
        t[0].1.starts_with("[ISSUE]\n**Title:** `concat` of an empty frame") && t[0].1.ends_with("[/ISSUE]"),
        "{t:?}"
    );
}

/// Shards written by `bench gen --kind swezero|r2egym` read whole, with no warning and no
/// verdict; their runs of one task share its instance and its task is written once; R2E-Gym's
/// fixture rows read as JSON lines too.
#[test]
fn generated_swe_zero_and_r2e_gym_shards_read_whole() {
    let dir = must(tempfile::tempdir(), "tempdir");
    for (kind, format) in [("swezero", Format::SweZeroOpenHands), ("r2egym", Format::R2eGymSft)] {
        let out = generated(dir.path(), kind);
        let db = dir.path().join(format!("{kind}.db"));
        let (report, store) = ingest(&db, std::slice::from_ref(&out));
        assert_clean(&report, kind);
        let runs = runs(&store);
        assert!(runs.len() >= 100, "{kind}: {} runs", runs.len());
        assert!(runs.iter().all(|r| r.format == format && r.steps >= 20 && r.resolved.is_none()), "{kind}");
        let instances: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.instance_id.as_str()).collect();
        assert!(instances.len() * 10 < runs.len(), "{kind}: {} instances of {} runs", instances.len(), runs.len());
        assert_eq!(tasks(&db).len(), instances.len(), "{kind}: a task per instance");
    }
    let text: String = list(&rows("r2egym-rows.json")).iter().map(|r| format!("{r}\n")).collect();
    let p = dir.path().join("train.jsonl");
    must(std::fs::write(&p, text), "write");
    let (report, store) = ingest(&dir.path().join("lines.db"), &[p]);
    assert_clean(&report, "JSON lines");
    let got: Vec<(Format, i64, Option<bool>)> = runs(&store).iter().map(|r| (r.format, r.steps, r.resolved)).collect();
    assert_eq!(got, [(Format::R2eGymSft, 4, None); 3]);
}

/// `messages` alone tells R2E-Gym's rows only with the issue they wrap: an OpenAI fine-tuning
/// file's lines (`{"messages": [...]}`) and a chat fine-tuning shard of that one column, beside
/// the runs, are still no input: skipped (the shard with its columns named), not failed.
#[test]
fn a_fine_tuning_file_or_shard_of_messages_alone_is_skipped_not_read_as_r2e_gym() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let row = serde_json::json!({"messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."}]});
    let lines = dir.path().join("finetune.jsonl");
    must(std::fs::write(&lines, format!("{row}\n{row}\n")), "write");
    let parquet = shard(Kind::R2eGym, &dir.path().join("chat/train-00000-of-00001.parquet"), &[row.clone(), row], 1);
    let (report, store) = ingest(&dir.path().join("t.db"), &[lines, parquet]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    assert!(runs(&store).is_empty());
    match &report.results[..] {
        [
            trajan::ingest::pipeline::UnitResult::Skipped { .. },
            trajan::ingest::pipeline::UnitResult::Skipped { skip, .. },
        ]
        | [
            trajan::ingest::pipeline::UnitResult::Skipped { skip, .. },
            trajan::ingest::pipeline::UnitResult::Skipped { .. },
        ] if skip.reason.contains("columns: messages") => {}
        other => panic!("{other:?}"),
    }
}
