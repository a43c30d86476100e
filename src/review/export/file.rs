//! Writing an export to the path the user named (`export -o PATH`): a regular file or a new name
//! is replaced whole (a temporary file beside it, renamed over it), keeping the mode and owner of
//! the file it replaces; a character device or FIFO (`/dev/stdout`, `/dev/null`, a pipe another
//! process reads) is written into as it is; anything else is refused. Symbolic links are
//! followed: what they name decides. A new file's mode is what the umask gives; the temporary
//! file goes if the process is stopped before the rename ([`Staged`]).

use std::path::{Path, PathBuf};

/// A file that could not be written, and why, in the reader's terms: never the name of the
/// temporary file it was written to first, nor the OS's error code.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {why}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub why: WhyNot,
}

#[derive(Debug, thiserror::Error)]
pub enum WhyNot {
    #[error("the folder {} does not exist", .0.display())]
    NoFolder(PathBuf),
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("it is a folder")]
    IsAFolder,
    #[error("the name ends with a slash (a folder's name); give a file name")]
    FolderName,
    /// A socket, a block device: neither replaced nor written into.
    #[error("it is a {0}; an export goes to a file, a character device (such as /dev/stdout) or a FIFO")]
    Unsuitable(&'static str),
    #[error("files cannot be created in the folder {}", .0.display())]
    CannotCreate(PathBuf),
    #[error("permission denied (in the folder {})", .0.display())]
    PermissionDenied(PathBuf),
    /// Opening or writing a device or FIFO was refused.
    #[error("permission denied")]
    NoPermission,
    #[error("its reader closed it before the export was written")]
    ReaderGone,
    #[error("the file system is read-only")]
    ReadOnly,
    #[error("no space left on the device")]
    NoSpace,
    /// Every name a new file may take is taken (`write_new`).
    #[error("every name up to {last} is taken; move some of those files away")]
    NoFreeName { last: String },
    /// Another I/O error: the system's message without its code.
    #[error("{0}")]
    Io(String),
}

/// How an export reaches the path the user named.
#[derive(Debug)]
enum Target {
    /// A new file, or a regular file replaced whole; `old` is the replaced file's metadata (its
    /// mode and owner are kept). `path` is where the file is: a symbolic link is resolved.
    Replace { path: PathBuf, old: Option<std::fs::Metadata> },
    /// A character device or FIFO, written into as it is.
    Stream(PathBuf),
}

/// A temporary file beside an export's destination, renamed over it once written whole. It is
/// created as any new file is (0666 less the umask: a user whose umask is 077 gets 0600, as for
/// the database), and removed if the process is stopped before it is renamed (SIGINT, SIGTERM,
/// SIGHUP: `interrupt::on_forced_exit`; the export commands catch them), so an interrupted export
/// leaves no hidden file behind.
pub(crate) struct Staged {
    pub(crate) file: tempfile::NamedTempFile,
    _gone: crate::interrupt::ForcedExitHook,
}

impl Staged {
    /// A new temporary file in `dir`, named `PREFIX…SUFFIX`.
    pub(crate) fn new_in(dir: &Path, prefix: &str, suffix: &str) -> std::io::Result<Staged> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(prefix).suffix(suffix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let file = builder.tempfile_in(dir)?;
        let path = file.path().to_path_buf();
        let gone = crate::interrupt::on_forced_exit(move || {
            let _ = std::fs::remove_file(&path);
        });
        Ok(Staged { file, _gone: gone })
    }

    /// Rename it over `dest`.
    pub(crate) fn persist(self, dest: &Path) -> Result<(), tempfile::PersistError> {
        self.file.persist(dest).map(|_| ())
    }

    /// Give it the name `dest` only if nothing (not even a link) has that name; on failure the
    /// error and the file, to try another name.
    pub(crate) fn persist_new(self, dest: &Path) -> Result<(), (std::io::Error, Staged)> {
        let Staged { file, _gone } = self;
        match file.persist_noclobber(dest) {
            Ok(_) => Ok(()),
            Err(e) => Err((e.error, Staged { file: e.file, _gone })),
        }
    }
}

/// Write `text` (text or an image's bytes) to `path`: whole or not at all into a regular file or a new name (see the module
/// documentation); straight into a character device or FIFO. A new file gets the mode any new
/// file of the user gets (0666 less the umask: 0644 under the usual 022); a replaced one keeps its
/// permission bits (not set-user-ID, set-group-ID or sticky) and, where the writer may give it
/// (root), its owner and group.
pub fn write_file(path: &Path, text: impl AsRef<[u8]>) -> Result<(), WriteError> {
    let text = text.as_ref();
    let fail = |why| WriteError { path: path.to_path_buf(), why };
    match target(path).map_err(fail)? {
        Target::Stream(p) => stream(&p, text).map_err(fail),
        Target::Replace { path: p, old } => replace(&p, old.as_ref(), text).map_err(fail),
    }
}

fn target(path: &Path) -> Result<Target, WhyNot> {
    if path.is_dir() {
        return Err(WhyNot::IsAFolder);
    }
    if path.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) {
        return Err(WhyNot::FolderName);
    }
    let new = || Target::Replace { path: path.to_path_buf(), old: None };
    let named = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        // Not there (or a part of the path is not a folder: `replace` says which).
        Err(_) => return Ok(new()),
    };
    if !named.file_type().is_symlink() {
        return kind(path.to_path_buf(), named);
    }
    match std::fs::metadata(path) {
        // A link to nothing is replaced, as a missing file would be made.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(new()),
        Err(e) => Err(stream_why(&e)),
        Ok(m) => {
            // A regular file is replaced where it is, and the link keeps naming it.
            let at = if m.is_file() { std::fs::canonicalize(path).map_err(|e| stream_why(&e))? } else { path.into() };
            kind(at, m)
        }
    }
}

/// What an existing, non-link `path` with metadata `m` is to an export.
fn kind(path: PathBuf, m: std::fs::Metadata) -> Result<Target, WhyNot> {
    let t = m.file_type();
    if t.is_file() {
        return Ok(Target::Replace { path, old: Some(m) });
    }
    if t.is_dir() {
        return Err(WhyNot::IsAFolder);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() || t.is_fifo() {
            return Ok(Target::Stream(path));
        }
        if t.is_socket() {
            return Err(WhyNot::Unsuitable("socket"));
        }
        if t.is_block_device() {
            return Err(WhyNot::Unsuitable("block device"));
        }
    }
    Err(WhyNot::Unsuitable("special file"))
}

/// Write into a character device or FIFO: opened for writing, never created, truncated or
/// replaced. Opening a FIFO waits for its reader.
fn stream(path: &Path, text: &[u8]) -> Result<(), WhyNot> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| stream_why(&e))?;
    // What was opened is what was checked, not a file put there since.
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = file.metadata().map_err(|e| stream_why(&e))?.file_type();
        if !(t.is_char_device() || t.is_fifo()) {
            return Err(WhyNot::Io("it changed while it was being opened".into()));
        }
    }
    file.write_all(text).and_then(|()| file.flush()).map_err(|e| stream_why(&e))
}

/// Replace the regular file at `path` (or make it), whole or not at all: into a temporary file
/// beside it, then renamed over it, so a reader never sees half a file and a failed write
/// leaves the old one.
fn replace(path: &Path, old: Option<&std::fs::Metadata>, text: &[u8]) -> Result<(), WhyNot> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(WhyNot::NotAFolder(dir.to_path_buf())),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(WhyNot::NoFolder(dir.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(WhyNot::NotAFolder(nearest_file(dir)));
        }
        Err(e) => return Err(why_not(&e, dir)),
    }
    let mut tmp = Staged::new_in(dir, ".tmp", "").map_err(|e| why_not(&e, dir))?;
    std::io::Write::write_all(&mut tmp.file, text).map_err(|e| why_not(&e, dir))?;
    // A replaced file's owner and mode go to the new one (a new file keeps what it was made with).
    #[cfg(unix)]
    if let Some(old) = old {
        use std::os::unix::fs::PermissionsExt;
        keep_owner(tmp.file.as_file(), old);
        // After the owner: changing it may clear mode bits.
        let mode = old.permissions().mode() & 0o777;
        tmp.file.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|e| why_not(&e, dir))?;
    }
    #[cfg(not(unix))]
    let _ = old;
    // On failure the temporary file is removed (dropped with the error).
    tmp.persist(path).map_err(|e| why_not(&e.error, dir))?;
    Ok(())
}

/// Give `file` the owner and group of `old`: root can; another writer can keep the group when
/// they belong to it, and otherwise the file is theirs, as any program's saved file would be.
#[cfg(unix)]
fn keep_owner(file: &std::fs::File, old: &std::fs::Metadata) {
    use std::os::unix::fs::{MetadataExt, fchown};
    let Ok(new) = file.metadata() else { return };
    if (new.uid(), new.gid()) == (old.uid(), old.gid()) {
        return;
    }
    if fchown(file, Some(old.uid()), Some(old.gid())).is_err() {
        let _ = fchown(file, None, Some(old.gid()));
    }
}

/// An I/O error as a reason; `dir` is the folder written in.
pub(super) fn why_not(e: &std::io::Error, dir: &Path) -> WhyNot {
    use std::io::ErrorKind;
    match e.kind() {
        // The folder was there a moment ago (it was checked): a file system like /proc.
        ErrorKind::NotFound if dir.is_dir() => WhyNot::CannotCreate(dir.to_path_buf()),
        ErrorKind::NotFound => WhyNot::NoFolder(dir.to_path_buf()),
        ErrorKind::IsADirectory => WhyNot::IsAFolder,
        ErrorKind::NotADirectory => WhyNot::NotAFolder(nearest_file(dir)),
        ErrorKind::PermissionDenied => WhyNot::PermissionDenied(dir.to_path_buf()),
        ErrorKind::ReadOnlyFilesystem => WhyNot::ReadOnly,
        ErrorKind::StorageFull => WhyNot::NoSpace,
        _ => WhyNot::Io(without_code(e)),
    }
}

/// An I/O error met opening or writing a device or FIFO, as a reason.
fn stream_why(e: &std::io::Error) -> WhyNot {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::PermissionDenied => WhyNot::NoPermission,
        ErrorKind::BrokenPipe => WhyNot::ReaderGone,
        ErrorKind::ReadOnlyFilesystem => WhyNot::ReadOnly,
        ErrorKind::StorageFull => WhyNot::NoSpace,
        _ => WhyNot::Io(without_code(e)),
    }
}

/// The first ancestor of `dir` (itself included) that exists and is not a folder: what stands
/// where a folder should be.
fn nearest_file(dir: &Path) -> PathBuf {
    dir.ancestors().find(|a| a.exists() && !a.is_dir()).unwrap_or(dir).to_path_buf()
}

/// "Is a directory (os error 21)" -> "is a directory".
fn without_code(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) => &text[..i],
        None => text.as_str(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()).unwrap_or_default())
            .collect();
        names.sort();
        names
    }

    fn message(path: &Path) -> String {
        match write_file(path, "text") {
            Ok(()) => panic!("writing {} should fail", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_failed_write_says_why_in_plain_words_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        std::fs::create_dir(d.join("folder")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("file"), "x").unwrap_or_else(|e| panic!("{e}"));
        let cases = [
            (d.join("missing/out.csv"), format!("the folder {} does not exist", d.join("missing").display())),
            (d.join("folder"), "it is a folder".to_string()),
            (d.join("file/out.csv"), format!("{} is not a folder", d.join("file").display())),
            (d.join("file/sub/out.csv"), format!("{} is not a folder", d.join("file").display())),
            (
                PathBuf::from(format!("{}/new/", d.display())),
                "the name ends with a slash (a folder's name); give a file name".to_string(),
            ),
        ];
        for (path, why) in cases {
            assert_eq!(message(&path), format!("cannot write {}: {why}", path.display()));
        }
        assert_eq!(entries(d), ["file", "folder"], "nothing left behind");
        assert!(entries(&d.join("folder")).is_empty());
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or_else(|e| panic!("{e}"))
    }

    /// This process's umask (Linux: from /proc), 022 when it cannot be read.
    #[cfg(unix)]
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mask = status.lines().find_map(|l| l.strip_prefix("Umask:")).map(str::trim);
        mask.and_then(|m| u32::from_str_radix(m, 8).ok()).unwrap_or(0o022)
    }

    #[test]
    fn a_file_is_replaced_whole_and_a_new_one_gets_what_the_umask_gives() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old content, longer than the new").unwrap_or_else(|e| panic!("{e}"));
        write_file(&path, "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), "new");
        let fresh = dir.path().join("fresh.csv");
        write_file(&fresh, "new").unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        assert_eq!(mode(&fresh), 0o666 & !umask());
        assert_eq!(entries(dir.path()), ["fresh.csv", "out.csv"]);
    }

    /// A replaced file keeps its permission bits (not set-user-ID and the like) and, for root,
    /// its owner and group.
    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_owner() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("out.csv");
        let set_mode = |m: u32| {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap_or_else(|e| panic!("{e}"))
        };
        std::fs::write(&path, "old").unwrap_or_else(|e| panic!("{e}"));
        set_mode(0o640);
        let me = std::fs::metadata(&path).map(|m| m.uid()).unwrap_or_else(|e| panic!("{e}"));
        // Root can hand the file to someone else, and the export must give it back to them.
        let owner = if me == 0 { (4321, 4322) } else { (me, std::fs::metadata(&path).map_or(0, |m| m.gid())) };
        std::os::unix::fs::chown(&path, Some(owner.0), Some(owner.1)).unwrap_or_else(|e| panic!("{e}"));
        write_file(&path, "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), "new");
        assert_eq!(mode(&path), 0o640);
        let m = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((m.uid(), m.gid()), owner);
        set_mode(0o4750);
        write_file(&path, "newer").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&path), 0o750, "an export is never set-user-ID");
    }

    fn target_of(path: &Path) -> String {
        match target(path) {
            Ok(Target::Stream(p)) => format!("stream {}", p.display()),
            Ok(Target::Replace { path: p, old }) => format!("replace {} {}", p.display(), old.is_some()),
            Err(e) => e.to_string(),
        }
    }

    /// Devices and FIFOs are written into, links followed to what they name, sockets refused.
    #[cfg(unix)]
    #[test]
    fn what_a_path_is_decides_how_it_is_written() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target_of(Path::new("/dev/null")), "stream /dev/null");
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap_or_else(|e| panic!("{e}"));
        assert!(made.success());
        assert_eq!(target_of(&fifo), format!("stream {}", fifo.display()));
        let socket = d.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            target_of(&socket),
            "it is a socket; an export goes to a file, a character device (such as /dev/stdout) or a FIFO"
        );
        let file = d.join("file.csv");
        std::fs::write(&file, "old").unwrap_or_else(|e| panic!("{e}"));
        let link = d.join("link.csv");
        std::os::unix::fs::symlink(&file, &link).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target_of(&link), format!("replace {} true", file.display()));
        let to_fifo = d.join("to-fifo");
        std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target_of(&to_fifo), format!("stream {}", to_fifo.display()));
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nothing"), &dangling).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(target_of(&dangling), format!("replace {} false", dangling.display()));
        assert_eq!(target_of(&d.join("new.csv")), format!("replace {} false", d.join("new.csv").display()));
        // Through the link, the file is replaced and the link stays.
        write_file(&link, "new").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
        assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), "new");
    }
}
