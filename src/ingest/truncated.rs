//! Truncated files: a trajectory cut mid-write (a crashed run, a full disk, a copy stopped short)
//! keeps the complete steps before the cut.
//!
//! Only reached when the normal parse has failed and serde_json says the text ended inside a
//! value ([`is_cut`]), so good files pay nothing. [`scan`] is a small tokenizer: it follows the
//! container stack and string state to the end of the text, remembering where each complete
//! element of an open array (and each complete member of an open object) ended. The format's
//! rule ([`Scan::prefix`]) picks the array that holds the steps, cuts after its last complete
//! element — so a step cut in the middle is dropped whole, however deep the cut — and closes
//! the open containers, which makes the prefix valid JSON for the normal adapter.

use super::detect;
use crate::model::Format;

/// Whether the text is JSON that ends inside a value (serde_json's EOF category). A syntax error
/// anywhere before the end is not a cut: it is reported as it is.
pub fn is_cut(text: &str) -> bool {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => false,
        Err(e) => e.classify() == serde_json::error::Category::Eof,
    }
}

/// Whether the bytes end inside a UTF-8 character (a cut through a multi-byte character): the
/// only invalid UTF-8 is that incomplete character at the very end.
pub fn ends_inside_char(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).err().is_some_and(|e| e.error_len().is_none())
}

/// One container still open at the end of the text.
#[derive(Debug, Clone)]
struct Frame {
    array: bool,
    /// Offset of its `[` or `{`.
    start: usize,
    /// The member name it is the value of (a range inside the quotes), when in an object.
    key: Option<(usize, usize)>,
    /// Just after its last complete element or member, or just after its opening bracket.
    last_end: usize,
    /// Arrays: each complete element's range.
    elements: Vec<(usize, usize)>,
    /// Objects: the next string is a member name.
    expect_key: bool,
    /// Objects: the name of the member being read.
    current_key: Option<(usize, usize)>,
}

/// The open containers at the end of a cut text, outermost first.
#[derive(Debug)]
pub struct Scan {
    frames: Vec<Frame>,
    /// The member names of the top-level object, as written (escapes not decoded), the one cut
    /// included: what detection reads.
    root_keys: Vec<String>,
}

/// Follow the text to its end. `None` when it does not end inside a container (a complete
/// document, a bare scalar, nothing at all): then there is nothing to salvage.
pub fn scan(text: &str) -> Option<Scan> {
    let b = text.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut root_keys = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b':' => i += 1,
            b',' => {
                if let Some(f) = frames.last_mut() {
                    f.expect_key = !f.array;
                }
                i += 1;
            }
            open @ (b'{' | b'[') => {
                let key = frames.last().filter(|f| !f.array).and_then(|f| f.current_key);
                let array = open == b'[';
                frames.push(Frame {
                    array,
                    start: i,
                    key,
                    last_end: i + 1,
                    elements: Vec::new(),
                    expect_key: !array,
                    current_key: None,
                });
                i += 1;
            }
            b'}' | b']' => {
                let closed = frames.pop()?;
                i += 1;
                complete(&mut frames, closed.start, i)?;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                if i >= b.len() {
                    break; // cut inside a string
                }
                i += 1;
                let top = frames.last_mut()?;
                if !top.array && top.expect_key {
                    top.current_key = Some((start + 1, i - 1));
                    top.expect_key = false;
                    if frames.len() == 1 {
                        root_keys.push(text.get(start + 1..i - 1).unwrap_or_default().to_string());
                    }
                } else {
                    complete(&mut frames, start, i)?;
                }
            }
            _ => {
                // A number or a literal: complete only once something follows it (`12` may
                // have been `123`), so one that runs to the end of the text is dropped.
                let start = i;
                while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'}' | b':') {
                    i += 1;
                }
                if i >= b.len() {
                    break;
                }
                complete(&mut frames, start, i)?;
            }
        }
    }
    if frames.is_empty() {
        return None;
    }
    Some(Scan { frames, root_keys })
}

/// A value `start..end` is complete inside the innermost open container. `None` when there is
/// none (the document itself is complete).
fn complete(frames: &mut [Frame], start: usize, end: usize) -> Option<()> {
    let top = frames.last_mut()?;
    top.last_end = end;
    if top.array {
        top.elements.push((start, end));
    }
    Some(())
}

/// Which of an array's complete elements to keep (a format's rule for a step that needs a
/// later element to be whole, e.g. an action and its observation).
type Keep = fn(&[&str]) -> usize;

impl Scan {
    fn key<'t>(&self, text: &'t str, level: usize) -> Option<&'t str> {
        let (a, b) = self.frames.get(level)?.key?;
        text.get(a..b)
    }

    fn is_array(&self, level: usize) -> bool {
        self.frames.get(level).is_some_and(|f| f.array)
    }

    /// The format, read from what was written before the cut: the top-level keys of an object
    /// (the one cut included), or for an array its complete items.
    pub fn format(&self, text: &str) -> Option<Format> {
        if !self.is_array(0) {
            return detect::detect_cut(&self.root_keys);
        }
        let prefix = self.close(text, 0, None)?;
        detect::detect_value(&serde_json::from_str(&prefix).ok()?)
    }

    /// The text before the cut, closed into valid JSON, by the format's rule: cut inside the
    /// list of steps (or messages, events), keep its complete elements; cut elsewhere, keep the
    /// complete members of the enclosing object (a half-written `info` is dropped whole).
    /// `None` for formats that are not trajectories (a cut report or prediction list is not
    /// salvaged: part of it would read as a different verdict).
    pub fn prefix(&self, text: &str, format: Format) -> Option<String> {
        let (level, keep) = match format {
            Format::SweAgent if !self.is_array(0) => {
                let records =
                    |l: usize| self.is_array(l) && matches!(self.key(text, l), Some("trajectory" | "history"));
                if records(1) {
                    (1, None)
                } else if self.is_array(1) && self.key(text, 1) == Some("attempts") {
                    // RetryAgent: inside an attempt, the same rule one level down.
                    match self.frames.len() {
                        2 => (1, None),
                        _ if records(3) => (3, None),
                        _ => (2, None),
                    }
                } else {
                    (0, None)
                }
            }
            Format::MiniSweAgent if !self.is_array(0) => {
                if self.is_array(1) && self.key(text, 1) == Some("messages") {
                    (1, Some(super::mini_swe_agent::complete_messages as Keep))
                } else {
                    (0, None)
                }
            }
            // An array: events or instances (an instance has no `action`: all are kept).
            Format::OpenHands | Format::OpenHandsEvents if self.is_array(0) => {
                (0, Some(super::openhands::complete_events as Keep))
            }
            Format::OpenHands => {
                if self.is_array(1) && self.key(text, 1) == Some("history") {
                    (1, Some(super::openhands::complete_events as Keep))
                } else {
                    (0, None)
                }
            }
            _ => return None,
        };
        self.close(text, level, keep)
    }

    /// `text` up to the end of the last complete child of the container at `level` (of the
    /// elements `keep` chooses, for an array), then the closing brackets of that container and
    /// of every one around it.
    fn close(&self, text: &str, level: usize, keep: Option<Keep>) -> Option<String> {
        let frame = self.frames.get(level)?;
        let end = match keep {
            Some(keep) if frame.array => {
                let items: Vec<&str> = frame.elements.iter().filter_map(|&(a, b)| text.get(a..b)).collect();
                match keep(&items).min(frame.elements.len()) {
                    0 => frame.start + 1,
                    n => frame.elements[n - 1].1,
                }
            }
            _ => frame.last_end,
        };
        let mut out = String::with_capacity(end + level + 1);
        out.push_str(text.get(..end)?);
        out.extend(self.frames[..=level].iter().rev().map(|f| if f.array { ']' } else { '}' }));
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The prefix a format's rule keeps, parsed.
    fn cut(text: &str, format: Format) -> Option<Value> {
        let scan = scan(text)?;
        let prefix = scan.prefix(text, format)?;
        Some(serde_json::from_str(&prefix).unwrap_or_else(|e| panic!("not JSON: {prefix:?}: {e}")))
    }

    fn traj(text: &str) -> Option<Value> {
        cut(text, Format::SweAgent)
    }

    #[test]
    fn complete_or_scalar_documents_are_not_cut() {
        assert!(scan(r#"{"a": [1, 2]}"#).is_none());
        assert!(scan("  ").is_none());
        assert!(scan("12").is_none());
        assert!(scan(r#""abc"#).is_none());
        assert!(!is_cut(r#"{"a": [1, 2]}"#));
        assert!(!is_cut(r#"{"a": [1, 2}"#), "a syntax error is not a cut");
        assert!(is_cut(r#"{"a": [1, 2"#));
    }

    #[test]
    fn a_cut_inside_a_step_drops_that_step() {
        let text = r#"{"trajectory": [{"action": "a", "observation": "o"}, {"action": "b", "observation": "ha"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a", "observation": "o"}]})));
    }

    #[test]
    fn a_cut_inside_a_string_with_escaped_quotes() {
        let text = r#"{"trajectory": [{"action": "echo \"x\"", "observation": "\\"}, {"action": "say \"hi\", then \"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "echo \"x\"", "observation": "\\"}]})));
        // An escaped backslash before the closing quote ends the string.
        let text = r#"{"trajectory": [{"action": "\\"}, {"action": "\\\"}, "#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "\\"}]})));
    }

    #[test]
    fn a_cut_inside_nested_objects_keeps_no_half_step() {
        // Deep inside the second step (its state, its prompt messages): the step is dropped,
        // not kept with the fields read so far.
        let text = r#"{"trajectory": [{"action": "a", "state": {"open_file": "x"}}, {"action": "b", "state": {"open_file": "y", "working_dir": {"deep": [1, {"k": "v"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a", "state": {"open_file": "x"}}]})));
        let text = r#"{"trajectory": [{"action": "a"}, {"action": "b", "query": [{"role": "system", "content": "s"}, {"role": "us"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}]})));
    }

    #[test]
    fn a_cut_after_a_comma_or_a_colon() {
        let text = r#"{"trajectory": [{"action": "a"}, {"action": "b"}, "#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}, {"action": "b"}]})));
        let text = r#"{"trajectory": [{"action": "a"}],"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}]})));
        let text = r#"{"trajectory": [{"action": "a"}], "info": "#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}]})));
        let text = "{\"trajectory\": [\n  {\"action\": \"a\"}\n  ,\n";
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}]})));
    }

    #[test]
    fn a_cut_in_a_number_or_a_literal_drops_it() {
        // `12` may have been `123`; `tr` is not `true`.
        let text = r#"{"trajectory": [{"action": "a", "execution_time": 1.5}, {"action": "b", "execution_time": 12"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a", "execution_time": 1.5}]})));
        let text = r#"{"trajectory": [{"action": "a"}], "history": [1, 2, tr"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}], "history": [1, 2]})));
        // Past the steps: the top-level members before the cut are kept, a half `info` is not.
        let text =
            r#"{"trajectory": [{"action": "a"}], "info": {"exit_status": "submitted", "model_stats": {"cost": 0.5"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}]})));
        let text = r#"{"trajectory": [{"action": "a"}], "n": 7, "ok": true"#;
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "a"}], "n": 7})));
    }

    #[test]
    fn multi_byte_characters_at_the_cut() {
        // The text ends just after a multi-byte character inside a string: that string's step
        // goes; the cut lands on a character boundary, never inside one.
        let text = "{\"trajectory\": [{\"action\": \"caf\u{e9}\"}, {\"action\": \"\u{1f600}\u{e9}";
        assert_eq!(traj(text), Some(json!({"trajectory": [{"action": "caf\u{e9}"}]})));
        let text = "{\"trajectory\": [{\"action\": \"\u{1f600}\"}, {\"\u{e9}\u{1f600}\": \"\u{1f600}\"}";
        let scan = scan(text).unwrap_or_else(|| panic!("cut"));
        assert_eq!(scan.prefix(text, Format::SweAgent), Some(format!("{text}]}}")));
        // Bytes cut through a character: the incomplete character is the cut, not bad UTF-8.
        let bytes = "caf\u{e9}".as_bytes();
        assert!(ends_inside_char(&bytes[..bytes.len() - 1]));
        assert!(!ends_inside_char(bytes));
        assert!(!ends_inside_char(b"caf\xff"));
        assert!(!ends_inside_char(b"c\xffaf\xc3"), "an earlier bad byte is bad UTF-8");
    }

    #[test]
    fn keys_before_the_cut_are_read_for_detection() {
        let text = r#"{"environment": "swe_main", "trajectory": [{"action": "a"}, {"act"#;
        let scan = scan(text).unwrap_or_else(|| panic!("cut"));
        assert_eq!(scan.root_keys, vec!["environment", "trajectory"]);
        assert_eq!(scan.format(text), Some(Format::SweAgent));
        let text = r#"{"info": {"exit_status": "Submitted"}, "messages": [{"role": "system", "content": "s"#;
        assert_eq!(scan_format(text), Some(Format::MiniSweAgent));
        // mini-swe-agent with `messages` first: `info` and `trajectory_format` come after the cut.
        assert_eq!(scan_format(r#"{"messages": [{"role": "sys"#), Some(Format::MiniSweAgent));
        // ... but not `messages` among another format's keys.
        assert_eq!(scan_format(r#"{"id": 1, "history": [], "messages": [{"role": "sys"#), None);
        // An event list: its complete events decide.
        let text = r#"[{"id": 0, "source": "user", "action": "message"}, {"id": 1, "act"#;
        assert_eq!(scan_format(text), Some(Format::OpenHandsEvents));
        assert_eq!(scan_format(r#"{"foo": [1, 2"#), None);
    }

    fn scan_format(text: &str) -> Option<Format> {
        scan(text)?.format(text)
    }

    #[test]
    fn retry_agent_attempts_keep_the_complete_steps_of_the_open_attempt() {
        let text = r#"{"attempts": [{"trajectory": [{"action": "a"}], "info": {}}, {"trajectory": [{"action": "b"}, {"action": "c"#;
        assert_eq!(
            traj(text),
            Some(
                json!({"attempts": [{"trajectory": [{"action": "a"}], "info": {}}, {"trajectory": [{"action": "b"}]}]})
            )
        );
        // Cut in the open attempt's `info`: its steps stay, the half `info` goes.
        let text = r#"{"attempts": [{"trajectory": [{"action": "b"}], "info": {"exit_status": "subm"#;
        assert_eq!(traj(text), Some(json!({"attempts": [{"trajectory": [{"action": "b"}]}]})));
    }

    #[test]
    fn a_cut_before_any_step_keeps_an_empty_list() {
        assert_eq!(traj(r#"{"trajectory": [{"action": "a"#), Some(json!({"trajectory": []})));
        assert_eq!(traj(r#"{"trajectory": ["#), Some(json!({"trajectory": []})));
        assert_eq!(traj(r#"{"traj"#), Some(json!({})));
    }

    #[test]
    fn mini_swe_agent_drops_an_assistant_turn_without_its_reply() {
        let head = r#"{"info": {}, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}, {"role": "assistant", "content": "run"}"#;
        let kept = cut(&format!("{head}, {{\"role\": \"user\", \"content\": \"<returncode>0\""), Format::MiniSweAgent);
        let messages = kept.as_ref().and_then(|v| v["messages"].as_array()).map(Vec::len);
        assert_eq!(messages, Some(2), "the assistant message whose reply was cut goes: {kept:?}");
        let kept = cut(&format!("{head}, {{\"role\": \"user\", \"content\": \"done\"}}, "), Format::MiniSweAgent);
        assert_eq!(kept.as_ref().and_then(|v| v["messages"].as_array()).map(Vec::len), Some(4));
        // Tool calls: one reply per call.
        let text = r#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "1"}, {"id": "2"}]}, {"role": "tool", "content": "a"}, {"role": "tool", "con"#;
        let kept = cut(text, Format::MiniSweAgent);
        assert_eq!(kept.as_ref().and_then(|v| v["messages"].as_array()).map(Vec::len), Some(0));
    }

    #[test]
    fn openhands_drops_an_action_whose_observation_was_cut() {
        let text = r#"[{"id": 0, "source": "user", "action": "message"}, {"id": 1, "source": "agent", "action": "run"}, {"id": 2, "cause": 1, "observation": "run", "content": "o"#;
        let kept = cut(text, Format::OpenHandsEvents);
        assert_eq!(kept.as_ref().and_then(Value::as_array).map(Vec::len), Some(1), "{kept:?}");
        // A finish needs no observation.
        let text = r#"[{"id": 0, "source": "user", "action": "message"}, {"id": 1, "source": "agent", "action": "finish"}, {"id": 2"#;
        let kept = cut(text, Format::OpenHandsEvents);
        assert_eq!(kept.as_ref().and_then(Value::as_array).map(Vec::len), Some(2), "{kept:?}");
        // A single event object cut is not salvaged.
        assert!(cut(r#"{"id": 1, "action": "run", "args": {"com"#, Format::OpenHandsEvents).is_none());
    }

    #[test]
    fn reports_and_predictions_are_not_salvaged() {
        let text = r#"{"x__y-1": {"resolved": true, "tests_status": {"FAIL_TO_PASS": {"success": ["a"#;
        assert!(cut(text, Format::SwebenchReport).is_none());
        assert!(cut(r#"[{"instance_id": "a", "model_patch": "p"}, {"inst"#, Format::SweAgentPreds).is_none());
    }

    #[test]
    fn ten_thousand_open_levels_do_not_overflow() {
        let text = format!("{{\"trajectory\": [{}", "[".repeat(10_000));
        let scan = scan(&text).unwrap_or_else(|| panic!("cut"));
        assert_eq!(scan.prefix(&text, Format::SweAgent).as_deref(), Some("{\"trajectory\": []}"));
    }
}
