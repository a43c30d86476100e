//! Unit tests of the keymap: parsing, defaults, overrides, lookup and help.

use super::*;
use crossterm::event::KeyEventState;

fn press(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn ch(c: char) -> KeyEvent {
    press(KeyCode::Char(c), KeyModifiers::NONE)
}

#[test]
fn default_map_parses_and_binds_every_command() {
    let map = Keymap::default_map();
    for command in <Command as strum::IntoEnumIterator>::iter() {
        let bound = <Context as strum::IntoEnumIterator>::iter().any(|c| !map.keys_for(c, command).is_empty());
        assert!(bound, "{command:?} has no key in the default keymap");
    }
    // Every binding has a description, and no context key hides a global one by default.
    for context in <Context as strum::IntoEnumIterator>::iter() {
        assert!(map.help(context).iter().all(|e| !e.help.is_empty() && !e.keys.is_empty()));
    }
    for context in [Context::List, Context::Run] {
        for global in &map.contexts[Context::Global as usize] {
            for key in &global.keys {
                assert_eq!(map.find(context, *key), None, "{key} in {context:?} hides global {:?}", global.command);
            }
        }
    }
}

#[test]
fn command_names_are_the_serde_names() {
    for command in <Command as strum::IntoEnumIterator>::iter() {
        assert_eq!(command_from_name(command_name(command)), Some(command));
    }
    assert_eq!(command_name(Command::NextStep), "next_step");
}

#[test]
fn parses_key_syntax() {
    let k = |code, modifiers| Key::new(code, modifiers);
    let none = KeyModifiers::NONE;
    assert_eq!(Key::parse("j"), Ok(k(KeyCode::Char('j'), none)));
    assert_eq!(Key::parse("$"), Ok(k(KeyCode::Char('$'), none)));
    assert_eq!(Key::parse("-"), Ok(k(KeyCode::Char('-'), none)));
    assert_eq!(Key::parse("ENTER"), Ok(k(KeyCode::Enter, none)));
    assert_eq!(Key::parse("pagedown"), Ok(k(KeyCode::PageDown, none)));
    assert_eq!(Key::parse("Space"), Ok(k(KeyCode::Char(' '), none)));
    assert_eq!(Key::parse("F12"), Ok(k(KeyCode::F(12), none)));
    assert_eq!(Key::parse("Ctrl-d"), Ok(k(KeyCode::Char('d'), KeyModifiers::CONTROL)));
    assert_eq!(Key::parse("ctrl--"), Ok(k(KeyCode::Char('-'), KeyModifiers::CONTROL)));
    assert_eq!(Key::parse("alt-x"), Ok(k(KeyCode::Char('x'), KeyModifiers::ALT)));
    assert_eq!(Key::parse("shift-g"), Key::parse("G"));
    assert_eq!(Key::parse("shift-Tab"), Key::parse("BackTab"));
    for bad in ["", "ctrl-", "F13", "PageDwn", "ctrl", "hyper-x"] {
        assert!(Key::parse(bad).is_err(), "{bad:?} should not parse");
    }
}

#[test]
fn uppercase_matches_with_and_without_shift() {
    let map = Keymap::default_map();
    for context in [Context::List, Context::Run] {
        assert_eq!(map.lookup(context, ch('G')), Some(Command::Bottom));
        assert_eq!(map.lookup(context, press(KeyCode::Char('G'), KeyModifiers::SHIFT)), Some(Command::Bottom));
        assert_eq!(map.lookup(context, ch('g')), Some(Command::Top));
    }
    let backtab = press(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(map.lookup(Context::Run, backtab), Some(Command::PrevPanel));
}

#[test]
fn global_bindings_apply_in_list_and_run_only() {
    let map = Keymap::default_map();
    let ctrl_c = press(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(map.lookup(Context::List, ctrl_c), Some(Command::Quit));
    assert_eq!(map.lookup(Context::Run, ctrl_c), Some(Command::Quit));
    assert_eq!(map.lookup(Context::Run, ch('q')), Some(Command::Back));
    assert_eq!(map.lookup(Context::List, ch('y')), Some(Command::Copy));
    // The help overlay has its own bindings: `y` does nothing there, `?` closes it.
    assert_eq!(map.lookup(Context::Help, ch('y')), None);
    assert_eq!(map.lookup(Context::Help, ch('?')), Some(Command::Back));
    assert_eq!(map.lookup(Context::Run, ch('l')), Some(Command::NextStep));
    assert_eq!(map.lookup(Context::List, ch('l')), Some(Command::Open));
}

#[test]
fn only_presses_count() {
    let map = Keymap::default_map();
    for kind in [KeyEventKind::Release, KeyEventKind::Repeat] {
        let event =
            KeyEvent::new_with_kind_and_state(KeyCode::Char('j'), KeyModifiers::NONE, kind, KeyEventState::NONE);
        assert_eq!(map.lookup(Context::Run, event), None);
    }
}

#[test]
fn override_replaces_only_named_commands() {
    let text = "[run]\nnext_step = { keys = [\"n\"] }\n";
    let map = Keymap::with_overrides(text, Path::new("/u/keymap.toml")).unwrap();
    assert_eq!(map.lookup(Context::Run, ch('n')), Some(Command::NextStep));
    assert_eq!(map.lookup(Context::Run, ch('l')), None);
    assert_eq!(map.lookup(Context::Run, press(KeyCode::Right, KeyModifiers::NONE)), None);
    assert_eq!(map.lookup(Context::Run, ch('h')), Some(Command::PrevStep));
    // `n` was search_next's only key: it is now unbound, and gone from the help.
    assert!(map.keys_for(Context::Run, Command::SearchNext).is_empty());
    assert!(map.help(Context::Run).iter().all(|e| e.command != Command::SearchNext));
    // The help text is kept; other contexts are untouched.
    let help = map.help(Context::Run);
    let next = help.iter().find(|e| e.command == Command::NextStep).unwrap();
    assert_eq!((next.keys.as_str(), next.help.as_str()), ("n", "next step"));
    assert_eq!(map.lookup(Context::List, ch('l')), Some(Command::Open));
}

#[test]
fn override_can_add_commands_and_shadow_global() {
    let text = "[list]\nquit = { keys = [\"q\"] }\n[global]\ncopy = { keys = [\"ctrl-k\"], help = \"yank\" }\n";
    let map = Keymap::with_overrides(text, Path::new("k.toml")).unwrap();
    assert_eq!(map.lookup(Context::List, ch('q')), Some(Command::Quit));
    assert_eq!(map.lookup(Context::Run, ch('q')), Some(Command::Back));
    let ctrl_k = press(KeyCode::Char('k'), KeyModifiers::CONTROL);
    assert_eq!(map.lookup(Context::Run, ctrl_k), Some(Command::Copy));
    let help = map.help(Context::List);
    let back = help.iter().find(|e| e.command == Command::Back).unwrap();
    assert_eq!(back.keys, "Esc", "the list's own `q` hides the global one");
    assert!(help.iter().any(|e| e.command == Command::Quit && e.keys == "q" && e.help == "quit"));
    assert!(help.iter().any(|e| e.command == Command::Copy && e.help == "yank"));
}

#[test]
fn override_without_keys_changes_only_the_description() {
    let text = "[run]\ndiff_mode = { help = \"cycle the diff view\" }\nsearch = { keys = [] }\n";
    let map = Keymap::with_overrides(text, Path::new("k.toml")).unwrap();
    assert_eq!(map.lookup(Context::Run, ch('d')), Some(Command::DiffMode));
    assert!(map.help(Context::Run).iter().any(|e| e.command == Command::DiffMode && e.help == "cycle the diff view"));
    // `keys = []` unbinds.
    assert_eq!(map.lookup(Context::Run, ch('/')), None);
    assert_eq!(map.lookup(Context::List, ch('/')), Some(Command::Filter));
}

#[test]
fn bad_override_names_file_and_line() {
    let path = Path::new("/home/r/.config/trajan/keymap.toml");
    let cases = [
        ("[run]\nnext_step = { keys = [\"l\"] }\nfly = { keys = [\"f\"] }\n", 3, "unknown command `fly`"),
        ("[run]\n\n[sidebar]\nup = { keys = [\"k\"] }\n", 3, "unknown context `[sidebar]`"),
        ("[run]\nup = { keys = [\"k\",\n  \"ctrl-pgupp\"] }\n", 3, "unknown key `ctrl-pgupp`"),
        ("[run]\nup = { keys = [\"k\"], hlep = \"x\" }\n", 2, "hlep"),
        ("[run]\nup = { keys = [\"k\"\n", 2, ""),
        ("[list]\nup = { keys = [\"u\"] }\ndown = { keys = [\"u\"] }\n", 3, "bound to both up and down"),
    ];
    for (text, line, needle) in cases {
        let msg = Keymap::with_overrides(text, path).unwrap_err().to_string();
        let prefix = format!("{}:{line}: ", path.display());
        assert!(msg.starts_with(&prefix) && msg.contains(needle), "{text:?} gave {msg:?}");
    }
}

#[test]
fn help_lists_context_then_global_in_file_order() {
    let map = Keymap::default_map();
    let help = map.help(Context::Run);
    let commands: Vec<Command> = help.iter().map(|e| e.command).collect();
    assert_eq!(&commands[..4], &[Command::Down, Command::Up, Command::PrevStep, Command::NextStep]);
    assert_eq!(
        &commands[commands.len() - 6..],
        &[Command::Back, Command::Quit, Command::Refresh, Command::Help, Command::Copy, Command::Stats]
    );
    assert_eq!(help[3].keys, "l, →");
    assert!(help.iter().any(|e| e.command == Command::ScrollDown && e.keys == "ctrl-e"));
    assert!(help.iter().any(|e| e.command == Command::BodyPageDown && e.keys == "Space"));
    assert!(map.help(Context::Help).iter().all(|e| e.command != Command::Copy));
}
