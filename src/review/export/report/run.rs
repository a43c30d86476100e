//! A run's page in the report: what it is, its task, verdict and tests, labels (evidence steps
//! linked), the state it ended in, the submitted patch, then its steps.

use super::html::{esc, push_esc};
use super::steps::{anchor, push_edit, push_index, push_steps};
use crate::review::onset::{Judges, pick};
use crate::store::labels::LabelRow;
use crate::store::read::RunDetail;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Tests beyond this many are listed collapsed.
const OPEN_TESTS: usize = 40;

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

fn fact(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "<dt>{name}</dt><dd>{}</dd>", esc(value));
}

/// The page of one run (`labels`: its current labels).
pub fn push_run(out: &mut String, d: &RunDetail, labels: &[LabelRow]) {
    let r = &d.summary;
    let _ = write!(
        out,
        "<section class=\"run\" id=\"r{}\" data-run=\"{}\" data-steps=\"{}\"><h2>run {} · {}</h2><dl class=\"facts\">",
        r.id,
        r.id,
        d.step_list.len(),
        r.id,
        esc(&r.instance_id)
    );
    let none = String::new();
    fact(out, "agent", r.agent.as_ref().unwrap_or(&none));
    fact(out, "model", r.model.as_ref().unwrap_or(&none));
    fact(out, "format", &format!("{} {}", r.format, r.format_version.as_deref().unwrap_or("")));
    fact(out, "exit status", r.exit_status.as_ref().unwrap_or(&none));
    fact(out, "resolved", yes_no(r.resolved));
    fact(out, "steps", &r.steps.to_string());
    fact(out, "edits", &format!("{} ({} rejected)", r.edits, r.rejected_edits));
    let opt = |x: Option<String>| x.unwrap_or_default();
    fact(out, "cost", &opt(r.cost.map(|c| format!("{c:.4}"))));
    fact(
        out,
        "tokens sent / received",
        &format!(
            "{} / {}",
            opt(d.usage.tokens_sent.map(|t| t.to_string())),
            opt(d.usage.tokens_received.map(|t| t.to_string()))
        ),
    );
    fact(out, "API calls", &opt(d.usage.api_calls.map(|t| t.to_string())));
    fact(out, "source", &r.source);
    let onset = judgement(out, d, labels);
    out.push_str("</dl>\n");
    if let Some(task) = d.task.as_ref().and_then(|t| t.instruction.as_ref()) {
        out.push_str("<details class=\"task\"><summary>task statement</summary><pre>");
        push_esc(out, task);
        out.push_str("</pre></details>\n");
    }
    verdict(out, d);
    push_labels(out, d, labels);
    state(out, d);
    submission(out, d);
    push_index(out, d, onset);
    out.push_str("<h3>steps</h3>\n");
    push_steps(out, d, onset);
    out.push_str("</section>\n");
}

/// The run's onset and blame among its facts: the adjudication's, else the LLM's, else the
/// heuristic's (`review::onset::pick`, for no reviewer in particular), the onset step linked.
/// Returns the onset step when it is one of the run's.
fn judgement(out: &mut String, d: &RunDetail, labels: &[LabelRow]) -> Option<i64> {
    let (by, l) = pick(labels.iter().map(|r| &r.label), None, false)?;
    let steps = d.step_list.len();
    let step = l.onset_step().map(|s| s as i64).filter(|&s| d.step_list.iter().any(|x| x.index == s));
    out.push_str("<dt>onset</dt><dd class=\"onset\">");
    match (l.onset_step(), step) {
        (Some(s), Some(_)) => {
            let _ = write!(out, "<a href=\"#{}\">step {s}</a>/{steps}", anchor(d.summary.id, s as i64));
        }
        (Some(s), None) => {
            let _ = write!(out, "step {s} (not in the run)");
        }
        (None, _) => out.push_str("none"),
    }
    if let Some(b) = l.blame() {
        let _ = write!(out, " · blame {}", b.name());
    }
    let rater = if l.rater() == l.source().name() { String::new() } else { format!(" {}", esc(l.rater())) };
    let _ = write!(out, " <span class=\"muted\">({}{rater})</span></dd>", by.name());
    step
}

fn verdict(out: &mut String, d: &RunDetail) {
    out.push_str("<h3>verdict and tests</h3>");
    let Some(o) = &d.outcome else {
        out.push_str("<p class=\"muted\">no evaluation joined to this run</p>");
        for u in &d.unjoined_evaluations {
            let _ = write!(
                out,
                "<p class=\"muted\">not joined: {} ({}): {}</p>",
                esc(&u.source),
                esc(&u.format),
                esc(&u.reason)
            );
        }
        return;
    };
    let _ = write!(
        out,
        "<p>resolved: <b class=\"verdict {}\">{}</b> · patch applied: {} · {} · from {} ({})</p>",
        yes_no(o.resolved),
        yes_no(o.resolved),
        yes_no(o.patch_applied),
        match o.verdict {
            crate::store::read::Verdict::Reported => "as the evaluation reported",
            crate::store::read::Verdict::Graded => "graded from the test log against the task's lists",
            crate::store::read::Verdict::Ungraded => "test log read, the task's lists unknown",
        },
        esc(&o.source),
        esc(&o.format)
    );
    if o.tests.is_empty() {
        return;
    }
    let failed = o.tests.iter().filter(|t| !t.passed).count();
    let open = if o.tests.len() <= OPEN_TESTS { " open" } else { "" };
    let _ = write!(
        out,
        "<details class=\"tests\"{open}><summary>{} tests, {failed} failed</summary><table><tr><th>test</th><th>group</th><th>result</th><th>message</th></tr>",
        o.tests.len()
    );
    for t in &o.tests {
        let _ = write!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            if t.passed { "pass" } else { "fail" },
            esc(&t.name),
            t.group.map(|g| g.name()).unwrap_or(""),
            if t.passed { "passed" } else { "failed" },
            esc(t.message.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</table></details>\n");
}

fn push_labels(out: &mut String, d: &RunDetail, labels: &[LabelRow]) {
    let id = d.summary.id;
    out.push_str("<h3>labels</h3>");
    if labels.is_empty() {
        out.push_str("<p class=\"muted\">no labels</p>");
        return;
    }
    let steps = d.step_list.len() as i64;
    for row in labels {
        let l = &row.label;
        let _ = write!(
            out,
            "<div class=\"label\"><p><b>{}</b> {} · {}@{} · {}",
            l.source.name(),
            esc(&l.rater),
            esc(&l.taxonomy),
            esc(&l.taxonomy_version),
            esc(&row.created_at)
        );
        if !l.exit_category.is_empty() {
            let _ = write!(out, " · exit: {}", esc(&l.exit_category));
        }
        out.push_str("</p>");
        if l.modes.is_empty() {
            out.push_str("<p>unclassified</p>");
        }
        label_judgement(out, id, steps, l);
        out.push_str("<ul>");
        for m in &l.modes {
            let _ = write!(out, "<li><b>{}</b> ({:.2})", esc(&m.mode), m.confidence);
            for e in &m.evidence {
                let step = e.step as i64;
                if step < steps {
                    let _ = write!(out, " · <a href=\"#{}\">step {step}</a>", anchor(id, step));
                } else {
                    let _ = write!(out, " · step {step} (not in the run)");
                }
                if !e.note.is_empty() {
                    let _ = write!(out, ": {}", esc(&e.note));
                }
            }
            if !m.rationale.is_empty() {
                let _ = write!(out, "<br><span class=\"muted\">{}</span>", esc(&m.rationale));
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
        if let Some(note) = &row.note {
            let _ = write!(out, "<p>note: {}</p>", esc(note));
        }
        out.push_str("</div>");
    }
}

/// A label's onset (linked) and blame, with the reasons it gives.
fn label_judgement(out: &mut String, id: i64, steps: i64, l: &crate::label::Label) {
    let (onset, blame) = (l.onset_step(), l.blame());
    if onset.is_none() && blame.is_none() {
        return;
    }
    out.push_str("<p class=\"judgement\">");
    match onset.map(|s| s as i64) {
        Some(s) if s < steps => {
            let _ = write!(out, "onset <a href=\"#{}\">step {s}</a>", anchor(id, s));
        }
        Some(s) => {
            let _ = write!(out, "onset step {s} (not in the run)");
        }
        None => out.push_str("no onset"),
    }
    if let Some(b) = blame {
        let _ = write!(out, " · blame {}", b.name());
    }
    let j = &l.judgement;
    let why = [j.onset.as_ref().map(|o| o.rationale.as_str()), j.blame.as_ref().map(|b| b.reason.as_str())];
    for reason in why.into_iter().flatten().filter(|r| !r.is_empty()) {
        let _ = write!(out, "<br><span class=\"muted\">{}</span>", esc(reason));
    }
    out.push_str("</p>");
}

/// What the run left: files edited (applied, rejected, other), the last open file and folder.
fn state(out: &mut String, d: &RunDetail) {
    let mut files: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for e in d.edit_list.iter().filter(|e| e.step.is_some() && !e.changed_nothing()) {
        let c = files.entry(e.path.as_str()).or_default();
        let at = match e.status {
            crate::model::EditStatus::Applied => 0,
            crate::model::EditStatus::RejectedByLinter | crate::model::EditStatus::RefusedByTool => 1,
            _ => 2,
        };
        c[at] += 1;
    }
    let _ = write!(out, "<h3>state at the end</h3><p>{} files edited</p>", files.len());
    if !files.is_empty() {
        out.push_str("<table class=\"state\"><tr><th>file</th><th>applied</th><th>rejected</th><th>other</th></tr>");
        for (path, [a, r, o]) in &files {
            let _ = write!(out, "<tr><td><code>{}</code></td><td>{a}</td><td>{r}</td><td>{o}</td></tr>", esc(path));
        }
        out.push_str("</table>");
    }
    let last = d.step_list.iter().rev();
    let open = last.clone().find_map(|s| s.open_file.as_deref()).unwrap_or("");
    let dir = last.clone().find_map(|s| s.working_dir.as_deref()).unwrap_or("");
    let chars: i64 = d.step_list.iter().map(|s| s.observation_chars).sum();
    let _ = writeln!(
        out,
        "<p>open file <code>{}</code> · working folder <code>{}</code> · {chars} characters of observations</p>",
        esc(open),
        esc(dir)
    );
}

fn submission(out: &mut String, d: &RunDetail) {
    let finals: Vec<_> = d.edit_list.iter().filter(|e| e.step.is_none()).collect();
    out.push_str("<h3>submitted patch</h3>");
    if finals.is_empty() {
        match d.submission.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(patch) => super::diff::push_diff(out, "", patch),
            None => out.push_str("<p class=\"muted\">nothing submitted</p>"),
        }
        return;
    }
    for e in finals {
        push_edit(out, d.summary.id, e);
        for h in &e.hunks {
            let steps: Vec<String> =
                h.steps.iter().map(|&s| format!("<a href=\"#{}\">{s}</a>", anchor(d.summary.id, s as i64))).collect();
            let _ = write!(
                out,
                "<p class=\"muted\">{} made at steps {}{}</p>",
                esc(&h.hunk),
                if steps.is_empty() { "none".into() } else { steps.join(", ") },
                if h.explained { "" } else { " (not explained by the steps)" }
            );
        }
    }
}
