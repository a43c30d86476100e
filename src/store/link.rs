//! Joining runs to their test outcome and prediction by instance id.
//!
//! Run after every write, for each instance the source touched, so that a log ingested before
//! or after its trajectory joins either way. Precision first — a wrong verdict is worse than
//! none — so a candidate is never joined when it contradicts the run:
//! - it carries a patch and the run submitted a different one;
//! - it names another model (a harness folder or its `run_instance.log`, a prediction's model,
//!   or a summary whose file name names the model it evaluated), unless its patch is the run's
//!   submission: the same patch evaluated is the strongest evidence there is;
//! - the run is a RetryAgent attempt that was not the one submitted;
//! - it is a Harbor trial's verdict and the run is another trial's (a trial without a
//!   trajectory is an evaluation without a run, never another trial's).
//!
//! A layout word (`logs`, `eval`, `results`, `run_evaluation`, `trajs`, ...) is never a model
//! name. Among the rest, the same unit (a Harbor trial's run and verdict), the same patch, a
//! matching model, the same submission folder (the
//! folder a source sits in once instance folders and layout words are taken off its path:
//! `<sub>/trajs/x.traj`, `<sub>/logs/x/` and `<sub>/results/results.json` are all in `<sub>`)
//! and per-test detail win. When several runs share the instance, a candidate must have
//! something tying it to the run. [`unjoined`] says why each evaluation a run did not get was
//! left out, with the same rules.

use std::path::Path;

/// Folder names that say what a folder holds, not whose it is: never a model name, never a
/// submission.
const LAYOUT_WORDS: [&str; 9] =
    ["logs", "eval", "evals", "results", "run_evaluation", "run evaluation", "trajs", "trajectories", "evaluation"];

/// The format of a Harbor trial's verdict (`ingest::harbor`: read with the trial's run).
pub(super) const HARBOR_TRIAL: &str = "atif";

/// The run label of a verdict read in a published dataset's row (`ingest::dataset`): `row:N`,
/// tied to the run at position N of the same source.
pub const ROW_VERDICT: &str = "row:";

/// Whether a folder name is a layout word (`logs`, `run evaluation`, ...), in any case.
pub fn is_layout_word(name: &str) -> bool {
    let name = name.trim();
    LAYOUT_WORDS.iter().any(|w| w.eq_ignore_ascii_case(name))
}

pub(super) struct RunSide {
    pub id: i64,
    /// The unit (source) it was read from: an evaluation read with the run (a Harbor trial's
    /// verdict) is its own.
    pub unit: i64,
    /// The run's own model and its prediction's (filled in between the two joins).
    pub models: Vec<String>,
    pub home: String,
    pub submission: Option<String>,
    /// RetryAgent: `Some(false)` for an attempt that was not chosen.
    pub best_attempt: Option<bool>,
    /// Its position in its source (a dataset's row in its shard).
    pub position: i64,
}

pub(super) struct Candidate {
    pub id: i64,
    pub unit: i64,
    pub model: Option<String>,
    /// Harness run id or summary file name; names the model for summaries.
    pub label: Option<String>,
    pub home: String,
    /// Per-test detail beats a bare resolved flag (summaries).
    pub detail: i64,
    /// Whether it says resolved or not (a test log not graded yet does not).
    pub verdict: bool,
    pub patch: Option<String>,
    pub source: String,
    /// The evaluation's format (outcomes; a prediction's is not shown).
    pub format: String,
}

/// How well a candidate fits a run, compared in this order: something ties it to the run (the
/// same patch, model or submission folder), it has a verdict, the evidence (`score`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Fit {
    tied: bool,
    verdict: bool,
    score: i64,
}

/// Why a candidate does not join a run.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reason {
    PatchDiffers,
    OtherModel(String),
    /// A summary whose file name names another model.
    OtherLabel(String),
    NotSubmitted,
    NothingTies(usize),
    /// A Harbor trial's verdict, and the run is another trial's.
    OtherTrial,
    /// A dataset row's verdict, and the run is another row's.
    OtherRow,
}

impl Reason {
    fn text(&self) -> String {
        match self {
            Reason::PatchDiffers => "its patch differs from this run's submission".into(),
            Reason::OtherModel(m) => format!("it evaluated another model ({m})"),
            Reason::OtherLabel(l) => format!("its file name ({l}) names another model"),
            Reason::NotSubmitted => "this run is a RetryAgent attempt that was not the one submitted".into(),
            Reason::OtherTrial => "it is another Harbor trial's verdict (a trial's evaluation is its own run's)".into(),
            Reason::OtherRow => "it is another dataset row's verdict (a row's verdict is its own run's)".into(),
            Reason::NothingTies(n) => format!(
                "{n} runs share this instance and nothing (model, patch, submission folder) ties it to this one"
            ),
        }
    }
}

/// A run's joins: its outcome, prediction and tests' evaluation, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Join {
    pub run: i64,
    pub outcome: Option<i64>,
    pub prediction: Option<i64>,
    /// The evaluation the run's tests come from when its verdict's has none
    /// (`runs.tests_outcome_id`).
    pub tests: Option<i64>,
}

/// The joins of every run of an instance: each run gets the prediction, then the outcome, that
/// fits it best.
pub(super) fn joins(mut runs: Vec<RunSide>, outcomes: &[Candidate], predictions: &[Candidate]) -> Vec<Join> {
    let shared = runs.iter().filter(|r| r.best_attempt != Some(false)).count();
    let mut out = Vec::with_capacity(runs.len());
    for run in &mut runs {
        let prediction = best(run, predictions, shared);
        if let Some(model) = predictions.iter().find(|c| Some(c.id) == prediction).and_then(|c| c.model.clone()) {
            run.models.push(model);
        }
        let outcome = best(run, outcomes, shared);
        let tests = tests_source(run, outcomes, outcome, shared);
        out.push(Join { run: run.id, outcome, prediction, tests });
    }
    out
}

/// An evaluation of a run's instance that was not joined to it, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unjoined {
    /// The evaluation's source (file or folder).
    pub source: String,
    pub format: String,
    pub reason: String,
}

/// The evaluations of run `run_id`'s instance (`runs`, `outcomes`) that the run did not get,
/// each with the reason; `joined` is its outcome, `tests` the evaluation its tests come from,
/// `prediction_model` its prediction's model.
pub(super) fn unjoined(
    run_id: i64,
    joined: Option<i64>,
    tests: Option<i64>,
    prediction_model: Option<String>,
    runs: Vec<RunSide>,
    outcomes: &[Candidate],
) -> Vec<Unjoined> {
    let shared = runs.iter().filter(|r| r.best_attempt != Some(false)).count();
    let Some(mut run) = runs.into_iter().find(|r| r.id == run_id) else { return Vec::new() };
    run.models.extend(prediction_model);
    let chosen = outcomes.iter().find(|c| Some(c.id) == joined);
    let mut out = Vec::new();
    // The evaluation that gives the run's tests is joined too (as the tests' source).
    for c in outcomes.iter().filter(|c| Some(c.id) != joined && Some(c.id) != tests) {
        let reason = match (judge(&run, c, shared), chosen) {
            (Err(reason), _) => reason.text(),
            (Ok(fit), Some(j)) if !fit.verdict && j.verdict => {
                format!(
                    "it has no verdict yet (a test log is graded once its task's FAIL_TO_PASS / PASS_TO_PASS \
                     lists are ingested); the verdict in {} is used",
                    j.source
                )
            }
            (Ok(_), Some(j)) => format!("the evaluation in {} fits this run better", j.source),
            (Ok(_), None) => "not joined".into(),
        };
        out.push(Unjoined { source: c.source.clone(), format: c.format.clone(), reason });
    }
    out
}

/// When the verdict's evaluation has no per-test detail (a run summary: resolved ids only), the
/// best other evaluation that fits the run and has it (a per-instance report beside the summary):
/// the run's tests come from there, its verdict from the summary.
fn tests_source(run: &RunSide, outcomes: &[Candidate], verdict: Option<i64>, shared: usize) -> Option<i64> {
    let chosen = outcomes.iter().find(|c| Some(c.id) == verdict)?;
    if chosen.detail > 0 {
        return None;
    }
    outcomes
        .iter()
        .filter(|c| c.id != chosen.id && c.detail > 0)
        .filter_map(|c| judge(run, c, shared).ok().map(|fit| (fit, c.id)))
        .max()
        .map(|(_, id)| id)
}

/// The best candidate for a run, or none.
fn best(run: &RunSide, candidates: &[Candidate], shared: usize) -> Option<i64> {
    candidates.iter().filter_map(|c| judge(run, c, shared).ok().map(|score| (score, c.id))).max().map(|(_, id)| id)
}

/// How well a candidate fits a run, or why it does not.
pub(super) fn judge(run: &RunSide, c: &Candidate, shared: usize) -> Result<Fit, Reason> {
    if run.best_attempt == Some(false) {
        return Err(Reason::NotSubmitted);
    }
    // A Harbor trial's verdict is its own trial's, whatever the other trials of its task hold.
    if c.format == HARBOR_TRIAL && c.unit != run.unit {
        return Err(Reason::OtherTrial);
    }
    // A dataset row's verdict (`run_label` `row:N`) is its own row's run's, and nobody else's.
    if let Some(row) = c.label.as_deref().and_then(|l| l.strip_prefix(ROW_VERDICT)) {
        if c.unit != run.unit || row != run.position.to_string() {
            return Err(Reason::OtherRow);
        }
        return Ok(Fit { tied: true, verdict: c.verdict, score: i64::MAX });
    }
    let patch_match = match (&run.submission, &c.patch) {
        (Some(a), Some(b)) => Some(same_patch(a, b)),
        _ => None,
    };
    if patch_match == Some(false) {
        return Err(Reason::PatchDiffers);
    }
    let model = c.model.as_deref().filter(|m| !is_layout_word(m));
    let label = c.label.as_deref().filter(|l| !is_layout_word(l));
    let model_match = match (run.models.is_empty(), model, label) {
        (true, ..) => None,
        (false, Some(cm), _) => Some(run.models.iter().any(|m| same_model(m, cm))),
        (false, None, Some(label)) => Some(run.models.iter().any(|m| label_names_model(label, m))),
        (false, None, None) => None,
    };
    if model_match == Some(false) && patch_match != Some(true) {
        return Err(match model {
            Some(m) => Reason::OtherModel(m.to_string()),
            None => Reason::OtherLabel(label.unwrap_or_default().to_string()),
        });
    }
    let score = 32 * i64::from(c.unit == run.unit)
        + 16 * i64::from(patch_match == Some(true))
        + 8 * i64::from(model_match == Some(true))
        + 4 * i64::from(c.home == run.home)
        + 2 * i64::from(c.detail > 0);
    let tied = score >= 4;
    if shared > 1 && !tied {
        return Err(Reason::NothingTies(shared));
    }
    Ok(Fit { tied, verdict: c.verdict, score })
}

/// The submission folder a source belongs to: its folder (the folder itself for a folder
/// unit), without the instance's own folder, layout words, and the `<run_id>/<model>` levels
/// under `run_evaluation`: `<sub>/trajs/x/x.traj`, `<sub>/logs/x/`, `<sub>/x/eval/`,
/// `<sub>/logs/run_evaluation/<run>/<model>/x/` and `<sub>/results/results.json` are all in
/// `<sub>`.
pub(super) fn home(path: &str, kind: &str, instance_id: &str) -> String {
    let folder = if kind == "file" { parent(path) } else { path.to_string() };
    let mut parts: Vec<&str> = folder.split('/').collect();
    while parts.len() > 1 {
        let n = parts.len();
        let last = parts[n - 1];
        if last == instance_id || last.is_empty() || is_layout_word(last) {
            parts.pop();
        } else if n >= 4 && is_run_evaluation(parts[n - 3]) {
            parts.truncate(n - 2);
        } else {
            break;
        }
    }
    parts.join("/")
}

fn is_run_evaluation(name: &str) -> bool {
    name.eq_ignore_ascii_case("run_evaluation") || name.eq_ignore_ascii_case("run evaluation")
}

/// Model names as agents and harness folders spell them: `org/model`, `org__model`, or just
/// the last segment.
pub fn same_model(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace("__", "/");
    let (a, b) = (norm(a), norm(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// Whether a summary's file name (`<model>.<run_id>`, with `/` spelled `_` or `__`) names the
/// run's model: its last path segment, compared with punctuation folded.
pub fn label_names_model(label: &str, model: &str) -> bool {
    let fold = |s: &str| -> String {
        s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
    };
    let last = model.rsplit('/').next().unwrap_or(model);
    let needle = fold(last);
    !needle.trim_matches('-').is_empty() && fold(label).contains(&needle)
}

/// Patches compared as git would apply them: line endings, trailing whitespace on each line,
/// and blank lines around the patch aside.
fn same_patch(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s.lines().map(|l| l.trim_end().to_string()).collect();
        while v.last().is_some_and(String::is_empty) {
            v.pop();
        }
        let first = v.iter().position(|l| !l.is_empty()).unwrap_or(v.len());
        v.split_off(first)
    };
    norm(a) == norm(b)
}

fn parent(path: &str) -> String {
    Path::new(path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_spellings_match() {
        assert!(same_model("openrouter/deepseek/deepseek-v3.2", "openrouter__deepseek__deepseek-v3.2"));
        assert!(same_model("google/gemini-3-pro-preview", "gemini-3-pro-preview"));
        assert!(!same_model("gpt-4o", "claude-3"));
        assert!(!same_model("x/gpt-4o", "4o"));
        assert!(!same_model("", ""));
    }

    #[test]
    fn summary_names_name_their_model() {
        let label = "run_report.openrouter_deepseek_deepseek-v3.2.SWE-bench_SWE-bench_Verified";
        assert!(label_names_model(label, "openrouter/deepseek/deepseek-v3.2"));
        assert!(!label_names_model(label, "openrouter/meta-llama/llama-3-70b-instruct"));
        assert!(label_names_model("demo-model.demo-run", "demo-model"));
    }

    #[test]
    fn patches_compare_without_whitespace_noise() {
        assert!(same_patch("\ndiff --git a/x b/x\r\n+y\r\n", "diff --git a/x b/x\n+y\n"));
        assert!(same_patch("diff --git a/x b/x\n \n+y  \n\n", "diff --git a/x b/x\n\n+y"));
        assert!(!same_patch("diff --git a/x b/x\n+y\n", "diff --git a/x b/x\n+z\n"));
        assert!(!same_patch("diff --git a/x b/x\n+y\n", "diff --git a/x b/x\n +y\n"));
    }

    #[test]
    fn layout_words_are_no_model_names() {
        for w in ["logs", "eval", "results", "run_evaluation", "run evaluation", "trajs", "Evaluation"] {
            assert!(is_layout_word(w), "{w}");
        }
        assert!(!is_layout_word("gpt-4o"));
    }

    fn run(models: &[&str], home: &str, submission: Option<&str>) -> RunSide {
        RunSide {
            id: 1,
            unit: 1,
            models: models.iter().map(|m| m.to_string()).collect(),
            home: home.into(),
            submission: submission.map(str::to_string),
            position: 0,
            best_attempt: None,
        }
    }

    fn candidate(model: Option<&str>, home: &str, patch: Option<&str>, verdict: bool) -> Candidate {
        Candidate {
            id: 7,
            unit: 2,
            model: model.map(str::to_string),
            label: None,
            home: home.into(),
            detail: 1,
            verdict,
            patch: patch.map(str::to_string),
            source: format!("{home}/logs/x"),
            format: "swe-bench-report".into(),
        }
    }

    #[test]
    fn a_layout_word_is_no_model() {
        let r = run(&["gpt-4o"], "/a", None);
        assert!(judge(&r, &candidate(Some("logs"), "/b", None, true), 1).is_ok());
        assert!(judge(&r, &candidate(Some("run evaluation"), "/b", None, true), 1).is_ok());
        assert_eq!(
            judge(&r, &candidate(Some("claude-3"), "/b", None, true), 1),
            Err(Reason::OtherModel("claude-3".into()))
        );
    }

    #[test]
    fn the_same_patch_joins_whatever_the_model_and_another_patch_never() {
        let r = run(&["gpt-4o"], "/a", Some("diff --git a/x b/x\n+y\n"));
        let same = judge(&r, &candidate(Some("claude-3"), "/b", Some("diff --git a/x b/x\n+y"), true), 2);
        assert!(same.as_ref().is_ok_and(|f| f.tied && f.score >= 16), "{same:?}");
        let other = judge(&r, &candidate(Some("gpt-4o"), "/a", Some("diff --git a/x b/x\n+z\n"), true), 1);
        assert_eq!(other, Err(Reason::PatchDiffers));
    }

    #[test]
    fn the_submission_folder_ties_and_a_verdict_wins_among_tied_candidates() {
        let r = run(&[], "/sub", Some("+y"));
        // Several runs of the instance: only what is tied to this one.
        assert_eq!(judge(&r, &candidate(None, "/other", None, true), 2), Err(Reason::NothingTies(2)));
        let fit = |c: Candidate, shared| judge(&r, &c, shared).unwrap_or_else(|e| panic!("{e:?}"));
        // A test log not graded yet, of this very patch, waits behind the summary's verdict.
        let log = fit(candidate(None, "/sub", Some("+y"), false), 2);
        let summary = fit(candidate(None, "/sub", None, true), 2);
        assert!(summary > log, "{summary:?} {log:?}");
        // A verdict from elsewhere does not beat an evaluation tied to the run.
        let far = fit(candidate(None, "/other", None, true), 1);
        assert!(log > far, "{log:?} {far:?}");
        let mut attempt = run(&[], "/sub", None);
        attempt.best_attempt = Some(false);
        assert_eq!(judge(&attempt, &candidate(None, "/sub", None, true), 1), Err(Reason::NotSubmitted));
    }

    #[test]
    fn sources_of_one_submission_share_a_home() {
        let sub = "/e/evaluation/lite/20240402_sweagent_gpt4";
        let i = "django__django-11099";
        let homes = [
            home(&format!("{sub}/trajs/{i}.traj"), "file", i),
            home(&format!("{sub}/trajs/{i}/{i}.traj"), "file", i),
            home(&format!("{sub}/logs/{i}"), "harness-dir", i),
            home(&format!("{sub}/results/results.json"), "file", i),
            home(&format!("{sub}/all_preds.jsonl"), "file", i),
            home(&format!("{sub}/{i}/eval"), "harness-dir", i),
            home(&format!("{sub}/logs/run_evaluation/run-1/gpt-4__x/{i}"), "harness-dir", i),
            home(&format!("{sub}/run evaluation/{i}"), "harness-dir", i),
        ];
        for h in &homes {
            assert_eq!(h, sub);
        }
        assert_ne!(home(&format!("/e/other/logs/{i}"), "harness-dir", i), sub);
        assert_eq!(home("/x.traj", "file", i), "");
    }
}
