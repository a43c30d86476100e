//! The configuration folder and reading its files: where they are, what a missing or unreadable
//! one gives (the defaults, with a warning), and the errors that name the file and line.

use crate::files::{self, FileError};
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A configuration file (or an embedded preset) that could not be used. Always names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file was read but its content is wrong; `line` (1-based) when it is known.
    #[error("{}: {message}", location(.path, *.line))]
    Invalid { path: PathBuf, line: Option<usize>, message: String },
    /// The file exists but could not be read.
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The path names no file to read (a device, a FIFO, a folder), one over the size limit, or
    /// one that is not text.
    #[error(transparent)]
    File(FileError),
}

impl From<FileError> for ConfigError {
    fn from(e: FileError) -> ConfigError {
        match e {
            FileError::Io { path, source } => ConfigError::Io { path, source },
            e => ConfigError::File(e),
        }
    }
}

fn location(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

impl ConfigError {
    /// An error about `text` (the file's content) at byte range `span`, when known.
    pub fn at(path: &Path, text: &str, span: Option<Range<usize>>, message: impl Into<String>) -> ConfigError {
        let line = span.map(|s| line_of(text, s.start));
        ConfigError::Invalid { path: path.to_path_buf(), line, message: message.into() }
    }

    /// A TOML syntax or shape error, with its line when toml gives a position.
    pub fn toml(path: &Path, text: &str, err: &toml::de::Error) -> ConfigError {
        ConfigError::at(path, text, err.span(), err.message().trim())
    }

    pub fn io(path: &Path, source: std::io::Error) -> ConfigError {
        ConfigError::Io { path: path.to_path_buf(), source }
    }
}

/// 1-based line number of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Reads a configuration file that may be absent: `Ok(None)` when it does not exist, and when it
/// cannot be read (a folder this user may not enter, a path through a file, a FIFO or device in
/// the file's place), which is reported once on stderr: the settings are optional, the command
/// goes on with the defaults. A file that is read but is not text, or is larger than a
/// configuration file may be, is an error, as are the mistakes the caller finds in it.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, ConfigError> {
    match files::read_regular(path, files::CONFIG) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(files::FileError::NotRegular { .. }) => Ok(unreadable(path, "not a regular file")),
        Err(files::FileError::Io { source, .. }) => Ok(unreadable(path, &source.kind().to_string())),
        Err(e) => Err(e.into()),
    }
}

/// Warn, once per file and process, that a configuration file is not used.
fn unreadable(path: &Path, why: &str) -> Option<String> {
    static WARNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let first = WARNED.lock().map(|mut warned| warned.insert(path.to_path_buf())).unwrap_or(true);
    if first {
        let path = path.display().to_string();
        eprintln!("warning: cannot read {} ({why}); using the default settings", crate::sanitize::sanitize(&path));
    }
    None
}

/// The configuration folder: `$XDG_CONFIG_HOME/trajan`, else `$HOME/.config/trajan`. Empty or
/// relative `XDG_CONFIG_HOME` values are ignored, as the XDG spec asks. `None` without either.
pub fn config_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(xdg) = set("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg.join("trajan"));
    }
    set("HOME").map(|home| PathBuf::from(home).join(".config").join("trajan"))
}
