use super::*;
use crate::model::{EditKind, EditStatus, Step};
use std::path::PathBuf;

const OUTPUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/openhands/output.jsonl");
const SESSION_EVENTS: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/openhands/sessions/demo-session/events");
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/openhands/multi_swe_bench_output.jsonl");

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse_ok(path: &Path, text: &str) -> Parsed {
    parse(path, text).unwrap_or_else(|e| panic!("{e}"))
}

fn tool_edits(run: &Run) -> Vec<&crate::model::Edit> {
    run.edits.iter().filter(|e| e.step.is_some() && e.kind != EditKind::ShellWrite).collect()
}

/// Events of a session folder, sorted by numeric id, as the folder unit loads them.
fn load_session(dir: &str) -> Vec<Value> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let id = p.file_stem()?.to_str()?.parse().ok()?;
            Some((id, p))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, p)| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{e}"));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

#[test]
fn fixture_instance_one_resolved_with_refused_then_applied_edit() {
    let p = parse_ok(Path::new(OUTPUT), &read(OUTPUT));
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.tasks.len(), 2);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let run = &p.runs[0];
    assert_eq!(run.instance_id, "demo__oh-1");
    assert_eq!(run.position, 1);
    assert_eq!(run.format, Some(Format::OpenHands));
    assert_eq!(run.format_version.as_deref(), Some("0.35.0"));
    assert_eq!(run.agent.as_deref(), Some("openhands/CodeActAgent"));
    assert_eq!(run.model.as_deref(), Some("openai/demo-model-z"));
    assert_eq!(run.exit_status.as_deref(), Some("finished"));
    assert_eq!((run.tokens_sent, run.tokens_received), (Some(6900), Some(250)));
    assert_eq!(run.api_calls, Some(6));
    assert!((run.cost.unwrap_or(0.0) - 0.006).abs() < 1e-9);
    let kinds: Vec<&str> = run.steps.iter().map(|s| s.tool.as_deref().unwrap_or("")).collect();
    assert_eq!(
        kinds,
        ["execute_bash", "str_replace_editor", "str_replace_editor", "str_replace_editor", "execute_bash", "finish"]
    );
    assert_eq!(run.steps[0].thought, "Find greet.");
    assert_eq!(run.steps[0].tokens_in, Some(900));
    assert!(run.steps[0].timestamp.is_some());
    assert!(run.steps[0].args.as_deref().is_some_and(|a| a.contains("\"command\"")));
    assert!(run.steps[1].action.starts_with("view /workspace/demo__repo/demo/greet.py"));
    assert_eq!(run.steps[2].action, "str_replace /workspace/demo__repo/demo/greet.py");
    assert!(run.steps[2].flags.edit && run.steps[2].flags.edit_rejected && run.steps[2].flags.error);
    assert!(run.steps[3].flags.edit && !run.steps[3].flags.edit_rejected && !run.steps[3].flags.error);
    assert!(run.steps[4].flags.error && run.steps[4].flags.test_run);
    assert!(run.steps[5].thought.contains("Removed the upper() call"));
    assert!(run.steps[5].observation.is_empty());

    let edits = tool_edits(run);
    assert_eq!(edits.len(), 2);
    assert_eq!(
        (edits[0].step, edits[0].kind, edits[0].status),
        (Some(2), EditKind::StrReplace, EditStatus::RefusedByTool)
    );
    assert_eq!((edits[1].step, edits[1].status), (Some(3), EditStatus::Applied));
    // The tool's own diff is kept as is.
    assert!(edits[1].diff.as_deref().is_some_and(|d| d.starts_with("--- /workspace/demo__repo/demo/greet.py\n")));
    assert!(edits[0].diff.is_some(), "a refused edit still shows what was attempted");
    assert_eq!(run.edits.iter().filter(|e| e.kind == EditKind::FinalPatch).count(), 1);

    let meta = run.metadata.as_deref().unwrap_or("");
    assert!(meta.contains("\"api_key\":\"**********\"") && !meta.contains("NOT-A-REAL-KEY"), "{meta}");
    assert_eq!(run.history.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(), ["system", "user"]);

    let task = &p.tasks[0];
    assert!(task.instruction.as_deref().is_some_and(|i| i.contains("upper-cases")));
    assert_eq!(task.fail_to_pass, ["tests/test_greet.py::test_case_kept"]);
    assert_eq!(task.pass_to_pass, ["tests/test_greet.py::test_hello"]);
    assert!(task.gold_patch.is_some());

    assert_eq!(p.outcomes.len(), 1);
    let o = &p.outcomes[0];
    assert_eq!((o.instance_id.as_str(), o.resolved, o.format), ("demo__oh-1", Some(true), Some(Format::OpenHands)));
    assert_eq!(o.model.as_deref(), Some("openai/demo-model-z"));
}

#[test]
fn fixture_instance_two_hit_the_iteration_limit() {
    let p = parse_ok(Path::new(OUTPUT), &read(OUTPUT));
    let run = &p.runs[1];
    assert_eq!(run.instance_id, "demo__oh-2");
    assert_eq!(run.position, 2);
    assert_eq!(
        run.exit_status.as_deref(),
        Some("RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 8, max iteration: 8")
    );
    assert_eq!(run.api_calls, Some(7));
    assert_eq!(run.steps.len(), 6);
    let actions: Vec<&str> = run.steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(actions[1], "create /workspace/demo__repo/demo/util.py");
    assert_eq!(actions[2], "view /workspace/demo__repo/demo/sum.py [1,2]");
    assert_eq!(actions[3], "think");
    assert_eq!(actions[5], "message");

    // sed -i in a run action is a shell write.
    assert!(run.steps[0].flags.edit && !run.steps[0].flags.error);
    let shell: Vec<_> = run.edits.iter().filter(|e| e.kind == EditKind::ShellWrite).collect();
    assert_eq!(shell.len(), 1);
    assert_eq!(
        (shell[0].step, shell[0].path.as_str(), shell[0].status),
        (Some(0), "/workspace/demo__repo/demo/sum.py", EditStatus::Applied)
    );
    let created = tool_edits(run);
    assert_eq!(created.len(), 1);
    assert_eq!((created[0].kind, created[0].status), (EditKind::Create, EditStatus::Applied));
    assert_eq!(created[0].new_text.as_deref(), Some("def first(xs):\n    return xs[0]\n"));

    // The uncaused error observation joins the read step it followed.
    let read_step = &run.steps[2];
    assert!(read_step.flags.error);
    assert!(read_step.observation.starts_with("Here's the result of running `cat -n`"));
    assert!(read_step.observation.ends_with("'insert', 'undo_edit']."));
    // String ids pair too.
    assert_eq!(run.steps[3].observation, "Your thought has been logged.");
    assert!(run.steps[4].flags.error && run.steps[4].flags.test_run);
    assert_eq!(run.steps[5].thought, "I could not find the tests; should I add some?");
    // Agent messages are steps; the history keeps only what is not (system prompt, user turns).
    assert!(run.history.iter().all(|m| m.role != "assistant"));

    assert!(p.outcomes.iter().all(|o| o.instance_id != "demo__oh-2"));
    assert!(p.tasks[1].fail_to_pass.is_empty() && p.tasks[1].gold_patch.is_none());
    assert_eq!(run.edits.iter().filter(|e| e.kind == EditKind::FinalPatch).count(), 2);
}

#[test]
fn session_folder_events() {
    let events = load_session(SESSION_EVENTS);
    assert_eq!(events.len(), 9);
    let p = parse_events(Path::new(SESSION_EVENTS), events).unwrap_or_else(|e| panic!("{e}"));
    let run = &p.runs[0];
    assert_eq!(run.instance_id, "demo-session");
    assert_eq!(run.format, Some(Format::OpenHandsEvents));
    assert_eq!(run.position, 0);
    assert_eq!(run.agent.as_deref(), Some("openhands"));
    assert_eq!(run.model.as_deref(), Some("demo/model-z"));
    assert_eq!(run.exit_status.as_deref(), Some("awaiting_user_input"));
    assert_eq!((run.tokens_sent, run.tokens_received), (Some(2400), Some(80)));
    assert_eq!(run.steps.len(), 3);
    assert_eq!(run.steps[0].action, "cat /workspace/demo/cli.py");
    assert!(run.steps[1].flags.edit);
    let edits = tool_edits(run);
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].status, EditStatus::Applied);
    assert!(edits[0].diff.as_deref().is_some_and(|d| d.contains("+p.add_argument('--verbose'")));
    assert_eq!(p.tasks[0].instruction.as_deref(), Some("Add a --verbose flag to demo/cli.py."));

    // One event file on its own, or a list file, names its instance too.
    let single = Path::new("/x/sessions/abc/events/3.json");
    assert_eq!(session_id(single).as_deref(), Some("abc"));
    let list =
        parse_events(Path::new("/x/demo__list.json"), load_session(SESSION_EVENTS)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(list.runs[0].instance_id, "demo__list");
}

#[test]
fn a_single_instance_json_file_and_an_event_array_file() {
    let text = read(OUTPUT);
    let first = text.lines().next().unwrap_or_default();
    let p = parse_ok(Path::new("/runs/demo__oh-1.json"), first);
    assert_eq!(p.runs.len(), 1);
    assert_eq!(p.runs[0].position, 0);
    assert_eq!(p.runs[0].steps.len(), 6);

    let line: Value = serde_json::from_str(first).unwrap_or_default();
    let history = line.get("history").cloned().unwrap_or_default();
    let p = parse_ok(Path::new("/runs/demo__events.json"), &history.to_string());
    assert_eq!(p.runs[0].format, Some(Format::OpenHandsEvents));
    assert_eq!(p.runs[0].instance_id, "demo__events");
    assert_eq!(p.runs[0].steps.len(), 6);
    assert_eq!(p.runs[0].exit_status.as_deref(), Some("finished"));
}

#[test]
fn a_bad_line_is_a_warning_and_good_lines_are_kept() {
    let text = read(OUTPUT);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "{\"instance_id\": \"demo__broken\", \"history\": [");
    lines.push("{\"instance_id\": \"demo__wrong\", \"history\": {\"id\": 1}}");
    let p = parse_ok(Path::new("out.jsonl"), &lines.join("\n"));
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[1].position, 3);
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("out.jsonl: line 2"), "{}", p.warnings[0]);
    assert!(p.warnings[1].contains("line 4") && p.warnings[1].contains("`history`"), "{}", p.warnings[1]);
}

#[test]
fn malformed_inputs_are_errors_not_panics() {
    let json = Path::new("x.json");
    let wrong = parse(json, r#"{"instance_id": "demo__x", "history": "not a list"}"#);
    assert!(matches!(&wrong, Err(e) if e.to_string().contains("`history` is not a list")), "{wrong:?}");
    let only_bad = parse(Path::new("x.jsonl"), "{\"instance_id\": \"a\", \"history\": 3}\n");
    assert!(matches!(&only_bad, Err(e) if e.to_string().contains("line 1")), "{only_bad:?}");
    assert!(parse(json, "{\"instance_id\": \"a\",\n \"history\": [").is_err());
    assert!(parse(json, "42").is_err());
    assert!(parse(json, "[]").is_err());
    assert!(parse_events(json, Vec::new()).is_err());

    // Events of odd shapes: skipped or tolerated.
    let events: Vec<Value> = serde_json::from_str(
        r#"[7, {"id": "x", "action": "run", "source": "agent", "args": []},
            {"id": 2, "observation": "run", "cause": {"a": 1}, "content": 5},
            {"id": 3, "observation": "error", "content": "boom"},
            {"id": 4, "action": "edit", "source": "agent", "args": {"command": 1, "path": null}},
            {"id": 5, "observation": "edit", "cause": 4, "extras": {"diff": 9}}]"#,
    )
    .unwrap_or_default();
    let p = parse_events(json, events).unwrap_or_else(|e| panic!("{e}"));
    let run = &p.runs[0];
    assert_eq!(run.steps.len(), 2);
    assert!(run.steps[0].flags.error && run.steps[0].observation == "boom");
    assert_eq!(tool_edits(run).len(), 1);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].contains("event 0"));

    // An error before any action becomes a step of its own.
    let p = parse_events(json, vec![serde_json::json!({"id": 0, "observation": "error", "content": "early"})])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.runs[0].steps.len(), 1);
    assert!(p.runs[0].steps[0].flags.error);
}

#[test]
fn api_keys_are_masked() {
    let m = serde_json::json!({"llm_config": {"api_key": "sk-live", "aws_secret_access_key": null}, "x": 1});
    let out = masked(&m);
    assert_eq!(out["llm_config"]["api_key"], "**********");
    assert!(out["llm_config"]["aws_secret_access_key"].is_null());
    assert_eq!(masked(&serde_json::json!({"llm_config": "odd"})), serde_json::json!({"llm_config": "odd"}));
}

fn corpus_runs() -> Parsed {
    parse_ok(Path::new(CORPUS), &read(CORPUS))
}

fn edit_attempts(run: &Run) -> usize {
    tool_edits(run).len()
}

fn error_observation_steps(run: &Run) -> Vec<&Step> {
    run.steps.iter().filter(|s| s.observation.contains("Parameter 'command' is expected to be one of")).collect()
}

#[test]
fn corpus_manifest_facts() {
    let p = corpus_runs();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let ids: Vec<&str> = p.runs.iter().map(|r| r.instance_id.as_str()).collect();
    assert_eq!(ids, ["ponylang__ponyc-4595", "ponylang__ponyc-4593", "ponylang__ponyc-4588"]);
    let steps: Vec<usize> = p.runs.iter().map(|r| r.steps.len()).collect();
    assert_eq!(steps, [23, 33, 49]);
    let edits: Vec<usize> = p.runs.iter().map(edit_attempts).collect();
    assert_eq!(edits, [2, 11, 16]);
    assert!(p.runs.iter().all(|r| r.submission.is_some()));
    assert!(p.outcomes.is_empty(), "no test report in these lines");
    assert!(p.runs.iter().all(|r| r.agent.as_deref() == Some("openhands/CodeActAgent")));
    assert!(p.runs.iter().all(|r| r.model.as_deref() == Some("openai/openrouter-llama-4-maverick")));
    assert!(p.runs.iter().all(|r| r.metadata.as_deref().is_some_and(|m| m.contains("\"api_key\":\"**********\""))));

    let [r4595, r4593, r4588] = [&p.runs[0], &p.runs[1], &p.runs[2]];
    assert_eq!(r4595.exit_status.as_deref(), Some("finished"));
    assert_eq!(r4593.exit_status.as_deref(), Some("finished"));
    assert!(
        r4588.exit_status.as_deref().is_some_and(|s| s.starts_with("RuntimeError: Agent reached maximum iteration"))
    );
    assert_eq!(error_observation_steps(r4593).len(), 1);
    assert_eq!(error_observation_steps(r4588).len(), 1);
    assert!(error_observation_steps(r4593)[0].flags.error);
    assert_eq!(r4595.tokens_sent, Some(565_158));

    // Edit verdicts from the tool's replies.
    let statuses = |r: &Run| -> (usize, usize) {
        let e = tool_edits(r);
        (
            e.iter().filter(|x| x.status == EditStatus::Applied).count(),
            e.iter().filter(|x| x.status == EditStatus::RefusedByTool).count(),
        )
    };
    assert_eq!(statuses(r4595), (1, 1));
    assert_eq!(statuses(r4593), (1, 10));
    assert_eq!(statuses(r4588), (4, 12));
    assert!(r4593.steps.iter().any(|s| s.flags.edit_rejected));
    assert_eq!(p.tasks.len(), 3);
}

fn corpus_file(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus")).join(rel)
}

fn parse_corpus(rel: &str, read: fn(&Path, &str) -> Result<Parsed, IngestError>) -> Parsed {
    let path = corpus_file(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read(&path, &text).unwrap_or_else(|e| panic!("{e}"))
}

/// OpenDevin's output of 2024-05 (MANIFEST: 6 lines, histories of 6, 6, 6, 6, 6, 5 [action,
/// observation] pairs, the model in `metadata.model_name` on the first three lines only).
#[test]
fn corpus_2024_pairs_become_steps_and_the_model_is_only_where_the_line_names_it() {
    let p = parse_corpus("openhands-2024/output.jsonl", parse);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let ids: Vec<&str> = p.runs.iter().map(|r| r.instance_id.as_str()).collect();
    assert_eq!(ids, ["ProntoQA_1", "ProntoQA_2", "ProntoQA_3", "ProntoQA_4", "ProntoQA_5", "ProntoQA_6"]);
    // Each pair's action is a step unless it is the user's (the task, a nudge to go on).
    let steps: Vec<usize> = p.runs.iter().map(|r| r.steps.len()).collect();
    assert_eq!(steps, [4, 4, 4, 4, 4, 3]);
    let models: Vec<Option<&str>> = p.runs.iter().map(|r| r.model.as_deref()).collect();
    let gpt = Some("gpt-4o-2024-05-13");
    assert_eq!(models, [gpt, gpt, gpt, None, None, None]);
    let run = &p.runs[0];
    assert_eq!(run.agent.as_deref(), Some("openhands/CodeActAgent"));
    assert_eq!(run.exit_status.as_deref(), Some("finished"));
    let tools: Vec<&str> = run.steps.iter().map(|s| s.tool.as_deref().unwrap_or("")).collect();
    assert_eq!(tools, ["run_ipython", "run_ipython", "message", "finish"]);
    assert_eq!(run.steps[0].action, "%pip install scitools-pyke");
    assert!(run.steps[0].observation.starts_with("[Package installed successfully]"));
    assert_eq!(run.steps[1].observation, "'A'");
    assert_eq!(run.steps[2].observation, "", "a `null` observation answers nothing");
    assert_eq!(run.history.iter().filter(|m| m.role == "user").count(), 2);
    // `test_result.result`: the benchmark script's grading of the final answer.
    let verdicts: Vec<Option<bool>> = p.outcomes.iter().map(|o| o.resolved).collect();
    assert_eq!(verdicts, [Some(false), Some(true), Some(true), Some(true), Some(true), Some(true)]);
    assert!(p.tasks.iter().all(|t| t.instruction.as_deref().is_some_and(|i| i.contains("logic reasoning"))));
}

/// Forcing `--format openhands` on a file whose history holds no event reads nothing: an error
/// that says what the history holds, not a run of no step.
#[test]
fn a_history_without_events_is_an_error_naming_what_it_holds() {
    let swe_agent = r#"{"instance_id": "x", "history": [{"role": "system", "content": "s"}], "trajectory": []}"#;
    let e = parse(Path::new("x.traj"), swe_agent).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("`history` holds 1 item and none is an OpenHands event"), "{e}");
    assert!(e.contains("the first is an object with keys [content, role]"), "{e}");
    let empty = r#"{"instance_id": "x", "history": []}"#;
    assert_eq!(
        parse_ok(Path::new("x.json"), empty).runs[0].steps.len(),
        0,
        "an empty history is a run that did nothing"
    );
}

/// The resolver's mock output (MANIFEST: 2 lines, histories of 8 and 44 events, written without
/// ids, sources or `args`).
#[test]
fn corpus_resolver_output_runs_and_its_own_verdict_kept_as_metadata() {
    let p = parse_corpus("openhands-resolver/output.jsonl", resolver::parse);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let ids: Vec<&str> = p.runs.iter().map(|r| r.instance_id.as_str()).collect();
    assert_eq!(ids, ["neubig__pr-viewer-5", "neubig__pr-viewer-1"]);
    // 8 events: the task message, three actions with their observations, finish.
    let steps: Vec<usize> = p.runs.iter().map(|r| r.steps.len()).collect();
    assert_eq!(steps, [4, 22]);
    assert!(p.outcomes.is_empty(), "`success` is the resolver's own judgement, not a test outcome");
    let run = &p.runs[0];
    assert_eq!(run.format, Some(Format::OpenHandsResolver));
    assert_eq!(run.agent.as_deref(), Some("openhands-resolver"));
    assert_eq!(run.exit_status.as_deref(), Some("finished"));
    assert!((run.cost.unwrap_or(0.0) - 0.070713).abs() < 1e-9);
    assert_eq!(run.api_calls, Some(4));
    assert!(run.submission.as_deref().is_some_and(|s| s.starts_with("diff --git a/LICENSE b/LICENSE")));
    assert_eq!(run.steps[0].action, "touch LICENSE");
    assert_eq!(run.steps[0].observation, "\r\nroot@bcd3959393a1:/workspace # ");
    assert!(!run.steps[0].flags.error, "exit_code 0 beside `observation`");
    assert_eq!(run.steps[3].tool.as_deref(), Some("finish"));
    assert_eq!(run.history.iter().filter(|m| m.role == "user").count(), 1, "the first message is the task");
    let meta: Value = serde_json::from_str(run.metadata.as_deref().unwrap_or("{}")).unwrap_or_default();
    assert_eq!(meta["resolver"]["success"], Value::Bool(true));
    assert!(meta["resolver"]["result_explanation"].as_str().is_some_and(|t| t.contains("MIT License")));
    assert_eq!(p.tasks[0].instruction.as_deref().map(|i| i.contains("MIT license")), Some(true));
}

/// The runtime's event list (MANIFEST: 4 events: message, edit, edit, finish): the task, one
/// `oh_aci` edit that created the file (its command only in the model's tool call), and finish.
#[test]
fn corpus_event_list_basic_json() {
    let path = corpus_file("openhands-events/basic.json");
    let events: Vec<Value> = serde_json::from_str(&read(&path.to_string_lossy())).unwrap_or_default();
    assert_eq!(events.len(), 4);
    let p = parse_events(&path, events).unwrap_or_else(|e| panic!("{e}"));
    let run = &p.runs[0];
    assert_eq!(run.instance_id, "basic");
    assert_eq!(run.model.as_deref(), Some("claude-3-5-sonnet-20241022"));
    assert_eq!(run.exit_status.as_deref(), Some("finished"));
    assert_eq!(run.steps.len(), 2);
    assert_eq!(run.steps[0].action, "create /workspace/game_2048.py");
    assert!(run.steps[0].observation.starts_with("--- /workspace/game_2048.py"));
    assert_eq!(run.steps[1].tool.as_deref(), Some("finish"));
    let edits = tool_edits(run);
    assert_eq!(edits.len(), 1);
    assert_eq!((edits[0].kind, edits[0].status), (EditKind::Create, EditStatus::Applied));
    assert!(edits[0].new_text.as_deref().is_some_and(|t| t.starts_with("import random\nimport keyboard\n")));
    assert_eq!(
        p.tasks[0].instruction.as_deref().map(|t| t.starts_with("Please create a simple 2048 game")),
        Some(true)
    );
}

/// Issue 42: a V1 conversation whose first action is never observed, then 50,000 actions each
/// observed at once. Each observation searched every action held behind the lost one (1.25 x 10^9
/// looks); by id it is one. Same steps in the order of the actions, the lost one first.
#[test]
fn v1_observations_behind_an_action_never_observed_find_their_action_by_id() {
    const N: usize = 50_000;
    let action = |id: &str| serde_json::json!({"kind": "ActionEvent", "id": id, "tool_name": "probe", "action": {"kind": "ProbeAction", "n": id}});
    let mut c = v1::Conversation::default();
    c.event(action("lost"));
    for i in 0..N {
        c.event(action(&format!("act_{i:026}")));
        c.event(serde_json::json!({"kind": "ObservationEvent", "action_id": format!("act_{i:026}"),
            "observation": {"kind": "ProbeObservation", "content": format!("seen {i}")}}));
    }
    let p = c.finish(Path::new("conv-1/events"), None);
    let steps = &p.runs[0].steps;
    assert_eq!(steps.len(), N + 1);
    assert_eq!((steps[0].tool.as_deref(), steps[0].observation.as_str()), (Some("probe"), ""));
    assert!(steps[1..].iter().enumerate().all(|(i, s)| s.observation == format!("seen {i}")));
}
