//! Compressed inputs read in place: each kind of archive gives the runs of the folder it holds,
//! members are named `ARCHIVE!/member`, an unchanged archive adds nothing when ingested again,
//! and a member that expands past its limit is refused without being held in memory.

use std::io::Write;
use std::path::{Path, PathBuf};
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::store::Store;
use trajan::store::read::RunFilter;

mod common;

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
    let x = trajan::ingest::archive::extract(&path, &path, limits, &mut problems).unwrap_or_else(|e| panic!("{e}"));
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
    let _x = trajan::ingest::archive::extract(&path, &path, limits, &mut problems).unwrap_or_else(|e| panic!("{e}"));
    assert!(problems.iter().any(|p| p.to_string().contains("leaves the archive")), "{problems:?}");
    assert!(!dir.path().join("outside.json").exists());
}
