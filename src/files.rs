//! Reading the files a user names for settings and data: themes, keymaps, `config.toml`,
//! taxonomies, label exports. Only regular files are read, and only up to a size cap: named
//! `/dev/zero` would be read until memory ran out, and a FIFO would block forever.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// What a file holds and how large it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Named in the error, e.g. "a theme".
    pub what: &'static str,
    pub bytes: u64,
}

pub const THEME: Limit = Limit { what: "a theme", bytes: MIB };
/// `config.toml`, `keymap.toml`.
pub const CONFIG: Limit = Limit { what: "a configuration file", bytes: MIB };
pub const TAXONOMY: Limit = Limit { what: "a taxonomy", bytes: MIB };
/// Label exports are read whole (a JSON array must be); a large project's is tens of MB.
pub const LABEL_EXPORT: Limit = Limit { what: "a label export", bytes: GIB };

/// Why a named file was not read. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{} is not a regular file ({kind})", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is larger than the {} {} may be", path.display(), Size(limit.bytes), limit.what)]
    TooLarge { path: PathBuf, limit: Limit },
    #[error("{} is not UTF-8 text (invalid byte at offset {offset})", path.display())]
    NotText { path: PathBuf, offset: usize },
    #[error("{}: cannot read: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl FileError {
    /// The file does not exist (callers with a fallback or a better hint check this).
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The text of the regular file at `path` (symlinks followed), at most `limit.bytes` long.
pub fn read_regular(path: &Path, limit: Limit) -> Result<String, FileError> {
    let io = |source| FileError::Io { path: path.to_path_buf(), source };
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(io)?;
    if let Some(kind) = not_regular(&meta.file_type()) {
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind });
    }
    let too_large = || FileError::TooLarge { path: path.to_path_buf(), limit };
    if meta.len() > limit.bytes {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // The file may have grown since (or say 0, as /proc files do): read one byte past the cap.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit.bytes {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|e| FileError::NotText { path: path.to_path_buf(), offset: e.utf8_error().valid_up_to() })
}

/// What a file type is, in words, when it is not a regular file.
fn not_regular(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

/// A byte count in the largest binary unit it is a whole number of.
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            n if n >= GIB && n % GIB == 0 => write!(f, "{} GiB", n / GIB),
            n if n >= MIB && n % MIB == 0 => write!(f, "{} MiB", n / MIB),
            n => write!(f, "{n} bytes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Limit = Limit { what: "a test file", bytes: 8 };

    fn message(path: &Path, limit: Limit) -> String {
        match read_regular(path, limit) {
            Ok(text) => panic!("{} read: {text:?}", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "12345678").unwrap();
        assert_eq!(read_regular(&path, SMALL).unwrap(), "12345678");
        // Through a symlink too.
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_regular(&link, SMALL).unwrap(), "12345678");
    }

    #[test]
    fn devices_folders_and_fifos_are_refused_without_reading() {
        let msg = message(Path::new("/dev/zero"), THEME);
        assert_eq!(msg, "/dev/zero is not a regular file (a character device)");
        let dir = tempfile::tempdir().unwrap();
        assert!(message(dir.path(), THEME).ends_with(" is not a regular file (a folder)"));
        // Opening a FIFO with no writer would block: refused before it is opened.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        assert_eq!(message(&fifo, THEME), format!("{} is not a regular file (a FIFO)", fifo.display()));
    }

    #[test]
    fn files_over_the_cap_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        std::fs::write(&path, "123456789").unwrap();
        assert_eq!(message(&path, SMALL), format!("{} is larger than the 8 bytes a test file may be", path.display()));
        std::fs::write(&path, vec![b'#'; (MIB + 1) as usize]).unwrap();
        assert!(message(&path, THEME).ends_with("big.toml is larger than the 1 MiB a theme may be"));
        assert_eq!(Size(GIB).to_string(), "1 GiB");
    }

    #[test]
    fn files_that_report_no_size_are_still_capped() {
        // /proc files say 0 bytes and hold more.
        let text = read_regular(Path::new("/proc/self/status"), CONFIG).unwrap();
        assert!(text.contains("VmRSS") || text.contains("Name:"), "{text}");
        let msg = message(Path::new("/proc/self/status"), SMALL);
        assert!(msg.ends_with("is larger than the 8 bytes a test file may be"), "{msg}");
    }

    #[test]
    fn missing_and_binary_files() {
        let err = read_regular(Path::new("/nonexistent/x.toml"), THEME).unwrap_err();
        assert!(err.is_not_found());
        assert!(err.to_string().starts_with("/nonexistent/x.toml: cannot read: "), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, b"ab\xffcd").unwrap();
        assert!(message(&path, THEME).ends_with("bin is not UTF-8 text (invalid byte at offset 2)"));
    }
}
