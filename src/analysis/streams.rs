//! A tool result that is a JSON object of streams (`{"stdout": "...\n...", "stderr": "",
//! "exit_code": 1}`, as many agents' shell tools answer) read as what a terminal would have
//! shown: stdout, then stderr under a marker, then the exit code. Stored and indexed so, search
//! finds what the reviewer sees (`ModuleNotFoundError: No module named`, not the escaped
//! `nModuleNotFoundError`). Any other JSON is left as it is.

use serde_json::{Map, Value};

/// Keys of the text streams, in the order shown.
const STREAMS: &[&str] = &["stdout", "output", "stderr"];
/// Keys of the exit code.
const CODES: &[&str] = &["exit_code", "exitCode", "returncode", "return_code", "exit_status", "code"];
/// Other keys such an object may hold; a key outside all three lists means it is some other
/// JSON, shown as it is.
const OTHER: &[&str] =
    &["duration", "duration_ms", "elapsed", "timed_out", "timedOut", "interrupted", "truncated", "success", "error"];

/// The streams of a result that is such an object, as text; `None` for any other text.
pub fn decode(text: &str) -> Option<String> {
    let t = text.trim();
    if !t.starts_with('{') || !t.ends_with('}') {
        return None;
    }
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) else { return None };
    if !STREAMS.iter().any(|k| o.get(*k).is_some_and(Value::is_string)) {
        return None;
    }
    if o.keys().any(|k| !STREAMS.contains(&k.as_str()) && !CODES.contains(&k.as_str()) && !OTHER.contains(&k.as_str()))
    {
        return None;
    }
    Some(render(&o))
}

fn render(o: &Map<String, Value>) -> String {
    let mut out = String::new();
    let mut push = |marker: Option<&str>, body: &str| {
        if body.is_empty() {
            return;
        }
        if let Some(m) = marker {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(m);
            out.push('\n');
        }
        out.push_str(body);
    };
    for key in ["stdout", "output"] {
        push(None, o.get(key).and_then(Value::as_str).unwrap_or(""));
    }
    push(Some("[stderr]"), o.get("stderr").and_then(Value::as_str).unwrap_or(""));
    if let Some(e) = o.get("error").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        push(Some("[error]"), e);
    }
    let code = CODES.iter().find_map(|k| o.get(*k)).filter(|v| !v.is_null());
    if let Some(c) = code {
        let shown = c.as_i64().map_or_else(|| c.to_string(), |n| n.to_string());
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("[exit code {shown}]"));
    }
    if o.get("timed_out").or_else(|| o.get("timedOut")).and_then(Value::as_bool) == Some(true) {
        out.push_str(if out.is_empty() || out.ends_with('\n') { "[timed out]" } else { "\n[timed out]" });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_read_as_a_terminal_shows_them() {
        let text = r#"{"stdout": "collected 2 items\nE   ModuleNotFoundError: No module named 'x'\n", "stderr": "warning: y\n", "exit_code": 1}"#;
        assert_eq!(
            decode(text).as_deref(),
            Some(
                "collected 2 items\nE   ModuleNotFoundError: No module named 'x'\n[stderr]\nwarning: y\n[exit code 1]"
            )
        );
        assert_eq!(decode(r#"{"output": "ok", "exitCode": 0}"#).as_deref(), Some("ok\n[exit code 0]"));
        assert_eq!(
            decode(r#"{"stdout": "", "stderr": "boom", "timed_out": true}"#).as_deref(),
            Some("[stderr]\nboom\n[timed out]")
        );
    }

    #[test]
    fn other_json_and_text_are_left_as_they_are() {
        assert_eq!(decode("plain text"), None);
        assert_eq!(decode(r#"{"name": "pkg", "version": "1.0"}"#), None, "no stream");
        assert_eq!(decode(r#"{"stdout": "x", "headers": {}}"#), None, "a key of some other object");
        assert_eq!(decode(r#"{"stdout": 3}"#), None, "a stream that is no text");
        assert_eq!(decode("{not json}"), None);
    }
}
