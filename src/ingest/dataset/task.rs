//! The task a row's conversation states: its first user message, or the issue that message
//! wraps (in `<github_issue>`, `<issue_description>`, `<pr_description>`: R2E-Gym's, OpenHands'
//! and SWE-smith's prompts; after SWE-agent's `ISSUE:`, before its `INSTRUCTIONS:`), kept as the
//! task's instruction so `show`, the review and `classify` read it beside the run. A source
//! states each task once, however many runs of the instance it holds ([`Seen`]): the store
//! appends every task it is given.

use crate::model::{Run, Task};
use std::collections::HashSet;

/// What a prompt wraps the issue in: R2E-Gym's, OpenHands', SWE-smith's, SWE-agent's.
const WRAPPERS: &[(&str, &str)] = &[
    ("<github_issue>", "</github_issue>"),
    ("<issue_description>", "</issue_description>"),
    ("<pr_description>", "</pr_description>"),
    ("\nISSUE:\n", "\nINSTRUCTIONS:"),
];

/// The text between the first `open` of `text` and the `close` after it, trimmed; `None` when
/// `open` is not there, or never closed.
pub fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(text[start..start + len].trim())
}

/// The task `run` states: its first user message that is not blank, or the issue it wraps.
pub fn stated(run: &Run) -> Option<Task> {
    let first = run.history.iter().find(|m| m.role == "user" && !m.content.trim().is_empty())?;
    let text = WRAPPERS
        .iter()
        .find_map(|(open, close)| between(&first.content, open, close).filter(|t| !t.is_empty()))
        .unwrap_or(first.content.as_str());
    Some(Task { instance_id: run.instance_id.clone(), instruction: Some(text.to_string()), ..Task::default() })
}

/// The tasks a source has given so far: a task given again (the same instance, statement, gold
/// patch and test lists) is not written twice.
#[derive(Debug, Default)]
pub struct Seen(HashSet<[u8; 32]>);

impl Seen {
    /// Keep in `tasks` those not given before in this source.
    pub fn keep_new(&mut self, tasks: &mut Vec<Task>) {
        tasks.retain(|t| self.0.insert(key(t)));
    }
}

fn key(t: &Task) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    let mut part = |s: Option<&str>| {
        // Each part's length first: no two tasks hash their parts alike.
        let s = s.map(str::as_bytes);
        h.update(&s.map_or(u64::MAX, |s| s.len() as u64).to_le_bytes());
        h.update(s.unwrap_or_default());
    };
    part(Some(&t.instance_id));
    part(t.instruction.as_deref());
    part(t.gold_patch.as_deref());
    for list in [&t.fail_to_pass, &t.pass_to_pass] {
        part(Some(&list.len().to_string()));
        list.iter().for_each(|n| part(Some(n)));
    }
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;

    fn run(instance: &str, messages: &[(&str, &str)]) -> Run {
        let history = messages
            .iter()
            .map(|(role, content)| Message { role: role.to_string(), content: content.to_string(), extra: None })
            .collect();
        Run { instance_id: instance.into(), history, ..Run::default() }
    }

    #[test]
    fn the_statement_is_the_first_user_message_or_the_issue_it_wraps() {
        let plain = run("a", &[("system", "You are a programmer."), ("user", "  "), ("user", "Fix the parser.")]);
        assert_eq!(stated(&plain).and_then(|t| t.instruction).as_deref(), Some("Fix the parser."));
        let wrapped =
            run("b", &[("user", "Consider:\n<github_issue>\n[ISSUE]\nIt breaks.\n[/ISSUE]\n</github_issue>\nFix it.")]);
        assert_eq!(stated(&wrapped).and_then(|t| t.instruction).as_deref(), Some("[ISSUE]\nIt breaks.\n[/ISSUE]"));
        // A tag never closed, or empty, wraps nothing: the whole message.
        let open = run("c", &[("user", "<issue_description>\nIt breaks.")]);
        assert_eq!(stated(&open).and_then(|t| t.instruction).as_deref(), Some("<issue_description>\nIt breaks."));
        let empty = run("d", &[("user", "<pr_description></pr_description> Fix it.")]);
        assert_eq!(
            stated(&empty).and_then(|t| t.instruction).as_deref(),
            Some("<pr_description></pr_description> Fix it.")
        );
        let swe_agent =
            run("f", &[("user", "Here's the issue text:\nISSUE:\nIt breaks.\n\nINSTRUCTIONS:\nNow, solve it.")]);
        assert_eq!(stated(&swe_agent).and_then(|t| t.instruction).as_deref(), Some("It breaks."));
        assert!(stated(&run("e", &[("system", "s")])).is_none());
    }

    #[test]
    fn a_task_given_again_is_kept_once() {
        let t = |i: &str, text: &str| Task { instance_id: i.into(), instruction: Some(text.into()), ..Task::default() };
        let mut seen = Seen::default();
        let mut first = vec![t("a", "x"), t("a", "x"), t("b", "x")];
        seen.keep_new(&mut first);
        assert_eq!(first.len(), 2);
        let mut later = vec![t("a", "x"), t("a", "y"), t("ax", ""), t("a", "x")];
        seen.keep_new(&mut later);
        let kept: Vec<(&str, Option<&str>)> =
            later.iter().map(|t| (t.instance_id.as_str(), t.instruction.as_deref())).collect();
        assert_eq!(kept, [("a", Some("y")), ("ax", Some(""))]);
    }
}
