//! SWE-agent 0.x's model, from the run folder's `args.yaml`.
//!
//! A 0.x trajectory does not name its model. `run.py` writes its arguments beside the
//! trajectories, in the run folder (`trajectories/<user>/<model>__<data>__<config>__t-0.00__
//! p-0.95__c-2.00__install-1/args.yaml`), the model under `agent.model.model_name`. The folder's
//! name (and so `all_preds.jsonl`'s `model_name_or_path`) begins with the model but is not it.
//!
//! The file is read beside the trajectory when the trajectory names no model; a change to it
//! alone does not make the trajectory be read again.
//!
//! A submission folder (SWE-bench/experiments, Multi-SWE-bench: `<date>_<agent>_<model>/trajs/
//! <id>.traj`) has no `args.yaml`; when it has no predictions file either (whose
//! `model_name_or_path` joins the run), the model is the submission folder's name without its
//! date and agent (`20240825_SWE-agent_gpt-4o-2024-05-13`), else what follows the `+` of
//! `metadata.yaml`'s display name (`SWE-agent + GPT-4o`).

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

/// The model a submission folder names, for a trajectory under its `trajs/` folder (at most
/// two levels down: `trajs/<id>.traj`, `trajs/<id>/<id>.traj`), when it has no predictions file.
pub fn model_of_submission(trajectory: &Path) -> Option<String> {
    let trajs = trajectory.ancestors().skip(1).take(2).find(|a| a.file_name().is_some_and(|n| n == "trajs"))?;
    let sub = trajs.parent()?;
    if ["all_preds.jsonl", "preds.json"].iter().any(|p| sub.join(p).exists()) {
        return None;
    }
    let folder = sub.file_name().and_then(|n| n.to_str()).and_then(model_of_folder_name);
    folder.or_else(|| {
        let path = sub.join("metadata.yaml");
        let meta = std::fs::metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_ARGS {
            return None;
        }
        display_model(&std::fs::read_to_string(&path).ok()?)
    })
}

/// `20240825_SWE-agent_gpt-4o-2024-05-13` -> `gpt-4o-2024-05-13`: a date of 8 digits, the agent,
/// the model.
fn model_of_folder_name(name: &str) -> Option<String> {
    let (date, rest) = name.split_once('_')?;
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (_agent, model) = rest.split_once('_')?;
    Some(model.trim().to_string()).filter(|m| !m.is_empty())
}

#[derive(Deserialize)]
struct Metadata {
    name: Option<String>,
}

/// What follows the `+` of `metadata.yaml`'s `name` (`SWE-agent + GPT-4o`).
fn display_model(yaml: &str) -> Option<String> {
    let meta: Metadata = serde_saphyr::from_str(yaml).ok()?;
    let name = meta.name?;
    let (_, model) = name.rsplit_once('+')?;
    Some(model.trim().to_string()).filter(|m| !m.is_empty())
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
    fn a_submission_names_its_model_in_its_folder_name_or_metadata() {
        assert_eq!(model_of_folder_name("20240825_SWE-agent_gpt-4o-2024-05-13").as_deref(), Some("gpt-4o-2024-05-13"));
        assert_eq!(model_of_folder_name("sweagent_gpt4"), None);
        assert_eq!(
            display_model("name: SWE-agent + Claude 3.5 Sonnet\noss: true\n").as_deref(),
            Some("Claude 3.5 Sonnet")
        );
        assert_eq!(display_model("name: MyAgent\n"), None);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let sub = dir.path().join("sub");
        let traj = sub.join("trajs/a__b-1.traj");
        std::fs::create_dir_all(sub.join("trajs")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model_of_submission(&traj), None);
        std::fs::write(sub.join("metadata.yaml"), "name: SWE-agent + gpt-4o\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model_of_submission(&traj).as_deref(), Some("gpt-4o"));
        std::fs::write(sub.join("all_preds.jsonl"), "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(model_of_submission(&traj), None, "the predictions name the model");
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
