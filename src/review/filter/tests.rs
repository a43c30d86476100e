use super::*;
use crate::label::Blame;
use std::time::Instant;

fn run(id: i64, instance: &str) -> RunSummary {
    RunSummary {
        id,
        instance_id: instance.to_string(),
        format: crate::model::Format::SweAgent,
        format_version: None,
        agent: Some("sweagent".to_string()),
        model: Some("gpt-4o".to_string()),
        exit_status: Some("submitted".to_string()),
        resolved: None,
        steps: 10,
        edits: 1,
        rejected_edits: 0,
        cost: None,
        attempt: None,
        source: "x.traj".to_string(),
        has_patch: true,
        dataset: None,
    }
}

/// Instance ids of the runs in `runs` that `query` keeps, in the default order.
fn kept(runs: &[RunSummary], query: &str) -> Vec<String> {
    let filter = parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    apply(runs, &LabelIndex::new(), &filter, Sort::default()).into_iter().map(|i| runs[i].instance_id.clone()).collect()
}

fn error(query: &str) -> String {
    parse(query).expect_err(query).to_string()
}

fn sample() -> Vec<RunSummary> {
    vec![
        RunSummary { steps: 150, resolved: Some(false), cost: Some(2.5), ..run(1, "django__django-16560") },
        RunSummary { steps: 40, resolved: Some(true), cost: Some(0.5), edits: 3, ..run(2, "sympy__sympy-20590") },
        RunSummary {
            steps: 120,
            resolved: None,
            agent: None,
            model: Some("claude-3-5-sonnet".into()),
            exit_status: Some("submitted (exit_cost)".into()),
            format: crate::model::Format::OpenHands,
            rejected_edits: 2,
            ..run(3, "astropy__astropy-12907")
        },
        RunSummary { steps: 101, resolved: Some(false), exit_status: None, edits: 0, ..run(4, "django__django-11099") },
        RunSummary { steps: 5, resolved: Some(false), cost: Some(1.5), ..run(5, "psf__requests-2317") },
    ]
}

/// A current label of `source` by `rater`, with its modes, onset step and blame.
fn current(source: &str, rater: &str, modes: &[&str], onset: Option<usize>, blame: Option<Blame>) -> CurrentLabel {
    CurrentLabel {
        source: crate::label::Source::from_name(source).unwrap_or_else(|| panic!("no source {source}")),
        rater: rater.to_string(),
        modes: modes.iter().map(|m| m.to_string()).collect(),
        onset,
        blame,
    }
}

/// The ids of the runs `query` keeps with these labels, in order.
fn kept_ids(runs: &[RunSummary], labels: &LabelIndex, query: &str) -> Vec<i64> {
    let filter = parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut ids: Vec<i64> = apply(runs, labels, &filter, Sort::default()).into_iter().map(|i| runs[i].id).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn blame_and_onset_terms_read_the_same_labels() {
    let runs = sample();
    let labels: LabelIndex = [
        (1, vec![current("heuristic", "heuristic", &["context_flooding"], Some(4), Some(Blame::Agent))]),
        (
            2,
            vec![
                current("heuristic", "heuristic", &[], None, Some(Blame::Agent)),
                current("human", "ann", &[], None, Some(Blame::Task)),
            ],
        ),
        (3, vec![current("llm", "gpt-4.1", &[], None, Some(Blame::Environment))]),
        (4, vec![current("human", "bob", &["missed_edit_location"], None, None)]),
    ]
    .into_iter()
    .map(|(run, labels)| (run, RunLabels { labels, disputed: false }))
    .collect();
    let kept = |query: &str| kept_ids(&runs, &labels, query);
    assert_eq!(kept("blame:task"), [2]);
    assert_eq!(kept("blame:agent"), [1, 2], "any label that gives it");
    assert_eq!(kept("BLAME:Environment"), [3]);
    assert_eq!(kept("-blame:agent"), [3, 4, 5]);
    assert_eq!(kept("blame:task source:human"), [2]);
    assert_eq!(kept("onset:yes"), [1]);
    assert_eq!(kept("onset:no"), [2, 3, 4, 5], "no label gives a step (unlabelled runs too)");
    assert_eq!(kept("-onset:yes"), kept("onset:no"));
    for bad in ["blame:agnet", "blame>1", "blame:"] {
        assert!(error(bad).contains("use blame:agent, blame:task or blame:environment"), "{bad}: {}", error(bad));
    }
    assert!(error("onset:maybe").contains("use onset:yes or onset:no"));
}

#[test]
fn label_terms_read_the_current_labels() {
    let runs = sample();
    let label = |source: &str, rater: &str, modes: &[&str]| current(source, rater, modes, None, None);
    let labels: LabelIndex = [
        (1, RunLabels { labels: vec![label("heuristic", "heuristic", &["context_flooding"])], disputed: false }),
        (
            3,
            RunLabels {
                labels: vec![label("human", "ann", &["missed_edit_location"]), label("human", "bob", &[])],
                disputed: true,
            },
        ),
        (
            4,
            RunLabels {
                labels: vec![label("llm", "gpt-4.1", &["missed_edit_location", "context_flooding"])],
                disputed: false,
            },
        ),
    ]
    .into_iter()
    .collect();
    let kept = |query: &str| kept_ids(&runs, &labels, query);
    assert_eq!(kept("label:context_flooding"), [1, 4]);
    assert_eq!(kept("label:missed"), [3, 4]);
    assert_eq!(kept("-label:missed"), [1, 2, 5]);
    assert_eq!(kept("rater:ann"), [3]);
    assert_eq!(kept("source:llm"), [4]);
    assert_eq!(kept("source:human label:missed"), [3]);
    assert_eq!(kept("disputed"), [3]);
    assert_eq!(kept("unlabelled"), [1, 2, 4, 5], "classifier labels alone leave a run unlabelled by reviewers");
    assert_eq!(kept("-unlabeled"), [3]);
    assert!(error("source:robot").contains("expected heuristic, llm, human or adjudication"));
    assert!(error("label>2").contains("use label:value"));
}

#[test]
fn empty_query_keeps_everything() {
    let f = parse("   ").unwrap();
    assert!(f.is_empty() && !f.has_words());
    assert_eq!(kept(&sample(), "").len(), 5);
    assert_eq!(f.matches(&run(1, "x"), &LabelIndex::new(), &SkimMatcherV2::default()), Some(0));
}

#[test]
fn text_fields_are_case_insensitive_substrings() {
    let runs = sample();
    assert_eq!(kept(&runs, "model:CLAUDE"), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, "format:openh"), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, "instance:django"), ["django__django-11099", "django__django-16560"]);
    assert_eq!(kept(&runs, "exit:cost"), ["astropy__astropy-12907"]);
    // A missing agent or exit status never matches.
    assert_eq!(kept(&runs, "agent:swe").len(), 4);
    assert_eq!(kept(&runs, "exit:sub").len(), 4);
    assert_eq!(kept(&runs, "Agent:SWE instance:requests"), ["psf__requests-2317"]);
}

#[test]
fn resolved_values_and_aliases() {
    let runs = sample();
    for q in ["resolved:yes", "resolved:true", "resolved:y", "RESOLVED:Yes"] {
        assert_eq!(kept(&runs, q), ["sympy__sympy-20590"], "{q}");
    }
    for q in ["resolved:unknown", "resolved:none"] {
        assert_eq!(kept(&runs, q), ["astropy__astropy-12907"], "{q}");
    }
    for q in ["resolved:no", "resolved:false", "resolved:n"] {
        assert_eq!(kept(&runs, q).len(), 3, "{q}");
    }
}

#[test]
fn numeric_comparisons() {
    let runs = sample();
    assert_eq!(kept(&runs, "steps>120"), ["django__django-16560"]);
    assert_eq!(kept(&runs, "steps>=120").len(), 2);
    assert_eq!(kept(&runs, "steps<=5"), ["psf__requests-2317"]);
    assert_eq!(kept(&runs, "steps<6"), ["psf__requests-2317"]);
    assert_eq!(kept(&runs, "steps=40"), ["sympy__sympy-20590"]);
    assert_eq!(kept(&runs, "edits>=3"), ["sympy__sympy-20590"]);
    assert_eq!(kept(&runs, "edits=0"), ["django__django-11099"]);
    assert_eq!(kept(&runs, "rejected>0"), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, "cost>1.5"), ["django__django-16560"]);
    assert_eq!(kept(&runs, "cost>=1.5"), ["django__django-16560", "psf__requests-2317"]);
    // Runs without a cost match no cost comparison, not even a permissive one.
    assert_eq!(kept(&runs, "cost>=0").len(), 3);
    assert_eq!(kept(&runs, "cost<100").len(), 3);
}

#[test]
fn resolved_no_and_many_steps() {
    assert_eq!(kept(&sample(), "resolved:no steps>100"), ["django__django-11099", "django__django-16560"]);
}

#[test]
fn negation() {
    let runs = sample();
    assert_eq!(kept(&runs, "-exit:submitted"), ["django__django-11099"]);
    assert_eq!(kept(&runs, "-resolved:no"), ["astropy__astropy-12907", "sympy__sympy-20590"]);
    // Plain "not": runs without the field are kept.
    assert_eq!(kept(&runs, "-agent:swe"), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, "-cost>1").len(), 3);
    assert_eq!(kept(&runs, "-steps>100"), ["psf__requests-2317", "sympy__sympy-20590"]);
    // A negated free word is a substring test over instance, model and exit status.
    assert_eq!(kept(&runs, "-django -claude"), ["psf__requests-2317", "sympy__sympy-20590"]);
    assert!(!parse("-django").unwrap().has_words());
}

#[test]
fn quoted_values() {
    let runs = sample();
    assert_eq!(kept(&runs, r#"exit:"submitted (exit_cost)""#), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, r#"-exit:"submitted (exit_cost)""#).len(), 4);
    assert_eq!(kept(&runs, r#"-"(exit_cost)""#).len(), 4);
    assert_eq!(kept(&runs, r#"model:"claude-3-5" steps>100"#), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, r#""""#).len(), 5);
}

#[test]
fn bad_terms_name_themselves() {
    assert_eq!(error("foo:bar"), r#"unknown field "foo" in "foo:bar""#);
    assert_eq!(error("ok -Foo>3"), r#"unknown field "Foo" in "-Foo>3""#);
    assert_eq!(error("steps>x"), r#""steps>x": not a number"#);
    assert_eq!(error("cost<=inf"), r#""cost<=inf": not a number"#);
    assert_eq!(error("edits>"), r#""edits>": missing value"#);
    assert_eq!(error("resolved:maybe"), r#""resolved:maybe": expected yes, no or unknown"#);
    assert_eq!(error("agent>3"), r#""agent>3": use agent:value, not a comparison"#);
    assert_eq!(error("steps:5"), r#""steps:5": use a comparison such as steps>5 or steps=5"#);
    assert_eq!(error("cost:lots"), r#""cost:lots": use a comparison such as cost>N or cost=N"#);
    assert_eq!(error("model:"), r#""model:": missing value"#);
    assert_eq!(error("django -"), r#""-": nothing to negate"#);
    assert_eq!(error(r#"exit:"submitted (exit"#), r#"unterminated quote in "exit:"submitted (exit""#);
}

#[test]
fn free_words_fuzzy_match_and_rank() {
    let runs = sample();
    let m = SkimMatcherV2::default();
    let f = parse("djang 16560").unwrap();
    assert!(f.has_words());
    assert!(f.matches(&runs[0], &LabelIndex::new(), &m).is_some_and(|s| s > 0));
    assert_eq!(kept(&runs, "djang 16560"), ["django__django-16560"]);
    // Words also match the model and exit status; each must match somewhere.
    assert_eq!(kept(&runs, "sonnet"), ["astropy__astropy-12907"]);
    assert_eq!(kept(&runs, "exitcost"), ["astropy__astropy-12907"]);
    assert!(kept(&runs, "django zzz").is_empty());
    // Ranked by score: the contiguous match first.
    let ranked = kept(&runs, "requests");
    assert_eq!(ranked.first().map(String::as_str), Some("psf__requests-2317"));
    // A non-default sort wins over the score.
    let f = parse("django").unwrap();
    let by_steps = apply(&runs, &LabelIndex::new(), &f, Sort { key: SortKey::Steps, descending: false });
    assert_eq!(by_steps, [3, 0]);
}

#[test]
fn sorting_puts_nulls_last_both_ways() {
    let runs = sample();
    let order = |key, descending| apply(&runs, &LabelIndex::new(), &Filter::default(), Sort { key, descending });
    assert_eq!(order(SortKey::Cost, false), [1, 4, 0, 2, 3]);
    assert_eq!(order(SortKey::Cost, true), [0, 4, 1, 2, 3]);
    assert_eq!(order(SortKey::Resolved, false), [3, 0, 4, 1, 2]);
    assert_eq!(order(SortKey::Resolved, true), [1, 3, 0, 4, 2]);
    assert_eq!(order(SortKey::Exit, true), [2, 0, 4, 1, 3]);
    assert_eq!(order(SortKey::Agent, false).last(), Some(&2));
    assert_eq!(order(SortKey::Agent, true).last(), Some(&2));
    assert_eq!(order(SortKey::Steps, true), [0, 2, 3, 1, 4]);
    assert_eq!(order(SortKey::Id, true), [4, 3, 2, 1, 0]);
    assert_eq!(order(SortKey::Instance, false), [2, 3, 0, 4, 1]);
}

#[test]
fn instance_order_is_natural() {
    let runs = vec![run(1, "django__django-10000"), run(2, "Django__django-9999"), run(3, "django__django-0999")];
    assert_eq!(apply(&runs, &LabelIndex::new(), &Filter::default(), Sort::default()), [2, 1, 0]);
    let key = |s: &str| {
        let mut buf = Vec::new();
        crate::review::order::natural_key(&mut buf, s);
        buf
    };
    assert_eq!(key("a01b"), key("A1b"));
    assert!(key("a") < key("a-1") && key("a-1") < key("a1") && key("a1") < key("a_1") && key("a9") < key("a10"));
    assert!(key("x0") < key("x00001") && key("x-") < key("x2") && key("x2") < key("xa"));
}

#[test]
fn sort_cycles_reverses_and_labels() {
    let s = Sort::default();
    assert_eq!(s.label(), "instance ↑");
    assert_eq!(s.reversed().label(), "instance ↓");
    assert_eq!(s.reversed().reversed(), s);
    let mut seen = vec![s.key];
    let mut t = s.reversed();
    for _ in 1..SortKey::iter().count() {
        t = t.next_key();
        assert!(t.descending);
        seen.push(t.key);
    }
    assert_eq!(t.next_key().key, SortKey::Instance);
    seen.sort_by_key(|k| SortKey::iter().position(|a| a == *k));
    assert_eq!(seen, SortKey::iter().collect::<Vec<_>>());
    assert_eq!(Sort { key: SortKey::Steps, descending: true }.label(), "steps ↓");
}

/// `cargo test --release -- --ignored --nocapture filter_speed`
#[test]
#[ignore]
fn filter_speed_100k() {
    let repos = ["django__django", "sympy__sympy", "astropy__astropy", "psf__requests", "scikit-learn__scikit-learn"];
    let models = ["gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "deepseek-v3"];
    let exits = ["submitted", "submitted (exit_cost)", "exit_format", "early_exit"];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let runs: Vec<RunSummary> = (0..100_000)
        .map(|i| {
            let r = next();
            RunSummary {
                steps: (r % 250) as i64,
                edits: (r >> 8) as i64 % 12,
                rejected_edits: (r >> 12) as i64 % 3,
                resolved: [Some(true), Some(false), None][(r >> 16) as usize % 3],
                cost: ((r >> 20) % 4 != 0).then(|| (r >> 24) as f64 % 400.0 / 100.0),
                model: Some(models[(r >> 32) as usize % 3].to_string()),
                exit_status: Some(exits[(r >> 36) as usize % 4].to_string()),
                ..run(i, &format!("{}-{}", repos[(r >> 40) as usize % 5], 10_000 + (r >> 44) % 20_000))
            }
        })
        .collect();
    let cases = [
        ("", Sort::default()),
        ("", Sort { key: SortKey::Cost, descending: true }),
        ("resolved:no steps>100", Sort { key: SortKey::Steps, descending: true }),
        ("-exit:submitted model:claude cost>1.5", Sort { key: SortKey::Model, descending: false }),
        ("djang 16560", Sort::default()),
        ("django", Sort::default()),
        ("sonnet sub", Sort::default()),
    ];
    for (query, sort) in cases {
        let filter = parse(query).unwrap();
        let best = (0..5)
            .map(|_| {
                let t = Instant::now();
                let n = std::hint::black_box(apply(&runs, &LabelIndex::new(), &filter, sort)).len();
                (t.elapsed(), n)
            })
            .min()
            .unwrap();
        println!("{query:>40} | {:<12} {:>7} runs  {:>8.2?}", sort.label(), best.1, best.0);
        if !cfg!(debug_assertions) {
            assert!(best.0.as_millis() < 100, "{query}: {:?}", best.0);
        }
    }
}

#[test]
fn id_terms_keep_the_runs_named_and_the_query_for_a_set_of_runs_is_short() {
    let runs = sample();
    let ids = |query: &str| {
        let mut ids: Vec<i64> =
            kept(&runs, query).iter().filter_map(|i| runs.iter().find(|r| &r.instance_id == i)).map(|r| r.id).collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(ids("id:2"), vec![2]);
    assert_eq!(ids("id:1,4-5"), vec![1, 4, 5]);
    assert_eq!(ids("-id:1-4"), vec![5]);
    assert_eq!(ids_query(&[9, 3, 4, 5, 12, 4]), "id:3-5,9,12");
    assert_eq!(ids(&ids_query(&[5, 1, 2])), vec![1, 2, 5]);
    assert!(error("id:x").contains("expected run ids"), "{}", error("id:x"));
    assert!(error("id>3").contains("use id:N"), "{}", error("id>3"));
}

#[test]
fn failed_is_resolved_no_and_patch_says_whether_something_was_handed_in() {
    let mut runs = sample();
    runs[3].has_patch = false;
    assert_eq!(kept(&runs, "failed"), kept(&runs, "resolved:no"));
    assert_eq!(kept(&runs, "failed"), ["django__django-11099", "django__django-16560", "psf__requests-2317"]);
    assert_eq!(kept(&runs, "patch:no"), ["django__django-11099"]);
    assert_eq!(kept(&runs, "-patch:no failed"), ["django__django-16560", "psf__requests-2317"]);
    assert!(error("patch:maybe").contains("patch:yes or patch:no"));
}
