//! Atlassian Rovo Dev transcripts: the plain text of SWE-PolyBench leaderboard submissions
//! (`trajs/<instance_id>`, no extension, beside `logs/<id>_result.json` and `all_preds.jsonl`).
//!
//! A transcript is a list of sections between separator lines of `=` (120 of them); `PHASE N`
//! banners between lines of `#` open its phases. A section starts with its header: `AGENT:` (the
//! model's text: reasoning, `<thinking>`, the status it reports), `USER PROMPT:` (the task, and any
//! later prompt), `TOOL CALL (name)` (the arguments as YAML: `file_path: ...`, lists as `- `,
//! long strings double-quoted with `\` continuations) and `TOOL RETURN (name)` (the answer in a
//! ``` fence, cut by the transcript after a few hundred characters and ended by `...`; the file
//! tools' answers are a Python list of strings).
//!
//! Each call with its return is a step, the agent text before it its thought; agent text not
//! followed by a call is a step of its own (a message). Sections before the first prompt (the
//! tool-call example the harness plays) are history, not steps. `bash` is a shell; `grep`
//! (`content_pattern`, `path_glob`) is shown as the search it ran, so its `path:line:text` answer
//! counts as search output; `open_files` and `inspect_code` are views; `find_and_replace_code`
//! (`find`, `replace`), `create_file` and `delete_file` are edits, applied when the answer says so.
//! Answers cut by the transcript are not output the agent saw cut: they are not marked clipped.
//! Phases after the first are kept in the run's metadata (the step each starts at).

use crate::analysis::tool_edits;
use crate::error::IngestError;
use crate::ingest::turns::{Ran, Turns};
use crate::model::{Format, Message, Parsed, Run, Step, Task};
use serde_json::{Value, json};
use std::path::Path;

/// Separator and banner lines are at least this long (Rovo Dev writes 120).
const RULE: usize = 40;

/// Whether `text` is a Rovo Dev transcript: its first lines a `PHASE N` banner, or a separator
/// followed by a section header.
pub fn is_transcript(text: &str) -> bool {
    let mut lines = text.trim_start_matches('\u{feff}').lines().map(|l| l.trim_end()).filter(|l| !l.is_empty());
    match (lines.next(), lines.next()) {
        (Some(a), Some(b)) if rule(a, '#') => phase(b).is_some(),
        (Some(a), Some(b)) if rule(a, '=') => header(b).is_some(),
        _ => false,
    }
}

fn rule(line: &str, c: char) -> bool {
    line.len() >= RULE && line.chars().all(|x| x == c)
}

fn phase(line: &str) -> Option<u32> {
    line.trim().strip_prefix("PHASE ")?.trim().parse().ok()
}

/// A section header: `AGENT:`, `USER PROMPT:`, `TOOL CALL (name)`, `TOOL RETURN (name)`.
fn header(line: &str) -> Option<Header> {
    let line = line.trim();
    let named = |prefix: &str| -> Option<String> {
        let rest = line.strip_prefix(prefix)?.trim();
        Some(rest.strip_prefix('(')?.strip_suffix(')')?.trim().to_string())
    };
    match line {
        "AGENT:" => Some(Header::Agent),
        "USER PROMPT:" => Some(Header::User),
        _ => named("TOOL CALL").map(Header::Call).or_else(|| named("TOOL RETURN").map(Header::Return)),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Header {
    Agent,
    User,
    Call(String),
    Return(String),
}

/// A section: its header (or a phase), its body, and the line (1-based) it starts at.
#[derive(Debug)]
enum Section {
    Phase(u32),
    Body { header: Header, body: String, line: usize },
}

/// The sections of a transcript, and warnings for text under no header.
fn sections(path: &Path, text: &str) -> (Vec<Section>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut current: Option<(Header, Vec<&str>, usize)> = None;
    let mut expect_header = false;
    let flush = |current: &mut Option<(Header, Vec<&str>, usize)>, out: &mut Vec<Section>| {
        if let Some((header, lines, line)) = current.take() {
            out.push(Section::Body { header, body: lines.join("\n").trim_end().to_string(), line });
        }
    };
    for (i, raw) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if rule(line.trim_end(), '=') || rule(line.trim_end(), '#') {
            flush(&mut current, &mut out);
            expect_header = true;
            continue;
        }
        if expect_header {
            if line.trim().is_empty() {
                continue;
            }
            expect_header = false;
            if let Some(n) = phase(line) {
                out.push(Section::Phase(n));
                continue;
            }
            match header(line) {
                Some(h) => current = Some((h, Vec::new(), i + 1)),
                None => warnings.push(format!(
                    "{}: line {}: a section without a known header ({:?}): passed over",
                    path.display(),
                    i + 1,
                    short(line.trim(), 60)
                )),
            }
            continue;
        }
        if let Some((_, lines, _)) = current.as_mut() {
            lines.push(line);
        }
    }
    flush(&mut current, &mut out);
    (out, warnings)
}

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let (sections, mut warnings) = sections(path, text);
    let mut t = Transcript::default();
    for section in sections {
        match section {
            Section::Phase(n) => t.phase(n),
            Section::Body { header, body, line } => match header {
                Header::Agent => t.agent(body),
                Header::User => t.user(body),
                Header::Call(name) => t.call(path, name, &body, line, &mut warnings),
                Header::Return(name) => t.answer(path, name, body, line, &mut warnings),
            },
        }
    }
    if t.task.is_none() && t.turns.steps.is_empty() && t.pending.is_none() {
        return Err(IngestError::shape(path, "a Rovo Dev transcript with no prompt and no step"));
    }
    let (run, task) = t.finish(path);
    Ok(Parsed { runs: vec![run], tasks: task.into_iter().collect(), warnings, ..Parsed::default() })
}

/// A call waiting for its return.
struct Call {
    name: String,
    args: Value,
    thought: String,
}

#[derive(Default)]
struct Transcript {
    task: Option<String>,
    history: Vec<Message>,
    turns: Turns,
    /// Agent text not yet given to a call.
    said: Option<String>,
    pending: Option<Call>,
    /// Phases after the first: (phase, the step it starts at).
    phases: Vec<(u32, usize)>,
}

impl Transcript {
    fn started(&self) -> bool {
        self.task.is_some()
    }

    fn phase(&mut self, n: u32) {
        self.settle();
        if n > 1 {
            self.phases.push((n, self.turns.steps.len()));
        }
    }

    fn agent(&mut self, text: String) {
        if !self.started() {
            self.history.push(Message { role: "assistant".into(), content: text, extra: None });
            return;
        }
        self.settle();
        self.said = Some(text);
    }

    fn user(&mut self, text: String) {
        self.settle();
        self.history.push(Message { role: "user".into(), content: text.clone(), extra: None });
        if self.task.is_none() {
            self.task = Some(problem_statement(&text));
            return;
        }
        let step =
            Step { action: "user prompt".into(), tool: Some("user".into()), observation: text, ..Step::default() };
        self.turns.plain(step);
    }

    fn call(&mut self, path: &Path, name: String, body: &str, line: usize, warnings: &mut Vec<String>) {
        if let Some(open) = self.pending.take() {
            self.step(open, None);
        }
        let args = match serde_saphyr::from_str::<Value>(body) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "{}: line {line}: the arguments of {name} are not YAML ({}): kept as text",
                    path.display(),
                    short(e.to_string().lines().next().unwrap_or_default(), 80)
                ));
                Value::String(body.to_string())
            }
        };
        if !self.started() {
            self.history.push(Message { role: "assistant".into(), content: format!("{name}: {body}"), extra: None });
            return;
        }
        let thought = self.said.take().unwrap_or_default();
        self.pending = Some(Call { name, args, thought });
    }

    fn answer(&mut self, path: &Path, name: String, body: String, line: usize, warnings: &mut Vec<String>) {
        let output = answer_text(&body);
        if !self.started() {
            self.history.push(Message { role: "tool".into(), content: output, extra: None });
            return;
        }
        match self.pending.take() {
            Some(call) => {
                if call.name != name {
                    warnings.push(format!(
                        "{}: line {line}: the return of {name} answers a call of {}",
                        path.display(),
                        call.name
                    ));
                }
                self.step(call, Some(output));
            }
            None => {
                warnings.push(format!("{}: line {line}: a return of {name} with no call: passed over", path.display()))
            }
        }
    }

    /// The agent text waiting for a call is a message of its own; a call without a return is a
    /// step without an answer.
    fn settle(&mut self) {
        if let Some(call) = self.pending.take() {
            self.step(call, None);
        }
        if let Some(text) = self.said.take() {
            self.turns.plain(Step { thought: text, ..Step::default() });
        }
    }

    fn step(&mut self, call: Call, output: Option<String>) {
        let args = &call.args;
        let s = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default().trim().to_string();
        let quote = |w: &str| shlex::try_quote(w).map(|q| q.into_owned()).unwrap_or_else(|_| w.to_string());
        let action = match call.name.as_str() {
            "bash" | "powershell" => s("command"),
            "grep" => {
                let glob = s("path_glob");
                let pattern = quote(&s("content_pattern"));
                if glob.is_empty() { format!("grep {pattern}") } else { format!("grep {pattern} {}", quote(&glob)) }
            }
            "open_files" => {
                let files: Vec<String> = list(args, "file_paths").iter().map(|p| quote(p)).collect();
                format!("open_files {}", files.join(" "))
            }
            name => match ["file_path", "folder_path", "path"].iter().map(|k| s(k)).find(|p| !p.is_empty()) {
                Some(p) if !p.contains('\n') => format!("{name} {}", quote(&p)),
                _ => match args {
                    Value::Object(o) if o.is_empty() => name.to_string(),
                    Value::String(text) => format!("{name} {}", text.lines().next().unwrap_or_default()),
                    other => format!("{name} {other}"),
                },
            },
        };
        let answered = output.is_some();
        let step = Step {
            thought: call.thought,
            action: action.trim().to_string(),
            observation: output.unwrap_or_default(),
            tool: Some(call.name.clone()),
            args: args.is_object().then(|| args.to_string()),
            ..Step::default()
        };
        let status = tool_edits::status(answered.then_some(step.observation.as_str()));
        let ran = match call.name.as_str() {
            "bash" | "powershell" => Ran::Shell(None),
            _ => Ran::Tool(None),
        };
        self.turns.call(step, ran, args, status);
    }

    fn finish(mut self, path: &Path) -> (Run, Option<Task>) {
        self.settle();
        let instance_id = crate::ingest::file_name::instance_from_file_name(path);
        let metadata = (!self.phases.is_empty()).then(|| {
            let phases: Vec<Value> = self.phases.iter().map(|(n, step)| json!({"phase": n, "step": step})).collect();
            json!({ "rovo_dev": { "phases": phases } }).to_string()
        });
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::RovoDev),
            agent: Some("rovo-dev".into()),
            history: self.history,
            metadata,
            ..Run::default()
        };
        self.turns.into_run(&mut run);
        let task = self.task.map(|t| Task { instance_id, instruction: Some(t), ..Task::default() });
        (run, task)
    }
}

/// At most `n` characters of `text`, for a warning.
fn short(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// A list of strings under `key` (a single string is a list of one).
fn list(args: &Value, key: &str) -> Vec<String> {
    match args.get(key) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The task of the first prompt: the text inside `<problem_statement>`, else the whole prompt.
fn problem_statement(prompt: &str) -> String {
    let inner = prompt
        .split_once("<problem_statement>")
        .and_then(|(_, rest)| rest.split_once("</problem_statement>").map(|(inside, _)| inside));
    inner.unwrap_or(prompt).trim().to_string()
}

/// A return's text: out of its ``` fence, and a Python list of strings (the file tools'
/// answers) read as its strings, one after another.
fn answer_text(body: &str) -> String {
    let mut text = body.trim();
    if let Some(rest) = text.strip_prefix("```") {
        text = rest.strip_prefix('\n').unwrap_or(rest);
        text = text.strip_suffix("```").unwrap_or(text).trim_end();
    }
    python_strings(text).unwrap_or_else(|| text.to_string())
}

/// `['a\nb', "c"]` as its strings joined by newlines; a list cut short keeps what it has (the
/// transcript's `...` included). `None` when the text is no such list.
fn python_strings(text: &str) -> Option<String> {
    let mut chars = text.strip_prefix('[')?.chars().peekable();
    let mut items: Vec<String> = Vec::new();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let quote = match chars.next() {
            Some(q @ ('\'' | '"')) => q,
            Some(']') | None => break,
            Some(_) if !items.is_empty() => break,
            Some(_) => return None,
        };
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                c if c == quote => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('r') => s.push('\r'),
                    Some('\\') => s.push('\\'),
                    Some('\'') => s.push('\''),
                    Some('"') => s.push('"'),
                    Some(k @ ('x' | 'u' | 'U')) => {
                        let width = match k {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (0..width).filter_map(|_| chars.next_if(char::is_ascii_hexdigit)).collect();
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(ch) if hex.len() == width => s.push(ch),
                            _ => {
                                s.push('\\');
                                s.push(k);
                                s.push_str(&hex);
                            }
                        }
                    }
                    Some(other) => {
                        s.push('\\');
                        s.push(other);
                    }
                    None => s.push('\\'),
                },
                c => s.push(c),
            }
        }
        items.push(s);
    }
    Some(items.join("\n"))
}

#[cfg(test)]
mod tests;
