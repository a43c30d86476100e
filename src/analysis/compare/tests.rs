use super::*;
use crate::model::StepFlags;

fn step(head: &str) -> Signature {
    let flags = StepFlags {
        edit: head.starts_with("edit ") || head.starts_with("str_replace_editor str_replace"),
        test_run: head.contains("pytest"),
        ..StepFlags::default()
    };
    let edited = head.strip_prefix("edit ");
    signature(&StepFacts { tool: None, head, flags, edited })
}

fn run(heads: &[&str]) -> Vec<Signature> {
    heads.iter().map(|h| step(h)).collect()
}

/// The rows as step positions, `-` for a gap, one string per row.
fn shown(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|r| r.iter().map(|c| c.map_or("-".to_string(), |i| i.to_string())).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn signatures_name_the_kind_the_file_and_the_command() {
    let open = step("open src/marshmallow/fields.py 1474");
    assert_eq!((open.kind, open.file.as_deref()), (Kind::View, Some("src/marshmallow/fields.py")));
    // Another line of the same file, another path to it, another tool: the same step.
    assert_eq!(step("open /testbed/src/marshmallow/fields.py 10"), open);
    assert_eq!(step("cat /testbed/src/marshmallow/fields.py"), open);
    assert_eq!(step("str_replace_editor view /testbed/src/marshmallow/fields.py"), open);
    assert_eq!(step("edit /r/a.py"), step("str_replace_editor str_replace /r/a.py --old_str x"));
    assert_eq!(step("cd /testbed && grep -rn TimeDelta src").kind, Kind::Search);
    assert_eq!(step("edit /testbed/src/a.py").file.as_deref(), Some("src/a.py"));
    assert_eq!(step("python -m pytest tests/test_fields.py").kind, Kind::Test);
    assert_eq!(step("submit").kind, Kind::Submit);
    let r = step("python reproduce.py");
    assert_eq!((r.kind, r.command.as_str(), r.target.as_deref()), (Kind::Run, "python", Some("reproduce.py")));
}

#[test]
fn similar_steps_share_a_row_and_others_do_not() {
    let a = step("grep -rn foo src");
    let b = step("grep -rn bar src");
    assert!(similarity(&a, &b) >= SIMILAR, "one command word, another pattern: similar");
    assert!(similarity(&step("open a.py"), &step("open b.py")) < SIMILAR);
    assert_eq!(similarity(&step("open a.py"), &step("edit a.py")), 0.0);
}

#[test]
fn identical_runs_align_row_for_row_without_divergence() {
    let a = run(&["ls", "open a.py", "edit a.py", "submit"]);
    let rows = align(&[a.clone(), a.clone()]);
    assert_eq!(shown(&rows), ["0 0", "1 1", "2 2", "3 3"]);
    assert!(divergences(&rows, &[a.clone(), a]).is_empty());
}

#[test]
fn a_step_only_one_run_took_leaves_a_gap_and_is_the_divergence_point() {
    let a = run(&["ls", "open a.py", "edit a.py", "python r.py", "submit"]);
    let b = run(&["ls", "open a.py", "open b.py", "edit b.py", "python r.py", "submit"]);
    let runs = [a, b];
    let rows = align(&runs);
    assert_eq!(shown(&rows), ["0 0", "1 1", "2 -", "- 2", "- 3", "3 4", "4 5"]);
    // Where they first looked at or changed something different: row 2 (A edits a.py, B opens b.py).
    assert_eq!(divergences(&rows, &runs), vec![Divergence { row: 2, end: 5 }]);
}

#[test]
fn similar_steps_between_anchors_are_paired() {
    let a = run(&["ls", "grep -rn foo src", "open a.py", "submit"]);
    let b = run(&["ls", "grep -rn Foo .", "open a.py", "submit"]);
    let runs = [a, b];
    let rows = align(&runs);
    assert_eq!(shown(&rows), ["0 0", "1 1", "2 2", "3 3"]);
    // The searches differ (another pattern): a divergence of one row.
    assert_eq!(divergences(&rows, &runs), vec![Divergence { row: 1, end: 2 }]);
}

#[test]
fn differences_in_plain_commands_are_not_divergences() {
    let a = run(&["ls", "python r.py", "open a.py"]);
    let b = run(&["ls", "pip install -e .", "open a.py"]);
    let runs = [a, b];
    let rows = align(&runs);
    assert_eq!(shown(&rows), ["0 0", "1 -", "- 1", "2 2"]);
    assert!(divergences(&rows, &runs).is_empty());
}

#[test]
fn three_runs_align_progressively() {
    let a = run(&["open a.py", "edit a.py", "submit"]);
    let b = run(&["pip install -e .", "open a.py", "edit a.py", "submit"]);
    let c = run(&["open a.py", "pytest t.py", "edit a.py", "submit"]);
    let runs = [a, b, c];
    let rows = align(&runs);
    assert_eq!(shown(&rows), ["- 0 -", "0 1 0", "- - 1", "1 2 2", "2 3 3"]);
    assert_eq!(divergences(&rows, &runs), vec![Divergence { row: 2, end: 3 }]);
    // Every step of every run once, in order.
    for (k, r) in runs.iter().enumerate() {
        let col: Vec<usize> = rows.iter().filter_map(|row| row[k]).collect();
        assert_eq!(col, (0..r.len()).collect::<Vec<_>>());
    }
}

#[test]
fn runs_that_share_nothing_are_all_gaps() {
    let a = run(&["open a.py", "open b.py"]);
    let b = run(&["grep x", "edit c.py"]);
    let runs = [a, b];
    let rows = align(&runs);
    assert_eq!(rows.len(), 4);
    assert_eq!(divergences(&rows, &runs), vec![Divergence { row: 0, end: 4 }]);
}

#[test]
fn patches_compare_by_file_and_hunk_with_the_gold_patch() {
    let common = "@@ -1,2 +1,2 @@\n x\n-a = 1\n+a = 2\n";
    let a = format!("diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n{common}@@ -9 +9 @@\n-b\n+c\n");
    // The same change found at another line, and a file only this run touched.
    let b = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -5,2 +5,2 @@\n y\n-a = 1\n+a = 2\ndiff --git a/g.py b/g.py\n--- a/g.py\n+++ b/g.py\n@@ -1 +1 @@\n-q\n+r\n";
    let gold = format!("diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n{common}");
    let files = compare_patches(&[Some(&a), Some(b)], Some(&gold));
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["f.py", "g.py"]);
    let f = &files[0];
    assert_eq!((f.runs.clone(), f.gold), (vec![true, true], Some(true)));
    assert_eq!(f.hunks.len(), 2);
    assert!(f.hunks[0].in_all(), "{:?}", f.hunks[0]);
    assert_eq!((f.hunks[1].runs.clone(), f.hunks[1].gold), (vec![true, false], Some(false)));
    assert_eq!((files[1].runs.clone(), files[1].gold), (vec![false, true], Some(false)));
    // No gold patch known; a run that submitted nothing.
    let files = compare_patches(&[Some(&a), None], None);
    assert_eq!((files[0].runs.clone(), files[0].gold), (vec![true, false], None));
}

/// Two runs of `n` steps that differ every so often, as a long run would.
fn long_pair(n: usize) -> [Vec<Signature>; 2] {
    let files = ["a.py", "b.py", "c.py", "d.py", "e.py"];
    let head = |i: usize, salt: usize| match (i * 7 + salt) % 5 {
        0 => format!("open {}", files[(i + salt) % files.len()]),
        1 => format!("grep -rn name{} src", i % 13),
        2 => format!("edit {}", files[i % files.len()]),
        3 => "python reproduce.py".to_string(),
        _ => "pytest tests".to_string(),
    };
    let a: Vec<Signature> = (0..n).map(|i| step(&head(i, 0))).collect();
    let b: Vec<Signature> = (0..n).map(|i| step(&head(i, usize::from(i % 50 == 0)))).collect();
    [a, b]
}

#[test]
fn long_runs_keep_every_step_in_order() {
    let runs = long_pair(3000);
    let rows = align(&runs);
    for (k, r) in runs.iter().enumerate() {
        let col: Vec<usize> = rows.iter().filter_map(|row| row[k]).collect();
        assert_eq!(col, (0..r.len()).collect::<Vec<_>>());
    }
    assert!(rows.len() < 3300, "mostly aligned: {} rows", rows.len());
}

#[test]
fn runs_in_any_order_give_the_same_rows() {
    let a = run(&["open a.py", "edit a.py", "submit"]);
    let b = run(&["pip install -e .", "open a.py", "grep -rn x src", "edit a.py", "submit"]);
    let c = run(&["open a.py", "pytest t.py", "grep -rn y src", "edit b.py", "submit"]);
    let d = run(&["ls", "open a.py", "python r.py", "edit a.py", "pytest t.py", "submit"]);
    let runs = [a, b, c, d];
    let rows = align(&runs);
    // Every permutation of the four runs: the same rows, their cells permuted alike.
    let mut perms: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..runs.len() {
        perms = perms
            .into_iter()
            .flat_map(|p| {
                let rest: Vec<usize> = (0..runs.len()).filter(|k| !p.contains(k)).collect();
                rest.into_iter().map(move |k| [p.clone(), vec![k]].concat())
            })
            .collect();
    }
    for perm in perms {
        let given: Vec<Vec<Signature>> = perm.iter().map(|&k| runs[k].clone()).collect();
        let back: Vec<Row> = align(&given)
            .into_iter()
            .map(|row| (0..runs.len()).map(|k| row[perm.iter().position(|&p| p == k).unwrap_or(0)]).collect())
            .collect();
        assert_eq!(shown(&back), shown(&rows), "runs given as {perm:?}");
    }
}

#[test]
fn a_block_over_the_cell_budget_is_paired_within_a_band() {
    // Every step similar (one command word), none the same: one unanchored block of n × n cells,
    // more than the budget.
    let n = 1100;
    assert!(n * n > align::MAX_CELLS);
    let a: Vec<Signature> = (0..n).map(|i| step(&format!("grep -rn foo{i} src"))).collect();
    let b: Vec<Signature> = (0..n).map(|i| step(&format!("grep -rn bar{i} src"))).collect();
    let rows = align(&[a, b]);
    assert_eq!(rows.len(), n, "paired row for row, not left as gaps");
    assert!(rows.iter().enumerate().all(|(i, r)| r == &vec![Some(i), Some(i)]));
}

/// Two runs of `n` steps that share only every 97th step (an edit of its own file), in between
/// steps of their own.
fn almost_disjoint(n: usize) -> [Vec<Signature>; 2] {
    let head = |i: usize, side: &str| {
        if i.is_multiple_of(97) { format!("edit f{i}.py") } else { format!("python {side}{}.py", (i * 7919) % 1013) }
    };
    [(0..n).map(|i| step(&head(i, "a"))).collect(), (0..n).map(|i| step(&head(i, "b"))).collect()]
}

#[test]
fn runs_that_differ_almost_everywhere_pair_every_shared_step() {
    // Long runs that share one step in 97: every shared step is on one row, and aligning again
    // gives the same rows (no time limit decides how far the diff searches).
    let runs = almost_disjoint(20_000);
    let rows = align(&runs);
    let shared = rows.iter().filter(|r| r[0].is_some() && r[0] == r[1] && r[0].is_some_and(|i| i % 97 == 0)).count();
    assert_eq!(shared, 20_000usize.div_ceil(97));
    assert_eq!(rows, align(&runs));
}

#[test]
fn files_are_told_apart_by_their_folder() {
    // Two utils.py in different folders are two files; one path by two roots is one.
    assert_ne!(step("open /testbed/src/utils.py"), step("open /testbed/lib/utils.py"));
    assert_eq!(step("open /testbed/src/utils.py"), step("open ./src/utils.py"));
    assert!(similarity(&step("open src/utils.py"), &step("open lib/utils.py")) < SIMILAR);
    let mut runs = [run(&["open src/utils.py", "edit src/utils.py"]), run(&["open lib/utils.py", "edit lib/utils.py"])];
    unify_files(&mut runs);
    let rows = align(&runs);
    assert_eq!(divergences(&rows, &runs), vec![Divergence { row: 0, end: rows.len() }]);
    // A bare name is the one file of that name the runs name with a folder.
    let mut runs = [run(&["open utils.py", "submit"]), run(&["open /testbed/src/utils.py", "submit"])];
    unify_files(&mut runs);
    assert_eq!(runs[0][0], runs[1][0]);
    // ... and stays bare when two files have it.
    let mut runs = [run(&["open utils.py"]), run(&["open src/utils.py"]), run(&["open lib/utils.py"])];
    unify_files(&mut runs);
    assert_eq!(runs[0][0].file.as_deref(), Some("utils.py"));
}

/// `nl -ba FILE | sed -n 'A,Bp'` (numbered lines of a file, a window of them) is a view of
/// FILE, as `sed -n` and `cat` are, however it is written.
#[test]
fn a_numbered_listing_piped_to_sed_is_a_view_of_its_file() {
    let cat = step("cat /testbed/src/a.py");
    for head in [
        "nl -ba /testbed/src/a.py | sed -n '10,40p'",
        "nl -ba src/a.py | sed -n 10,40p",
        "cd /testbed && nl -ba src/a.py | sed -n '1,80p'",
        "cat -n src/a.py | sed -n '5,9p'",
        "sed -n '10,40p' src/a.py | nl -ba",
        "nl -ba -- src/a.py",
    ] {
        let s = step(head);
        assert_eq!((s.kind, s.file.as_deref()), (Kind::View, Some("src/a.py")), "{head}");
        assert_eq!(s, cat, "{head}: the same step as cat");
    }
}
