//! What a benchmark writes, and how it goes away: a scratch folder removed on every exit (a
//! return, an error, a stop signal), and inputs built once and reused that are never left half
//! built.

use anyhow::Result;
use std::path::{Path, PathBuf};
use trajan::interrupt::{self, ForcedExitHook};

/// A benchmark's scratch folder. Removed when dropped (the command returned or failed) and, after
/// [`interrupt::catch`], by the stop-signal watcher when a stop signal ends the process before
/// the benchmark gets back to dropping it.
pub struct Scratch {
    dir: tempfile::TempDir,
    _removed_on_stop: ForcedExitHook,
}

impl Scratch {
    pub fn new() -> Result<Scratch> {
        let dir = tempfile::Builder::new().prefix("trajan-bench-").tempdir()?;
        let path = dir.path().to_path_buf();
        let hook = interrupt::on_forced_exit(move || {
            let _ = std::fs::remove_dir_all(&path);
        });
        Ok(Scratch { dir, _removed_on_stop: hook })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// An input built once and reused by later runs (a benchmark database, a 200 MB file): built
/// under a name of its own beside `path` and renamed into place once whole, so a build that
/// fails or is stopped leaves nothing a later run would take for a whole input.
pub fn cached(path: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if path.exists() {
        return Ok(());
    }
    let partial = partial_of(path);
    let remove = {
        let partial = partial.clone();
        move || {
            for p in with_sqlite_companions(&partial) {
                let _ = std::fs::remove_file(p);
            }
        }
    };
    remove();
    let _hook = interrupt::on_forced_exit(remove.clone());
    match build(&partial) {
        Ok(()) => Ok(std::fs::rename(&partial, path)?),
        Err(e) => {
            remove();
            Err(e)
        }
    }
}

fn partial_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// A file and the journal files SQLite may leave beside it.
fn with_sqlite_companions(path: &Path) -> Vec<PathBuf> {
    let mut all = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        all.push(PathBuf::from(name));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_build_leaves_nothing_and_a_whole_one_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.db");
        let failed = cached(&path, |p| {
            std::fs::write(p, "half")?;
            anyhow::bail!("stopped")
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
        cached(&path, |p| Ok(std::fs::write(p, "whole")?)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "whole");
        cached(&path, |_| anyhow::bail!("built again")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_scratch_folder_goes_when_dropped() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path().to_path_buf();
        std::fs::write(path.join("x"), "x").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }
}
