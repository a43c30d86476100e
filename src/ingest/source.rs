//! Finding the units to ingest under the paths a user names, and reading them.
//!
//! A unit is usually one file. Some layouts are one unit made of several files: a SWE-bench
//! harness instance folder (`report.json`, `run_instance.log`, `test_output.txt`, `patch.diff`;
//! a folder with only `patch.diff` and `test_output.txt` is one too), an OpenHands `events/`
//! folder (one event per `<id>.json`), a Harbor trial, and the agent layouts of `layout` (an
//! OpenHands V1 conversation, a Terminal-Bench 1 trial). A harness folder's `eval.sh` and its
//! symlinks (`image_build_dir`, dangling once the folder is copied) belong to it and are not read.
//!
//! No file met in a walk is passed over without a word: a file not read (a hidden file, a
//! harness's `eval.sh`, a cache of events read elsewhere, a trial's working material) is listed
//! in `Discovery::passed` with what it is, and the ingest reports it as skipped.

use super::layout;
use super::skip::Skip;
use crate::error::{self, IngestError, Location};
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "kebab-case")]
pub enum UnitKind {
    File,
    HarnessDir,
    EventDir,
    /// A Harbor trial folder: `result.json`, `agent/trajectory.json`, `verifier/` (`ingest::harbor`).
    HarborTrial,
    /// An OpenHands V1 conversation: `event-NNNNN-<uuid>.json` files and `base_state.json`.
    Conversation,
    /// A Terminal-Bench 1 trial folder: `results.json`, the `agent.cast` recording, and the run's
    /// `run_metadata.json` (`ingest::terminal_bench`).
    TerminalBenchTrial,
    /// An Agentless stage folder: `args.json` (the model) and the stage's outputs (`ingest::agentless`).
    AgentlessStage,
}

impl UnitKind {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone)]
pub struct Unit {
    /// The file, or the folder for folder units. Absolute.
    pub path: PathBuf,
    pub kind: UnitKind,
    /// The files read for a folder unit, in order; empty for a file unit.
    pub members: Vec<PathBuf>,
    /// For a unit found inside an archive: the unpacked archive. Its paths are then shown
    /// paths (`ARCHIVE!/member`), read from the unpacked copy (`Unit::real`).
    pub archive: Option<std::sync::Arc<super::archive::Extracted>>,
}

impl Unit {
    /// Where one of this unit's paths is read from: itself, or its unpacked copy.
    pub fn real(&self, path: &Path) -> PathBuf {
        self.archive.as_ref().and_then(|a| a.real(path)).unwrap_or_else(|| path.to_path_buf())
    }
}

/// A unit's bytes and content hash.
pub struct Loaded {
    pub unit: Unit,
    pub size: u64,
    pub hash: [u8; 32],
    /// For a file unit, one entry (the file); for a folder, its members.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

pub const HARNESS_FILES: [&str; 4] = ["report.json", "run_instance.log", "test_output.txt", "patch.diff"];

#[derive(Default)]
pub struct Discovery {
    pub units: Vec<Unit>,
    pub errors: Vec<IngestError>,
    /// Files (and hidden folders) met in the walk and not read, with what they are.
    pub passed: Vec<(PathBuf, Skip)>,
    /// While walking an unpacked archive: it, how deep in archives it is, and what the named
    /// archive it came from has unpacked so far (one budget for it and all inside it).
    inside: Option<(std::sync::Arc<super::archive::Extracted>, usize, std::sync::Arc<super::archive::Spent>)>,
    /// How much an archive may unpack.
    limits: super::archive::Limits,
}

/// Walk the given files and folders (recursively). Errors (a missing path, an unreadable
/// folder) are collected; the walk goes on.
pub fn discover(paths: &[PathBuf]) -> Discovery {
    discover_within(paths, super::archive::Limits::default())
}

/// [`discover`], archives unpacking at most `limits` (tests: small ones).
pub fn discover_within(paths: &[PathBuf], limits: super::archive::Limits) -> Discovery {
    let mut d = Discovery { limits, ..Discovery::default() };
    for p in paths {
        let abs = absolute(p);
        match std::fs::metadata(&abs) {
            Err(source) => d.errors.push(IngestError::Io { path: abs, source }),
            Ok(m) if m.is_dir() => walk(&abs, &mut d),
            Ok(_) if super::archive::kind(&abs).is_some() => expand(&abs, &abs, 0, &Default::default(), &mut d),
            Ok(_) => d.units.push(unit_for_file(&abs)),
        }
    }
    d.units.sort_by(|a, b| a.path.cmp(&b.path));
    d.units.dedup_by(|a, b| a.path == b.path);
    d.passed.sort_by(|a, b| a.0.cmp(&b.0));
    d.passed.dedup_by(|a, b| a.0 == b.0);
    d
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
}

/// A file named on its own still belongs to its folder unit when it is part of one.
fn unit_for_file(path: &Path) -> Unit {
    let trial = path.ancestors().skip(1).take(3).find_map(trial_unit).map(|(u, _)| u);
    if let Some(u) = trial
        && u.members.iter().any(|m| m == path)
    {
        return u;
    }
    if let Some((u, _)) = path.parent().and_then(folder_unit)
        && u.members.iter().any(|m| m == path)
    {
        return u;
    }
    Unit { path: path.to_path_buf(), kind: UnitKind::File, members: Vec::new(), archive: None }
}

fn walk(root: &Path, d: &mut Discovery) {
    let mut it = walkdir::WalkDir::new(root).follow_links(false).sort_by_file_name().into_iter();
    let mut claimed: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    while let Some(entry) = it.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
                let source = err.into_io_error().unwrap_or_else(|| std::io::Error::other("filesystem loop"));
                d.errors.push(IngestError::Io { path, source });
                continue;
            }
        };
        let path = entry.path();
        let ft = entry.file_type();
        if ft.is_dir() {
            if entry.depth() > 0 && is_hidden(path) && !layout::walked_hidden_folder(path) {
                d.passed.push((path.to_path_buf(), Skip::hidden(true)));
                it.skip_current_dir();
                continue;
            }
            // A Harbor or Terminal-Bench trial is read whole from its own files; the rest under
            // it is the agent's working material (`ingest::harbor`, `ingest::terminal_bench`).
            if let Some((u, what)) = trial_unit(path) {
                let harbor = u.kind == UnitKind::HarborTrial;
                let why = |p: &Path| if harbor { super::harbor::unread_reason(p) } else { what };
                d.passed.extend(layout::unread_under_by(path, &u.members, why));
                d.units.push(u);
                it.skip_current_dir();
                continue;
            }
            if layout::autocoderover_task(path) {
                d.passed.extend(layout::unread_under(path, &[], layout::AUTOCODEROVER_TASK));
                it.skip_current_dir();
                continue;
            }
            for job_file in super::harbor::job_files(path) {
                if job_file.is_file() {
                    d.passed.push((
                        job_file.clone(),
                        Skip::not_read("a Harbor job's summary or log (its trials are read)"),
                    ));
                }
                claimed.insert(job_file);
            }
            let mut beside = layout::beside(path);
            super::terminal_bench::run_folder(path, &mut beside);
            super::agentless::superseded(path, &mut beside);
            claimed.extend(beside.members);
            for (p, skip) in beside.passed {
                claimed.insert(p.clone());
                d.passed.push((p, skip));
            }
            // A folder unit's member files are read with it; everything else in it (other
            // files, subfolders) is walked as usual.
            if let Some((u, strays)) = folder_unit(path) {
                claimed.extend(u.members.iter().cloned());
                for stray in strays {
                    claimed.insert(stray.clone());
                    d.passed.push((stray, Skip::not_read(layout::NOT_AN_EVENT)));
                }
                if u.kind == UnitKind::HarnessDir {
                    let script = path.join("eval.sh");
                    if script.is_file() {
                        d.passed.push((script.clone(), Skip::not_read("the harness's test script (eval.sh)")));
                    }
                    claimed.insert(script);
                    claimed.extend(symlinks_in(path));
                }
                d.units.push(u);
            }
            continue;
        }
        if claimed.contains(path) {
            continue;
        }
        if is_hidden(path)
            && let Some(skip) = layout::hidden_file(path)
        {
            if ft.is_file() {
                d.passed.push((path.to_path_buf(), skip));
            }
            continue;
        }
        // Symlinks to folders are not followed (no loops); a symlink to anything else is a unit
        // and `load` checks what it points to. FIFOs, sockets and devices met in a walk are not
        // inputs: reading a FIFO would block.
        let links_to_dir = ft.is_symlink() && std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        if ft.is_file() && super::archive::kind(path).is_some() {
            match d.inside.clone() {
                None => expand(path, path, 0, &Default::default(), d),
                Some((outer, depth, spent)) if depth < super::archive::MAX_DEPTH => {
                    expand(path, &outer.shown(path), depth, &spent, d)
                }
                Some((outer, _, _)) => d.errors.push(IngestError::parse(
                    &outer.shown(path),
                    None,
                    format!("an archive {} archives deep: not read", super::archive::MAX_DEPTH + 1),
                )),
            }
        } else if ft.is_file() || (ft.is_symlink() && !links_to_dir) {
            d.units.push(Unit { path: path.to_path_buf(), kind: UnitKind::File, members: Vec::new(), archive: None });
        }
    }
}

/// An archive met in a walk (or named): unpacked, its folder walked, and each unit found there
/// shown under the archive's name (`ingest::archive`). `shown` is the archive's own shown path
/// (itself inside an archive at `depth` > 0, unpacking from the budget `spent` of the archive
/// named).
fn expand(path: &Path, shown: &Path, depth: usize, spent: &std::sync::Arc<super::archive::Spent>, d: &mut Discovery) {
    let extracted = match super::archive::extract(path, shown, d.limits, spent, &mut d.errors) {
        Ok(x) => std::sync::Arc::new(x),
        Err(e) => return d.errors.push(e),
    };
    let inside = Some((extracted.clone(), depth + 1, spent.clone()));
    let mut inner = Discovery { inside, limits: d.limits, ..Discovery::default() };
    walk(extracted.dir(), &mut inner);
    for e in inner.errors {
        d.errors.push(match e {
            IngestError::Io { path, source } => IngestError::Io { path: extracted.shown(&path), source },
            other => other,
        });
    }
    for mut u in inner.units {
        // The units of an archive inside this one are already shown inside it.
        if u.archive.is_some() {
            d.units.push(u);
            continue;
        }
        u.path = extracted.shown(&u.path);
        u.members = u.members.iter().map(|m| extracted.shown(m)).collect();
        u.archive = Some(extracted.clone());
        d.units.push(u);
    }
}

fn is_hidden(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
}

/// The trial a folder is (a Harbor trial, `ingest::harbor`; a Terminal-Bench 1 trial,
/// `ingest::terminal_bench`), and what the files under it that are not read are.
fn trial_unit(dir: &Path) -> Option<(Unit, &'static str)> {
    if let Some(members) = super::harbor::trial_members(dir) {
        let unit = Unit { path: dir.to_path_buf(), kind: UnitKind::HarborTrial, members, archive: None };
        return Some((unit, "part of a Harbor trial, not read (the agent's working material)"));
    }
    let members = super::terminal_bench::trial_members(dir)?;
    let unit = Unit { path: dir.to_path_buf(), kind: UnitKind::TerminalBenchTrial, members, archive: None };
    Some((unit, "part of a Terminal-Bench trial, not read (screen dumps, tmux logs, the tests' recording)"))
}

/// The folder unit a directory forms, if any, and the files in it that are not read with it
/// though nothing else reads them (files beside a conversation's events that are not events).
fn folder_unit(dir: &Path) -> Option<(Unit, Vec<PathBuf>)> {
    // Hidden files (`.DS_Store`) never decide what a folder is.
    let names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    let harness = has("run_instance.log")
        || (has("report.json") && (has("test_output.txt") || has("patch.diff") || has("eval.sh")))
        || (has("patch.diff") && has("test_output.txt"));
    if harness {
        let members = HARNESS_FILES.iter().filter(|n| has(n)).map(|n| dir.join(n)).collect();
        return Some((
            Unit { path: dir.to_path_buf(), kind: UnitKind::HarnessDir, members, archive: None },
            Vec::new(),
        ));
    }
    let (kind, events) = match layout::event_folder(dir, &names) {
        Some(layout::EventFolder::V1(e)) => (UnitKind::Conversation, e),
        Some(layout::EventFolder::V0(e)) => (UnitKind::EventDir, e),
        None => {
            let members = super::agentless::stage_members(dir)?;
            let unit = Unit { path: dir.to_path_buf(), kind: UnitKind::AgentlessStage, members, archive: None };
            return Some((unit, Vec::new()));
        }
    };
    Some((Unit { path: dir.to_path_buf(), kind, members: events.members, archive: None }, events.strays))
}

/// The symlinks directly in a folder that lead to no file (a harness folder's `image_build_dir`
/// points into the harness's build cache and dangles in every copy).
fn symlinks_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| e.path())
        .filter(|p| !std::fs::metadata(p).is_ok_and(|m| m.is_file()))
        .collect()
}

/// The key a unit is stored under (`sources.path`): its path as text, without loss.
///
/// A UTF-8 path is its own key, as it always was. A path that is not UTF-8 (a Latin-1 name from
/// an old archive) has its invalid bytes and `%` percent-escaped and a double slash before its
/// last component: `/runs/caf\xE9.traj` is stored as `/runs//caf%E9.traj`. Unit paths are
/// canonical, and a canonical path never holds `//`, so the escaped form can equal neither a
/// UTF-8 path nor the form of another name (a lossy conversion made `caf\xE9` and `caf\xE8`
/// one source, so one replaced the other). The parent folder and the file name still read as
/// paths do.
pub fn key(path: &Path) -> Cow<'_, str> {
    if let Some(text) = path.to_str() {
        return Cow::Borrowed(text);
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Cow::Owned(escape(path.as_os_str().as_encoded_bytes()));
    };
    let dir = escape(dir.as_os_str().as_encoded_bytes());
    let sep = if dir.ends_with('/') { "/" } else { "//" };
    Cow::Owned(format!("{dir}{sep}{}", escape(name.as_encoded_bytes())))
}

/// Bytes as text: valid UTF-8 as it is, `%` and each byte of an invalid sequence as `%XX`.
fn escape(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    loop {
        let (valid, rest) = match std::str::from_utf8(bytes) {
            Ok(all) => (all, &[][..]),
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                (std::str::from_utf8(valid).unwrap_or_default(), rest)
            }
        };
        out.push_str(&valid.replace('%', "%25"));
        let Some((bad, after)) = rest.split_first() else { return out };
        out.push_str(&format!("%{bad:02X}"));
        bytes = after;
    }
}

/// How much of a file is looked at before it is read whole.
pub const SNIFF_BYTES: usize = 8192;

/// Binary content: a NUL byte at `at` among the first [`SNIFF_BYTES`].
pub fn binary(path: &Path, at: usize) -> IngestError {
    IngestError::parse(path, Some(Location::Byte(at)), "binary content (NUL byte): not a trajectory or a test log")
}

/// Look at the first [`SNIFF_BYTES`] of a file before anything reads it whole: a NUL byte there
/// is binary content (a core dump, an image, a sparse file of zeros), an error at once. Anything
/// but a regular file is left to [`load`], which says what it is (opening a FIFO would block).
pub fn sniff(path: &Path) -> Result<(), IngestError> {
    sniff_as(path, path)
}

/// [`sniff`] the file at `real`, naming it `path` (a member of an archive).
pub fn sniff_as(real: &Path, path: &Path) -> Result<(), IngestError> {
    if !std::fs::metadata(real).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let file = std::fs::File::open(real).map_err(|source| IngestError::Io { path: path.to_path_buf(), source })?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    file.take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|source| IngestError::Io { path: path.to_path_buf(), source })?;
    match head.iter().position(|b| *b == 0) {
        Some(at) => Err(binary(path, at)),
        None => Ok(()),
    }
}

/// A file too large to be read whole (`size` bytes against `limit`).
pub fn too_large(path: &Path, size: u64, limit: u64) -> IngestError {
    IngestError::parse(
        path,
        None,
        format!(
            "{} is over the limit of {} for a file read whole (a JSON document is parsed in memory; \
             JSON-lines files are read a line at a time)",
            error::bytes(size),
            error::bytes(limit)
        ),
    )
}

/// Read a unit's bytes and hash them. A file over `max_bytes` is not read: an error naming its
/// size and the limit.
pub fn load(unit: Unit, max_bytes: u64) -> Result<Loaded, IngestError> {
    let files = read_unit(&unit, max_bytes)?;
    let size = files.iter().map(|(_, b)| b.len() as u64).sum();
    let hash = hash_files(unit.kind, &files);
    Ok(Loaded { unit, size, hash, files })
}

/// A unit's files, read ([`load`] without the hash).
pub fn read_unit(unit: &Unit, max_bytes: u64) -> Result<Vec<(PathBuf, Vec<u8>)>, IngestError> {
    let paths: Vec<PathBuf> = match unit.kind {
        UnitKind::File => vec![unit.path.clone()],
        _ => unit.members.clone(),
    };
    let mut files = Vec::with_capacity(paths.len());
    for p in paths {
        let real = unit.real(&p);
        // Only regular files are read: a FIFO (named, or behind a symlink) would block forever,
        // a device could be endless.
        match std::fs::metadata(&real) {
            Ok(m) if m.is_file() && m.len() > max_bytes => return Err(too_large(&p, m.len(), max_bytes)),
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                let source = std::io::Error::other("not a regular file (FIFO, socket, device or folder); not read");
                return Err(IngestError::Io { path: p, source });
            }
            Err(source) => return Err(IngestError::Io { path: p, source }),
        }
        let bytes = std::fs::read(&real).map_err(|source| IngestError::Io { path: p.clone(), source })?;
        files.push((p, bytes));
    }
    Ok(files)
}

/// The hash `ingest` keeps of a unit's files, to tell an unchanged one: a file's bytes; for a
/// unit of several files, each one's name, length and bytes.
pub fn hash_files(kind: UnitKind, files: &[(PathBuf, Vec<u8>)]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    for (p, bytes) in files {
        if kind != UnitKind::File {
            hasher.update(p.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default());
            hasher.update(&(bytes.len() as u64).to_le_bytes());
        }
        hasher.update(bytes);
    }
    *hasher.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_folders_are_one_unit_and_other_files_stay_separate() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inst = dir.path().join("logs/run_evaluation/r1/model__x/inst-1");
        std::fs::create_dir_all(&inst).unwrap_or_else(|e| panic!("{e}"));
        for f in ["report.json", "run_instance.log", "test_output.txt", "patch.diff", "eval.sh", "notes.json"] {
            std::fs::write(inst.join(f), "{}").unwrap_or_else(|e| panic!("{e}"));
        }
        let d = discover(&[dir.path().to_path_buf()]);
        assert!(d.errors.is_empty());
        let kinds: Vec<_> =
            d.units.iter().map(|u| (u.kind, u.path.file_name().map(|n| n.to_string_lossy().into_owned()))).collect();
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        let harness =
            d.units.iter().find(|u| u.kind == UnitKind::HarnessDir).unwrap_or_else(|| panic!("no harness unit"));
        assert_eq!(harness.members.len(), 4);
        assert!(d.units.iter().any(|u| u.path.ends_with("notes.json")));
    }

    #[cfg(unix)]
    #[test]
    fn copied_harness_folders_without_report_and_their_dangling_symlink() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inst = dir.path().join("logs/django__django-11099");
        std::fs::create_dir_all(&inst).unwrap_or_else(|e| panic!("{e}"));
        for f in ["patch.diff", "test_output.txt"] {
            std::fs::write(inst.join(f), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        std::os::unix::fs::symlink("/nonexistent/build_images/instances/x", inst.join("image_build_dir"))
            .unwrap_or_else(|e| panic!("{e}"));
        let d = discover(&[dir.path().to_path_buf()]);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(d.units.len(), 1, "{:?}", d.units);
        assert_eq!((d.units[0].kind, d.units[0].members.len()), (UnitKind::HarnessDir, 2));
        // Outside a harness folder a dangling symlink is still named (load says it is missing).
        std::os::unix::fs::symlink("/nonexistent/x.traj", dir.path().join("x.traj")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(discover(&[dir.path().to_path_buf()]).units.len(), 2);
    }

    #[test]
    fn folder_units_keep_their_subfolders_and_ignore_hidden_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inst = dir.path().join("inst");
        let events = dir.path().join("sessions/s1/events");
        for d in [inst.join("sub"), events.clone()] {
            std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
        }
        for (p, text) in [
            (inst.join("run_instance.log"), "log"),
            (inst.join("sub/x.traj"), "{}"),
            (events.join("0.json"), "{}"),
            (events.join("1.json"), "{}"),
            (events.join(".DS_Store"), "junk"),
        ] {
            std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let d = discover(&[dir.path().to_path_buf()]);
        let mut kinds: Vec<(UnitKind, String)> = d
            .units
            .iter()
            .map(|u| (u.kind, u.path.strip_prefix(dir.path()).map(|p| p.display().to_string()).unwrap_or_default()))
            .collect();
        kinds.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            kinds,
            vec![
                (UnitKind::HarnessDir, "inst".to_string()),
                (UnitKind::File, "inst/sub/x.traj".to_string()),
                (UnitKind::EventDir, "sessions/s1/events".to_string()),
            ]
        );
    }

    fn write_all(dir: &Path, files: &[&str]) {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        for f in files {
            std::fs::write(dir.join(f), "{}").unwrap_or_else(|e| panic!("{e}"));
        }
    }

    fn names(paths: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
        paths.into_iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).collect()
    }

    /// Issue 42: a README among a V1 conversation's 13 event files made every event a unit of
    /// its own (13 runs); an index past 64 bits was no event either. The README is skipped by
    /// name, once; the conversation is one unit, the long index last.
    #[test]
    fn a_stray_file_among_v1_events_is_skipped_and_splits_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let conv = dir.path().join("conversations/c1");
        let mut files: Vec<String> = (0..12).map(|i| format!("event-{i:05}-0881f83f-b543.json")).collect();
        files.push("event-123456789012345678901234-0881f83f.json".into());
        files.push("README.md".into());
        write_all(&conv.join("events"), &files.iter().map(String::as_str).collect::<Vec<_>>());
        write_all(&conv, &["base_state.json"]);
        let d = discover(&[dir.path().to_path_buf()]);
        assert_eq!(d.units.len(), 1, "{:?}", d.units);
        assert_eq!(d.units[0].kind, UnitKind::Conversation);
        let members = names(d.units[0].members.clone());
        assert_eq!(members.len(), 14);
        assert_eq!((members[0].as_str(), members[1].as_str()), ("base_state.json", "event-00000-0881f83f-b543.json"));
        assert_eq!(members[13], "event-123456789012345678901234-0881f83f.json");
        let passed: Vec<(String, &str)> =
            d.passed.iter().map(|(p, s)| (names([p.clone()]).concat(), s.reason.as_str())).collect();
        assert_eq!(passed, [("README.md".to_string(), layout::NOT_AN_EVENT)]);
    }

    /// Issue 42: `desktop.ini` in a V0 `events/` folder made each event a unit of its own, and
    /// the session's event cache was then read as a second copy; `+3.json` was read as event 3
    /// again. Both are skipped by name; the events are one unit, the cache not read.
    #[test]
    fn stray_files_in_a_v0_events_folder_are_skipped_and_split_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let session = dir.path().join("sessions/s1");
        write_all(&session.join("events"), &["0.json", "1.json", "2.json", "3.json", "+3.json", "desktop.ini"]);
        write_all(&session.join("event_cache"), &["0-25.json"]);
        let d = discover(&[dir.path().to_path_buf()]);
        assert_eq!(d.units.len(), 1, "{:?}", d.units);
        assert_eq!(d.units[0].kind, UnitKind::EventDir);
        assert_eq!(names(d.units[0].members.clone()), ["0.json", "1.json", "2.json", "3.json"]);
        let passed: Vec<(String, bool)> =
            d.passed.iter().map(|(p, s)| (names([p.clone()]).concat(), s.reason == layout::NOT_AN_EVENT)).collect();
        assert_eq!(
            passed,
            [("0-25.json".to_string(), false), ("+3.json".to_string(), true), ("desktop.ini".to_string(), true)]
        );
    }

    #[cfg(unix)]
    #[test]
    fn keys_are_lossless_and_utf8_paths_keep_theirs() {
        use std::os::unix::ffi::OsStrExt;
        let path = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
        assert_eq!(key(&path(b"/runs/caf\xc3\xa9 100%.traj")), "/runs/caf\u{e9} 100%.traj");
        let e9 = path(b"/runs/caf\xe9.traj");
        assert_eq!(key(&e9), "/runs//caf%E9.traj");
        assert_ne!(key(&e9), key(&path(b"/runs/caf\xe8.traj")));
        // A UTF-8 name that spells the escaped form keeps its own, different key.
        assert_ne!(key(&e9), key(&path(b"/runs/caf%E9.traj")));
        assert_ne!(key(&path(b"/runs/caf%E9\xff")), key(&path(b"/runs/caf\xe9\xff")));
        assert_eq!(key(&path(b"/r\xff/a%b.traj")), "/r%FF//a%25b.traj");
        assert_eq!(key(&path(b"/x\xff")), "//x%FF");
        // The parent folder reads as a path: a sibling harness folder shares it.
        assert_eq!(Path::new(key(&e9).as_ref()).parent(), Some(Path::new("/runs")));
    }

    #[test]
    fn missing_paths_are_errors_not_panics() {
        let d = discover(&[PathBuf::from("/definitely/not/here")]);
        assert_eq!(d.errors.len(), 1);
        assert!(d.units.is_empty());
    }
}
