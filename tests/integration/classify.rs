//! The heuristic classifier end to end: the real binary on the classification fixtures (checked
//! against their oracle, fixtures/classify/expected.toml and fixtures/classify-cases/expected.toml)
//! and on the real corpus.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::common;
use crate::common::trajan;

fn ingested(path: &Path) -> (tempfile::TempDir, PathBuf) {
    ingested_all(&[path.to_path_buf()])
}

fn ingested_all(paths: &[PathBuf]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let args: Vec<&str> = std::iter::once("ingest").chain(paths.iter().map(|p| p.to_str().unwrap())).collect();
    let out = trajan(&db, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir, db)
}

/// The failure-mode stories (whole runs, the demo's).
fn fixtures() -> PathBuf {
    common::fixtures_dir("classify")
}

/// The single cases of issue 15 (a language's rename or re-signature, a defect of real runs).
fn cases() -> PathBuf {
    common::fixtures_dir("classify-cases")
}

/// The oracle: both folders' expected.toml, by instance id.
fn oracle() -> toml::Table {
    let mut all = toml::Table::new();
    for root in [fixtures(), cases()] {
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(root.join("expected.toml")).unwrap()).unwrap();
        all.extend(table);
    }
    all
}

/// Latest labels by instance id (one taxonomy in the database).
fn labels(db: &Path) -> HashMap<String, Value> {
    let rows = common::json(db, &["labels", "--json"]);
    rows.as_array().unwrap().iter().map(|r| (r["instance_id"].as_str().unwrap_or("").to_string(), r.clone())).collect()
}

fn modes(label: &Value) -> BTreeSet<String> {
    label["modes"].as_array().unwrap().iter().map(|m| m["mode"].as_str().unwrap().to_string()).collect()
}

fn steps_of(label: &Value, mode: &str) -> BTreeSet<u64> {
    let all = label["modes"].as_array().unwrap().iter().chain(label["considered"].as_array().unwrap());
    all.filter(|m| m["mode"] == mode)
        .flat_map(|m| m["evidence"].as_array().unwrap().iter().map(|e| e["step"].as_u64().unwrap()))
        .collect()
}

#[test]
fn fixtures_get_the_modes_and_evidence_of_their_oracle() {
    let (_dir, db) = ingested_all(&[fixtures(), cases()]);
    let report = common::json(&db, &["classify", "--all", "--json"]);
    assert_eq!(report["errors"].as_array().map(Vec::len), Some(0));
    let oracle = oracle();
    let labels = labels(&db);
    assert_eq!(labels.len(), oracle.len(), "one label per fixture run");
    for (instance, want) in &oracle {
        let label = labels.get(instance).unwrap_or_else(|| panic!("no label for {instance}"));
        let want_modes: BTreeSet<String> =
            want["modes"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        assert_eq!(modes(label), want_modes, "{instance}: {}", label["summary"]);
        assert_eq!(label["exit_category"].as_str(), want["exit"].as_str(), "{instance}");
        for m in label["modes"].as_array().unwrap() {
            assert!(!m["evidence"].as_array().unwrap().is_empty(), "{instance}: {m} cites no step");
            assert!(!m["rationale"].as_str().unwrap().is_empty());
        }
        if let Some(evidence) = want.get("evidence").and_then(|e| e.as_table()) {
            for (mode, steps) in evidence {
                let cited = steps_of(label, mode);
                for s in steps.as_array().unwrap() {
                    let s = s.as_integer().unwrap() as u64;
                    assert!(cited.contains(&s), "{instance}: {mode} should cite step {s}, cites {cited:?}");
                }
            }
        }
    }
}

#[test]
fn classifying_again_changes_nothing_and_the_history_is_kept() {
    let (_dir, db) = ingested(&fixtures());
    // A run named twice is classified once.
    let twice =
        common::json(&db, &["classify", "--taxonomy", "bugfix", "--json", "classify__mixture", "classify__mixture"]);
    assert_eq!(twice["labelled"].as_u64(), Some(1));
    let first = common::json(&db, &["classify", "--json"]);
    let second = common::json(&db, &["classify", "--json"]);
    assert!(first["labelled"].as_u64().unwrap() > 0);
    assert_eq!(second["labelled"].as_u64(), Some(0));
    assert_eq!(second["unchanged"], first["labelled"]);
    // Another taxonomy labels anew, beside the first; `--history` keeps both.
    let bugfix = common::json(&db, &["classify", "--taxonomy", "bugfix", "--json"]);
    assert_eq!(bugfix["labelled"].as_u64(), first["labelled"].as_u64().map(|n| n - 1), "mixture was labelled");
    let history = common::json(&db, &["labels", "--history", "--json"]);
    assert_eq!(history.as_array().unwrap().len() as u64, 2 * first["labelled"].as_u64().unwrap());
    // The current labels are per taxonomy: both stay current.
    let current = common::json(&db, &["labels", "--json"]);
    assert_eq!(current.as_array().unwrap().len() as u64, 2 * first["labelled"].as_u64().unwrap());
}

#[test]
fn the_bugfix_preset_maps_the_same_rules_to_its_own_modes() {
    let (_dir, db) = ingested(&fixtures());
    common::json(&db, &["classify", "--taxonomy", "bugfix", "--json"]);
    let labels = labels(&db);
    let of = |i: &str| modes(&labels[&format!("classify__{i}")]);
    assert!(labels.values().all(|l| l["taxonomy"] == "bugfix"));
    assert!(of("gave-up-applying").contains("failed_to_recover_from_edit"));
    assert!(of("missed-location-gold").contains("failed_to_find_relevant_file"));
    assert!(of("cut-off").contains("ran_out_of_budget"));
    assert!(of("wrong-logic").is_empty(), "wrong logic needs judgement: only the LLM or a human gives it");
}

#[test]
fn a_bad_taxonomy_file_is_refused_before_anything_is_written() {
    let (dir, db) = ingested(&fixtures());
    let bad = dir.path().join("team.toml");
    std::fs::write(&bad, "name = \"team\"\nversion = \"1\"\n[[modes]]\nid = \"x\"\ntitle = \"X\"\ndefinition = \"d\"\nrules = [\"no_such_rule\"]\n").unwrap();
    let out = trajan(&db, &["classify", "--taxonomy", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("team.toml") && err.contains("no_such_rule"), "{err}");
    assert!(labels(&db).is_empty());
    // A team's own taxonomy with a mode no rule serves: every run is unclassified under it.
    std::fs::write(
        &bad,
        "name = \"team\"\nversion = \"7\"\n[[modes]]\nid = \"x\"\ntitle = \"X\"\ndefinition = \"d\"\n",
    )
    .unwrap();
    common::json(&db, &["classify", "--taxonomy", bad.to_str().unwrap(), "--json"]);
    assert!(labels(&db).values().all(|l| l["taxonomy_version"] == "7" && modes(l).is_empty()));
}

#[test]
fn corpus_failed_runs_are_labelled_and_pydicom_rejections_are_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let args: Vec<String> = std::iter::once("ingest".to_string()).chain(common::corpus_paths()).collect();
    let out = trajan(&db, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let runs = common::json(&db, &["runs", "--json"]);
    let count = |verdict: Value| runs.as_array().unwrap().iter().filter(|r| r["resolved"] == verdict).count();
    let (failed, unknown) = (count(Value::Bool(false)), count(Value::Null));
    assert!(failed > 0 && unknown > 0, "the corpus has both");
    // Failed runs are the ones with a known, unresolved verdict; the others are named, not mixed in.
    let out = trajan(&db, &["classify"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{unknown} runs have no known outcome")), "{stderr}");
    assert_eq!(labels(&db).len(), failed, "only the failed runs are labelled");
    let report = common::json(&db, &["classify", "--include-unknown", "--json"]);
    let not_resolved = failed + unknown;
    assert_eq!(report["labelled"].as_u64(), Some(unknown as u64), "the failed runs are unchanged");
    // One label per run (the corpus holds several runs of one instance: counted by run).
    let rows = common::json(&db, &["labels", "--json"]);
    assert_eq!(
        rows.as_array().map(Vec::len),
        Some(not_resolved),
        "asked for, every run not known to be resolved has a label"
    );
    let labels = labels(&db);
    assert!(!labels.contains_key("django__django-11163"), "the resolved run is not classified");
    let pydicom = &labels["pydicom__pydicom-1458"];
    let cited = steps_of(pydicom, "required_temporary_errors");
    assert_eq!(cited, BTreeSet::from([5, 6, 7]), "the three lint-rejected edits: {pydicom}");
    let notes: Vec<&str> =
        pydicom["considered"][0]["evidence"].as_array().unwrap().iter().map(|e| e["note"].as_str().unwrap()).collect();
    assert!(notes.iter().all(|n| n.contains("refused by the linter (E999)")), "{notes:?}");
    // E999 only, recovered at step 8: weighed, not assigned (precision first).
    assert!(modes(pydicom).is_empty());
    let text = String::from_utf8_lossy(&trajan(&db, &["labels", "pydicom__pydicom-1458"]).stdout).into_owned();
    assert!(text.contains("weighed, not assigned: required_temporary_errors") && text.contains("step    5"), "{text}");
}

/// Modes assigned against the oracle's, over every fixture run: (true positives, false positives,
/// false negatives).
fn oracle_counts(db: &Path) -> (usize, usize, usize) {
    let oracle = oracle();
    let labels = labels(db);
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for (instance, want) in &oracle {
        let want: BTreeSet<String> =
            want["modes"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        let got = modes(&labels[instance]);
        tp += want.intersection(&got).count();
        fp += got.difference(&want).count();
        fn_ += want.difference(&got).count();
    }
    (tp, fp, fn_)
}

#[test]
fn precision_and_recall_on_the_oracle_meet_the_goal() {
    let (_dir, db) = ingested_all(&[fixtures(), cases()]);
    common::json(&db, &["classify", "--all", "--json"]);
    let (tp, fp, fn_) = oracle_counts(&db);
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!("fixture oracle: TP {tp}, FP {fp}, FN {fn_}; precision {precision:.2}, recall {recall:.2}");
    // The goal of issue 15 on real runs: precision >= 0.8 at recall >= 0.75.
    assert!(precision >= 0.8 && recall >= 0.75, "precision {precision:.2}, recall {recall:.2}");
}

/// `trajan signals RUN` as text.
fn signals_text(db: &Path, run: &str) -> String {
    let out = trajan(db, &["signals", run]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn signals_list_definitions_renames_and_stale_references_in_seven_languages() {
    let (_dir, db) = ingested(&cases());
    let cases: &[(&str, &[&str])] = &[
        (
            "classify__lang-python-resign",
            &[
                "definitions changed in src/confkit/loader.py (python)",
                "re-signed function load_config: `def load_config(path)` → `def load_config(path, env)`",
                "still used by src/confkit/watch.py (step 0, call with 1 arguments)",
            ],
        ),
        (
            "classify__lang-java-rename",
            &[
                "definitions changed in src/main/java/io/jsonkit/JsonReader.java (java)",
                "renamed method JsonReader.readStrict: readObjectStrict → readStrict",
                "src/main/java/io/jsonkit/Loader.java (step 0, call)",
            ],
        ),
        (
            "classify__lang-ts-resign",
            &["(typescript)", "re-signed function formatPrice", "src/invoice.ts (step 0, call with 2 arguments)"],
        ),
        (
            "classify__lang-go-rename",
            &[
                "definitions changed in store.go (go)",
                "renamed method Store.Lookup: GetItem → Lookup",
                "cache.go (step 0, call)",
            ],
        ),
        (
            "classify__lang-c-header",
            &[
                "re-signed function parse_header",
                "include/http.h (step 0, declaration int parse_header(const char *line, size_t len, struct header *out))",
            ],
        ),
        (
            "classify__lang-cpp-header",
            &[
                "re-signed method Widget::resize: `int Widget::resize(int w)` → `int Widget::resize(int w, int h)`",
                "include/widgets/widget.hpp (step 0, declaration int resize(int w))",
                "src/layout.cpp (step 0, call with 1 arguments)",
                "untouched: include/widgets/widget.hpp (header), src/layout.cpp (call site)",
            ],
        ),
        (
            "classify__lang-java-mvn",
            &["src/main/java/com/shopkit/invoice/Invoice.java (step 5, call with 2 arguments (javac at line 18))"],
        ),
        (
            "classify__lang-ts-tsc-rename",
            &["src/invoice.ts (step 5, unresolved (TS2724 at line 1))", "src/format.test.ts (step 5, unresolved"],
        ),
        (
            "classify__lang-rust-rename",
            &["(rust)", "renamed method Tokenizer::advance: next_token → advance", "src/repl.rs (step 0, call)"],
        ),
    ];
    for (run, wants) in cases {
        let text = signals_text(&db, run);
        for want in *wants {
            assert!(text.contains(want), "{run}: `{want}` not in\n{text}");
        }
    }
    // Negatives: carried everywhere, or callers that still fit.
    for run in [
        "classify__lang-go-complete",
        "classify__lang-ts-optional",
        "classify__lang-java-mvn-complete",
        "classify__lang-ts-tsc-complete",
    ] {
        let text = signals_text(&db, run);
        assert!(text.contains("definitions changed") && !text.contains("stale reference"), "{run}:\n{text}");
    }
}

#[test]
fn the_real_java_openhands_run_lists_the_method_it_added_and_its_scratch_file() {
    let (_dir, db) = ingested(&common::fixtures_dir("corpus/openhands-java"));
    let text = signals_text(&db, "alibaba__fastjson2-2775");
    for want in [
        "definitions changed in core/src/main/java/com/alibaba/fastjson2/JSON.java (java)",
        "added method parseObject: `static <T> T parseObject(String text, Type type, JSONReader.Context context)`",
        "ReproJSONParseTypeWithContext.java: applied at 13,17; rejected at -; opened at -; created; scratch",
        "no linter gate",
    ] {
        assert!(text.contains(want), "`{want}` not in\n{text}");
    }
    // Its outcome is unknown; asked for, it gets a label with no mode (an added overload is no
    // stale periphery).
    let report = common::json(&db, &["classify", "--include-unknown", "--json"]);
    assert_eq!(report["labelled"].as_u64(), Some(1));
    assert!(modes(&labels(&db)["alibaba__fastjson2-2775"]).is_empty());
}

#[test]
fn the_llm_prompt_carries_the_new_signals() {
    let (dir, db) = ingested(&cases());
    let out = common::command()
        .arg("--db")
        .arg(&db)
        .args(["classify", "--llm", "--dry-run", "classify__lang-cpp-header", "classify__located-regression"])
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "a stale reference is a file the agent did not change",
        "definitions changed in src/widget.cpp (cpp)",
        "stale reference: `resize` (re-signed to `int Widget::resize(int w, int h)`)",
        "gold location widgets::Widget::resize: shown step 0, changed by the agent",
        "harness tests: FAIL_TO_PASS 1 passed, 0 failed; PASS_TO_PASS 1 passed, 1 failed (the fix is in place; regressions elsewhere)",
    ] {
        assert!(text.contains(want), "`{want}` not in the dry run:\n{text}");
    }
    // A real run's loop (django-16560 of the corpus: its reproduction script failing the same way
    // after each edit) is evidence in the prompt too.
    let (dir, db) = ingested(&common::fixtures_dir("corpus/mini-swe-agent-1"));
    let out = common::command()
        .arg("--db")
        .arg(&db)
        .args(["classify", "--llm", "--dry-run", "django__django-16560"])
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "a loop is the same check failing the same way after each edit",
        "loop: `python reproduce_issue_v2.py` failed the same way at [97,114,116]",
        "re-signed method CheckConstraint.__init__",
    ] {
        assert!(text.contains(want), "`{want}` not in the dry run:\n{text}");
    }
}

/// A submission adding a list nested 30,000 deep, a name at every level (issue 24): the walk
/// over its syntax tree was quadratic in depth (two minutes at 100,000 deep, and `classify`
/// labelled no run at all, not the normal one beside it either). Both are labelled.
#[test]
fn a_run_whose_patch_nests_deep_is_classified_and_so_is_the_one_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 30_000;
    let deep = format!("x = {}1{}", "[a, ".repeat(depth), "]".repeat(depth));
    let traj = |patch: &str| {
        serde_json::json!({"trajectory": [{"action": "ls", "observation": "x", "thought": "t", "response": "t",
            "state": "{\"open_file\": \"n/a\", \"working_dir\": \"/testbed\"}"}],
            "history": [], "info": {"exit_status": "submitted", "submission": patch}})
        .to_string()
    };
    let patch = |body: &str| {
        format!("diff --git a/d.py b/d.py\n--- a/d.py\n+++ b/d.py\n@@ -1 +1,2 @@\n-x = 1\n+{body}\n+y = 2\n")
    };
    std::fs::write(dir.path().join("deep__nest-1.traj"), traj(&patch(&deep))).unwrap();
    std::fs::write(dir.path().join("normal__nest-2.traj"), traj(&patch("x = 2"))).unwrap();
    let (_db_dir, db) = ingested(dir.path());
    let report = common::json(&db, &["classify", "--all", "--json"]);
    assert_eq!(report["errors"].as_array().map(Vec::len), Some(0), "{report}");
    let labels = labels(&db);
    assert!(labels.contains_key("deep__nest-1") && labels.contains_key("normal__nest-2"), "{labels:?}");
}
