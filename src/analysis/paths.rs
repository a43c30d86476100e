//! File paths as the repository knows them, whatever root the agent's sandbox used
//! (`/testbed`, `/repo`, `/owner__repo`, `/workspace/name`): what the signals and the run
//! comparison compare.

/// Sandbox roots that hold the repository, longest first where they nest.
pub const ROOTS: &[&str] = &["/testbed/", "/repo/", "/app/", "/src/repo/"];

/// A path as the repository knows it: `/testbed/src/a.py`, `./src/a.py` and `src/a.py` all give
/// `src/a.py`. `working_dir` resolves relative paths first.
pub fn repo_relative(path: &str, working_dir: Option<&str>) -> String {
    strip_known_root(&resolve(path, working_dir))
}

/// `path` (quotes trimmed) joined to `working_dir` when relative, with `.` and `..` resolved.
pub fn resolve(path: &str, working_dir: Option<&str>) -> String {
    let path = path.trim().trim_matches(|c| c == '\'' || c == '"');
    let mut parts: Vec<&str> = Vec::new();
    let base = match working_dir {
        Some(wd) if !path.starts_with('/') && wd.starts_with('/') => wd,
        _ => "",
    };
    for part in base.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let absolute = path.starts_with('/') || !base.is_empty();
    format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"))
}

/// A resolved path without the usual sandbox roots: `/testbed/`, `/repo/`..., SWE-agent 0.x's
/// `/<owner>__<repo>/`, OpenHands' `/workspace/<name>/`.
pub fn strip_known_root(resolved: &str) -> String {
    let Some(inner) = resolved.strip_prefix('/') else { return resolved.to_string() };
    if let Some(rest) = ROOTS.iter().find_map(|r| resolved.strip_prefix(r)) {
        return rest.to_string();
    }
    let parts: Vec<&str> = inner.split('/').collect();
    match parts.as_slice() {
        [first, rest @ ..] if first.contains("__") && !rest.is_empty() => rest.join("/"),
        ["workspace", _, rest @ ..] if !rest.is_empty() => rest.join("/"),
        _ => inner.to_string(),
    }
}
