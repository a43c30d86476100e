//! `ingest --format` on Parquet shards: a dataset's format reads the shard as that dataset's
//! whatever its columns tell (the columns it lacks named by each row), another format is an
//! error; the same for a shard on disk (streamed a row group at a time) and one read whole (an
//! archive's member).

use super::{failures, ingest, list, rows, runs, warnings};
use crate::common::{self, must};
use serde_json::Value;
use std::path::{Path, PathBuf};
use trajan::ingest::dataset::{Kind, parquet, shred};
use trajan::ingest::pipeline::{self, Options, Report, Silent, UnitResult};
use trajan::ingest::{Outcome, parse_file};
use trajan::model::Format;
use trajan::store::Store;

/// `schema` with `rows` (JSON), written at `path`.
fn write(path: &Path, schema: &str, rows: &[Value]) -> PathBuf {
    must(shred::write(path, must(parquet::schema_text(schema), "schema"), rows, 2), "write shard");
    path.to_path_buf()
}

fn ingest_as(db: &Path, path: &Path, format: Format) -> Report {
    let mut store = must(Store::open(db), "open store");
    let opts = Options { forced: Some(format), ..Options::default() };
    pipeline::ingest(&mut store, &[path.to_path_buf()], &opts, &Silent)
}

/// A shard of R2E-Gym's rows with one more column: not told as R2E-Gym's (its columns are not
/// `messages` alone) and skipped, its columns named; `--format r2e-gym-sft` reads it.
#[test]
fn a_named_dataset_format_reads_a_shard_its_columns_do_not_tell() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let schema = Kind::R2eGym.schema().replacen('{', "{ optional binary id (STRING);", 1);
    let mut rows = list(&rows("r2egym-rows.json"));
    for (i, r) in rows.iter_mut().enumerate() {
        r["id"] = Value::String(format!("row-{i}"));
    }
    let p = write(&dir.path().join("extra.parquet"), &schema, &rows);
    let (report, _) = ingest(&dir.path().join("plain.db"), std::slice::from_ref(&p));
    match &report.results[..] {
        [UnitResult::Skipped { skip, .. }] => {
            assert!(skip.reason.contains("columns: id, messages"), "{}", skip.reason)
        }
        other => panic!("{other:?}"),
    }
    let db = dir.path().join("forced.db");
    let out = common::command()
        .arg("--db")
        .arg(&db)
        .args(["ingest", "--format", "r2e-gym-sft"])
        .arg(&p)
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .output();
    let out = must(out, "ingest --format");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = must(Store::open(&db), "open");
    let got: Vec<(Format, i64)> = runs(&store).iter().map(|r| (r.format, r.steps)).collect();
    assert_eq!(got, [(Format::R2eGymSft, 4); 3]);
    // Read whole, as an archive's member is.
    let bytes = must(std::fs::read(&p), "read");
    match must(parse_file(&p, &bytes, Some(Format::R2eGymSft)), "parse") {
        Outcome::Parsed { format, parsed } => assert_eq!((format, parsed.runs.len()), (Format::R2eGymSft, 3)),
        Outcome::Skipped(s) => panic!("skipped: {s:?}"),
    }
}

/// nebius' rows with `instance_id` renamed: read as nebius' (`--format nebius-swe-agent`), each
/// row lacks the column, so the shard, no row read, fails naming the first row and the column.
#[test]
fn a_named_dataset_format_names_the_columns_each_row_lacks() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let schema = Kind::Nebius.schema().replace("binary instance_id (STRING)", "binary task (STRING)");
    let mut rows = list(&rows("nebius-rows.json"));
    for r in &mut rows {
        if let Some(o) = r.as_object_mut()
            && let Some(id) = o.remove("instance_id")
        {
            o.insert("task".into(), id);
        }
    }
    let p = write(&dir.path().join("renamed.parquet"), &schema, &rows);
    let report = ingest_as(&dir.path().join("t.db"), &p, Format::NebiusSweAgent);
    let f = failures(&report);
    let named = format!(
        "nebius/SWE-agent-trajectories: no row could be read ({}: row group 0, row 0: column `instance_id`: missing (null))",
        p.display()
    );
    assert!(f.len() == 1 && f[0].contains(&named), "{f:?}");
    assert!(warnings(&report).is_empty(), "{:?}", warnings(&report));
}

/// A format that is no dataset's names no Parquet: the shard fails saying which formats are
/// Parquet, on disk and read whole, and nothing is written.
#[test]
fn a_format_of_no_dataset_on_a_parquet_shard_is_an_error() {
    let dir = must(tempfile::tempdir(), "tempdir");
    let p = super::shard(Kind::Nebius, &dir.path().join("train.parquet"), &list(&rows("nebius-rows.json")), 2);
    let db = dir.path().join("t.db");
    let report = ingest_as(&db, &p, Format::SweAgent);
    let f = failures(&report);
    let says = "a Parquet file, read as swe-agent (--format): only a dataset's shards are Parquet (nebius-swe-agent, ";
    assert!(f.len() == 1 && f[0].contains(says) && f[0].contains("r2e-gym-sft)"), "{f:?}");
    assert!(runs(&must(Store::open(&db), "open")).is_empty());
    let bytes = must(std::fs::read(&p), "read");
    match parse_file(&p, &bytes, Some(Format::SweAgent)) {
        Err(e) => assert!(e.to_string().contains(says), "{e}"),
        Ok(_) => panic!("read as swe-agent"),
    }
}
