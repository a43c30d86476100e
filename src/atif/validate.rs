//! The checks of an ATIF document against the RFC (Harbor RFC 0001, v1.0 to v1.8), as Harbor's
//! own models enforce them: required fields and their types, no unknown field outside the `extra`
//! objects, `step_id` counting from 1, `source` one of system / user / agent, the agent-only
//! fields (`model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls`, `metrics`) only on
//! agent steps, every `source_call_id` naming a tool call of its own step, content parts of a
//! known type with what that type needs, and embedded subagent trajectories checked the same way
//! with unique ids. Written from the RFC, without a network: the test of the export runs them.

use serde_json::{Map, Value};

const ROOT_KEYS: &[&str] = &[
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
];
const AGENT_KEYS: &[&str] = &["name", "version", "model_name", "tool_definitions", "extra"];
const STEP_KEYS: &[&str] = &[
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
];
const AGENT_ONLY: &[&str] = &["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"];
const TOOL_CALL_KEYS: &[&str] = &["tool_call_id", "function_name", "arguments", "extra"];
const RESULT_KEYS: &[&str] = &["source_call_id", "content", "subagent_trajectory_ref", "extra"];
const METRICS_KEYS: &[&str] = &[
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost_usd",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "extra",
];
const FINAL_KEYS: &[&str] = &[
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
];
const REF_KEYS: &[&str] = &["session_id", "trajectory_id", "trajectory_path", "extra"];

/// Every way `doc` breaks the RFC, each naming where (`steps[3].tool_calls[0].arguments: ...`);
/// empty for a valid document.
pub fn validate(doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    trajectory(doc, "", &mut errors);
    errors
}

fn trajectory(doc: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(root) = object(doc, if at.is_empty() { "document" } else { at }, errors) else { return };
    let path = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    unknown(root, ROOT_KEYS, at, errors);
    match root.get("schema_version").and_then(Value::as_str) {
        Some(v) if super::KNOWN_VERSIONS.contains(&v) => {}
        Some(v) => errors.push(format!("{}: {v:?} is not a documented ATIF version", path("schema_version"))),
        None => errors.push(format!("{}: required string", path("schema_version"))),
    }
    for key in ["session_id", "trajectory_id", "notes", "continued_trajectory_ref"] {
        optional_string(root, key, &path(key), errors);
    }
    match root.get("agent") {
        Some(agent) => {
            if let Some(a) = object(agent, &path("agent"), errors) {
                unknown(a, AGENT_KEYS, &path("agent"), errors);
                for key in ["name", "version"] {
                    if !a.get(key).is_some_and(Value::is_string) {
                        errors.push(format!("{}.{key}: required string", path("agent")));
                    }
                }
                optional_string(a, "model_name", &format!("{}.model_name", path("agent")), errors);
                extra(a, &path("agent"), errors);
            }
        }
        None => errors.push(format!("{}: required object", path("agent"))),
    }
    match root.get("steps").and_then(Value::as_array) {
        Some(steps) if !steps.is_empty() => {
            for (i, s) in steps.iter().enumerate() {
                step(s, i, &format!("{}[{i}]", path("steps")), errors);
            }
        }
        _ => errors.push(format!("{}: required non-empty array", path("steps"))),
    }
    if let Some(f) = root.get("final_metrics").filter(|v| !v.is_null()) {
        counts(
            f,
            FINAL_KEYS,
            &["total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"],
            "total_cost_usd",
            &path("final_metrics"),
            errors,
        );
    }
    extra(root, at, errors);
    if let Some(children) = root.get("subagent_trajectories").filter(|v| !v.is_null()) {
        let Some(children) = children.as_array() else {
            errors.push(format!("{}: expected array", path("subagent_trajectories")));
            return;
        };
        let mut seen = std::collections::HashSet::new();
        for (i, child) in children.iter().enumerate() {
            let here = format!("{}[{i}]", path("subagent_trajectories"));
            trajectory(child, &here, errors);
            match child.get("trajectory_id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => {
                    if !seen.insert(id.to_string()) {
                        errors.push(format!("{here}.trajectory_id: {id:?} is not unique"));
                    }
                }
                _ => errors.push(format!("{here}.trajectory_id: required for an embedded trajectory")),
            }
        }
    }
}

fn step(s: &Value, index: usize, at: &str, errors: &mut Vec<String>) {
    let Some(s) = object(s, at, errors) else { return };
    unknown(s, STEP_KEYS, at, errors);
    match s.get("step_id").and_then(Value::as_i64) {
        Some(id) if id == index as i64 + 1 => {}
        other => errors.push(format!("{at}.step_id: expected {}, found {other:?}", index + 1)),
    }
    let source = s.get("source").and_then(Value::as_str).unwrap_or_default();
    if !super::SOURCES.contains(&source) {
        errors.push(format!("{at}.source: must be system, user or agent"));
    }
    match s.get("message") {
        None => errors.push(format!("{at}.message: required (may be empty)")),
        Some(m) => content(m, &format!("{at}.message"), errors),
    }
    if source != "agent" {
        for key in AGENT_ONLY {
            if s.get(*key).is_some_and(|v| !v.is_null()) {
                errors.push(format!("{at}.{key}: only an agent step may have it"));
            }
        }
    }
    if let Some(t) = s.get("timestamp").filter(|v| !v.is_null()) {
        let ok = t.as_str().is_some_and(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).is_ok()
                || time::PrimitiveDateTime::parse(t, &time::format_description::well_known::Iso8601::DEFAULT).is_ok()
        });
        if !ok {
            errors.push(format!("{at}.timestamp: not an ISO 8601 time"));
        }
    }
    optional_string(s, "reasoning_content", &format!("{at}.reasoning_content"), errors);
    if let Some(b) = s.get("is_copied_context").filter(|v| !v.is_null())
        && !b.is_boolean()
    {
        errors.push(format!("{at}.is_copied_context: expected a boolean"));
    }
    let mut ids = std::collections::HashSet::new();
    if let Some(calls) = s.get("tool_calls").filter(|v| !v.is_null()) {
        match calls.as_array() {
            None => errors.push(format!("{at}.tool_calls: expected array")),
            Some(calls) => {
                for (i, c) in calls.iter().enumerate() {
                    let here = format!("{at}.tool_calls[{i}]");
                    let Some(c) = object(c, &here, errors) else { continue };
                    unknown(c, TOOL_CALL_KEYS, &here, errors);
                    match c.get("tool_call_id").and_then(Value::as_str) {
                        Some(id) => {
                            ids.insert(id.to_string());
                        }
                        None => errors.push(format!("{here}.tool_call_id: required string")),
                    }
                    if !c.get("function_name").is_some_and(Value::is_string) {
                        errors.push(format!("{here}.function_name: required string"));
                    }
                    if !c.get("arguments").is_some_and(Value::is_object) {
                        errors.push(format!("{here}.arguments: required object (may be empty)"));
                    }
                    extra(c, &here, errors);
                }
            }
        }
    }
    if let Some(o) = s.get("observation").filter(|v| !v.is_null()) {
        observation(o, &format!("{at}.observation"), &ids, errors);
    }
    if let Some(m) = s.get("metrics").filter(|v| !v.is_null()) {
        counts(
            m,
            METRICS_KEYS,
            &["prompt_tokens", "completion_tokens", "cached_tokens"],
            "cost_usd",
            &format!("{at}.metrics"),
            errors,
        );
    }
    extra(s, at, errors);
}

fn observation(o: &Value, at: &str, ids: &std::collections::HashSet<String>, errors: &mut Vec<String>) {
    let Some(o) = object(o, at, errors) else { return };
    unknown(o, &["results"], at, errors);
    let Some(results) = o.get("results").and_then(Value::as_array) else {
        errors.push(format!("{at}.results: required array"));
        return;
    };
    for (i, r) in results.iter().enumerate() {
        let here = format!("{at}.results[{i}]");
        let Some(r) = object(r, &here, errors) else { continue };
        unknown(r, RESULT_KEYS, &here, errors);
        match r.get("source_call_id") {
            None | Some(Value::Null) => {}
            Some(Value::String(id)) if ids.contains(id) => {}
            Some(Value::String(id)) => {
                errors.push(format!("{here}.source_call_id: {id:?} names no tool call of this step"))
            }
            Some(_) => errors.push(format!("{here}.source_call_id: expected a string")),
        }
        if let Some(c) = r.get("content").filter(|v| !v.is_null()) {
            content(c, &format!("{here}.content"), errors);
        }
        if let Some(refs) = r.get("subagent_trajectory_ref").filter(|v| !v.is_null()) {
            match refs.as_array() {
                None => errors.push(format!("{here}.subagent_trajectory_ref: expected array")),
                Some(refs) => {
                    for (j, reference) in refs.iter().enumerate() {
                        let there = format!("{here}.subagent_trajectory_ref[{j}]");
                        let Some(reference) = object(reference, &there, errors) else { continue };
                        unknown(reference, REF_KEYS, &there, errors);
                        let named = ["session_id", "trajectory_id", "trajectory_path"]
                            .iter()
                            .any(|k| reference.get(*k).is_some_and(Value::is_string));
                        if !named {
                            errors.push(format!(
                                "{there}: names no trajectory (session_id, trajectory_id or trajectory_path)"
                            ));
                        }
                    }
                }
            }
        }
        extra(r, &here, errors);
    }
}

/// A message or content: a string, or a list of parts (`text` with its text; `image` or `audio`
/// with a `source` naming a file and its media type).
fn content(c: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(parts) = c.as_array() else {
        if !c.is_string() {
            errors.push(format!("{at}: expected a string or a list of content parts"));
        }
        return;
    };
    for (i, p) in parts.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let Some(p) = object(p, &here, errors) else { continue };
        unknown(p, &["type", "text", "source"], &here, errors);
        match p.get("type").and_then(Value::as_str) {
            Some("text") => {
                if !p.get("text").is_some_and(Value::is_string) {
                    errors.push(format!("{here}.text: required for a text part"));
                }
            }
            Some(kind @ ("image" | "audio")) => {
                let media = p.get("source").and_then(|s| s.get("media_type")).and_then(Value::as_str).unwrap_or("");
                let path = p.get("source").and_then(|s| s.get("path")).is_some_and(Value::is_string);
                if !media.starts_with(&format!("{kind}/")) || !path {
                    errors.push(format!("{here}.source: a {kind} part needs a media_type {kind}/... and a path"));
                }
            }
            _ => errors.push(format!("{here}.type: must be text, image or audio")),
        }
    }
}

fn counts(v: &Value, keys: &[&str], integers: &[&str], money: &str, at: &str, errors: &mut Vec<String>) {
    let Some(m) = object(v, at, errors) else { return };
    unknown(m, keys, at, errors);
    for key in integers {
        if let Some(n) = m.get(*key).filter(|v| !v.is_null())
            && !(n.is_i64() || n.is_u64())
        {
            errors.push(format!("{at}.{key}: expected an integer"));
        }
    }
    if let Some(n) = m.get(money).filter(|v| !v.is_null())
        && !n.is_number()
    {
        errors.push(format!("{at}.{money}: expected a number"));
    }
    extra(m, at, errors);
}

fn object<'a>(v: &'a Value, at: &str, errors: &mut Vec<String>) -> Option<&'a Map<String, Value>> {
    let o = v.as_object();
    if o.is_none() {
        errors.push(format!("{at}: expected an object"));
    }
    o
}

fn unknown(o: &Map<String, Value>, allowed: &[&str], at: &str, errors: &mut Vec<String>) {
    for k in o.keys().filter(|k| !allowed.contains(&k.as_str())) {
        let at = if at.is_empty() { String::new() } else { format!("{at}.") };
        errors.push(format!("{at}{k}: not an ATIF field (custom data goes in `extra`)"));
    }
}

fn optional_string(o: &Map<String, Value>, key: &str, at: &str, errors: &mut Vec<String>) {
    if o.get(key).is_some_and(|v| !v.is_null() && !v.is_string()) {
        errors.push(format!("{at}: expected a string"));
    }
}

fn extra(o: &Map<String, Value>, at: &str, errors: &mut Vec<String>) {
    if o.get("extra").is_some_and(|v| !v.is_null() && !v.is_object()) {
        let at = if at.is_empty() { String::new() } else { format!("{at}.") };
        errors.push(format!("{at}extra: expected an object"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn valid() -> Value {
        json!({
            "schema_version": "ATIF-v1.7", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": "hi", "timestamp": "2025-10-11T10:30:00Z"},
                {"step_id": 2, "source": "agent", "message": "",
                 "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {}}],
                 "observation": {"results": [{"source_call_id": "c1", "content": "ok"}]},
                 "metrics": {"prompt_tokens": 1, "completion_tokens": 1, "cost_usd": 0.5}}
            ]
        })
    }

    #[test]
    fn a_valid_document_passes_and_each_rule_rejects_its_break() {
        assert_eq!(validate(&valid()), Vec::<String>::new());
        type Break = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(&str, Break, &str)> = vec![
            ("version", Box::new(|d| d["schema_version"] = json!("ATIF-v9")), "schema_version"),
            (
                "agent name",
                Box::new(|d| d["agent"].as_object_mut().map(|a| a.remove("name")).map(drop).unwrap_or(())),
                "agent.name",
            ),
            ("step order", Box::new(|d| d["steps"][1]["step_id"] = json!(3)), "steps[1].step_id"),
            ("source", Box::new(|d| d["steps"][0]["source"] = json!("tool")), "steps[0].source"),
            (
                "message",
                Box::new(|d| d["steps"][0].as_object_mut().map(|s| s.remove("message")).map(drop).unwrap_or(())),
                "steps[0].message",
            ),
            ("agent-only", Box::new(|d| d["steps"][0]["reasoning_content"] = json!("x")), "steps[0].reasoning_content"),
            ("unknown key", Box::new(|d| d["steps"][1]["thought"] = json!("x")), "steps[1].thought"),
            (
                "call ref",
                Box::new(|d| d["steps"][1]["observation"]["results"][0]["source_call_id"] = json!("c9")),
                "source_call_id",
            ),
            ("arguments", Box::new(|d| d["steps"][1]["tool_calls"][0]["arguments"] = json!("ls")), "arguments"),
            ("tokens", Box::new(|d| d["steps"][1]["metrics"]["prompt_tokens"] = json!(1.5)), "prompt_tokens"),
            ("timestamp", Box::new(|d| d["steps"][0]["timestamp"] = json!("yesterday")), "timestamp"),
            (
                "part",
                Box::new(|d| d["steps"][0]["message"] = json!([{"type": "image", "source": {"path": "x"}}])),
                "message[0].source",
            ),
            ("steps", Box::new(|d| d["steps"] = json!([])), "steps"),
        ];
        for (name, break_it, expect) in cases {
            let mut d = valid();
            break_it(&mut d);
            let errors = validate(&d);
            assert!(errors.iter().any(|e| e.contains(expect)), "{name}: {errors:?}");
        }
    }
}
