//! SWE-agent 0.x's model, from the run folder's `args.yaml`.
//!
//! A 0.x trajectory does not name its model. `run.py` writes its arguments beside the
//! trajectories, in the run folder (`trajectories/<user>/<model>__<data>__<config>__t-0.00__
//! p-0.95__c-2.00__install-1/args.yaml`), the model under `agent.model.model_name`. The folder's
//! name (and so `all_preds.jsonl`'s `model_name_or_path`) begins with the model but is not it.
//!
//! The file is read beside the trajectory when the trajectory names no model; a change to it
//! alone does not make the trajectory be read again.

use serde::Deserialize;
use std::path::Path;

/// `args.yaml` is a few kilobytes; anything larger is not one.
const MAX_ARGS: u64 = 1 << 20;

#[derive(Deserialize)]
struct Args {
    agent: Agent,
}

#[derive(Deserialize)]
struct Agent {
    model: Model,
}

#[derive(Deserialize)]
struct Model {
    model_name: Option<String>,
}

/// The model of the run folder the trajectory is in, when it has an `args.yaml` that names one.
pub fn model_beside(trajectory: &Path) -> Option<String> {
    let path = trajectory.parent()?.join("args.yaml");
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_ARGS {
        return None;
    }
    model_name(&std::fs::read_to_string(&path).ok()?)
}

/// `agent.model.model_name` of an `args.yaml`.
pub fn model_name(yaml: &str) -> Option<String> {
    let args: Args = serde_saphyr::from_str(yaml).ok()?;
    args.agent.model.model_name.map(|m| m.trim().to_string()).filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARGS: &str = "\
actions:
  apply_patch_locally: false
  open_pr: false
agent:
  config:
    _commands:
    - arguments:
        line_number:
          description: the line number to move the window to
          required: false
          type: integer
      code: 'goto() {\n    echo x\n}'
      name: goto
    config_file: config/default.yaml
  model:
    host_url: localhost:11434
    model_name: gpt4
    per_instance_cost_limit: 3.0
    replay_path: null
    temperature: 0.0
    top_p: 0.95
    total_cost_limit: 0.0
environment:
  data_path: princeton-nlp/SWE-bench_Lite
  image_name: sweagent/swe-agent:latest
  split: dev
instance_filter: .*
skip_existing: true
suffix: ''
";

    #[test]
    fn the_model_of_a_run_folder() {
        assert_eq!(model_name(ARGS).as_deref(), Some("gpt4"));
        assert_eq!(model_name("agent:\n  model:\n    model_name: ''\n"), None);
        assert_eq!(model_name("agent: [1, 2]\n"), None);
        assert_eq!(model_name(": : :\n\t- ["), None);
    }

    #[test]
    fn read_beside_the_trajectory() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let traj = dir.path().join("a__b-1.traj");
        assert_eq!(model_beside(&traj), None);
        std::fs::write(dir.path().join("args.yaml"), ARGS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model_beside(&traj).as_deref(), Some("gpt4"));
    }
}
