//! Reading and validating the LLM's reply: one JSON object with modes (each with confidence,
//! evidence steps and rationale) or unclassified, and a summary. Unknown modes, steps out of
//! range, bad confidences and contradictions are errors whose text goes back to the model once.

use crate::label::taxonomy::Taxonomy;
use crate::label::{Evidence, ModeVerdict};
use serde::{Deserialize, Serialize};

/// A validated reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub modes: Vec<ModeVerdict>,
    pub summary: String,
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
    Ok(Reply { modes, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taxonomy() -> Taxonomy {
        Taxonomy::preset("refactoring").unwrap()
    }

    #[test]
    fn good_replies_in_the_shapes_models_send() {
        let plain = r#"{"modes": [{"mode": "context_flooding", "confidence": 0.7, "evidence": [{"step": 3, "note": "cat of a 40k file"}, 5], "rationale": "re-read"}], "unclassified": false, "summary": "lost the thread"}"#;
        let r = parse(plain, &taxonomy(), 10).unwrap();
        assert_eq!(
            r.modes[0].evidence,
            vec![Evidence { step: 3, note: "cat of a 40k file".into() }, Evidence { step: 5, note: String::new() }]
        );
        assert_eq!(r.summary, "lost the thread");
        let fenced = format!("Here is my answer:\n```json\n{plain}\n```\n");
        assert_eq!(parse(&fenced, &taxonomy(), 10).unwrap(), r);
        let none = parse(r#"{"modes": [], "unclassified": true, "summary": "wrong logic"}"#, &taxonomy(), 10).unwrap();
        assert!(none.modes.is_empty());
        // Plain JSON whose text holds a fence, and fields of the model's own, are fine.
        let ticks = r#"{"modes": [{"mode": "context_flooding", "confidence": 0.6, "evidence": [2], "rationale": "ran ```cat big.py``` twice"}], "reasoning": "mine", "summary": "s"}"#;
        assert_eq!(parse(ticks, &taxonomy(), 10).unwrap().modes[0].rationale, "ran ```cat big.py``` twice");
        let long = format!(
            r#"{{"modes": [{{"mode": "context_flooding", "confidence": 0.6, "evidence": [2], "rationale": "{}"}}]}}"#,
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
            (r#"{"modes": "none"}"#, "not the JSON object"),
        ];
        for (text, want) in cases {
            let err = parse(text, &taxonomy(), 10).unwrap_err().0;
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
