//! The replay's bounds (`budget`) on hostile runs: past a cap the edit is unknown (too large to
//! replay) and the run goes on; a pattern the regex engine gives up on makes its edit unknown.

use crate::analysis::reconstruct::budget::Limits;
use crate::analysis::reconstruct::*;
use crate::model::{Certainty, EditStatus, Step};

/// The run's edits replayed within `limits`.
fn replay_within(steps: &[(String, String)], limits: Limits) -> Vec<Edit> {
    let mut rec = Reconstructor::new(None, std::iter::empty()).limits(limits);
    for (a, o) in steps {
        let step = Step { action: a.clone(), observation: o.clone(), ..Step::default() };
        rec.step(&step, Exec::Shell(EditStatus::Applied), Vec::new());
    }
    rec.finish(&mut []).edits
}

fn steps(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, o)| (a.to_string(), o.to_string())).collect()
}

/// The certainty of each edit, in order.
fn certainties(edits: &[Edit]) -> Vec<(usize, Certainty)> {
    edits.iter().filter_map(|e| Some((e.step?, e.trace.certainty?))).collect()
}

#[test]
fn an_edit_that_would_grow_a_file_past_its_cap_is_too_large_and_the_run_goes_on() {
    // Each step makes the file ten times larger: 10^3, 10^4, 10^5, 10^6 bytes fit 2 MiB, 10^7
    // does not; after it the file is unknown.
    let mut list = vec![("cat e.py".to_string(), format!("{}\n", "a".repeat(100)))];
    for _ in 0..8 {
        list.push((r#"sed -i "s/a/&&&&&&&&&&/g" e.py"#.to_string(), String::new()));
    }
    list.extend(steps(&[("cat g.py", "x = 1\n"), ("sed -i 's/1/2/' g.py", "")]));
    let limits = Limits { file_bytes: 2 << 20, ..Limits::default() };
    let edits = replay_within(&list, limits);
    let mut want: Vec<(usize, Certainty)> = (1..=4).map(|s| (s, Certainty::Simulated)).collect();
    want.push((5, Certainty::TooLarge));
    want.extend((6..=8).map(|s| (s, Certainty::Unknown)));
    want.push((10, Certainty::Simulated));
    assert_eq!(certainties(&edits), want);
    assert_eq!(Certainty::TooLarge.words(), "unknown (too large to replay)");
}

#[test]
fn a_line_made_longer_than_a_file_may_be_stops_being_made() {
    // One substitution of a thousand `&` on a line of ten thousand `a`s: 10^7 bytes in one line,
    // never made whole.
    let mut list = steps(&[("cat e.py", &format!("{}\n", "a".repeat(10_000)))]);
    list.push((format!("sed -i 's/a/{}/g' e.py", "&".repeat(1000)), String::new()));
    let edits = replay_within(&list, Limits { file_bytes: 1 << 20, ..Limits::default() });
    assert_eq!(certainties(&edits), [(1, Certainty::TooLarge)]);
}

#[test]
fn a_chain_of_cd_past_the_longest_folder_makes_the_steps_edits_too_large() {
    // 100,000 `cd a` in one action made a path of 200 KB and kept every folder on the way.
    let chain = format!("{}sed -i s/a/b/ q.py", "cd a; ".repeat(20_000));
    let list = steps(&[("cat q.py", "a\n"), (&chain, ""), ("sed -i s/a/c/ q.py", "")]);
    let mut rec = Reconstructor::new(None, std::iter::empty());
    for (a, o) in &list {
        let step = Step { action: a.clone(), observation: o.clone(), ..Step::default() };
        rec.step(&step, Exec::Shell(EditStatus::Applied), Vec::new());
    }
    let limits = Limits::default();
    assert!(rec.r.roots.len() <= limits.roots, "{} folders kept", rec.r.roots.len());
    assert!(rec.r.roots.iter().all(|r| r.len() < limits.cwd_bytes));
    let edits = rec.finish(&mut []).edits;
    // The next step starts from its own working directory again: its `q.py` is the one shown.
    assert_eq!(certainties(&edits), [(1, Certainty::TooLarge), (2, Certainty::Simulated)]);
}

#[test]
fn a_pattern_past_the_regex_engines_bound_makes_its_edit_unknown() {
    let line = format!("{}b\n", "a".repeat(40));
    let list = steps(&[
        ("cat r.py", &line),
        (r#"sed -E -i "s/(a+)+$/x/" r.py"#, ""),
        ("cat s.py", "a\n"),
        (r#"sed -E -i "/(a+)+$/d" s.py"#, ""),
        ("sed -i 's/b/c/' r.py", ""),
    ]);
    let edits = replay_within(&list, Limits::default());
    assert_eq!(certainties(&edits), [(1, Certainty::Unknown), (3, Certainty::Simulated), (4, Certainty::Unknown)]);
}

#[test]
fn once_the_runs_work_is_spent_every_later_edit_is_too_large() {
    // A file of 1,000 lines, then 200 substitutions on it: each goes through every line.
    let file: String = (0..1000).map(|i| format!("line {i} = value\n")).collect();
    let mut list = steps(&[("cat big.py", &file)]);
    for i in 0..200 {
        list.push((format!("sed -i 's/line {i} /LINE {i} /' big.py"), String::new()));
    }
    let edits = replay_within(&list, Limits { work: 100_000, ..Limits::default() });
    let c = certainties(&edits);
    let simulated = c.iter().filter(|(_, c)| *c == Certainty::Simulated).count();
    let too_large = c.iter().filter(|(_, c)| *c == Certainty::TooLarge).count();
    assert_eq!(simulated + too_large, 200, "{c:?}");
    assert!(simulated > 10 && too_large > 100, "{simulated} simulated, {too_large} too large");
    // Simulated first, then too large: never back.
    assert!(c.windows(2).all(|w| !(w[0].1 == Certainty::TooLarge && w[1].1 == Certainty::Simulated)));
    // With the default budget all of them are simulated.
    let edits = replay_within(&list, Limits::default());
    assert!(certainties(&edits).iter().all(|(_, c)| *c == Certainty::Simulated));
}

#[test]
fn a_view_larger_than_a_file_may_be_leaves_the_file_unknown() {
    let file: String = (0..10_000).map(|i| format!("x{}\n", i % 10)).collect();
    let list = steps(&[("cat f.py", &file), ("sed -i 's/x1/y1/' f.py", "")]);
    let edits = replay_within(&list, Limits { file_bytes: 100_000, ..Limits::default() });
    assert_eq!(certainties(&edits), [(1, Certainty::Unknown)]);
    let edits = replay_within(&list, Limits::default());
    assert_eq!(certainties(&edits), [(1, Certainty::Simulated)]);
}

#[test]
fn a_here_document_larger_than_a_file_may_be_is_too_large_to_write() {
    let body: String = (0..10_000).map(|i| format!("y{i}\n")).collect();
    let list = steps(&[(&format!("cat <<'EOF' > big.py\n{body}EOF"), "")]);
    let edits = replay_within(&list, Limits { file_bytes: 100_000, ..Limits::default() });
    assert_eq!(certainties(&edits), [(0, Certainty::TooLarge)]);
    let edits = replay_within(&list, Limits::default());
    assert_eq!(certainties(&edits), [(0, Certainty::Simulated)]);
}

#[test]
fn a_script_or_an_action_of_too_many_pieces_is_not_read() {
    let many = "-e s/a/b/ ".repeat(crate::analysis::reconstruct::sed::MAX_COMMANDS + 1);
    let list = steps(&[("cat f.py", "a\n"), (&format!("sed -i {many}f.py"), "")]);
    assert_eq!(certainties(&replay_within(&list, Limits::default())), [(1, Certainty::TooLarge)]);
    // More words than an action may have: nothing of it is replayed, and what was known of the
    // run's files is forgotten (it may have changed any of them).
    let words = "x ".repeat(crate::analysis::reconstruct::command::MAX_WORDS);
    let list =
        steps(&[("cat f.py", "a\n"), (&format!("echo {words}; sed -i s/a/b/ f.py"), ""), ("sed -i s/a/c/ f.py", "")]);
    assert_eq!(certainties(&replay_within(&list, Limits::default())), [(2, Certainty::Unknown)]);
}

#[test]
fn a_line_number_past_any_file_selects_nothing() {
    // The end of the file was never shown: a huge address was a phantom line 2^64-1.
    for address in ["18446744073709551615", "99999999999999999999999", "18446744073709551615,+5"] {
        let list = steps(&[("sed -n '1,3p' f.py", "a\nb\nc\n"), (&format!("sed -i '{address}d' f.py"), "")]);
        let edits = replay_within(&list, Limits::default());
        assert_eq!(certainties(&edits), [(1, Certainty::Unchanged)], "{address}");
        assert_eq!(edits[0].diff, None, "{address}");
    }
}
