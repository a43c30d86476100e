//! Onset and blame through the review commands (issue 37): runs blamed on the task or the
//! environment set apart in every statistic (stats, its exports, charts, the report), the
//! filter's `blame:` and `onset:`, the label and run exports' columns, `import-labels` (a
//! different judgement is a different label; a labelled set with its onset reference), and
//! `agreement` on onset and blame.

use super::*;

/// The fixtures, classified (the heuristic blames every failed run on the agent), and ann's
/// labels: mixture the task's, cut-off the environment's, flooding the agent's with an onset,
/// temp-errors with no blame judged.
fn blamed_db() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = fixture_db();
    ok(&db, &["classify"]);
    label(&db, &instance("mixture"), "ann", &["--mode", "missed_edit_location", "--blame", "task"]);
    label(&db, &instance("cut-off"), "ann", &["--unclassified", "--blame", "environment"]);
    label(&db, &instance("flooding"), "ann", &["--mode", "context_flooding", "--onset", "2", "--blame", "agent"]);
    label(&db, &instance("temp-errors"), "ann", &["--mode", "required_temporary_errors"]);
    (dir, db)
}

fn total(stats: &Value) -> (u64, u64, u64, u64, u64) {
    let n = |k: &str| stats["total"][k].as_u64().unwrap_or_else(|| panic!("{k}: {stats}"));
    (n("runs"), n("labelled"), n("blamed_task"), n("blamed_environment"), n("blame_unjudged"))
}

#[test]
fn runs_blamed_on_the_task_or_environment_are_set_apart_in_stats_and_its_exports() {
    let (_dir, db) = blamed_db();
    // 11 failed runs. By the best labels (ann's where she labelled): mixture and cut-off apart.
    let best = stats(&db, &[]);
    assert_eq!(total(&best), (9, 9, 1, 1, 1), "{best}");
    let note = best["blame_note"].as_str().unwrap_or_default();
    assert!(note.starts_with("2 failed runs set apart, blamed on the task (1) or the environment (1)"), "{note}");
    assert!(note.contains("(source best)") && note.contains("1 labelled run whose labels judge no blame"), "{note}");
    // Mixture's modes left the agent's counts: the heuristic gives it missed_edit_location too.
    let heuristic = stats(&db, &["--source", "heuristic"]);
    assert_eq!(total(&heuristic), (11, 11, 0, 0, 0), "the heuristic blames every run on the agent: {heuristic}");
    let missed = |s: &Value| s["total"]["modes"]["missed_edit_location"].as_u64().unwrap_or(0);
    assert_eq!(missed(&best), missed(&heuristic) - 1, "{best}\n{heuristic}");
    // The reviewers' own: the runs ann labelled.
    assert_eq!(total(&stats(&db, &["--source", "human"])), (9, 2, 1, 1, 1));

    // Markdown says it under the table; CSV and JSON lines carry the columns and the note.
    let md = ok(&db, &["stats"]);
    assert!(md.contains("| blamed_task | blamed_environment | blame_unjudged |"), "{md}");
    assert!(md.contains(&format!("\nBlame: {note}\n")), "{md}");
    let (header, rows) = csv_rows(&export(&db, "stats", "csv", &["--by", "exit"]));
    assert_eq!(&header[..STATS_CSV.len()], STATS_CSV);
    let sum = |column: &str| rows[..rows.len() - 1].iter().map(|r| r[column].parse::<u64>().unwrap()).sum::<u64>();
    let last = rows.last().unwrap();
    assert_eq!((last["blamed_task"].as_str(), last["blamed_environment"].as_str()), ("1", "1"));
    assert_eq!((sum("blamed_task"), sum("blamed_environment"), sum("runs")), (1, 1, 9), "groups add up");
    let jsonl = export(&db, "stats", "jsonl", &[]);
    assert!(jsonl.lines().all(|l| serde_json::from_str::<Value>(l).unwrap()["blame_note"] == note), "{jsonl}");
}

#[test]
fn label_and_run_exports_carry_onset_and_blame_and_the_filter_reads_them() {
    let (_dir, db) = blamed_db();
    let (header, rows) = csv_rows(&export(&db, "labels", "csv", &["--current"]));
    assert_eq!(header, LABEL_CSV);
    let ann = |name: &str| rows.iter().find(|r| r["rater"] == "ann" && r["instance_id"] == instance(name)).unwrap();
    let cells =
        |r: &BTreeMap<String, String>| (r["onset_step"].clone(), r["onset_confidence"].clone(), r["blame"].clone());
    assert_eq!(cells(ann("flooding")), ("2".into(), "1".into(), "agent".into()));
    assert_eq!(cells(ann("mixture")), ("".into(), "".into(), "task".into()));
    assert_eq!(cells(ann("temp-errors")), ("".into(), "".into(), "".into()), "judged nothing");
    let md = export(&db, "labels", "markdown", &["--current"]);
    assert!(md.contains("| onset_step | onset_confidence | blame |"), "{md}");

    // A run's blame in the runs table is the one its statistics go by (--source, default best).
    let ids = run_ids(&db);
    let (header, rows) = csv_rows(&export(&db, "runs", "csv", &[]));
    assert_eq!(header.last().map(String::as_str), Some("blame"));
    let blame_of = |rows: &[BTreeMap<String, String>], name: &str| {
        let id = ids[&instance(name)].to_string();
        rows.iter().find(|r| r["run_id"] == id).map(|r| r["blame"].clone()).unwrap()
    };
    for (name, want) in [("mixture", "task"), ("cut-off", "environment"), ("flooding", "agent"), ("temp-errors", "")] {
        assert_eq!(blame_of(&rows, name), want, "{name}");
    }
    assert_eq!(blame_of(&rows, "gold-periphery"), "agent", "the heuristic's, no reviewer");
    let (_, heuristic) = csv_rows(&export(&db, "runs", "csv", &["--source", "heuristic"]));
    assert_eq!(blame_of(&heuristic, "mixture"), "agent");

    // The filter: some current label blames it, or gives an onset.
    let kept = |query: &str| -> Vec<String> {
        let runs = ok_json(&db, &["runs", "--filter", query, "--json"]);
        runs.as_array().unwrap().iter().map(|r| r["instance_id"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(kept("blame:task"), [instance("mixture")]);
    assert_eq!(kept("blame:environment"), [instance("cut-off")]);
    assert_eq!(kept("-blame:agent"), [instance("clean-success")], "the heuristic blames every failed run");
    assert!(kept("onset:yes source:human").contains(&instance("flooding")));
    assert!(kept("onset:no").contains(&instance("clean-success")));
    let out = trajan(&db, &["runs", "--filter", "blame:nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("use blame:agent, blame:task or blame:environment"), "{}", text(&out));
}

#[test]
fn the_charts_and_the_report_say_which_runs_were_set_apart() {
    let (dir, db) = blamed_db();
    let svg = dir.path().join("modes.svg");
    ok(&db, &["export", "chart", "modes", "-o", svg.to_str().unwrap()]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("not counting 2 blamed on the task or the environment"), "{svg:.3000}");
    let html = dir.path().join("r.html");
    ok(&db, &["export", "report", "-o", html.to_str().unwrap(), "--resamples", "0"]);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<th>blamed on the task</th><th>blamed on the environment</th>"), "{html:.3000}");
    assert!(html.contains("id=\"blame-note\">2 failed runs set apart, blamed on the task (1)"), "{html:.3000}");
}

#[test]
fn a_different_onset_or_blame_is_a_different_label_on_import() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    ingest(&a, &[fixtures()]);
    ingest(&b, &[fixtures()]);
    label(&a, &instance("mixture"), "ann", &["--mode", "context_flooding", "--onset", "3", "--blame", "agent"]);
    let file = dir.path().join("a.jsonl");
    ok(&a, &["export", "labels", "--format", "jsonl", "-o", file.to_str().unwrap()]);
    let (code, report, t) = import_with(&b, &file, &[]);
    assert_eq!((code, report["imported"].as_u64()), (Some(0), Some(1)), "{t}");
    let got = labels(&b, false);
    assert_eq!((got[0]["onset"]["step"].as_u64(), got[0]["blame"]["value"].as_str()), (Some(3), Some("agent")));

    // The same time and modes, another blame (and so no onset): not the label here, a conflict.
    let mut other: Value = serde_json::from_str(std::fs::read_to_string(&file).unwrap().trim()).unwrap();
    other["blame"]["value"] = "task".into();
    other["onset"] = Value::Null;
    let changed = dir.path().join("changed.jsonl");
    std::fs::write(&changed, format!("{other}\n")).unwrap();
    let (code, report, t) = import_with(&b, &changed, &[]);
    assert_eq!((code, report["already_present"].as_u64(), report["imported"].as_u64()), (Some(1), Some(0), Some(0)));
    let conflict = report["conflicts"][0].as_str().unwrap_or_default();
    assert!(conflict.contains("(onset 3, blame agent)") && conflict.contains("(blame task)"), "{t}");
    assert_eq!(labels(&b, true).len(), 1, "nothing overwritten");

    // A blame reason over what a note may hold is refused.
    other["blame"]["reason"] = "r".repeat(64 * 1024 + 1).into();
    other["created_at"] = "2030-01-01T00:00:00Z".into();
    std::fs::write(&changed, format!("{other}\n")).unwrap();
    let (_, report, t) = import_with(&b, &changed, &[]);
    assert!(report["rejected"][0].as_str().unwrap_or_default().contains("its blame reason is 64.0 KiB"), "{t}");
}

/// The labelled set of `fixtures/labelled`, ingested.
fn labelled_set() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    let set = common::fixtures_dir("labelled");
    ingest(&db, &[set.join("runs"), set.join("reports")]);
    (dir, db, set)
}

#[test]
fn a_labelled_set_imports_with_its_onset_reference() {
    let (dir, db, set) = labelled_set();
    let (labels_json, onset_json) = (set.join("labels.json"), set.join("onset.json"));
    let onset = ["--onset", onset_json.to_str().unwrap()];
    // First the modes alone (as before onsets were read), then with the onsets: their labels
    // come next in the reference rater's history.
    let (code, report, t) = import_with(&db, &labels_json, &[]);
    assert_eq!((code, report["imported"].as_u64()), (Some(0), Some(30)), "{t}");
    let (code, report, t) = import_with(&db, &labels_json, &onset);
    assert_eq!((code, report["imported"].as_u64(), report["already_present"].as_u64()), (Some(0), Some(30), Some(30)));
    let (_, report, t2) = import_with(&db, &labels_json, &onset);
    assert_eq!((report["imported"].as_u64(), report["already_present"].as_u64()), (Some(0), Some(60)), "{t}{t2}");
    // Each run's current reference label has the onset.json's blame and step (a run is named by
    // its instance and the model its folder spells).
    let reference: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&onset_json).unwrap()).unwrap();
    let fold = |m: &str| m.to_ascii_lowercase().replace('/', "_");
    let runs: BTreeMap<(String, String), u64> = ok_json(&db, &["runs", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (r["instance_id"].as_str().unwrap().to_string(), fold(r["model"].as_str().unwrap())),
                r["id"].as_u64().unwrap(),
            )
        })
        .collect();
    let current: BTreeMap<u64, Value> =
        labels(&db, false).into_iter().map(|l| (l["run_id"].as_u64().unwrap(), l)).collect();
    for entry in &reference {
        let folder = entry["file"].as_str().unwrap().split('/').nth(1).unwrap();
        let run = runs[&(entry["instance_id"].as_str().unwrap().to_string(), fold(folder))];
        let l = &current[&run];
        assert_eq!((&l["onset"]["step"], &l["blame"]["value"]), (&entry["onset"]["step"], &entry["blame"]["value"]));
        assert_eq!(l["created_at"], "1970-01-01T00:00:01.000Z", "{l}");
    }
    // The statistics set the task's runs apart.
    let tasks = reference.iter().filter(|e| e["blame"]["value"] == "task").count() as u64;
    assert_eq!(total(&stats(&db, &["--source", "human"])).2, tasks);

    // An onset reference alone holds no modes; --onset goes with a labelled set only.
    let out = trajan(&db, &["import-labels", onset_json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("import it with its labelled set"), "{}", text(&out));
    let export = dir.path().join("e.jsonl");
    ok(&db, &["export", "labels", "--format", "jsonl", "-o", export.to_str().unwrap()]);
    let out = trajan(&db, &["import-labels", export.to_str().unwrap(), "--onset", onset_json.to_str().unwrap()]);
    assert!(text(&out).contains("--onset goes with a labelled set"), "{}", text(&out));
    // An onset entry that names no run of the set is reported, the others go in.
    let mut odd = reference.clone();
    odd[0]["file"] = "runs/nobody/nothing.traj.json".into();
    let odd_file = dir.path().join("odd.json");
    std::fs::write(&odd_file, serde_json::to_string(&odd).unwrap()).unwrap();
    let (code, report, t) = import_with(&db, &labels_json, &["--onset", odd_file.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{t}");
    let rejected = report["rejected"].to_string();
    assert!(rejected.contains("onset reference, item 1: runs/nobody/nothing.traj.json: no entry"), "{t}");
}

/// A rater's onset step and blame of a run.
type Judged = (Option<u64>, Option<String>);

#[test]
fn agreement_on_onset_and_blame_between_raters_who_judged_the_same_runs() {
    let (_dir, db) = blamed_db();
    label(&db, &instance("gold-periphery"), "ann", &["--mode", "context_flooding", "--onset", "0", "--blame", "agent"]);
    let report = ok_json(&db, &["agreement", "--json", "--resamples", "0"]);
    let pairs = report["onset_and_blame"]["pairs"].as_array().unwrap();
    let pair =
        pairs.iter().find(|p| p["a"] == "heuristic" && p["b"] == "human:ann").unwrap_or_else(|| panic!("{report}"));
    // Expected from the labels themselves: the runs both judged, their steps and blames.
    let current = labels(&db, false);
    let judged = |rater: &str| -> BTreeMap<String, Judged> {
        current
            .iter()
            .filter(|l| l["rater"] == rater && (!l["onset"].is_null() || !l["blame"].is_null()))
            .map(|l| {
                let blame = l["blame"]["value"].as_str().map(str::to_string);
                (l["instance_id"].as_str().unwrap().to_string(), (l["onset"]["step"].as_u64(), blame))
            })
            .collect()
    };
    let (h, a) = (judged("heuristic"), judged("ann"));
    let both: Vec<(&Judged, &Judged)> = a.iter().filter_map(|(run, x)| Some((h.get(run)?, x))).collect();
    assert_eq!(pair["runs"].as_u64(), Some(both.len() as u64), "{pair}");
    let steps: Vec<(u64, u64)> = both.iter().filter_map(|(x, y)| Some((x.0?, y.0?))).collect();
    assert_eq!(pair["onset"]["n"].as_u64(), Some(steps.len() as u64));
    let one_sided = both.iter().filter(|(x, y)| x.0.is_some() != y.0.is_some()).count() as u64;
    assert_eq!(pair["onset"]["one_sided"].as_u64(), Some(one_sided));
    let exact = steps.iter().filter(|(x, y)| x == y).count() as f64 / steps.len() as f64;
    assert_eq!(pair["onset"]["exact"]["value"].as_f64(), Some(exact));
    let distance = steps.iter().map(|(x, y)| x.abs_diff(*y) as f64).sum::<f64>() / steps.len() as f64;
    assert_eq!(pair["onset"]["mean_distance"]["value"].as_f64(), Some(distance));
    let blames = both.iter().filter(|(x, y)| x.1.is_some() && y.1.is_some()).count() as u64;
    let agree = both.iter().filter(|(x, y)| x.1.is_some() && x.1 == y.1).count() as f64;
    assert_eq!(pair["blame"]["n"].as_u64(), Some(blames));
    assert_eq!(pair["blame"]["raw"].as_f64(), Some(agree / blames as f64));
    let task = pair["blame"]["values"].as_array().unwrap().iter().find(|v| v["value"] == "task").unwrap();
    assert_eq!((task["first"].as_u64(), task["second"].as_u64()), (Some(0), Some(1)), "{task}");
    // Ann alone is the reference: it is a rater of its own.
    assert!(pairs.iter().any(|p| p["a"] == "human:ann" && p["b"] == "reference"), "{report}");

    let text = ok(&db, &["agreement", "--resamples", "50"]);
    assert!(text.contains("onset and blame, between raters over the runs both judged"), "{text}");
    assert!(
        text.contains(&format!("  heuristic ~ human:ann: {} runs\n    onset (n {}", both.len(), steps.len())),
        "{text}"
    );
}
