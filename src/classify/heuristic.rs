//! The offline classifier: the rules' findings, gathered per mode of the taxonomy. A mode's
//! confidence is its strongest finding's; modes under the taxonomy's assignment threshold are "considered",
//! shown with their evidence but not assigned.

use crate::classify::rules::{self, Finding};
use crate::classify::signals::Signals;
use crate::label::taxonomy::Taxonomy;
use crate::label::{Judgement, Label, ModeVerdict, Provenance, Source};

/// Names the heuristic in labels; bumped when a rule changes what it gives.
pub const RATER: &str = "heuristic";
/// 3: onset and blame; 4: propagation from the followers of the agent's own change.
pub const VERSION: &str = "trajan-heuristic/4";

/// Classify one run from its signals. `input_hash` identifies the signals (a label with the same
/// hash and taxonomy is not made again).
pub fn classify(run_id: i64, signals: &Signals, taxonomy: &Taxonomy, input_hash: String) -> Label {
    let mut modes = Vec::new();
    let mut considered = Vec::new();
    for mode in &taxonomy.modes {
        let findings: Vec<Finding> = rules::evaluate(signals, &mode.rules);
        let Some(best) = findings.iter().map(|f| f.confidence).reduce(f64::max) else { continue };
        let mut evidence: Vec<_> = findings.iter().flat_map(|f| f.evidence.clone()).collect();
        evidence.sort_by_key(|e| e.step);
        evidence.dedup_by_key(|e| e.step);
        let rationale =
            findings.iter().map(|f| format!("[{}] {}", f.rule.name(), f.rationale)).collect::<Vec<_>>().join("; ");
        let verdict = ModeVerdict { mode: mode.id.clone(), confidence: round2(best), evidence, rationale };
        if best >= taxonomy.assign_threshold { modes.push(verdict) } else { considered.push(verdict) }
    }
    modes.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let blame = crate::classify::blame::blame(signals);
    let onset = crate::classify::onset::onset(signals, &modes, &blame);
    let summary = summary(signals, &modes, &considered);
    Label {
        run_id,
        source: Source::Heuristic,
        rater: RATER.into(),
        taxonomy: taxonomy.name.clone(),
        taxonomy_version: taxonomy.version.clone(),
        modes,
        considered,
        exit_category: signals.exit.name().into(),
        summary,
        provenance: Provenance { model: Some(VERSION.into()), input_hash: Some(input_hash), ..Provenance::default() },
        judgement: Judgement { onset: Some(onset), blame: Some(blame) },
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn summary(s: &Signals, modes: &[ModeVerdict], considered: &[ModeVerdict]) -> String {
    if s.resolved == Some(true) {
        return "resolved: not classified".into();
    }
    let unknown = if s.resolved.is_none() { " (outcome unknown)" } else { "" };
    format!("{}{unknown}{}", verdict(s, modes, considered), not_run(s))
}

/// The rules that could not run on the run: those that need a gold patch, when it has none.
pub fn not_run(s: &Signals) -> String {
    if s.miss_ratio.is_some() || s.resolved == Some(true) {
        return String::new();
    }
    let names: Vec<&str> = rules::NEEDS_GOLD.iter().map(|r| r.name()).collect();
    format!("; not run without a gold patch: {}", names.join(", "))
}

fn verdict(s: &Signals, modes: &[ModeVerdict], considered: &[ModeVerdict]) -> String {
    if !modes.is_empty() {
        let list: Vec<String> = modes.iter().map(|m| format!("{} ({:.2})", m.mode, m.confidence)).collect();
        return list.join(", ");
    }
    if s.first_edit_step.is_none() && s.rejections.is_empty() {
        return format!("unclassified: no edit attempted (exit {})", s.exit.name());
    }
    match considered.first() {
        Some(c) => format!("unclassified (weighed {})", c.mode),
        None => "unclassified: no rule fired".into(),
    }
}
