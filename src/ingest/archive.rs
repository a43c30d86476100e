//! Compressed inputs read in place: `.gz` and `.zst` files, and `.tar`, `.tar.gz` / `.tgz`,
//! `.tar.zst` and `.zip` archives of results folders.
//!
//! An archive is unpacked, member by member as a stream, into a temporary folder that lives as
//! long as the units found in it; that folder is then walked like any other (`source::discover`),
//! so every layout (harness folders, event folders, Harbor trials) is found inside archives too.
//! Each unit keeps a path of its own, `ARCHIVE!/MEMBER` (`results.tar.gz!/logs/.../report.json`),
//! which is its key in `sources` and what every message names; a `.gz` or `.zst` file is an
//! archive of one member, itself without the suffix (`run.traj.gz!/run.traj`). Unchanged
//! archives are unpacked again but add nothing: each member's content hash is already known.
//!
//! Bounded: a member is at most the document limit (`pipeline::MAX_DOCUMENT`) once decompressed,
//! the whole archive at most [`MAX_TOTAL`], the archives inside it included (one budget, a
//! [`Spent`] shared by everything unpacked from one named archive); a member over its limit is
//! skipped with an error naming it, and the unpacking stops at the total, so a zip bomb (or a zip
//! of zip bombs) costs neither memory (members are copied in 64 KiB pieces) nor unbounded disk.
//! Only regular files are unpacked: links and devices are passed over, a name that would leave
//! the folder (`../x`, `/etc/x`) is refused, and a member that cannot be made where its name
//! says (a name part over 255 bytes, a file where a folder is) is skipped with a message.
//! Archives inside archives are read too, to a depth of [`MAX_DEPTH`].
//!
//! The folder is the user's alone (0700, its files 0600) and named after the process
//! (`trajan-archive-PID-...`): it is removed when its units are done, by the stop-signal watcher
//! when the process is stopped (SIGTERM, SIGHUP, SIGINT: `interrupt::on_forced_exit`) or exits
//! before they are, and, left by a process killed outright (`kill -9`), by the next trajan that
//! unpacks an archive ([`clean_stale`]).

use crate::error::IngestError;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes unpacked so far from one named archive and every archive inside it.
pub type Spent = AtomicU64;

/// What the unpack folders are called: `trajan-archive-PID-` and a random part.
const PREFIX: &str = "trajan-archive-";

/// The most one member may unpack to: the document limit (`pipeline::MAX_DOCUMENT`, the same
/// value; a test keeps them equal).
pub const MAX_MEMBER: u64 = 2 << 30;
/// The most an archive may unpack to, all members together.
pub const MAX_TOTAL: u64 = 16 << 30;
/// Archives inside archives are read this deep.
pub const MAX_DEPTH: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gz,
    Zst,
    Tar,
    TarGz,
    TarZst,
    Zip,
}

/// The kind of archive a file's name says it is.
pub fn kind(path: &Path) -> Option<Kind> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let kinds = [
        (".tar.gz", Kind::TarGz),
        (".tgz", Kind::TarGz),
        (".tar.zst", Kind::TarZst),
        (".tzst", Kind::TarZst),
        (".tar", Kind::Tar),
        (".zip", Kind::Zip),
        (".gz", Kind::Gz),
        (".zst", Kind::Zst),
    ];
    kinds.iter().find(|(ext, _)| name.ends_with(ext)).map(|(_, k)| *k)
}

/// An unpacked archive: the folder its members are in, and the path they are shown under.
#[derive(Debug)]
pub struct Extracted {
    /// `ARCHIVE!` as shown: the archive's path (itself shown inside another archive, if so).
    shown: PathBuf,
    dir: tempfile::TempDir,
    /// Removes the folder if the process is stopped (or exits) before this is dropped.
    _cleanup: crate::interrupt::ForcedExitHook,
}

impl Extracted {
    /// The shown path (`ARCHIVE!/member`) of a file unpacked at `real`.
    pub fn shown(&self, real: &Path) -> PathBuf {
        let rel = real.strip_prefix(self.dir.path()).unwrap_or(real);
        let mut s = self.shown.as_os_str().to_owned();
        s.push("!/");
        s.push(rel.as_os_str());
        PathBuf::from(s)
    }

    /// Where the member shown as `shown` is on disk, when it is one of this archive's.
    pub fn real(&self, shown: &Path) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let mut prefix = self.shown.as_os_str().to_owned();
        prefix.push("!/");
        let rel = shown.as_os_str().as_bytes().strip_prefix(prefix.as_bytes())?;
        Some(self.dir.path().join(std::ffi::OsStr::from_bytes(rel)))
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Limits of one unpacking.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub member: u64,
    pub total: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { member: MAX_MEMBER, total: MAX_TOTAL }
    }
}

/// Unpack `path` (shown as `shown`) into a new temporary folder, counting what it unpacks in
/// `spent` (shared with the archive it was found in, if any). Members that could not be
/// unpacked (over the limit, a name leaving the folder or that cannot be made) are errors in
/// `problems`; the rest are there. An archive that cannot be read at all is an error.
pub fn extract(
    path: &Path,
    shown: &Path,
    limits: Limits,
    spent: &Spent,
    problems: &mut Vec<IngestError>,
) -> Result<Extracted, IngestError> {
    let kind = kind(path).ok_or_else(|| IngestError::parse(shown, None, "not an archive"))?;
    // A FIFO (or a device) named like an archive would block or never end.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(IngestError::parse(shown, None, "not a regular file: not read"));
    }
    clean_stale();
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|source| IngestError::Io { path: shown.to_path_buf(), source })?;
    let folder = dir.path().to_path_buf();
    // The unpacking stops at a stop signal (`Unpack::member`), but the watcher may come while
    // a member is being written: a removal that meets a file made meanwhile is tried again.
    let cleanup = crate::interrupt::on_forced_exit(move || {
        for _ in 0..50 {
            match std::fs::remove_dir_all(&folder) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => break,
            }
        }
    });
    let extracted = Extracted { shown: shown.to_path_buf(), dir, _cleanup: cleanup };
    let open = || std::fs::File::open(path).map_err(|source| IngestError::Io { path: shown.to_path_buf(), source });
    let mut unpack = Unpack { into: &extracted, limits, spent, problems };
    let bad = |e: std::io::Error| IngestError::parse(shown, None, format!("cannot read the archive: {e}"));
    match kind {
        Kind::Gz | Kind::Zst => {
            let file = open()?;
            let reader: Box<dyn Read> = if kind == Kind::Gz {
                Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)))
            } else {
                Box::new(zstd_reader(std::io::BufReader::new(file)).map_err(bad)?)
            };
            let name = shown.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let inner = name.rsplit_once('.').map_or(name.as_str(), |(stem, _)| stem).to_string();
            unpack.member(Path::new(&inner), reader)?;
        }
        Kind::Tar | Kind::TarGz | Kind::TarZst => {
            let file = std::io::BufReader::new(open()?);
            let reader: Box<dyn Read> = match kind {
                Kind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(file)),
                Kind::TarZst => Box::new(zstd_reader(file).map_err(bad)?),
                _ => Box::new(file),
            };
            let mut archive = tar::Archive::new(reader);
            for entry in archive.entries().map_err(bad)? {
                let entry = entry.map_err(bad)?;
                if entry.header().entry_type() != tar::EntryType::Regular
                    && entry.header().entry_type() != tar::EntryType::Continuous
                {
                    continue;
                }
                let name = entry.path().map_err(bad)?.into_owned();
                if !unpack.member(&name, entry)? {
                    break;
                }
            }
        }
        Kind::Zip => {
            let mut archive = zip::ZipArchive::new(open()?).map_err(|e| bad(std::io::Error::other(e)))?;
            for i in 0..archive.len() {
                let member = archive.by_index(i).map_err(|e| bad(std::io::Error::other(e)))?;
                if !member.is_file() || member.is_symlink() {
                    continue;
                }
                let name = PathBuf::from(member.name().map_err(|e| bad(std::io::Error::other(e)))?.into_owned());
                if !unpack.member(&name, member)? {
                    break;
                }
            }
        }
    }
    Ok(extracted)
}

/// libzstd's streaming decoder (the crate that compresses step texts), with the window the
/// `zstd` tool accepts without `--long` (128 MiB): a frame asking for more is refused, not
/// allocated.
fn zstd_reader<R: Read>(r: R) -> std::io::Result<zstd::stream::read::Decoder<'static, std::io::BufReader<R>>> {
    let mut decoder = zstd::stream::read::Decoder::new(r)?;
    decoder.window_log_max(27)?;
    Ok(decoder)
}

struct Unpack<'a> {
    into: &'a Extracted,
    limits: Limits,
    spent: &'a Spent,
    problems: &'a mut Vec<IngestError>,
}

impl Unpack<'_> {
    /// Copy one member; false once the archive's total is reached or a stop signal came (stop
    /// reading it).
    fn member(&mut self, name: &Path, mut reader: impl Read) -> Result<bool, IngestError> {
        if crate::interrupt::caught().is_some() {
            return Ok(false);
        }
        let shown = self.into.shown(&self.into.dir().join(name));
        let Some(rel) = inside(name) else {
            self.problems.push(IngestError::parse(
                &shown,
                None,
                "a member name that leaves the archive's folder: not unpacked",
            ));
            return Ok(true);
        };
        let dest = self.into.dir().join(&rel);
        let io = |source| IngestError::Io { path: shown.clone(), source };
        // A name no file can have here (a part over 255 bytes, a file where a folder is, or the
        // other way round): that member is skipped, the others are unpacked.
        let made = match dest.parent() {
            Some(parent) => std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent),
            None => Ok(()),
        }
        .and_then(|()| std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&dest));
        let mut out = match made {
            Ok(f) => f,
            Err(e) => {
                self.problems.push(IngestError::parse(&shown, None, format!("cannot unpack this member here: {e}")));
                return Ok(true);
            }
        };
        let total = self.spent.load(Ordering::Relaxed);
        let room = self.limits.member.min(self.limits.total.saturating_sub(total));
        let mut buf = vec![0u8; 64 << 10];
        let mut written = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    drop(out);
                    let _ = std::fs::remove_file(&dest);
                    return Err(IngestError::parse(&shown, None, format!("cannot read this member: {e}")));
                }
            };
            written += n as u64;
            if written > room {
                drop(out);
                let _ = std::fs::remove_file(&dest);
                let total = written > self.limits.total.saturating_sub(total);
                let (what, limit) = if total && room < self.limits.member {
                    ("the archive unpacks to more than", self.limits.total)
                } else {
                    ("this member unpacks to more than", self.limits.member)
                };
                self.problems.push(IngestError::parse(
                    &shown,
                    None,
                    format!(
                        "{what} {}: not read (a compressed file that expands without bound?)",
                        crate::error::bytes(limit)
                    ),
                ));
                return Ok(!total || room >= self.limits.member);
            }
            out.write_all(&buf[..n]).map_err(io)?;
        }
        self.spent.fetch_add(written, Ordering::Relaxed);
        Ok(true)
    }
}

/// Remove the unpack folders of trajan processes that are gone (killed before they could):
/// once per process, before its first unpacking; only the user's own.
pub fn clean_stale() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
        let me = rustix::process::getuid().as_raw();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(stale_pid) else { continue };
            use std::os::unix::fs::MetadataExt;
            let mine = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
            if mine && !alive(pid) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
}

/// The process an unpack folder's name says made it.
fn stale_pid(name: &str) -> Option<i32> {
    let (pid, _) = name.strip_prefix(PREFIX)?.split_once('-')?;
    pid.parse().ok()
}

/// Whether process `pid` is running (one of another user counts as running).
fn alive(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => !matches!(rustix::process::test_kill_process(p), Err(rustix::io::Errno::SRCH)),
        None => false,
    }
}

/// A member name as a path inside the folder: no root, no `..`, no drive prefix.
fn inside(name: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in name.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_bounded_by_the_document_limit() {
        assert_eq!(MAX_MEMBER, crate::ingest::pipeline::MAX_DOCUMENT);
    }

    #[test]
    fn kinds_by_name_and_names_that_leave_are_refused() {
        assert_eq!(kind(Path::new("/x/results.tar.gz")), Some(Kind::TarGz));
        assert_eq!(kind(Path::new("/x/run.traj.GZ")), Some(Kind::Gz));
        assert_eq!(kind(Path::new("/x/a.tzst")), Some(Kind::TarZst));
        assert_eq!(kind(Path::new("/x/a.traj")), None);
        assert_eq!(inside(Path::new("a/./b.json")), Some(PathBuf::from("a/b.json")));
        assert_eq!(inside(Path::new("../etc/passwd")), None);
        assert_eq!(inside(Path::new("/etc/passwd")), None);
    }

    #[test]
    fn an_unpack_folder_names_the_process_that_made_it() {
        assert_eq!(stale_pid("trajan-archive-4242-AbC123"), Some(4242));
        assert_eq!(stale_pid("trajan-archive-AbC123"), None, "a folder made before the name held the pid");
        assert_eq!(stale_pid("other-4242-x"), None);
        assert!(alive(std::process::id() as i32));
    }
}
