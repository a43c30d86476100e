//! nebius/SWE-agent-trajectories: one row per SWE-agent run. `trajectory` is a list of
//! `{role, text, system_prompt, mask, cutoff_date}`: the first message is `system` with its
//! prompt in `system_prompt` and `text` null (only it has a `cutoff_date`), then the task as
//! `user`; each `ai` message (`mask` true) is a reply in SWE-agent's thought-action format
//! (some start with `DISCUSSION`), answered by the next `user` message, the command's output
//! followed by the prompt's `(Open file: X)`, `(Current directory: Y)` and `bash-$`. The last
//! reply (usually `submit`) has no answer. `target` is the verdict, `generated_patch` the
//! submission (it begins with a newline), `eval_logs` the evaluation's log.

use super::row::{RowError, RowRun, kind_of, optional_str, required_list, required_str, verdict};
use crate::analysis::edits;
use crate::ingest::swe_agent::chat::{self, ChatTurn};
use crate::model::{Message, Run};
use serde_json::{Map, Value};

pub fn row(row: &Value) -> Result<RowRun, RowError> {
    let instance_id = required_str(row, "instance_id")?.to_string();
    let model = optional_str(row, "model_name")?.map(str::to_string);
    let resolved = verdict(row, "target")?;
    let messages = required_list(row, "trajectory")?;
    let patch = optional_str(row, "generated_patch")?.filter(|p| !p.trim().is_empty()).map(str::to_string);
    let exit_status = optional_str(row, "exit_status")?.filter(|s| !s.trim().is_empty()).map(str::to_string);
    let log = optional_str(row, "eval_logs")?.filter(|s| !s.is_empty()).map(str::to_string);

    let mut history = Vec::new();
    let mut turns: Vec<ChatTurn> = Vec::new();
    let mut cutoff = None;
    for (i, m) in messages.iter().enumerate() {
        let column = || format!("trajectory[{i}]");
        if !m.is_object() {
            return Err(RowError::new(&column(), format!("expected a message, found {}", kind_of(m))));
        }
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let text = m.get("text").and_then(Value::as_str).unwrap_or_default();
        cutoff = cutoff.or_else(|| m.get("cutoff_date").and_then(Value::as_str).map(str::to_string));
        match role {
            "system" => {
                let prompt = m.get("system_prompt").and_then(Value::as_str).unwrap_or(text);
                history.push(Message { role: "system".into(), content: prompt.to_string(), extra: None });
            }
            "ai" => turns.push(ChatTurn { reply: text.to_string(), ..ChatTurn::default() }),
            "user" => match turns.last_mut() {
                // The answer to the reply before it (a second answer is added to the first).
                Some(t) if t.observation.is_empty() && t.open_file.is_none() && t.working_dir.is_none() => {
                    let (observation, open_file, working_dir) = chat::split_state(text);
                    *t = ChatTurn { observation, open_file, working_dir, ..std::mem::take(t) };
                }
                Some(t) => {
                    t.observation.push('\n');
                    t.observation.push_str(text);
                }
                // Before the first reply: the task.
                None => history.push(Message { role: "user".into(), content: text.to_string(), extra: None }),
            },
            other => return Err(RowError::new(&format!("{}.role", column()), format!("unknown role {other:?}"))),
        }
    }
    let mut run = Run {
        instance_id,
        format_version: Some("0.x".into()),
        agent: Some("swe-agent".into()),
        model,
        exit_status,
        submission: patch,
        history,
        ..Run::default()
    };
    if let Some(p) = &run.submission {
        run.edits.extend(edits::final_patch_edits(p));
    }
    chat::build(&mut run, turns);
    let mut extra = Map::new();
    if let Some(c) = cutoff {
        extra.insert("cutoff_date".into(), c.into());
    }
    Ok(RowRun { run, resolved, log, extra, ..RowRun::default() })
}
