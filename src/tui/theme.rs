//! Themes: colour slots named by meaning. Presets live in `themes/*.toml` and are embedded.

use ratatui::style::Style;

/// Every style the views use. Slots are named by meaning, not by colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Name of the syntect theme used for syntax colours in diffs; `None` for no syntax colours.
    pub syntax: Option<String>,
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
    pub sparkline: Style,
    pub help_key: Style,
}

impl Default for Theme {
    /// A theme with no colours at all (what `NO_COLOR` gives): structure by modifiers only.
    fn default() -> Theme {
        use ratatui::style::Modifier;
        let plain = Style::default();
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let reverse = Style::default().add_modifier(Modifier::REVERSED);
        Theme {
            name: "no-color".to_string(),
            syntax: None,
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
            sparkline: plain,
            help_key: bold,
        }
    }
}
