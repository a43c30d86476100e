//! Keys to [`Command`]s, per context. The complete default keymap is `keymap.toml`, embedded in the
//! binary; a user file overrides only the commands it names. Every binding carries the description
//! the help overlay shows.

use crate::config::ConfigError;
use crate::tui::action::Command;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use toml::Spanned;

const DEFAULT_TOML: &str = include_str!("keymap.toml");
const DEFAULT_PATH: &str = "<built-in keymap.toml>";

/// Where a key is pressed. `Global` bindings apply in `List` and `Run` unless they bind the same key.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::EnumString, strum::EnumCount,
)]
#[strum(serialize_all = "snake_case")]
pub enum Context {
    Global,
    /// The run list.
    List,
    /// The run view.
    Run,
    /// The help overlay (global bindings do not apply).
    Help,
    /// The statistics screen.
    Stats,
    /// The comparison screen (runs side by side).
    Compare,
    /// The picker of a run to compare with (global bindings do not apply).
    Pick,
}

impl Context {
    /// The name of the context's table in the keymap file.
    pub fn name(self) -> &'static str {
        self.into()
    }

    fn from_name(name: &str) -> Option<Context> {
        name.parse().ok()
    }

    fn uses_global(self) -> bool {
        matches!(self, Context::List | Context::Run | Context::Stats | Context::Compare)
    }
}

/// A normalized key: the SHIFT of a character key is folded into the character (`G` and
/// `shift-g` are the same key whether or not the terminal reports SHIFT), and `shift-Tab` is
/// `BackTab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let (mut code, mut modifiers) = (code, modifiers);
        match code {
            KeyCode::Char(c) => {
                if modifiers.contains(KeyModifiers::SHIFT) {
                    let mut upper = c.to_uppercase();
                    if let (Some(u), None) = (upper.next(), upper.next()) {
                        code = KeyCode::Char(u);
                    }
                }
                modifiers.remove(KeyModifiers::SHIFT);
            }
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => {
                code = KeyCode::BackTab;
                modifiers.remove(KeyModifiers::SHIFT);
            }
            KeyCode::BackTab => modifiers.remove(KeyModifiers::SHIFT),
            _ => {}
        }
        Key { code, modifiers }
    }

    pub fn from_event(event: KeyEvent) -> Key {
        Key::new(event.code, event.modifiers)
    }

    /// Parses `j`, `G`, `$`, `Enter`, `PageDown`, `F5`, `ctrl-d`, `alt-x`, `shift-Tab`... Names and
    /// modifiers are case-insensitive; a single character is taken as it is.
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = text;
        while let Some((prefix, after)) = rest.split_once('-') {
            let modifier = match prefix.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => KeyModifiers::CONTROL,
                "alt" => KeyModifiers::ALT,
                "shift" => KeyModifiers::SHIFT,
                _ => break,
            };
            if after.is_empty() {
                break;
            }
            modifiers |= modifier;
            rest = after;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(c),
            _ => named_key(rest).ok_or_else(|| format!("unknown key `{text}`"))?,
        };
        Ok(Key::new(code, modifiers))
    }
}

fn named_key(name: &str) -> Option<KeyCode> {
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "pgdown" => KeyCode::PageDown,
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        _ => match lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            Some(n @ 1..=12) => KeyCode::F(n),
            _ => return None,
        },
    })
}

impl fmt::Display for Key {
    /// For people (the help overlay): `j`, `G`, `ctrl-d`, `→`, `PgDn`, `shift-Tab`, `Space`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (modifier, prefix) in
            [(KeyModifiers::CONTROL, "ctrl-"), (KeyModifiers::ALT, "alt-"), (KeyModifiers::SHIFT, "shift-")]
        {
            if self.modifiers.contains(modifier) {
                f.write_str(prefix)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::BackTab => f.write_str("shift-Tab"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Insert => f.write_str("Ins"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The keymap's name of a command (e.g. `next_step`).
pub fn command_name(command: Command) -> &'static str {
    command.into()
}

fn command_from_name(name: &str) -> Option<Command> {
    name.parse().ok()
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Binding {
    command: Command,
    keys: Vec<Key>,
    help: String,
}

/// One line of the help overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpEntry {
    /// The keys for people, e.g. `l, →`.
    pub keys: String,
    pub command: Command,
    pub help: String,
}

/// Bindings per context, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    contexts: [Vec<Binding>; <Context as strum::EnumCount>::COUNT],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBinding {
    /// Absent: keep the keys (a file may change only the description).
    keys: Option<Vec<Spanned<String>>>,
    help: Option<String>,
}

type RawFile = BTreeMap<Spanned<String>, BTreeMap<Spanned<String>, RawBinding>>;

/// One `command = { keys, help }` line of a keymap file.
struct Entry {
    context: Context,
    command: Command,
    /// `None`: keep the keys the command has.
    keys: Option<Vec<Key>>,
    help: Option<String>,
}

/// Parses a keymap file into its entries, in file order within each context. A key bound twice in
/// one context is an error.
fn parse_file(text: &str, path: &Path) -> Result<Vec<Entry>, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
    let err = |span: std::ops::Range<usize>, message: String| ConfigError::at(path, text, Some(span), message);
    let mut entries = Vec::new();
    for (context_name, bindings) in raw {
        let context = Context::from_name(context_name.get_ref()).ok_or_else(|| {
            let message =
                format!("unknown context `[{}]` (expected global, list, run or help)", context_name.get_ref());
            err(context_name.span(), message)
        })?;
        let mut bindings: Vec<_> = bindings.into_iter().collect();
        bindings.sort_by_key(|(name, _)| name.span().start);
        let mut seen: Vec<(Key, Command)> = Vec::new();
        for (name, raw) in bindings {
            let command = command_from_name(name.get_ref()).ok_or_else(|| {
                err(name.span(), format!("unknown command `{}` in [{}]", name.get_ref(), context.name()))
            })?;
            let mut keys = Vec::new();
            for key_text in raw.keys.iter().flatten() {
                let key = Key::parse(key_text.get_ref())
                    .map_err(|m| err(key_text.span(), format!("[{}] {}: {m}", context.name(), name.get_ref())))?;
                if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
                    let (ctx, other) = (context.name(), command_name(*other));
                    let message =
                        format!("[{ctx}] key `{}` is bound to both {other} and {}", key_text.get_ref(), name.get_ref());
                    return Err(err(key_text.span(), message));
                }
                seen.push((key, command));
                keys.push(key);
            }
            let keys = raw.keys.is_some().then_some(keys);
            entries.push(Entry { context, command, keys, help: raw.help });
        }
    }
    Ok(entries)
}

impl Keymap {
    /// The built-in keymap (`src/tui/keymap.toml`).
    pub fn default_map() -> Keymap {
        let mut map = Keymap { contexts: Default::default() };
        for entry in parse_file(DEFAULT_TOML, Path::new(DEFAULT_PATH)).expect("the built-in keymap is valid") {
            map.apply(entry);
        }
        map
    }

    /// The default keymap with the user's file applied: it overrides only the commands it names, per
    /// context; keys it assigns are taken away from other commands of the same context. A command
    /// may be added to a context that does not bind it by default. `keys = []` unbinds; a line
    /// without `keys` changes only the description.
    pub fn with_overrides(toml_text: &str, source: &Path) -> Result<Keymap, ConfigError> {
        let mut map = Keymap::default_map();
        for entry in parse_file(toml_text, source)? {
            map.apply(entry);
        }
        Ok(map)
    }

    fn apply(&mut self, entry: Entry) {
        let fallback_help = entry.help.clone().unwrap_or_else(|| self.describe(entry.command));
        let bindings = &mut self.contexts[entry.context as usize];
        if let Some(keys) = &entry.keys {
            for binding in bindings.iter_mut().filter(|b| b.command != entry.command) {
                binding.keys.retain(|k| !keys.contains(k));
            }
        }
        match bindings.iter_mut().find(|b| b.command == entry.command) {
            Some(binding) => {
                if let Some(keys) = entry.keys {
                    binding.keys = keys;
                }
                if let Some(help) = entry.help {
                    binding.help = help;
                }
            }
            None => {
                let keys = entry.keys.unwrap_or_default();
                bindings.push(Binding { command: entry.command, keys, help: fallback_help });
            }
        }
    }

    /// A description for a command added to a new context: its help elsewhere, else its name.
    fn describe(&self, command: Command) -> String {
        let known = self.contexts.iter().flatten().find(|b| b.command == command && !b.help.is_empty());
        known.map(|b| b.help.clone()).unwrap_or_else(|| command_name(command).replace('_', " "))
    }

    fn find(&self, context: Context, key: Key) -> Option<Command> {
        self.contexts[context as usize].iter().find(|b| b.keys.contains(&key)).map(|b| b.command)
    }

    /// The command for a key press in `context`: the context's binding, else (in the run list and
    /// the run view) the global one. Key releases and repeats give `None`.
    pub fn lookup(&self, context: Context, key: KeyEvent) -> Option<Command> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        let key = Key::from_event(key);
        self.find(context, key).or_else(|| if context.uses_global() { self.find(Context::Global, key) } else { None })
    }

    /// The keys that run `command` in `context` (global ones included where they apply), e.g. for
    /// a hint in the status line.
    pub fn keys_for(&self, context: Context, command: Command) -> Vec<Key> {
        let mut keys: Vec<Key> = self.contexts[context as usize]
            .iter()
            .filter(|b| b.command == command)
            .flat_map(|b| b.keys.clone())
            .collect();
        if context.uses_global() {
            let global = self.contexts[Context::Global as usize].iter().filter(|b| b.command == command);
            keys.extend(global.flat_map(|b| b.keys.iter().copied()).filter(|k| self.find(context, *k).is_none()));
        }
        keys
    }

    /// The help overlay's lines for `context`: its bindings, then the global ones that apply (keys
    /// the context rebinds are left out), in file order. Unbound commands are left out.
    pub fn help(&self, context: Context) -> Vec<HelpEntry> {
        let entry = |b: &Binding, keys: Vec<Key>| HelpEntry {
            keys: keys.iter().map(Key::to_string).collect::<Vec<_>>().join(", "),
            command: b.command,
            help: b.help.clone(),
        };
        let mut out: Vec<HelpEntry> = Vec::new();
        for b in self.contexts[context as usize].iter().filter(|b| !b.keys.is_empty()) {
            out.push(entry(b, b.keys.clone()));
        }
        if context.uses_global() {
            for b in &self.contexts[Context::Global as usize] {
                let keys: Vec<Key> = b.keys.iter().copied().filter(|k| self.find(context, *k).is_none()).collect();
                if !keys.is_empty() {
                    out.push(entry(b, keys));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
