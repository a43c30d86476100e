//! What a file's name says about its run: the instance id a trajectory's name implies, for the
//! adapters whose format does not carry one.

use std::path::Path;

/// The instance id a file name implies: `astropy__astropy-13033.traj.json` -> `astropy__astropy-13033`.
pub fn instance_from_file_name(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".json", ".jsonl", ".traj", ".txt", ".log", ".pred"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    stem = stem.strip_suffix(".traj").unwrap_or(stem);
    stem.to_string()
}
