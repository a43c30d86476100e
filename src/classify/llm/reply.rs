//! Reading and validating the LLM's reply: one JSON object with modes (each with confidence,
//! evidence steps and rationale) or unclassified, a summary, the run's onset (the decisive
//! error step, its evidence, confidence and rationale) and its blame (agent, task or
//! environment, with the reason). Unknown modes, steps out of range, bad confidences, a blame
//! that is none of the three and contradictions are errors whose text goes back to the model
//! once.

use crate::label::taxonomy::Taxonomy;
use crate::label::{Blame, BlameVerdict, Evidence, Judgement, ModeVerdict, Onset};
use serde::{Deserialize, Serialize};

/// A validated reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub modes: Vec<ModeVerdict>,
    pub summary: String,
    /// Onset and blame.
    #[serde(default)]
    pub judgement: Judgement,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ReplyError(pub String);

/// Unknown fields (a model's own `reasoning`, say) are ignored.
#[derive(Deserialize)]
struct RawReply {
    modes: Vec<RawMode>,
    #[serde(default)]
    unclassified: Option<bool>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    onset: Option<RawOnset>,
    #[serde(default)]
    blame: Option<RawBlame>,
}

#[derive(Deserialize)]
struct RawOnset {
    step: Option<i64>,
    #[serde(default)]
    evidence: Vec<RawEvidence>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    rationale: String,
}

#[derive(Deserialize)]
struct RawBlame {
    value: Option<String>,
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize)]
struct RawMode {
    mode: String,
    confidence: f64,
    evidence: Vec<RawEvidence>,
    rationale: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawEvidence {
    Step(i64),
    Noted {
        step: i64,
        #[serde(default)]
        note: String,
    },
}

/// Summaries longer than this are cut.
const SUMMARY_CAP: usize = 300;

/// The reply as the JSON object asked for: the whole text when it parses, else the part inside
/// a ``` fence, else from the first `{` to the last `}` (models wrap JSON in prose despite
/// instructions).
fn read_reply(text: &str) -> Result<RawReply, serde_json::Error> {
    let t = text.trim();
    let first = serde_json::from_str(t);
    if first.is_ok() {
        return first;
    }
    let fenced = t.find("```").and_then(|start| {
        let after = &t[start + 3..];
        let body = after.strip_prefix("json").unwrap_or(after);
        body.find("```").map(|end| body[..end].trim())
    });
    if let Some(reply) = fenced.and_then(|f| serde_json::from_str(f).ok()) {
        return Ok(reply);
    }
    match (t.find('{'), t.rfind('}')) {
        (Some(a), Some(b)) if a < b => serde_json::from_str(&t[a..=b]).or(first),
        _ => first,
    }
}

/// Rationales and evidence notes longer than these are cut (a reply is stored twice).
const RATIONALE_CAP: usize = 2_000;
const NOTE_CAP: usize = 500;

fn cap(text: String, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Parse and validate a reply for a run of `steps` steps under `taxonomy`.
pub fn parse(text: &str, taxonomy: &Taxonomy, steps: usize) -> Result<Reply, ReplyError> {
    let raw = read_reply(text).map_err(|e| ReplyError(format!("the reply is not the JSON object asked for: {e}")))?;
    if raw.unclassified == Some(true) && !raw.modes.is_empty() {
        return Err(ReplyError(
            "\"unclassified\" is true but modes are listed; give modes or unclassified, not both".into(),
        ));
    }
    if raw.unclassified == Some(false) && raw.modes.is_empty() {
        return Err(ReplyError("\"unclassified\" is false but no mode is listed".into()));
    }
    let mut modes: Vec<ModeVerdict> = Vec::new();
    for m in raw.modes {
        if taxonomy.mode(&m.mode).is_none() {
            let known: Vec<&str> = taxonomy.modes.iter().map(|m| m.id.as_str()).collect();
            return Err(ReplyError(format!("unknown mode {:?}; the modes are: {}", m.mode, known.join(", "))));
        }
        if modes.iter().any(|x| x.mode == m.mode) {
            return Err(ReplyError(format!("mode {:?} is listed twice", m.mode)));
        }
        if !(0.0..=1.0).contains(&m.confidence) {
            return Err(ReplyError(format!("confidence {} of {:?} is outside 0.0 to 1.0", m.confidence, m.mode)));
        }
        if m.evidence.is_empty() {
            return Err(ReplyError(format!("mode {:?} cites no evidence step", m.mode)));
        }
        let mut evidence = Vec::new();
        for e in m.evidence {
            let (step, note) = match e {
                RawEvidence::Step(s) => (s, String::new()),
                RawEvidence::Noted { step, note } => (step, note),
            };
            if step < 0 || step as usize >= steps {
                return Err(ReplyError(format!(
                    "evidence step {step} of {:?} is out of range: the run has steps 0 to {}",
                    m.mode,
                    steps.saturating_sub(1)
                )));
            }
            evidence.push(Evidence { step: step as usize, note: cap(note, NOTE_CAP) });
        }
        if m.rationale.trim().is_empty() {
            return Err(ReplyError(format!("mode {:?} has no rationale", m.mode)));
        }
        let rationale = cap(m.rationale, RATIONALE_CAP);
        modes.push(ModeVerdict { mode: m.mode, confidence: m.confidence, evidence, rationale });
    }
    let summary: String = raw.summary.unwrap_or_default().trim().chars().take(SUMMARY_CAP).collect();
    let judgement = judgement(raw.onset, raw.blame, steps)?;
    Ok(Reply { modes, summary, judgement })
}

/// A step the reply names, checked against the run's steps.
fn step_in(step: i64, what: &str, steps: usize) -> Result<usize, ReplyError> {
    if step < 0 || step as usize >= steps {
        return Err(ReplyError(format!(
            "{what} {step} is out of range: the run has steps 0 to {}",
            steps.saturating_sub(1)
        )));
    }
    Ok(step as usize)
}

/// The reply's onset and blame: both given, the blame one of the three, the onset's steps in the
/// run, and an onset step only with the agent's blame.
fn judgement(onset: Option<RawOnset>, blame: Option<RawBlame>, steps: usize) -> Result<Judgement, ReplyError> {
    let blame = blame.ok_or_else(|| ReplyError("the reply gives no \"blame\": agent, task or environment".into()))?;
    let onset = onset.ok_or_else(|| {
        ReplyError("the reply gives no \"onset\" (a step, or null when the blame is not the agent's)".into())
    })?;
    let value = match blame.value.as_deref().map(str::trim) {
        Some(v) => Blame::from_name(&v.to_ascii_lowercase())
            .ok_or_else(|| ReplyError(format!("blame {v:?} is none of agent, task, environment")))?,
        None => return Err(ReplyError("the blame has no value: agent, task or environment".into())),
    };
    if blame.reason.trim().is_empty() {
        return Err(ReplyError("the blame has no reason".into()));
    }
    let step = onset.step.map(|s| step_in(s, "onset step", steps)).transpose()?;
    if let (Some(s), Blame::Task | Blame::Environment) = (step, value) {
        return Err(ReplyError(format!(
            "onset step {s} is given with blame {}: give an onset step only when the blame is the agent's, else null",
            value.name()
        )));
    }
    let confidence = onset.confidence.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&confidence) {
        return Err(ReplyError(format!("onset confidence {confidence} is outside 0.0 to 1.0")));
    }
    let mut evidence = Vec::new();
    for e in onset.evidence {
        let (s, note) = match e {
            RawEvidence::Step(s) => (s, String::new()),
            RawEvidence::Noted { step, note } => (step, note),
        };
        evidence.push(Evidence { step: step_in(s, "onset evidence step", steps)?, note: cap(note, NOTE_CAP) });
    }
    if let Some(s) = step.filter(|s| !evidence.iter().any(|e| e.step == *s)) {
        evidence.insert(0, Evidence { step: s, note: String::new() });
    }
    Ok(Judgement {
        onset: Some(Onset {
            step,
            evidence,
            confidence,
            rationale: cap(onset.rationale, RATIONALE_CAP),
            missing: Vec::new(),
        }),
        blame: Some(BlameVerdict {
            value: Some(value),
            reason: cap(blame.reason, RATIONALE_CAP),
            evidence: Vec::new(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taxonomy() -> Taxonomy {
        Taxonomy::preset("refactoring").unwrap()
    }

    #[test]
    fn good_replies_in_the_shapes_models_send() {
        let plain = r#"{"modes": [{"mode": "context_flooding", "confidence": 0.7, "evidence": [{"step": 3, "note": "cat of a 40k file"}, 5], "rationale": "re-read"}], "unclassified": false, "summary": "lost the thread", "onset": {"step": 4, "evidence": [{"step": 3, "note": "chose the wrong file"}], "confidence": 0.6, "rationale": "first edit elsewhere"}, "blame": {"value": "agent", "reason": "its own choice"}}"#;
        let r = parse(plain, &taxonomy(), 10).unwrap();
        assert_eq!(
            r.modes[0].evidence,
            vec![Evidence { step: 3, note: "cat of a 40k file".into() }, Evidence { step: 5, note: String::new() }]
        );
        assert_eq!(r.summary, "lost the thread");
        let fenced = format!("Here is my answer:\n```json\n{plain}\n```\n");
        assert_eq!(parse(&fenced, &taxonomy(), 10).unwrap(), r);
        // The onset's own step is evidence too.
        let onset = r.judgement.onset.clone().unwrap_or_default();
        assert_eq!((onset.step, onset.evidence.iter().map(|e| e.step).collect::<Vec<_>>()), (Some(4), vec![4, 3]));
        assert_eq!(r.judgement.blame.as_ref().and_then(|b| b.value), Some(Blame::Agent));
        let none = parse(
            r#"{"modes": [], "unclassified": true, "summary": "a test id that does not exist", "onset": {"step": null}, "blame": {"value": "Task", "reason": "no such test"}}"#,
            &taxonomy(),
            10,
        )
        .unwrap();
        assert!(none.modes.is_empty());
        assert_eq!(none.judgement.onset.as_ref().map(|o| o.step), Some(None));
        assert_eq!(none.judgement.blame.and_then(|b| b.value), Some(Blame::Task));
        // Plain JSON whose text holds a fence, and fields of the model's own, are fine.
        let ticks = r#"{"modes": [{"mode": "context_flooding", "confidence": 0.6, "evidence": [2], "rationale": "ran ```cat big.py``` twice"}], "reasoning": "mine", "summary": "s", "onset": {"step": 4, "evidence": [{"step": 3, "note": "chose the wrong file"}], "confidence": 0.6, "rationale": "first edit elsewhere"}, "blame": {"value": "agent", "reason": "its own choice"}}"#;
        assert_eq!(parse(ticks, &taxonomy(), 10).unwrap().modes[0].rationale, "ran ```cat big.py``` twice");
        let long = format!(
            r#"{{"modes": [{{"mode": "context_flooding", "confidence": 0.6, "evidence": [2], "rationale": "{}"}}], "onset": {{"step": 2}}, "blame": {{"value": "agent", "reason": "r"}}}}"#,
            "r".repeat(10_000)
        );
        assert_eq!(parse(&long, &taxonomy(), 10).unwrap().modes[0].rationale.chars().count(), RATIONALE_CAP + 1);
    }

    #[test]
    fn invalid_replies_say_what_is_wrong() {
        let cases = [
            ("not json at all", "not the JSON object"),
            (
                r#"{"modes": [{"mode": "bad_mode", "confidence": 0.5, "evidence": [1], "rationale": "r"}]}"#,
                "unknown mode \"bad_mode\"",
            ),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 0.5, "evidence": [10], "rationale": "r"}]}"#,
                "step 10 of \"context_flooding\" is out of range: the run has steps 0 to 9",
            ),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 1.5, "evidence": [1], "rationale": "r"}]}"#,
                "outside 0.0 to 1.0",
            ),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 0.5, "evidence": [], "rationale": "r"}]}"#,
                "no evidence",
            ),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 0.5, "evidence": [1], "rationale": " "}]}"#,
                "no rationale",
            ),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 0.5, "evidence": [1], "rationale": "r"}], "unclassified": true}"#,
                "not both",
            ),
            (r#"{"modes": [], "unclassified": false}"#, "no mode is listed"),
            (
                r#"{"modes": [{"mode": "context_flooding", "confidence": 0.5, "evidence": [1], "rationale": "r"}, {"mode": "context_flooding", "confidence": 0.5, "evidence": [1], "rationale": "r"}]}"#,
                "twice",
            ),
            (r#"{"labels": []}"#, "not the JSON object"),
            (r#"{"modes": [], "unclassified": true, "onset": {"step": 1}}"#, "no \"blame\""),
            (r#"{"modes": [], "unclassified": true, "blame": {"value": "agent", "reason": "r"}}"#, "no \"onset\""),
            (
                r#"{"modes": [], "unclassified": true, "onset": {"step": 12}, "blame": {"value": "agent", "reason": "r"}}"#,
                "onset step 12 is out of range: the run has steps 0 to 9",
            ),
            (
                r#"{"modes": [], "unclassified": true, "onset": {"step": 2}, "blame": {"value": "harness", "reason": "r"}}"#,
                "blame \"harness\" is none of agent, task, environment",
            ),
            (
                r#"{"modes": [], "unclassified": true, "onset": {"step": 2}, "blame": {"value": "environment", "reason": "r"}}"#,
                "onset step 2 is given with blame environment",
            ),
            (
                r#"{"modes": [], "unclassified": true, "onset": {"step": 2, "evidence": [-1]}, "blame": {"value": "agent", "reason": "r"}}"#,
                "onset evidence step -1 is out of range",
            ),
            (
                r#"{"modes": [], "unclassified": true, "onset": {"step": 2}, "blame": {"value": "agent", "reason": " "}}"#,
                "no reason",
            ),
            (r#"{"modes": "none"}"#, "not the JSON object"),
        ];
        for (text, want) in cases {
            let err = parse(text, &taxonomy(), 10).unwrap_err().0;
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
