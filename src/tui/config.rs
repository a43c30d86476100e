//! User configuration: `config.toml` and `keymap.toml` in the XDG config folder
//! (`$XDG_CONFIG_HOME/trajan`, else `$HOME/.config/trajan`).
//!
//! Only the `[tui]` section of `config.toml` is read and validated here; other sections (`[llm]`,
//! `[labels]`, ...) belong to other features and are accepted as they are.

use crate::config::read_optional;
pub use crate::config::{ConfigError, config_dir};
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The TUI settings of `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `[tui] theme`: a preset name or a path to a theme file (a relative path is taken relative to
    /// the config folder). `None`: the caller picks its default.
    pub theme: Option<String>,
    /// `[tui] mouse`: capture the mouse. Off by default so reviewers can select and copy text.
    pub mouse: bool,
    /// Where the user keymap lives (`<config dir>/keymap.toml`); it may not exist. Empty when no
    /// config folder could be found.
    pub keymap_path: PathBuf,
}

impl Default for Config {
    fn default() -> Config {
        Config { theme: None, mouse: false, keymap_path: PathBuf::new() }
    }
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    tui: TuiSection,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TuiSection {
    theme: Option<String>,
    #[serde(default)]
    mouse: bool,
}

impl Config {
    /// Reads `<dir>/config.toml`; a missing file gives the defaults.
    pub fn load(dir: &Path) -> Result<Config, ConfigError> {
        let path = dir.join("config.toml");
        match read_optional(&path)? {
            Some(text) => Config::parse(&text, &path, dir),
            None => Ok(Config { keymap_path: dir.join("keymap.toml"), ..Config::default() }),
        }
    }

    /// Parses the content of a `config.toml` found at `path` inside the config folder `dir`.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<Config, ConfigError> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
        let theme = file.tui.theme.map(|t| {
            let relative_path = !Theme::preset_names().contains(&t.as_str()) && Path::new(&t).is_relative();
            if relative_path { dir.join(&t).to_string_lossy().into_owned() } else { t }
        });
        Ok(Config { theme, mouse: file.tui.mouse, keymap_path: dir.join("keymap.toml") })
    }
}

/// The configuration and the keymap (the defaults with the user's `keymap.toml` applied, when
/// present). `env` looks up environment variables (`|k| std::env::var(k).ok()` in the binary).
pub fn load_ui(env: impl Fn(&str) -> Option<String>) -> Result<(Config, Keymap), ConfigError> {
    let config = match config_dir(env) {
        Some(dir) => Config::load(&dir)?,
        None => Config::default(),
    };
    let keymap = if config.keymap_path.as_os_str().is_empty() {
        Keymap::default_map()
    } else {
        match read_optional(&config.keymap_path)? {
            Some(text) => Keymap::with_overrides(&text, &config.keymap_path)?,
            None => Keymap::default_map(),
        }
    };
    Ok((config, keymap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Command;
    use crate::tui::keymap::Context;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn config_dir_prefers_xdg_then_home() {
        let both = env_of(&[("XDG_CONFIG_HOME", "/x/cfg"), ("HOME", "/home/r")]);
        assert_eq!(config_dir(both), Some(PathBuf::from("/x/cfg/trajan")));
        let home = env_of(&[("HOME", "/home/r")]);
        assert_eq!(config_dir(home), Some(PathBuf::from("/home/r/.config/trajan")));
        // Empty and relative XDG values are ignored.
        let empty = env_of(&[("XDG_CONFIG_HOME", ""), ("HOME", "/home/r")]);
        assert_eq!(config_dir(empty), Some(PathBuf::from("/home/r/.config/trajan")));
        let relative = env_of(&[("XDG_CONFIG_HOME", "cfg"), ("HOME", "/home/r")]);
        assert_eq!(config_dir(relative), Some(PathBuf::from("/home/r/.config/trajan")));
        assert_eq!(config_dir(env_of(&[])), None);
    }

    #[test]
    fn missing_files_give_defaults() {
        let tmp = tempfile::tempdir().unwrap();
        let xdg = tmp.path().to_str().unwrap();
        let (config, keymap) = load_ui(env_of(&[("XDG_CONFIG_HOME", xdg)])).unwrap();
        assert_eq!(config.theme, None);
        assert!(!config.mouse);
        assert_eq!(config.keymap_path, tmp.path().join("trajan/keymap.toml"));
        assert_eq!(keymap, Keymap::default_map());
        // No config folder at all: defaults too.
        let (config, keymap) = load_ui(env_of(&[])).unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(keymap, Keymap::default_map());
    }

    #[test]
    fn reads_tui_section_and_ignores_other_sections() {
        let text =
            "[llm]\nmodel = \"x\"\nwhatever = 3\n\n[labels]\nset = [\"a\"]\n\n[tui]\ntheme = \"light\"\nmouse = true\n";
        let dir = Path::new("/cfg/trajan");
        let config = Config::parse(text, &dir.join("config.toml"), dir).unwrap();
        assert_eq!(config.theme.as_deref(), Some("light"));
        assert!(config.mouse);
        assert_eq!(config.keymap_path, dir.join("keymap.toml"));
        // A relative theme path is resolved in the config folder; a preset name is kept.
        let config = Config::parse("[tui]\ntheme = \"mine.toml\"\n", &dir.join("config.toml"), dir).unwrap();
        assert_eq!(config.theme.as_deref(), Some("/cfg/trajan/mine.toml"));
        let config = Config::parse("", &dir.join("config.toml"), dir).unwrap();
        assert_eq!((config.theme, config.mouse), (None, false));
    }

    #[test]
    fn bad_config_names_file_and_line() {
        let dir = Path::new("/cfg/trajan");
        let path = dir.join("config.toml");
        let err = Config::parse("[tui]\ntheme = \"dark\"\nmouse = \"yes\"\n", &path, dir).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("/cfg/trajan/config.toml:3: "), "{msg}");
        let err = Config::parse("[tui]\ncolour = 1\n", &path, dir).unwrap_err();
        assert!(err.to_string().starts_with("/cfg/trajan/config.toml:2: "), "{err}");
        assert!(err.to_string().contains("colour"), "{err}");
        let err = Config::parse("[tui\n", &path, dir).unwrap_err();
        assert!(err.to_string().starts_with("/cfg/trajan/config.toml:1: "), "{err}");
    }

    /// A config folder that cannot be read, or a FIFO where the file should be: the defaults
    /// (with a warning on stderr), even as root, and without waiting on the FIFO.
    #[test]
    fn unreadable_config_files_give_defaults() {
        let tmp = tempfile::tempdir().unwrap();
        // `trajan` is a file: reading `trajan/config.toml` fails (not a directory).
        std::fs::write(tmp.path().join("trajan"), "not a folder").unwrap();
        let env = env_of(&[("XDG_CONFIG_HOME", tmp.path().to_str().unwrap())]);
        let (config, keymap) = load_ui(&env).unwrap();
        assert_eq!((config.theme, config.mouse), (None, false));
        assert_eq!(keymap, Keymap::default_map());
        assert_eq!(crate::config::UserConfig::load(&env).unwrap(), crate::config::UserConfig::default());

        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("trajan");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["config.toml", "keymap.toml"] {
            let made = std::process::Command::new("mkfifo").arg(dir.join(name)).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        }
        let env = env_of(&[("XDG_CONFIG_HOME", tmp.path().to_str().unwrap())]);
        // Opening a FIFO to read waits for a writer: a thread, so a wait fails the test instead
        // of hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send((load_ui(&env).map_err(|e| e.to_string()), crate::config::UserConfig::load(&env).is_ok()));
        });
        let (loaded, user_loaded) =
            rx.recv_timeout(std::time::Duration::from_secs(10)).expect("reading waited on a FIFO");
        let (config, keymap) = loaded.unwrap();
        assert_eq!((config.theme, config.mouse), (None, false));
        assert_eq!(keymap, Keymap::default_map());
        assert!(user_loaded);
    }

    /// A file that is read but is not text is an error, as a mistake in it is.
    #[test]
    fn a_config_file_that_is_not_text_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("trajan");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), b"[tui]\ntheme = \"\xff\"\n").unwrap();
        let env = env_of(&[("XDG_CONFIG_HOME", tmp.path().to_str().unwrap())]);
        let err = load_ui(&env).unwrap_err().to_string();
        assert!(err.starts_with(&dir.join("config.toml").display().to_string()), "{err}");
        assert!(crate::config::UserConfig::load(&env).is_err());
    }

    #[test]
    fn load_ui_applies_user_keymap_and_reports_bad_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("trajan");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), "[tui]\nmouse = true\n").unwrap();
        std::fs::write(dir.join("keymap.toml"), "[run]\nnext_step = { keys = [\"n\"] }\n").unwrap();
        let env = env_of(&[("XDG_CONFIG_HOME", tmp.path().to_str().unwrap())]);
        let (config, keymap) = load_ui(&env).unwrap();
        assert!(config.mouse);
        let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
        assert_eq!(keymap.lookup(Context::Run, n), Some(Command::NextStep));

        std::fs::write(dir.join("keymap.toml"), "[run]\nnext_step = { keys = [\"ctrl-\"] }\n").unwrap();
        let err = load_ui(&env).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:2: ", dir.join("keymap.toml").display())), "{err}");

        std::fs::write(dir.join("config.toml"), "mouse = [\n").unwrap();
        let err = load_ui(&env).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:", dir.join("config.toml").display())), "{err}");
    }
}
