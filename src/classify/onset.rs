//! Onset: the decisive error step of a failed run that is the agent's failure (failure-modes.md,
//! "Failure onset and blame"), from its signals. Each rule below finds one kind of onset the
//! taxonomy names; when several fire, the earliest decided the outcome and is the onset, the
//! others are its evidence.

use crate::classify::signals::{After, ExpectedWhy, LostWhy, Signals};
use crate::label::{Blame, BlameVerdict, Evidence, ExitCategory, ModeVerdict, Onset};

/// One kind of onset found on a run.
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    /// The rule's name, in the rationale's brackets.
    rule: &'static str,
    step: usize,
    confidence: f64,
    rationale: String,
    evidence: Vec<Evidence>,
}

fn ev(step: usize, note: impl Into<String>) -> Evidence {
    Evidence { step, note: note.into() }
}

/// At most this many evidence steps for an onset.
const MAX_EVIDENCE: usize = 8;

/// The onset of a run with its blame: a step only when the blame is the agent's. `modes` are the
/// label's assigned modes, whose terms the rationale uses.
pub fn onset(s: &Signals, modes: &[ModeVerdict], blame: &BlameVerdict) -> Onset {
    let missing = missing(s);
    match blame.value {
        None => {
            return Onset { rationale: format!("no onset: {}", blame.reason), missing, ..Onset::default() };
        }
        Some(b @ (Blame::Task | Blame::Environment)) => {
            return Onset {
                rationale: format!("no onset: the failure is the {}'s, not the agent's", b.name()),
                missing,
                ..Onset::default()
            };
        }
        Some(Blame::Agent) => {}
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    candidates.extend(refused_abandoned(s));
    candidates.extend(lost(s));
    candidates.extend(format_streak(s));
    candidates.extend(first_written(s, modes));
    candidates.sort_by_key(|c| c.step);
    let Some(first) = candidates.first().cloned() else {
        return unknown(s, missing);
    };
    let mut evidence = first.evidence.clone();
    // The later errors are evidence too: several independent errors, the earliest decided.
    for c in &candidates[1..] {
        evidence.push(ev(c.step, format!("later: {}", c.rationale)));
    }
    evidence.sort_by_key(|e| e.step);
    evidence.dedup_by_key(|e| e.step);
    evidence.truncate(MAX_EVIDENCE);
    // Two rules that agree on the step make it surer.
    let agreeing = candidates.iter().filter(|c| c.step.abs_diff(first.step) <= 1).count();
    let confidence = if agreeing > 1 { (first.confidence + 0.1).min(0.9) } else { first.confidence };
    Onset {
        step: Some(first.step),
        evidence,
        confidence: (confidence * 100.0).round() / 100.0,
        rationale: format!("[{}] {}", first.rule, first.rationale),
        missing,
    }
}

/// The evidence the judgement could not use.
fn missing(s: &Signals) -> Vec<String> {
    let mut out = Vec::new();
    if s.resolved.is_none() {
        out.push("no evaluation: the outcome is unknown".to_string());
    }
    if s.miss_ratio.is_none() {
        out.push("no gold patch: the right place is judged from the task's text and failing tests".to_string());
    }
    if s.tests.is_none() {
        out.push("no per-test results: which tests fail is unknown".to_string());
    }
    out
}

/// No rule fires: say why (nothing written, no exit that shows the error).
fn unknown(s: &Signals, missing: Vec<String>) -> Onset {
    let why = if s.first_edit_step.is_none() && s.origins.is_empty() {
        format!(
            "onset unknown: the run changed no code and ended {} with no error a step shows",
            match s.exit {
                ExitCategory::Cost | ExitCategory::Timeout | ExitCategory::Context => "on its budget",
                _ => "without a format exit",
            }
        )
    } else {
        "onset unknown: no step of the run wrote what its final patch holds, and no edit was lost or refused"
            .to_string()
    };
    Onset { rationale: why, missing, ..Onset::default() }
}

/// The step that abandons a refused edit: the last refusal of a file the run never changed
/// after it (a gate's refusal of undefined names is the required temporary errors' onset).
fn refused_abandoned(s: &Signals) -> Vec<Candidate> {
    let mut out = Vec::new();
    for r in s.rejections.iter().filter(|r| r.after == After::Abandoned) {
        let in_patch = s.files.iter().any(|f| f.path == r.path && f.in_patch);
        let later = s.rejections.iter().any(|x| x.path == r.path && x.step > r.step);
        if in_patch || later {
            continue;
        }
        let gated = r.by == "linter" && r.codes.iter().any(|c| matches!(c.as_str(), "F821" | "F822" | "F831"));
        let rationale = if gated {
            format!(
                "abandoned {} after the linter gate refused a temporarily undefined name (required_temporary_errors)",
                r.path
            )
        } else {
            format!("abandoned {} after its edit was refused, never applied", r.path)
        };
        let mut evidence: Vec<Evidence> = s
            .rejections
            .iter()
            .filter(|x| x.path == r.path)
            .map(|x| ev(x.step, format!("edit of {} refused by the {}", x.path, x.by)))
            .collect();
        evidence.push(ev(r.step, "the last refusal; the file was left"));
        let rule = if gated { "gated_refusal_abandoned" } else { "refused_edit_abandoned" };
        out.push(Candidate { rule, step: r.step, confidence: 0.6, rationale, evidence });
    }
    out
}

/// Edits that silently did nothing, on a place the fix needed (a gold file, or a file the task
/// names; any file without either): a revert never re-applied (its reset step), an edit that
/// matched nothing, an edit of a build copy, an edit written in a reply and never run.
fn lost(s: &Signals) -> Vec<Candidate> {
    let gold: Vec<&str> =
        s.expected.iter().filter(|e| e.why.contains(&ExpectedWhy::Gold)).map(|e| e.named.as_str()).collect();
    let named: Vec<&str> = s.expected.iter().filter_map(|e| e.path.as_deref()).collect();
    let needed = |path: &str| {
        let target = crate::classify::signals::paths::build_copy_target(path).unwrap_or(path);
        if !gold.is_empty() { gold.contains(&target) } else { named.is_empty() || named.contains(&target) }
    };
    let mut out = Vec::new();
    for l in s.lost_edits.iter().filter(|l| needed(&l.path)) {
        let (rule, step, confidence, rationale, mut evidence) = match &l.why {
            LostWhy::GitRevert { step, .. } => (
                "revert_never_reapplied",
                *step,
                0.55,
                format!("undid the edit of {} (a verification revert) and never applied it again", l.path),
                vec![ev(l.step, format!("edited {}", l.path))],
            ),
            LostWhy::ChangedNothing => (
                "edit_changed_nothing",
                l.step,
                0.55,
                format!("an edit of {} that silently changed nothing, never redone", l.path),
                Vec::new(),
            ),
            LostWhy::BuildCopy => (
                "build_copy_edited",
                l.step,
                0.55,
                format!("edited {}, a build copy: the repository's file never changed", l.path),
                Vec::new(),
            ),
            LostWhy::Announced => (
                "announced_edit_never_run",
                l.step,
                0.6,
                format!(
                    "an edit of {} written in the reply as text, never run: the change never reached the file",
                    l.path
                ),
                Vec::new(),
            ),
            LostWhy::NotInPatch { .. } => continue,
        };
        evidence.push(ev(step, rationale.clone()));
        out.push(Candidate { rule, step, confidence, rationale, evidence });
    }
    out
}

/// The first of the final streak of unparsed replies before a format exit.
fn format_streak(s: &Signals) -> Option<Candidate> {
    let first = s.format_streak?;
    let evidence =
        s.context.format_error_steps.iter().filter(|&&x| x >= first).map(|&x| ev(x, "reply not parsed")).collect();
    Some(Candidate {
        rule: "final_format_streak",
        step: first,
        confidence: 0.65,
        rationale: "the first of the final streak of unparsed replies that ended the run (exit_format)".into(),
        evidence,
    })
}

/// The step that first wrote what the failing patch holds: the first edit in the wrong place
/// when a location mode is assigned (the right one was within reach), else the edit that
/// committed the run to its fix (a choice that shows only in the edit). A script that made the
/// edit was written at the step that wrote it.
fn first_written(s: &Signals, modes: &[ModeVerdict]) -> Option<Candidate> {
    let first = s.origins.iter().min_by_key(|o| o.first())?;
    let step = first.first();
    let assigned = |mode: &str| modes.iter().any(|m| m.mode == mode);
    let how = if first.written_at.is_some() { "wrote the script that made" } else { "made" };
    let (rule, confidence, rationale) = if assigned("missed_edit_location") {
        (
            "first_edit_wrong_place",
            0.6,
            format!(
                "{how} the first edit in the wrong place ({}), while the needed place went unchanged (missed_edit_location)",
                first.path
            ),
        )
    } else if assigned("incomplete_peripheral_propagation") {
        (
            "central_change_not_carried",
            0.5,
            format!(
                "{how} the central change in {} and carried it no further (incomplete_peripheral_propagation)",
                first.path
            ),
        )
    } else {
        (
            "first_edit_of_failing_fix",
            0.45,
            format!(
                "{how} the first edit of {} that the failing patch still holds: the fix the run committed to",
                first.path
            ),
        )
    };
    // Without the failing tests the patch is known to fail, not why.
    let confidence = if s.tests.is_none() { confidence - 0.1 } else { confidence };
    let mut evidence = vec![ev(step, rationale.clone())];
    if let Some(w) = first.written_at {
        evidence.push(ev(first.step, format!("ran the script written at step {w}: it changed {}", first.path)));
    }
    evidence.extend(
        s.origins.iter().filter(|o| o.path != first.path).map(|o| ev(o.first(), format!("first wrote {}", o.path))),
    );
    Some(Candidate { rule, step, confidence, rationale, evidence })
}
