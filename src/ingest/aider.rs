//! Aider chat histories (`.aider.chat.history.md` in a repository's root, aider 0.8x): markdown
//! appended to by every session. `# aider chat started at <time>` opens a session; `#### ` lines
//! are the user's input (consecutive ones are one prompt; slash commands too), `> ` lines are
//! aider's own output (the banner with the version and model, warnings and errors, `Tokens:`,
//! `Applied edit to <file>`, commits), every other line is the assistant's reply.
//!
//! A session with a prompt is a run, its instance the repository's folder. Each input is a step:
//! the input is the action, the reply the thought, aider's output the observation; `/run` and
//! `!` inputs are shell commands. The reply's SEARCH/REPLACE blocks (and, in the `whole` edit
//! format, the files it writes whole) are the step's edits, applied when aider says `Applied edit
//! to` the file. Sessions without a prompt (aborted at the banner) are no run: a note counts them.

use crate::analysis::edit_blocks::{self, Block};
use crate::error::IngestError;
use crate::ingest::turns::{Turns, add};
use crate::model::{EditStatus, Format, Parsed, Run, Step, Task};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

const SESSION: &str = "# aider chat started at ";

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let instance_id = repository(path);
    let mut parsed = Parsed::default();
    let mut empty = 0usize;
    let sessions = split_sessions(text);
    let total = sessions.len();
    for (position, (started, lines)) in sessions.into_iter().enumerate() {
        let session = Session::read(&lines);
        if session.steps.is_empty() {
            empty += 1;
            continue;
        }
        parsed.runs.push(session.into_run(&instance_id, position as i64, started));
    }
    if parsed.runs.is_empty() {
        parsed.nothing = Some(format!("an aider chat history of {total} sessions, none with a prompt: no run"));
        return Ok(parsed);
    }
    if let Some(first) = parsed.runs.first() {
        let task = first.steps.first().map(|s| s.action.clone());
        parsed.tasks.push(Task { instance_id, instruction: task, ..Task::default() });
    }
    if empty > 0 {
        parsed.warnings.push(format!(
            "{}: {empty} of {total} aider sessions have no prompt (aborted at the banner): no run for them",
            path.display()
        ));
    }
    Ok(parsed)
}

/// The repository a history belongs to: the folder it sits in (aider writes it in the root).
fn repository(path: &Path) -> String {
    let named = path.file_name().is_some_and(|n| n == ".aider.chat.history.md");
    let folder = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    match folder.filter(|_| named) {
        Some(f) => f,
        None => crate::ingest::file_name::instance_from_file_name(path).trim_end_matches(".md").to_string(),
    }
}

/// The sessions: each one's start time and lines (text before the first header, when any, is a
/// session without a banner).
fn split_sessions(text: &str) -> Vec<(Option<String>, Vec<&str>)> {
    let mut sessions: Vec<(Option<String>, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(time) = line.strip_prefix(SESSION) {
            sessions.push((Some(time.trim().to_string()), Vec::new()));
        } else {
            if sessions.is_empty() {
                if line.trim().is_empty() {
                    continue;
                }
                sessions.push((None, Vec::new()));
            }
            if let Some((_, lines)) = sessions.last_mut() {
                lines.push(line);
            }
        }
    }
    sessions
}

/// A line: the user's input, aider's output, or the reply. Markdown line breaks (two trailing
/// spaces) are taken off.
enum Line<'a> {
    Input(&'a str),
    Output(&'a str),
    Reply(&'a str),
}

fn classify(line: &str) -> Line<'_> {
    if let Some(rest) = line.strip_prefix("#### ").or_else(|| (line.trim_end() == "####").then_some("")) {
        Line::Input(rest.strip_suffix("  ").unwrap_or(rest))
    } else if let Some(rest) = line.strip_prefix("> ").or_else(|| (line.trim_end() == ">").then_some("")) {
        Line::Output(rest.strip_suffix("  ").unwrap_or(rest))
    } else {
        Line::Reply(line)
    }
}

/// One exchange: the input, the reply, aider's output after the input.
#[derive(Default)]
struct Exchange {
    input: Vec<String>,
    reply: Vec<String>,
    output: Vec<String>,
    /// A reply line that is not blank was read (input after it is the next exchange's).
    replied: bool,
}

#[derive(Default)]
struct Session {
    version: Option<String>,
    model: Option<String>,
    edit_format: Option<String>,
    cost: Option<f64>,
    steps: Vec<Exchange>,
}

impl Session {
    fn read(lines: &[&str]) -> Session {
        let mut s = Session::default();
        let mut current: Option<Exchange> = None;
        for line in lines {
            match classify(line) {
                Line::Input(text) => {
                    // Consecutive input lines are one prompt.
                    match current.as_mut() {
                        Some(ex) if !ex.replied && ex.output.is_empty() => ex.input.push(text.to_string()),
                        _ => {
                            s.steps.extend(current.take());
                            current = Some(Exchange { input: vec![text.to_string()], ..Exchange::default() });
                        }
                    }
                }
                Line::Output(text) => match current.as_mut() {
                    Some(ex) => ex.output.push(text.to_string()),
                    None => s.banner(text),
                },
                Line::Reply(text) => {
                    if let Some(ex) = current.as_mut() {
                        ex.replied |= !text.trim().is_empty();
                        ex.reply.push(text.to_string());
                    }
                }
            }
        }
        s.steps.extend(current);
        s
    }

    /// A line of the banner: the version and the model.
    fn banner(&mut self, text: &str) {
        if let Some(v) = text.strip_prefix("Aider v") {
            self.version = Some(v.trim().to_string());
        }
        let model = text.strip_prefix("Main model: ").or_else(|| text.strip_prefix("Model: "));
        if let Some(m) = model {
            let (name, rest) = m.split_once(" with ").unwrap_or((m, ""));
            self.model = Some(name.trim().to_string());
            self.edit_format = rest.split_once(" edit format").map(|(f, _)| f.trim().to_string());
        }
    }

    fn into_run(self, instance_id: &str, position: i64, started: Option<String>) -> Run {
        let mut turns = Turns::default();
        let (mut sent, mut received, mut cost) = (None, None, self.cost);
        let whole = self.edit_format.as_deref() == Some("whole");
        let mut last_error = false;
        for ex in &self.steps {
            let input = ex.input.join("\n").trim().to_string();
            let reply = ex.reply.join("\n").trim().to_string();
            let observation = ex.output.join("\n").trim().to_string();
            let (tokens_in, tokens_out, step_cost) = tokens(&ex.output);
            sent = add(sent, tokens_in);
            received = add(received, tokens_out);
            cost = step_cost.or(cost);
            let command = input.strip_prefix("/run ").or_else(|| input.strip_prefix('!')).map(str::to_string);
            let tool = match input.split_whitespace().next() {
                Some(word) if word.starts_with('/') => word.to_string(),
                _ if command.is_some() => "!".to_string(),
                _ => "prompt".to_string(),
            };
            last_error = reply.is_empty() && (observation.contains("Traceback") || observation.contains("Error"));
            let step = Step {
                thought: reply.clone(),
                action: command.clone().unwrap_or_else(|| input.clone()),
                observation: observation.clone(),
                tool: Some(tool),
                tokens_in,
                tokens_out,
                ..Step::default()
            };
            let idx = match command {
                Some(_) => turns.shell(step, None),
                None => turns.tool(step, Some(last_error)),
            };
            let applied: HashSet<String> = ex
                .output
                .iter()
                .filter_map(|l| l.strip_prefix("Applied edit to "))
                .map(|f| f.trim().to_string())
                .collect();
            let mut blocks: Vec<Block> = edit_blocks::search_replace(&reply);
            if whole || blocks.is_empty() {
                blocks.extend(edit_blocks::whole_files(&reply, &applied));
            }
            let failed = observation.contains("SearchReplaceNoExactMatch") || observation.contains("failed to match");
            for block in blocks {
                let status = if applied.contains(&block.path) {
                    EditStatus::Applied
                } else if failed {
                    EditStatus::RefusedByTool
                } else {
                    EditStatus::Unknown
                };
                turns.edit(idx, block.edit(idx, status));
            }
        }
        let interrupted = self.steps.last().is_some_and(|ex| ex.output.iter().any(|l| l.contains("KeyboardInterrupt")));
        let exit = if interrupted {
            "interrupted"
        } else if last_error {
            "error"
        } else {
            "finished"
        };
        let mut meta = Map::new();
        for (k, v) in [("started", started), ("edit_format", self.edit_format)] {
            if let Some(v) = v {
                meta.insert(k.into(), Value::from(v));
            }
        }
        let mut run = Run {
            instance_id: instance_id.to_string(),
            format: Some(Format::Aider),
            format_version: self.version,
            agent: Some("aider".into()),
            model: self.model,
            exit_status: Some(exit.into()),
            cost,
            tokens_sent: sent,
            tokens_received: received,
            position,
            metadata: Some(Value::Object(Map::from_iter([("aider".to_string(), Value::Object(meta))])).to_string()),
            ..Run::default()
        };
        turns.into_run(&mut run);
        run
    }
}

/// `Tokens: 1.8k sent, 89 received. Cost: $0.01 message, $0.05 session.`: the tokens of the
/// message and the session's cost so far.
fn tokens(output: &[String]) -> (Option<i64>, Option<i64>, Option<f64>) {
    let Some(line) = output.iter().rev().find_map(|l| l.strip_prefix("Tokens: ")) else { return (None, None, None) };
    let (counts, cost) = line.split_once(". Cost: ").unwrap_or((line.trim_end_matches('.'), ""));
    let (mut sent, mut received) = (None, None);
    for part in counts.split(',').map(str::trim) {
        if let Some(n) = part.strip_suffix(" sent") {
            sent = amount(n);
        } else if let Some(n) = part.strip_suffix(" received") {
            received = amount(n);
        }
    }
    let session =
        cost.split(',').nth(1).and_then(|c| c.trim().strip_prefix('$')?.split_whitespace().next()?.parse().ok());
    (sent, received, session)
}

/// `89`, `1.8k`, `1.2M`.
fn amount(n: &str) -> Option<i64> {
    let (digits, scale) = match (n.strip_suffix('k'), n.strip_suffix('M')) {
        (Some(d), _) => (d, 1e3),
        (_, Some(d)) => (d, 1e6),
        _ => (n, 1.0),
    };
    digits.trim().parse::<f64>().ok().map(|x| (x * scale).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(text: &str) -> Vec<Run> {
        parse(Path::new("repo/.aider.chat.history.md"), text).unwrap_or_else(|e| panic!("{e}")).runs
    }

    /// Issue 42: an input line after each of 100,000 blank reply lines. Whether input still
    /// belonged to the prompt looked at every reply line so far (5 x 10^9 looks); a flag says
    /// it. One prompt of every input line, as before.
    #[test]
    fn input_after_blank_reply_lines_joins_the_prompt_at_once() {
        const N: usize = 100_000;
        let mut text = String::from("# aider chat started at 2025-01-01 10:00:00\n\n#### line 0\n");
        for i in 1..=N {
            text.push_str(&format!("\n#### line {i}\n"));
        }
        text.push_str("\nThe reply.\n");
        let runs = runs_of(&text);
        assert_eq!(runs[0].steps.len(), 1);
        let step = &runs[0].steps[0];
        assert_eq!(step.action.lines().count(), N + 1);
        assert_eq!((step.action.lines().last(), step.thought.as_str()), (Some(&*format!("line {N}")), "The reply."));
    }

    /// Issue 42: 40,000 SEARCH/REPLACE blocks, each of its own file, and as many `Applied edit
    /// to` lines. Each block looked for its file among every line (1.6 x 10^9 comparisons); a
    /// set answers at once. Every block an applied edit, as before.
    #[test]
    fn many_blocks_and_applied_lines_match_at_once() {
        const N: usize = 40_000;
        let mut text =
            String::from("# aider chat started at 2025-01-01 10:00:00\n> Aider v0.86.1\n\n#### fix them\n\n");
        for i in 0..N {
            text.push_str(&format!(
                "f{i}.py\n```\n<<<<<<< SEARCH\na = {i}\n=======\na = {}\n>>>>>>> REPLACE\n```\n\n",
                i + 1
            ));
        }
        for i in 0..N {
            text.push_str(&format!("> Applied edit to f{i}.py\n"));
        }
        let runs = runs_of(&text);
        let edits = &runs[0].edits;
        assert_eq!(edits.len(), N);
        assert!(edits.iter().all(|e| e.status == EditStatus::Applied));
        assert_eq!(edits[N - 1].path, format!("f{}.py", N - 1));
    }

    #[test]
    fn token_lines_are_read_with_their_units() {
        let line = |l: &str| vec![l.to_string()];
        assert_eq!(tokens(&line("Tokens: 1.8k sent, 89 received.")), (Some(1800), Some(89), None));
        assert_eq!(
            tokens(&line("Tokens: 12k sent, 1.2k received. Cost: $0.05 message, $0.31 session.")),
            (Some(12000), Some(1200), Some(0.31))
        );
        assert_eq!(tokens(&line("Applied edit to a.py")), (None, None, None));
    }
}
