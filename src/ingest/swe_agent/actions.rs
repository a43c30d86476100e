//! SWE-agent action strings: which tool, its structured arguments, and the edits it proposes.
//!
//! `str_replace_editor` and the 1.0 windowed tools render their arguments shell-quoted
//! (`str_replace_editor str_replace /p --old_str 'a' --new_str 'b'`), so `shlex` recovers them.
//! 0.x windowed edits are `edit N:M` + replacement lines + `end_of_edit`.

use super::resolve;
use crate::analysis::{edits, markers};
use crate::model::{EditKind, EditStatus};
use serde_json::{Map, Value, json};

/// The SWE-agent tools (bundles) that are not plain shell commands.
const TOOLS: &[&str] = &[
    "str_replace_editor",
    "edit",
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "create",
    "insert",
    "append",
    "find_file",
    "search_dir",
    "search_file",
    "submit",
    "filemap",
    "view_image",
    "exit_forfeit",
    "exit_cost",
    "exit_context",
    "exit_format",
    "exit_error",
];

pub struct ParsedAction {
    pub tool: Option<String>,
    pub args: Option<Value>,
    pub edits: Vec<ProposedEdit>,
}

pub struct ProposedEdit {
    pub path: String,
    pub kind: EditKind,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    /// The lines (first, last) a windowed edit replaces, or (n + 1, n) for an insert after
    /// line n: the reconstruction reads the replaced text there and numbers the diff.
    pub lines: Option<(usize, usize)>,
}

impl ProposedEdit {
    /// The verdict, from the observation that answered the action.
    pub fn status_from(&self, observation: &str) -> EditStatus {
        edits::edit_status(observation)
    }
}

/// The verdict of a shell command's writes: they print nothing on success; an error message
/// means they may not have happened.
pub fn shell_status(observation: &str) -> EditStatus {
    if markers::looks_like_error(observation) { EditStatus::Unknown } else { EditStatus::Applied }
}

pub fn parse_action(action: &str, open_file: Option<&str>, working_dir: Option<&str>) -> ParsedAction {
    let trimmed = action.trim();
    let first_line = trimmed.lines().next().unwrap_or("");
    let word = first_line.split_whitespace().next().unwrap_or("");
    if trimmed.is_empty() {
        return ParsedAction { tool: None, args: None, edits: Vec::new() };
    }
    if !TOOLS.contains(&word) {
        // A shell command: its writes are reconstructed from the whole run (`analysis::reconstruct`).
        return ParsedAction { tool: Some("bash".to_string()), args: None, edits: Vec::new() };
    }
    let mut parsed = ParsedAction { tool: Some(word.to_string()), args: None, edits: Vec::new() };
    match word {
        "str_replace_editor" => str_replace_editor(trimmed, working_dir, &mut parsed),
        "edit" => windowed_edit(trimmed, open_file, &mut parsed),
        "create" => {
            if let Some(p) = shlex::split(first_line).and_then(|t| t.get(1).cloned()) {
                let path = resolve(&p, working_dir);
                parsed.args = Some(json!({ "path": path }));
                parsed.edits.push(ProposedEdit {
                    path,
                    kind: EditKind::Create,
                    old_text: None,
                    new_text: Some(String::new()),
                    lines: None,
                });
            }
        }
        "insert" | "append" => {
            if let (Some(tokens), Some(path)) = (shlex::split(trimmed), open_file) {
                let text = tokens.get(1).cloned().unwrap_or_default();
                let line = tokens.get(2).and_then(|l| l.parse::<i64>().ok());
                parsed.args = Some(json!({ "text": text, "line": line }));
                parsed.edits.push(ProposedEdit {
                    path: path.to_string(),
                    kind: EditKind::Insert,
                    old_text: Some(String::new()),
                    new_text: Some(with_newline(text)),
                    lines: line.and_then(|l| usize::try_from(l).ok()).map(|l| (l + 1, l)),
                });
            }
        }
        _ => {
            if let Some(tokens) = shlex::split(trimmed) {
                parsed.args = Some(Value::Array(tokens.into_iter().skip(1).map(Value::String).collect()));
            }
        }
    }
    parsed
}

/// `str_replace_editor COMMAND PATH [--flag value]...`
fn str_replace_editor(action: &str, working_dir: Option<&str>, parsed: &mut ParsedAction) {
    let Some(tokens) = shlex::split(action) else { return };
    let (Some(command), Some(path)) = (tokens.get(1), tokens.get(2)) else { return };
    let mut args = Map::new();
    args.insert("command".into(), Value::String(command.clone()));
    args.insert("path".into(), Value::String(path.clone()));
    let mut i = 3;
    while i < tokens.len() {
        let Some(flag) = tokens[i].strip_prefix("--") else {
            i += 1;
            continue;
        };
        let width = if flag == "view_range" { 2 } else { 1 };
        let values: Vec<String> = tokens.iter().skip(i + 1).take(width).cloned().collect();
        let value = match (flag, values.as_slice()) {
            ("view_range", [a, b]) => json!([a.parse::<i64>().ok(), b.parse::<i64>().ok()]),
            ("insert_line", [n]) => n.parse::<i64>().map(Value::from).unwrap_or(Value::String(n.clone())),
            (_, [v]) => Value::String(v.clone()),
            _ => Value::Null,
        };
        args.insert(flag.to_string(), value);
        i += 1 + width;
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let path = resolve(path, working_dir);
    let edit = match command.as_str() {
        "str_replace" => Some((EditKind::StrReplace, text("old_str"), Some(text("new_str").unwrap_or_default()))),
        "create" => Some((EditKind::Create, None, text("file_text"))),
        "insert" => Some((EditKind::Insert, Some(String::new()), text("new_str").map(with_newline))),
        _ => None,
    };
    if let Some((kind, old_text, new_text)) = edit {
        // An insert goes after the line it names; a replacement is placed where its text was
        // seen, by the reconstruction.
        let lines = match kind {
            EditKind::Insert => args.get("insert_line").and_then(Value::as_u64).map(|n| (n as usize + 1, n as usize)),
            _ => None,
        };
        parsed.edits.push(ProposedEdit { path, kind, old_text, new_text, lines });
    }
    parsed.args = Some(Value::Object(args));
}

/// `edit N:M` + lines + `end_of_edit` (0.x), or `edit 'search' 'replace' [replace_all]` (1.0).
fn windowed_edit(action: &str, open_file: Option<&str>, parsed: &mut ParsedAction) {
    let Some(path) = open_file else { return };
    let first_line = action.lines().next().unwrap_or("");
    let range = first_line
        .split_whitespace()
        .nth(1)
        .and_then(|r| r.split_once(':'))
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
    if let Some((start, end)) = range {
        let body: Vec<&str> = action.lines().skip(1).collect();
        let body = match body.last() {
            Some(l) if l.trim() == "end_of_edit" => &body[..body.len() - 1],
            _ => &body[..],
        };
        let mut new_text = body.join("\n");
        if !body.is_empty() {
            new_text.push('\n');
        }
        parsed.args = Some(json!({ "start_line": start, "end_line": end, "replacement": new_text }));
        parsed.edits.push(ProposedEdit {
            path: path.to_string(),
            kind: EditKind::WindowedEdit,
            old_text: None,
            new_text: Some(new_text),
            lines: Some((start, end)),
        });
        return;
    }
    let Some(tokens) = shlex::split(action) else { return };
    if let (Some(search), Some(replace)) = (tokens.get(1), tokens.get(2)) {
        parsed.args = Some(json!({
            "search": search,
            "replace": replace,
            "replace_all": tokens.get(3).map(|t| t == "True"),
        }));
        parsed.edits.push(ProposedEdit {
            path: path.to_string(),
            kind: EditKind::WindowedEdit,
            old_text: Some(with_newline(search.clone())),
            new_text: Some(with_newline(replace.clone())),
            lines: None,
        });
    }
}

fn with_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_replace_editor_arguments_are_recovered() {
        let a = "str_replace_editor str_replace /repo/a.py   --old_str 'x = 1\nif it'\"'\"'s' --new_str 'x = 2'";
        let p = parse_action(a, None, None);
        assert_eq!(p.tool.as_deref(), Some("str_replace_editor"));
        assert_eq!(p.edits.len(), 1);
        assert_eq!(p.edits[0].path, "/repo/a.py");
        assert_eq!(p.edits[0].old_text.as_deref(), Some("x = 1\nif it's"));
        assert_eq!(p.edits[0].new_text.as_deref(), Some("x = 2"));
        let args = p.args.unwrap_or_default();
        assert_eq!(args["command"], "str_replace");
    }

    #[test]
    fn view_is_not_an_edit_and_keeps_its_range() {
        let p = parse_action("str_replace_editor view /t/x.py  --view_range 430 450", None, None);
        assert!(p.edits.is_empty());
        assert_eq!(p.args.unwrap_or_default()["view_range"], json!([430, 450]));
    }

    #[test]
    fn windowed_edit_uses_the_open_file_and_names_its_lines() {
        let p = parse_action("edit 2:2\n2b\nend_of_edit", Some("/r/a.py"), Some("/r"));
        assert_eq!(p.tool.as_deref(), Some("edit"));
        assert_eq!(p.edits[0].path, "/r/a.py");
        assert_eq!(p.edits[0].lines, Some((2, 2)));
        assert_eq!(p.edits[0].old_text, None, "read from the known lines by the reconstruction");
        assert_eq!(p.edits[0].new_text.as_deref(), Some("2b\n"));
    }

    #[test]
    fn search_replace_edit_of_1_0() {
        let p = parse_action("edit 'def f()' 'def f():' False", Some("/r/t.py"), None);
        assert_eq!(p.edits[0].old_text.as_deref(), Some("def f()\n"));
        assert_eq!(p.edits[0].new_text.as_deref(), Some("def f():\n"));
    }

    #[test]
    fn shell_commands_are_bash_steps_whose_writes_the_reconstruction_finds() {
        let p = parse_action("sed -i 's/a/b/' src/m.py", None, Some("/repo"));
        assert_eq!(p.tool.as_deref(), Some("bash"));
        assert!(p.edits.is_empty());
        assert_eq!(shell_status(""), EditStatus::Applied);
        assert_eq!(shell_status("sed: can't read src/m.py: No such file or directory"), EditStatus::Unknown);
    }
}
