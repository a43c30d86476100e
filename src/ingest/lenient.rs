//! JSON as Python's `json.dumps` writes it: `NaN`, `Infinity`, `-Infinity`, numbers beyond the
//! range of a double (`1e400`) and lone surrogates (`"\ud83d"`) are not JSON, and serde_json
//! rejects the whole document for one of them.
//!
//! Only reached when the normal parse has failed (good files pay nothing): [`rewrite`] copies the
//! text with those tokens replaced — `null` for the numbers, `\ufffd` for a lone surrogate — and
//! the caller parses the copy, with one warning per kind of value naming where the first one was
//! ([`Rewritten::warnings`]). A small scanner tells strings from the rest, so `"NaN"` inside a
//! string is left alone. Replacements keep the length of what they replace (padded with spaces)
//! except `NaN`, which grows by one byte, so later positions stay right or nearly so.
//!
//! A trailing comma before `]` or `}` (2024 SWE-bench/experiments `results.json` files written by
//! hand, CodeR's among them) is dropped the same way, with a note naming its line: it loses
//! nothing.

use std::path::Path;

/// What was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `NaN`, `Infinity`, `-Infinity`.
    NonFinite,
    /// A number a double cannot hold.
    OutOfRange,
    /// A `\uD800`-`\uDFFF` escape that is not half of a pair.
    LoneSurrogate,
    /// A `,` with only white space before the `]` or `}` that closes its list or object.
    TrailingComma,
}

#[derive(Debug)]
struct Fix {
    kind: Kind,
    /// Byte offset of the replaced token in the original text.
    at: usize,
    /// The token as written (cut to a few characters).
    token: String,
}

/// A copy of a text with its non-standard values replaced.
#[derive(Debug)]
pub struct Rewritten {
    pub text: String,
    fixes: Vec<Fix>,
}

/// The text with `NaN`, `Infinity`, `-Infinity` and out-of-range numbers outside strings
/// replaced by `null`, lone surrogate escapes inside strings by `\ufffd`, and trailing commas by a
/// space; `None` when there is none of them (the parse failed for another reason).
pub fn rewrite(text: &str) -> Option<Rewritten> {
    let b = text.as_bytes();
    let mut out = Copy { text, out: String::new(), copied: 0, fixes: Vec::new() };
    let mut i = 0;
    while i < b.len() {
        let found = match b[i] {
            b'"' => {
                let mut lone = Vec::new();
                i = string(b, i + 1, &mut lone);
                for at in lone {
                    out.replace(at, at + 6, "\\ufffd", Kind::LoneSurrogate);
                }
                continue;
            }
            b',' if b[i + 1..].iter().find(|c| !c.is_ascii_whitespace()).is_some_and(|c| matches!(c, b']' | b'}')) => {
                out.replace(i, i + 1, " ", Kind::TrailingComma);
                i += 1;
                continue;
            }
            b'N' => word(b, i, "NaN").map(|end| (end, Kind::NonFinite)),
            b'I' => word(b, i, "Infinity").map(|end| (end, Kind::NonFinite)),
            b'-' if b.get(i + 1) == Some(&b'I') => word(b, i + 1, "Infinity").map(|end| (end, Kind::NonFinite)),
            b'-' | b'0'..=b'9' => {
                let len =
                    b[i..].iter().take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
                let end = i + len;
                if !text[i..end].parse::<f64>().is_ok_and(f64::is_infinite) {
                    i = end;
                    continue;
                }
                Some((end, Kind::OutOfRange))
            }
            _ => None,
        };
        match found {
            Some((end, kind)) => {
                out.replace(i, end, "null", kind);
                i = end;
            }
            None => i += 1,
        }
    }
    out.finish()
}

/// The copy being made: the text up to `copied` is in `out`, with its replacements.
struct Copy<'a> {
    text: &'a str,
    out: String,
    copied: usize,
    fixes: Vec<Fix>,
}

impl Copy<'_> {
    /// Replace `text[from..to]` with `with`, padded with spaces to the replaced length.
    fn replace(&mut self, from: usize, to: usize, with: &str, kind: Kind) {
        if self.out.capacity() == 0 {
            self.out.reserve(self.text.len() + 16);
        }
        self.out.push_str(&self.text[self.copied..from]);
        self.out.push_str(with);
        self.out.extend(std::iter::repeat_n(' ', (to - from).saturating_sub(with.len())));
        self.fixes.push(Fix { kind, at: from, token: self.text[from..to].chars().take(24).collect() });
        self.copied = to;
    }

    fn finish(mut self) -> Option<Rewritten> {
        if self.fixes.is_empty() {
            return None;
        }
        self.out.push_str(&self.text[self.copied..]);
        Some(Rewritten { text: self.out, fixes: self.fixes })
    }
}

/// The end of `word` at `i` when it stands alone there (not the start of a longer name).
fn word(b: &[u8], i: usize, word: &str) -> Option<usize> {
    let end = i + word.len();
    let whole = b.get(i..end) == Some(word.as_bytes()) && !b.get(end).is_some_and(u8::is_ascii_alphanumeric);
    whole.then_some(end)
}

/// Scan a string body from `i` (just after its opening quote), noting the offset of each lone
/// surrogate escape. Returns the offset just past the closing quote (or the end).
fn string(b: &[u8], mut i: usize, lone: &mut Vec<usize>) -> usize {
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' if b.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(b, i + 2) else {
                    i += 2;
                    continue;
                };
                let paired = (0xD800..0xDC00).contains(&unit)
                    && b.get(i + 6..i + 8) == Some(b"\\u")
                    && hex4(b, i + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low));
                if paired {
                    i += 12;
                } else {
                    if (0xD800..0xE000).contains(&unit) {
                        lone.push(i);
                    }
                    i += 6;
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let digits = std::str::from_utf8(b.get(i..i + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok().filter(|_| digits.bytes().all(|c| c.is_ascii_hexdigit()))
}

impl Rewritten {
    /// One warning per kind of value replaced, in text order, naming the first one's place in `original` (line
    /// and column, 1-based, columns in bytes as serde_json counts them) and how many there were.
    /// `line`: `original` is that line of a JSON-lines file.
    pub fn warnings(&self, path: &Path, original: &str, line: Option<usize>) -> Vec<String> {
        let mut out = Vec::new();
        // In the order of their first place (the fixes are in text order).
        let mut kinds: Vec<Kind> = Vec::new();
        for f in &self.fixes {
            if !kinds.contains(&f.kind) {
                kinds.push(f.kind);
            }
        }
        for kind in kinds {
            let of_kind: Vec<&Fix> = self.fixes.iter().filter(|f| f.kind == kind).collect();
            let Some(first) = of_kind.first() else { continue };
            let before = &original.as_bytes()[..first.at];
            let row = before.iter().filter(|c| **c == b'\n').count();
            let column = first.at - before.iter().rposition(|c| *c == b'\n').map_or(0, |p| p + 1) + 1;
            let row = line.unwrap_or(row + 1);
            let what = match kind {
                Kind::NonFinite => format!("{} read as null (JSON has no NaN or Infinity)", first.token),
                Kind::OutOfRange => format!("number {} out of range, read as null", first.token),
                Kind::LoneSurrogate => format!("lone surrogate {} read as U+FFFD", first.token),
                Kind::TrailingComma => "a trailing comma before a closing bracket, dropped".to_string(),
            };
            let scope = if line.is_some() { "line" } else { "file" };
            let count = match of_kind.len() {
                1 => String::new(),
                n => format!(" ({n} such values in the {scope})"),
            };
            out.push(format!("{}: line {row}, column {column}: {what}{count}", path.display()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> String {
        rewrite(text).map(|r| r.text).unwrap_or_else(|| panic!("nothing rewritten in {text}"))
    }

    #[test]
    fn python_values_become_null_outside_strings_only() {
        let text = r#"{"a": NaN, "b": [Infinity, -Infinity, 1e400, -2E+999, 1.5], "s": "NaN Infinity 1e400"}"#;
        let out = fixed(text);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v, serde_json::json!({"a": null, "b": [null, null, null, null, 1.5], "s": "NaN Infinity 1e400"}));
        // Everything but NaN keeps its length.
        assert_eq!(out.len(), text.len() + 1);
    }

    #[test]
    fn lone_surrogates_become_replacement_characters_and_pairs_stay() {
        let text =
            r#"{"a": "x\ud83d y", "b": "\ud83d\ude00", "c": "\ude00", "d": "\\ud83d", "e": NaN, "f": "\uD83Dz"}"#;
        assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "serde_json rejects lone surrogates");
        let out = fixed(text);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v["a"], "x\u{fffd} y");
        assert_eq!(v["b"], "\u{1f600}");
        assert_eq!(v["c"], "\u{fffd}");
        assert_eq!(v["d"], "\\ud83d", "an escaped backslash is not an escape");
        assert_eq!(v["e"], serde_json::Value::Null);
        assert_eq!(v["f"], "\u{fffd}z");
    }

    #[test]
    fn trailing_commas_are_dropped_with_a_note_naming_the_line() {
        let text = "{\n  \"resolved\": [\n    \"a__a-1\",\n  ],\n  \"applied\": [\"a__a-1\", ],\n  \"s\": \",]\",\n}";
        let r = rewrite(text).unwrap_or_else(|| panic!("no rewrite"));
        let v: serde_json::Value = serde_json::from_str(&r.text).unwrap_or_else(|e| panic!("{e}: {}", r.text));
        assert_eq!(v, serde_json::json!({"resolved": ["a__a-1"], "applied": ["a__a-1"], "s": ",]"}));
        assert_eq!(r.text.len(), text.len());
        assert_eq!(
            r.warnings(Path::new("results.json"), text, None),
            vec![
                "results.json: line 3, column 13: a trailing comma before a closing bracket, dropped (3 such values in the file)"
            ]
        );
    }

    #[test]
    fn nothing_to_fix_is_none() {
        assert!(rewrite(r#"{"a": [1, 2e300, -0.5], "NaN": "Infinity", "b": true, "c": null}"#).is_none());
        assert!(rewrite(r#"{"a": NaNa}"#).is_none());
        assert!(rewrite(r#"{"a": "cut \ud8"#).is_none());
    }

    #[test]
    fn warnings_name_the_first_place_and_count_the_rest() {
        let text = "{\n  \"a\": NaN,\n  \"b\": [Infinity, 1e400],\n  \"c\": \"\\udc00\"\n}";
        let r = rewrite(text).unwrap_or_else(|| panic!("no rewrite"));
        assert_eq!(
            r.warnings(Path::new("x.json"), text, None),
            vec![
                "x.json: line 2, column 8: NaN read as null (JSON has no NaN or Infinity) (2 such values in the file)",
                "x.json: line 3, column 19: number 1e400 out of range, read as null",
                "x.json: line 4, column 9: lone surrogate \\udc00 read as U+FFFD",
            ]
        );
        let line = r#"{"a": -Infinity}"#;
        let r = rewrite(line).unwrap_or_else(|| panic!("no rewrite"));
        assert_eq!(
            r.warnings(Path::new("o.jsonl"), line, Some(7)),
            vec!["o.jsonl: line 7, column 7: -Infinity read as null (JSON has no NaN or Infinity)"]
        );
    }
}
