//! `trajan bench edits`: how many shell edits get a diff, per format (and with `--per-run`,
//! per run: the share that carry a diff or provably changed nothing), and how sure the diffs
//! are — on the trajectories named (the corpus) and on synthetic shell-only runs whose true
//! file states are known, where every reconstructed diff is graded against the truth (a
//! verified edit whose diff is wrong would be a false "verified").

use super::synth::edits::{self as synth_edits, TrueEdit};
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use trajan::ingest::pipeline::{self, Options, Silent};
use trajan::ingest::{Outcome, parse_file};
use trajan::model::{Certainty, EditKind};
use trajan::store::Store;
use trajan::store::read::RunFilter;

/// Shell edits of one format, by how sure their diffs are.
#[derive(Default)]
struct Tally {
    edits: usize,
    with_diff: usize,
    /// With a diff, or found to have changed nothing.
    settled: usize,
    by: BTreeMap<&'static str, usize>,
}

impl Tally {
    fn add(&mut self, certainty: Option<Certainty>, has_diff: bool) {
        self.edits += 1;
        self.with_diff += usize::from(has_diff);
        self.settled += usize::from(has_diff || certainty == Some(Certainty::Unchanged));
        *self.by.entry(certainty.map_or("none", Certainty::name)).or_default() += 1;
    }

    fn share(&self, x: usize) -> f64 {
        if self.edits == 0 { 0.0 } else { 100.0 * x as f64 / self.edits as f64 }
    }

    fn row(&self, name: &str, out: &mut String) {
        let n = |k: &str| self.by.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{name:<22} {:>6} {:>6} {:>5.1}% {:>6.1}% {:>8} {:>8} {:>9} {:>9} {:>10} {:>7}",
            self.edits,
            self.with_diff,
            self.share(self.with_diff),
            self.share(self.settled),
            n("unchanged"),
            n("verified"),
            n("contradicted"),
            n("simulated"),
            n("attributed"),
            n("unknown"),
        );
    }
}

const HEADER: &str =
    "format                  shell   diff  share  +nothing  nothing verified contradict simulated attributed unknown";

pub fn run(paths: &[PathBuf], synthetic: usize, per_run: bool) -> Result<i32> {
    let mut out = String::new();
    let _ = writeln!(out, "{HEADER}");
    let mut runs = Vec::new();
    if !paths.is_empty() {
        let (by_format, by_run) = measure_paths(paths)?;
        for (format, t) in by_format {
            t.row(&format, &mut out);
        }
        runs = by_run;
    }
    if synthetic > 0 {
        let (t, grade) = measure_synthetic(synthetic)?;
        t.row("synthetic (mini)", &mut out);
        let _ = writeln!(
            out,
            "\nsynthetic truth: {} graded edits; diffs right {}, wrong {} (simulated or verified {}, verified {}), partial {} (lines never shown); \"changed nothing\" right {}, wrong {}",
            grade.graded,
            grade.right,
            grade.wrong,
            grade.simulated_wrong,
            grade.verified_wrong,
            grade.partial,
            grade.unchanged_right,
            grade.unchanged_wrong
        );
    }
    if per_run && !runs.is_empty() {
        let _ =
            writeln!(out, "\nrun                                        format               shell   diff  +nothing");
        for (name, format, t) in &runs {
            let _ = writeln!(
                out,
                "{name:<42} {format:<18} {:>6} {:>5.1}% {:>8.1}%",
                t.edits,
                t.share(t.with_diff),
                t.share(t.settled)
            );
        }
    }
    super::output::emit(&out)?;
    Ok(0)
}

/// A run as the per-run table names it, its format and its shell edits.
type RunRow = (String, String, Tally);

/// Ingest the paths into a scratch database and count their runs' shell edits by format, and
/// by run (runs with a shell edit, by instance).
fn measure_paths(paths: &[PathBuf]) -> Result<(BTreeMap<String, Tally>, Vec<RunRow>)> {
    let tmp = super::bench_scratch::Scratch::new()?;
    let mut store = Store::open(&tmp.path().join("edits.db"))?;
    pipeline::ingest(&mut store, paths, &Options::default(), &Silent);
    let mut by_format: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_run = Vec::new();
    for run in store.list_runs(RunFilter::default())? {
        let detail = store.run_detail(run.id, None)?;
        let t = by_format.entry(run.format.to_string()).or_default();
        let mut this = Tally::default();
        for e in detail.edit_list.iter().filter(|e| e.step.is_some() && e.kind == EditKind::ShellWrite) {
            t.add(e.certainty, e.diff.is_some());
            this.add(e.certainty, e.diff.is_some());
        }
        if this.edits > 0 {
            by_run.push((trajan::sanitize::sanitize(&run.instance_id).into_owned(), run.format.to_string(), this));
        }
    }
    by_format.retain(|_, t| t.edits > 0);
    by_run.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    Ok((by_format, by_run))
}

#[derive(Default)]
struct Grade {
    graded: usize,
    /// Diffs with lines the run never showed (placeholders): the effect, not every text.
    partial: usize,
    right: usize,
    wrong: usize,
    /// Wrong and simulated or verified (not attributed from a view or the patch).
    simulated_wrong: usize,
    verified_wrong: usize,
    unchanged_right: usize,
    unchanged_wrong: usize,
}

/// The removed and added lines of a diff, and the first line number its hunks name (0 for a
/// hunk not placed, or appended where the file's length was never shown: `(where: ...)`).
fn changed_lines(diff: &str) -> (Vec<String>, Vec<String>, Option<usize>) {
    let (mut removed, mut added, mut first) = (Vec::new(), Vec::new(), None);
    for h in trajan::analysis::diff::hunks(diff) {
        let unknown = !h.placed() || h.header.contains("(where:");
        for l in h.lines.iter().filter(|l| l.mark != ' ') {
            let no = if l.mark == '-' { l.old_no } else { l.new_no };
            first = first.or(if unknown { Some(0) } else { no });
            if l.mark == '-' { &mut removed } else { &mut added }.push(l.text.to_string());
        }
    }
    (removed, added, first)
}

/// A unified diff applied exactly at the lines its hunks name (no search): the text after, or
/// `None` when a hunk's old lines are not there.
fn apply_strictly(diff: &str, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0usize;
    for file in trajan::analysis::reconstruct::patch::parse(diff) {
        for h in &file.hunks {
            let start = if h.old_count == 0 { h.old_start } else { h.old_start.checked_sub(1)? };
            if start < at || start > lines.len() {
                return None;
            }
            out.extend(lines[at..start].iter().map(|l| l.to_string()));
            at = start;
            for (mark, t) in &h.lines {
                match mark {
                    '+' => out.push(t.clone()),
                    _ => {
                        if lines.get(at) != Some(&t.as_str()) {
                            return None;
                        }
                        if *mark == ' ' {
                            out.push(t.clone());
                        }
                        at += 1;
                    }
                }
            }
        }
    }
    out.extend(lines[at.min(lines.len())..].iter().map(|l| l.to_string()));
    Some(out.iter().map(|l| format!("{l}\n")).collect())
}

fn measure_synthetic(runs: usize) -> Result<(Tally, Grade)> {
    let mut tally = Tally::default();
    let mut grade = Grade::default();
    for seed in 1..=runs as u64 {
        let (doc, truth) = synth_edits::run(seed, 40 + (seed as usize * 7) % 60);
        let path = PathBuf::from(format!("synth__edits-{seed:05}.traj.json"));
        let bytes = serde_json::to_vec(&doc)?;
        let Outcome::Parsed { parsed, .. } = parse_file(Path::new(&path), &bytes, None)? else { continue };
        for run in &parsed.runs {
            for e in run.edits.iter().filter(|e| e.kind == EditKind::ShellWrite) {
                tally.add(e.trace.certainty, e.diff.is_some());
                if !e.path.starts_with("src/") {
                    continue;
                }
                let step = e.step.unwrap_or(usize::MAX);
                let t: Option<&TrueEdit> = truth.iter().find(|t| t.step == step && t.path == e.path);
                grade.graded += 1;
                match (e.trace.certainty, &e.diff, t) {
                    (Some(Certainty::Unchanged), _, None) => grade.unchanged_right += 1,
                    (Some(Certainty::Unchanged), _, Some(_)) => grade.unchanged_wrong += 1,
                    (_, Some(d), _) if d.contains("the run never showed ⋯") || e.trace.partial => grade.partial += 1,
                    (c, Some(d), Some(t)) => {
                        let (removed, added, first) = changed_lines(d);
                        // Applied at its stated lines to the true text, it gives the true
                        // result; an append where the file's length was never shown (its place
                        // unknown) adds the true lines.
                        let right = if first == Some(0) {
                            removed == t.removed && added == t.added
                        } else {
                            apply_strictly(d, &t.before).as_deref() == Some(t.after.as_str())
                        };
                        if right {
                            grade.right += 1;
                        } else {
                            grade.wrong += 1;
                            grade.simulated_wrong +=
                                usize::from(matches!(c, Some(Certainty::Simulated | Certainty::Verified)));
                            if c == Some(Certainty::Verified) {
                                grade.verified_wrong += 1;
                            }
                        }
                    }
                    (c, Some(_), None) => {
                        grade.wrong += 1;
                        grade.simulated_wrong +=
                            usize::from(matches!(c, Some(Certainty::Simulated | Certainty::Verified)));
                        if c == Some(Certainty::Verified) {
                            grade.verified_wrong += 1;
                        }
                    }
                    (_, None, _) => {}
                }
            }
        }
    }
    Ok((tally, grade))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthetic runs are read back by the real adapter and graded: most edits get a
    /// diff, and no simulated or verified diff, and no "changed nothing", is wrong (only
    /// attributions from views and the patch may be).
    #[test]
    fn synthetic_runs_are_reconstructed_against_their_truth() {
        let (t, g) = measure_synthetic(12).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.edits > 50, "{}", t.edits);
        assert!(t.with_diff * 10 >= t.edits * 8, "{} of {}", t.with_diff, t.edits);
        assert_eq!((g.verified_wrong, g.simulated_wrong, g.unchanged_wrong), (0, 0, 0));
        assert!(g.right * 2 >= g.graded, "{} right of {}", g.right, g.graded);
        assert_eq!(
            changed_lines("--- a/x\n+++ b/x\n@@ -3,2 +3,2 @@\n a\n-b\n+c\n"),
            (vec!["b".into()], vec!["c".into()], Some(4))
        );
        // Issue 43: a removed `-- ` comment and an added `++i;` are changes, not headers.
        assert_eq!(
            changed_lines("--- a/x\n+++ b/x\n@@ -3,2 +3,2 @@\n a\n--- b\n+++c;\n"),
            (vec!["-- b".into()], vec!["++c;".into()], Some(4))
        );
        let diff = "--- a/x\n+++ b/x\n@@ -2,2 +2,2 @@\n a\n-b\n+c\n";
        assert_eq!(apply_strictly(diff, "z\na\nb\nd\n").as_deref(), Some("z\na\nc\nd\n"));
        assert_eq!(apply_strictly(diff, "a\nb\nd\n"), None, "one line off");
    }
}
