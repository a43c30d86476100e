//! The agents beyond the SWE-bench family, ingested by the real binary: their real samples in
//! `fixtures/corpus/` (OpenHands V1, Codex CLI, aider, Moatless; the facts of its MANIFEST.md)
//! and, where no sample could be copied, fixtures that mimic the documented layouts in
//! `fixtures/formats/` (Claude Code, Agentless, Terminal-Bench 1, OpenClaw in a Harbor trial,
//! OpenHands V0 file-store sessions; see its README). And no file is silently dropped: every file
//! of every fixture folder is read, skipped with what it is, or failed with a reason.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common;
use crate::common::{fixtures, json, trajan};

struct Ingested {
    _dir: tempfile::TempDir,
    db: PathBuf,
    stderr: String,
    runs: Vec<Value>,
}

impl Ingested {
    /// The runs whose source lies under `rel` (a fixtures path).
    fn under(&self, rel: &str) -> Vec<&Value> {
        let root = fixtures().join(rel).to_string_lossy().into_owned();
        self.runs.iter().filter(|r| r["source"].as_str().is_some_and(|s| s.starts_with(&root))).collect()
    }

    fn one(&self, rel: &str) -> &Value {
        let found = self.under(rel);
        assert_eq!(found.len(), 1, "one run under {rel}: {found:#?}");
        found[0]
    }

    fn show(&self, run: &Value) -> Value {
        json(&self.db, &["show", &run["id"].to_string(), "--json"])
    }
}

/// Ingest fixtures folders (relative to `fixtures/`): exit 0, no error or warning.
fn ingest(rels: &[&str]) -> Ingested {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("agents.db");
    let mut args = vec!["ingest".to_string(), "--verbose".to_string()];
    args.extend(rels.iter().map(|r| fixtures().join(r).to_string_lossy().into_owned()));
    let out = trajan(&db, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error:") && !stderr.contains("warning:"), "{stderr}");
    let runs = match json(&db, &["runs", "--json"]) {
        Value::Array(r) => r,
        other => panic!("runs --json: {other}"),
    };
    Ingested { _dir: dir, db, stderr, runs }
}

fn steps_of(detail: &Value) -> Vec<&Value> {
    detail["step_list"].as_array().into_iter().flatten().collect()
}

fn edits_of(detail: &Value) -> Vec<&Value> {
    detail["edit_list"].as_array().into_iter().flatten().filter(|e| e["kind"] != "final_patch").collect()
}

fn flagged(step: &Value, flag: &str) -> bool {
    step["flags"].as_array().is_some_and(|f| f.iter().any(|x| x == flag))
}

/// MANIFEST: the V1 event log (2 actions and an observation whose action is not in the file; the
/// model only in `stats`) and the CLI's five conversations of one file per event.
#[test]
fn openhands_v1_conversations() {
    let c = ingest(&["corpus/openhands-v1"]);
    let goal = c.one("corpus/openhands-v1/sdk-goal");
    assert_eq!((goal["format"].as_str(), goal["steps"].as_i64()), (Some("openhands-v1"), Some(3)));
    assert_eq!(
        (goal["model"].as_str(), goal["exit_status"].as_str()),
        (Some("litellm_proxy/minimax-m2.7"), Some("running"))
    );
    let detail = c.show(goal);
    assert_eq!((detail["tokens_sent"].as_i64(), detail["tokens_received"].as_i64()), (Some(107_458), Some(1_347)));
    let steps = steps_of(&detail);
    // The orphan observation is a step of its own, with its command and its error.
    assert!(steps[1]["action"].as_str().is_some_and(|a| a.starts_with("SESSION_URL=")), "{:?}", steps[1]);
    // Both observations of a refused command and an exit code of 1.
    assert!(steps.iter().all(|s| flagged(s, "error")), "{steps:?}");
    let cli: BTreeMap<String, i64> = c
        .under("corpus/openhands-v1/cli-trajectories")
        .iter()
        .map(|r| (r["instance_id"].as_str().unwrap_or_default().to_string(), r["steps"].as_i64().unwrap_or(-1)))
        .collect();
    let expected: BTreeMap<String, i64> = [
        ("cli447_hi_followup_iterative_case_a", 6),
        ("cli447_hi_followup_iterative_case_b", 2),
        ("confirmation_mode", 6),
        ("creating_agent_plan", 3),
        ("simple_echo_hello_world", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(cli, expected);
    let finished = c.one("corpus/openhands-v1/cli-trajectories/cli447_hi_followup_iterative_case_a");
    assert_eq!(finished["exit_status"], "finished");
    assert_eq!(c.runs.len(), 6, "the state alone, the completion logs and the message lists are not runs");
    for skipped in [
        "v1_11_5_cli_default/base_state.json: an OpenHands V1 conversation's state",
        "llm-logs/",
        "fncall-llm-message.json: a list of chat messages with tool calls",
    ] {
        assert!(c.stderr.lines().any(|l| l.starts_with("skipped: ") && l.contains(skipped)), "{skipped}: {}", c.stderr);
    }
}

/// MANIFEST: the Codex rollout: 39 calls, 2 `apply_patch` hunks as applied edits with their
/// diffs, the last token count, the model of `turn_context`.
#[test]
fn codex_rollout() {
    let c = ingest(&["corpus/codex-cli"]);
    let run = c.one("corpus/codex-cli");
    assert_eq!(
        (run["format"].as_str(), run["steps"].as_i64(), run["edits"].as_i64()),
        (Some("codex-cli"), Some(39), Some(2))
    );
    assert_eq!((run["model"].as_str(), run["format_version"].as_str()), (Some("gpt-5.1-codex"), Some("0.58.0")));
    let detail = c.show(run);
    assert_eq!((detail["tokens_sent"].as_i64(), detail["tokens_received"].as_i64()), (Some(1_099_261), Some(22_305)));
    for e in edits_of(&detail) {
        assert_eq!(e["status"], "applied");
        assert!(
            e["diff"]
                .as_str()
                .is_some_and(|d| d.contains("+  const baseLmstudioUrl") || d.contains("+  const headers")),
            "{e}"
        );
    }
    assert_eq!(steps_of(&detail).iter().filter(|s| flagged(s, "error")).count(), 3);
}

/// MANIFEST: aider's two histories: a run per session with a prompt, the whole-file edits aider
/// applied, the sessions without a prompt named in a note, the input history skipped by name.
#[test]
fn aider_chat_histories() {
    let c = ingest(&["corpus/aider"]);
    let open_coder = c.under("corpus/aider/OpenCoder");
    assert_eq!(open_coder.len(), 32);
    assert!(open_coder.iter().all(|r| r["steps"] == 1 && r["instance_id"] == "OpenCoder" && r["format"] == "aider"));
    assert_eq!(open_coder.iter().filter_map(|r| r["edits"].as_i64()).sum::<i64>(), 3);
    let models: BTreeSet<&str> = open_coder.iter().filter_map(|r| r["model"].as_str()).collect();
    assert_eq!(models.len(), 9, "{models:?}");
    let zen = c.under("corpus/aider/zen-mcp-server");
    let mut steps: Vec<i64> = zen.iter().filter_map(|r| r["steps"].as_i64()).collect();
    steps.sort();
    assert_eq!(steps, vec![1, 7], "25 `####` lines make 8 prompts");
    assert!(zen.iter().all(|r| r["model"] == "gemini/gemini-2.5-pro-preview-06-05" && r["format_version"] == "0.86.1"));
    let detail = c.show(open_coder.iter().find(|r| r["edits"] == 1).unwrap_or_else(|| panic!("no edit")));
    let edit = edits_of(&detail)[0];
    assert_eq!((edit["kind"].as_str(), edit["status"].as_str()), (Some("create"), Some("applied")));
    assert!(c.stderr.contains("note: ") && c.stderr.contains("2 of 34 aider sessions have no prompt"), "{}", c.stderr);
    assert!(c.stderr.contains(".aider.input.history: aider's input history"), "{}", c.stderr);
}

/// MANIFEST: Moatless' state machine (not ATIF): 18 actions, the EditCode diff applied and its
/// nine retries and rejections refused, the submission, the cost and tokens of the completions;
/// the tree-search dump of only its root is no run.
#[test]
fn moatless_trajectories() {
    let c = ingest(&["corpus/moatless"]);
    let run = c.one("corpus/moatless/scikit-learn__scikit-learn-13779");
    assert_eq!(
        (run["format"].as_str(), run["instance_id"].as_str()),
        (Some("moatless"), Some("scikit-learn__scikit-learn-13779"))
    );
    assert_eq!(
        (run["steps"].as_i64(), run["edits"].as_i64(), run["rejected_edits"].as_i64()),
        (Some(18), Some(10), Some(9))
    );
    assert_eq!((run["model"].as_str(), run["exit_status"].as_str()), (Some("azure/gpt-4o"), Some("error")));
    assert!((run["cost"].as_f64().unwrap_or(0.0) - 0.515581).abs() < 1e-6);
    let detail = c.show(run);
    assert_eq!((detail["tokens_sent"].as_i64(), detail["tokens_received"].as_i64()), (Some(123_018), Some(3_017)));
    assert!(detail["submission"].as_str().is_some_and(|s| s.contains("sklearn/ensemble/voting.py")));
    let applied: Vec<&Value> = edits_of(&detail).into_iter().filter(|e| e["status"] == "applied").collect();
    assert_eq!(applied.len(), 1);
    assert!(applied[0]["diff"].as_str().is_some_and(|d| d.contains("+        if sample_weight is not None:")));
    assert!(
        c.stderr.contains("traj_haiku.json: a moatless-tree-search dump holding only its unexpanded root"),
        "{}",
        c.stderr
    );
}

/// fixtures/formats/claude-code: the thread through `parentUuid` (not the interrupted branch,
/// not the sub-agent's sidechain), a response split over records counted once, Edit, MultiEdit
/// and Write as edits, the failing Bash as an error.
#[test]
fn claude_code_session() {
    let c = ingest(&["formats/claude-code"]);
    let run = c.one("formats/claude-code");
    assert_eq!(run["instance_id"], "4b7e2c1a-93f0-4d6b-8a25-0c9e7f3d1b58");
    assert_eq!((run["format"].as_str(), run["format_version"].as_str()), (Some("claude-code"), Some("2.0.14")));
    assert_eq!(
        (run["steps"].as_i64(), run["edits"].as_i64(), run["exit_status"].as_str()),
        (Some(8), Some(4), Some("finished"))
    );
    assert_eq!(run["model"], "claude-sonnet-4-5-20250929");
    let detail = c.show(run);
    let tools: Vec<&str> = steps_of(&detail).iter().filter_map(|s| s["tool"].as_str()).collect();
    assert_eq!(tools, ["Read", "Edit", "Task", "MultiEdit", "Bash", "Write", "Bash", "message"]);
    let steps = steps_of(&detail);
    assert!(steps[0]["thought"].as_str().is_some_and(|t| t.contains("look at the default JSON provider")));
    assert!(flagged(steps[4], "error") && flagged(steps[4], "test_run") && !flagged(steps[6], "error"));
    // Eight responses on the thread, each counted once: 3 + 5 + 4 * 6 input tokens, and the
    // cache's 15,200 each.
    assert_eq!(detail["tokens_sent"].as_i64(), Some(32 + 8 * 15_200));
    let edits = edits_of(&detail);
    let kinds: Vec<(&str, &str)> =
        edits.iter().map(|e| (e["kind"].as_str().unwrap_or(""), e["status"].as_str().unwrap_or(""))).collect();
    assert_eq!(
        kinds,
        [("str_replace", "applied"), ("str_replace", "applied"), ("str_replace", "applied"), ("create", "applied")]
    );
    assert!(edits[0]["diff"].as_str().is_some_and(|d| d.contains("+        kwargs.setdefault(\"default\", _default)")));
    let search = json(&c.db, &["search", "Found 1 file", "--json"]);
    assert_eq!(search.as_array().map(Vec::len), Some(0), "the sidechain's steps are not the run's: {search}");
}

/// fixtures/formats/terminal-bench: a run per trial with its verdict, steps cut at the prompts
/// of the recording, the run's metadata naming agent and model; the run's own results.json and
/// log not read again; a trial with only results.json and a renamed run results.json give
/// verdicts without runs.
#[test]
fn terminal_bench_run_folders() {
    let c = ingest(&["formats/terminal-bench"]);
    assert_eq!(c.runs.len(), 2);
    let hello = c.one("formats/terminal-bench/runs/2025-06-20__14-02-11/hello-world");
    assert_eq!((hello["format"].as_str(), hello["resolved"].as_bool()), (Some("terminal-bench"), Some(true)));
    assert_eq!(
        (hello["agent"].as_str(), hello["model"].as_str()),
        (Some("terminus"), Some("anthropic/claude-3-7-sonnet-20250219"))
    );
    assert_eq!(hello["format_version"], "0.2.12");
    let detail = c.show(hello);
    let actions: Vec<&str> = steps_of(&detail).iter().filter_map(|s| s["action"].as_str()).collect();
    assert_eq!(actions, ["clear", "ls -la /app", "echo 'Hello, world!' > hello.txt", "cat hello.txt", "^D"]);
    assert_eq!(steps_of(&detail)[3]["observation"], "Hello, world!");
    let edit = edits_of(&detail)[0];
    assert_eq!((edit["kind"].as_str(), edit["path"].as_str()), (Some("shell_write"), Some("hello.txt")));
    assert_eq!(detail["outcome"]["tests"].as_array().map(Vec::len), Some(2));
    let timeout = c.one("formats/terminal-bench/runs/2025-06-20__14-02-11/fix-permissions.hard");
    assert_eq!(
        (timeout["instance_id"].as_str(), timeout["exit_status"].as_str()),
        (Some("fix-permissions.hard"), Some("agent_timeout"))
    );
    assert_eq!(timeout["resolved"], true, "the tests passed after the agent was cut off");
    assert!(
        c.stderr.contains("runs/2025-06-20__14-02-11/results.json: a Terminal-Bench run's results"),
        "{}",
        c.stderr
    );
    assert!(c.stderr.contains("test outcomes 6,"), "3 trials and the renamed run results of 3: {}", c.stderr);
    assert!(
        c.stderr.contains("count-dataset-tokens.1-of-1.2025-06-20__14-02-11: no sessions/agent.cast"),
        "{}",
        c.stderr
    );
    // Its tests timed out (`is_resolved: null`, `failure_mode: test_timeout`): unresolved, as the
    // harness's own summary counts it (2 resolved, 1 unresolved).
    let out = trajan(&c.db, &["runs", "--evaluations", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let timed_out: Vec<&serde_json::Value> =
        list.as_array().into_iter().flatten().filter(|o| o["instance_id"] == "count-dataset-tokens").collect();
    assert!(!timed_out.is_empty() && timed_out.iter().all(|o| o["resolved"] == false), "{list}");
}

/// fixtures/formats/openclaw: beside the ATIF trajectory the session is the trial's raw log, not
/// a second run; a trial without a trajectory reads its run from the session.
#[test]
fn openclaw_sessions_in_harbor_trials() {
    let c = ingest(&["formats/openclaw"]);
    assert_eq!(c.runs.len(), 2, "one run per trial");
    let with_atif = c.one("formats/openclaw/jobs/2026-02-11__10-15-42/configure-port__Hn4kW2p");
    assert_eq!((with_atif["format"].as_str(), with_atif["resolved"].as_bool()), (Some("atif"), Some(true)));
    let session_only = c.one("formats/openclaw/jobs/2026-02-11__10-15-42/configure-port__Tz7qR1m");
    assert_eq!(
        (session_only["format"].as_str(), session_only["instance_id"].as_str()),
        (Some("openclaw"), Some("configure-port"))
    );
    assert_eq!((session_only["steps"].as_i64(), session_only["edits"].as_i64()), (Some(5), Some(2)));
    assert_eq!(
        (session_only["resolved"].as_bool(), session_only["model"].as_str()),
        (Some(false), Some("openrouter/moonshotai/kimi-k2.5"))
    );
    let detail = c.show(session_only);
    let tools: Vec<&str> = steps_of(&detail).iter().filter_map(|s| s["tool"].as_str()).collect();
    assert_eq!(tools, ["read", "edit", "write", "exec", "message"]);
    assert!(flagged(steps_of(&detail)[3], "error"));
    let out = trajan(&c.db, &["show", &with_atif["id"].to_string(), "--json"]);
    assert!(out.status.success());
    assert!(
        c.stderr.contains(".checkpoint.6a1f0e2d-5c4b-4a39-8271-60f5e4d3c2b1.jsonl: part of a Harbor trial, not read"),
        "{}",
        c.stderr
    );
}

/// fixtures/formats/openhands-file-store: the numbered event files in numeric order, the cache
/// page of the same events never counted again, the pickled state named; a session under
/// `.eval_sessions/` stopped mid-run.
#[test]
fn openhands_v0_file_store_sessions() {
    let c = ingest(&["formats/openhands-file-store"]);
    let run = c.one("formats/openhands-file-store/sessions");
    assert_eq!(
        (run["format"].as_str(), run["instance_id"].as_str()),
        (Some("openhands-events"), Some("7f3e9a1c2b4d4e5f8a6b0c1d2e3f4a5b"))
    );
    assert_eq!(
        (run["steps"].as_i64(), run["edits"].as_i64(), run["exit_status"].as_str()),
        (Some(13), Some(4), Some("finished"))
    );
    let stopped = c.one("formats/openhands-file-store/evaluation/.eval_sessions");
    assert_eq!((stopped["steps"].as_i64(), stopped["exit_status"].as_str()), (Some(2), Some("running")));
    assert!(c.stderr.contains("event_cache/0-25.json: an OpenHands event cache page"), "{}", c.stderr);
    assert!(c.stderr.contains("agent_state.pkl: an OpenHands session's state"), "{}", c.stderr);
}

/// fixtures/formats/agentless: a run per instance whose steps are the stages (from the latest
/// stage's file; the earlier ones named and not read again), the model from the stage's
/// `args.json`; a repair generation's SEARCH/REPLACE block as an edit; the processed patches as
/// predictions.
#[test]
fn agentless_stages() {
    let c = ingest(&["formats/agentless"]);
    let loc = c.under("formats/agentless/results/swe-bench-lite/edit_location_samples");
    assert_eq!(loc.len(), 2);
    let django =
        loc.iter().find(|r| r["instance_id"] == "django__django-11099").unwrap_or_else(|| panic!("no django run"));
    assert_eq!((django["steps"].as_i64(), django["model"].as_str()), (Some(4), Some("gpt-4o-2024-05-13")));
    let detail = c.show(django);
    let stages: Vec<&str> = steps_of(&detail).iter().filter_map(|s| s["action"].as_str()).collect();
    assert_eq!(
        stages,
        ["file-level localisation", "related elements", "edit locations (sample 1)", "edit locations (sample 2)"]
    );
    assert!(
        steps_of(&detail)[0]["observation"]
            .as_str()
            .is_some_and(|o| o.starts_with("django/contrib/auth/validators.py"))
    );
    let repair = c.one("formats/agentless/results/swe-bench-lite/repair_sample_1");
    let edit = edits_of(&c.show(repair))[0].clone();
    assert_eq!(
        (edit["path"].as_str(), edit["kind"].as_str()),
        (Some("django/contrib/auth/validators.py"), Some("str_replace"))
    );
    assert!(c.stderr.contains("predictions 2,"), "{}", c.stderr);
    assert!(c.stderr.contains("file_level/loc_outputs.jsonl: an earlier Agentless stage"), "{}", c.stderr);
}

/// A folder mixing every agent format ingests with exit 0, each read by its own adapter.
#[test]
fn a_folder_mixing_them_ingests() {
    let c = ingest(&["corpus/openhands-v1", "corpus/codex-cli", "corpus/aider", "corpus/moatless", "formats"]);
    let formats: BTreeSet<&str> = c.runs.iter().filter_map(|r| r["format"].as_str()).collect();
    for f in [
        "openhands-v1",
        "codex-cli",
        "aider",
        "moatless",
        "claude-code",
        "agentless",
        "terminal-bench",
        "openclaw",
        "openhands-events",
        "atif",
    ] {
        assert!(formats.contains(f), "{f}: {formats:?}");
    }
}

/// Never silently nothing: every regular file under the fixtures is, after one ingest of them
/// all, exactly one of read (a member of a unit ingested), skipped (with its kind and reason) or
/// failed (with its reason).
#[test]
fn every_fixture_file_is_read_skipped_or_failed() {
    use trajan::ingest::pipeline::{self, Options, Silent, UnitResult};
    use trajan::ingest::source;
    let roots: Vec<PathBuf> = ["corpus", "formats", "layouts", "labelled", "demo", "classify", "classify-cases"]
        .iter()
        .map(|r| common::fixtures_dir(r))
        .collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut store = trajan::store::Store::open(&dir.path().join("all.db")).unwrap_or_else(|e| panic!("{e}"));
    let report = pipeline::ingest(&mut store, &roots, &Options::default(), &Silent);
    let members: BTreeMap<PathBuf, Vec<PathBuf>> = source::discover(&roots)
        .units
        .into_iter()
        .map(|u| {
            let files = if u.members.is_empty() { vec![u.path.clone()] } else { u.members.clone() };
            (u.path, files)
        })
        .collect();
    let of_unit = |p: &Path| members.get(p).cloned().unwrap_or_else(|| vec![p.to_path_buf()]);
    let (mut read, mut skipped, mut failed) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut skipped_folders = Vec::new();
    for r in &report.results {
        match r {
            UnitResult::Ingested { path, .. } | UnitResult::Unchanged { path, .. } => read.extend(of_unit(path)),
            UnitResult::Skipped { path, skip } => {
                assert!(!skip.reason.is_empty(), "{path:?} skipped without a reason");
                if path.is_dir() {
                    skipped_folders.push(path.clone());
                } else {
                    skipped.insert(path.clone());
                }
            }
            UnitResult::Failed(e) => {
                assert!(!e.to_string().is_empty());
                failed.extend(of_unit(e.path()));
            }
        }
    }
    let mut files = 0;
    for root in &roots {
        let root = std::fs::canonicalize(root).unwrap_or_else(|e| panic!("{e}"));
        for entry in walkdir::WalkDir::new(&root).into_iter().flatten().filter(|e| e.file_type().is_file()) {
            let p = entry.path().to_path_buf();
            files += 1;
            let in_skipped_folder = skipped_folders.iter().any(|f| p.starts_with(f));
            let places = [read.contains(&p), skipped.contains(&p) || in_skipped_folder, failed.contains(&p)];
            assert_eq!(places.iter().filter(|x| **x).count(), 1, "{}: read, skipped, failed = {places:?}", p.display());
        }
    }
    assert!(files > 400, "{files} files walked");
}
