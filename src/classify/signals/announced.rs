//! Edits announced and never applied: an editing tool call written as text in the agent's reply
//! on a step that ran nothing (a model writing its calls as prose, which the agent's parser
//! refused). failure-modes.md counts edits that silently do nothing as a failure to apply, found
//! by comparing the edits the agent made or announced with the final patch.
//!
//! Two written forms are read: a JSON object of the editor's arguments
//! (`str_replace_editor{"command": "str_replace", "path": ...}`) and the XML-style function call
//! of text-mode tool prompts (`<function=str_replace_editor><parameter=command>str_replace`).
//! Only commands that change an existing file count (`str_replace`, `insert`): `create` makes
//! new files, mostly scratch scripts, and `view` changes nothing.

use crate::classify::input::Step;
use serde_json::Value;

/// One edit written in a reply and never run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announced {
    pub step: usize,
    /// The path as written (absolute or relative); the caller makes it repository-relative.
    pub path: String,
}

/// Editor commands that change an existing file.
const CHANGING: &[&str] = &["str_replace", "insert"];

/// The edits the steps' replies announce on steps that ran no action.
pub fn announced(steps: &[Step]) -> Vec<Announced> {
    let mut out = Vec::new();
    for s in steps.iter().filter(|s| s.action.trim().is_empty()) {
        let text = s.response.as_deref().filter(|r| r.len() > s.thought.len()).unwrap_or(&s.thought);
        let step = usize::try_from(s.index).unwrap_or(0);
        for path in json_calls(text).into_iter().chain(xml_calls(text)) {
            if !out.iter().any(|a: &Announced| a.step == step && a.path == path) {
                out.push(Announced { step, path });
            }
        }
    }
    out
}

/// The paths of changing editor calls written as JSON objects.
fn json_calls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find('{').map(|i| i + from) {
        from = i + 1;
        // A JSON object of arguments starts with a key.
        if !text[i + 1..].trim_start().starts_with('"') {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        let Some(Ok(Value::Object(args))) = stream.next() else { continue };
        let command = args.get("command").and_then(Value::as_str);
        if let (Some(c), Some(p)) = (command, args.get("path").and_then(Value::as_str))
            && CHANGING.contains(&c)
        {
            out.push(p.to_string());
        }
        from = i + stream.byte_offset().max(1);
    }
    out
}

/// The paths of changing editor calls written as `<function=...><parameter=...>` blocks.
fn xml_calls(text: &str) -> Vec<String> {
    let param = |block: &str, name: &str| {
        let open = format!("<parameter={name}>");
        let start = block.find(&open)? + open.len();
        let end = block[start..].find("</parameter>")? + start;
        Some(block[start..end].trim().to_string())
    };
    text.split("<function=")
        .skip(1)
        .map(|b| b.split("</function>").next().unwrap_or(b))
        .filter(|b| param(b, "command").is_some_and(|c| CHANGING.contains(&c.as_str())))
        .filter_map(|b| param(b, "path"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(index: i64, action: &str, thought: &str) -> Step {
        Step { thought: thought.into(), ..Step::sample(index, action, "") }
    }

    /// The shape of a SWE-agent 1.1 step whose model wrote its calls as text: an empty action,
    /// several calls in the reply, each closed by the model's end-of-thinking token.
    const WRITTEN: &str = "Let me look first:\nstr_replace_editor{\"command\": \"view\", \"path\": \"/testbed/src/_pytest/unittest.py\", \"view_range\": [90, 107]}<｜end▁of▁thinking｜>\nNow the fix:\nstr_replace_editor{\n    \"command\": \"str_replace\",\n    \"path\": \"/testbed/src/_pytest/unittest.py\",\n    \"old_str\": \"    def fixture(self, request):\\n        if getattr(self, \\\"__unittest_skip__\\\", None):\",\n    \"new_str\": \"    def fixture(self, request):\\n        if _is_skipped(self):\"\n}<｜end▁of▁thinking｜>\nand a check script:\nstr_replace_editor{\"command\": \"create\", \"path\": \"/testbed/debug_skip.py\", \"file_text\": \"import x\"}";

    #[test]
    fn a_changing_call_written_as_text_on_a_step_that_ran_nothing_is_announced() {
        let got = announced(&[step(42, "", WRITTEN)]);
        assert_eq!(got, vec![Announced { step: 42, path: "/testbed/src/_pytest/unittest.py".into() }]);
    }

    #[test]
    fn a_step_that_ran_its_action_announces_nothing() {
        assert!(announced(&[step(3, "str_replace_editor str_replace /testbed/a.py", WRITTEN)]).is_empty());
    }

    #[test]
    fn the_xml_form_of_a_call_is_read_and_views_and_creations_are_not_edits() {
        let text = "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/w/a.py</parameter>\n</function>\n<function=str_replace_editor>\n<parameter=command>insert</parameter>\n<parameter=path>/w/b.py</parameter>\n<parameter=insert_line>3</parameter>\n</function>";
        let got: Vec<String> = announced(&[step(7, " ", text)]).into_iter().map(|a| a.path).collect();
        assert_eq!(got, vec!["/w/b.py".to_string()]);
    }

    #[test]
    fn broken_json_and_prose_braces_are_skipped() {
        let text = "a set {1, 2} and {\"command\": \"str_replace\", \"path\": \"/w/c.py\", \"old_str\": \"unterminated";
        assert!(announced(&[step(1, "", text)]).is_empty());
    }
}
