//! Small helpers for reading loosely-shaped JSON: fields that may be missing, strings that may
//! hold JSON, content that may be a string or a list of parts.

use crate::error::{IngestError, Location};
use serde_json::Value;
use std::path::Path;

/// Parse a whole document. Errors carry line and column.
pub fn parse_value(path: &Path, text: &str) -> Result<Value, IngestError> {
    serde_json::from_str(text).map_err(|e| IngestError::json(path, &e))
}

/// Parse a whole document; one with Python's non-standard values (`NaN`, `Infinity`, `1e400`,
/// lone surrogates) is read with them replaced and a warning for each kind (`lenient`).
pub fn parse_value_lenient(path: &Path, text: &str, warnings: &mut Vec<String>) -> Result<Value, IngestError> {
    parse_value(path, text).or_else(|e| {
        let Some(fixed) = super::lenient::rewrite(text) else { return Err(e) };
        let v = parse_value(path, &fixed.text)?;
        warnings.extend(fixed.warnings(path, text, None));
        Ok(v)
    })
}

/// One line of a JSON-lines file (its 1-based number, `last`: no newline follows it), read like
/// [`parse_value_lenient`]; the warnings name the line.
pub fn parse_line(
    path: &Path,
    lineno: usize,
    line: &str,
    last: bool,
    warnings: &mut Vec<String>,
) -> Result<Value, IngestError> {
    serde_json::from_str(line).or_else(|e| {
        let Some(fixed) = super::lenient::rewrite(line) else { return Err(line_error(path, lineno, &e, last)) };
        let v = serde_json::from_str(&fixed.text).map_err(|e| line_error(path, lineno, &e, last))?;
        warnings.extend(fixed.warnings(path, line, Some(lineno)));
        Ok(v)
    })
}

/// A string field, or `None` when missing, null or not a string.
pub fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A string field that is present and non-empty.
pub fn nonempty_str(v: &Value, key: &str) -> Option<String> {
    str_field(v, key).filter(|s| !s.trim().is_empty())
}

pub fn f64_field(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

pub fn i64_field(v: &Value, key: &str) -> Option<i64> {
    let x = v.get(key)?;
    x.as_i64().or_else(|| x.as_f64().map(|f| f as i64))
}

/// Follow a path of object keys.
pub fn at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(v, |cur, k| cur.get(*k))
}

pub use crate::model::flatten_content as content_text;

/// A value that may be JSON encoded inside a string (`"[\"a\", \"b\"]"`) or already a value.
pub fn maybe_nested_json(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// A list of strings, from a JSON list or a JSON-encoded list inside a string.
pub fn string_list(v: Option<&Value>) -> Vec<String> {
    let Some(v) = v else { return Vec::new() };
    match maybe_nested_json(v) {
        Value::Array(items) => items.into_iter().filter_map(|i| i.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// Compact JSON text of a value, or `None` for null/missing.
pub fn compact(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => None,
        Some(x) => Some(x.to_string()),
    }
}

/// Read a JSONL document line by line. Bad lines become warnings naming their line number;
/// `each` is called with the 1-based line number of every good line. Fails only when no line
/// at all could be read.
pub fn for_each_jsonl_line(
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
    mut each: impl FnMut(usize, Value) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let mut good = 0usize;
    let mut first_error: Option<IngestError> = None;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        // The line runs to the end of the text: no newline was written after it.
        let last = line.as_ptr() as usize - text.as_ptr() as usize + line.len() == text.len();
        let outcome = parse_line(path, lineno, line, last, warnings).and_then(|v| each(lineno, v));
        match outcome {
            Ok(()) => good += 1,
            Err(e) => {
                warnings.push(e.to_string());
                first_error.get_or_insert(e);
            }
        }
    }
    match (good, first_error) {
        (0, Some(e)) => Err(e),
        (0, None) => Err(IngestError::Empty { path: path.to_path_buf() }),
        _ => Ok(()),
    }
}

/// A JSON-lines line that is not JSON, named by its 1-based number. `last`: no newline follows
/// it, so a line that ends inside a value is where the file was cut mid-write (a line written
/// whole ends with its newline).
pub fn line_error(path: &Path, line: usize, err: &serde_json::Error, last: bool) -> IngestError {
    let mut message = crate::error::json_message(err);
    if last && err.classify() == serde_json::error::Category::Eof {
        message.push_str(" (the file is truncated inside this line: the line is not kept)");
    }
    IngestError::parse(path, Some(Location::LineColumn { line, column: err.column() }), message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_is_flattened_from_parts() {
        let v = json!([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]);
        assert_eq!(content_text(Some(&v)), "a\n[image_url part]\nb");
        assert_eq!(content_text(Some(&json!("plain"))), "plain");
        assert_eq!(content_text(None), "");
    }

    #[test]
    fn nested_json_strings_are_read() {
        assert_eq!(string_list(Some(&json!("[\"t1\", \"t2\"]"))), vec!["t1", "t2"]);
        assert_eq!(string_list(Some(&json!(["t3"]))), vec!["t3"]);
        assert!(string_list(Some(&json!("not json"))).is_empty());
    }

    #[test]
    fn jsonl_keeps_good_lines_and_names_the_bad_one() {
        let mut warnings = Vec::new();
        let mut seen = Vec::new();
        let text = "{\"a\":1}\n{\"a\":\n{\"a\":3}\n";
        for_each_jsonl_line(Path::new("x.jsonl"), text, &mut warnings, |n, v| {
            seen.push((n, v["a"].as_i64()));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, vec![(1, Some(1)), (3, Some(3))]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("x.jsonl: line 2"), "{}", warnings[0]);
        assert!(!warnings[0].contains("truncated"), "a bad line followed by others is not a cut: {}", warnings[0]);
    }

    #[test]
    fn jsonl_cut_in_its_last_line_says_so() {
        let mut warnings = Vec::new();
        let mut seen = Vec::new();
        let text = "{\"a\":1}\r\n{\"a\":2}\n{\"a\": [3, \"x";
        for_each_jsonl_line(Path::new("x.jsonl"), text, &mut warnings, |n, _| {
            seen.push(n);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, vec![1, 2]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("x.jsonl: line 3, column 12: EOF while parsing"), "{}", warnings[0]);
        assert!(
            warnings[0].ends_with("(the file is truncated inside this line: the line is not kept)"),
            "{}",
            warnings[0]
        );
    }
}
