//! The step panel: thought, action, observation (folded unless expanded) and the step's edits
//! as highlighted diffs. Built once per (step, width, options) and cached; each frame draws
//! only the visible window of it.

use super::ViewCtx;
use crate::analysis::reconstruct::unplaced::is_unplaced;
use crate::store::Cut;
use crate::store::browse::{EditText, StepBody};
use crate::tui::app::RunView;
use crate::tui::diff::{DiffMode, DiffSource};
use crate::tui::text::{self, marked, search_words};
use crate::tui::theme::Theme;
use lru::LruCache;
use ratatui::text::{Line, Span};
use std::num::NonZeroUsize;
use std::sync::Arc;

/// Observations longer than this many wrapped lines are folded to head and tail.
pub const FOLD_HEAD: usize = 40;
pub const FOLD_TAIL: usize = 12;

/// What a cached panel was built from: (run, panel kind, step or file, width, (unfolded,
/// wrapped), diff mode, search query, theme).
pub type Key = (i64, u8, i64, u16, (bool, bool), u8, String, String, u64);

/// Built panel contents (wrapped, highlighted), reused while nothing they depend on changes.
pub struct BodyCache(LruCache<Key, Arc<Vec<Line<'static>>>>);

impl Default for BodyCache {
    fn default() -> BodyCache {
        BodyCache(LruCache::new(NonZeroUsize::new(16).unwrap_or(NonZeroUsize::MIN)))
    }
}

impl BodyCache {
    pub fn clear(&mut self) {
        self.0.clear();
    }
    pub fn get(&mut self, key: &Key) -> Option<Arc<Vec<Line<'static>>>> {
        self.0.get(key).cloned()
    }
    pub fn put(&mut self, key: Key, lines: Arc<Vec<Line<'static>>>) {
        self.0.put(key, lines);
    }
}

/// The cache key of a panel of `run`.
pub fn key(run: &RunView, kind: u8, index: i64, width: u16, theme: &Theme) -> Key {
    let query = run.search.as_ref().map(|s| s.query.clone()).unwrap_or_default();
    let mode = match run.diff_mode {
        DiffMode::Unified => 0,
        DiffMode::SideBySide => 1,
    };
    // The step's notes are drawn with it: a note written changes the body.
    let notes = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        run.notes_of(index).for_each(|n| (&n.rater, &n.text).hash(&mut h));
        // A body read ahead of the reading is replaced by the stored one, edits and all.
        (run.is_peeked(index), run.while_read).hash(&mut h);
        h.finish()
    };
    (run.run_id(), kind, index, width, (run.unfolded, run.wrap), mode, query, theme.name.clone(), notes)
}

pub fn lines(run: &RunView, width: u16, ctx: &mut ViewCtx) -> (String, Arc<Vec<Line<'static>>>) {
    let Some(body) = run.body() else {
        let (title, note) = match run.step_index() {
            Some(i) if run.is_unread(run.cursor) => (format!("step {i}"), "not read yet: reading it from the file…"),
            Some(i) => (format!("step {i}"), "loading…"),
            None => ("steps".to_string(), "this run has no steps (Tab: tests, task and patches)"),
        };
        return (title, Arc::new(vec![Line::from(Span::styled(note, ctx.theme.muted))]));
    };
    let key = key(run, 0, body.step.index, width, &ctx.theme);
    let title = format!("step {} · {}", body.step.index, text::fit(body.step.tool.as_deref().unwrap_or("-"), 30));
    if let Some(hit) = ctx.bodies.get(&key) {
        return (title, hit);
    }
    let built = Arc::new(build(body, run, width, ctx));
    ctx.bodies.put(key, built.clone());
    (title, built)
}

fn build(body: &StepBody, run: &RunView, width: u16, ctx: &mut ViewCtx) -> Vec<Line<'static>> {
    let theme = ctx.theme.clone();
    let w = usize::from(width.max(1));
    let words = search_words(run.search.as_ref().map(|s| s.query.as_str()));
    let s = &body.step;
    let mut out: Vec<Line<'static>> = Vec::new();

    // Reviewers' notes on the step first: what someone wanted the next reader to see.
    for n in run.notes_of(s.index) {
        out.push(Line::from(vec![
            Span::styled("✎ note", theme.accent),
            Span::styled(format!(" · {}", text::fit(&n.rater, 30)), theme.muted),
        ]));
        out.extend(text::wrap(&n.text, w).into_iter().map(|l| Line::from(Span::styled(l, theme.accent))));
        out.push(Line::default());
    }
    let mut meta = Vec::new();
    if !s.flags.is_empty() {
        // In words: the step list already shows the markers.
        let f = s.flags;
        let words: Vec<&str> = [
            (f.edit && !f.edit_rejected, "edit"),
            (f.edit_rejected, "edit rejected"),
            (f.error, "error"),
            (f.output_clipped, "output clipped"),
            (f.test_run, "test run"),
            (f.format_error, "format error"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect();
        meta.push(words.join(", "));
    }
    if let Some(t) = s.execution_time {
        meta.push(format!("{t:.2} s"));
    }
    if let (Some(i), Some(o)) = (s.tokens_in, s.tokens_out) {
        meta.push(format!("tokens {i} in / {o} out"));
    }
    if let Some(ts) = &s.timestamp {
        meta.push(ts.clone());
    }
    if !meta.is_empty() {
        out.push(Line::from(Span::styled(text::fit(&meta.join(" · "), w), theme.muted)));
    }
    // Shown before the reading is over: what only its end gives is said to be coming.
    if run.is_peeked(s.index) {
        let note = "read from the file ahead of the reading: its edits come when it is stored";
        out.extend(text::wrap(note, w).into_iter().map(|l| Line::from(Span::styled(l, theme.muted))));
    }
    if run.while_read {
        let note = "shell edits not yet reconstructed: they come when the reading ends";
        out.extend(text::wrap(note, w).into_iter().map(|l| Line::from(Span::styled(l, theme.muted))));
    }
    // Wrapped to the panel, or (z) whole lines cut when drawn and scrolled sideways.
    let w = if run.wrap { w } else { usize::MAX };
    let page = Page { width: w, words: &words, theme: &theme, run: body.run_id, step: s.index };
    section(&mut out, "thought", &s.thought, s.cuts[0], &page, None);
    section(&mut out, "action", &s.action, s.cuts[1], &page, None);
    let fold = (!run.unfolded).then_some((FOLD_HEAD, FOLD_TAIL));
    let title = format!("observation · {} chars", s.observation_chars);
    // A command that printed nothing says so, rather than leaving the reader to wonder.
    let observation =
        if s.observation.trim().is_empty() && !s.action.trim().is_empty() { "(no output)" } else { &s.observation };
    section(&mut out, &title, observation, s.cuts[2], &page, fold);
    for e in &body.edits {
        edit(&mut out, e, run.diff_mode, width, ctx, &theme);
    }
    out
}

/// What every section of a step's panel is drawn with.
struct Page<'a> {
    width: usize,
    words: &'a [String],
    theme: &'a Theme,
    run: i64,
    step: i64,
}

/// A titled text, wrapped, folded to its head and tail lines when `fold` says so; a text read in
/// part (`cut`) shows where its unread middle is, between its head and its tail (each folded on
/// its own side).
fn section(
    out: &mut Vec<Line<'static>>,
    title: &str,
    body: &str,
    cut: Option<Cut>,
    page: &Page,
    fold: Option<(usize, usize)>,
) {
    if body.trim().is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(Line::default());
    }
    let theme = page.theme;
    out.push(Line::from(Span::styled(title.to_string(), theme.header)));
    let wrap = |t: &str| if page.width == usize::MAX { text::unwrapped(t) } else { text::wrap(t, page.width) };
    let mark = |l: &String| marked(l.clone(), theme.text, page.words, theme.search_match);
    let between = |what: String| Line::from(Span::styled(format!("  ⋯ {what} ⋯"), theme.muted));
    let Some(cut) = cut else {
        let lines = wrap(body.trim_end_matches(['\n', '\r']));
        match fold {
            Some((head, tail)) if lines.len() > head + tail + 1 => {
                out.extend(lines[..head].iter().map(mark));
                out.push(between(format!("{} more lines folded (o: show all)", lines.len() - head - tail)));
                out.extend(lines[lines.len() - tail..].iter().map(mark));
            }
            _ => out.extend(lines.iter().map(mark)),
        }
        return;
    };
    let head = wrap(body.get(..cut.at).unwrap_or(body).trim_end_matches(['\n', '\r']));
    let tail = wrap(body.get(cut.at..).unwrap_or("").trim_end_matches(['\n', '\r']));
    let (h, t) = fold.unwrap_or((usize::MAX, usize::MAX));
    let (h, t) = (head.len().min(h), tail.len().min(t));
    let folded = head.len() - h + tail.len() - t;
    let unread = format!(
        "{:.1} MB not read here (`trajan show {} --step {}` prints it whole)",
        cut.omitted as f64 / 1e6,
        page.run,
        page.step
    );
    out.extend(head[..h].iter().map(mark));
    if folded > 0 {
        out.push(between(format!("{folded} more lines folded (o: show all)")));
    }
    // Wrapped: the command to read it whole must fit a narrow panel.
    let width = if page.width == usize::MAX { usize::MAX } else { page.width.saturating_sub(2).max(1) };
    out.extend(
        text::wrap(&format!("⋯ {unread} ⋯"), width)
            .into_iter()
            .map(|l| Line::from(Span::styled(format!("  {l}"), theme.muted))),
    );
    out.extend(tail[tail.len() - t..].iter().map(mark));
}

fn edit(out: &mut Vec<Line<'static>>, e: &EditText, mode: DiffMode, width: u16, ctx: &mut ViewCtx, theme: &Theme) {
    out.push(Line::default());
    // A shell command that ran but provably changed nothing: say so rather than "applied".
    let unchanged = e.line.changed_nothing();
    let status_style = if e.line.is_rejected() {
        theme.error
    } else if unchanged {
        theme.warning
    } else if e.line.status == crate::model::EditStatus::Applied {
        theme.ok
    } else {
        theme.muted
    };
    let lint =
        if e.line.lint_codes.is_empty() { String::new() } else { format!(" ({})", e.line.lint_codes.join(", ")) };
    let kind = format!("{} ", e.line.kind);
    let status = if unchanged { "ran, changed nothing".to_string() } else { e.line.status.words() };
    let verdict = format!("{status}{}", text::fit(&lint, 40));
    // The verdict matters more than the full path: the path gets what is left.
    let path_width = usize::from(width).saturating_sub(kind.chars().count() + 3 + verdict.chars().count()).max(8);
    out.push(Line::from(vec![
        Span::styled(kind, theme.header),
        // Cut from the left: the file's name is what tells edits apart.
        Span::styled(text::fit_left(&e.line.path, path_width), theme.diff_file),
        Span::styled(" → ", theme.muted),
        Span::styled(verdict, status_style),
    ]));
    let w = usize::from(width.max(1));
    // A reconstructed edit: the command that made it, and how sure its diff is.
    if let Some(command) = &e.command {
        let first = command.lines().next().unwrap_or("");
        out.push(Line::from(vec![
            Span::styled("$ ", theme.muted),
            Span::styled(text::fit(first, w.saturating_sub(2)), theme.text),
        ]));
    }
    if let Some(c) = e.line.certainty {
        out.push(Line::from(Span::styled(text::fit(&certainty_note(e, c), w), certainty_style(c, theme))));
    }
    if e.partial {
        let note = "  the lines shown; lines the run never showed may have matched too";
        out.push(Line::from(Span::styled(text::fit(note, w), theme.muted)));
    }
    if let Some(step) = e.line.undone_at {
        out.push(Line::from(Span::styled(text::fit(&format!("  undone at step {step} (git)"), w), theme.warning)));
    }
    // The stored diff first: it is the one the ingest drew (or the tool's own, for OpenHands).
    let source = match (&e.old_text, &e.new_text, &e.diff) {
        (_, _, Some(diff)) => Some(DiffSource::Unified(diff)),
        (Some(old), Some(new), None) => Some(DiffSource::Texts { old, new }),
        (None, Some(new), None) => Some(DiffSource::Texts { old: "", new }),
        _ => None,
    };
    // Diffs name files repository-relative (`a/x`), edits absolutely (`/repo/x`).
    let path = e.line.path.trim_start_matches('/');
    match source {
        Some(src) => {
            let rendered = ctx.diff.render(e.line.id as u64, path, src, mode, width, theme);
            // Cut (and scrolled sideways) when drawn.
            out.extend(rendered.iter().cloned());
        }
        // Changed nothing: the certainty line above says why; there is no diff to draw.
        None if unchanged => {}
        None => {
            let why = match e.line.certainty {
                Some(_) => "  (too little of the file was shown to draw it)",
                None => "  (the trajectory does not carry this edit's text)",
            };
            out.push(Line::from(Span::styled(why, theme.muted)));
        }
    }
    // Contradicted: what the later view showed, against the reconstructed lines.
    if let Some(shown) = &e.shown {
        out.push(Line::from(Span::styled(
            text::fit("  what it showed instead (- reconstructed, + shown):", w),
            theme.warning,
        )));
        let rendered = ctx.diff.render(shown_key(e.line.id), path, DiffSource::Unified(shown), mode, width, theme);
        out.extend(rendered.iter().cloned());
    }
    // The submitted patch: which steps made each hunk.
    for h in &e.hunks {
        let steps: Vec<String> = h.steps.iter().map(usize::to_string).collect();
        let (note, style) = match (h.steps.is_empty(), h.explained) {
            (true, _) => {
                ("no step explains it (a script, or an edit whose text is missing)".to_string(), theme.warning)
            }
            (false, true) => (format!("made by step {}", steps.join(", ")), theme.muted),
            (false, false) => {
                (format!("partly made by step {}; the rest by no step shown", steps.join(", ")), theme.warning)
            }
        };
        let head = h.hunk.split(" @@").next().map(|x| format!("{x} @@")).unwrap_or_default();
        out.push(Line::from(Span::styled(text::fit(&format!("  {head} ← {note}"), w), style)));
    }
}

/// A diff cache key for an edit's "what it showed" diff, apart from its own.
fn shown_key(id: i64) -> u64 {
    (id as u64) | (1 << 62)
}

/// How sure a reconstructed edit's diff is, in words.
fn certainty_note(e: &EditText, c: crate::model::Certainty) -> String {
    use crate::model::{Certainty, CheckedBy};
    let by = |b: Option<CheckedBy>| match b {
        Some(CheckedBy::Step(s)) => format!("step {s}'s view"),
        Some(CheckedBy::Submission) => "the submitted patch".to_string(),
        None => "a later view".to_string(),
    };
    match c {
        Certainty::Verified => format!("  verified: {} showed these lines", by(e.checked_by)),
        Certainty::Contradicted => format!("  contradicted: {} showed other lines", by(e.checked_by)),
        Certainty::Simulated => "  simulated on the lines the run showed; nothing later showed them".to_string(),
        Certainty::Attributed => match e.checked_by {
            Some(b) => format!("  attributed: what {} showed changed (not simulated)", by(Some(b))),
            None if e.diff.as_deref().is_some_and(is_unplaced) => {
                "  attributed: the command's own old and new text, not placed (the run never showed where it is)"
                    .to_string()
            }
            None => "  attributed (not simulated)".to_string(),
        },
        Certainty::Unchanged => {
            "  changed nothing: its pattern or address matched no line shown, or it wrote what the file held"
                .to_string()
        }
        Certainty::Unknown => "  unknown: the run did not show enough of the file".to_string(),
        Certainty::TooLarge => {
            "  unknown (too large to replay): replaying it would pass a bound of the replay".to_string()
        }
    }
}

fn certainty_style(c: crate::model::Certainty, theme: &Theme) -> ratatui::style::Style {
    use crate::model::Certainty;
    match c {
        Certainty::Verified => theme.ok,
        Certainty::Contradicted => theme.error,
        Certainty::Unchanged | Certainty::Unknown | Certainty::TooLarge => theme.warning,
        Certainty::Simulated | Certainty::Attributed => theme.muted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Certainty, EditKind, EditStatus};
    use crate::store::browse::EditLine;
    use crate::tui::keymap::Keymap;

    fn shell_edit(certainty: Certainty, diff: Option<&str>) -> EditText {
        EditText {
            line: EditLine {
                id: 1,
                step: Some(6),
                path: "/testbed/django/db/models/constraints.py".into(),
                kind: EditKind::ShellWrite,
                status: EditStatus::Applied,
                lint_codes: Vec::new(),
                certainty: Some(certainty),
                undone_at: None,
            },
            old_text: None,
            new_text: None,
            diff: diff.map(str::to_string),
            command: Some("sed -i '25s/a/b/' django/db/models/constraints.py".into()),
            checked_by: None,
            shown: None,
            hunks: Vec::new(),
            partial: false,
        }
    }

    fn drawn(e: &EditText) -> Vec<String> {
        let mut ctx = ViewCtx::new(Theme::default(), Keymap::default_map(), "t.db".into());
        let theme = Theme::default();
        let mut out = Vec::new();
        edit(&mut out, e, DiffMode::default(), 100, &mut ctx, &theme);
        out.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    /// A shell command that ran but changed nothing is not "applied", and says why once.
    #[test]
    fn a_shell_edit_that_changed_nothing_says_so_instead_of_applied() {
        let text = drawn(&shell_edit(Certainty::Unchanged, None));
        assert!(text[1].ends_with("→ ran, changed nothing"), "{text:#?}");
        assert_eq!(text.iter().filter(|l| l.contains("changed nothing")).count(), 2, "{text:#?}");
        assert!(!text.iter().any(|l| l.contains("applied")), "{text:#?}");
        let text = drawn(&shell_edit(Certainty::Verified, Some("@@ -25 +25 @@\n-a\n+b\n")));
        assert!(text[1].ends_with("→ applied"), "{text:#?}");
    }

    fn section_lines(body: &str, cut: Option<Cut>, fold: Option<(usize, usize)>) -> Vec<String> {
        let theme = Theme::default();
        let page = Page { width: 100, words: &[], theme: &theme, run: 3, step: 7 };
        let mut out = Vec::new();
        section(&mut out, "observation", body, cut, &page, fold);
        out.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    /// An observation read in part shows its head, where the unread middle is, and its tail;
    /// folded, each side keeps its own lines and the fold is said with the cut.
    #[test]
    fn an_observation_read_in_part_shows_its_unread_middle_between_head_and_tail() {
        let head: String = (0..50).map(|i| format!("head {i}\n")).collect();
        let tail: String = (0..30).map(|i| format!("tail {i}\n")).collect();
        let body = format!("{head}{tail}");
        let cut = Cut { at: head.len(), omitted: 499_700_000 };
        let unread = "499.7 MB not read here (`trajan show 3 --step 7` prints it whole)";
        let whole = section_lines(&body, Some(cut), None);
        assert_eq!(whole.len(), 1 + 50 + 1 + 30);
        assert_eq!(whole[50], "head 49");
        assert_eq!(whole[51], format!("  ⋯ {unread} ⋯"));
        assert_eq!(whole[52], "tail 0");
        let folded = section_lines(&body, Some(cut), Some((FOLD_HEAD, FOLD_TAIL)));
        assert_eq!(folded.len(), 1 + FOLD_HEAD + 2 + FOLD_TAIL);
        assert_eq!(folded[FOLD_HEAD + 1], "  ⋯ 28 more lines folded (o: show all) ⋯");
        assert_eq!(folded[FOLD_HEAD + 2], format!("  ⋯ {unread} ⋯"));
        assert_eq!(folded.last().map(String::as_str), Some("tail 29"));
        // Without a cut, as before: one fold over the whole text.
        let plain = section_lines(&body, None, Some((FOLD_HEAD, FOLD_TAIL)));
        assert_eq!(plain[FOLD_HEAD + 1], "  ⋯ 28 more lines folded (o: show all) ⋯");
    }
}
