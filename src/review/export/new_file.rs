//! A file the TUI writes for the reviewer (`e`: the chart, `R`: a report) in the folder it was
//! started in: always a new name, `STEM.EXT`, `STEM-2.EXT`... up to [`NAMES`] names. The file is
//! written whole beside it first, then given the first name nothing holds yet, atomically and only
//! if nothing holds it (`renameat2` with `RENAME_NOREPLACE`, or a hard link): a file, a link (even
//! to nothing) or anything else already there keeps its name and content, and a link is never
//! followed. When every name is taken nothing is written.

use super::file::{Staged, WhyNot, WriteError, why_not};
use std::path::{Path, PathBuf};

/// The names tried: `STEM.EXT`, then `STEM-2.EXT` to `STEM-1000.EXT`.
pub const NAMES: usize = 1000;

/// Write `bytes` to a new file `STEM[-N].EXT` in `dir`: the path written.
pub fn write_new(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> Result<PathBuf, WriteError> {
    let first = dir.join(format!("{stem}.{ext}"));
    let fail = |path: &Path, why| WriteError { path: path.to_path_buf(), why };
    let mut staged = Staged::new_in(dir, ".tmp", "").map_err(|e| fail(&first, why_not(&e, dir)))?;
    std::io::Write::write_all(&mut staged.file, bytes).map_err(|e| fail(&first, why_not(&e, dir)))?;
    for n in 1..=NAMES {
        let path = if n == 1 { first.clone() } else { dir.join(format!("{stem}-{n}.{ext}")) };
        match staged.persist_new(&path) {
            Ok(()) => return Ok(path),
            Err((e, back)) if e.kind() == std::io::ErrorKind::AlreadyExists => staged = back,
            // The temporary file goes with `back`.
            Err((e, _)) => return Err(fail(&path, why_not(&e, dir))),
        }
    }
    Err(fail(&first, WhyNot::NoFreeName { last: format!("{stem}-{NAMES}.{ext}") }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[cfg(unix)]
    #[test]
    fn names_taken_and_links_are_never_written_through_or_reused() {
        let dir = ok(tempfile::tempdir());
        let outside = ok(tempfile::tempdir());
        let victim = outside.path().join("victim");
        ok(std::fs::write(&victim, "keep me"));
        // The first name a link to a file elsewhere, the second a link to nothing.
        ok(std::os::unix::fs::symlink(&victim, dir.path().join("c.svg")));
        ok(std::os::unix::fs::symlink(outside.path().join("nothing"), dir.path().join("c-2.svg")));
        let wrote = ok(write_new(dir.path(), "c", "svg", b"<svg/>"));
        assert_eq!(wrote, dir.path().join("c-3.svg"));
        assert_eq!(ok(std::fs::read_to_string(&victim)), "keep me");
        assert!(!outside.path().join("nothing").exists(), "the dangling link's target was not made");
        // Every name taken, the last one a link: nothing is written anywhere.
        for n in 4..=NAMES {
            ok(std::fs::write(dir.path().join(format!("c-{n}.svg")), "old"));
        }
        let last = dir.path().join(format!("c-{NAMES}.svg"));
        ok(std::fs::remove_file(&last));
        ok(std::os::unix::fs::symlink(&victim, &last));
        let err = write_new(dir.path(), "c", "svg", b"new").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("c-1000.svg") && err.contains("taken"), "{err}");
        assert_eq!(ok(std::fs::read_to_string(&victim)), "keep me");
        let names: Vec<String> = ok(std::fs::read_dir(dir.path()))
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into())
            .collect();
        assert_eq!(
            names.len(),
            NAMES,
            "no temporary file left: {:?}",
            names.iter().filter(|n| n.starts_with('.')).collect::<Vec<_>>()
        );
    }
}
