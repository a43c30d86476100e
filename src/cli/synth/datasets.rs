//! Synthetic shards of the published trajectory datasets (`bench gen --kind nebius|rebench|
//! smith|openswe|swegym|tb2|swezero|r2egym`): rows of each dataset's schema (`ingest::dataset::Kind::schema`), shaped as the
//! fixtures of `fixtures/datasets/` are (the public rows' nesting and oddities), with varied
//! text, many runs per instance, about one in five resolved. Written a row group (100 rows) at a
//! time into shards of about 64 MB, named as the Hub names them (`train-00000-of-NNNNN.parquet`;
//! SWE-smith's split by dialect), so memory holds one group.

use super::random::{Generated, Rng, WORDS, code_lines, prose};
use serde_json::{Value, json};
use std::path::Path;
use trajan::ingest::dataset::{Kind, parquet, shred};

const GROUP_ROWS: usize = 100;
const SHARD_BYTES: u64 = 64 << 20;

pub fn parse(kind: &str) -> Option<Kind> {
    match kind {
        "nebius" => Some(Kind::Nebius),
        "rebench" => Some(Kind::Rebench),
        "smith" => Some(Kind::Smith),
        "openswe" => Some(Kind::OpenSwe),
        "swegym" => Some(Kind::SweGym),
        "tb2" => Some(Kind::TerminalBench),
        "swezero" => Some(Kind::SweZero),
        "r2egym" => Some(Kind::R2eGym),
        _ => None,
    }
}

pub fn generate(dir: &Path, kind: Kind, total_bytes: u64) -> std::io::Result<Generated> {
    std::fs::create_dir_all(dir)?;
    let schema = parquet::schema(kind).map_err(std::io::Error::other)?;
    let mut g = Generated::default();
    let mut seed = 1u64;
    let mut names = Vec::new();
    while g.bytes < total_bytes {
        let split = match kind {
            Kind::Smith => ["tool", "xml", "ticks"][names.len() % 3],
            Kind::SweGym => "train.raw",
            _ => "train",
        };
        let tmp = dir.join(format!(".{split}-{:05}.parquet.tmp", names.len()));
        let mut shard = shred::Shard::create(&tmp, schema.clone()).map_err(std::io::Error::other)?;
        while shard.written() < SHARD_BYTES.min(total_bytes - g.bytes) {
            let mut rows = Vec::with_capacity(GROUP_ROWS);
            for _ in 0..GROUP_ROWS {
                let (row, steps) = row(kind, split, seed);
                rows.push(row);
                g.steps += steps;
                seed += 1;
            }
            shard.group(&rows).map_err(std::io::Error::other)?;
        }
        g.bytes += shard.close().map_err(std::io::Error::other)?;
        g.files += 1;
        names.push((tmp, split));
    }
    let n = names.len();
    for (i, (tmp, split)) in names.into_iter().enumerate() {
        std::fs::rename(&tmp, dir.join(format!("{split}-{i:05}-of-{n:05}.parquet")))?;
    }
    Ok(g)
}

/// One row and its step count.
fn row(kind: Kind, split: &str, seed: u64) -> (Value, usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let instance = format!("synth__{}-{}", rng.pick(WORDS), seed / 20);
    let resolved = rng.below(5) == 0;
    let file = format!("src/{}_{}.py", rng.pick(WORDS), rng.pick(WORDS));
    let patch = format!(
        "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -10,1 +10,1 @@\n-    return {}\n+    return {}\n",
        rng.pick(WORDS),
        rng.pick(WORDS)
    );
    match kind {
        Kind::Nebius => nebius(&mut rng, &instance, resolved, &file, &patch),
        Kind::Rebench => rebench(&mut rng, seed, &instance, resolved, &file, &patch),
        Kind::Smith => smith(&mut rng, split, &instance, resolved, &file, &patch),
        Kind::OpenSwe => openswe(&mut rng, seed, &instance, &file),
        Kind::SweGym => swegym(&mut rng, seed, &instance, resolved, &file, &patch),
        Kind::TerminalBench => terminal_bench(&mut rng, seed, resolved),
        Kind::SweZero => swezero(&mut rng, seed, &file, &patch),
        Kind::R2eGym => r2egym(&mut rng, seed, &file),
    }
}

/// The task of a group of 20 rows (`seed / 20`): its instance and its issue, the same for each
/// of its runs (as in the datasets, where one issue is run many times).
fn task(seed: u64) -> (String, String) {
    let group = seed / 20;
    let mut rng = Rng(group.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    (format!("synth__{}-{group}", rng.pick(WORDS)), prose(&mut rng, 80))
}

fn foot(open: &str) -> String {
    format!("\n(Open file: {open})\n(Current directory: /repo)\nbash-$")
}

fn nebius(rng: &mut Rng, instance: &str, resolved: bool, file: &str, patch: &str) -> (Value, usize) {
    let m = |role: &str, text: Option<String>| json!({"cutoff_date": null, "mask": role == "ai", "role": role, "system_prompt": null, "text": text});
    let mut traj = vec![
        json!({"cutoff_date": "01.01.2023", "mask": false, "role": "system", "system_prompt": "SETTING: You are an autonomous programmer, and you're working directly in the command line with a special interface.", "text": null}),
        m(
            "user",
            Some(format!(
                "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n{}\n{}",
                prose(rng, 60),
                foot("n/a")
            )),
        ),
    ];
    let steps = 10 + rng.below(30) as usize;
    for i in 0..steps {
        let (action, out, open) = match rng.below(4) {
            0 => (format!("open {file} {}", 1 + rng.below(200)), code_lines(rng, 60, 1), format!("/repo/{file}")),
            1 => (
                format!("edit {}:{}\n    return {}\nend_of_edit", 10 + i, 10 + i, rng.pick(WORDS)),
                format!("File updated.\n{}", code_lines(rng, 20, 1)),
                format!("/repo/{file}"),
            ),
            2 => (
                "python -m pytest tests -q".to_string(),
                format!("{}\n1 failed, 3 passed", code_lines(rng, 15, 1)),
                "n/a".to_string(),
            ),
            _ => (format!("search_dir \"{}\"", rng.pick(WORDS)), code_lines(rng, 25, 1), "n/a".to_string()),
        };
        traj.push(m("ai", Some(format!("{}\n```\n{action}\n```", prose(rng, 40)))));
        traj.push(m("user", Some(format!("{out}{}", foot(&open)))));
    }
    traj.push(m("ai", Some("Let's submit.\n```\nsubmit\n```".into())));
    let model = ["swe-agent-llama-70b", "swe-agent-llama-8b", "swe-agent-qwen-72b"][rng.below(3) as usize];
    let row = json!({
        "instance_id": instance, "model_name": model,
        "target": resolved, "trajectory": traj, "exit_status": "submitted", "generated_patch": format!("\n{patch}"),
        "eval_logs": format!("___TESTS_SECTION___\n{}\n___TESTS_SECTION_END___\n", code_lines(rng, 10, 1)),
    });
    (row, steps + 1)
}

fn call(id: String, name: &str, args: Value) -> Value {
    json!({"function": {"arguments": args.to_string(), "name": name}, "id": id, "type": "function"})
}

/// An OpenHands conversation of OpenAI chat messages with tool calls (`execute_bash`,
/// `str_replace_editor`), every message carrying every field: SWE-rebench's, Open-SWE-Traces'
/// and SWE-Gym's (with `function_call` and each call's `index`, `gym`).
fn openhands_chat(rng: &mut Rng, seed: u64, file: &str, gym: bool) -> (Vec<Value>, usize) {
    let m = |role: &str, content: String, tool_calls: Option<Value>, name: Option<&str>, id: Option<String>| {
        let mut v =
            json!({"content": content, "name": name, "role": role, "tool_call_id": id, "tool_calls": tool_calls});
        if gym {
            v["function_call"] = Value::Null;
        }
        v
    };
    let mut traj = vec![
        m(
            "system",
            "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.".into(),
            None,
            None,
            None,
        ),
        m("user", format!("<issue_description>\n{}\n</issue_description>", prose(rng, 80)), None, None, None),
    ];
    let steps = 20 + rng.below(40) as usize;
    for i in 0..steps {
        let id = format!("call_{seed}_{i}");
        let (name, args, out) = if rng.below(3) == 0 {
            let old = format!("    return {}", rng.pick(WORDS));
            let new = format!("    return {}", rng.pick(WORDS));
            (
                "str_replace_editor",
                json!({"command": "str_replace", "path": format!("/testbed/{file}"), "old_str": old, "new_str": new}),
                format!("The file /testbed/{file} has been edited.\n{}", code_lines(rng, 12, 1)),
            )
        } else {
            (
                "execute_bash",
                json!({"command": format!("cd /testbed && grep -rn {} src", rng.pick(WORDS))}),
                format!("{}\n[The command completed with exit code 0.]", code_lines(rng, 30, 1)),
            )
        };
        let mut c = call(id.clone(), name, args);
        let out = if gym {
            c["index"] = Value::Null;
            format!("OBSERVATION:\n{out}")
        } else {
            out
        };
        traj.push(m("assistant", prose(rng, 25), Some(json!([c])), None, None));
        traj.push(m("tool", out, None, Some(name), Some(id)));
    }
    (traj, steps)
}

fn rebench(rng: &mut Rng, seed: u64, instance: &str, resolved: bool, file: &str, patch: &str) -> (Value, usize) {
    let (traj, steps) = openhands_chat(rng, seed, file, false);
    let row = json!({
        "trajectory_id": format!("chatcmpl-{seed:032x}"), "instance_id": instance, "repo": "synth/repo", "trajectory": traj,
        "tools": [{"function": {"description": "Execute a bash command", "name": "execute_bash", "parameters": "{\"type\": \"object\"}"}, "type": "function"}],
        "model_patch": patch, "exit_status": "submit", "resolved": i64::from(resolved),
        "gen_tests_correct": if rng.below(2) == 0 { Value::Null } else { json!(1.0) }, "pred_passes_gen_tests": Value::Null,
    });
    (row, steps)
}

fn smith(rng: &mut Rng, split: &str, instance: &str, resolved: bool, file: &str, patch: &str) -> (Value, usize) {
    let mut msgs = vec![
        json!({"role": "system", "content": "You are a helpful assistant that can interact with a computer to solve tasks."}),
        json!({"role": "user", "content": format!("<pr_description>\n{}\n</pr_description>", prose(rng, 80))}),
    ];
    let steps = 20 + rng.below(40) as usize;
    for i in 0..steps {
        let thought = prose(rng, 30);
        let command = format!("grep -rn {} /testbed/{file}", rng.pick(WORDS));
        let out = format!("OBSERVATION:\n{}", code_lines(rng, 30, 1));
        match split {
            "tool" => {
                let id = format!("toolu_{i:04}");
                msgs.push(json!({"role": "assistant", "content": thought, "thought": thought, "action": command, "agent": "main", "message_type": "action", "tool_calls": [call(id.clone(), "bash", json!({"command": command}))]}));
                msgs.push(json!({"role": "tool", "content": [{"type": "text", "text": out}], "agent": "main", "message_type": "observation", "tool_call_ids": [id]}));
            }
            "xml" => {
                msgs.push(json!({"role": "assistant", "content": format!("{thought}\n\n<function=bash>\n<parameter=command>{command}</parameter>\n</function>")}));
                msgs.push(json!({"role": "user", "content": out}));
            }
            _ => {
                msgs.push(json!({"role": "assistant", "content": format!("{thought}\n\n```\n{command}\n```")}));
                msgs.push(json!({"role": "user", "content": out}));
            }
        }
    }
    let row = json!({
        "messages": Value::Array(msgs).to_string(), "instance_id": instance, "resolved": resolved,
        "model": "claude-3-7-sonnet-20250219", "traj_id": format!("{instance}.{:08x}", rng.below(1 << 32)), "patch": patch,
    });
    (row, steps)
}

fn openswe(rng: &mut Rng, seed: u64, instance: &str, file: &str) -> (Value, usize) {
    let (traj, steps) = openhands_chat(rng, seed, file, false);
    // 1 resolved, 0 not, -1 not judged.
    let resolved = [1, 0, 0, 0, -1][rng.below(5) as usize];
    let teacher = ["MiniMax-M2.5", "Qwen3.5-122B-A10B"][rng.below(2) as usize];
    let language =
        ["python", "go", "typescript", "javascript", "rust", "java", "php", "c", "cpp"][rng.below(9) as usize];
    let row = json!({
        "instance_id": instance, "repo": "synth/repo", "license": "MIT", "language": language,
        "trajectory_id": format!("{:08x}-0000-4000-8000-{seed:012x}", rng.below(1 << 32)), "messages": traj,
        "tools": ["{\"type\": \"function\", \"function\": {\"name\": \"execute_bash\"}}"], "resolved": resolved,
        "metadata": {"category": "bug-fix", "reference_patch": {"patch": "diff --git a/x b/x\n"}, "teacher_model": {"name": teacher, "enable_thinking": teacher.starts_with("MiniMax"), "reasoning_effort": "high"}},
        "hf_dataset_name": "nebius/SWE-rebench-V2",
    });
    (row, steps)
}

fn swegym(rng: &mut Rng, seed: u64, instance: &str, resolved: bool, file: &str, patch: &str) -> (Value, usize) {
    let (traj, steps) = openhands_chat(rng, seed, file, true);
    let model = ["gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022"][rng.below(2) as usize];
    let row = json!({
        "instance_id": instance, "run_id": format!("{model}_maxiter_30_N_v2.1-no-hint-train-t04-run_{}", 1 + rng.below(3)),
        "resolved": resolved, "messages": traj,
        "tools": [{"function": {"description": "Execute a bash command", "name": "execute_bash", "parameters": "{\"type\": \"object\"}"}, "type": "function"}],
        "test_result": {"git_patch": patch},
    });
    (row, steps)
}

/// A SWE-Zero row: SWE-rebench's OpenHands conversation on its task's issue; one row in four
/// written as the card's first revision had them (no `name`, no `tool_call_id`).
fn swezero(rng: &mut Rng, seed: u64, file: &str, patch: &str) -> (Value, usize) {
    let (instance, issue) = task(seed);
    let (mut traj, steps) = openhands_chat(rng, seed, file, false);
    traj[1]["content"] = Value::String(format!("<issue_description>\n{issue}\n</issue_description>"));
    if rng.below(4) == 0 {
        for m in &mut traj {
            m["name"] = Value::Null;
            m["tool_call_id"] = Value::Null;
        }
    }
    let source =
        ["SWE-Gym", "SWE-Gym-Raw", "R2E-Gym-Subset", "SWE-Fixer-Train-110K", "SWE-rebench"][rng.below(5) as usize];
    let row = json!({
        "instance_id": instance, "repo": "synth/repo", "license": "MIT", "trajectory_id": format!("{seed:032x}"),
        "trajectory": traj, "model_patch": patch, "dataset": source,
    });
    (row, steps)
}

/// An R2E-Gym row: `messages` alone, the issue in `<github_issue>`, calls as `<function=...>`
/// text answered by `Execution output of [NAME]:` user messages, `finish` last.
fn r2egym(rng: &mut Rng, seed: u64, file: &str) -> (Value, usize) {
    let (_, issue) = task(seed);
    let title = issue.split(' ').take(6).collect::<Vec<_>>().join(" ");
    let m = |role: &str, content: String| json!({"content": content, "role": role});
    let mut msgs = vec![
        m("system", "You are a programming agent who is provided a github issue and repository bash environment and is tasked to solve certain tasks (e.g., file localization, testcase generation, code repair and editing etc) to resolve the issue.".into()),
        m("user", format!("I have uploaded a python code repository in the /testbed directory.\n\nNow consider the following Github issue:\n\n<github_issue>\n[ISSUE]\n**Title:** {title}\n\n{issue}\n[/ISSUE]\n</github_issue>\n\nCan you help me implement the necessary changes to the repository to fix the <github_issue>?")),
    ];
    let steps = 20 + rng.below(20) as usize;
    for _ in 0..steps {
        let (call, out) = if rng.below(3) == 0 {
            (
                format!(
                    "<function=file_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/{file}</parameter>\n<parameter=old_str>    return {}</parameter>\n<parameter=new_str>    return {}</parameter>\n</function>",
                    rng.pick(WORDS),
                    rng.pick(WORDS)
                ),
                format!(
                    "Execution output of [file_editor]:\nThe file /testbed/{file} has been edited. Here's the result of running `cat -n` on a snippet of /testbed/{file}:\n{}",
                    code_lines(rng, 12, 1)
                ),
            )
        } else {
            (
                format!(
                    "<function=execute_bash>\n<parameter=command>grep -rn {} /testbed/src</parameter>\n</function>",
                    rng.pick(WORDS)
                ),
                format!("Exit code: 0\nExecution output of [execute_bash]:\n{}", code_lines(rng, 30, 1)),
            )
        };
        msgs.push(m("assistant", format!("{}\n\n{call}", prose(rng, 25))));
        msgs.push(m("user", out));
    }
    msgs.push(m(
        "assistant",
        "The fix is in place.\n\n<function=finish>\n<parameter=command>submit</parameter>\n</function>".into(),
    ));
    (json!({"messages": msgs}), steps + 1)
}

/// A Terminal-Bench 2 trial as a row: terminus-2's ATIF trajectory (as the Harbor fixtures of
/// `fixtures/layouts/harbor/terminal-bench-2.0` are: keystrokes as `bash_command` calls, the
/// terminal's screen as each answer) as a JSON string, its reward, cost and CTRF test report.
fn terminal_bench(rng: &mut Rng, seed: u64, resolved: bool) -> (Value, usize) {
    let task = format!("{}-{}", rng.pick(WORDS), rng.pick(WORDS));
    let trial = format!("{task}__{:07}", seed % 10_000_000);
    let mut steps = vec![
        json!({"step_id": 1, "source": "system", "message": "You are Terminus, a terminal agent."}),
        json!({"step_id": 2, "source": "user", "message": format!("Task Description:\n{}\n", prose(rng, 60))}),
    ];
    let n = 20 + rng.below(30) as usize;
    for i in 0..n {
        let keys = match rng.below(4) {
            0 => format!("cat /app/{}.py\n", rng.pick(WORDS)),
            1 => format!("grep -rn {} /app | head -40\n", rng.pick(WORDS)),
            2 => "python -m pytest -q /app/tests\n".to_string(),
            _ => format!("sed -i 's/{}/{}/' /app/main.py\n", rng.pick(WORDS), rng.pick(WORDS)),
        };
        let id = format!("call_{i}_1");
        steps.push(json!({
            "step_id": i + 3, "source": "agent",
            "message": format!("Analysis: {}\nPlan: {}", prose(rng, 20), prose(rng, 12)),
            "tool_calls": [{"tool_call_id": id, "function_name": "bash_command", "arguments": {"keystrokes": keys, "duration": 1.0}}],
            "observation": {"results": [{"source_call_id": id, "content": format!("root@{seed:x}:/app# {keys}{}", code_lines(rng, 25, 1))}]},
            "metrics": {"prompt_tokens": 1500 + 200 * i, "completion_tokens": 90},
        }));
    }
    let trajectory = json!({
        "schema_version": "ATIF-v1.5", "session_id": format!("{seed:08x}-0000-4000-8000-000000000000"),
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "anthropic/claude-sonnet-4-5-20250929"},
        "steps": steps, "final_metrics": {"total_steps": n + 2},
    });
    let outcome = if resolved { "passed" } else { "failed" };
    let report = json!({"results": {"tool": {"name": "pytest"}, "summary": {"tests": 2, "passed": 1 + u32::from(resolved), "failed": u32::from(!resolved)},
        "tests": [{"name": "tests/test_outputs.py::test_exists", "status": "passed", "duration": 0.01},
                  {"name": "tests/test_outputs.py::test_content", "status": outcome, "duration": 0.02}]}});
    let row = json!({
        "task_name": task, "trial_name": trial, "agent_name": "terminus-2", "model_name": "anthropic/claude-sonnet-4-5-20250929",
        "trajectory": trajectory.to_string(), "reward": if resolved { 1.0 } else { 0.0 }, "cost_usd": 0.01 * (1 + rng.below(20)) as f64,
        "n_input_tokens": 30_000 + rng.below(100_000) as i64, "n_output_tokens": 2_000 + rng.below(5_000) as i64,
        "exception_type": if rng.below(10) == 0 { json!("AgentTimeoutError") } else { Value::Null }, "test_report": report.to_string(),
    });
    (row, n)
}
