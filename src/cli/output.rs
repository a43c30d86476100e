//! Text and JSON output. Every string from a trajectory goes through `sanitize` before it is
//! printed; JSON output is escaped by serde_json and needs nothing more.

use anyhow::Result;
use serde::Serialize;
use std::fmt::Write as _;
use trajan::analysis::reconstruct::unplaced::is_unplaced;
use trajan::model::TestGroup;
use trajan::review::export::escape_c1;
use trajan::sanitize::sanitize;
use trajan::store::labels::LabelRow;
use trajan::store::read::{RunDetail, RunSummary, SearchHit, StepRow, Verdict};

/// Write to stdout. A closed pipe (`trajan runs | head`) is reported as an `io::Error` of kind
/// `BrokenPipe`, which `main` treats as a normal end.
pub fn emit(text: &str) -> std::io::Result<()> {
    emit_bytes(text.as_bytes())
}

pub fn emit_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Pretty JSON. serde_json leaves DEL and the C1 controls (U+0080..U+009F) raw, and some
/// terminals act on C1; they are escaped here (`review::export::escape_c1`).
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut text = escape_c1(&serde_json::to_string_pretty(value)?);
    text.push('\n');
    emit(&text)?;
    Ok(())
}

/// The prompt of a step, message by message.
pub fn print_prompt(messages: &[trajan::model::Message]) -> std::io::Result<()> {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let _ = writeln!(out, "── message {i} · {}", cell(&m.role, 20));
        render_block(&mut out, &m.content, usize::MAX, "");
    }
    emit(&out)
}

/// Marks text cut short, here as in the TUI.
const CUT: char = '…';

/// Sanitized, single line, cut to `width` display columns (wide characters count two).
fn cell(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let clean = sanitize(text).replace(['\n', '\t'], " ");
    let mut out = String::new();
    let mut cols = 0;
    for c in clean.chars() {
        let w = c.width().unwrap_or(0);
        if cols + w > width {
            // Cut: make room for the marker (one column, as in the TUI).
            while cols + 1 > width {
                let Some(last) = out.pop() else { break };
                cols -= last.width().unwrap_or(0);
            }
            out.push(CUT);
            return out;
        }
        out.push(c);
        cols += w;
    }
    out
}

/// Sanitized, on one line, never cut: paths, test names and reasons naming paths are copied by
/// reviewers from this output, so they are printed whole (the terminal wraps them).
fn whole(text: &str) -> String {
    sanitize(text).replace(['\n', '\t'], " ")
}

/// Pad to `width` display columns (format! pads by characters).
fn pad(text: String, width: usize) -> String {
    let cols = unicode_width::UnicodeWidthStr::width(text.as_str());
    format!("{text}{}", " ".repeat(width.saturating_sub(cols)))
}

fn resolved(r: Option<bool>) -> &'static str {
    match r {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

pub fn print_run_table(runs: &[RunSummary]) -> std::io::Result<()> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5}  {:<36} {:<16} {:<28} {:<24} {:>4} {:>5} {:>5} {:>7}",
        "id", "instance", "agent", "model", "exit", "res", "steps", "edits", "cost"
    );
    for r in runs {
        let cost = r.cost.map(|c| format!("{c:.2}")).unwrap_or_else(|| "-".into());
        let edits =
            if r.rejected_edits > 0 { format!("{}!{}", r.edits, r.rejected_edits) } else { r.edits.to_string() };
        let _ = writeln!(
            out,
            "{:>5}  {} {} {} {} {:>4} {:>5} {:>5} {:>7}",
            r.id,
            pad(cell(&r.instance_id, 36), 36),
            pad(cell(r.agent.as_deref().unwrap_or("-"), 16), 16),
            pad(cell(r.model.as_deref().unwrap_or("-"), 28), 28),
            pad(cell(r.exit_status.as_deref().unwrap_or("-"), 24), 24),
            resolved(r.resolved),
            r.steps,
            edits,
            cost
        );
    }
    let _ = writeln!(out, "{} runs (edits a!b: a attempted, b rejected or refused)", runs.len());
    emit(&out)
}

/// `runs --evaluations`: the evaluations that matched no run, with why.
pub fn print_orphan_table(orphans: &[trajan::store::Orphan]) -> std::io::Result<()> {
    let mut out = String::new();
    let _ = writeln!(out, "{:<36} {:<28} {:>4} {:>5}  {:<24} source", "instance", "model", "res", "tests", "why");
    for o in orphans {
        let _ = writeln!(
            out,
            "{} {} {:>4} {:>5}  {} {}",
            pad(cell(&o.instance_id, 36), 36),
            pad(cell(o.model.as_deref().unwrap_or("-"), 28), 28),
            resolved(o.resolved),
            o.tests,
            pad(cell(o.why.text(), 24), 24),
            sanitize(&o.source)
        );
    }
    let _ = writeln!(out, "{} evaluations that matched no run", orphans.len());
    emit(&out)
}

const OBSERVATION_LINES: usize = 30;
const TASK_LINES: usize = 8;
/// What a folded block says gets it whole.
const WHOLE_STEP: &str = "use --step N for the whole step";
const WHOLE_TASK: &str = "use --task for the whole task";

/// The task statement whole, sanitized, not indented.
pub fn print_task(task: &str) -> std::io::Result<()> {
    let mut text = sanitize(task).into_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    emit(&text)
}

pub fn print_run(d: &RunDetail, labels: &[LabelRow]) -> std::io::Result<()> {
    let mut out = String::new();
    render_run(&mut out, d, labels);
    emit(&out)
}

/// Each current label in a line: who, the modes, the onset and the blame with its reason.
fn render_labels(out: &mut String, labels: &[LabelRow]) {
    if labels.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nlabels (current):");
    for row in labels {
        let l = &row.label;
        let modes = if l.modes.is_empty() {
            "unclassified".to_string()
        } else {
            l.modes.iter().map(|m| format!("{} ({:.2})", m.mode, m.confidence)).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(out, "  {} {}: {}", l.source.name(), cell(&l.rater, 40), cell(&modes, 200));
        if let Some(o) = &l.judgement.onset {
            let at = o.step.map_or_else(|| "none".to_string(), |s| format!("step {s} ({:.2})", o.confidence));
            let _ = writeln!(out, "    onset {at}: {}", cell(&o.rationale, 300));
            if !o.missing.is_empty() {
                let _ = writeln!(out, "    missing: {}", cell(&o.missing.join("; "), 300));
            }
        }
        if let Some(b) = &l.judgement.blame {
            let value = b.value.map_or("none", |v| v.name());
            let _ = writeln!(out, "    blame {value}: {}", cell(&b.reason, 300));
        }
    }
}

/// `show RUN --step N`: one line naming the run, then the step whole (its texts and edits); the
/// run's overview is `show RUN`.
pub fn print_step(d: &RunDetail) -> std::io::Result<()> {
    let mut out = String::new();
    let s = &d.summary;
    let _ = writeln!(out, "run {}  {} · {} steps (0–{})", s.id, whole(&s.instance_id), s.steps, s.steps - 1);
    for step in &d.step_list {
        render_step(&mut out, step, d, true);
    }
    emit(&out)
}

/// The overview: the run, its task and tests folded, each step folded.
fn render_run(out: &mut String, d: &RunDetail, labels: &[LabelRow]) {
    let s = &d.summary;
    let _ = writeln!(out, "run {}  {}", s.id, cell(&s.instance_id, 120));
    let _ = writeln!(
        out,
        "  {} {} | agent {} | model {} | exit {} | resolved {} | {} steps, {} edits ({} rejected) | cost {}",
        s.format,
        cell(s.format_version.as_deref().unwrap_or(""), 20),
        cell(s.agent.as_deref().unwrap_or("-"), 40),
        cell(s.model.as_deref().unwrap_or("-"), 60),
        cell(s.exit_status.as_deref().unwrap_or("-"), 40),
        resolved(s.resolved),
        s.steps,
        s.edits,
        s.rejected_edits,
        s.cost.map(|c| format!("{c:.4}")).unwrap_or_else(|| "-".into()),
    );
    let _ = writeln!(out, "  source {}", whole(&s.source));
    render_labels(out, labels);
    if let Some(task) = d.task.as_ref().and_then(|t| t.instruction.as_deref()) {
        let _ = writeln!(out, "\ntask:");
        render_block(out, task, TASK_LINES, WHOLE_TASK);
    }
    if let Some(o) = &d.outcome {
        let failed: Vec<_> = o.tests.iter().filter(|t| !t.passed).collect();
        let verdict = match o.verdict {
            Verdict::Reported => format!("resolved {}", resolved(o.resolved)),
            Verdict::Graded => format!(
                "resolved {} (graded from the test log against the task's FAIL_TO_PASS / PASS_TO_PASS)",
                resolved(o.resolved)
            ),
            Verdict::Ungraded => "evaluated, verdict unknown (the task's FAIL_TO_PASS / PASS_TO_PASS lists are \
                                  not known: ingest the dataset file)"
                .to_string(),
        };
        let _ = writeln!(out, "\ntests ({}): {verdict}, {} tests, {} failing", o.format, o.tests.len(), failed.len());
        let _ = writeln!(out, "  from {}", whole(&o.source));
        if let Some(tests) = &o.tests_source {
            let _ = writeln!(out, "  tests from {}", whole(tests));
        }
        if let Some(says) = o.tests_say_resolved {
            let _ = writeln!(
                out,
                "  the evaluations disagree: the per-test report says resolved {}, the verdict's says {}",
                resolved(Some(says)),
                resolved(o.resolved)
            );
        }
        for t in failed.iter().take(20) {
            let _ = writeln!(out, "  FAIL {} {}", t.group.map_or("", TestGroup::name), whole(&t.name));
        }
    }
    for u in &d.unjoined_evaluations {
        let _ = writeln!(out, "\nevaluation found in {}, not joined: {}", whole(&u.source), whole(&u.reason));
    }
    for step in &d.step_list {
        render_step(out, step, d, false);
    }
}

fn render_step(out: &mut String, step: &StepRow, d: &RunDetail, full: bool) {
    let flags = if step.flags.is_empty() { String::new() } else { format!(" [{}]", step.flags.names().join(", ")) };
    let _ = writeln!(out, "\n── step {} · {}{}", step.index, cell(step.tool.as_deref().unwrap_or("-"), 40), flags);
    if !step.thought.trim().is_empty() {
        let _ = writeln!(out, "thought:");
        render_block(out, &step.thought, if full { usize::MAX } else { 12 }, WHOLE_STEP);
    }
    if !step.action.trim().is_empty() {
        let _ = writeln!(out, "action:");
        render_block(out, &step.action, if full { usize::MAX } else { 20 }, WHOLE_STEP);
    }
    if !step.observation.is_empty() {
        let _ = writeln!(out, "observation ({} chars):", step.observation_chars);
        render_block(out, &step.observation, if full { usize::MAX } else { OBSERVATION_LINES }, WHOLE_STEP);
    }
    for e in d.edit_list.iter().filter(|e| e.step == Some(step.index)) {
        let lint = if e.lint_codes.is_empty() { String::new() } else { format!(" ({})", e.lint_codes.join(", ")) };
        // A reconstructed shell edit says how sure its diff is.
        let sure = e.certainty.map(|c| format!(", {}", c.words())).unwrap_or_default();
        let sure = match e.diff.as_deref().is_some_and(is_unplaced) {
            true => format!("{sure} (not placed: the command's own text)"),
            false => sure,
        };
        let _ = writeln!(out, "edit {} {} → {}{}{}", e.kind, whole(&e.path), e.status, sure, lint);
        if let Some(diff) = &e.diff {
            render_block(out, diff, if full { usize::MAX } else { 40 }, WHOLE_STEP);
        }
    }
}

/// Lines longer than this are cut in the folded (non `--step`) view.
const LINE_CHARS: usize = 400;

/// Indented, sanitized, at most `max_lines` lines, with a note of what was left out and `whole`:
/// how to see it all.
fn render_block(out: &mut String, text: &str, max_lines: usize, whole: &str) {
    let clean = sanitize(text);
    let lines: Vec<&str> = clean.lines().collect();
    let folded = max_lines != usize::MAX;
    for line in lines.iter().take(max_lines) {
        match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) if folded => {
                let rest = line[cut..].chars().count();
                let _ = writeln!(out, "  {}{CUT} ({rest} more characters; {whole})", &line[..cut]);
            }
            _ => {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    if lines.len() > max_lines {
        let _ = writeln!(out, "  {CUT} {} more lines ({whole})", lines.len() - max_lines);
    }
}

pub fn print_hits(hits: &[SearchHit]) -> std::io::Result<()> {
    let mut out = String::new();
    for h in hits {
        let _ = writeln!(
            out,
            "run {:>4} {} step {:>4} {:<11} {}",
            h.run_id,
            pad(cell(&h.instance_id, 36), 36),
            h.step,
            h.field,
            cell(&h.snippet, 160)
        );
    }
    let _ = writeln!(out, "{} hits", hits.len());
    emit(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_cut_with_an_ellipsis_to_their_width() {
        use unicode_width::UnicodeWidthStr;
        assert_eq!(cell("short", 10), "short");
        assert_eq!(cell("exactly", 7), "exactly");
        assert_eq!(cell("a long instance id", 8), "a long …");
        // Wide characters count two columns; the cut never overflows the width.
        let cut = cell("日本語のテキスト", 6);
        assert_eq!(cut, "日本…");
        assert!(cut.width() <= 6);
        assert!(!cell(&"x".repeat(50), 10).contains('~'));
    }

    #[test]
    fn a_folded_block_says_how_to_see_it_whole() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let mut out = String::new();
        render_block(&mut out, &text, TASK_LINES, WHOLE_TASK);
        assert!(out.contains("line 8\n") && !out.contains("line 9\n"), "{out}");
        assert!(out.ends_with("  … 12 more lines (use --task for the whole task)\n"), "{out}");
        let mut out = String::new();
        render_block(&mut out, &"y".repeat(LINE_CHARS + 5), 30, WHOLE_STEP);
        assert!(out.ends_with("… (5 more characters; use --step N for the whole step)\n"), "{out}");
    }
}
