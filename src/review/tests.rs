//! Review logic on hand-built label sets.

use super::*;

fn set(run: i64, source: Source, rater: &str, modes: &[&str], at: &str) -> LabelSet {
    LabelSet {
        run_id: run,
        source,
        rater: rater.into(),
        modes: modes.iter().map(|m| m.to_string()).collect(),
        created_at: at.into(),
        taxonomy_version: "1.0".into(),
        exit_category: "submitted".into(),
        input_hash: None,
        judged: false,
        onset_step: None,
        blame: None,
    }
}

#[test]
fn the_reference_is_the_adjudication_else_the_reviewers_majority() {
    let a = set(1, Source::Human, "ann", &["x", "y"], "1");
    let b = set(1, Source::Human, "bob", &["x"], "2");
    let c = set(1, Source::Human, "cat", &["x", "y"], "3");
    let two = [&a, &b];
    assert_eq!(reference(&two), None, "ann and bob tie on y");
    let three = [&a, &b, &c];
    assert_eq!(reference(&three), Some(["x", "y"].iter().map(|s| s.to_string()).collect()));
    let adj = set(1, Source::Adjudication, "dee", &[], "4");
    assert_eq!(reference(&[&a, &b, &adj]), Some(Rating::new()), "an adjudication settles it");
    let llm = set(1, Source::Llm, "gpt", &["x"], "1");
    assert_eq!(reference(&[&llm]), None, "classifiers are not the reference");
}

#[test]
fn disagreements_until_an_adjudication_after_them() {
    let a = set(1, Source::Human, "ann", &["x"], "2026-01-01");
    let b = set(1, Source::Human, "bob", &[], "2026-01-02");
    assert!(disagreement(&[&a, &b]));
    let settled = set(1, Source::Adjudication, "cat", &["x"], "2026-01-03");
    assert!(!disagreement(&[&a, &b, &settled]));
    let earlier = set(1, Source::Adjudication, "cat", &["x"], "2026-01-01T00");
    assert!(disagreement(&[&a, &b, &earlier]), "a newer label reopens it");
    let same = set(1, Source::Human, "bob", &["x"], "2026-01-02");
    assert!(!disagreement(&[&a, &same]));
}

#[test]
fn queues_follow_the_rater() {
    let sets = vec![set(1, Source::Human, "ann", &["x"], "1"), set(2, Source::Heuristic, "heuristic", &["x"], "1")];
    let s = states(&sets, "ann");
    assert!(in_queue(Queue::Mine, s.get(&1), true));
    assert!(!in_queue(Queue::Unlabelled, s.get(&1), true));
    assert!(in_queue(Queue::Unlabelled, s.get(&2), true), "a classifier's label is not mine");
    assert!(in_queue(Queue::Unlabelled, s.get(&3), true));
    assert!(!in_queue(Queue::Unlabelled, s.get(&3), false), "resolved runs are not queued");
    assert_eq!(Queue::Disagreements.next(), Queue::All);
}

#[test]
fn the_agreement_inputs_have_a_column_per_rater_and_a_reference_per_mode() {
    let sets = vec![
        set(1, Source::Heuristic, "heuristic", &["x"], "1"),
        set(1, Source::Human, "ann", &["x", "y"], "1"),
        set(1, Source::Human, "bob", &["x"], "1"),
        set(2, Source::Llm, "gpt", &[], "1"),
        set(2, Source::Adjudication, "cat", &["y"], "1"),
    ];
    let modes = vec!["x".to_string(), "y".to_string()];
    let (table, raters, reference) = agreement_inputs(&sets, &modes);
    assert_eq!(raters, ["heuristic", "llm:gpt", "human:ann", "human:bob"]);
    assert_eq!(table.raters(), raters.as_slice());
    assert_eq!(table.items(), ["1", "2"]);
    assert_eq!(table.get(1, 1), Some(&Rating::new()));
    let Reference::Given { columns, .. } = reference else { panic!("{reference:?}") };
    // Run 1: both reviewers say x (a reference), they tie on y (none); run 2: the adjudication.
    assert_eq!(columns["x"], [Some(true), Some(false)]);
    assert_eq!(columns["y"], [None, Some(true)]);
}

#[test]
fn benchmarks_from_instance_ids() {
    use stats::benchmark;
    assert_eq!(benchmark("django__django-11163"), "swe-bench");
    assert_eq!(benchmark("requests_refactor__rename-super-len"), "refactorbench");
    assert_eq!(benchmark("classify__mixture"), "fixtures");
    assert_eq!(benchmark("whatever"), "other");
}

/// A run that is a row of a published dataset has the dataset's name as its benchmark, whatever
/// its instance id looks like; other runs keep the one their instance id names.
#[test]
fn a_dataset_row_s_benchmark_is_its_dataset() {
    use crate::store::read::dataset_name;
    let mut row = failed_run(1);
    row.instance_id = "django__django-11163".into();
    row.dataset = dataset_name(Some(r#"{"dataset":{"name":"nvidia/Open-SWE-Traces","row":0}}"#.into()));
    assert_eq!(row.dataset.as_deref(), Some("nvidia/Open-SWE-Traces"));
    assert_eq!(stats::run_benchmark(&row), "nvidia/Open-SWE-Traces");
    let mut plain = failed_run(2);
    plain.instance_id = "django__django-11163".into();
    assert_eq!(stats::run_benchmark(&plain), "swe-bench");
    // Metadata of another shape names no dataset.
    assert_eq!(dataset_name(Some(r#"{"dataset":{"row":1}}"#.into())), None);
    assert_eq!(dataset_name(Some(r#"{"dataset":"x"}"#.into())), None);
    assert_eq!(dataset_name(Some("{\"dataset\":".into())), None);
    assert_eq!(dataset_name(None), None);
}

/// A failed run of the fixtures' benchmark.
fn failed_run(id: i64) -> crate::store::read::RunSummary {
    crate::store::read::RunSummary {
        id,
        instance_id: format!("demo__run-{id}"),
        format: crate::model::Format::SweAgent,
        format_version: None,
        agent: None,
        model: None,
        exit_status: Some("submitted".into()),
        resolved: Some(false),
        steps: 10,
        edits: 1,
        rejected_edits: 0,
        cost: None,
        attempt: None,
        source: "x.traj".into(),
        has_patch: true,
        dataset: None,
    }
}

fn blamed(mut l: LabelSet, blame: Option<Blame>) -> LabelSet {
    l.judged = blame.is_some();
    l.blame = blame;
    l
}

#[test]
fn runs_blamed_on_the_task_or_environment_leave_the_agents_statistics_by_the_modes_source() {
    use stats::{By, Pick, stats};
    let runs: Vec<_> = (1..=5).map(failed_run).collect();
    let sets = vec![
        // Run 1: the heuristic blames the agent, the reviewer the task.
        blamed(set(1, Source::Heuristic, "heuristic", &["x"], "1"), Some(Blame::Agent)),
        blamed(set(1, Source::Human, "ann", &["x"], "2"), Some(Blame::Task)),
        // Run 2: the LLM blames the environment; no reviewer.
        blamed(set(2, Source::Llm, "gpt", &["y"], "1"), Some(Blame::Environment)),
        blamed(set(2, Source::Heuristic, "heuristic", &["y"], "1"), Some(Blame::Agent)),
        // Run 3: the agent's, by everyone.
        blamed(set(3, Source::Heuristic, "heuristic", &["x", "y"], "1"), Some(Blame::Agent)),
        // Run 4: a reviewer who judged no blame.
        set(4, Source::Human, "ann", &["y"], "1"),
        // Run 5: no label.
    ];
    let s = stats(&runs, &sets, By::All, Pick::Best, "t@1", crate::model::FailedScope::Failed);
    let t = &s.total;
    // Best: run 1 by the reviewer (task), run 2 by the LLM (environment): both set apart.
    assert_eq!((t.runs, t.labelled, t.with_mode), (3, 2, 2), "{t:?}");
    assert_eq!((t.blamed_task, t.blamed_environment, t.blame_unjudged), (1, 1, 1), "{t:?}");
    assert_eq!(t.modes.get("x"), Some(&1), "run 1's x is not the agent's: {t:?}");
    assert_eq!(t.coverage, Some(1.0));
    assert!(s.blame_note.starts_with("2 failed runs set apart") && s.blame_note.contains("(source best)"));
    // The heuristic's own blame: every run it labelled is the agent's.
    let h = stats(&runs, &sets, By::All, Pick::Heuristic, "t@1", crate::model::FailedScope::Failed);
    assert_eq!((h.total.runs, h.total.labelled, h.total.blamed_task, h.total.blamed_environment), (5, 3, 0, 0));
    assert_eq!(h.total.modes.get("x"), Some(&2));
    // The reviewers': run 1 is the task's; run 4 is theirs with no blame judged.
    let r = stats(&runs, &sets, By::All, Pick::Human, "t@1", crate::model::FailedScope::Failed);
    assert_eq!((r.total.runs, r.total.labelled, r.total.blamed_task, r.total.blame_unjudged), (4, 1, 1, 1));
    assert_eq!(r.rows[0].blamed_task, 1, "the group's row counts it too");
    // The runs table's blame column reads the same.
    let blames = stats::run_blames(&sets, Pick::Best);
    assert_eq!(blames.get(&1), Some(&Blame::Task));
    assert_eq!(blames.get(&2), Some(&Blame::Environment));
    assert_eq!(blames.get(&4), None);
}
