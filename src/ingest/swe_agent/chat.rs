//! SWE-agent runs kept as chat messages rather than `.traj` steps (published datasets:
//! nebius/SWE-agent-trajectories' `trajectory`, SWE-smith's `ticks` split): the model's replies
//! in SWE-agent's thought-action format (the discussion, then the command in the last fenced
//! block), each answered by the next message. Built into steps with the `.traj` reader's own
//! step builder (`RunSteps`), so windowed `edit N:M` commands, `str_replace_editor` calls and
//! shell writes read exactly as they do in a trajectory file.

use super::{RunSteps, StepIn};
use crate::analysis::reconstruct::reconstruct;
use crate::model::Run;
use serde_json::value::RawValue;

/// One reply of the model and the message that answered it.
#[derive(Debug, Default, Clone)]
pub struct ChatTurn {
    /// The whole reply, as the model wrote it.
    pub reply: String,
    /// The answer (the command's output), without the prompt's state lines.
    pub observation: String,
    /// The file open and the working directory the answer's prompt showed (`(Open file: X)`,
    /// `(Current directory: Y)`): the state after the action.
    pub open_file: Option<String>,
    pub working_dir: Option<String>,
}

/// A reply split as SWE-agent's `ThoughtActionParser` splits it: the action is the body of the
/// last fenced block that closes (blocks nest: a block opened inside one is its content), the
/// thought the text around it. `None` when no block closes (a format error).
pub fn split_thought_action(reply: &str) -> Option<(String, String)> {
    // (start of the opening line, end of it, start of the closing line, end of it)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut last: Option<(usize, usize, usize, usize)> = None;
    let mut at = 0usize;
    for line in reply.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(rest) = line.strip_prefix("```") else { continue };
        let lang_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (lang, tail) = rest.split_at(lang_len);
        // `^```(\S*)\s*\n` or `^```\s*$`: the rest of the line is blank.
        if !tail.trim().is_empty() {
            continue;
        }
        if !stack.is_empty() && lang.is_empty() {
            if let Some((open_start, open_end)) = stack.pop()
                && stack.is_empty()
            {
                last = Some((open_start, open_end, start, at));
            }
        } else if line.ends_with('\n') {
            stack.push((start, at));
        }
    }
    let (open_start, open_end, close_start, close_end) = last?;
    let thought = format!("{}{}", &reply[..open_start], &reply[close_end..]);
    let action = reply[open_end..close_start].to_string();
    Some((thought.trim().to_string(), action))
}

/// An observation as SWE-agent's 0.x prompt shows it: the output, then `(Open file: X)`,
/// `(Current directory: Y)` and the `bash-$` prompt. The output alone, and the state ("n/a"
/// is no open file).
pub fn split_state(text: &str) -> (String, Option<String>, Option<String>) {
    let Some(at) = text.rfind("(Open file: ") else { return (text.to_string(), None, None) };
    let tail = &text[at..];
    let field = |key: &str| -> Option<String> {
        let from = tail.find(key)? + key.len();
        let end = tail[from..].find(')')?;
        let v = tail[from..from + end].trim();
        (!v.is_empty() && v != "n/a").then(|| v.to_string())
    };
    if !tail.contains("(Current directory: ") {
        return (text.to_string(), None, None);
    }
    (text[..at].trim_end_matches('\n').to_string(), field("(Open file: "), field("(Current directory: "))
}

/// Build `run`'s steps from its turns (after its final patch's edits, if any) and reconstruct
/// its shell edits.
pub fn build(run: &mut Run, turns: Vec<ChatTurn>) {
    let mut steps = RunSteps::default();
    let ins: Vec<StepIn<Box<RawValue>>> = turns.into_iter().map(step_in).collect();
    for s in &ins {
        steps.observe(s);
    }
    let mut built = Vec::with_capacity(ins.len());
    let mut edits = Vec::new();
    let mut exec = Vec::with_capacity(ins.len());
    let mut it = ins.into_iter().peekable();
    while let Some(s) = it.next() {
        let (step, made, how) = steps.build(s, it.peek());
        built.push(step);
        edits.extend(made);
        exec.push(how);
    }
    run.steps = built;
    let finals = std::mem::take(&mut run.edits);
    run.edits = edits;
    run.edits.extend(finals);
    reconstruct(run, &exec);
}

fn step_in(t: ChatTurn) -> StepIn<Box<RawValue>> {
    let (thought, action) = match split_thought_action(&t.reply) {
        Some((thought, action)) => (thought, action),
        None => (t.reply.clone(), String::new()),
    };
    let state = (t.open_file.is_some() || t.working_dir.is_some()).then(|| {
        serde_json::json!({
            "open_file": t.open_file.unwrap_or_else(|| "n/a".into()),
            "working_dir": t.working_dir.unwrap_or_default(),
        })
    });
    StepIn {
        action,
        observation: t.observation,
        response: t.reply,
        thought,
        execution_time: None,
        state,
        query: None,
        messages: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_closed_block_is_the_action() {
        let (t, a) = split_thought_action("Let's look.\n```\nls -F\n```").unwrap_or_default();
        assert_eq!((t.as_str(), a.as_str()), ("Let's look.", "ls -F\n"));
        let reply = "DISCUSSION\nFirst\n```python\nx = 1\n```\nthen\n```\nedit 1:1\nx = 2\nend_of_edit\n```\n";
        let (t, a) = split_thought_action(reply).unwrap_or_default();
        assert_eq!(a, "edit 1:1\nx = 2\nend_of_edit\n");
        assert!(t.starts_with("DISCUSSION\nFirst\n```python\nx = 1\n```\nthen"), "{t}");
        assert_eq!(split_thought_action("no block here"), None);
        assert_eq!(split_thought_action("```\nnever closed"), None);
    }

    #[test]
    fn the_prompt_state_is_read_off_the_observation() {
        let (obs, open, dir) =
            split_state("Directory src not found\n\n(Open file: n/a)\n(Current directory: /apispec)\nbash-$");
        assert_eq!((obs.as_str(), open, dir.as_deref()), ("Directory src not found", None, Some("/apispec")));
        let (obs, open, _) = split_state("[File: /a.py]\n1:x\n(Open file: /a.py)\n(Current directory: /r)\nbash-$");
        assert_eq!((obs.as_str(), open.as_deref()), ("[File: /a.py]\n1:x", Some("/a.py")));
        assert_eq!(split_state("plain output").0, "plain output");
    }
}
