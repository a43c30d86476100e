//! Synthetic trajectories for benchmarks: SWE-agent 1.1 files (whose `query` grows with the
//! square of the step count, as real ones do) and mini-swe-agent v1 files, generated
//! deterministically from a seed, written one file at a time so memory stays flat; one file of
//! each agent beyond the SWE-bench family grown to the size asked (`agents`).

pub mod agents;
pub mod datasets;
pub mod edits;
mod failed;
mod random;

pub use failed::failed_run;
pub use random::Generated;
use random::{Rng, WORDS, code_lines, prose};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    SweAgent11,
    Mini,
    /// Alternate files of the two kinds (SWE-agent files are larger, so most bytes are theirs).
    Mixed,
    /// One OpenHands evaluation `output.jsonl` of the whole size (a streamed file).
    OpenHands,
    /// One file of an agent beyond the SWE-bench family, of the whole size (`agents`).
    Agent(agents::Agent),
    /// Parquet shards of a published dataset's schema (`datasets`).
    Dataset(trajan::ingest::dataset::Kind),
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "swe-agent" | "swe-agent-1.1" => Some(Kind::SweAgent11),
            "mini" | "mini-swe-agent" => Some(Kind::Mini),
            "mixed" => Some(Kind::Mixed),
            "openhands" => Some(Kind::OpenHands),
            other => datasets::parse(other).map(Kind::Dataset).or_else(|| agents::Agent::parse(other).map(Kind::Agent)),
        }
    }
}

/// One SWE-agent 1.1 trajectory with `steps` steps.
pub fn swe_agent_11(seed: u64, instance_id: &str, steps: usize) -> Value {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let system = json!({"role": "system", "content": "You are a helpful assistant that can interact with a computer to solve tasks.", "agent": "main", "message_type": "system_prompt"});
    let task = format!(
        "<uploaded_files>\n/testbed\n</uploaded_files>\nConsider the following PR description:\n\n<pr_description>\n{}\n</pr_description>",
        prose(&mut rng, 80)
    );
    let user = json!({"role": "user", "content": [{"type": "text", "text": task}], "agent": "main", "message_type": "observation"});
    let mut messages = vec![system, user];
    let mut trajectory = Vec::with_capacity(steps);
    for i in 0..steps {
        let file = format!("/testbed/src/{}_{}.py", rng.pick(WORDS), rng.pick(WORDS));
        let words = 30 + rng.below(60) as usize;
        let thought = prose(&mut rng, words);
        let (action, observation) = match rng.below(4) {
            0 => {
                let start = 1 + rng.below(400) as usize;
                (
                    format!("str_replace_editor view {file}  --view_range {start} {}", start + 40),
                    format!("Here's the result of running `cat -n` on {file}:\n{}", code_lines(&mut rng, 40, start)),
                )
            }
            1 => {
                let old = code_lines(&mut rng, 3, 1);
                let new = code_lines(&mut rng, 4, 1);
                (
                    format!(
                        "str_replace_editor str_replace {file}   --old_str '{}' --new_str '{}'",
                        old.replace('\'', ""),
                        new.replace('\'', "")
                    ),
                    format!(
                        "The file {file} has been edited. Here's the result of running `cat -n` on a snippet of {file}:\n{}Review the changes and make sure they are as expected.",
                        code_lines(&mut rng, 12, 10)
                    ),
                )
            }
            2 => (
                "cd /testbed && python -m pytest tests -q -x".to_string(),
                format!("{}\n{} passed, 1 failed in 2.31s", code_lines(&mut rng, 25, 1), rng.below(90)),
            ),
            _ => (format!("cd /testbed && grep -rn '{}' src | head -30", rng.pick(WORDS)), code_lines(&mut rng, 30, 1)),
        };
        let call_id = format!("call_{seed}_{i}");
        let args = json!({"command": action.clone()}).to_string();
        messages.push(json!({"role": "assistant", "content": thought, "thought": thought, "action": action, "agent": "main",
            "tool_calls": [{"index": 0, "function": {"arguments": args, "name": "bash"}, "id": call_id, "type": "function"}],
            "message_type": "action"}));
        messages.push(
            json!({"role": "tool", "content": [{"type": "text", "text": format!("OBSERVATION:\n{observation}")}],
            "agent": "main", "message_type": "observation", "tool_call_ids": [call_id]}),
        );
        trajectory.push(json!({
            "action": action, "observation": observation, "response": thought, "thought": thought,
            "execution_time": (rng.below(3000) as f64) / 1000.0,
            "state": {"working_dir": "/testbed", "open_file": file},
            "query": messages[..messages.len() - 1].to_vec(),
            "extra_info": {},
        }));
    }
    json!({
        "trajectory": trajectory,
        "history": messages,
        "info": {
            "swe_agent_version": "1.1.0",
            "submission": format!("diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n-{}\n+{}\n", prose(&mut rng, 5), prose(&mut rng, 5)),
            "exit_status": if seed.is_multiple_of(3) { "submitted (exit_cost)" } else { "submitted" },
            "model_stats": {"instance_cost": (rng.below(300) as f64) / 100.0, "tokens_sent": rng.below(900_000), "tokens_received": rng.below(20_000), "api_calls": steps},
        },
        "replay_config": json!({"agent": {"model": {"name": "synthetic/model-a"}}, "problem_statement": {"id": instance_id}}).to_string(),
        "environment": instance_id,
    })
}

/// One mini-swe-agent v1 trajectory with `steps` assistant turns.
pub fn mini(seed: u64, instance_id: &str, steps: usize) -> Value {
    let mut rng = Rng(seed.wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1);
    let mut messages = vec![
        json!({"role": "system", "content": "You are a helpful assistant that can interact multiple times with a computer shell to solve programming tasks."}),
        json!({"role": "user", "content": format!("<pr_description>\nConsider the following PR description:\n{}\n</pr_description>", prose(&mut rng, 80))}),
    ];
    for _ in 0..steps {
        let command = match rng.below(3) {
            0 => format!("cat src/{}.py | head -120", rng.pick(WORDS)),
            1 => format!("sed -i 's/{}/{}/' src/{}.py", rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS)),
            _ => "python -m pytest tests -q".to_string(),
        };
        let words = 30 + rng.below(50) as usize;
        let thought = prose(&mut rng, words);
        messages.push(json!({"role": "assistant", "content": format!("THOUGHT: {thought}\n\n```bash\n{command}\n```"),
            "extra": {"response": {"usage": {"prompt_tokens": rng.below(50_000), "completion_tokens": rng.below(800)}}}}));
        let lines = 20 + rng.below(100) as usize;
        messages.push(json!({"role": "user", "content": format!("<returncode>0</returncode>\n<output>\n{}</output>", code_lines(&mut rng, lines, 1))}));
    }
    json!({
        "info": {"exit_status": "Submitted", "submission": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n",
                 "model_stats": {"instance_cost": (rng.below(200) as f64) / 100.0, "api_calls": steps}, "mini_version": "1.15.0",
                 "config": {"model": {"model_name": "synthetic/model-b"}}},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": instance_id,
    })
}

/// One OpenHands evaluation instance (a line of `output.jsonl`) with `steps` actions.
pub fn openhands(seed: u64, instance_id: &str, steps: usize) -> Value {
    let mut rng = Rng(seed.wrapping_mul(0x94d0_49bb_1331_11eb) | 1);
    let mut history =
        vec![json!({"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands agent."}})];
    for i in 0..steps {
        let id = 2 * i as u64 + 1;
        let command = format!("grep -rn '{}' src | head -40", rng.pick(WORDS));
        let words = 20 + rng.below(40) as usize;
        history.push(json!({"id": id, "timestamp": "2025-04-30T16:45:43.619026", "source": "agent", "action": "run",
            "message": format!("Running command: {command}"),
            "args": {"command": command, "thought": prose(&mut rng, words)}}));
        let lines = 20 + rng.below(80) as usize;
        history.push(json!({"id": id + 1, "source": "agent", "observation": "run", "cause": id,
            "content": code_lines(&mut rng, lines, 1), "extras": {"metadata": {"exit_code": 0}}}));
    }
    json!({
        "instance_id": instance_id,
        "instruction": prose(&mut rng, 80),
        "history": history,
        "test_result": {"git_patch": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n"},
        "metrics": {"accumulated_cost": (rng.below(300) as f64) / 100.0},
        "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "synthetic/model-c"}},
        "error": null,
    })
}

/// Write synthetic files into `dir` until `total_bytes` are written.
pub fn generate(dir: &Path, kind: Kind, total_bytes: u64) -> std::io::Result<Generated> {
    std::fs::create_dir_all(dir)?;
    if let Kind::Agent(agent) = kind {
        return agents::generate(dir, agent, total_bytes);
    }
    if let Kind::Dataset(dataset) = kind {
        return datasets::generate(dir, dataset, total_bytes);
    }
    let mut g = Generated::default();
    let mut seed = 1u64;
    if kind == Kind::OpenHands {
        let path = dir.join("output.jsonl");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        while g.bytes < total_bytes {
            let steps = 20 + Rng(seed | 1).below(60) as usize;
            let line = openhands(seed, &format!("synth__oh-{seed:06}"), steps).to_string();
            f.write_all(line.as_bytes())?;
            f.write_all(b"\n")?;
            g.bytes += line.len() as u64 + 1;
            g.steps += steps;
            seed += 1;
        }
        f.flush()?;
        g.files = 1;
        return Ok(g);
    }
    while g.bytes < total_bytes {
        let use_swe = match kind {
            Kind::SweAgent11 => true,
            Kind::Mini | Kind::OpenHands | Kind::Agent(_) | Kind::Dataset(_) => false,
            Kind::Mixed => seed % 2 == 1,
        };
        let mut rng = Rng(seed | 1);
        let (path, doc, steps): (PathBuf, Value, usize) = if use_swe {
            let id = format!("synth__swe-{seed:06}");
            let steps = 20 + rng.below(60) as usize;
            (dir.join(format!("{id}.traj")), swe_agent_11(seed, &id, steps), steps)
        } else {
            let id = format!("synth__mini-{seed:06}");
            let steps = 30 + rng.below(90) as usize;
            (dir.join(format!("{id}.traj.json")), mini(seed, &id, steps), steps)
        };
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        serde_json::to_writer(&mut f, &doc)?;
        f.flush()?;
        g.bytes += std::fs::metadata(&path)?.len();
        g.files += 1;
        g.steps += steps;
        seed += 1;
    }
    Ok(g)
}

/// One mini-swe-agent v1 trajectory file of `steps` turns, each about `step_bytes` long (its
/// observation code lines), written a message at a time (a 200 MB file is never held): `info`
/// first, as mini-swe-agent writes it. Each thought begins `Step N:`, for timing what a screen
/// shows.
pub fn long_mini_file(path: &Path, steps: usize, step_bytes: usize) -> std::io::Result<u64> {
    let mut rng = Rng(0x5eed_0f1e);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let info = json!({"exit_status": "Submitted", "submission": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n",
        "model_stats": {"instance_cost": 1.5, "api_calls": steps}, "mini_version": "1.15.0",
        "config": {"model": {"model_name": "synthetic/model-b"}}});
    write!(f, "{{\"info\": {info}, \"messages\": [")?;
    let task =
        format!("<pr_description>\nConsider the following PR description:\n{}\n</pr_description>", prose(&mut rng, 80));
    write!(
        f,
        "{}, {}",
        json!({"role": "system", "content": "You are a helpful assistant."}),
        json!({"role": "user", "content": task})
    )?;
    for i in 0..steps {
        let command = match rng.below(3) {
            0 => format!("cat src/{}.py", rng.pick(WORDS)),
            1 => format!("sed -i 's/{}/{}/' src/{}.py", rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS)),
            _ => "python -m pytest tests -q".to_string(),
        };
        let words = 30 + rng.below(30) as usize;
        let thought = format!("Step {i}: {}", prose(&mut rng, words));
        let assistant = json!({"role": "assistant", "content": format!("THOUGHT: {thought}\n\n```bash\n{command}\n```"),
            "extra": {"response": {"usage": {"prompt_tokens": 3000 + i, "completion_tokens": 150}}}});
        let lines = step_bytes / 48;
        let user = json!({"role": "user", "content": format!("<returncode>0</returncode>\n<output>\n{}</output>", code_lines(&mut rng, lines, 1))});
        write!(f, ",\n{assistant},\n{user}")?;
    }
    write!(f, "\n], \"trajectory_format\": \"mini-swe-agent-1\", \"instance_id\": \"synth__open-1\"}}\n")?;
    f.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

/// One SWE-agent 1.1 trajectory file of `steps` steps, each about `step_bytes` long over its
/// `trajectory` entry and its two `history` messages, written a step at a time: `trajectory`
/// first, then `history`, `info` and `replay_config`, in the order SWE-agent writes them (no
/// per-step `query`, as in the side-by-side benchmark's files). Each thought begins `Step N:`.
pub fn long_swe_file(path: &Path, steps: usize, step_bytes: usize) -> std::io::Result<u64> {
    let mut rng = Rng(0x5eed_0f1f);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut turns = Vec::with_capacity(steps);
    write!(f, "{{\"environment\": \"main\", \"trajectory\": [")?;
    let lines = step_bytes / 2 / 48;
    for i in 0..steps {
        let action = match rng.below(3) {
            0 => format!("cat src/{}.py", rng.pick(WORDS)),
            1 => format!("grep -rn {} src", rng.pick(WORDS)),
            _ => "python -m pytest tests -q".to_string(),
        };
        let words = 30 + rng.below(30) as usize;
        let thought = format!("Step {i}: {}", prose(&mut rng, words));
        let observation = code_lines(&mut rng, lines, 1);
        let step = json!({"action": action, "observation": observation, "response": thought, "thought": thought,
            "execution_time": 0.5, "state": {"working_dir": "/testbed", "open_file": "n/a"}, "extra_info": {}});
        write!(f, "{}\n{step}", if i == 0 { "" } else { "," })?;
        // The history holds the same turn again: kept short here, written after.
        turns.push((thought, action, rng.below(u64::MAX)));
    }
    let task = format!("<pr_description>\n{}\n</pr_description>", prose(&mut rng, 80));
    write!(
        f,
        "\n], \"history\": [{}, {}",
        json!({"role": "system", "content": "You are a helpful assistant.", "agent": "main", "message_type": "system_prompt"}),
        json!({"role": "user", "content": task, "agent": "main", "message_type": "observation"})
    )?;
    for (thought, action, seed) in turns {
        let mut r = Rng(seed | 1);
        let observation = code_lines(&mut r, lines, 1);
        let assistant = json!({"role": "assistant", "content": thought, "thought": thought, "action": action,
            "agent": "main", "message_type": "action"});
        let user = json!({"role": "user", "content": format!("OBSERVATION:\n{observation}"), "agent": "main",
            "message_type": "observation"});
        write!(f, ",\n{assistant},\n{user}")?;
    }
    let info = json!({"swe_agent_version": "1.1.0", "exit_status": "submitted",
        "submission": "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n",
        "model_stats": {"instance_cost": 1.5, "tokens_sent": 900_000, "tokens_received": 20_000, "api_calls": steps}});
    let replay =
        json!({"agent": {"model": {"name": "synthetic/model-a"}}, "problem_statement": {"id": "synth__open-2"}})
            .to_string();
    write!(f, "\n], \"info\": {info}, \"replay_config\": {}}}\n", Value::String(replay))?;
    f.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

/// A small run for filling a database with many runs (the TUI benchmark's 100,000).
pub fn small_run(seed: u64) -> trajan::model::Run {
    use trajan::model::{Format, Run, Step};
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    let repo = ["django", "sympy", "astropy", "pytest", "requests", "flask"][rng.below(6) as usize];
    let steps = (0..3)
        .map(|i| Step {
            thought: prose(&mut rng, 12),
            action: format!("grep -rn {} src", rng.pick(WORDS)),
            observation: code_lines(&mut rng, 5, i * 5 + 1),
            ..Step::default()
        })
        .collect();
    Run {
        instance_id: format!("{repo}__{repo}-{seed}"),
        format: Some(Format::SweAgent),
        agent: Some("swe-agent".into()),
        model: Some(["synthetic/model-a", "synthetic/model-b", "synthetic/model-c"][rng.below(3) as usize].into()),
        exit_status: Some(
            ["submitted", "exit_cost", "exit_context", "submitted (exit_format)"][rng.below(4) as usize].into(),
        ),
        cost: Some(rng.below(400) as f64 / 100.0),
        steps,
        ..Run::default()
    }
}

/// One very long run: `steps` steps whose observations are `obs_bytes` of code each (the TUI
/// benchmark's 20,000 steps of 100 KB). Every tenth step edits a file, every 25th fails.
pub fn long_run(steps: usize, obs_bytes: usize) -> trajan::model::Run {
    use trajan::analysis::edits::edit_from_texts;
    use trajan::model::{EditKind, EditStatus, Format, Run, Step, StepFlags};
    let mut rng = Rng(0x5eed);
    let mut pool = String::new();
    while pool.len() < obs_bytes * 4 {
        pool.push_str(&code_lines(&mut rng, 200, pool.len() / 40));
    }
    let mut run = Run {
        instance_id: "synth__long-run".into(),
        format: Some(Format::SweAgent),
        agent: Some("swe-agent".into()),
        model: Some("synthetic/model-long".into()),
        exit_status: Some("exit_context".into()),
        ..Run::default()
    };
    for i in 0..steps {
        let start = (i * 7919) % (pool.len() - obs_bytes);
        let mut observation = pool[start..start + obs_bytes].to_string();
        if i % 25 == 24 {
            observation.push_str("\nTraceback (most recent call last):\n  File \"x.py\"\nValueError: bad");
        }
        let edit = i % 10 == 9;
        let path = format!("/repo/src/{}_{}.py", WORDS[i % WORDS.len()], i % 37);
        if edit {
            // Every thousandth step rewrites a whole 2,000-line module: the long diffs.
            let lines = if i % 1000 == 999 { 2000 } else { 4 };
            let old = code_lines(&mut rng, lines, 10);
            let new = code_lines(&mut rng, lines + 1, 10);
            let status = if i % 30 == 29 { EditStatus::RefusedByTool } else { EditStatus::Applied };
            run.edits.push(edit_from_texts(
                Some(i),
                &path,
                EditKind::StrReplace,
                status,
                Some(old),
                Some(new),
                Vec::new(),
            ));
        }
        run.steps.push(Step {
            thought: prose(&mut rng, 40),
            action: if edit {
                format!("str_replace_editor str_replace {path} --old_str a --new_str b")
            } else {
                format!("cat {path}")
            },
            observation,
            tool: Some(if edit { "str_replace_editor" } else { "bash" }.into()),
            flags: StepFlags { edit, edit_rejected: edit && i % 30 == 29, error: i % 25 == 24, ..StepFlags::default() },
            ..Step::default()
        });
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajan::ingest::{Outcome, parse_file};

    fn parse(path: &Path) -> trajan::model::Parsed {
        let bytes = std::fs::read(path).unwrap_or_default();
        match parse_file(path, &bytes, None) {
            Ok(Outcome::Parsed { parsed, .. }) => parsed,
            Ok(Outcome::Skipped(skip)) => panic!("skipped: {}", skip.reason),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn generated_files_are_read_by_the_real_adapters() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let g = generate(dir.path(), Kind::Mixed, 4_000_000).unwrap_or_else(|e| panic!("{e}"));
        assert!(g.bytes >= 4_000_000 && g.files >= 2, "{g:?}");
        let mut steps = 0;
        for entry in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            let p = parse(&entry.path());
            steps += p.runs.iter().map(|r| r.steps.len()).sum::<usize>();
        }
        assert_eq!(steps, g.steps);
    }

    #[test]
    fn openhands_output_is_one_jsonl_file_of_the_size() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let g = generate(dir.path(), Kind::OpenHands, 300_000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.files, 1);
        let p = parse(&dir.path().join("output.jsonl"));
        assert!(p.runs.len() > 1);
        assert_eq!(p.runs.iter().map(|r| r.steps.len()).sum::<usize>(), g.steps);
    }

    #[test]
    fn long_runs_have_the_asked_shape() {
        let r = long_run(60, 1000);
        assert_eq!(r.steps.len(), 60);
        assert!(r.steps.iter().all(|s| s.observation.len() >= 1000));
        assert_eq!(r.edits.len(), 6);
        assert_eq!(r.steps.iter().filter(|s| s.flags.error).count(), 2);
        assert_ne!(small_run(1).instance_id, small_run(2).instance_id);
    }

    #[test]
    fn swe_agent_files_grow_with_the_square_of_steps() {
        let small = swe_agent_11(7, "a", 10).to_string().len();
        let large = swe_agent_11(7, "a", 40).to_string().len();
        assert!(large > small * 8, "{small} -> {large}");
    }
}
