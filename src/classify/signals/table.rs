//! The signals as a short plain-text table: what `trajan signals` prints and what the LLM
//! prompt shows. Empty signals are left out; lists are capped.

use super::{After, ChangeKind, LostWhy, Signals};

/// At most this many items of any list.
const MAX_ITEMS: usize = 12;

fn steps(list: &[usize]) -> String {
    let mut s: Vec<String> = list.iter().take(MAX_ITEMS).map(|x| x.to_string()).collect();
    if list.len() > MAX_ITEMS {
        s.push(format!("… {} more", list.len() - MAX_ITEMS));
    }
    s.join(",")
}

/// The table as it is written: one line per `writeln!`. Values from the run (paths, commands,
/// exit statuses, failures) may hold newlines; within a line they are spaces (as is any other
/// control character), so no value starts a line of its own and poses as another entry or as a
/// section of the LLM prompt the table is shown in.
struct Lines(String);

impl Lines {
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::fmt::Result {
        let line = args.to_string();
        let (body, ended) = match line.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (line.as_str(), false),
        };
        self.0.extend(body.chars().map(|c| if c.is_control() { ' ' } else { c }));
        if ended {
            self.0.push('\n');
        }
        Ok(())
    }
}

fn opt_step(s: Option<usize>) -> String {
    s.map_or("never".into(), |x| format!("step {x}"))
}

/// The whole table, section by section.
pub fn table(s: &Signals) -> String {
    let mut o = Lines(String::new());
    outcome(&mut o, s);
    expected(&mut o, s);
    edits(&mut o, s);
    context(&mut o, s);
    definitions(&mut o, s);
    struggles(&mut o, s);
    onset_and_blame(&mut o, s);
    o.0
}

/// The run: its length, exit and outcome, its tools, the files of its patch.
fn outcome(o: &mut Lines, s: &Signals) {
    let resolved = match s.resolved {
        Some(true) => "resolved",
        Some(false) => "not resolved",
        None => "outcome unknown",
    };
    let _ = writeln!(
        o,
        "run: {} steps; exit {} ({}); {resolved}; first applied edit {}",
        s.steps,
        s.exit.name(),
        s.exit_status.as_deref().unwrap_or("no status"),
        opt_step(s.first_edit_step)
    );
    let gate = if s.tools.gated {
        format!("edits gated by a linter (.{} files)", s.tools.gated_extensions.join(", ."))
    } else {
        "no linter gate for the files edited".to_string()
    };
    let _ = writeln!(
        o,
        "tools: edit kinds {}; {gate}",
        if s.tools.edit_kinds.is_empty() { "none".into() } else { s.tools.edit_kinds.join(", ") }
    );
    let _ =
        writeln!(o, "patch files: {}", if s.patch_files.is_empty() { "none".into() } else { s.patch_files.join(", ") });
}

/// The locations the run was expected to change, and what the harness says of its tests.
fn expected(o: &mut Lines, s: &Signals) {
    if !s.expected.is_empty() {
        let ratio = s.miss_ratio.map(|r| format!(" (miss ratio {r:.2})")).unwrap_or_default();
        let _ = writeln!(o, "expected locations{ratio}:");
        for e in s.expected.iter().take(MAX_ITEMS) {
            let why: Vec<&str> = e
                .why
                .iter()
                .map(|w| match w {
                    super::ExpectedWhy::Gold => "gold",
                    super::ExpectedWhy::Instruction => "instruction",
                    super::ExpectedWhy::FailingTest => "failing test",
                })
                .collect();
            let role = e
                .role
                .map(|r| format!(", {}", if r == super::Role::Core { "core" } else { "periphery" }))
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  {} [{}{role}{}]: seen {}, searched {}, {}",
                e.path.as_deref().unwrap_or(&e.named),
                why.join("+"),
                if e.plumbing { ", plumbing" } else { "" },
                opt_step(e.first_seen),
                opt_step(e.first_searched),
                if e.in_patch {
                    "in patch"
                } else if e.edited {
                    "edited, not in patch"
                } else {
                    "not edited"
                }
            );
            for f in e.functions.iter().take(MAX_ITEMS) {
                let test = f
                    .failing_test
                    .as_deref()
                    .map(|t| format!("; failing test {} is named for it", t.chars().take(120).collect::<String>()))
                    .unwrap_or_default();
                let _ = writeln!(
                    o,
                    "    gold location {}: shown {}, {}{test}",
                    f.name,
                    opt_step(f.seen),
                    match f.edited {
                        Some(true) => "changed by the agent",
                        Some(false) => "not changed by the agent",
                        None => "the agent's diff of the file is not known",
                    }
                );
            }
        }
    }
    if let Some(t) = &s.tests {
        let _ = writeln!(
            o,
            "harness tests: FAIL_TO_PASS {} passed, {} failed; PASS_TO_PASS {} passed, {} failed{}",
            t.fail_to_pass.passed,
            t.fail_to_pass.failed,
            t.pass_to_pass.passed,
            t.pass_to_pass.failed,
            if t.located() && t.pass_to_pass.failed > 0 { " (the fix is in place; regressions elsewhere)" } else { "" }
        );
    }
}

/// The edits: files touched, rejected, reverted or lost.
fn edits(o: &mut Lines, s: &Signals) {
    if !s.task_files_edited.is_empty() {
        let _ = writeln!(o, "files the task names, edited: {}", s.task_files_edited.join(", "));
    }
    let touched: Vec<_> = s.files.iter().filter(|f| !f.edited.is_empty() || !f.rejected.is_empty()).collect();
    if !touched.is_empty() {
        let _ = writeln!(o, "files edited:");
        for f in touched.iter().take(MAX_ITEMS) {
            let _ = writeln!(
                o,
                "  {}: applied at {}; rejected at {}; opened at {}{}{}{}",
                f.path,
                if f.edited.is_empty() { "-".into() } else { steps(&f.edited) },
                if f.rejected.is_empty() { "-".into() } else { steps(&f.rejected) },
                if f.opened.is_empty() { "-".into() } else { steps(&f.opened) },
                if f.in_patch { "; in patch" } else { "" },
                if f.created { "; created" } else { "" },
                if f.scratch { "; scratch" } else { "" },
            );
        }
    }
    if !s.rejections.is_empty() {
        let codes: Vec<String> = s.lint_codes.iter().map(|(c, n)| format!("{c}×{n}")).collect();
        let _ = writeln!(
            o,
            "rejected edits{}:",
            if codes.is_empty() { String::new() } else { format!(" ({})", codes.join(", ")) }
        );
        for r in s.rejections.iter().take(MAX_ITEMS) {
            let after = match r.after {
                After::Recovered { step } => format!("applied later at step {step}"),
                After::Bypassed { step } => format!("bypassed through the shell at step {step}"),
                After::Abandoned => "abandoned".into(),
            };
            let _ = writeln!(o, "  step {} {} by the {} [{}]: {after}", r.step, r.path, r.by, r.codes.join(","));
        }
    }
    for r in s.reverts.iter().take(MAX_ITEMS) {
        let _ = writeln!(o, "revert: step {} undoes step {} in {}", r.step, r.reverts_step, r.path);
    }
    for l in s.lost_edits.iter().take(MAX_ITEMS) {
        let why = match &l.why {
            LostWhy::BuildCopy => "a build/installed copy".to_string(),
            LostWhy::GitRevert { step, checked } => {
                format!("undone by git at step {step}{}", if *checked { ", after tests or a script ran" } else { "" })
            }
            LostWhy::NotInPatch { shell: true } => "shell write not in the submitted patch".to_string(),
            LostWhy::NotInPatch { shell: false } => "not in the submitted patch".to_string(),
            LostWhy::ChangedNothing => "shell edit that changed nothing".to_string(),
            LostWhy::Announced => "written in the reply as a tool call, never run".to_string(),
        };
        let _ = writeln!(o, "lost edit: step {} {}: {why}", l.step, l.path);
    }
}

/// What filled the context: observations, repeats, re-opened files.
fn context(o: &mut Lines, s: &Signals) {
    let c = &s.context;
    let largest = c
        .largest_obs
        .as_ref()
        .map(|l| format!("{} chars at step {}", l.chars, l.step))
        .unwrap_or_else(|| "none".into());
    let _ = writeln!(
        o,
        "context: observations {:.0}% of {} chars; largest {largest}; clipped at [{}]; large at [{}]; unbounded commands at [{}]{}{}",
        c.obs_share * 100.0,
        c.obs_chars + c.model_chars,
        steps(&c.clipped_steps),
        steps(&c.large_steps),
        steps(&c.unbounded_steps),
        if c.exit_context { "; exit_context" } else { "" },
        if c.format_error_steps.is_empty() {
            String::new()
        } else {
            format!("; format errors at [{}]", steps(&c.format_error_steps))
        }
    );
    for r in s.repeats.iter().take(MAX_ITEMS) {
        let same = if r.same_output { ", same output each time" } else { "" };
        let _ = writeln!(o, "repeated action at [{}]{same}: {}", steps(&r.steps), r.action);
    }
    for r in s.reopened.iter().take(MAX_ITEMS) {
        let _ = writeln!(o, "re-opened without editing: {} at [{}]", r.path, steps(&r.steps));
    }
}

/// The definitions changed, and references left stale by them.
fn definitions(o: &mut Lines, s: &Signals) {
    for f in s.symbols.iter().take(MAX_ITEMS) {
        if f.changes.is_empty() && f.touched.is_empty() {
            continue;
        }
        let _ = writeln!(o, "definitions changed in {} ({}):", f.path, f.lang.name());
        for c in f.changes.iter().take(MAX_ITEMS) {
            let sig = match (c.kind, &c.old_signature, &c.new_signature) {
                (ChangeKind::Renamed, _, _) => format!("{} → {}", c.old_name(), c.name),
                (ChangeKind::Resigned, Some(a), Some(b)) => format!("`{a}` → `{b}`"),
                (_, _, Some(b)) => format!("`{b}`"),
                (_, Some(a), None) => format!("`{a}`"),
                _ => String::new(),
            };
            let _ = writeln!(o, "  {} {} {}: {sig}", c.kind.name(), c.def.name(), c.qualified);
        }
        if !f.touched.is_empty() {
            let mut t: Vec<&str> = f.touched.iter().take(MAX_ITEMS).map(String::as_str).collect();
            if f.touched.len() > MAX_ITEMS {
                t.push("…");
            }
            let _ = writeln!(o, "  changed lines in: {}", t.join(", "));
        }
    }
    for st in s.stale.iter().take(MAX_ITEMS) {
        let seen: Vec<String> =
            st.seen_in.iter().take(MAX_ITEMS).map(|x| format!("{} (step {}, {})", x.path, x.step, x.how)).collect();
        let change = match (&st.renamed_to, st.change) {
            (Some(n), _) => format!("renamed to `{n}`"),
            (None, ChangeKind::Resigned) => format!("re-signed to `{}`", st.new_signature.as_deref().unwrap_or("?")),
            (None, k) => k.name().to_string(),
        };
        let _ = writeln!(
            o,
            "stale reference: `{}` ({change}) in {}, still used by {}",
            st.identifier,
            st.defined_in,
            seen.join(", ")
        );
    }
}

/// Loops, the untouched periphery, failing tests naming unchanged files.
fn struggles(o: &mut Lines, s: &Signals) {
    for l in s.loops.iter().take(MAX_ITEMS) {
        let _ = writeln!(
            o,
            "loop: `{}` failed the same way at [{}] with edits at [{}] between: {}",
            l.command,
            steps(&l.runs),
            steps(&l.edits),
            l.failure
        );
    }
    if let Some(p) = &s.periphery {
        let left: Vec<String> =
            p.periphery.iter().filter(|f| !f.edited).map(|f| format!("{} ({})", f.path, f.kind.name())).collect();
        let _ = writeln!(
            o,
            "gold core: {} (edited: {}); periphery {} files, untouched: {}",
            p.core.join(", "),
            if p.core_edited.is_empty() { "none".into() } else { p.core_edited.join(", ") },
            p.periphery.len(),
            if left.is_empty() { "none".into() } else { left.join(", ") }
        );
    }
    for m in s.failing_test_files.iter().take(MAX_ITEMS) {
        let _ = writeln!(o, "failing test {} names unchanged {}", m.test, m.path);
    }
}

/// What onset and blame read: where the patch was first written, the final format streak, and
/// what the grading shows beyond pass and fail.
fn onset_and_blame(o: &mut Lines, s: &Signals) {
    for origin in s.origins.iter().take(MAX_ITEMS) {
        let script = origin.written_at.map(|w| format!(" (by a script written at step {w})")).unwrap_or_default();
        let _ = writeln!(
            o,
            "patch origin: {} first written at step {}{script}; {} of its final lines",
            origin.path, origin.step, origin.lines
        );
    }
    if let Some(f) = s.format_streak {
        let _ = writeln!(o, "final streak of unparsed replies from step {f} to the format exit");
    }
    let g = &s.grading;
    if !g.impossible.is_empty() {
        let _ = writeln!(o, "failing test ids no runner prints (no such test): {}", g.impossible.join(", "));
    }
    if !g.cut.is_empty() {
        let _ = writeln!(o, "failing test ids cut short by the harness: {}", g.cut.join(", "));
    }
    if g.patch_is_gold {
        let _ = writeln!(o, "the agent's patch makes the gold patch's own change");
    }
    for u in g.unstated.iter().take(MAX_ITEMS) {
        let _ = writeln!(
            o,
            "the gold adds parameter `{}` to {} ({}), which the task never names",
            u.name, u.definition, u.path
        );
    }
    for n in g.failures_naming_gold.iter().take(MAX_ITEMS) {
        let _ = writeln!(o, "failing test {} names `{}`, which only the gold patch introduces", n.test, n.name);
    }
}
