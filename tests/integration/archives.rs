//! Compressed inputs read in place: each kind of archive gives the runs of the folder it holds,
//! members are named `ARCHIVE!/member`, an unchanged archive adds nothing when ingested again,
//! and a member that expands past its limit is refused without being held in memory.

use std::io::Write;
use std::path::{Path, PathBuf};
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::store::Store;
use trajan::store::read::RunFilter;

use crate::common;

fn fixtures() -> PathBuf {
    common::fixtures().to_path_buf()
}

fn ingest(store: &mut Store, path: &Path) -> pipeline::Report {
    pipeline::ingest(store, &[path.to_path_buf()], &Options::default(), &Silent)
}

/// A tar of the demo folder and the Harbor layout, as the `tar` crate writes it.
fn tar_bytes() -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all("results/demo", fixtures().join("demo")).unwrap_or_else(|e| panic!("{e}"));
    b.append_dir_all("results/harbor", fixtures().join("layouts/harbor")).unwrap_or_else(|e| panic!("{e}"));
    b.into_inner().unwrap_or_else(|e| panic!("{e}"))
}

fn runs_of(store: &Store) -> Vec<(String, Option<bool>, String)> {
    let mut v: Vec<_> = store
        .list_runs(RunFilter::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|r| (r.instance_id, r.resolved, r.source))
        .collect();
    v.sort();
    v
}

#[test]
fn every_kind_of_archive_reads_like_its_folder() {
    let mut plain = Store::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let folder = dir.path().join("plain/results");
    std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
    tar::Archive::new(&tar_bytes()[..]).unpack(dir.path().join("plain")).unwrap_or_else(|e| panic!("{e}"));
    ingest(&mut plain, &folder);
    let want: Vec<_> = runs_of(&plain).into_iter().map(|(i, r, _)| (i, r)).collect();
    assert!(want.len() > 10, "{want:?}");

    let tar = tar_bytes();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap_or_else(|e| panic!("{e}"));
    let tgz = gz.finish().unwrap_or_else(|e| panic!("{e}"));
    let mut zip_bytes = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut zip_bytes);
        let mut a = tar::Archive::new(&tar[..]);
        for entry in a.entries().unwrap_or_else(|e| panic!("{e}")) {
            let mut entry = entry.unwrap_or_else(|e| panic!("{e}"));
            if entry.header().entry_type() != tar::EntryType::Regular {
                continue;
            }
            let name = entry.path().unwrap_or_else(|e| panic!("{e}")).to_string_lossy().into_owned();
            let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            z.start_file(name, opts).unwrap_or_else(|e| panic!("{e}"));
            std::io::copy(&mut entry, &mut z).unwrap_or_else(|e| panic!("{e}"));
        }
        z.finish().unwrap_or_else(|e| panic!("{e}"));
    }
    for (name, bytes) in
        [("results.tar", tar.clone()), ("results.tar.gz", tgz), ("results.zip", zip_bytes.into_inner())]
    {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        let mut store = Store::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
        let report = ingest(&mut store, &path);
        assert_eq!(report.failures().count(), 0, "{name}: {:?}", report.failures().collect::<Vec<_>>());
        let got = runs_of(&store);
        assert_eq!(got.iter().map(|(i, r, _)| (i.clone(), *r)).collect::<Vec<_>>(), want, "{name}");
        let prefix = format!("{}!/results/", path.display());
        assert!(got.iter().all(|(_, _, s)| s.starts_with(&prefix)), "{name}: {got:?}");
        // The warning about the trial without a trajectory names the member.
        assert!(
            report.warnings().any(|w| w.contains(&format!("{name}!/results/harbor/")) && w.contains("astropy")),
            "{name}"
        );
        // Again: unchanged, nothing added.
        let again = ingest(&mut store, &path);
        assert_eq!((again.ingested(), again.unchanged()), (0, report.ingested()), "{name}");
        assert_eq!(runs_of(&store).len(), got.len());
    }
}

#[test]
fn gz_and_zst_files_are_read_as_the_file_inside() {
    let traj = fixtures().join("corpus/swe-agent-1.1/pylint-dev__pylint-4604.traj");
    let bytes = std::fs::read(&traj).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let gz_path = dir.path().join("pylint-dev__pylint-4604.traj.gz");
    std::fs::write(&gz_path, gz.finish().unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"));
    let zst = zstd::bulk::compress(&bytes, 1).unwrap_or_else(|e| panic!("{e}"));
    let zst_path = dir.path().join("pylint-dev__pylint-4604.traj.zst");
    std::fs::write(&zst_path, zst).unwrap_or_else(|e| panic!("{e}"));
    for path in [gz_path, zst_path] {
        let mut store = Store::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
        let report = ingest(&mut store, &path);
        assert_eq!(report.failures().count(), 0, "{:?}", report.failures().collect::<Vec<_>>());
        let runs = runs_of(&store);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].0, "pylint-dev__pylint-4604");
        assert_eq!(runs[0].2, format!("{}!/pylint-dev__pylint-4604.traj", path.display()));
    }
}

#[test]
fn a_member_that_expands_past_its_limit_is_refused_by_name() {
    // 64 MiB of zeros compress to about 64 KiB; with a 1 MiB member limit it is refused.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap_or_else(|e| panic!("{e}"));
    }
    let path = dir.path().join("bomb.json.gz");
    let packed = gz.finish().unwrap_or_else(|e| panic!("{e}"));
    assert!(packed.len() < 1 << 20);
    std::fs::write(&path, packed).unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    let limits = trajan::ingest::archive::Limits { member: 1 << 20, total: 4 << 20 };
    let x = trajan::ingest::archive::extract(&path, &path, limits, &Default::default(), &mut problems)
        .unwrap_or_else(|e| panic!("{e}"));
    let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("bomb.json.gz!/bomb.json") && messages[0].contains("more than 1.0 MiB"),
        "{messages:?}"
    );
    // Nothing of it is left on disk.
    assert_eq!(std::fs::read_dir(x.dir()).map(|d| d.count()).unwrap_or(1), 0);
}

#[test]
fn member_names_that_leave_the_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("evil.zip");
    {
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut z = zip::ZipWriter::new(file);
        let opts = zip::write::SimpleFileOptions::default();
        z.start_file("../outside.json", opts).unwrap_or_else(|e| panic!("{e}"));
        z.write_all(b"{}").unwrap_or_else(|e| panic!("{e}"));
        z.finish().unwrap_or_else(|e| panic!("{e}"));
    }
    let mut problems = Vec::new();
    let limits = trajan::ingest::archive::Limits { member: 1 << 20, total: 1 << 20 };
    let _x = trajan::ingest::archive::extract(&path, &path, limits, &Default::default(), &mut problems)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(problems.iter().any(|p| p.to_string().contains("leaves the archive")), "{problems:?}");
    assert!(!dir.path().join("outside.json").exists());
}

/// A zip holding `members` (name, bytes), stored deflated.
fn zip_of(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut bytes);
        let opts = zip::write::SimpleFileOptions::default();
        for (name, data) in members {
            z.start_file(*name, opts).unwrap_or_else(|e| panic!("{e}"));
            z.write_all(data).unwrap_or_else(|e| panic!("{e}"));
        }
        z.finish().unwrap_or_else(|e| panic!("{e}"));
    }
    bytes.into_inner()
}

/// A small SWE-agent trajectory.
fn traj(observation: &str) -> Vec<u8> {
    serde_json::json!({"trajectory": [{"action": "ls", "observation": observation, "thought": "t", "response": "t",
        "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/r\"}"}], "history": [], "info": {"exit_status": "submitted"}})
    .to_string()
    .into_bytes()
}

/// Issue 24: a zip of four zips, each a bomb within the total, put four totals on disk (each
/// nested archive had a budget of its own). One budget holds for an archive and all inside it.
#[test]
fn archives_inside_an_archive_share_its_budget() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let inner = zip_of(&[("blank.json", vec![b' '; 1 << 20])]);
    let names: Vec<String> = (0..4).map(|i| format!("bomb{i}.zip")).collect();
    let outer: Vec<(&str, Vec<u8>)> = names.iter().map(|n| (n.as_str(), inner.clone())).collect();
    let path = dir.path().join("bombs.zip");
    std::fs::write(&path, zip_of(&outer)).unwrap_or_else(|e| panic!("{e}"));
    let limits = trajan::ingest::archive::Limits { member: 2 << 20, total: 5 << 19 };
    let found = trajan::ingest::source::discover_within(std::slice::from_ref(&path), limits);
    let messages: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    assert!(
        messages.iter().any(|m| m.contains("!/bomb") && m.contains("the archive unpacks to more than 2.5 MiB")),
        "{messages:?}"
    );
    // The outer zip's members (about 4 KiB each) and two of the 1 MiB members fit; no more.
    let unpacked = found.units.iter().filter(|u| u.path.to_string_lossy().ends_with("blank.json")).count();
    assert_eq!(unpacked, 2, "{:?}", found.units.iter().map(|u| &u.path).collect::<Vec<_>>());
}

/// Issue 24: one member that cannot be made where its name says (a name part over 255 bytes, a
/// file where a folder is) is skipped with a message naming it; the others are unpacked.
#[test]
fn a_member_whose_name_cannot_be_made_is_skipped_and_the_rest_unpacked() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let long = format!("{}.traj", "x".repeat(300));
    let bytes = zip_of(&[
        ("clash", b"a file".to_vec()),
        ("clash/inner.traj", traj("under a file")),
        (long.as_str(), traj("a long name")),
        ("good__zip-1.traj", traj("kept")),
    ]);
    let path = dir.path().join("names.zip");
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    let report = ingest(&mut store, &path);
    let failures: Vec<String> = report.failures().map(ToString::to_string).collect();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures.iter().any(|f| f.contains("names.zip!/clash/inner.traj: cannot unpack this member here")),
        "{failures:?}"
    );
    assert!(failures.iter().any(|f| f.contains(&long) && f.contains("cannot unpack this member here")), "{failures:?}");
    let runs = runs_of(&store);
    assert_eq!(runs.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["good__zip-1"], "{runs:?}");
}

/// Issue 24: the unpack folder and what is in it are the user's alone.
#[test]
fn the_unpack_folder_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("runs.zip");
    std::fs::write(&path, zip_of(&[("sub/a__b-1.traj", traj("x"))])).unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    let limits = trajan::ingest::archive::Limits { member: 1 << 20, total: 1 << 20 };
    let x = trajan::ingest::archive::extract(&path, &path, limits, &Default::default(), &mut problems)
        .unwrap_or_else(|e| panic!("{e}"));
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    assert_eq!(mode(x.dir()), 0o700);
    assert_eq!(mode(&x.dir().join("sub")), 0o700);
    assert_eq!(mode(&x.dir().join("sub/a__b-1.traj")), 0o600);
    let name = x.dir().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    assert!(name.starts_with(&format!("trajan-archive-{}-", std::process::id())), "{name}");
}

/// `trajan` with `TMPDIR` set to `tmp`.
fn trajan_in(tmp: &Path, db: &Path, args: &[&std::ffi::OsStr]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_trajan"));
    cmd.env("TMPDIR", tmp).env_remove("TRAJAN_DB").arg("--db").arg(db).args(args);
    cmd
}

fn unpack_folders(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("trajan-archive-"))
        .collect();
    names.sort();
    names
}

/// Issue 24: a process killed outright (`kill -9`) leaves its unpack folder; the next trajan to
/// unpack an archive removes it (a folder of a process still running stays).
#[test]
fn unpack_folders_of_processes_gone_are_removed_by_the_next_unpacking() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("{e}"));
    let mut gone = std::process::Command::new("true").spawn().unwrap_or_else(|e| panic!("{e}"));
    let gone_pid = gone.id();
    gone.wait().unwrap_or_else(|e| panic!("{e}"));
    let stale = tmp.join(format!("trajan-archive-{gone_pid}-AbCdEf"));
    std::fs::create_dir_all(stale.join("results")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(stale.join("results/big.traj"), b"left by a killed process").unwrap_or_else(|e| panic!("{e}"));
    let running = format!("trajan-archive-{}-GhIjKl", std::process::id());
    std::fs::create_dir_all(tmp.join(&running)).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("runs.zip");
    std::fs::write(&path, zip_of(&[("a__b-1.traj", traj("x"))])).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("t.db");
    let out = trajan_in(&tmp, &db, &["ingest".as_ref(), path.as_os_str()]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(unpack_folders(&tmp), [running]);
}

/// Issue 24: SIGTERM or SIGHUP while an archive is being ingested removes its unpack folder (the
/// docs said so; 5 GB were left).
#[test]
fn a_stop_signal_during_an_archive_ingest_removes_its_folder() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Enough runs that the ingest is still going when the folder is there.
    let members: Vec<(String, Vec<u8>)> =
        (0..400).map(|i| (format!("r{i:03}__x-{i}.traj"), traj(&"word ".repeat(20_000)))).collect();
    let refs: Vec<(&str, Vec<u8>)> = members.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let path = dir.path().join("runs.zip");
    std::fs::write(&path, zip_of(&refs)).unwrap_or_else(|e| panic!("{e}"));
    for (signal, name) in [(rustix::process::Signal::TERM, "TERM"), (rustix::process::Signal::HUP, "HUP")] {
        let tmp = dir.path().join(format!("tmp-{name}"));
        std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join(format!("{name}.db"));
        let mut child = trajan_in(&tmp, &db, &["ingest".as_ref(), path.as_os_str()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let started = std::time::Instant::now();
        while unpack_folders(&tmp).is_empty() {
            assert!(child.try_wait().ok().flatten().is_none(), "{name}: ended before its folder was seen");
            assert!(started.elapsed() < std::time::Duration::from_secs(60), "{name}: no folder");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, signal).unwrap_or_else(|e| panic!("{e}"));
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status.code(), Some(128 + signal.as_raw()), "{name}: {status:?}");
        assert!(unpack_folders(&tmp).is_empty(), "{name}: {:?} left", unpack_folders(&tmp));
    }
}
