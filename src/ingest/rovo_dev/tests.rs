use super::*;
use crate::model::{EditKind, EditStatus};
use std::path::PathBuf;

const SUBMISSION: &str = "fixtures/layouts/swe-polybench/evaluation/PBVerified/20251208_atlassian-rovo-dev";

fn transcript(id: &str) -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SUBMISSION).join("trajs").join(id);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, text)
}

fn read(id: &str) -> Parsed {
    let (path, text) = transcript(id);
    assert!(is_transcript(&text), "{id} is told by its content");
    parse(&path, &text).unwrap_or_else(|e| panic!("{e}"))
}

const RULE_LINE: &str = "========================================================================================================================";

#[test]
fn a_transcript_is_told_by_its_banner_or_its_first_section() {
    let (_, text) = transcript("google__gson-2024");
    assert!(is_transcript(&text));
    assert!(is_transcript(&format!("{RULE_LINE}\nAGENT:\nhello\n")), "no phase banner");
    assert!(!is_transcript("=====\nPHASE 1\n=====\nUSER PROMPT:\nFix it.\n"), "short rules are not Rovo Dev's");
    assert!(!is_transcript(&format!("{RULE_LINE}\nSome heading\n")), "a rule then no section header");
    assert!(!is_transcript("# aider chat started at 2024-01-01\n"));
}

#[test]
fn calls_with_their_returns_are_steps_and_agent_text_their_thought() {
    let parsed = read("microsoft__vscode-131416");
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let run = &parsed.runs[0];
    assert_eq!(run.instance_id, "microsoft__vscode-131416");
    assert_eq!(run.format, Some(Format::RovoDev));
    assert_eq!(run.agent.as_deref(), Some("rovo-dev"));
    // The task is the problem statement; the harness's example before it is history.
    let task = parsed.tasks[0].instruction.as_deref().unwrap_or_default();
    assert!(task.starts_with("Terminal tabs lose their custom title"), "{task}");
    assert!(!task.contains("Do not stop"), "the harness's instructions are not the task");
    assert_eq!(run.history[0].role, "assistant");
    assert!(run.history[0].content.starts_with("I will start by viewing the workspace"));
    let actions: Vec<&str> = run.steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "",
            "grep 'persistentProcessId|fixedDimensions' '**/terminal/**/*.ts'",
            "open_files src/vs/platform/terminal/node/ptyService.ts src/vs/platform/terminal/common/terminal.ts",
            "inspect_code src/vs/platform/terminal/node/ptyService.ts",
            "find_and_replace_code src/vs/platform/terminal/node/ptyService.ts",
            "find_and_replace_code src/vs/platform/terminal/common/terminal.ts",
            "cd /workspace && grep -n \"ISerializedTerminalState\" -A 8 src/vs/platform/terminal/common/terminal.ts",
            "create_file src/vs/platform/terminal/test/node/titleState.test.ts",
            "delete_file src/vs/platform/terminal/test/node/titleState.test.ts",
            "",
            "user prompt",
            "",
        ]
    );
    // Agent text followed by more agent text is a message; the text just before a call is its thought.
    assert!(run.steps[0].thought.starts_with("Starting to look into"), "{}", run.steps[0].thought);
    assert!(run.steps[1].thought.contains("STEP 1: EXPLORE THE WORKSPACE"), "{}", run.steps[1].thought);
    assert_eq!(run.steps[1].tool.as_deref(), Some("grep"));
    assert!(run.steps[1].observation.starts_with("src/vs/platform/terminal/common/terminal.ts:212:"));
    // The file tools' Python lists read as their text, every string.
    let opened = &run.steps[2].observation;
    assert!(opened.contains("  80 \tasync serializeTerminalState(ids: number[]): Promise<string> {\n"), "{opened}");
    assert!(opened.contains("Successfully opened src/vs/platform/terminal/common/terminal.ts:\n"), "{opened}");
    assert!(!opened.contains("\\n"), "escapes decoded: {opened}");
    // A transcript's cut answers are not output the agent saw clipped.
    assert!(run.steps.iter().all(|s| !s.flags.output_clipped));
    assert!(run.steps[6].thought.starts_with("Those imports are not in this file"), "{}", run.steps[6].thought);
    // The later phase is kept with the step it starts at.
    let meta: Value = serde_json::from_str(run.metadata.as_deref().unwrap_or("{}")).unwrap_or_default();
    assert_eq!(meta["rovo_dev"]["phases"], json!([{"phase": 2, "step": 10}]));
    assert!(run.steps[10].observation.starts_with("If you have fully completed the task"));
}

#[test]
fn edits_come_from_the_arguments_and_apply_as_the_answer_says() {
    let run = &read("microsoft__vscode-131416").runs[0];
    let edits: Vec<(Option<usize>, &str, EditKind, EditStatus)> =
        run.edits.iter().map(|e| (e.step, e.path.as_str(), e.kind, e.status)).collect();
    let test_file = "src/vs/platform/terminal/test/node/titleState.test.ts";
    assert_eq!(
        edits,
        [
            (Some(4), "src/vs/platform/terminal/node/ptyService.ts", EditKind::StrReplace, EditStatus::Applied),
            (Some(5), "src/vs/platform/terminal/common/terminal.ts", EditKind::StrReplace, EditStatus::RefusedByTool),
            (Some(7), test_file, EditKind::Create, EditStatus::Applied),
            (Some(8), test_file, EditKind::Delete, EditStatus::Applied),
        ]
    );
    // The double-quoted YAML with a `\` continuation is the text replaced, whole.
    let first = &run.edits[0];
    assert_eq!(
        first.new_text.as_deref(),
        Some(
            "\t\t\tpersistentProcessId: id,\n\t\t\ttitle: persistentProcess.title,\n\t\t\ticon: persistentProcess.icon,"
        )
    );
    assert!(first.diff.as_deref().is_some_and(|d| d.contains("+\t\t\ttitle: persistentProcess.title,")));
    // A single-quoted folded string: blank lines are the newlines, '' a quote.
    assert_eq!(
        run.edits[1].old_text.as_deref(),
        Some(
            "import { Disposable } from 'vs/base/common/lifecycle';\nimport { ILogService } from 'vs/platform/log/common/log';"
        )
    );
    assert!(run.steps[5].flags.edit_rejected);
    // The file created is the file's content; the deletion is a delete edit, with no new text (as
    // a Codex patch's `*** Delete File`: `edit_blocks`).
    assert!(run.edits[2].new_text.as_deref().is_some_and(|t| t.starts_with("import * as assert from 'assert';\n")));
    assert_eq!(run.edits[3].new_text.as_deref(), None);
}

#[test]
fn a_java_run_reads_its_views_edits_and_plain_scalar_commands() {
    let run = &read("google__gson-2024").runs[0];
    let actions: Vec<&str> = run.steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "open_files gson/src/main/java/com/google/gson/stream/JsonWriter.java",
            "find_and_replace_code gson/src/main/java/com/google/gson/stream/JsonWriter.java",
            // A plain scalar folded over two lines is one command.
            "cd /workspace && mvn -q -pl gson test -Dtest=JsonWriterTest 2>&1 | tail -20",
            "",
        ]
    );
    assert!(run.steps[2].flags.error, "command not found reads as an error");
    assert_eq!(run.edits.len(), 1);
    // Continuations join with one space, the escaped one kept: the indentation is the code's.
    assert_eq!(
        run.edits[0].new_text.as_deref(),
        Some(
            "  public JsonWriter value(float value) throws IOException {\n    return value((Number) Float.valueOf(value));\n  }\n\n  public JsonWriter value(double value) throws IOException {"
        )
    );
    assert!(run.metadata.is_none(), "one phase: nothing to keep");
}

#[test]
fn python_lists_decode_their_escapes_and_keep_a_cut_tail() {
    assert_eq!(python_strings(r#"['a\nb', "c'd"]"#).as_deref(), Some("a\nb\nc'd"));
    assert_eq!(python_strings(r"['tab\there \x41\u00e9 \\ end']").as_deref(), Some("tab\there Aé \\ end"));
    assert_eq!(
        python_strings(r"['cut short\n  12 export const x...").as_deref(),
        Some("cut short\n  12 export const x...")
    );
    assert_eq!(python_strings(r"['bad \xZZ escape']").as_deref(), Some(r"bad \xZZ escape"));
    assert_eq!(python_strings("[1, 2]"), None, "not a list of strings");
    assert_eq!(python_strings("plain"), None);
    assert_eq!(answer_text("```\n['x\\ny']\n```"), "x\ny");
    assert_eq!(answer_text("```\nplain answer...\n```"), "plain answer...");
}

#[test]
fn bad_sections_are_warned_of_and_the_rest_is_read() {
    let text = format!(
        "{RULE_LINE}\nUSER PROMPT:\nFix <problem_statement>the bug</problem_statement>\n\
         {RULE_LINE}\nTOOL CALL (bash)\ncommand: \"unclosed\n\n\
         {RULE_LINE}\nTOOL RETURN (bash)\n```\nok\n```\n\
         {RULE_LINE}\nTOOL RETURN (grep)\n```\norphan\n```\n\
         {RULE_LINE}\nNOT A HEADER\ntext\n\
         {RULE_LINE}\nTOOL CALL (grep)\ncontent_pattern: x\n\n"
    );
    let parsed = parse(Path::new("trajs/x__y-1"), &text).unwrap_or_else(|e| panic!("{e}"));
    let run = &parsed.runs[0];
    assert_eq!(parsed.tasks[0].instruction.as_deref(), Some("the bug"));
    assert_eq!(run.steps.len(), 2, "{:?}", run.steps);
    assert_eq!(run.steps[0].tool.as_deref(), Some("bash"));
    assert_eq!(run.steps[0].observation, "ok");
    assert_eq!(run.steps[1].action, "grep x", "a call without a return is still a step");
    let warnings = parsed.warnings.join("\n");
    assert!(warnings.contains("trajs/x__y-1: line 5: the arguments of bash are not YAML"), "{warnings}");
    assert!(warnings.contains("line 14: a return of grep with no call"), "{warnings}");
    assert!(warnings.contains("line 19: a section without a known header (\"NOT A HEADER\")"), "{warnings}");
}

#[test]
fn a_transcript_with_nothing_in_it_is_an_error() {
    let text = format!("{RULE_LINE}\nAGENT:\nonly the example\n");
    let err = parse(Path::new("trajs/x__y-1"), &text).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("no prompt and no step"), "{err}");
}
