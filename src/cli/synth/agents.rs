//! Synthetic files of the agents beyond the SWE-bench family, each one file grown to the size
//! asked (a session of that many steps), written a record at a time: an OpenHands V1
//! `events.jsonl`, a Codex rollout, a Claude Code transcript, an OpenClaw session, an aider chat
//! history, a Moatless `trajectory.json`, an Agentless stage's `loc_outputs.jsonl`, and a
//! Terminal-Bench trial whose `agent.cast` is the large file. A step in four edits a file (in
//! the agent's own way: `apply_patch`, `Edit`, SEARCH/REPLACE, a diff), the rest run commands.

use super::random::{Generated, Rng, WORDS, code_lines, prose};
use serde_json::{Value, json};
use std::io::{BufWriter, Write};
use std::path::Path;

/// The agent formats `bench gen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    OpenHandsV1,
    Codex,
    ClaudeCode,
    OpenClaw,
    Aider,
    Moatless,
    Agentless,
    TerminalBench,
}

impl Agent {
    pub const ALL: [Agent; 8] = [
        Agent::OpenHandsV1,
        Agent::Codex,
        Agent::ClaudeCode,
        Agent::OpenClaw,
        Agent::Aider,
        Agent::Moatless,
        Agent::Agentless,
        Agent::TerminalBench,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Agent::OpenHandsV1 => "openhands-v1",
            Agent::Codex => "codex",
            Agent::ClaudeCode => "claude-code",
            Agent::OpenClaw => "openclaw",
            Agent::Aider => "aider",
            Agent::Moatless => "moatless",
            Agent::Agentless => "agentless",
            Agent::TerminalBench => "terminal-bench",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// A file written a piece at a time, counting its bytes.
struct Out {
    f: BufWriter<std::fs::File>,
    bytes: u64,
}

impl Out {
    fn create(path: &Path) -> std::io::Result<Out> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Out { f: BufWriter::new(std::fs::File::create(path)?), bytes: 0 })
    }
    fn text(&mut self, s: &str) -> std::io::Result<()> {
        self.bytes += s.len() as u64;
        self.f.write_all(s.as_bytes())
    }
    fn line(&mut self, v: &Value) -> std::io::Result<()> {
        self.text(&format!("{v}\n"))
    }
    fn finish(mut self) -> std::io::Result<u64> {
        self.f.flush()?;
        Ok(self.bytes)
    }
}

/// One step's work: a command and its output, or an edit of a file (old and new lines).
enum Work {
    Run { command: String, output: String },
    Edit { path: String, old: String, new: String },
}

fn work(rng: &mut Rng, i: usize) -> Work {
    if i % 4 == 3 {
        let path = format!("src/{}_{}.py", rng.pick(WORDS), rng.pick(WORDS));
        let strip =
            |s: String| s.lines().map(|l| l.split_once('\t').map_or(l, |(_, t)| t).to_string() + "\n").collect();
        return Work::Edit { path, old: strip(code_lines(rng, 3, 1)), new: strip(code_lines(rng, 4, 1)) };
    }
    let command = match rng.below(3) {
        0 => format!("grep -rn '{}' src | head -40", rng.pick(WORDS)),
        1 => format!("cat src/{}.py", rng.pick(WORDS)),
        _ => "python -m pytest tests -q".to_string(),
    };
    let lines = 20 + rng.below(80) as usize;
    Work::Run { command, output: code_lines(rng, lines, 1) }
}

/// An `apply_patch` envelope replacing `old` by `new` in `path`.
fn apply_patch(path: &str, old: &str, new: &str) -> String {
    let minus: String = old.lines().map(|l| format!("-{l}\n")).collect();
    let plus: String = new.lines().map(|l| format!("+{l}\n")).collect();
    format!("*** Begin Patch\n*** Update File: {path}\n@@\n{minus}{plus}*** End Patch\n")
}

/// Write one file (or trial folder) of `agent` into `dir`, grown to `total_bytes`.
pub fn generate(dir: &Path, agent: Agent, total_bytes: u64) -> std::io::Result<Generated> {
    let mut rng = Rng(0x5eed_a9e7 ^ agent as u64);
    let (bytes, steps) = match agent {
        Agent::OpenHandsV1 => openhands_v1(&dir.join("conversation/events.jsonl"), &mut rng, total_bytes)?,
        Agent::Codex => codex(&dir.join("rollout-2025-11-17T15-30-28-synthetic.jsonl"), &mut rng, total_bytes)?,
        Agent::ClaudeCode => claude_code(&dir.join("synthetic-session.jsonl"), &mut rng, total_bytes)?,
        Agent::OpenClaw => openclaw(&dir.join("synthetic-openclaw-session.jsonl"), &mut rng, total_bytes)?,
        Agent::Aider => aider(&dir.join("repo/.aider.chat.history.md"), &mut rng, total_bytes)?,
        Agent::Moatless => moatless(&dir.join("synth__moatless-1/trajectory.json"), &mut rng, total_bytes)?,
        Agent::Agentless => agentless(&dir.join("edit_location_samples"), &mut rng, total_bytes)?,
        Agent::TerminalBench => terminal_bench(dir, &mut rng, total_bytes)?,
    };
    Ok(Generated { files: 1, bytes, steps })
}

fn openhands_v1(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    let ts = "2026-01-10T10:00:00.000000";
    let ev = |id: String, source: &str, kind: &str| json!({"id": id, "timestamp": ts, "source": source, "kind": kind});
    let mut e = ev("00000000-0000-4000-8000-000000000000".into(), "agent", "SystemPromptEvent");
    e["system_prompt"] = json!({"type": "text", "text": "You are OpenHands agent."});
    out.line(&e)?;
    let mut e = ev("00000000-0000-4000-8000-000000000001".into(), "user", "MessageEvent");
    e["llm_message"] = json!({"role": "user", "content": [{"type": "text", "text": prose(rng, 80)}]});
    out.line(&e)?;
    let mut steps = 0;
    while out.bytes < total {
        let (id, obs_id) =
            (format!("a{steps:07x}-0000-4000-8000-000000000000"), format!("b{steps:07x}-0000-4000-8000-000000000000"));
        let mut action = ev(id.clone(), "agent", "ActionEvent");
        action["thought"] = json!([{"type": "text", "text": prose(rng, 30)}]);
        let mut obs = ev(obs_id, "environment", "ObservationEvent");
        obs["action_id"] = Value::from(id);
        match work(rng, steps) {
            Work::Run { command, output } => {
                action["tool_name"] = json!("terminal");
                action["action"] = json!({"command": command, "is_input": false, "kind": "TerminalAction"});
                obs["observation"] = json!({"content": [{"type": "text", "text": output}], "is_error": false, "exit_code": 0, "kind": "TerminalObservation"});
            }
            Work::Edit { path, old, new } => {
                action["tool_name"] = json!("file_editor");
                action["action"] = json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new, "kind": "FileEditorAction"});
                obs["observation"] = json!({"content": [{"type": "text", "text": format!("The file {path} has been edited.")}], "is_error": false, "kind": "FileEditorObservation"});
            }
        }
        out.line(&action)?;
        out.line(&obs)?;
        steps += 1;
        if steps % 10 == 0 {
            let mut s =
                ev(format!("c{steps:07x}-0000-4000-8000-000000000000"), "environment", "ConversationStateUpdateEvent");
            s["key"] = json!("stats");
            s["value"] = json!({"usage_to_metrics": {"default": {"model_name": "synthetic/model-v1", "accumulated_cost": steps as f64 / 100.0, "accumulated_token_usage": {"prompt_tokens": steps * 3000, "completion_tokens": steps * 90}}}});
            out.line(&s)?;
        }
    }
    Ok((out.finish()?, steps))
}

fn codex(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    let rec =
        |kind: &str, payload: Value| json!({"timestamp": "2025-11-17T21:30:28.664Z", "type": kind, "payload": payload});
    out.line(&rec("session_meta", json!({"id": "019a93b9-0000-7600-98ff-000000000001", "cwd": "/repo", "originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": null, "source": "cli", "model_provider": "openai"})))?;
    out.line(&rec(
        "turn_context",
        json!({"cwd": "/repo", "approval_policy": "never", "model": "gpt-5.1-codex", "effort": "high"}),
    ))?;
    out.line(&rec("event_msg", json!({"type": "user_message", "message": prose(rng, 60), "images": []})))?;
    let mut steps = 0;
    while out.bytes < total {
        let call_id = format!("call_{steps:08}");
        out.line(&rec("response_item", json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": prose(rng, 12)}], "content": null})))?;
        let (command, output) = match work(rng, steps) {
            Work::Run { command, output } => (command, output),
            Work::Edit { path, old, new } => (
                format!("apply_patch <<'PATCH'\n{}PATCH", apply_patch(&path, &old, &new)),
                "Success. Updated the following files:\nM x\n".into(),
            ),
        };
        let args = json!({"command": ["bash", "-lc", command], "workdir": "/repo"}).to_string();
        out.line(&rec(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": args, "call_id": call_id}),
        ))?;
        let result = json!({"output": output, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}).to_string();
        out.line(&rec("response_item", json!({"type": "function_call_output", "call_id": call_id, "output": result})))?;
        out.line(&rec("event_msg", json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": steps * 3000, "output_tokens": steps * 90}}})))?;
        steps += 1;
    }
    Ok((out.finish()?, steps))
}

fn claude_code(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    let record = |kind: &str, uuid: String, parent: Option<String>, message: Value| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/repo", "sessionId": "synthetic-session",
               "version": "2.0.14", "gitBranch": "main", "type": kind, "message": message, "uuid": uuid, "timestamp": "2025-10-14T09:12:00.000Z"})
    };
    let mut parent = "u-prompt".to_string();
    out.line(&record("user", parent.clone(), None, json!({"role": "user", "content": prose(rng, 60)})))?;
    let mut steps = 0;
    while out.bytes < total {
        let tool_id = format!("toolu_{steps:08}");
        let (name, input, result) = match work(rng, steps) {
            Work::Run { command, output } => ("Bash", json!({"command": command, "description": "run"}), output),
            Work::Edit { path, old, new } => {
                let result = format!("The file {path} has been updated.");
                ("Edit", json!({"file_path": path, "old_string": old, "new_string": new}), result)
            }
        };
        let usage = json!({"input_tokens": 4, "cache_read_input_tokens": 14000, "output_tokens": 120});
        let content = json!([{"type": "text", "text": prose(rng, 25)}, {"type": "tool_use", "id": tool_id, "name": name, "input": input}]);
        let asst = format!("a-{steps}");
        out.line(&record("assistant", asst.clone(), Some(parent), json!({"id": format!("msg_{steps}"), "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": content, "usage": usage})))?;
        parent = format!("r-{steps}");
        let answer = json!({"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": result, "is_error": false}]});
        out.line(&record("user", parent.clone(), Some(asst), answer))?;
        steps += 1;
    }
    Ok((out.finish()?, steps))
}

fn openclaw(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    out.line(&json!({"type": "session", "version": 3, "id": "synthetic-openclaw", "timestamp": "2026-02-11T10:16:00.114Z", "cwd": "/app"}))?;
    let mut parent = "00000001".to_string();
    let mut next = 1u64;
    let mut rec = |out: &mut Out, message: Value| -> std::io::Result<()> {
        next += 1;
        let id = format!("{next:08x}");
        out.line(&json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-02-11T10:16:03.000Z", "message": message}))?;
        parent = id;
        Ok(())
    };
    rec(&mut out, json!({"role": "user", "content": [{"type": "text", "text": prose(rng, 60)}]}))?;
    let mut steps = 0;
    while out.bytes < total {
        let call_id = format!("call_{steps}");
        let (name, args, result) = match work(rng, steps) {
            Work::Run { command, output } => ("exec", json!({"command": command}), output),
            Work::Edit { path, old, new } => (
                "edit",
                json!({"path": path, "edits": [{"oldText": old, "newText": new}]}),
                "Successfully replaced 1 occurrence(s).".to_string(),
            ),
        };
        let usage = json!({"input": 4000, "output": 60, "cost": {"total": 0}});
        let content = json!([{"type": "thinking", "thinking": prose(rng, 25)}, {"type": "toolCall", "id": call_id, "name": name, "arguments": args}]);
        rec(
            &mut out,
            json!({"role": "assistant", "content": content, "model": "moonshotai/kimi-k2.5", "provider": "openrouter", "usage": usage, "stopReason": "toolUse"}),
        )?;
        rec(
            &mut out,
            json!({"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": [{"type": "text", "text": result}], "isError": false}),
        )?;
        steps += 1;
    }
    Ok((out.finish()?, steps))
}

fn aider(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    let mut steps = 0;
    while out.bytes < total {
        if steps % 20 == 0 {
            out.text(&format!("\n# aider chat started at 2025-10-{:02} 10:00:00\n\n> Aider v0.86.1  \n> Main model: synthetic/model-aider with diff edit format  \n> Git repo: .git with 120 files  \n\n", 1 + steps / 20 % 28))?;
        }
        out.text(&format!("#### {}  \n\n", prose(rng, 20)))?;
        match work(rng, steps) {
            Work::Run { command, output } => {
                let quoted: String = output.lines().take(30).map(|l| format!("> {l}  \n")).collect();
                out.text(&format!(
                    "{}\n\n> Running {command}  \n{quoted}> Tokens: 1.8k sent, 89 received.  \n\n",
                    prose(rng, 40)
                ))?;
            }
            Work::Edit { path, old, new } => {
                let block = format!("{path}\n```python\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n");
                out.text(&format!(
                    "{}\n\n{block}\n> Tokens: 2.1k sent, 140 received.  \n> Applied edit to {path}  \n\n",
                    prose(rng, 30)
                ))?;
            }
        }
        steps += 1;
    }
    Ok((out.finish()?, steps))
}

fn moatless(path: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(path)?;
    out.text("{\"name\": \"MoatlessTools\", \"transition_rules\": {\"global_params\": {\"model\": \"synthetic/model-moatless\"}}, \"workspace\": {}, \"initial_message\": ")?;
    out.text(&format!("{}, \"current_transition_id\": 0, \"transitions\": [", Value::from(prose(rng, 60))))?;
    let mut steps = 0;
    while out.bytes < total {
        let completion = json!({"model": "synthetic/model-moatless", "usage": {"completion_cost": 0.01, "prompt_tokens": 4000, "completion_tokens": 200}});
        let transition = match work(rng, steps) {
            Work::Run { command, output } => {
                json!({"id": steps, "name": "SearchCode", "properties": {"model": "synthetic/model-moatless"},
                "actions": [{"request": {"scratch_pad": prose(rng, 30), "search_requests": [{"query": command}]},
                             "response": {"trigger": "did_search", "output": {"message": output}}, "completion": completion}]})
            }
            Work::Edit { path, old, new } => {
                let minus: String = old.lines().map(|l| format!("-{l}\n")).collect();
                let plus: String = new.lines().map(|l| format!("+{l}\n")).collect();
                let diff = format!("--- {path}\n+++ {path}\n@@ -1,3 +1,4 @@\n{minus}{plus}");
                json!({"id": steps, "name": "EditCode", "properties": {"file_path": path},
                    "actions": [{"request": {"content": format!("<replace>\n{new}</replace>")},
                                 "response": {"trigger": "finish", "output": {"message": format!("Applied the change to {path}."), "diff": diff}}, "completion": completion}]})
            }
        };
        out.text(if steps == 0 { "\n" } else { ",\n" })?;
        out.text(&transition.to_string())?;
        steps += 1;
    }
    out.text(&format!(
        "\n], \"info\": {}}}\n",
        json!({"instance_id": "synth__moatless-1", "status": "finished", "total_cost": steps as f64 / 100.0})
    ))?;
    Ok((out.finish()?, steps))
}

fn agentless(stage: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let mut out = Out::create(&stage.join("loc_outputs.jsonl"))?;
    let mut steps = 0;
    let mut instance = 0;
    while out.bytes < total {
        let files: Vec<String> = (0..3).map(|_| format!("src/{}_{}.py", rng.pick(WORDS), rng.pick(WORDS))).collect();
        let call = |rng: &mut Rng| json!({"prompt": format!("{}\n{}", prose(rng, 200), code_lines(rng, 150, 1)), "response": prose(rng, 60), "usage": {"prompt_tokens": 9000, "completion_tokens": 120}});
        let related: Value =
            files.iter().map(|f| (f.clone(), json!(["function: x"]))).collect::<serde_json::Map<_, _>>().into();
        let edit = json!({"prompt": prose(rng, 300), "response": [prose(rng, 40), prose(rng, 40)], "usage": {"prompt_tokens": 14000, "completion_tokens": 190}});
        out.line(&json!({"instance_id": format!("synth__agentless-{instance:06}"), "found_files": files, "file_traj": call(rng),
            "found_related_locs": related, "related_loc_traj": [call(rng)], "found_edit_locs": [related, related], "edit_loc_traj": edit}))?;
        steps += 4;
        instance += 1;
    }
    std::fs::write(
        stage.join("args.json"),
        json!({"model": "synthetic/model-agentless", "backend": "openai", "num_samples": 2}).to_string(),
    )?;
    Ok((out.finish()?, steps))
}

fn terminal_bench(dir: &Path, rng: &mut Rng, total: u64) -> std::io::Result<(u64, usize)> {
    let run = dir.join("2025-06-20__14-02-11");
    let trial = run.join("synth-task/synth-task.1-of-1.2025-06-20__14-02-11");
    let mut out = Out::create(&trial.join("sessions/agent.cast"))?;
    out.line(
        &json!({"version": 2, "width": 160, "height": 40, "timestamp": 1750453351, "env": {"SHELL": "/bin/bash"}}),
    )?;
    let prompt = "\u{1b}[?2004hroot@5d1c0a9e2f7b:/app# ";
    let mut t = 0.0f64;
    let mut event = |out: &mut Out, kind: &str, data: &str| -> std::io::Result<()> {
        t += 0.25;
        out.line(&json!([t, kind, data]))
    };
    event(&mut out, "o", prompt)?;
    let mut steps = 0;
    while out.bytes < total {
        let (command, output) = match work(rng, steps) {
            Work::Run { command, output } => (command, output),
            Work::Edit { path, old, new } => (format!("sed -i 's/{}/{}/' {path}", old.len(), new.len()), String::new()),
        };
        event(&mut out, "i", &format!("{command}\r"))?;
        let screen = output.replace('\n', "\r\n");
        event(&mut out, "o", &format!("{command}\r\n\u{1b}[?2004l\r{screen}"))?;
        event(&mut out, "o", prompt)?;
        steps += 1;
    }
    let results = json!({"id": "synthetic", "trial_name": "synth-task.1-of-1.2025-06-20__14-02-11", "task_id": "synth-task", "instruction": prose(rng, 40),
        "is_resolved": false, "failure_mode": "unset", "parser_results": {"test_a": "failed"}, "total_input_tokens": 1000, "total_output_tokens": 100});
    std::fs::write(trial.join("results.json"), results.to_string())?;
    std::fs::write(run.join("run_metadata.json"), json!({"run_id": "2025-06-20__14-02-11", "dataset_name": "synthetic", "agent_name": "terminus", "model_name": "synthetic/model-tb"}).to_string())?;
    Ok((out.finish()?, steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan::ingest::pipeline::{self, Options, Silent};

    /// Each file is read by its adapter (detected by content) with every step it was written
    /// with, and with no problem.
    #[test]
    fn every_agent_file_is_read_with_its_steps() {
        for agent in Agent::ALL {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let g = generate(&dir.path().join("in"), agent, 200_000).unwrap_or_else(|e| panic!("{e}"));
            assert!(g.bytes >= 200_000, "{agent:?}: {g:?}");
            let mut store = trajan::store::Store::open(&dir.path().join("t.db")).unwrap_or_else(|e| panic!("{e}"));
            let report = pipeline::ingest(&mut store, &[dir.path().join("in")], &Options::default(), &Silent);
            assert!(!report.has_problems(), "{agent:?}: {:?}", report.results);
            assert_eq!(report.totals().steps as usize, g.steps, "{agent:?}: {:?}", report.results);
        }
    }
}
