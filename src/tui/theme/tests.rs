//! Unit tests of theme loading: presets, colour depth, user files and their errors.

use super::*;
use crate::tui::color::nearest_ansi256;
use std::io::Write;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn theme_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

#[test]
fn slot_names_are_distinct_and_complete() {
    assert_eq!(SLOT_NAMES.len(), 29);
    let mut names = SLOT_NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), SLOT_NAMES.len());
}

#[test]
fn every_preset_defines_every_slot() {
    for (name, text) in PRESETS {
        // A preset may not lean on `inherits`: each slot is written out in the file.
        assert!(!text.contains("\ninherits"), "{name}");
        for slot in SLOT_NAMES {
            let line = format!("\n{slot} = {{");
            assert!(text.contains(&line), "preset {name} lacks slot {slot}");
        }
        let theme = Theme::load(name, ColorDepth::TrueColor).unwrap();
        assert_eq!(theme.name, name);
        assert_ne!(theme.selection, Style::default(), "{name}: selection must be visible");
        assert_ne!(theme.diff_added, theme.diff_removed, "{name}");
        Theme::load(name, ColorDepth::Ansi256).unwrap();
        // 16 colours: only the ANSI ones are sent, and added and removed lines still differ.
        let sixteen = Theme::load(name, ColorDepth::Ansi16).unwrap();
        for (_, style) in slots_mut(&mut sixteen.clone()) {
            for color in [style.fg, style.bg].into_iter().flatten() {
                let basic = !matches!(color, Color::Rgb(..)) && !matches!(color, Color::Indexed(i) if i > 15);
                assert!(basic, "{name}: {color:?} on a 16-colour terminal");
            }
        }
        assert_ne!(sixteen.diff_added, sixteen.diff_removed, "{name}");
    }
    assert_eq!(Theme::preset_names(), &["dark", "light", "high-contrast"]);
}

#[test]
fn presets_name_their_syntax_theme() {
    let syntax = |name| Theme::load(name, ColorDepth::TrueColor).unwrap().syntax;
    assert_eq!(syntax("dark").as_deref(), Some("base16-eighties.dark"));
    assert_eq!(syntax("light").as_deref(), Some("InspiredGitHub"));
    assert_eq!(syntax("high-contrast"), None);
}

#[test]
fn detects_colour_depth() {
    assert_eq!(ColorDepth::detect(env_of(&[])), ColorDepth::Ansi256);
    assert_eq!(ColorDepth::detect(env_of(&[("COLORTERM", "truecolor")])), ColorDepth::TrueColor);
    assert_eq!(ColorDepth::detect(env_of(&[("COLORTERM", "24bit")])), ColorDepth::TrueColor);
    assert_eq!(ColorDepth::detect(env_of(&[("COLORTERM", "yes")])), ColorDepth::Ansi256);
    // Then the terminal's name: TERM=screen is not a 256-colour terminal.
    let term = |t: &str| ColorDepth::detect(env_of(&[("TERM", t)]));
    assert_eq!(term("screen"), ColorDepth::Ansi16);
    assert_eq!(term("xterm"), ColorDepth::Ansi16);
    assert_eq!(term("linux"), ColorDepth::Ansi16);
    assert_eq!(term("screen-256color"), ColorDepth::Ansi256);
    assert_eq!(term("xterm-256color"), ColorDepth::Ansi256);
    assert_eq!(term("xterm-direct"), ColorDepth::TrueColor);
    assert_eq!(term("dumb"), ColorDepth::NoColor);
    assert_eq!(
        ColorDepth::detect(env_of(&[("TERM", "screen"), ("COLORTERM", "truecolor")])),
        ColorDepth::TrueColor,
        "COLORTERM first"
    );
    assert_eq!("16".parse::<ColorDepth>(), Ok(ColorDepth::Ansi16));
    let no_color = env_of(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")]);
    assert_eq!(ColorDepth::detect(no_color), ColorDepth::NoColor);
    // An empty NO_COLOR does not count.
    let empty = env_of(&[("NO_COLOR", ""), ("COLORTERM", "truecolor")]);
    assert_eq!(ColorDepth::detect(empty), ColorDepth::TrueColor);
    assert_eq!("256".parse(), Ok(ColorDepth::Ansi256));
    assert_eq!("never".parse(), Ok(ColorDepth::NoColor));
    assert!("lots".parse::<ColorDepth>().is_err());
}

#[test]
fn nearest_xterm_256_colours() {
    assert_eq!(nearest_ansi256(0xff, 0x00, 0x00), 196);
    assert_eq!(nearest_ansi256(0x80, 0x80, 0x80), 244);
    assert_eq!(nearest_ansi256(0x00, 0x00, 0x00), 16);
    assert_eq!(nearest_ansi256(0xff, 0xff, 0xff), 231);
    assert_eq!(nearest_ansi256(0x5f, 0x87, 0xaf), 67);
    assert_eq!(nearest_ansi256(0x08, 0x08, 0x08), 232);
    assert_eq!(nearest_ansi256(0xee, 0xee, 0xee), 255);
    assert_eq!(nearest_ansi256(0xff, 0xff, 0x00), 226);
}

#[test]
fn colours_follow_the_depth() {
    let true_color = Theme::load("dark", ColorDepth::TrueColor).unwrap();
    assert_eq!(true_color.diff_added.bg, Some(Color::Rgb(0x12, 0x26, 0x1e)));
    let ansi = Theme::load("dark", ColorDepth::Ansi256).unwrap();
    // A `#rrggbb` without a 256-colour override becomes the nearest xterm colour (dark's
    // `diff_hunk` is `fg = "#a5d6ff"`)...
    assert_eq!(ansi.diff_hunk.fg, Some(Color::Indexed(nearest_ansi256(0xa5, 0xd6, 0xff))));
    // ...and `bg256` overrides it where the nearest would be a grey.
    assert_eq!(ansi.diff_added.bg, Some(Color::Indexed(22)));
    assert_eq!(ansi.error.add_modifier, Modifier::BOLD);
    // NO_COLOR: the plain theme, whatever the preset.
    for name in Theme::preset_names() {
        assert_eq!(Theme::load(name, ColorDepth::NoColor).unwrap(), Theme::default());
    }
}

#[test]
fn user_file_inherits_and_overrides_slots() {
    let text = "inherits = \"light\"\nname = \"mine\"\nsyntax = \"\"\n\
                error = { fg = \"red\", bg = 52, underline = true, bold = false }\nmuted = { fg = \"DarkGray\" }\n";
    let file = theme_file(text);
    let theme = Theme::load(file.path().to_str().unwrap(), ColorDepth::Ansi256).unwrap();
    let light = Theme::load("light", ColorDepth::Ansi256).unwrap();
    assert_eq!(theme.name, "mine");
    assert_eq!(theme.syntax, None);
    assert_eq!(theme.error, Style::default().fg(Color::Red).bg(Color::Indexed(52)).add_modifier(Modifier::UNDERLINED));
    assert_eq!(theme.muted.fg, Some(Color::DarkGray));
    assert_eq!((&theme.diff_added, &theme.selection), (&light.diff_added, &light.selection));
    // Checked, then dropped, under NO_COLOR.
    assert_eq!(Theme::load(file.path().to_str().unwrap(), ColorDepth::NoColor).unwrap(), Theme::default());
}

#[test]
fn bad_theme_files_name_file_line_and_slot() {
    let cases = [
        ("inherits = \"dark\"\n\nerorr = { fg = \"red\" }\n", Some(3), "unknown theme slot `erorr`"),
        ("inherits = \"dark\"\nerror = { fg = \"#12345\" }\n", Some(2), "slot `error`: unknown colour `#12345`"),
        ("inherits = \"dark\"\nerror = { fg = 300 }\n", Some(2), "slot `error`: colour index 300"),
        ("inherits = \"dark\"\nerror = { bold = \"yes\" }\n", Some(2), "slot `error`: `bold` must be true or false"),
        ("inherits = \"dark\"\nerror = { blink = true }\n", Some(2), "slot `error`: unknown key `blink`"),
        ("inherits = \"dark\"\nerror = \"red\"\n", Some(2), "slot `error`: expected a table"),
        ("inherits = \"solarized\"\n", Some(1), "`inherits` must name a preset"),
        ("inherits = \"dark\"\nsyntax = \"Nope\"\n", Some(2), "unknown syntax theme `Nope`"),
        ("inherits = \"dark\"\nerror = { fg = \"red\"\n", Some(2), ""),
        ("text = { fg = \"red\" }\n", None, "missing theme slots: muted, border"),
    ];
    for (text, line, needle) in cases {
        let file = theme_file(text);
        let path = file.path().to_str().unwrap();
        let msg = Theme::load(path, ColorDepth::TrueColor).unwrap_err().to_string();
        let prefix = match line {
            Some(line) => format!("{path}:{line}: "),
            None => format!("{path}: "),
        };
        assert!(msg.starts_with(&prefix) && msg.contains(needle), "{text:?} gave {msg:?}");
    }
}

#[test]
fn unknown_names_and_missing_files() {
    let msg = Theme::load("solarized", ColorDepth::TrueColor).unwrap_err().to_string();
    assert!(msg.starts_with("solarized: unknown theme (presets: dark, light, high-contrast"), "{msg}");
    let err = Theme::load("/nonexistent/theme.toml", ColorDepth::TrueColor).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err}");
    assert!(err.to_string().starts_with("/nonexistent/theme.toml: "), "{err}");
}

#[test]
fn devices_and_huge_files_are_not_read_as_themes() {
    let err = Theme::load("/dev/zero", ColorDepth::TrueColor).unwrap_err();
    assert_eq!(err.to_string(), "/dev/zero is not a regular file (a character device)");
    let file = theme_file(&"# padding\n".repeat(120_000));
    let msg = Theme::load(file.path().to_str().unwrap(), ColorDepth::TrueColor).unwrap_err().to_string();
    assert!(msg.ends_with(" is larger than the 1 MiB a theme may be"), "{msg}");
}

#[test]
fn diff_backgrounds_stay_apart_on_256_colour_terminals() {
    for name in ["dark", "light"] {
        let t = Theme::load(name, ColorDepth::Ansi256).unwrap_or_else(|e| panic!("{e}"));
        let bgs = [t.diff_added.bg, t.diff_removed.bg, t.diff_added_emph.bg, t.diff_removed_emph.bg];
        for (i, a) in bgs.iter().enumerate() {
            assert!(matches!(a, Some(Color::Indexed(_))), "{name}: {a:?}");
            for b in &bgs[i + 1..] {
                assert_ne!(a, b, "{name}: two diff backgrounds are the same colour");
            }
            // Not from the grey ramp: greys make added and removed look alike.
            assert!(!matches!(a, Some(Color::Indexed(232..=255))), "{name}: {a:?} is a grey");
        }
        // Truecolor keeps the designed colours.
        let tc = Theme::load(name, ColorDepth::TrueColor).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(tc.diff_added.bg, Some(Color::Rgb(..))));
    }
}
