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

/// The step index: one link per step, marked as the step is.
pub fn push_index(out: &mut String, d: &RunDetail) {
    let id = d.summary.id;
    let _ = write!(
        out,
        "<details class=\"index\"><summary>step index ({} steps; edits, errors and test runs marked)</summary><nav>",
        d.step_list.len()
    );
    for s in &d.step_list {
        let marks = flags(s).join(" ");
        let _ = write!(out, "<a href=\"#{}\" class=\"{marks}\">{}</a> ", anchor(id, s.index), s.index);
    }
    out.push_str("</nav></details>\n");
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
        "</pre><p class=\"cut\">… {} characters not shown here (trajan show prints them) …</p><pre>",
        text[head..tail].chars().count()
    );
    push_esc(out, &text[tail..]);
}

fn block(out: &mut String, class: &str, title: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    let _ = write!(out, "<div class=\"{class}\"><span class=\"what\">{title}</span><pre>");
    push_clipped(out, text);
    out.push_str("</pre></div>");
}

fn observation(out: &mut String, text: &str, chars: i64) {
    if text.is_empty() {
        return;
    }
    let lines = text.lines().count();
    if text.len() <= OPEN_CHARS && lines <= OPEN_LINES {
        return block(out, "obs", "observation", text);
    }
    let _ = write!(
        out,
        "<details class=\"obs\"><summary>observation · {} characters, {lines} lines</summary><pre>",
        chars.max(text.chars().count() as i64)
    );
    push_clipped(out, text);
    out.push_str("</pre></details>");
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
        block(out, "cmd", "command", cmd);
    }
    match &e.diff {
        Some(d) if !d.is_empty() => push_diff(out, &e.path, d),
        _ => out.push_str("<p class=\"muted\">no diff</p>"),
    }
    if let Some(shown) = &e.shown {
        out.push_str("<p class=\"what\">what the later view showed</p>");
        push_diff(out, &e.path, shown);
    }
    out.push_str("</div>");
}

/// Every step, each with its edits.
pub fn push_steps(out: &mut String, d: &RunDetail) {
    let id = d.summary.id;
    let mut edits: BTreeMap<i64, Vec<&EditRow>> = BTreeMap::new();
    for e in &d.edit_list {
        if let Some(s) = e.step {
            edits.entry(s).or_default().push(e);
        }
    }
    for s in &d.step_list {
        let marks = flags(s);
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
        block(out, "thought", "thought", &s.thought);
        block(out, "action", "action", &s.action);
        observation(out, &s.observation, s.observation_chars);
        for e in edits.get(&s.index).into_iter().flatten() {
            push_edit(out, id, e);
        }
        out.push_str("</article>\n");
    }
}
