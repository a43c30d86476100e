//! Each edit form on hand-written steps: what the reconstruction draws, how sure it is, what
//! checked it.

mod bounds;

use super::*;
use crate::model::{Certainty, CheckedBy, EditStatus, EditTrace, Step};

/// A file of ten numbered lines, as `cat` prints it.
const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

/// The steps replayed (each run by the shell, applied) and the submission traced.
pub(super) fn replay(steps: &[(&str, &str)], submission: Option<&str>) -> Run {
    let mut run = Run {
        steps: steps
            .iter()
            .map(|(a, o)| Step { action: a.to_string(), observation: o.to_string(), ..Step::default() })
            .collect(),
        submission: submission.map(str::to_string),
        ..Run::default()
    };
    if let Some(s) = submission {
        run.edits.extend(crate::analysis::edits::final_patch_edits(s));
    }
    let exec = vec![Exec::Shell(EditStatus::Applied); steps.len()];
    reconstruct(&mut run, &exec);
    run
}

/// The reconstructed edit of a step.
pub(super) fn edit_at(run: &Run, step: usize) -> &Edit {
    run.edits
        .iter()
        .find(|e| e.step == Some(step))
        .unwrap_or_else(|| panic!("no edit at step {step}: {:#?}", run.edits))
}

fn certainty(run: &Run, step: usize) -> Option<Certainty> {
    edit_at(run, step).trace.certainty
}

/// The removed and added lines of an edit's diff.
fn changes(e: &Edit) -> Vec<String> {
    let diff = e.diff.as_deref().unwrap_or("");
    crate::analysis::diff::changed_lines(diff).iter().map(|l| format!("{}{}", l.mark, l.text)).collect()
}

fn hunk_headers(e: &Edit) -> Vec<String> {
    crate::analysis::diff::hunks(e.diff.as_deref().unwrap_or("")).iter().map(|h| h.header.to_string()).collect()
}

#[test]
fn sed_substitutions_flags_delimiters_chains_and_extended() {
    let r = replay(
        &[
            ("cat f.py", TEN),
            ("sed -i 's/o/0/g' f.py", ""),
            ("sed -i -e 's|thr|THR|' -e 's#f#F#' f.py", ""),
            ("sed -i 's/NINE/9/I' f.py", ""),
            ("sed -i -E 's/(s)(e)ven/\\2\\1/' f.py", ""),
            ("sed -i 's/e/E/2' f.py", ""),
            ("cat f.py", "0ne\ntw0\nTHReE\nF0ur\nFive\nsix\nes\neight\n9\nten\n"),
        ],
        None,
    );
    assert_eq!(changes(edit_at(&r, 1)), ["-one", "-two", "+0ne", "+tw0", "-four", "+f0ur"]);
    assert_eq!(changes(edit_at(&r, 2)), ["-three", "-f0ur", "-five", "+THRee", "+F0ur", "+Five"]);
    assert_eq!(changes(edit_at(&r, 3)), ["-nine", "+9"]);
    assert_eq!(changes(edit_at(&r, 4)), ["-seven", "+es"]);
    assert_eq!(changes(edit_at(&r, 5)), ["-THRee", "+THReE"]);
    for step in 1..=5 {
        assert_eq!(certainty(&r, step), Some(Certainty::Verified), "step {step}");
        assert_eq!(edit_at(&r, step).trace.checked_by, Some(CheckedBy::Step(6)));
    }
    assert_eq!(edit_at(&r, 2).trace.command.as_deref(), Some("sed -i -e 's|thr|THR|' -e 's#f#F#' f.py"));
}

#[test]
fn sed_addresses_line_range_pattern_and_last() {
    let r = replay(
        &[
            ("cat f.py", TEN),
            ("sed -i '2s/two/TWO/' f.py", ""),
            ("sed -i '4,5s/^/# /' f.py", ""),
            ("sed -i '/seven/s/s/S/' f.py", ""),
            ("sed -i '$s/ten/TEN/' f.py", ""),
        ],
        None,
    );
    assert_eq!(hunk_headers(edit_at(&r, 1)), ["@@ -1,5 +1,5 @@"]);
    assert_eq!(changes(edit_at(&r, 2)), ["-four", "-five", "+# four", "+# five"]);
    assert_eq!(changes(edit_at(&r, 3)), ["-seven", "+Seven"]);
    assert_eq!(changes(edit_at(&r, 4)), ["-ten", "+TEN"]);
    assert!((1..=4).all(|s| certainty(&r, s) == Some(Certainty::Simulated)));
}

#[test]
fn sed_append_insert_change_delete_number_the_lines_that_follow() {
    let r = replay(
        &[
            ("sed -n '1,10p' f.py", TEN),
            ("sed -i '2a\\    after two' f.py", ""),
            ("sed -i '1i\\# head' f.py", ""),
            ("sed -i '5,6c\\THREE-FOUR' f.py", ""),
            ("sed -i '7d' f.py", ""),
            ("sed -n '1,7p' f.py", "# head\none\ntwo\n    after two\nTHREE-FOUR\nfive\nseven\n"),
        ],
        None,
    );
    assert_eq!(hunk_headers(edit_at(&r, 1)), ["@@ -1,5 +1,6 @@"]);
    assert_eq!(changes(edit_at(&r, 1)), ["+    after two"]);
    assert_eq!(changes(edit_at(&r, 3)), ["-three", "-four", "+THREE-FOUR"]);
    assert_eq!(changes(edit_at(&r, 4)), ["-six"]);
    assert_eq!(hunk_headers(edit_at(&r, 4)), ["@@ -4,7 +4,6 @@"]);
    for step in 1..=4 {
        assert_eq!(certainty(&r, step), Some(Certainty::Verified), "step {step}");
    }
}

#[test]
fn perl_in_place_substitutions() {
    let r = replay(&[("cat f.py", TEN), ("perl -pi -e 's/(t)(en)/$2$1/g; s/one/1/' f.py", "")], None);
    assert_eq!(changes(edit_at(&r, 1)), ["-one", "+1", "-ten", "+ent"]);
    let r = replay(&[("cat f.py", TEN), ("perl -i -pe 'print \"x\" if /one/' f.py", "")], None);
    assert_eq!(certainty(&r, 1), Some(Certainty::Unknown));
}

#[test]
fn echo_printf_and_heredoc_writes_replace_or_append() {
    let r = replay(
        &[
            ("echo 'x = 1' > conf.py", ""),
            ("printf 'y = %s\\n' 2 >> conf.py", ""),
            ("cat conf.py", "x = 1\ny = 2\n"),
            ("cat <<'EOF' > conf.py\nx = 1\nz = 3\nEOF", ""),
            ("tee -a conf.py <<EOF\nw = 4\nEOF", ""),
            ("echo 'v = 5' | tee -a conf.py", ""),
            ("cat conf.py", "x = 1\nz = 3\nw = 4\nv = 5\n"),
        ],
        None,
    );
    assert_eq!(changes(edit_at(&r, 0)), ["+x = 1"]);
    assert_eq!(changes(edit_at(&r, 1)), ["+y = 2"]);
    assert_eq!(changes(edit_at(&r, 3)), ["-y = 2", "+z = 3"]);
    assert_eq!(changes(edit_at(&r, 4)), ["+w = 4"]);
    assert_eq!(changes(edit_at(&r, 5)), ["+v = 5"]);
    assert_eq!(certainty(&r, 1), Some(Certainty::Verified));
    assert_eq!(certainty(&r, 5), Some(Certainty::Verified));
}

#[test]
fn git_apply_and_patch_with_the_diff_in_the_action() {
    let diff = "--- a/f.py\n+++ b/f.py\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n";
    let fix = "--- a/f.py\n+++ b/f.py\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n six\n";
    let r = replay(
        &[
            ("cat f.py", TEN),
            (&format!("git apply <<'EOF'\n{diff}EOF"), ""),
            (&format!("cat > fix.diff <<'EOF'\n{fix}EOF"), ""),
            ("patch -p1 < fix.diff", "patching file f.py"),
            ("sed -n '2,6p' f.py", "two\nTHREE\nfour\nFIVE\nsix\n"),
            ("git apply -R fix.diff", ""),
        ],
        None,
    );
    assert_eq!(changes(edit_at(&r, 1)), ["-three", "+THREE"]);
    assert_eq!(certainty(&r, 1), Some(Certainty::Verified));
    let applied = r.edits.iter().find(|e| e.step == Some(3)).expect("patch edit");
    assert_eq!(changes(applied), ["-five", "+FIVE"]);
    assert_eq!(applied.trace.certainty, Some(Certainty::Verified));
    assert_eq!(changes(edit_at(&r, 5)), ["-FIVE", "+five"], "reversed");
}

#[test]
fn git_checkout_restore_and_stash_mark_earlier_edits_undone() {
    let r = replay(
        &[
            ("cat f.py", TEN),
            ("sed -i 's/one/1/' f.py", ""),
            ("git checkout -- f.py", ""),
            ("sed -i 's/two/2/' f.py", ""),
            ("git stash", "Saved working directory"),
            ("git stash pop", ""),
            ("git restore f.py", ""),
            ("head -n 2 f.py", "one\ntwo\n"),
        ],
        None,
    );
    assert_eq!(edit_at(&r, 1).trace.undone_at, Some(2));
    // Stashed and popped back: undone only by the restore.
    assert_eq!(edit_at(&r, 3).trace.undone_at, Some(6));
    // The file is back to what it was: the view at step 7 agrees and checks nothing.
    assert_eq!(certainty(&r, 3), Some(Certainty::Simulated));
}

#[test]
fn scripts_are_attributed_from_the_next_view_or_the_submitted_patch() {
    // A script whose text the replay cannot know (`pyscript` simulates the ones it can).
    let script = "python - <<'PY'\nimport re\ns = open('f.py').read()\nopen('f.py', 'w').write(re.sub(r'th(r)ee', lambda m: '3', s))\nPY";
    let r = replay(&[("cat f.py", TEN), (script, ""), ("sed -n '2,4p' f.py", "two\n3\nfour\n")], None);
    let e = edit_at(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(changes(e), ["-three", "+3"]);
    assert_eq!(e.trace.checked_by, Some(CheckedBy::Step(2)));
    // No view after: the submitted patch says what the script did.
    let patch = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -2,3 +2,3 @@\n two\n-three\n+3\n four\n";
    let fix = "cat > fix.py <<'EOF'\nimport sys\nopen('f.py', 'w').write(sys.argv[1])\nEOF";
    let r = replay(&[(fix, ""), ("python fix.py 3", "")], Some(patch));
    let e = edit_at(&r, 1);
    assert_eq!(e.path, "f.py");
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed));
    assert!(changes(e).contains(&"+3".to_string()), "{:?}", e.diff);
    let final_patch = r.edits.iter().find(|e| e.step.is_none()).expect("final patch");
    assert_eq!(final_patch.trace.hunks[0].steps, [1]);
}

#[test]
fn later_views_verify_or_contradict_and_no_match_changes_nothing() {
    let r = replay(
        &[
            ("cat f.py", TEN),
            ("sed -i 's/two/TWO/' f.py", ""),
            ("sed -i 's/nowhere/x/' f.py", ""),
            ("sed -i '9s/nine/NINE/' f.py", ""),
            ("sed -i 's/zz/y/' other.py", ""),
            ("head -n 3 f.py", "one\nTWO\nthree\n"),
            ("tail -n 2 f.py", "nine\nten\n"),
        ],
        None,
    );
    assert_eq!(certainty(&r, 1), Some(Certainty::Verified));
    assert_eq!(certainty(&r, 2), Some(Certainty::Unchanged));
    assert_eq!(edit_at(&r, 2).diff, None);
    let contradicted = edit_at(&r, 3);
    assert_eq!(contradicted.trace.certainty, Some(Certainty::Contradicted));
    assert_eq!(contradicted.trace.checked_by, Some(CheckedBy::Step(6)));
    // Both: the reconstructed lines and what the view showed.
    assert_eq!(changes(contradicted), ["-nine", "+NINE"]);
    let shown = contradicted.trace.shown.as_deref().unwrap_or_default();
    assert!(shown.contains("-NINE") && shown.contains("+nine"), "{shown}");
    assert_eq!(certainty(&r, 4), Some(Certainty::Unknown), "nothing known of other.py");
}

#[test]
fn submitted_hunks_are_traced_to_the_steps_that_made_them() {
    let patch = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n three\n@@ -8,3 +8,3 @@\n eight\n-nine\n+NINE\n ten\n";
    let r = replay(&[("sed -i '1s/one/ONE/' f.py", "")], Some(patch));
    // The patch's old side seeded line 1: the edit is drawn, and the patch verifies it.
    assert_eq!(changes(edit_at(&r, 0)), ["-one", "+ONE"]);
    assert_eq!(edit_at(&r, 0).trace.checked_by, Some(CheckedBy::Submission));
    let hunks = &r.edits.iter().find(|e| e.step.is_none()).expect("final patch").trace.hunks;
    assert_eq!((hunks[0].steps.as_slice(), hunks[0].explained), (&[0][..], true));
    assert_eq!((hunks[1].steps.as_slice(), hunks[1].explained), (&[][..], false), "no step made NINE");
}

#[test]
fn tool_edits_keep_the_known_lines_in_step_with_shell_edits() {
    let mut run = Run {
        steps: vec![
            Step { action: "cat /r/f.py".into(), observation: TEN.into(), ..Step::default() },
            Step {
                action: "edit 2:3".into(),
                observation: "[File: /r/f.py (9 lines total)]\n2:2-3\n".into(),
                ..Step::default()
            },
            Step { action: "sed -i '4s/five/5/' /r/f.py".into(), ..Step::default() },
        ],
        ..Run::default()
    };
    run.edits.push(Edit {
        step: Some(1),
        path: "/r/f.py".into(),
        kind: EditKind::WindowedEdit,
        status: EditStatus::Applied,
        old_text: None,
        new_text: Some("2-3\n".into()),
        diff: None,
        lint_codes: Vec::new(),
        trace: EditTrace { lines: Some((2, 3)), ..EditTrace::default() },
    });
    reconstruct(&mut run, &[Exec::Shell(EditStatus::Applied), Exec::Tool, Exec::Shell(EditStatus::Applied)]);
    let windowed = edit_at(&run, 1);
    assert_eq!(windowed.old_text.as_deref(), Some("two\nthree\n"), "filled from the lines seen");
    assert!(windowed.diff.as_deref().is_some_and(|d| d.contains("@@ -2,2 +2 @@")), "{:?}", windowed.diff);
    // Line 4 is `five` once two lines became one.
    assert_eq!(changes(edit_at(&run, 2)), ["-five", "+5"]);
    assert!(run.steps[2].flags.edit);
}

#[test]
fn substitutions_on_lines_never_shown_are_attributed_from_the_next_view_or_the_patch() {
    // Line 40 was never shown: the edit is unknown until a view of it says what it did.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i '40s/handler/handler_v2/' f.py", ""),
            ("sed -i '41s/handler/handler_v2/' f.py", ""),
            ("sed -i '42s/foo/bar/' f.py", ""),
            ("sed -n '40,42p' f.py", "x = handler_v2(y)\nx = other(y)\nx = bar\n"),
        ],
        None,
    );
    let e = edit_at(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(e.trace.checked_by, Some(CheckedBy::Step(4)));
    assert_eq!(changes(e), ["-x = handler(y)", "+x = handler_v2(y)"]);
    assert_eq!(hunk_headers(e), ["@@ -40 +40 @@"]);
    // The line shown holds neither the pattern nor the replacement: it matched nothing.
    assert_eq!(certainty(&r, 2), Some(Certainty::Unchanged));
    // `bar` may have been there before: not determined.
    assert_eq!(certainty(&r, 3), Some(Certainty::Unknown));
    assert_eq!(edit_at(&r, 3).diff, None);
    // No view: the submitted patch's new side shows the line.
    let patch = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -60,0 +61 @@\n+new = handler_v2()\n";
    let r = replay(
        &[("sed -n '1,3p' f.py", "one\ntwo\nthree\n"), ("sed -i '61s/handler/handler_v2/' f.py", "")],
        Some(patch),
    );
    let e = edit_at(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(e.trace.checked_by, Some(CheckedBy::Submission));
    assert_eq!(changes(e), ["-new = handler()", "+new = handler_v2()"]);
}

#[test]
fn a_write_of_the_text_the_file_held_is_no_change_and_keeps_no_text() {
    let r = replay(&[("cat f.txt", "a\nb\n"), ("printf 'a\\nb\\n' > f.txt", ""), ("echo c > f.txt", "")], None);
    let same = edit_at(&r, 1);
    assert_eq!(same.trace.certainty, Some(Certainty::Unchanged));
    // No text either: drawn from it alone, it would be every line added.
    assert_eq!((&same.diff, &same.new_text), (&None, &None));
    let changed = edit_at(&r, 2);
    assert_eq!(changed.new_text.as_deref(), Some("c\n"));
    assert_eq!(changes(changed), ["-a", "-b", "+c"]);
}

#[test]
fn a_substitution_past_lines_of_unknown_count_is_attributed_from_the_next_view() {
    // After an append to a file whose end was never shown, line 7 cannot be placed: the edit
    // is not simulated, and the next view of line 7 says what it did.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("echo '# end' >> f.py", ""),
            ("sed -i '7s/seven/seven_v2/' f.py", ""),
            ("sed -n '6,8p' f.py", "six\nseven_v2\neight\n"),
        ],
        None,
    );
    let e = edit_at(&r, 2);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(changes(e), ["-seven", "+seven_v2"]);
    assert_eq!(hunk_headers(e), ["@@ -7 +7 @@"]);
}

#[test]
fn a_global_substitution_is_attributed_from_a_later_view_of_a_line_never_shown() {
    // Lines 1-3 shown, the rest never: `s///g` changes none of the lines shown, so what it did
    // is unknown until a view of a line holding the replacement.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i 's/handler/handler_g1/g' f.py", ""),
            ("perl -pi -e 's/config/config_g2/g' f.py", ""),
            ("sed -n '20,21p' f.py", "x = handler_g1(config_g2)\ny = 2\n"),
        ],
        None,
    );
    for (step, old, new) in [
        (1, "-x = handler(config)", "+x = handler_g1(config)"),
        (2, "-x = handler_g1(config)", "+x = handler_g1(config_g2)"),
    ] {
        let e = edit_at(&r, step);
        assert_eq!(e.trace.certainty, Some(Certainty::Attributed), "step {step}");
        assert_eq!(e.trace.checked_by, Some(CheckedBy::Step(3)));
        assert_eq!(changes(e), [old, new]);
        assert_eq!(hunk_headers(e), ["@@ -20 +20 @@"]);
        // Other lines never shown may hold the pattern too.
        assert!(e.trace.partial);
    }
}

#[test]
fn a_global_substitution_stays_unknown_when_the_file_may_have_been_renumbered_or_the_line_is_ambiguous() {
    // A line deleted after it: the view's line 20 may not be the line 20 it saw.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i 's/handler/handler_g1/g' f.py", ""),
            ("sed -i '2d' f.py", ""),
            ("sed -n '20p' f.py", "x = handler_g1()\n"),
        ],
        None,
    );
    assert_eq!(certainty(&r, 1), Some(Certainty::Unknown));
    // `bar` may have been there before.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i 's/foo/bar/g' f.py", ""),
            ("sed -n '9p' f.py", "bar\n"),
        ],
        None,
    );
    assert_eq!(certainty(&r, 1), Some(Certainty::Unknown));
    // A line without the replacement says nothing of the others: still unknown, not "changed
    // nothing".
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i 's/handler/handler_g1/g' f.py", ""),
            ("sed -n '9p' f.py", "other\n"),
        ],
        None,
    );
    assert_eq!(certainty(&r, 1), Some(Certainty::Unknown));
}

#[test]
fn substitutions_chained_on_a_line_never_shown_are_inverted_one_by_one() {
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i '40s/handler/handler_v1/' f.py", ""),
            ("sed -i '2a\\inserted' f.py", ""),
            ("sed -i '41s/config/config_v3/' f.py", ""),
            ("sed -i '41s/missing/found/' f.py", ""),
            ("sed -n '41p' f.py", "x = handler_v1(config_v3)\n"),
        ],
        None,
    );
    let first = edit_at(&r, 1);
    assert_eq!(first.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(changes(first), ["-x = handler(config)", "+x = handler_v1(config)"]);
    assert_eq!(hunk_headers(first), ["@@ -40 +40 @@"]);
    let second = edit_at(&r, 3);
    assert_eq!(second.trace.certainty, Some(Certainty::Attributed));
    assert_eq!(changes(second), ["-x = handler_v1(config)", "+x = handler_v1(config_v3)"]);
    assert_eq!(hunk_headers(second), ["@@ -41 +41 @@"]);
    assert_eq!(certainty(&r, 4), Some(Certainty::Unchanged));
    // A step that is not determined ends the chain: the ones before it stay unknown.
    let r = replay(
        &[
            ("sed -n '1,3p' f.py", "one\ntwo\nthree\n"),
            ("sed -i '40s/handler/handler_v1/' f.py", ""),
            ("sed -i '40s/foo/bar/' f.py", ""),
            ("sed -n '40p' f.py", "x = handler_v1(bar)\n"),
        ],
        None,
    );
    assert_eq!(certainty(&r, 2), Some(Certainty::Unknown));
    assert_eq!(certainty(&r, 1), Some(Certainty::Unknown));
}

/// Texts kept in memory, counting what was put.
#[derive(Clone, Default)]
struct Counted(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Spill for Counted {
    fn put(&mut self, text: &str) -> std::io::Result<u64> {
        let mut kept = self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?;
        kept.push(text.to_string());
        Ok(kept.len() as u64 - 1)
    }
    fn get(&mut self, key: u64) -> std::io::Result<String> {
        let kept = self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?;
        kept.get(key as usize).cloned().ok_or_else(|| std::io::Error::other("no such key"))
    }
}

#[test]
fn a_view_contradicting_several_edits_is_spilled_once_and_each_edit_gets_it_back() {
    let steps = [
        ("cat f.py", TEN),
        ("sed -i 's/two/TWO/' f.py", ""),
        ("sed -i 's/four/FOUR/' f.py", ""),
        ("cat g.py", "a\nb\n"),
        ("sed -i 's/a/A/' g.py", ""),
        ("sed -i 's/six/SIX/' f.py", ""),
        // Shows none of the three edits of f.py; then one of g.py's.
        ("cat f.py", TEN),
        ("cat g.py", "a\nb\n"),
    ];
    let whole = replay(&steps, None);
    let spill = Counted::default();
    let mut rec = Reconstructor::new(None, std::iter::empty()).spill_to(Box::new(spill.clone()));
    for (a, o) in steps {
        let step = Step { action: a.to_string(), observation: o.to_string(), ..Step::default() };
        rec.step(&step, Exec::Shell(EditStatus::Applied), Vec::new());
    }
    let mut done = rec.finish(&mut []);
    let mut edits = std::mem::take(&mut done.edits);
    for (k, edit) in edits.iter_mut().enumerate() {
        done.fill(k, edit).unwrap_or_else(|e| panic!("{e}"));
    }
    let shown = |edits: &[Edit]| edits.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>();
    assert_eq!(shown(&edits), shown(&whole.edits));
    let contradicted: Vec<_> =
        whole.edits.iter().filter(|e| e.trace.certainty == Some(Certainty::Contradicted)).collect();
    assert_eq!(contradicted.len(), 4, "{:#?}", whole.edits);
    // The 4 edits' diffs, and what the two views showed: once each.
    let kept = spill.0.lock().map(|k| k.len()).unwrap_or_default();
    assert_eq!(kept, 4 + 2);
}
