//! Moatless trajectories: Moatless Tools' state machine (`name`, `transition_rules`,
//! `transitions`, `info`; the format of Moatless' SWE-bench submissions, named `trajectory.json`
//! like ATIF files but not ATIF) and moatless-tree-search dumps (`root`, a tree of nodes).
//!
//! Moatless Tools: a step is an action of a transition (a state: SearchCode, IdentifyCode,
//! PlanToCode, EditCode, ...): the state and the trigger its response fired are the action, the
//! request's `scratch_pad` the thought, the response's output (or retry message) the
//! observation, the action's `completion` its model and tokens. An `EditCode` action that
//! finished with a `diff` is an applied edit; one answered by a retry or a rejection is an edit
//! the tool refused (its `<replace>` text kept). The run's model is the one most completions
//! name (several per run is normal), its cost `info.total_cost`, its submission `info.submission`
//! (`status: "error"` with a submission is normal: a cost limit hit after the edits). No verdict.
//!
//! Tree-search dumps: every node with an action is a step, in the order of the tree; a dump
//! holding only its unexpanded root has no step, and reads as nothing to review.

use crate::analysis::edits;
use crate::error::IngestError;
use crate::ingest::json::{at, compact, f64_field, i64_field, nonempty_str, str_field};
use crate::ingest::turns::{Turns, add};
use crate::model::{Edit, EditKind, EditStatus, Format, Parsed, Run, Step, Task};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

mod tree;

pub fn parse(path: &Path, text: &str) -> Result<Parsed, IngestError> {
    let doc: Doc = serde_json::from_str(text).map_err(|e| IngestError::json(path, &e))?;
    if let Some(transitions) = &doc.transitions {
        Ok(state_machine(path, &doc, transitions))
    } else if let Some(root) = doc.root {
        tree(path, &doc, root)
    } else {
        Err(IngestError::shape(path, "Moatless: neither `transitions` nor a `root` node"))
    }
}

/// The document, its transitions left as text: each is read (and dropped) in turn, so a long
/// trajectory is never held as one tree of values.
#[derive(serde::Deserialize)]
struct Doc<'a> {
    name: Option<String>,
    #[serde(borrow)]
    transitions: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    root: Option<&'a RawValue>,
    #[serde(default)]
    info: Value,
    #[serde(default)]
    transition_rules: Value,
    initial_message: Option<String>,
    #[serde(default)]
    metadata: Value,
    #[serde(default)]
    agent: Value,
}

fn state_machine(path: &Path, doc: &Doc, transitions: &[&RawValue]) -> Parsed {
    let info = &doc.info;
    let instance_id = nonempty_str(info, "instance_id")
        .or_else(|| at(info, &["tags"]).and_then(|t| t.get(0)).and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| crate::ingest::file_name::instance_from_file_name(path));
    let mut turns = Turns::default();
    let mut models: BTreeMap<String, usize> = BTreeMap::new();
    let (mut sent, mut received) = (None, None);
    let mut warnings = Vec::new();
    for (i, raw) in transitions.iter().enumerate() {
        let t: Value = match serde_json::from_str(raw.get()) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!(
                    "{}: transition {i}: {}: skipped",
                    path.display(),
                    crate::error::json_message(&e)
                ));
                continue;
            }
        };
        let state = str_field(&t, "name").unwrap_or_default();
        for a in t.get("actions").and_then(Value::as_array).into_iter().flatten() {
            let request = a.get("request").unwrap_or(&Value::Null);
            let response = a.get("response").unwrap_or(&Value::Null);
            let completion = a.get("completion").unwrap_or(&Value::Null);
            let usage = completion.get("usage").unwrap_or(&Value::Null);
            if let Some(m) = nonempty_str(completion, "model") {
                *models.entry(m).or_default() += 1;
            }
            let (tokens_in, tokens_out) = (i64_field(usage, "prompt_tokens"), i64_field(usage, "completion_tokens"));
            sent = add(sent, tokens_in);
            received = add(received, tokens_out);
            let trigger = str_field(response, "trigger").unwrap_or_default();
            let output = response.get("output").unwrap_or(&Value::Null);
            let observation = nonempty_str(response, "retry_message")
                .or_else(|| nonempty_str(output, "message"))
                .or_else(|| compact(Some(output)).filter(|o| o != "{}"))
                .unwrap_or_default();
            let step = Step {
                thought: str_field(request, "scratch_pad").unwrap_or_default(),
                action: format!("{state}: {trigger}{}", request_brief(request)),
                observation,
                tool: Some(state.clone()),
                args: compact(Some(request)),
                tokens_in,
                tokens_out,
                ..Step::default()
            };
            let retried = matches!(trigger.as_str(), "retry" | "reject");
            let idx = turns.tool(step, Some(retried));
            if state == "EditCode"
                && let Some(edit) = edit_of(&t, request, output, retried)
            {
                turns.edit(idx, edit);
            }
        }
    }
    let submission = nonempty_str(info, "submission");
    let model =
        models.iter().max_by_key(|(_, n)| **n).map(|(m, _)| m.clone()).or_else(|| {
            at(&doc.transition_rules, &["global_params", "model"]).and_then(Value::as_str).map(str::to_string)
        });
    let mut meta = Map::new();
    for key in ["session_id", "evaluation_name", "trace_id", "duration", "error"] {
        if let Some(x) = info.get(key).filter(|x| !x.is_null()) {
            meta.insert(key.into(), x.clone());
        }
    }
    meta.insert("models".into(), serde_json::to_value(&models).unwrap_or(Value::Null));
    let mut run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::Moatless),
        format_version: Some("moatless-tools".into()),
        agent: doc.name.clone().filter(|n| !n.trim().is_empty()).or(Some("moatless".into())),
        model,
        exit_status: nonempty_str(info, "status"),
        submission: submission.clone(),
        cost: f64_field(info, "total_cost"),
        tokens_sent: sent,
        tokens_received: received,
        metadata: Some(Value::Object(Map::from_iter([("moatless".to_string(), Value::Object(meta))])).to_string()),
        ..Run::default()
    };
    if let Some(patch) = &submission {
        run.edits.extend(edits::final_patch_edits(patch));
    }
    turns.into_run(&mut run);
    let task = Task {
        instance_id,
        instruction: doc.initial_message.clone().filter(|m| !m.trim().is_empty()),
        ..Task::default()
    };
    Parsed { runs: vec![run], tasks: vec![task], warnings, ..Parsed::default() }
}

/// What a request asks, briefly: the file and span to edit, the searches.
fn request_brief(request: &Value) -> String {
    if let Some(path) = nonempty_str(request, "file_path") {
        let span = nonempty_str(request, "span_id").map(|s| format!(" {s}")).unwrap_or_default();
        return format!(" {path}{span}");
    }
    let searches: Vec<String> = request
        .get("search_requests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| nonempty_str(r, "query").or_else(|| nonempty_str(r, "file_pattern")))
        .collect();
    if searches.is_empty() { String::new() } else { format!(" {}", searches.join("; ")) }
}

/// The edit an `EditCode` action made or tried: its diff when it finished with one, else (a
/// retry or a rejection) the `<replace>` text the tool refused.
fn edit_of(t: &Value, request: &Value, output: &Value, retried: bool) -> Option<Edit> {
    let props = t.get("properties").unwrap_or(&Value::Null);
    if let Some(diff) = nonempty_str(output, "diff") {
        let path = edits::split_patch(&diff)
            .into_iter()
            .next()
            .map(|f| f.path)
            .or_else(|| nonempty_str(props, "file_path"))?;
        let file = edits::split_patch(&diff).into_iter().next();
        let (old, new) = file.map(|f| (f.old_text, f.new_text)).unzip();
        let mut e =
            edits::edit_from_texts(None, &path, EditKind::StrReplace, EditStatus::Applied, old, new, Vec::new());
        e.diff = Some(diff);
        return Some(e);
    }
    if !retried {
        return None;
    }
    let content = str_field(request, "content")?;
    let replace = content
        .split_once("<replace>")
        .map(|(_, r)| r.split("</replace>").next().unwrap_or(r).trim_start_matches('\n'));
    let path = nonempty_str(props, "file_path").unwrap_or_default();
    let mut e = edits::edit_from_texts(
        None,
        &path,
        EditKind::StrReplace,
        EditStatus::RefusedByTool,
        None,
        replace.map(str::to_string),
        Vec::new(),
    );
    e.diff = None;
    Some(e)
}

/// A moatless-tree-search dump: the nodes with an action, depth first in the order of their ids
/// (its nodes read in one pass, `tree`).
fn tree(path: &Path, doc: &Doc, root: &RawValue) -> Result<Parsed, IngestError> {
    let all = if root.get().starts_with('{') {
        tree::nodes(root.get()).map_err(|e| IngestError::json(path, &e))?
    } else {
        Vec::new()
    };
    let task = all.first().and_then(|r| r.message.as_str()).filter(|m| !m.trim().is_empty()).map(str::to_string);
    let mut nodes = Vec::new();
    let mut stack: Vec<usize> = if all.is_empty() { Vec::new() } else { vec![0] };
    while let Some(n) = stack.pop() {
        let Some(node) = all.get(n) else { continue };
        nodes.push(node);
        // The child with the highest id first: the stack hands out the lowest first.
        let mut children = node.children.clone();
        children.sort_by_key(|c| std::cmp::Reverse(all.get(*c).and_then(|c| c.id)));
        stack.extend(children);
    }
    let acting: Vec<&&tree::Node> = nodes.iter().filter(|n| !n.action.is_null()).collect();
    if acting.is_empty() {
        let why = "a moatless-tree-search dump holding only its unexpanded root: no step to review";
        return Ok(Parsed { nothing: Some(why.into()), ..Parsed::default() });
    }
    let mut turns = Turns::default();
    for n in acting {
        let (action, obs) = (&n.action, &n.observation);
        let name = nonempty_str(action, "action_name")
            .or_else(|| nonempty_str(action, "name"))
            .unwrap_or_else(|| "action".into());
        let step = Step {
            thought: nonempty_str(action, "thoughts")
                .or_else(|| nonempty_str(action, "scratch_pad"))
                .unwrap_or_default(),
            action: format!("{name} {}", compact(Some(action)).unwrap_or_default()),
            observation: nonempty_str(obs, "message").or_else(|| compact(Some(obs))).unwrap_or_default(),
            tool: Some(name),
            ..Step::default()
        };
        turns.tool(step, None);
    }
    let instance_id = at(&doc.metadata, &["instance_id"])
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| crate::ingest::file_name::instance_from_file_name(path));
    let mut run = Run {
        instance_id: instance_id.clone(),
        format: Some(Format::Moatless),
        format_version: Some("moatless-tree-search".into()),
        agent: Some("moatless-tree-search".into()),
        model: at(&doc.agent, &["completion", "model"]).and_then(Value::as_str).map(str::to_string),
        ..Run::default()
    };
    turns.into_run(&mut run);
    let task = Task { instance_id, instruction: task, ..Task::default() };
    Ok(Parsed { runs: vec![run], tasks: vec![task], ..Parsed::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: a search tree 5,000 nodes deep (each node a child of the one before) failed
    /// with "recursion limit exceeded" past about 63 nodes. Every node with an action is a step,
    /// in the tree's order; the task is the root's message.
    #[test]
    fn a_tree_of_any_depth_is_read_without_recursion() {
        const DEPTH: usize = 5_000;
        let mut text =
            String::from(r#"{"selector": {}, "max_iterations": 9000, "metadata": {"instance_id": "deep-1"}, "root": "#);
        for i in 0..DEPTH {
            let action = if i == 0 { "null".to_string() } else { format!(r#"{{"action_name": "step{i}"}}"#) };
            let message = if i == 0 { r#""fix the bug""# } else { "null" };
            text.push_str(&format!(
                r#"{{"node_id": {i}, "message": {message}, "action": {action}, "observation": {{"message": "saw {i}"}}, "children": ["#
            ));
        }
        // A second child of the deepest parent but one, with a lower id: visited before its sibling.
        text.push_str("]}");
        text.push_str(r#", {"node_id": 1, "action": {"action_name": "early"}, "children": []}"#);
        text.push_str(&"]}".repeat(DEPTH - 1));
        text.push('}');
        let p = parse(Path::new("deep.json"), &text).unwrap_or_else(|e| panic!("{e}"));
        let steps = &p.runs[0].steps;
        assert_eq!(steps.len(), DEPTH);
        let tools: Vec<&str> = steps.iter().filter_map(|s| s.tool.as_deref()).collect();
        assert_eq!(&tools[..2], ["step1", "step2"]);
        assert_eq!(&tools[DEPTH - 3..], ["step4998", "early", "step4999"]);
        assert_eq!(steps[DEPTH - 1].observation, "saw 4999");
        assert_eq!(p.tasks[0].instruction.as_deref(), Some("fix the bug"));
    }
}
