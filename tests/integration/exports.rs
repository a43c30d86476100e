//! `export runs|steps|edits|labels --format parquet -o DIR`: one file per table, read back with
//! the parquet crate: the row counts of the database, typed columns, and the CSV export's names.

use parquet::basic::Type as Physical;
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

fn trajan(db: &Path, home: &Path, args: &[&str]) -> Output {
    let out = run(db, home, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn run(db: &Path, home: &Path, args: &[&str]) -> Output {
    common::command()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn fixtures() -> PathBuf {
    common::fixtures().to_path_buf()
}

#[test]
fn parquet_tables_read_back_with_their_rows_and_types() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let demo = fixtures().join("demo").to_string_lossy().into_owned();
    let harbor = fixtures().join("layouts/harbor").to_string_lossy().into_owned();
    run(&db, dir.path(), &["ingest", &demo, &harbor]);
    trajan(&db, dir.path(), &["classify"]);
    let runs: serde_json::Value =
        serde_json::from_slice(&trajan(&db, dir.path(), &["runs", "--json"]).stdout).unwrap_or_else(|e| panic!("{e}"));
    let runs = runs.as_array().cloned().unwrap_or_default();
    let steps: i64 = runs.iter().filter_map(|r| r["steps"].as_i64()).sum();
    // Every edit of every run, the final patch's too.
    let edits: i64 = runs
        .iter()
        .map(|r| {
            let id = r["id"].to_string();
            let show: serde_json::Value =
                serde_json::from_slice(&trajan(&db, dir.path(), &["show", &id, "--json"]).stdout)
                    .unwrap_or_else(|e| panic!("{e}"));
            show["edit_list"].as_array().map_or(0, |l| l.len() as i64)
        })
        .sum();
    let out = dir.path().join("parquet");
    let out_s = out.to_string_lossy().into_owned();
    for table in ["runs", "steps", "edits", "labels"] {
        trajan(&db, dir.path(), &["export", table, "--format", "parquet", "-o", &out_s]);
    }
    let labels_csv = trajan(&db, dir.path(), &["export", "labels", "--format", "csv"]);
    let label_rows = String::from_utf8_lossy(&labels_csv.stdout).lines().count() as i64 - 1;
    assert!(label_rows > 0, "classify made labels");

    let read = |table: &str| {
        let file = std::fs::File::open(out.join(format!("{table}.parquet"))).unwrap_or_else(|e| panic!("{table}: {e}"));
        SerializedFileReader::new(file).unwrap_or_else(|e| panic!("{table}: {e}"))
    };
    for (table, rows) in [("runs", runs.len() as i64), ("steps", steps), ("edits", edits), ("labels", label_rows)] {
        let reader = read(table);
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), rows, "{table}");
        // Every row is there, row by row.
        let iter = reader.get_row_iter(None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(iter.count() as i64, rows, "{table}");
        // The CSV export's column names, in its order.
        let names: Vec<String> = meta.schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
        if table != "labels" {
            let csv = trajan(&db, dir.path(), &["export", table, "--format", "csv"]);
            let header = String::from_utf8_lossy(&csv.stdout).lines().next().unwrap_or_default().to_string();
            assert_eq!(header.split(',').map(str::to_string).collect::<Vec<_>>(), names, "{table}");
        } else {
            let header = String::from_utf8_lossy(&labels_csv.stdout).lines().next().unwrap_or_default().to_string();
            assert_eq!(header.split(',').map(str::to_string).collect::<Vec<_>>(), names, "{table}");
        }
    }
    // Typed columns.
    let types = |table: &str| -> Vec<(String, Physical)> {
        let reader = read(table);
        reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.physical_type()))
            .collect()
    };
    let runs_types = types("runs");
    for (name, want) in [
        ("run_id", Physical::INT64),
        ("resolved", Physical::BOOLEAN),
        ("cost", Physical::DOUBLE),
        ("model", Physical::BYTE_ARRAY),
    ] {
        assert!(runs_types.contains(&(name.to_string(), want)), "{name}: {runs_types:?}");
    }
    let label_types = types("labels");
    assert!(label_types.contains(&("unclassified".to_string(), Physical::BOOLEAN)), "{label_types:?}");
    // Onset and blame: the step a number, the confidence a float, the blame text; and a run's
    // blame as its statistics read it (the heuristic's here: the agent's).
    for (name, want) in
        [("onset_step", Physical::INT64), ("onset_confidence", Physical::DOUBLE), ("blame", Physical::BYTE_ARRAY)]
    {
        assert!(label_types.contains(&(name.to_string(), want)), "{name}: {label_types:?}");
    }
    assert!(runs_types.contains(&("blame".to_string(), Physical::BYTE_ARRAY)), "{runs_types:?}");
    let texts = |table: &str, column: &str| -> Vec<String> {
        let reader = read(table);
        let rows = reader.get_row_iter(None).unwrap_or_else(|e| panic!("{e}"));
        rows.filter_map(|row| {
            let row = row.unwrap_or_else(|e| panic!("{e}"));
            row.get_column_iter().find(|(n, _)| n.as_str() == column).and_then(|(_, f)| match f {
                parquet::record::Field::Str(s) => Some(s.clone()),
                _ => None,
            })
        })
        .collect()
    };
    let label_blames = texts("labels", "blame");
    assert_eq!(label_blames.len() as i64, label_rows, "every heuristic label judges blame");
    assert!(label_blames.iter().all(|b| b == "agent"), "{label_blames:?}");
    assert_eq!(texts("runs", "blame"), label_blames, "each labelled run's blame is its label's");
    assert!(types("steps").contains(&("test_run".to_string(), Physical::BOOLEAN)));
    // Values survive: the resolved flags of the runs, in order.
    let reader = read("runs");
    let resolved: Vec<Option<bool>> = reader
        .get_row_iter(None)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|row| {
            let row = row.unwrap_or_else(|e| panic!("{e}"));
            row.get_column_iter().find(|(n, _)| n.as_str() == "resolved").and_then(|(_, f)| match f {
                parquet::record::Field::Bool(b) => Some(*b),
                _ => None,
            })
        })
        .collect();
    let want: Vec<Option<bool>> = {
        let mut by_id: Vec<(i64, Option<bool>)> =
            runs.iter().map(|r| (r["id"].as_i64().unwrap_or_default(), r["resolved"].as_bool())).collect();
        by_id.sort();
        by_id.into_iter().map(|(_, r)| r).collect()
    };
    assert_eq!(resolved, want);
}

#[test]
fn parquet_needs_a_folder_and_atif_a_run() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let demo = fixtures().join("demo").to_string_lossy().into_owned();
    run(&db, dir.path(), &["ingest", &demo]);
    let out = run(&db, dir.path(), &["export", "runs", "--format", "parquet"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o DIR"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&db, dir.path(), &["export", "run", "--format", "atif"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("which run"));
}

/// `trajan ARGS` run by `sh` under `umask MASK`.
fn under_umask(mask: &str, db: &Path, home: &Path, args: &[&str]) -> Output {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_trajan"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("TRAJAN_DB")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Issue 24: exports were written 0644 under umask 077 while the database is 0600. A new export
/// file gets what the umask gives any new file; it is never wider.
#[test]
fn new_export_files_honour_the_umask() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let demo = fixtures().join("demo").to_string_lossy().into_owned();
    under_umask("077", &db, dir.path(), &["ingest", &demo]);
    assert_eq!(mode(&db), 0o600);
    for (mask, want) in [("077", 0o600), ("027", 0o640), ("022", 0o644)] {
        let csv = dir.path().join(format!("labels-{mask}.csv"));
        let parquet = dir.path().join(format!("tables-{mask}"));
        under_umask(mask, &db, dir.path(), &["export", "runs", "-o", &csv.to_string_lossy()]);
        under_umask(
            mask,
            &db,
            dir.path(),
            &["export", "runs", "--format", "parquet", "-o", &parquet.to_string_lossy()],
        );
        assert_eq!(mode(&csv), want, "umask {mask}: csv");
        assert_eq!(mode(&parquet.join("runs.parquet")), want, "umask {mask}: parquet");
    }
}

/// Issue 24: an export stopped midway (Ctrl-C, a closed terminal) left hidden `.parquet.tmp`
/// files. The file being written goes with the process.
#[test]
fn an_interrupted_export_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let generated = dir.path().join("gen");
    trajan(&db, dir.path(), &["bench", "gen", &generated.to_string_lossy(), "--size", "8M", "--kind", "mini"]);
    trajan(&db, dir.path(), &["ingest", "--no-index", &generated.to_string_lossy()]);
    let out = dir.path().join("tables");
    let hidden = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (signal, name) in [(rustix::process::Signal::INT, "INT"), (rustix::process::Signal::TERM, "TERM")] {
        let mut child = common::command()
            .arg("--db")
            .arg(&db)
            .args(["export", "steps", "--format", "parquet", "-o", &out.to_string_lossy()])
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let started = std::time::Instant::now();
        while hidden(&out).is_empty() {
            assert!(child.try_wait().ok().flatten().is_none(), "{name}: the export ended before it was seen");
            assert!(started.elapsed() < std::time::Duration::from_secs(60), "{name}: no temporary file");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal)
            .unwrap_or_else(|e| panic!("{e}"));
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status.code(), Some(128 + signal.as_raw()), "{name}: {status:?}");
        assert!(hidden(&out).is_empty(), "{name}: {:?} left", hidden(&out));
    }
}
