//! Signals of context use: how much of the run was tool output, floods of output, and the
//! repetition that shows the objective slipped (the same action again, files re-opened).

use super::commands::commands;
use super::views::{Shown, ViewKind};
use super::{ContextSignals, ExitCategory, FileTable, Reopen, Repeat, StepSize};
use crate::analysis::reconstruct::command::RedirectOp;
use crate::classify::input::Step;
use std::collections::HashMap;

/// An observation this long (characters) is large on its own.
pub const LARGE_OBSERVATION: u64 = 20_000;
/// An unbounded command counts when it printed at least this much.
const UNBOUNDED_MIN: u64 = 5_000;
/// A repeat is "long after" its first use at this distance in steps.
const LONG_AFTER: usize = 5;

pub(super) fn context(steps: &[Step], exit: ExitCategory) -> ContextSignals {
    let mut c = ContextSignals { exit_context: exit == ExitCategory::Context, ..ContextSignals::default() };
    for s in steps {
        let i = s.index as usize;
        let obs = s.observation_chars.max(0) as u64;
        c.obs_chars += obs;
        c.model_chars += (s.thought.chars().count() + s.action.chars().count()) as u64;
        if c.largest_obs.as_ref().is_none_or(|l| obs > l.chars) && obs > 0 {
            c.largest_obs = Some(StepSize { step: i, chars: obs });
        }
        let clipped = s.flags.output_clipped;
        if clipped {
            c.clipped_steps.push(i);
        }
        if obs >= LARGE_OBSERVATION {
            c.large_steps.push(i);
        }
        if (obs >= UNBOUNDED_MIN || clipped) && unbounded(&s.action, obs) {
            c.unbounded_steps.push(i);
        }
        if s.flags.format_error {
            c.format_error_steps.push(i);
        }
    }
    let total = c.obs_chars + c.model_chars;
    c.obs_share = if total == 0 { 0.0 } else { c.obs_chars as f64 / total as f64 };
    c
}

/// Commands with no bound on their output.
fn unbounded(action: &str, obs: u64) -> bool {
    let commands: Vec<Vec<String>> = commands(action, None).into_iter().map(|c| c.words).collect();
    let limited =
        commands.iter().any(|c| matches!(c.first().map(String::as_str), Some("head" | "tail" | "wc" | "less")));
    if limited {
        return false;
    }
    commands.iter().any(|c| {
        // A short option letter, alone or bundled (`-rn`).
        let has =
            |letter: char| c.iter().skip(1).any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(letter));
        let long = |o: &str| c.iter().any(|a| a == o);
        match c.first().map(String::as_str) {
            Some("grep" | "egrep") => {
                (has('r') || has('R') || long("--recursive"))
                    && !has('l')
                    && !has('c')
                    && !has('m')
                    && !long("--max-count")
            }
            Some("find") => c.get(1).is_some_and(|a| a == "/"),
            Some("git") => c.get(1).is_some_and(|a| a == "diff") && c.iter().skip(2).all(|a| a.starts_with('-')),
            Some("ls") => has('R'),
            Some("cat") => obs >= LARGE_OBSERVATION,
            _ => false,
        }
    })
}

/// Commands that only look (list, search, print): asking one again for the same output is
/// asking for what was already shown. Running code or tests again is verification, not this.
/// Listings (`ls`, `find`, `tree`) are left out: looking at a folder again is cheap and common.
const LOOKS: &[&str] = &[
    "search_dir",
    "search_file",
    "grep",
    "rg",
    "egrep",
    "cat",
    "head",
    "tail",
    "nl",
    "open",
    "goto",
    "view",
    "str_replace_editor",
];

fn only_looks(s: &Step) -> bool {
    let commands = commands(&s.action, None);
    // `cat > f <<EOF` writes a file, it does not look at one.
    let writes = commands
        .iter()
        .filter(|c| matches!(c.program(), "cat" | "echo" | "printf"))
        .flat_map(|c| &c.redirects)
        .any(|r| matches!(r.op, RedirectOp::Write | RedirectOp::Append) && !r.target.text.starts_with("/dev/"));
    let commands: Vec<Vec<String>> = commands.into_iter().map(|c| c.words).collect();
    !commands.is_empty()
        && !writes
        && commands.iter().all(|c| {
            let head = c.first().map(String::as_str).unwrap_or("");
            let sed_print = head == "sed" && c.iter().any(|a| a == "-n") && !c.iter().any(|a| a.starts_with("-i"));
            let editor_view = head == "str_replace_editor" && c.get(1).map(String::as_str) == Some("view");
            sed_print || editor_view || (LOOKS.contains(&head) && head != "str_replace_editor") || head == "cd"
        })
}

/// Looking actions (listing, searching, printing files) asked again with the same output as
/// their first use: long after it, or three times in a row. Format-error steps are not repeats
/// (the response was malformed, not the objective lost).
pub(super) fn repeats(steps: &[Step]) -> Vec<Repeat> {
    let mut groups: HashMap<String, Vec<&Step>> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for s in steps {
        if s.flags.format_error || !only_looks(s) {
            continue;
        }
        let key = s.action.split_whitespace().collect::<Vec<_>>().join(" ");
        let g = groups.entry(key.clone()).or_default();
        if g.first().is_some_and(|first| first.observation != s.observation) {
            continue;
        }
        if g.is_empty() {
            order.push(key);
        }
        g.push(s);
    }
    let mut out = Vec::new();
    for key in order {
        let g = &groups[&key];
        if g.len() < 2 {
            continue;
        }
        let idx: Vec<usize> = g.iter().map(|s| s.index as usize).collect();
        let long_after = idx.last().zip(idx.first()).is_some_and(|(l, f)| l - f >= LONG_AFTER);
        let in_a_row = idx.windows(3).any(|w| w[2] - w[0] == 2);
        if long_after || in_a_row {
            let action: String = key.chars().take(120).collect();
            out.push(Repeat { action, steps: idx, same_output: true });
        }
    }
    out
}

/// Files opened three or more times showing the same content, with no edit to them between.
pub(super) fn reopened(shown: &[Shown<'_>], table: &FileTable) -> Vec<Reopen> {
    // (path, the content first shown, the steps that showed it again)
    let mut chains: Vec<(&str, &str, Vec<usize>)> = Vec::new();
    // The latest chain of each path and content: an edit that broke it broke every earlier one,
    // so it is the only one an open can extend (one look-up per open).
    let mut latest: HashMap<(&str, &str), usize> = HashMap::new();
    let opens = shown.iter().flat_map(|s| s.views.iter().filter(|v| v.kind == ViewKind::Open).map(move |v| (v, s)));
    for (view, s) in opens {
        let edited = table.find(&view.path).map(|f| f.edited.as_slice()).unwrap_or(&[]);
        let key = (view.path.as_str(), s.observation);
        let same = latest
            .get(&key)
            .and_then(|&i| chains.get_mut(i))
            .filter(|(_, _, c)| c.last().is_some_and(|&prev| !edited.iter().any(|&e| e >= prev && e < s.step)));
        match same {
            Some((_, _, c)) => c.push(s.step),
            None => {
                latest.insert(key, chains.len());
                chains.push((&view.path, s.observation, vec![s.step]));
            }
        }
    }
    chains
        .into_iter()
        .filter(|(_, _, c)| c.len() >= 3)
        .map(|(p, _, c)| Reopen { path: p.to_string(), steps: c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::FileTable;
    use super::super::views::View;
    use super::*;

    /// Issue 42: each open looked through every chain so far (125,000 opens took 21 s to
    /// classify); now it finds its path and content's latest chain at once. The chains are as
    /// before: an edit between two opens breaks the chain, other content starts its own.
    #[test]
    fn reopened_files_among_thousands_of_opens_chain_by_path_and_content() {
        let open = |step: usize, path: &str, observation: &'static str| Shown {
            step,
            views: vec![View { path: path.into(), kind: ViewKind::Open }],
            hits: Vec::new(),
            observation,
        };
        let names: Vec<String> = (0..10_000).map(|i| format!("src/other{i}.py")).collect();
        let mut shown = Vec::new();
        for round in 0..4 {
            for (i, name) in names.iter().enumerate() {
                if i % 2_500 == 0 {
                    shown.push(open(shown.len(), "src/a.py", "def a(): pass"));
                    shown.push(open(shown.len(), "src/b.py", "def b(): pass"));
                    shown.push(open(shown.len(), "src/c.py", if round == 3 { "def c(): 1" } else { "def c(): pass" }));
                }
                shown.push(open(shown.len(), name, if round == 0 { "x" } else { "y" }));
            }
        }
        let mut table = FileTable::default();
        // b edited once, half way.
        table.get("src/b.py").edited.push(shown.len() / 2);
        let found = reopened(&shown, &table);
        let mut summary: Vec<(&str, usize)> = found.iter().map(|r| (r.path.as_str(), r.steps.len())).collect();
        // a shown 16 times the same; b 8 before its edit, 8 after; c 12 times the same, then 4
        // times other content; every other file shown once as "x" and three times as "y".
        let mut expected = vec![("src/a.py", 16), ("src/b.py", 8), ("src/c.py", 12), ("src/b.py", 8), ("src/c.py", 4)];
        expected.extend(names.iter().map(|n| (n.as_str(), 3)));
        summary.sort_unstable();
        expected.sort_unstable();
        assert_eq!(summary, expected);
        assert!(found.iter().all(|r| r.steps.windows(2).all(|w| w[0] < w[1])));
    }
}
