use std::sync::Arc;
use std::time::Instant;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::*;
use crate::tui::highlight::MAX_HIGHLIGHT_DIFF_LINES;

const ADDED_BG: Color = Color::Rgb(0, 40, 0);
const REMOVED_BG: Color = Color::Rgb(60, 0, 0);
const ADDED_EMPH_BG: Color = Color::Rgb(0, 100, 0);
const REMOVED_EMPH_BG: Color = Color::Rgb(140, 0, 0);

/// A coloured theme with syntax colours, so layering can be checked.
fn coloured() -> Theme {
    Theme {
        name: "test-dark".into(),
        syntax: Some("base16-eighties.dark".into()),
        depth: crate::tui::theme::ColorDepth::TrueColor,
        diff_added: Style::default().fg(Color::Green).bg(ADDED_BG),
        diff_removed: Style::default().fg(Color::Red).bg(REMOVED_BG),
        diff_added_emph: Style::default().bg(ADDED_EMPH_BG).add_modifier(Modifier::BOLD),
        diff_removed_emph: Style::default().bg(REMOVED_EMPH_BG),
        diff_hunk: Style::default().fg(Color::Cyan),
        diff_file: Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        muted: Style::default().fg(Color::DarkGray),
        ..Theme::default()
    }
}

fn text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

fn width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| s.content.width()).sum()
}

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(text).collect()
}

fn render(path: &str, source: DiffSource<'_>, mode: DiffMode, w: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_lines(path, source, mode, w, theme)
}

/// The span holding exactly `content` on the line whose text contains `marker`.
fn span<'l>(lines: &'l [Line<'static>], marker: &str, content: &str) -> &'l Span<'static> {
    let line = lines.iter().find(|l| text(l).contains(marker)).unwrap_or_else(|| panic!("no line with {marker}"));
    line.spans.iter().find(|s| s.content == content).unwrap_or_else(|| panic!("no span {content:?} in {line:?}"))
}

#[test]
fn empty_diff_is_a_single_muted_no_change_line() {
    let theme = coloured();
    for source in [DiffSource::Texts { old: "a\n", new: "a\n" }, DiffSource::Unified(""), DiffSource::Unified("\n")] {
        for mode in [DiffMode::Unified, DiffMode::SideBySide] {
            let lines = render("x.py", source, mode, 80, &theme);
            assert_eq!(lines, [Line::from(Span::styled("no change", theme.muted))]);
        }
    }
}

#[test]
fn unified_layout_has_header_gutter_sign_and_marker() {
    let old = "a\nb\nc\n";
    let new = "a\nB\nc";
    let lines = render("notes.txt", DiffSource::Texts { old, new }, DiffMode::Unified, 0, &Theme::default());
    assert_eq!(
        texts(&lines),
        ["@@ -1,3 +1,3 @@", "1 1  a", "2   -b", "3   -c", "  2 +B", "  3 +c", "     \\ No newline at end of file",]
    );
    assert_eq!(lines[2].spans[0].style, Theme::default().muted, "the gutter is muted");
}

#[test]
fn a_file_header_is_shown_only_when_it_says_more_than_the_callers_path() {
    let theme = Theme::default();
    let one = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";
    let lines = render("x.py", DiffSource::Unified(one), DiffMode::Unified, 0, &theme);
    assert!(text(&lines[0]).starts_with("@@"), "same path as the caller's: no header");
    let lines = render("other.py", DiffSource::Unified(one), DiffMode::Unified, 0, &theme);
    assert_eq!(text(&lines[0]), "x.py");
    let created = "--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+b\n";
    let lines = render("x.py", DiffSource::Unified(created), DiffMode::Unified, 0, &theme);
    assert_eq!(text(&lines[0]), "x.py (new file)");
    assert_eq!(lines[0].spans[1].style, theme.muted);
}

#[test]
fn changed_lines_are_padded_with_their_background_only() {
    let theme = coloured();
    let lines = render("a.txt", DiffSource::Texts { old: "x\n", new: "y\n" }, DiffMode::Unified, 30, &theme);
    let added = lines.iter().find(|l| text(l).contains("+y")).unwrap();
    assert_eq!(width(added), 30);
    assert_eq!(added.spans.last().unwrap().style, Style::default().bg(ADDED_BG));
}

#[test]
fn syntax_colours_follow_the_colour_depth() {
    let mut r = DiffRenderer::new();
    let ansi = Theme { depth: crate::tui::theme::ColorDepth::Ansi256, ..coloured() };
    let lines =
        r.render(1, "a.py", DiffSource::Texts { old: "x = 1\n", new: "x = 'two'\n" }, DiffMode::Unified, 60, &ansi);
    let colours: Vec<Color> = lines.iter().flat_map(|l| l.spans.iter().filter_map(|s| s.style.fg)).collect();
    assert!(colours.iter().any(|c| matches!(c, Color::Indexed(_))), "{colours:?}");
    assert!(!colours.iter().any(|c| matches!(c, Color::Rgb(..))), "no 24-bit colour in 256-colour mode: {colours:?}");
}

#[test]
fn word_emphasis_marks_only_the_changed_token() {
    let (old, new) = ("x = compute(a, b)\n", "x = compute(a, c)\n");
    // No-colour theme: emphasis is a modifier; exactly one span per side carries it.
    let plain = Theme::default();
    let lines = render("m.txt", DiffSource::Texts { old, new }, DiffMode::Unified, 0, &plain);
    for (sign, token, emph) in [("-x", "b", plain.diff_removed_emph), ("+x", "c", plain.diff_added_emph)] {
        let line = lines.iter().find(|l| text(l).contains(sign)).unwrap();
        let modifier = emph.add_modifier;
        let emphasised: Vec<&str> =
            line.spans.iter().filter(|s| s.style.add_modifier.contains(modifier)).map(|s| s.content.as_ref()).collect();
        assert_eq!(emphasised, [token], "{line:?}");
    }
    // Colour theme with syntax: the emph background sits on the changed token only, and the
    // rest of the line keeps the diff background under syntax foregrounds.
    let theme = coloured();
    let lines = render("m.py", DiffSource::Texts { old, new }, DiffMode::Unified, 0, &theme);
    for (sign, token, bg, emph_bg) in [("-x", "b", REMOVED_BG, REMOVED_EMPH_BG), ("+x", "c", ADDED_BG, ADDED_EMPH_BG)] {
        let line = lines.iter().find(|l| text(l).contains(sign)).unwrap();
        let content = &line.spans[3..]; // after gutter, sign and the pin
        for s in content {
            let expected = if s.content == token { emph_bg } else { bg };
            assert_eq!(s.style.bg, Some(expected), "{s:?}");
            assert!(matches!(s.style.fg, Some(Color::Rgb(..))), "syntax foreground: {s:?}");
        }
        assert!(content.iter().any(|s| s.content == token));
    }
    assert_eq!(span(&lines, "+x", "c").style.add_modifier, Modifier::BOLD);
    // Context lines: syntax colours, no diff background.
    let lines = render(
        "m.py",
        DiffSource::Texts { old: "y = 1\nx = 2\n", new: "y = 1\nx = 3\n" },
        DiffMode::Unified,
        0,
        &theme,
    );
    let context = lines.iter().find(|l| text(l).contains("y = 1")).unwrap();
    assert!(context.spans[3..].iter().all(|s| s.style.bg.is_none() && matches!(s.style.fg, Some(Color::Rgb(..)))));
}

#[test]
fn side_by_side_pairs_in_order_and_pads_the_shorter_side() {
    let old = "keep\nold1\nold2\nkeep2\n";
    let new = "keep\nnew1\nkeep2\nadded 漢字\n";
    let w = 41; // two columns of 20 and a separator
    let lines = render("f.txt", DiffSource::Texts { old, new }, DiffMode::SideBySide, w, &coloured());
    let rows: Vec<(String, String)> = lines[1..]
        .iter()
        .map(|l| {
            let t = text(l);
            let (left, right) = t.split_once('│').unwrap();
            (left.to_string(), right.to_string())
        })
        .collect();
    let expected = [
        ("1  keep", "1  keep"),
        ("2 -old1", "2 +new1"),
        ("3 -old2", ""),
        ("4  keep2", "3  keep2"),
        ("", "4 +added 漢字"),
    ];
    assert_eq!(rows.len(), expected.len());
    for ((left, right), (el, er)) in rows.iter().zip(expected) {
        assert_eq!((left.trim_end(), right.trim_end()), (el, er));
        assert_eq!((left.width(), right.width()), (20, 20), "{left:?} | {right:?}");
    }
    assert!(lines.iter().all(|l| width(l) == usize::from(w)), "every row is exactly the width");
}

#[test]
fn side_by_side_cuts_long_and_wide_lines_with_an_ellipsis() {
    let old = "short\n";
    let new = format!("{}\n", "漢".repeat(30));
    let lines = render("f.txt", DiffSource::Texts { old, new: &new }, DiffMode::SideBySide, 41, &Theme::default());
    let row = lines.iter().find(|l| text(l).contains('漢')).unwrap();
    let t = text(row);
    let (left, right) = t.split_once('│').unwrap();
    assert_eq!(left.trim_end(), "1 -short");
    assert!(right.trim_end().ends_with('…'), "{right:?}");
    assert_eq!((left.width(), right.width()), (20, 20));
    // A long header is cut too: side by side never wraps.
    let patch = format!("--- a/{0}x\n+++ b/{0}x\n@@ -1 +1 @@\n-a\n+b\n", "p/".repeat(40));
    let lines = render("x", DiffSource::Unified(&patch), DiffMode::SideBySide, 41, &Theme::default());
    assert!(text(&lines[0]).ends_with('…') && width(&lines[0]) == 41, "{:?}", texts(&lines));
}

const TWO_FILES_CRLF: &str = "diff --git a/src/app.py b/src/app.py\r\nindex 1..2 100644\r\n--- a/src/app.py\r\n\
    +++ b/src/app.py\r\n@@ -1,2 +1,2 @@\r\n import os\r\n-x = 1\r\n+x = 2\r\n\
    diff --git a/README.md b/README.md\r\n--- a/README.md\r\n+++ b/README.md\r\n@@ -3 +3 @@\r\n-old\r\n+new\r\n\
    \\ No newline at end of file\r\n";

#[test]
fn a_unified_diff_with_two_files_and_crlf_shows_both_headers() {
    for mode in [DiffMode::Unified, DiffMode::SideBySide] {
        let lines = render("ignored.txt", DiffSource::Unified(TWO_FILES_CRLF), mode, 80, &coloured());
        let all = texts(&lines);
        assert!(all[0].starts_with("src/app.py"), "{all:?}");
        assert!(all.iter().any(|t| t.starts_with("README.md")), "{all:?}");
        assert!(all.iter().any(|t| t.starts_with("@@ -3 +3 @@")));
        assert!(all.iter().any(|t| t.contains("No newline at end of file")));
        assert!(!all.iter().any(|t| t.contains('\r') || t.contains("index 1..2")), "{all:?}");
        let header = span(&lines, "src/app.py", "src/app.py");
        assert_eq!(header.style, coloured().diff_file);
    }
}

#[test]
fn escapes_and_tabs_never_reach_a_span() {
    let old = "\tprint('\u{1b}[31mred\u{1b}[0m')\r\n\tx\u{7}=1\n";
    let new = "\tprint('\u{1b}]0;pwned\u{7}blue')\n\tx\u{7}=2\r\n\u{1b}[2Jmore\tstuff\rhere\n";
    let patch = "--- a/e\u{1b}[1m.py\n+++ b/e\u{1b}[1m.py\n@@ -1 +1 @@\n-\t\u{1b}[31mold\n+\tnew\u{1b}[0m\t!\n";
    let sources = [DiffSource::Texts { old, new }, DiffSource::Unified(patch)];
    for theme in [coloured(), Theme::default()] {
        for source in sources {
            for mode in [DiffMode::Unified, DiffMode::SideBySide] {
                let lines = render("e.py", source, mode, 60, &theme);
                assert!(lines.len() > 2);
                for span in lines.iter().flat_map(|l| &l.spans) {
                    let bad = ['\u{1b}', '\t', '\r', '\n', '\u{7}'];
                    assert!(!span.content.contains(bad), "{span:?}");
                }
            }
        }
    }
    let lines =
        render("e.py", DiffSource::Texts { old: "\tx\n", new: "\ty\n" }, DiffMode::Unified, 0, &Theme::default());
    assert!(texts(&lines).contains(&"  1 +    y".to_string()), "a tab is four columns: {:?}", texts(&lines));
}

#[test]
fn the_cache_returns_the_same_arc_per_key_and_renders_again_for_another_width() {
    let mut renderer = DiffRenderer::new();
    let theme = coloured();
    let source = DiffSource::Texts { old: "a\n", new: "b\n" };
    let first = renderer.render(7, "a.rs", source, DiffMode::SideBySide, 80, &theme);
    let again = renderer.render(7, "a.rs", source, DiffMode::SideBySide, 80, &theme);
    assert!(Arc::ptr_eq(&first, &again));
    let narrower = renderer.render(7, "a.rs", source, DiffMode::SideBySide, 60, &theme);
    assert!(!Arc::ptr_eq(&first, &narrower));
    assert_eq!(width(&narrower[1]), 60, "two columns of 29, a separator and a blank column");
    let unified = renderer.render(7, "a.rs", source, DiffMode::Unified, 80, &theme);
    assert!(!Arc::ptr_eq(&first, &unified));
    let other_theme = renderer.render(7, "a.rs", source, DiffMode::SideBySide, 80, &Theme::default());
    assert!(!Arc::ptr_eq(&first, &other_theme));
    assert!(renderer.is_cached(7, DiffMode::SideBySide, 80, &theme));
    // Bounded: the oldest entries are evicted.
    for key in 100..100 + CACHE_CAPACITY as u64 {
        renderer.render(key, "a.rs", source, DiffMode::Unified, 80, &theme);
    }
    assert!(!renderer.is_cached(7, DiffMode::SideBySide, 80, &theme));
}

/// Content spans of a unified line (after gutter and sign).
fn has_syntax_colour(line: &Line<'_>, theme: &Theme) -> bool {
    line.spans[2..].iter().any(|s| s.style.fg.is_some() && s.style.fg != theme.diff_added.fg)
}

/// The body's lines (after the hunk header) with syntax colours.
fn coloured_lines(lines: &[Line<'static>], theme: &Theme) -> usize {
    lines[1..].iter().filter(|l| has_syntax_colour(l, theme)).count()
}

/// `n` lines of Python, each assigning a value.
fn assignments(n: usize) -> String {
    (0..n).map(|i| format!("value_{i} = compute({i})\n")).collect()
}

#[test]
fn a_10000_line_diff_renders_and_only_its_first_5000_lines_are_highlighted() {
    let theme = coloured();
    let new: String = (0..10_000).map(|i| format!("value_{i} = compute({i}, 'line {i}')\n")).collect();
    let lines = render("big.py", DiffSource::Texts { old: "", new: &new }, DiffMode::Unified, 100, &theme);
    assert_eq!(lines.len(), 1 + 10_000);
    assert_eq!(text(&lines[0]).trim_end(), "@@ -0,0 +1,10000 @@");
    assert_eq!(text(&lines[1]).trim_end(), "          1 +value_0 = compute(0, 'line 0')");
    assert_eq!(text(lines.last().unwrap()).trim_end(), "      10000 +value_9999 = compute(9999, 'line 9999')");
    let body = &lines[1..];
    assert!(body[..MAX_HIGHLIGHT_DIFF_LINES].iter().all(|l| has_syntax_colour(l, &theme)));
    assert!(body[MAX_HIGHLIGHT_DIFF_LINES..].iter().all(|l| !has_syntax_colour(l, &theme)));
    // The same through the unified parser, side by side.
    let patch = format!("--- a/big.py\n+++ b/big.py\n@@ -1,10000 +1,10000 @@\n{}", {
        let mut s = String::new();
        for i in 0..5_000 {
            s.push_str(&format!("-old {i}\n+new {i}\n"));
        }
        s
    });
    let lines = render("big.py", DiffSource::Unified(&patch), DiffMode::SideBySide, 61, &theme);
    assert_eq!(lines.len(), 1 + 5_000);
    assert_eq!(text(&lines[1]).split('│').map(str::trim_end).collect::<Vec<_>>(), ["   1 -old 0", "   1 +new 0"]);
    let last: Vec<String> = text(lines.last().unwrap()).split('│').map(|s| s.trim_end().to_string()).collect();
    assert_eq!(last, ["5000 -old 4999", "5000 +new 4999"]);
}

#[test]
fn a_401_char_line_is_drawn_without_syntax_colours() {
    let theme = coloured();
    let long = format!("x = '{}'", "a".repeat(395));
    assert_eq!(long.chars().count(), 401);
    let new = format!("y = 1\n{long}\n");
    let lines = render("l.py", DiffSource::Texts { old: "", new: &new }, DiffMode::Unified, 0, &theme);
    assert!(has_syntax_colour(&lines[1], &theme));
    assert!(!has_syntax_colour(&lines[2], &theme));
    assert_eq!(lines[2].spans[3].style, theme.diff_added, "after gutter, sign and the pin");
}

/// Render-time check: `cargo test [--release] --lib diff::tests::timing -- --ignored --nocapture`.
#[test]
#[ignore = "timing report, not a check"]
fn timing_2000_line_diff() {
    // 1,700 lines, every fifth changed: one ~2,040-line diff of hunks merged by their context.
    let line = |i: usize, v: &str| format!("    total_{i} = compute(total, {i}, {v})  # step {i}\n");
    let old: String = (0..1_700).map(|i| line(i, "a")).collect();
    let new: String = (0..1_700).map(|i| line(i, if i % 5 == 0 { "b" } else { "a" })).collect();
    let mut theme = coloured();
    if std::env::var_os("NO_SYNTAX").is_some() {
        theme.syntax = None;
    }
    let start = Instant::now();
    crate::tui::highlight::syntax_set();
    crate::tui::highlight::syntect_theme("base16-eighties.dark");
    eprintln!("loading syntaxes and theme: {:?}", start.elapsed());
    for mode in [DiffMode::Unified, DiffMode::SideBySide] {
        let mut renderer = DiffRenderer::new();
        let source = DiffSource::Texts { old: &old, new: &new };
        let start = Instant::now();
        let first = renderer.render(1, "t.py", source, mode, 160, &theme);
        let cold = start.elapsed();
        let start = Instant::now();
        let second = renderer.render(1, "t.py", source, mode, 160, &theme);
        let warm = start.elapsed();
        assert!(Arc::ptr_eq(&first, &second));
        let start = Instant::now();
        renderer.render(2, "t.py", source, mode, 160, &theme);
        let again = start.elapsed();
        eprintln!("{mode:?}: {} lines, first render {cold:?}, cached {warm:?}, other key {again:?}", first.len());
    }
}

#[test]
fn bad_input_never_panics_and_side_by_side_rows_keep_their_width() {
    let long = "é漢\t".repeat(20_000);
    let patches = [
        "not a diff at all\njust text\n".to_string(),
        "@@ -1,5 +1,5 @@\n-only one line, counts lie\n".to_string(),
        "@@ -1 +1 @@\n\\ No newline at end of file\n".to_string(),
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@@ -1 -1 +1 @@@\n- a\n".to_string(),
        "--- a/x\n".to_string(),
        format!("@@ -1 +1 @@\n-{long}\n+{long}x\n"),
        "\u{0}\u{1}\u{7f}\u{9b}\r\r\n@@ -1 +1 @@\n-\u{200b}\n+\u{202e}\n".to_string(),
    ];
    let theme = coloured();
    for patch in &patches {
        for w in [0u16, 1, 2, 3, 80] {
            let lines = render("x.rs", DiffSource::Unified(patch), DiffMode::SideBySide, w, &theme);
            assert!(lines.iter().all(|l| l.spans.is_empty() || width(l) == usize::from(w)), "{patch:?} at {w}");
            render("x.rs", DiffSource::Unified(patch), DiffMode::Unified, w, &theme);
            render("x.rs", DiffSource::Texts { old: patch, new: "" }, DiffMode::SideBySide, w, &theme);
        }
    }
}

#[test]
fn long_diffs_are_shown_at_once_and_coloured_later() {
    let theme = coloured();
    let new = assignments(1_000);
    let mut r = DiffRenderer::new();
    let first = r.render(7, "big.py", DiffSource::Texts { old: "", new: &new }, DiffMode::Unified, 100, &theme);
    assert_eq!(coloured_lines(&first, &theme), super::FIRST_BUDGET);
    assert!(r.finish_one(), "the rest is still to colour");
    assert!(!r.finish_one(), "nothing left");
    let done = r.render(7, "big.py", DiffSource::Texts { old: "", new: &new }, DiffMode::Unified, 100, &theme);
    assert_eq!(coloured_lines(&done, &theme), 1_000);
    assert_eq!(texts(&first), texts(&done), "same text, more colour");
    // A short diff is complete at once (in a frame of its own: this one's budget is spent).
    r.new_frame(50);
    r.render(8, "small.py", DiffSource::Texts { old: "a = 1\n", new: "a = 2\n" }, DiffMode::Unified, 100, &theme);
    assert!(!r.finish_one());
}

#[test]
fn a_frame_colours_no_more_lines_than_it_has_rows_among_its_new_diffs() {
    let theme = coloured();
    let new = assignments(100);
    let mut r = DiffRenderer::new();
    r.new_frame(30);
    let source = DiffSource::Texts { old: "", new: &new };
    let first = r.render(1, "a.py", source, DiffMode::Unified, 100, &theme);
    let second = r.render(2, "b.py", source, DiffMode::Unified, 100, &theme);
    assert_eq!(coloured_lines(&first, &theme), 30);
    assert_eq!(coloured_lines(&second, &theme), 0, "the frame's budget is spent");
    // The next frame has its own budget; both diffs are coloured in full when the reviewer
    // is not typing.
    r.new_frame(30);
    assert_eq!(coloured_lines(&r.render(3, "c.py", source, DiffMode::Unified, 100, &theme), &theme), 30);
    while r.finish_one() {}
    for key in [1, 2, 3] {
        let done = r.render(key, "x.py", source, DiffMode::Unified, 100, &theme);
        assert_eq!(coloured_lines(&done, &theme), 100, "diff {key}");
    }
}

#[test]
fn lines_left_without_colour_do_not_spend_the_frames_budget() {
    let theme = coloured();
    let new = assignments(100);
    let mut r = DiffRenderer::new();
    r.new_frame(30);
    let source = DiffSource::Texts { old: "", new: &new };
    // A file of no known syntax: its 100 lines (and its header) are drawn uncoloured.
    let plain = r.render(1, "notes.unknown-extension", source, DiffMode::Unified, 100, &theme);
    assert_eq!(coloured_lines(&plain, &theme), 0);
    let python = r.render(2, "b.py", source, DiffMode::Unified, 100, &theme);
    assert_eq!(coloured_lines(&python, &theme), 30, "the budget is the frame's, untouched by the plain diff");
}
