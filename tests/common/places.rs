//! Where the tests read their fixtures from: a copy of `fixtures/` under a deep folder whose path
//! is longer than 120 characters, made once per test process. Paths of fixtures end up in
//! output (sources, evaluations not joined, edits); reading them from a long path on every run
//! proves that no test passes only because the checkout's path is short (a clone in
//! `~/work/reviews/2026/agent-evaluations/trajan` or a random temporary folder must pass too).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The deep folder the copy lives in, below cargo's temporary folder for integration tests.
const DEEP: &str = "a-checkout-whose-path-is-long/reviews/2026/agent-evaluations/team-of-reviewers-with-long-names/\
                    nested-clone-of-the-repository/trajan";

/// Folders of `fixtures/` copied only when a test asks for them (large: the labelled
/// development set is 26 MB).
const ON_DEMAND: &[&str] = &["labelled"];

/// The project's `fixtures/` folder as the tests read it: the copy under a long path (the
/// folders of [`ON_DEMAND`] only once [`fixtures_dir`] names them).
pub fn fixtures() -> &'static Path {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    COPY.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(DEEP);
        remove_stale(&root);
        let dest = root.join(std::process::id().to_string()).join("fixtures");
        let _ = std::fs::remove_dir_all(&dest);
        copy_tree(&original(), &dest, ON_DEMAND);
        let dest = super::must(std::fs::canonicalize(&dest), "canonicalize the fixtures copy");
        assert!(dest.as_os_str().len() > 120, "the fixtures copy must sit under a long path: {}", dest.display());
        dest
    })
}

/// One folder of the fixtures (`fixtures_dir("layouts")`, `fixtures_dir("labelled/runs")`).
pub fn fixtures_dir(rel: &str) -> PathBuf {
    let top = rel.split('/').next().unwrap_or(rel);
    if ON_DEMAND.contains(&top) {
        static COPIED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut copied = COPIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !copied.iter().any(|c| c == top) {
            copy_tree(&original().join(top), &fixtures().join(top), &[]);
            copied.push(top.to_string());
        }
    }
    fixtures().join(rel)
}

fn original() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The real corpus (`fixtures/corpus/`, see its MANIFEST.md).
pub fn corpus() -> PathBuf {
    fixtures_dir("corpus")
}

/// The corpus as an argument for `trajan ingest`: the whole folder, as a user would name it
/// (every file is a supported format or skipped; the ingest exits 0).
pub fn corpus_paths() -> Vec<String> {
    vec![corpus().to_string_lossy().into_owned()]
}

/// Copies of earlier test processes that are no longer running.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Files, folders and symbolic links (dangling ones too: some layouts have them) as they are,
/// but for the entries named in `leave`.
fn copy_tree(from: &Path, to: &Path, leave: &[&str]) {
    super::must(std::fs::create_dir_all(to), "create a fixtures folder");
    for entry in super::must(std::fs::read_dir(from), "read a fixtures folder") {
        let entry = super::must(entry, "read a fixtures entry");
        if entry.file_name().to_str().is_some_and(|n| leave.contains(&n)) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = super::must(entry.file_type(), "a fixture's type");
        if kind.is_symlink() {
            let target = super::must(std::fs::read_link(&src), "read a fixture link");
            super::must(std::os::unix::fs::symlink(target, &dst), "copy a fixture link");
        } else if kind.is_dir() {
            copy_tree(&src, &dst, &[]);
        } else {
            super::must(std::fs::copy(&src, &dst), "copy a fixture");
        }
    }
}
