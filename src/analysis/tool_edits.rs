//! Edits recognised by what a tool call does, not by what the tool is called: arguments that
//! name a file and give its whole new content, an old and a new string (one pair, or a list of
//! them), a line to insert after, or a patch (a unified diff, or an `apply_patch` envelope).
//! The names agents give such tools (`write_file`, `edit_file`, `str_replace_based_edit_tool`,
//! `apply_patch`, `Write`, `Edit`, `MultiEdit`, ...) and names never seen before alike: every
//! adapter that reads tool calls as JSON gets their edits here. A call that only reads (`view`,
//! `read_file`: a path and no new text) is no edit.
//!
//! Whether the edit applied is the observation's to say: [`status`] reads a tool's answer (the
//! editors' own words, an error), and an adapter that knows better (an error flag, an exit code)
//! passes its own.

use super::edit_blocks::{self, Block, Change};
use super::edits::{edit_from_texts, edit_status};
use super::reconstruct::patch::parse;
use crate::model::{Edit, EditKind, EditStatus};
use serde_json::{Map, Value};

/// Keys that name the file a call changes, in the order looked at.
const PATH_KEYS: &[&str] =
    &["file_path", "path", "filePath", "filename", "file", "target_file", "absolute_path", "filepath", "notebook_path"];
/// Keys that hold a file's whole new content.
const CONTENT_KEYS: &[&str] = &["content", "file_text", "contents", "new_content", "initial_content", "text", "code"];
/// Pairs of keys that hold the text replaced and its replacement.
const PAIRS: &[(&str, &str)] = &[
    ("old_string", "new_string"),
    ("old_str", "new_str"),
    ("old_text", "new_text"),
    ("oldText", "newText"),
    ("oldString", "newString"),
    ("search", "replace"),
    ("find", "replace"),
    ("old", "new"),
];
/// Keys that hold a list of replacements (`MultiEdit`'s `edits`).
const LIST_KEYS: &[&str] = &["edits", "replacements", "changes"];
/// Keys that hold a patch.
const PATCH_KEYS: &[&str] = &["patch", "input", "diff"];
/// Editor commands that change nothing.
const READING: &[&str] = &["view", "read", "list", "undo_edit", "ls", "cat"];

fn text<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn first<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| text(args, k))
}

/// The edits of one tool call of step `step`, each with `status`. `args` may be the arguments'
/// object, or a string holding it (function calls send JSON in a string), or a patch's text
/// (a custom `apply_patch` tool).
pub fn call_edits(step: usize, name: &str, args: &Value, status: EditStatus) -> Vec<Edit> {
    let parsed;
    let args = match args {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => {
                parsed = v;
                &parsed
            }
            _ => return patch_edits(step, s, status),
        },
        other => other,
    };
    let Some(args) = args.as_object() else { return Vec::new() };
    let command = text(args, "command").or_else(|| text(args, "action")).unwrap_or("");
    if READING.contains(&command) || (command.is_empty() && reads(name)) {
        return Vec::new();
    }
    if let Some(patch) = first(args, PATCH_KEYS).filter(|p| is_patch(p)) {
        return patch_edits(step, patch, status);
    }
    let Some(path) = first(args, PATH_KEYS).filter(|p| !p.trim().is_empty()) else { return Vec::new() };
    let block = |change: Change| Block { path: path.to_string(), change }.edit(step, status);
    if command == "insert" || args.contains_key("insert_line") {
        let Some(new) = first(args, &["new_str", "text", "new_string", "content"]) else { return Vec::new() };
        return vec![insert(step, path, args, new, status)];
    }
    if let Some(list) = LIST_KEYS.iter().find_map(|k| args.get(*k)).and_then(Value::as_array) {
        let pairs: Vec<Edit> = list
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|e| pair(e))
            .map(|(old, new)| block(Change::Replace { old: old.into(), new: new.into() }))
            .collect();
        if !pairs.is_empty() {
            return pairs;
        }
    }
    if let Some((old, new)) = pair(args) {
        return vec![block(Change::Replace { old: old.into(), new: new.into() })];
    }
    match first(args, CONTENT_KEYS) {
        Some(content) => vec![block(Change::Write(content.into()))],
        None if deletes(name) => vec![block(Change::Delete)],
        None => Vec::new(),
    }
}

/// A tool named for deleting a file (`delete_file`, `DeleteFile`, `remove_file`): not one that
/// removes lines or text from it (`remove_lines`).
fn deletes(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["delete", "remove"].iter().any(|w| n.starts_with(w)) && n.ends_with("file")
}

/// An old string and its replacement, under one of the known pairs of keys.
fn pair(args: &Map<String, Value>) -> Option<(&str, &str)> {
    PAIRS.iter().find_map(|(o, n)| Some((text(args, o)?, text(args, n)?)))
}

/// A tool whose name says it only reads (`read_file`, `view_file`, `cat`); not one that also
/// says it changes (`find_and_replace_code`, `search_replace`).
fn reads(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["read", "view", "cat", "list", "search", "grep", "glob", "find"].iter().any(|w| n.starts_with(w))
        && !["replace", "edit", "write"].iter().any(|w| n.contains(w))
}

/// A unified diff or an `apply_patch` envelope.
fn is_patch(text: &str) -> bool {
    text.contains("*** Begin Patch") || (text.contains("@@") && (text.contains("\n+") || text.contains("\n-")))
}

/// The edits a patch's text makes: an `apply_patch` envelope's blocks, or each file of a unified
/// diff (its own diff kept).
fn patch_edits(step: usize, patch: &str, status: EditStatus) -> Vec<Edit> {
    if patch.contains("*** Begin Patch") {
        return edit_blocks::apply_patch(patch).iter().map(|b| b.edit(step, status)).collect();
    }
    // Hunks read by their counts: a diff without `diff --git` lines still splits by file.
    parse(patch)
        .into_iter()
        .filter(|f| !f.path.is_empty() && !f.hunks.is_empty())
        .map(|f| {
            let (mut old, mut new) = (String::new(), String::new());
            let mut diff = format!("--- a/{0}\n+++ b/{0}\n", f.path);
            for h in &f.hunks {
                diff.push_str(&h.header);
                diff.push('\n');
                for (mark, line) in &h.lines {
                    diff.push(*mark);
                    diff.push_str(line);
                    diff.push('\n');
                    for (side, keep) in [(&mut old, *mark != '+'), (&mut new, *mark != '-')] {
                        if keep {
                            side.push_str(line);
                            side.push('\n');
                        }
                    }
                }
            }
            let mut e =
                edit_from_texts(Some(step), &f.path, EditKind::StrReplace, status, Some(old), Some(new), Vec::new());
            e.diff = Some(diff);
            e
        })
        .collect()
}

/// An insert after a line: drawn as added lines there.
fn insert(step: usize, path: &str, args: &Map<String, Value>, new: &str, status: EditStatus) -> Edit {
    let mut edit =
        edit_from_texts(Some(step), path, EditKind::Insert, status, Some(String::new()), Some(new.into()), Vec::new());
    let after = args.get("insert_line").and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()));
    edit.trace.lines = after.map(|n| (n as usize + 1, n as usize));
    if let (Some(n), Some(d)) = (after, edit.diff.as_deref()) {
        edit.diff = Some(super::edits::diff_at_line(d, n as usize + 1));
    }
    edit
}

/// Whether an edit applied, from the tool's answer: the editors' own words when they say, an
/// error when the answer reads as one, applied when the tool answered otherwise, unknown with
/// no answer.
pub fn status(answer: Option<&str>) -> EditStatus {
    let Some(answer) = answer.map(str::trim) else { return EditStatus::Unknown };
    match edit_status(answer) {
        EditStatus::Unknown if refused(answer) => EditStatus::RefusedByTool,
        EditStatus::Unknown if !answer.is_empty() => EditStatus::Applied,
        s => s,
    }
}

/// A tool's answer that says it did not do it.
fn refused(answer: &str) -> bool {
    let head: String = answer.chars().take(200).collect::<String>().to_ascii_lowercase();
    head.starts_with("error")
        || head.starts_with("failed")
        || head.starts_with("exception")
        || head.contains("not found in")
        || head.contains("no such file")
        || head.contains("did not appear")
        || head.contains("was not found")
        || head.contains("does not exist")
        || head.contains("permission denied")
        || head.contains("\"error\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(edits: &[Edit]) -> Vec<(String, EditKind)> {
        edits.iter().map(|e| (e.path.clone(), e.kind)).collect()
    }

    #[test]
    fn a_tool_named_for_deleting_deletes_its_file() {
        let args = json!({"file_path": "src/old.ts"});
        assert_eq!(
            kinds(&call_edits(3, "delete_file", &args, EditStatus::Applied)),
            [("src/old.ts".into(), EditKind::Delete)]
        );
        assert_eq!(kinds(&call_edits(3, "RemoveFile", &json!({"path": "a.py"}), EditStatus::Applied)).len(), 1);
        assert!(call_edits(3, "describe_file", &args, EditStatus::Applied).is_empty());
        assert!(call_edits(3, "remove_lines", &args, EditStatus::Applied).is_empty());
    }

    #[test]
    fn calls_are_read_by_their_arguments_whatever_their_name() {
        let write =
            call_edits(3, "write_file", &json!({"file_path": "/app/a.py", "content": "x = 1\n"}), EditStatus::Applied);
        assert_eq!(kinds(&write), [("/app/a.py".to_string(), EditKind::Create)]);
        assert!(write[0].diff.as_deref().is_some_and(|d| d.contains("+x = 1")), "{write:?}");
        let edit = call_edits(
            4,
            "edit_file",
            &json!({"file_path": "/app/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
            EditStatus::Applied,
        );
        assert_eq!(kinds(&edit), [("/app/a.py".to_string(), EditKind::StrReplace)]);
        assert!(edit[0].diff.as_deref().is_some_and(|d| d.contains("-x = 1") && d.contains("+x = 2")));
        // A name never seen, arguments of a known shape; camelCase as some agents write them.
        let odd = call_edits(
            5,
            "fs.patchText",
            &json!({"filePath": "b.ts", "oldText": "a", "newText": "b"}),
            EditStatus::Applied,
        );
        assert_eq!(kinds(&odd), [("b.ts".to_string(), EditKind::StrReplace)]);
        let multi = json!({"file_path": "c.py", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]});
        assert_eq!(call_edits(6, "MultiEdit", &multi, EditStatus::Applied).len(), 2);
        // An editor's command, in a string of JSON as function calls send it.
        let editor = json!(r#"{"command": "str_replace", "path": "/w/d.py", "old_str": "p", "new_str": "q"}"#);
        assert_eq!(kinds(&call_edits(7, "str_replace_based_edit_tool", &editor, EditStatus::Applied)).len(), 1);
        let insert = json!({"command": "insert", "path": "/w/d.py", "insert_line": 4, "new_str": "r = 1\n"});
        let i = call_edits(8, "str_replace_editor", &insert, EditStatus::Applied);
        assert_eq!(i[0].kind, EditKind::Insert);
        assert!(i[0].diff.as_deref().is_some_and(|d| d.contains("@@ -4,0 +5")), "{:?}", i[0].diff);
    }

    #[test]
    fn patches_in_arguments_or_as_the_whole_input_are_edits_per_file() {
        let envelope = "*** Begin Patch\n*** Update File: src/x.rs\n@@\n-let a = 1;\n+let a = 2;\n*** End Patch\n";
        assert_eq!(kinds(&call_edits(1, "apply_patch", &json!({"input": envelope}), EditStatus::Applied)).len(), 1);
        assert_eq!(call_edits(1, "apply_patch", &Value::String(envelope.into()), EditStatus::Applied).len(), 1);
        let diff = "--- a/p.py\n+++ b/p.py\n@@ -1 +1 @@\n-a\n+b\n--- a/q.py\n+++ b/q.py\n@@ -3 +3 @@\n-c\n+d\n";
        let e = call_edits(2, "apply_diff", &json!({"diff": diff}), EditStatus::Applied);
        assert_eq!(kinds(&e), [("p.py".to_string(), EditKind::StrReplace), ("q.py".to_string(), EditKind::StrReplace)]);
        assert!(e[1].diff.as_deref().is_some_and(|d| d.starts_with("--- a/q.py")), "each file keeps its own diff");
    }

    #[test]
    fn reading_calls_and_calls_without_new_text_are_no_edits() {
        for (name, args) in [
            ("read_file", json!({"file_path": "/app/a.py"})),
            ("str_replace_editor", json!({"command": "view", "path": "/app/a.py"})),
            ("view", json!({"path": "/app/a.py", "content": "shown"})),
            ("bash", json!({"command": "cat a.py"})),
            ("write_file", json!({"content": "no path"})),
            ("edit", json!("not json, not a patch")),
        ] {
            assert!(call_edits(0, name, &args, EditStatus::Applied).is_empty(), "{name} {args}");
        }
    }

    #[test]
    fn the_tools_answer_says_whether_it_applied() {
        assert_eq!(status(None), EditStatus::Unknown);
        assert_eq!(
            status(Some("Successfully replaced 1 instance(s) of the string in '/app/a.py'")),
            EditStatus::Applied
        );
        assert_eq!(status(Some("Error: String not found in file: 'x = 9'")), EditStatus::RefusedByTool);
        assert_eq!(
            status(Some("No replacement was performed, old_str `x` did not appear verbatim in /a.py.")),
            EditStatus::RefusedByTool
        );
        assert_eq!(status(Some("")), EditStatus::Unknown);
    }
}
