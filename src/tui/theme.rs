//! Themes: colour slots named by meaning. Presets live in `themes/*.toml` and are embedded; a
//! user theme file has the same shape. Colours are converted for the terminal's [`ColorDepth`].

use crate::config::ConfigError;
pub use crate::tui::color::ColorDepth;
use crate::tui::color::for_depth;
use ratatui::style::{Color, Modifier, Style};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// Every style the views use. Slots are named by meaning, not by colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Name of the syntect theme used for syntax colours in diffs; `None` for no syntax colours.
    pub syntax: Option<String>,
    /// The colour depth the slots were converted for; syntax colours follow it.
    pub depth: ColorDepth,
    pub text: Style,
    pub muted: Style,
    pub border: Style,
    pub border_focus: Style,
    pub title: Style,
    pub header: Style,
    pub selection: Style,
    pub status: Style,
    pub status_error: Style,
    pub accent: Style,
    pub ok: Style,
    pub warning: Style,
    pub error: Style,
    pub search_match: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    /// Changed words inside an added / removed line.
    pub diff_added_emph: Style,
    pub diff_removed_emph: Style,
    pub diff_hunk: Style,
    pub diff_context: Style,
    pub diff_file: Style,
    pub marker_edit: Style,
    pub marker_rejected: Style,
    pub marker_error: Style,
    pub marker_clipped: Style,
    pub marker_test: Style,
    /// The run's onset: its step in the step list and the comparison, its name in the header.
    pub onset: Style,
    pub sparkline: Style,
    pub help_key: Style,
}

impl Default for Theme {
    /// A theme with no colours at all (what `NO_COLOR` gives): structure by modifiers only.
    fn default() -> Theme {
        let plain = Style::default();
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let reverse = Style::default().add_modifier(Modifier::REVERSED);
        Theme {
            name: "no-color".to_string(),
            syntax: None,
            depth: ColorDepth::NoColor,
            text: plain,
            muted: Style::default().add_modifier(Modifier::DIM),
            border: plain,
            border_focus: bold,
            title: bold,
            header: bold.add_modifier(Modifier::UNDERLINED),
            selection: reverse,
            status: reverse,
            status_error: reverse.add_modifier(Modifier::BOLD),
            accent: bold,
            ok: plain,
            warning: bold,
            error: bold,
            search_match: reverse,
            diff_added: plain,
            diff_removed: Style::default().add_modifier(Modifier::DIM),
            diff_added_emph: bold.add_modifier(Modifier::UNDERLINED),
            diff_removed_emph: Style::default().add_modifier(Modifier::CROSSED_OUT),
            diff_hunk: bold,
            diff_context: plain,
            diff_file: bold,
            marker_edit: bold,
            marker_rejected: bold,
            marker_error: bold,
            marker_clipped: plain,
            marker_test: plain,
            onset: bold.add_modifier(Modifier::UNDERLINED),
            sparkline: plain,
            help_key: bold,
        }
    }
}

// ---- Loading: presets and user files --------------------------------------------------------------

const PRESETS: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("high-contrast", include_str!("../../themes/high-contrast.toml")),
];
const PRESET_NAMES: [&str; 3] = [PRESETS[0].0, PRESETS[1].0, PRESETS[2].0];

/// Declares the style slots once: [`SLOT_NAMES`] and `slots_mut`, whose exhaustive destructuring
/// makes a new `Theme` field a compile error until it is listed here (and so in every preset test).
macro_rules! slots {
    ($($slot:ident),* $(,)?) => {
        /// The style slots of [`Theme`], as named in theme files.
        pub const SLOT_NAMES: &[&str] = &[$(stringify!($slot)),*];

        fn slots_mut(theme: &mut Theme) -> Vec<(&'static str, &mut Style)> {
            let Theme { name: _, syntax: _, depth: _, $($slot),* } = theme;
            vec![$((stringify!($slot), $slot)),*]
        }
    };
}

slots!(
    text,
    muted,
    border,
    border_focus,
    title,
    header,
    selection,
    status,
    status_error,
    accent,
    ok,
    warning,
    error,
    search_match,
    diff_added,
    diff_removed,
    diff_added_emph,
    diff_removed_emph,
    diff_hunk,
    diff_context,
    diff_file,
    marker_edit,
    marker_rejected,
    marker_error,
    marker_clipped,
    marker_test,
    onset,
    sparkline,
    help_key,
);

impl Theme {
    /// The names of the embedded presets (`themes/*.toml`).
    pub fn preset_names() -> &'static [&'static str] {
        &PRESET_NAMES
    }

    /// Loads a preset by name, or a theme file by path. Colours are converted for `depth`.
    ///
    /// A file must define every slot, unless it sets `inherits = "<preset>"`: then it
    /// overrides only the slots it names. Under [`ColorDepth::NoColor`] the file is still checked,
    /// but the result is simply [`Theme::default()`] (modifiers only, designed to work without
    /// colour; the presets' modifiers assume colour and are not carried over).
    pub fn load(name_or_path: &str, depth: ColorDepth) -> Result<Theme, ConfigError> {
        if let Some((name, text)) = PRESETS.iter().find(|(name, _)| *name == name_or_path) {
            return parse_theme(text, &preset_path(name), name, depth);
        }
        let path = Path::new(name_or_path);
        let text = crate::files::read_regular(path, crate::files::THEME).map_err(|e| {
            let looks_like_name = path.extension().is_none() && path.components().count() == 1;
            if e.is_not_found() && looks_like_name {
                let presets = PRESET_NAMES.join(", ");
                let message = format!("unknown theme (presets: {presets}; or give the path of a theme file)");
                ConfigError::Invalid { path: path.to_path_buf(), line: None, message }
            } else {
                e.into()
            }
        })?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        parse_theme(&text, path, &stem, depth)
    }
}

fn preset_path(name: &str) -> std::path::PathBuf {
    Path::new("themes").join(format!("{name}.toml"))
}

fn parse_theme(text: &str, path: &Path, name: &str, depth: ColorDepth) -> Result<Theme, ConfigError> {
    let raw: BTreeMap<Spanned<String>, Spanned<toml::Value>> =
        toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
    let err = |span: std::ops::Range<usize>, message: String| ConfigError::at(path, text, Some(span), message);
    let string = |value: &Spanned<toml::Value>, key: &str| match value.get_ref() {
        toml::Value::String(s) => Ok(s.clone()),
        _ => Err(err(value.span(), format!("`{key}` must be a string"))),
    };
    let mut theme = Theme { name: name.to_string(), syntax: None, ..Theme::default() };
    let mut defined: Vec<&str> = Vec::new();
    if let Some((_, base)) = raw.iter().find(|(key, _)| key.get_ref() == "inherits") {
        let base_name = string(base, "inherits")?;
        let Some((preset, base_text)) = PRESETS.iter().find(|(n, _)| *n == base_name) else {
            let message = format!("`inherits` must name a preset ({}), not `{base_name}`", PRESET_NAMES.join(", "));
            return Err(err(base.span(), message));
        };
        theme = Theme { name: name.to_string(), ..parse_theme(base_text, &preset_path(preset), preset, depth)? };
        defined.extend(SLOT_NAMES);
    }
    for (key, value) in &raw {
        match key.get_ref().as_str() {
            "inherits" => {}
            "name" => theme.name = string(value, "name")?,
            "syntax" => {
                let syntax = string(value, "syntax")?;
                if !syntax.is_empty() && !crate::tui::highlight::syntect_theme_names().contains(&syntax.as_str()) {
                    return Err(err(value.span(), format!("unknown syntax theme `{syntax}`")));
                }
                theme.syntax = Some(syntax).filter(|s| !s.is_empty());
            }
            slot_name => {
                let mut slots = slots_mut(&mut theme);
                let Some((slot_name, slot)) = slots.iter_mut().find(|(n, _)| *n == slot_name) else {
                    let message = format!("unknown theme slot `{slot_name}` (slots: {})", SLOT_NAMES.join(", "));
                    return Err(err(key.span(), message));
                };
                **slot = parse_style(value.get_ref(), depth)
                    .map_err(|m| err(value.span(), format!("slot `{slot_name}`: {m}")))?;
                defined.push(*slot_name);
            }
        }
    }
    let missing: Vec<&str> = SLOT_NAMES.iter().copied().filter(|s| !defined.contains(s)).collect();
    if !missing.is_empty() {
        let message = format!(
            "missing theme slots: {} (define them, or add `inherits = \"dark\"` to take the rest from a preset)",
            missing.join(", ")
        );
        return Err(ConfigError::Invalid { path: path.to_path_buf(), line: None, message });
    }
    Ok(if depth == ColorDepth::NoColor { Theme::default() } else { Theme { depth, ..theme } })
}

fn parse_style(value: &toml::Value, depth: ColorDepth) -> Result<Style, String> {
    let table = value.as_table().ok_or("expected a table such as { fg = \"#c9d1d9\", bold = true }")?;
    let mut style = Style::default();
    // `fg256` / `bg256`: the colour to use on 256-colour terminals, where the nearest colour of a
    // subtle `#rrggbb` is often a grey (diff backgrounds would all look alike).
    let mut ansi: Vec<(bool, Color)> = Vec::new();
    for (key, value) in table {
        let modifier = match key.as_str() {
            "fg" => {
                style = style.fg(parse_color(value, depth)?);
                continue;
            }
            "bg" => {
                style = style.bg(parse_color(value, depth)?);
                continue;
            }
            "fg256" | "bg256" => {
                let index = value.as_integer().and_then(|i| u8::try_from(i).ok());
                let index = index.ok_or_else(|| format!("`{key}` must be a colour index 0-255"))?;
                ansi.push((key == "fg256", Color::Indexed(index)));
                continue;
            }
            "bold" => Modifier::BOLD,
            "italic" => Modifier::ITALIC,
            "underline" => Modifier::UNDERLINED,
            "reversed" => Modifier::REVERSED,
            "dim" => Modifier::DIM,
            "crossed_out" => Modifier::CROSSED_OUT,
            other => {
                let expected = "fg, bg, fg256, bg256, bold, italic, underline, reversed, dim, crossed_out";
                return Err(format!("unknown key `{other}` (expected {expected})"));
            }
        };
        match value.as_bool() {
            Some(true) => style = style.add_modifier(modifier),
            Some(false) => {}
            None => return Err(format!("`{key}` must be true or false")),
        }
    }
    // The 256-colour hints are saturated where `#rrggbb` is subtle: 16 colours take them too.
    if matches!(depth, ColorDepth::Ansi256 | ColorDepth::Ansi16) {
        for (is_fg, color) in ansi {
            let color = for_depth(color, depth);
            style = if is_fg { style.fg(color) } else { style.bg(color) };
        }
    }
    Ok(style)
}

fn parse_color(value: &toml::Value, depth: ColorDepth) -> Result<Color, String> {
    let color = match value {
        toml::Value::Integer(i) => {
            u8::try_from(*i).map(Color::Indexed).map_err(|_| format!("colour index {i} is not 0-255"))
        }
        toml::Value::String(s) => s.parse::<Color>().map_err(|_| format!("unknown colour `{s}`")),
        _ => Err("a colour is \"#rrggbb\", a name such as \"red\", or an index 0-255".to_string()),
    }?;
    Ok(for_depth(color, depth))
}
#[cfg(test)]
mod tests;
