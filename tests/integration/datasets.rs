//! Published trajectory datasets (issue 41): the fixtures of `fixtures/datasets/` (rows that
//! mimic the public sample rows, see its MANIFEST.md) written as Parquet shards of the published
//! schemas at test time, and as their JSON-lines export; each row a run with its steps, verdict,
//! patch and model. Then what goes wrong with shards people download: a cut shard, a shard of
//! another dataset, a column of the wrong type, rows that cannot be read, a huge cell, a row of
//! a million messages. The datasets whose rows have no verdict are in `unjudged`; `--format` on
//! shards in `forced`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use trajan::ingest::dataset::{Kind, parquet, shred};
use trajan::ingest::pipeline::{self, Options, Report, Silent, UnitResult};
use trajan::model::{EditKind, Format};
use trajan::store::Store;
use trajan::store::read::{RunFilter, RunSummary};

use crate::common;
use crate::common::must;

#[path = "datasets/forced.rs"]
mod forced;
#[path = "datasets/unjudged.rs"]
mod unjudged;

fn rows(name: &str) -> Value {
    let path = common::fixtures_dir("datasets").join(name);
    must(serde_json::from_str(&must(std::fs::read_to_string(&path), "read fixture")), "fixture JSON")
}

fn list(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// Write `rows` as a shard of `kind`'s published schema, `group` rows per row group.
fn shard(kind: Kind, path: &Path, rows: &[Value], group: usize) -> PathBuf {
    if let Some(dir) = path.parent() {
        must(std::fs::create_dir_all(dir), "mkdir");
    }
    must(shred::write(path, must(parquet::schema(kind), "schema"), rows, group), "write shard");
    path.to_path_buf()
}

/// Shards of 1 MB written by `trajan bench gen --kind KIND` into `dir/KIND`.
fn generated(dir: &Path, kind: &str) -> PathBuf {
    let out = dir.join(kind);
    let made = common::command()
        .args(["bench", "gen"])
        .arg(&out)
        .args(["--size", "1M", "--kind", kind])
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .output();
    let made = must(made, "bench gen");
    assert!(made.status.success(), "{kind}: {}", String::from_utf8_lossy(&made.stderr));
    out
}

/// No file failed and no warning was given (`what` names the case in the message).
fn assert_clean(report: &Report, what: &str) {
    let (f, w) = (failures(report), warnings(report));
    assert!(f.is_empty() && w.is_empty(), "{what}: failures {f:?}, warnings {w:?}");
}

fn ingest(db: &Path, paths: &[PathBuf]) -> (Report, Store) {
    let mut store = must(Store::open(db), "open store");
    let report = pipeline::ingest(&mut store, paths, &Options::default(), &Silent);
    (report, store)
}

fn runs(store: &Store) -> Vec<RunSummary> {
    let mut r = must(store.list_runs(RunFilter::default()), "list runs");
    r.sort_by_key(|r| r.id);
    r
}

fn warnings(report: &Report) -> Vec<String> {
    report.warnings().cloned().collect()
}

fn failures(report: &Report) -> Vec<String> {
    report.failures().map(|e| e.to_string()).collect()
}

/// What the dataset tests check of a run: instance, model, verdict, format, steps, whether it
/// submitted a patch.
type RunLine<'a> = (&'a str, Option<&'a str>, Option<bool>, Format, i64, bool);

fn line(r: &RunSummary) -> RunLine<'_> {
    (r.instance_id.as_str(), r.model.as_deref(), r.resolved, r.format, r.steps, r.has_patch)
}

fn edit_kinds(store: &Store, id: i64) -> Vec<EditKind> {
    must(store.run_detail(id, None), "run detail").edit_list.iter().map(|e| e.kind).collect()
}

#[test]
fn nebius_rows_are_runs_with_their_own_verdicts() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("nebius-rows.json"));
    let p = shard(Kind::Nebius, &dir.path().join("data/train-00000-of-00001.parquet"), &rows, 2);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    assert!(warnings(&report).is_empty(), "{:?}", warnings(&report));
    let runs = runs(&store);
    assert_eq!(runs.len(), 3);
    // The issue of the first user turn is the task's statement, written once per instance
    // (the two runs of one instance are in two row groups).
    let task = must(store.run_detail(runs[1].id, None), "detail").task.and_then(|t| t.instruction);
    assert_eq!(task.as_deref(), Some("Add support for `summary` and `description` fields for paths"));
    let tasks = unjudged::tasks(&dir.path().join("t.db"));
    assert_eq!(
        tasks.iter().map(|t| t.0.as_str()).collect::<Vec<_>>(),
        ["marshmallow-code__apispec-382", "Unidata__MetPy-3437"]
    );
    // Two runs of one instance by one model: each gets its own row's verdict.
    let got: Vec<(&str, Option<&str>, Option<bool>, Format)> =
        runs.iter().map(|r| (r.instance_id.as_str(), r.model.as_deref(), r.resolved, r.format)).collect();
    assert_eq!(
        got,
        [
            ("marshmallow-code__apispec-382", Some("swe-agent-llama-70b"), Some(false), Format::NebiusSweAgent),
            ("marshmallow-code__apispec-382", Some("swe-agent-llama-70b"), Some(true), Format::NebiusSweAgent),
            ("Unidata__MetPy-3437", Some("swe-agent-llama-8b"), Some(false), Format::NebiusSweAgent),
        ]
    );
    assert_eq!(runs[2].exit_status.as_deref(), Some("exit_cost"));
    // search_dir, open, edit, pytest, submit: five replies, five steps.
    assert!(runs.iter().all(|r| r.steps == 5 && r.has_patch), "{runs:?}");
    let detail = must(store.run_detail(runs[0].id, None), "detail");
    let edit = &detail.step_list[2];
    assert!(edit.action.starts_with("edit 3:3"), "{:?}", edit.action);
    assert_eq!(detail.step_list[2].open_file.as_deref(), Some("/apispec/apispec/core.py"));
    assert!(!detail.step_list[0].observation.contains("(Open file"), "the prompt's state lines are not output");
    assert!(edit_kinds(&store, runs[0].id).contains(&EditKind::WindowedEdit), "{:?}", edit_kinds(&store, runs[0].id));
    assert!(edit_kinds(&store, runs[0].id).contains(&EditKind::FinalPatch));
    assert!(detail.step_list[3].flags.test_run, "pytest is a test run");
}

#[test]
fn rebench_rows_read_tool_calls_as_steps_and_edits() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("rebench-rows.json"));
    let p = shard(Kind::Rebench, &dir.path().join("trajectories.parquet"), &rows, 1);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert_clean(&report, "");
    let runs = runs(&store);
    let got: Vec<(Option<bool>, Option<&str>, i64)> =
        runs.iter().map(|r| (r.resolved, r.model.as_deref(), r.steps)).collect();
    let model = Some("Qwen/Qwen3-Coder-480B-A35B-Instruct");
    assert_eq!(got, [(Some(false), model, 4), (Some(true), model, 4)]);
    let detail = must(store.run_detail(runs[0].id, None), "detail");
    assert_eq!(detail.step_list[0].action, "cd /testbed && grep -n 'def open' src/sdf_xarray/__init__.py");
    assert!(detail.step_list[0].observation.starts_with("12:def open_dataset"), "{}", detail.step_list[0].observation);
    assert!(edit_kinds(&store, runs[0].id).contains(&EditKind::StrReplace), "{:?}", edit_kinds(&store, runs[0].id));
    assert_eq!(runs[0].agent.as_deref(), Some("openhands"));
}

#[test]
fn the_three_smith_dialects_read_as_the_same_run() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let all = rows("smith-rows.json");
    let mut paths = Vec::new();
    for split in ["tool", "xml", "ticks"] {
        let p = dir.path().join(format!("data/{split}-00000-of-00001.parquet"));
        paths.push(shard(Kind::Smith, &p, &list(&all[split]), 1));
    }
    let (report, store) = ingest(&dir.path().join("t.db"), &paths);
    assert_clean(&report, "");
    let runs = runs(&store);
    let versions: Vec<(Option<&str>, i64, Option<bool>)> =
        runs.iter().map(|r| (r.format_version.as_deref(), r.steps, r.resolved)).collect();
    // In the order of the shards' names.
    assert_eq!(
        versions,
        [(Some("ticks"), 4, Some(false)), (Some("tool"), 4, Some(true)), (Some("xml"), 4, Some(true))]
    );
    for r in &runs {
        let detail = must(store.run_detail(r.id, None), "detail");
        assert_eq!(detail.step_list[2].action, "python /testbed/reproduce_error.py", "{:?}", r.format_version);
        assert!(detail.step_list[1].observation.contains("has been edited"), "{:?}", r.format_version);
        let kinds = edit_kinds(&store, r.id);
        assert!(kinds.contains(&EditKind::StrReplace), "{:?}: {kinds:?}", r.format_version);
        assert_eq!(r.model.as_deref(), Some("claude-3-7-sonnet-20250219"));
    }
}

#[test]
fn json_lines_exports_read_as_the_shards_do() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut text = String::new();
    for r in list(&rows("nebius-rows.json")) {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    let p = dir.path().join("train.jsonl");
    must(std::fs::write(&p, text), "write");
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let verdicts: Vec<Option<bool>> = runs(&store).iter().map(|r| r.resolved).collect();
    assert_eq!(verdicts, [Some(false), Some(true), Some(false)]);
}

/// The Hugging Face cache's layout, two shards: read again, nothing is added; one shard
/// changed, only its runs are replaced (the other's keep their ids).
#[test]
fn a_cached_dataset_read_again_adds_nothing_and_a_new_shard_replaces_its_own_runs() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let root = dir.path().join("hub/datasets--nebius--SWE-agent-trajectories/snapshots/a8a64e5/data");
    let rows = list(&rows("nebius-rows.json"));
    let a = shard(Kind::Nebius, &root.join("train-00000-of-00002.parquet"), &rows[..2], 1);
    let b = shard(Kind::Nebius, &root.join("train-00001-of-00002.parquet"), &rows[2..], 1);
    let db = dir.path().join("t.db");
    let (report, store) = ingest(&db, &[dir.path().join("hub")]);
    assert_eq!(report.ingested(), 2, "{:?}", report.results);
    let first = runs(&store);
    drop(store);
    let tasks = unjudged::tasks(&db);
    let (again, store) = ingest(&db, &[dir.path().join("hub")]);
    assert_eq!((again.ingested(), again.unchanged()), (0, 2));
    assert_eq!(unjudged::tasks(&db), tasks, "no task added");
    assert_eq!(runs(&store).iter().map(|r| r.id).collect::<Vec<_>>(), first.iter().map(|r| r.id).collect::<Vec<_>>());
    drop(store);
    // A new revision of the first shard: its second row now resolved too.
    let mut changed = rows[..2].to_vec();
    changed[0]["target"] = Value::Bool(true);
    shard(Kind::Nebius, &a, &changed, 1);
    let (third, store) = ingest(&db, &[dir.path().join("hub")]);
    assert_eq!((third.ingested(), third.unchanged()), (1, 1));
    let now = runs(&store);
    assert_eq!(now.len(), 3);
    let other =
        |rs: &[RunSummary]| rs.iter().find(|r| r.source.ends_with("train-00001-of-00002.parquet")).map(|r| r.id);
    assert_eq!(other(&now), other(&first), "the unchanged shard's run keeps its id");
    assert_eq!(now.iter().filter(|r| r.resolved == Some(true)).count(), 2);
    let _ = b;
}

#[test]
fn a_shard_of_another_dataset_is_skipped_with_its_columns_named() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let schema = must(
        trajan::ingest::dataset::parquet::schema_text(
            "message m { optional binary city (STRING); optional int64 people; }",
        ),
        "schema",
    );
    let p = dir.path().join("cities.parquet");
    must(shred::write(&p, schema, &[serde_json::json!({"city": "Paris", "people": 2})], 10), "write");
    let (report, _) = ingest(&dir.path().join("t.db"), std::slice::from_ref(&p));
    match &report.results[..] {
        [UnitResult::Skipped { skip, .. }] => assert!(skip.reason.contains("columns: city, people"), "{}", skip.reason),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_cut_shard_and_a_column_of_the_wrong_type_fail_alone() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("nebius-rows.json"));
    let good = shard(Kind::Nebius, &dir.path().join("good.parquet"), &rows, 2);
    let bytes = must(std::fs::read(&good), "read");
    let cut = dir.path().join("cut.parquet");
    must(std::fs::write(&cut, &bytes[..bytes.len() / 2]), "write");
    // `target` written as text, as a careless re-export does.
    let text_target = trajan::ingest::dataset::Kind::Nebius
        .schema()
        .replace("optional boolean target;", "optional binary target (STRING);");
    let schema = must(parquet::schema_text(&text_target), "schema");
    let mut as_text = rows.clone();
    for r in &mut as_text {
        r["target"] = Value::String("False".into());
    }
    let typed = dir.path().join("typed.parquet");
    must(shred::write(&typed, schema, &as_text, 2), "write");
    let (report, store) = ingest(&dir.path().join("t.db"), &[dir.path().to_path_buf()]);
    let f = failures(&report);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f.iter().any(|e| e.contains("cut.parquet") && e.contains("not a readable Parquet file")), "{f:?}");
    assert!(
        f.iter().any(|e| e.contains("typed.parquet") && e.contains("column `target` is BYTE_ARRAY (STRING)")),
        "{f:?}"
    );
    assert_eq!(runs(&store).len(), 3, "the good shard is read");
}

#[test]
fn rows_that_cannot_be_read_are_named_and_counted_and_the_rest_read() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("nebius-rows.json"));
    rows[1]["instance_id"] = Value::Null;
    let p = shard(Kind::Nebius, &dir.path().join("train-00000-of-00001.parquet"), &rows, 2);
    let mut smith = list(&rows_smith_tool());
    smith.push(smith[0].clone());
    smith[1]["messages"] = Value::String("[{\"role\": \"system\", \"content\": ".into());
    let q = shard(Kind::Smith, &dir.path().join("tool-00000-of-00001.parquet"), &smith, 1);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p.clone(), q.clone()]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let w = warnings(&report);
    let named = format!("{}: row group 0, row 1: column `instance_id`: missing (null)", p.display());
    assert!(w.contains(&named), "{w:?}");
    assert!(
        w.contains(&format!("{}: 1 of 3 rows could not be read (each named above); the others were", p.display())),
        "{w:?}"
    );
    assert!(
        w.iter().any(|x| x.starts_with(&format!("{}: row group 1, row 0: column `messages`: not JSON", q.display()))),
        "{w:?}"
    );
    assert_eq!(runs(&store).len(), 3);
}

fn rows_smith_tool() -> Value {
    rows("smith-rows.json")["tool"].clone()
}

/// A 100 MB observation in one cell: read, and the run stored with it (memory bounded by the
/// row group, never the file: measured in docs/BENCHMARKS.md).
#[test]
fn a_huge_cell_is_read() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("nebius-rows.json"));
    rows.truncate(1);
    let big = format!("{}\n(Open file: n/a)\n(Current directory: /apispec)\nbash-$", "x".repeat(100 << 20));
    rows[0]["trajectory"][3]["text"] = Value::String(big);
    let p = shard(Kind::Nebius, &dir.path().join("big.parquet"), &rows, 1);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let r = runs(&store);
    assert_eq!((r.len(), r[0].steps), (1, 5));
}

/// A row of a million messages: its group is over the limit of values one group may hold, so it
/// is named and not read; the shard's other group is.
#[test]
fn a_row_of_a_million_messages_is_refused_by_its_group_and_the_others_read() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("nebius-rows.json"));
    let msg = serde_json::json!({"cutoff_date": null, "mask": true, "role": "ai", "system_prompt": null, "text": "```\nls\n```"});
    rows[2]["trajectory"] = Value::Array(vec![msg; 1_000_000]);
    let p = shard(Kind::Nebius, &dir.path().join("many.parquet"), &rows, 2);
    let mut store = must(Store::open(&dir.path().join("t.db")), "open");
    let opts = Options {
        parquet: parquet::Limits { group_values: 500_000, ..parquet::Limits::default() },
        ..Options::default()
    };
    let report = pipeline::ingest(&mut store, std::slice::from_ref(&p), &opts, &Silent);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let w = warnings(&report);
    assert!(
        w.iter().any(|x| x.contains("row group 1 (1 rows): 1000000 values in one column, over the limit of 500000")),
        "{w:?}"
    );
    assert_eq!(runs(&store).len(), 2);
}

/// nvidia/Open-SWE-Traces: OpenHands' chat messages read as steps and edits; `resolved` 1, 0 and
/// -1 (not judged: no verdict); the model from `metadata.teacher_model`; no patch column.
#[test]
fn open_swe_traces_rows_read_with_their_verdicts_and_teacher_models() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("openswe-rows.json"));
    let root = dir.path().join("hub/datasets--nvidia--Open-SWE-Traces/snapshots/0a1b2c3/data");
    let p = shard(Kind::OpenSwe, &root.join("train-00000-of-00001.parquet"), &rows, 2);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert_clean(&report, "");
    let runs = runs(&store);
    let got: Vec<RunLine<'_>> = runs.iter().map(line).collect();
    assert_eq!(
        got,
        [
            ("python-attrs__attrs-770", Some("MiniMax-M2.5"), Some(true), Format::OpenSweTraces, 4, false),
            ("altair-viz__altair-3118", Some("Qwen3.5-122B-A10B"), Some(false), Format::OpenSweTraces, 4, false),
            (
                "open-telemetry__opentelemetry-go-contrib-6962",
                Some("MiniMax-M2.5"),
                None,
                Format::OpenSweTraces,
                4,
                false
            ),
        ]
    );
    assert!(runs.iter().all(|r| r.agent.as_deref() == Some("openhands")), "{runs:?}");
    let detail = must(store.run_detail(runs[2].id, None), "detail");
    assert!(detail.step_list[0].action.contains("grep -n 'spanNameFormatter'"), "{:?}", detail.step_list[0].action);
    assert!(edit_kinds(&store, runs[2].id).contains(&EditKind::StrReplace), "{:?}", edit_kinds(&store, runs[2].id));
    let rest = must(store.run_rest(runs[2].id), "run rest");
    let meta: Value = must(serde_json::from_str(rest.metadata.as_deref().unwrap_or("{}")), "metadata");
    assert_eq!(meta["dataset"]["name"], "nvidia/Open-SWE-Traces");
    assert_eq!(
        (meta["dataset"]["language"].as_str(), meta["dataset"]["not_judged"].as_bool()),
        (Some("go"), Some(true))
    );
}

/// SWE-Gym/OpenHands-Sampled-Trajectories: two samples of one instance, each with its own verdict,
/// the model from `run_id`, the submission from `test_result.git_patch` (empty: none).
#[test]
fn swe_gym_samples_of_one_instance_keep_their_own_verdicts_and_patches() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let rows = list(&rows("swegym-rows.json"));
    let p = shard(Kind::SweGym, &dir.path().join("data/train.raw-00000-of-00003.parquet"), &rows, 1);
    let (report, store) = ingest(&dir.path().join("t.db"), &[p]);
    assert_clean(&report, "");
    let runs = runs(&store);
    let got: Vec<RunLine<'_>> = runs.iter().map(line).collect();
    let (id, model, gym) = ("dask__dask-9212", Some("gpt-4o-2024-08-06"), Format::SweGymOpenHands);
    assert_eq!(got, [(id, model, Some(true), gym, 4, true), (id, model, Some(false), gym, 4, false)]);
    let kinds = edit_kinds(&store, runs[0].id);
    assert!(kinds.contains(&EditKind::StrReplace) && kinds.contains(&EditKind::FinalPatch), "{kinds:?}");
    assert!(!edit_kinds(&store, runs[1].id).contains(&EditKind::FinalPatch));
    let detail = must(store.run_detail(runs[0].id, None), "detail");
    assert_eq!(detail.step_list[2].action, "python /workspace/reproduce_error.py");
    let rest = must(store.run_rest(runs[0].id), "run rest");
    let meta: Value = must(serde_json::from_str(rest.metadata.as_deref().unwrap_or("{}")), "metadata");
    assert_eq!(meta["dataset"]["split"], "train.raw");
}

/// Shards written by `bench gen --kind openswe|swegym|tb2` read whole, with no warning; and
/// their rows as JSON lines too.
#[test]
fn generated_open_swe_swe_gym_and_terminal_bench_shards_read_whole() {
    let dir = must(tempfile::tempdir(), "tempdir");
    for kind in ["openswe", "swegym", "tb2"] {
        let out = generated(dir.path(), kind);
        let (report, store) = ingest(&dir.path().join(format!("{kind}.db")), std::slice::from_ref(&out));
        assert_clean(&report, kind);
        let runs = runs(&store);
        assert!(runs.len() >= 100, "{kind}: {} runs", runs.len());
        let want = match kind {
            "openswe" => Format::OpenSweTraces,
            "swegym" => Format::SweGymOpenHands,
            _ => Format::TerminalBenchRows,
        };
        assert!(runs.iter().all(|r| r.format == want && r.steps >= 20), "{kind}");
        // Verdicts: some resolved, some not; Open-SWE-Traces' -1 rows have none.
        assert!(runs.iter().any(|r| r.resolved == Some(true)) && runs.iter().any(|r| r.resolved == Some(false)));
        assert_eq!(runs.iter().any(|r| r.resolved.is_none()), kind == "openswe", "{kind}");
    }
    // The fixtures' rows as a JSON-lines export.
    let mut text = String::new();
    for r in list(&rows("swegym-rows.json")) {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    let p = dir.path().join("train.raw.jsonl");
    must(std::fs::write(&p, text), "write");
    let (report, store) = ingest(&dir.path().join("lines.db"), &[p]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let verdicts: Vec<(Option<bool>, Format)> = runs(&store).iter().map(|r| (r.resolved, r.format)).collect();
    assert_eq!(verdicts, [(Some(true), Format::SweGymOpenHands), (Some(false), Format::SweGymOpenHands)]);
}

/// The dataset's name is the runs' benchmark: `stats --by benchmark` groups them under it (the
/// Hugging Face cache's folder names it), not under what their instance ids look like.
#[test]
fn stats_by_benchmark_groups_a_dataset_s_runs_under_its_name() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let root = dir.path().join("hub/datasets--nebius--SWE-agent-trajectories/snapshots/a8a64e5/data");
    let rows = list(&rows("nebius-rows.json"));
    shard(Kind::Nebius, &root.join("train-00000-of-00001.parquet"), &rows, 2);
    let db = dir.path().join("t.db");
    let (report, store) = ingest(&db, &[dir.path().join("hub")]);
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    assert!(runs(&store).iter().all(|r| r.dataset.as_deref() == Some("nebius/SWE-agent-trajectories")));
    drop(store);
    let out = common::command()
        .arg("--db")
        .arg(&db)
        .args(["stats", "--by", "benchmark", "--json"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .output();
    let out = must(out, "stats");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = must(serde_json::from_slice(&out.stdout), "stats JSON");
    let groups: Vec<&str> =
        v["outcomes"].as_array().into_iter().flatten().filter_map(|r| r["group"].as_str()).collect();
    assert_eq!(groups, ["nebius/SWE-agent-trajectories"], "{v}");
    assert_eq!(v["outcomes"][0]["runs"], 3, "{v}");
}

/// Terminal-Bench 2 trials as rows (the two trials of the Harbor job fixture, flattened): each
/// row is the same run as the trial folder it came from (steps, verdict, tests, model, cost), the
/// task's instruction kept; a row that names no task is named and the others read.
#[test]
fn terminal_bench_rows_read_as_the_trial_folders_they_came_from() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let mut rows = list(&rows("terminal-bench-rows.json"));
    let mut nameless = rows[0].clone();
    nameless["task_name"] = Value::Null;
    nameless["trial_name"] = Value::String("  ".into());
    rows.push(nameless);
    let p = shard(Kind::TerminalBench, &dir.path().join("data/train-00000-of-00001.parquet"), &rows, 2);
    let (report, store) = ingest(&dir.path().join("rows.db"), std::slice::from_ref(&p));
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    let w = warnings(&report);
    let named = format!(
        "{}: row group 1, row 0: column `task_name`: missing, and no `trial_name` to take the task from",
        p.display()
    );
    assert!(w.contains(&named), "{w:?}");
    let job = common::fixtures_dir("layouts").join("harbor/terminal-bench-2.0/2025-11-05__14-22-31");
    let (_, folders) = ingest(&dir.path().join("folders.db"), &[job]);
    let from_rows = runs(&store);
    let from_folders = runs(&folders);
    assert_eq!(from_rows.len(), 2);
    assert!(from_rows.iter().all(|r| r.format == Format::TerminalBenchRows));
    assert_eq!(from_rows.iter().filter(|r| r.dataset.as_deref() == Some("terminal-bench@2.0")).count(), 2);
    for r in &from_rows {
        let f = from_folders.iter().find(|f| f.instance_id == r.instance_id);
        let f = must(f.ok_or("no such trial"), "the trial folder's run");
        let (a, b) = (must(store.run_detail(r.id, None), "row"), must(folders.run_detail(f.id, None), "trial"));
        assert_eq!((r.model.as_deref(), r.resolved, r.steps), (f.model.as_deref(), f.resolved, f.steps), "{r:?}");
        let actions =
            |d: &trajan::store::read::RunDetail| d.step_list.iter().map(|s| s.action.clone()).collect::<Vec<_>>();
        assert_eq!(actions(&a), actions(&b), "{}", r.instance_id);
        let tests = |d: &trajan::store::read::RunDetail| {
            d.outcome.as_ref().map(|o| o.tests.iter().map(|t| (t.name.clone(), t.passed)).collect::<Vec<_>>())
        };
        assert_eq!(tests(&a), tests(&b), "{}", r.instance_id);
        assert_eq!((r.cost, a.usage.tokens_sent), (f.cost, b.usage.tokens_sent), "{}", r.instance_id);
        assert_eq!(a.task.as_ref().map(|t| t.instruction.is_some()), Some(true), "{}", r.instance_id);
    }
    let hello = from_rows.iter().find(|r| r.instance_id == "hello-world").map(|r| r.id);
    let hello = must(store.run_detail(must(hello.ok_or("no hello-world"), "hello-world"), None), "detail");
    assert_eq!(hello.summary.resolved, Some(true));
    assert!(hello.outcome.as_ref().is_some_and(|o| !o.tests.is_empty()), "the CTRF report's tests");
}
