//! A run's steps in the report: the step index, then per step its thought, action and
//! observation (a long observation collapsed), and the diffs of the edits it made.

use super::diff::push_diff;
use super::html::{esc, push_esc};
use crate::store::read::{EditRow, RunDetail, StepRow};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Observations longer than this (characters or lines) start collapsed.
const OPEN_CHARS: usize = 2_000;
const OPEN_LINES: usize = 30;
/// A text longer than this (bytes) shows its first `HEAD` and last `TAIL` bytes, and says how
/// much it leaves out (`trajan show` prints it whole): a page is for reading, and a run of
/// 20,000 steps of 100 KB outputs would be a 2 GB page no browser opens.
const MAX_TEXT: usize = 24_000;
const HEAD: usize = 16_000;
const TAIL: usize = 6_000;

/// The anchor of a run's step (`r12-s40`).
pub fn anchor(run: i64, step: i64) -> String {
    format!("r{run}-s{step}")
}

fn flags(step: &StepRow) -> Vec<&'static str> {
    let f = step.flags;
    [
        (f.edit, "edit"),
        (f.edit_rejected, "rejected"),
        (f.error, "error"),
        (f.output_clipped, "clipped"),
        (f.test_run, "test"),
        (f.format_error, "format-error"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// Runs with more steps than this list in their index only the steps with a mark (edit, error,
/// test run...) and every [`EVERY`]th.
const FULL_INDEX: usize = 500;
const EVERY: i64 = 100;

/// The step index: a link per step (in a long run, per marked step and every 100th), marked as
/// the step is; the `onset` step always, marked `onset`.
pub fn push_index(out: &mut String, d: &RunDetail, onset: Option<i64>) {
    let id = d.summary.id;
    let long = d.step_list.len() > FULL_INDEX;
    let _ = write!(
        out,
        "<details class=\"index\"><summary>step index ({} steps; {}edits, errors and test runs marked{})</summary><nav>",
        d.step_list.len(),
        if onset.is_some() { "the onset, " } else { "" },
        if long { "; the others every 100th" } else { "" }
    );
    let onset_step = |s: &StepRow| onset == Some(s.index);
    for s in d.step_list.iter().filter(|s| !long || !s.flags.is_empty() || s.index % EVERY == 0 || onset_step(s)) {
        let marks = marks(s, onset_step(s)).join(" ");
        let _ = write!(out, "<a href=\"#{}\" class=\"{marks}\">{}</a> ", anchor(id, s.index), s.index);
    }
    out.push_str("</nav></details>\n");
}

/// A step's marks (its flags, and `onset`): the classes of its index link and its article.
fn marks(step: &StepRow, onset: bool) -> Vec<&'static str> {
    let mut marks = flags(step);
    if onset {
        marks.push("onset");
    }
    marks
}

/// `text` escaped, its middle left out when it is longer than [`MAX_TEXT`].
fn push_clipped(out: &mut String, text: &str) {
    if text.len() <= MAX_TEXT {
        return push_esc(out, text);
    }
    let head = text.floor_char_boundary(HEAD);
    let tail = text.ceil_char_boundary(text.len() - TAIL);
    push_esc(out, &text[..head]);
    let _ = write!(
        out,
        "<span class=\"cut\">\n… {} characters not shown here (trajan show prints them) …\n</span>",
        text[head..tail].chars().count()
    );
    push_esc(out, &text[tail..]);
}

/// A text of the step: one element (its name drawn by the style sheet), 20,000 steps of them
/// stay light.
fn block(out: &mut String, class: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    let _ = write!(out, "<pre class=\"{class}\">");
    push_clipped(out, text);
    out.push_str("</pre>");
}

/// A short observation in place; a long one folded: a line saying how long it is, its text kept
/// in `folded` (written as the run's data block: a browser scans it without building anything,
/// and the page's script shows it, as text, when the line is clicked or a search finds it). No
/// `<details>`: 20,000 of them (each a shadow tree) slow a page's load by a quarter.
fn observation(out: &mut String, step: i64, text: &str, chars: i64, folded: &mut Vec<(i64, String)>) {
    if text.is_empty() {
        return;
    }
    let lines = text.lines().count();
    if text.len() <= OPEN_CHARS && lines <= OPEN_LINES {
        return block(out, "obs", text);
    }
    let _ = write!(
        out,
        "<p class=\"fold\" data-obs=\"{step}\" tabindex=\"0\" role=\"button\">observation · {} characters, {lines} lines</p>",
        chars.max(text.chars().count() as i64)
    );
    folded.push((step, clipped_plain(text)));
}

/// `text` sanitized, its middle left out as [`push_clipped`] does, as plain text.
fn clipped_plain(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return crate::sanitize::sanitize(text).into_owned();
    }
    let head = text.floor_char_boundary(HEAD);
    let tail = text.ceil_char_boundary(text.len() - TAIL);
    format!(
        "{}\n\n… {} characters not shown here (trajan show prints them) …\n\n{}",
        crate::sanitize::sanitize(&text[..head]),
        text[head..tail].chars().count(),
        crate::sanitize::sanitize(&text[tail..])
    )
}

/// The run's folded observations as a JSON data block (`{"step": "text"}`): `<`, `>` and `&`
/// are written as `\u003c`, `\u003e`, `\u0026`, so nothing in it can end the element.
fn push_folded(out: &mut String, run: i64, folded: &[(i64, String)]) {
    if folded.is_empty() {
        return;
    }
    let map: serde_json::Map<String, serde_json::Value> =
        folded.iter().map(|(step, text)| (step.to_string(), serde_json::Value::String(text.clone()))).collect();
    let json = serde_json::Value::Object(map).to_string();
    let _ = write!(out, "<script type=\"application/json\" class=\"obs-data\" data-run=\"{run}\">");
    out.push_str(&json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026"));
    out.push_str("</script>\n");
}

/// An edit: what it was, how sure, and its diff.
pub fn push_edit(out: &mut String, run: i64, e: &EditRow) {
    out.push_str("<div class=\"edit\"><p class=\"what\">");
    let _ = write!(out, "{} <code>{}</code> · {}", e.kind.name(), esc(&e.path), e.status.name());
    if let Some(c) = e.certainty {
        let _ = write!(out, " · <span class=\"certainty {}\">{}</span>", c.name(), c.words());
    }
    if let Some(by) = e.checked_by {
        match by {
            crate::model::CheckedBy::Step(s) => {
                let _ = write!(out, " · checked at <a href=\"#{}\">step {s}</a>", anchor(run, s as i64));
            }
            crate::model::CheckedBy::Submission => out.push_str(" · checked by the submitted patch"),
        }
    }
    if let Some(s) = e.undone_at {
        let _ = write!(out, " · undone at <a href=\"#{}\">step {s}</a>", anchor(run, s));
    }
    if e.partial {
        out.push_str(" · partial: the lines the run had shown");
    }
    if !e.lint_codes.is_empty() {
        let _ = write!(out, " · lint {}", esc(&e.lint_codes.join(", ")));
    }
    out.push_str("</p>");
    if let Some(cmd) = &e.command {
        block(out, "cmd", cmd);
    }
    match &e.diff {
        Some(d) if !d.is_empty() => match fold_reason(&e.path, d) {
            // Folded: a scratch file (a 1,687-line `.orig` copy) or a long diff would bury the
            // edits around it; the summary says what is inside.
            Some(why) => {
                let _ = write!(out, "<details class=\"diff\"><summary>diff · {why}</summary>");
                push_diff(out, &e.path, d);
                out.push_str("</details>");
            }
            None => push_diff(out, &e.path, d),
        },
        _ => out.push_str("<p class=\"muted\">no diff</p>"),
    }
    if let Some(shown) = &e.shown {
        out.push_str("<p class=\"what\">what the later view showed</p>");
        push_diff(out, &e.path, shown);
    }
    out.push_str("</div>");
}

/// Diffs longer than this many lines are folded (a click opens them).
const FOLD_DIFF_LINES: usize = 200;

/// Endings of the copies tools and agents leave beside a file (`patch` and editors' backups,
/// merge leftovers): a diff of one is folded, whatever its length.
const SCRATCH: &[&str] = &[".orig", ".rej", ".bak", ".backup", ".swp", "~"];

/// Why an edit's diff is shown folded (its summary line), or `None` to show it.
fn fold_reason(path: &str, diff: &str) -> Option<String> {
    let lines = diff.lines().count();
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some(end) = SCRATCH.iter().find(|end| name.ends_with(**end)) {
        return Some(format!("{lines} lines of a scratch file ({end}): click to show"));
    }
    (lines > FOLD_DIFF_LINES).then(|| format!("{lines} lines: click to show"))
}

/// Every step, each with its edits; the `onset` step marked.
pub fn push_steps(out: &mut String, d: &RunDetail, onset: Option<i64>) {
    let id = d.summary.id;
    let mut folded = Vec::new();
    let mut edits: BTreeMap<i64, Vec<&EditRow>> = BTreeMap::new();
    for e in &d.edit_list {
        if let Some(s) = e.step {
            edits.entry(s).or_default().push(e);
        }
    }
    for s in &d.step_list {
        let marks = marks(s, onset == Some(s.index));
        let _ = write!(
            out,
            "<article class=\"step {}\" id=\"{}\"><h4><a href=\"#{}\">step {}</a>",
            marks.join(" "),
            anchor(id, s.index),
            anchor(id, s.index),
            s.index
        );
        if let Some(tool) = &s.tool {
            let _ = write!(out, " <code>{}</code>", esc(tool));
        }
        for m in &marks {
            let _ = write!(out, " <span class=\"flag {m}\">{m}</span>");
        }
        out.push_str("</h4>");
        block(out, "thought", &s.thought);
        block(out, "action", &s.action);
        observation(out, s.index, &s.observation, s.observation_chars, &mut folded);
        for e in edits.get(&s.index).into_iter().flatten() {
            push_edit(out, id, e);
        }
        out.push_str("</article>\n");
    }
    push_folded(out, id, &folded);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch copy in a patch (a 1,687-line `.orig`) is folded whatever its length, and so is
    /// any diff over 200 lines; a short diff of a source file is shown.
    #[test]
    fn scratch_files_and_long_diffs_are_folded() {
        let diff = |n: usize| {
            let body: String = (0..n).map(|i| format!("+line {i}\n")).collect();
            format!("--- /dev/null\n+++ b/src/a.py.orig\n@@ -0,0 +1,{n} @@\n{body}")
        };
        let long = diff(1_687);
        let why = fold_reason("src/a.py.orig", &long).unwrap_or_default();
        assert!(why.starts_with("1690 lines of a scratch file (.orig)"), "{why}");
        assert!(fold_reason("src/a.py.orig", &diff(3)).is_some(), "a short scratch file too");
        assert!(fold_reason("src/a.py", &diff(300)).is_some_and(|w| w.starts_with("303 lines")));
        assert_eq!(fold_reason("src/a.py", &diff(20)), None);
        assert_eq!(fold_reason("src/original.py", &diff(20)), None, "a name that only contains `orig`");
    }

    #[test]
    fn a_data_block_cannot_be_ended_by_its_text() {
        let mut out = String::new();
        push_folded(&mut out, 3, &[(1, "</script><script>alert(1)</script> <!-- & </SCRIPT >".into())]);
        assert_eq!(out.matches("</script>").count(), 1, "{out}");
        assert!(!out.to_ascii_lowercase()[..out.len() - 10].contains("</script"), "{out}");
        let json = out.split_once('>').map(|(_, j)| j.trim_end().trim_end_matches("</script>")).unwrap_or("");
        let back: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
        assert_eq!(back["1"], "</script><script>alert(1)</script> <!-- & </SCRIPT >");
    }
}
