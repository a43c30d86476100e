//! The heuristic rules: each reads the signals and gives findings with a confidence, the
//! evidence steps and a rationale. Which mode a rule serves is the taxonomy's business (its
//! `rules` lists). Precision comes first: a rule fires only on evidence a reviewer would accept,
//! and weaker evidence comes out below the assignment threshold, to be shown, not counted.

use crate::classify::signals::paths::FileKind;
use crate::classify::signals::{After, ExpectedFile, ExpectedWhy, LostWhy, Rejection, Role, Signals};
use crate::label::ExitCategory;
use crate::label::{Evidence, Rule};

impl Rule {
    fn evaluate(self, s: &Signals) -> Option<Finding> {
        match self {
            Rule::ExpectedFileNeverSeen => expected_files(s, false),
            Rule::ExpectedFileNotEdited => expected_files(s, true),
            Rule::ExpectedFunctionNotEdited => expected_functions(s),
            Rule::GaveUpApplying => gave_up_applying(s),
            Rule::EditLost => edit_lost(s),
            Rule::GatedRejectionBypassed | Rule::GatedRejectionAbandoned | Rule::GatedRejectionRecovered => {
                gated(s, self)
            }
            Rule::FloodThenRepeat => flood_then_repeat(s),
            Rule::StaleIdentifier => stale_identifier(s),
            Rule::GoldPeripheryUntouched => gold_periphery(s),
            Rule::ChangeNotCarried => change_not_carried(s),
            Rule::BudgetExhausted => budget(s),
            Rule::Forfeited => forfeited(s),
        }
    }
}

/// One rule's verdict on one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: Rule,
    pub confidence: f64,
    pub evidence: Vec<Evidence>,
    pub rationale: String,
}

/// Lint codes of undefined names: the errors a multi-file change passes through.
const UNDEFINED_NAME: &[&str] = &["F821", "F822", "F831"];
/// At most this many evidence steps per finding.
const MAX_EVIDENCE: usize = 8;

/// Rules that say the agent did not find or reach the place of the fix (or, for flooding, that
/// output displaced it).
const LOCATION_RULES: &[Rule] = &[
    Rule::ExpectedFileNeverSeen,
    Rule::ExpectedFileNotEdited,
    Rule::ExpectedFunctionNotEdited,
    Rule::GaveUpApplying,
    Rule::EditLost,
    Rule::FloodThenRepeat,
];
/// What a location finding is worth when the harness says the location was found.
const LOCATED_CAP: f64 = 0.3;
/// A miss ratio below this, of gold files the agent opened: it changed most of the gold's files.
const PARTIAL_MISS: f64 = 0.5;
/// What a finding that needs the FAIL_TO_PASS results is worth without them: weighed, shown to
/// the reviewer with its evidence, never assigned.
const UNTESTED_CAP: f64 = 0.45;
/// Rules whose finding depends on which FAIL_TO_PASS tests fail: "the right file, the wrong
/// function" says the agent's change elsewhere in the file does not reach what the tests check,
/// which only the per-test results can tell from a fix in another place on the same path.
const NEEDS_TEST_RESULTS: &[Rule] = &[Rule::ExpectedFunctionNotEdited];
/// Rules that run only with a gold patch (the others read the task text and the run).
pub use crate::label::NEEDS_GOLD;

/// Every rule that fires on a run. A resolved run gets none. A run that never attempted an edit
/// (cut off before any: the rulings of failure-modes.md) gets no edit-based mode; flooding
/// (which can be why no edit came), budget and forfeit rules still apply. When every
/// FAIL_TO_PASS test passes and only PASS_TO_PASS tests fail, the agent found and fixed the
/// place: location findings (and flooding as their cause) are weighed, not assigned.
pub fn evaluate(s: &Signals, rules: &[Rule]) -> Vec<Finding> {
    if s.resolved == Some(true) {
        return Vec::new();
    }
    // Flooding can be why no edit came; the other modes are about edits.
    // An edit written in a reply and never run was attempted too: the agent chose its place.
    let attempted = s.first_edit_step.is_some()
        || !s.rejections.is_empty()
        || s.lost_edits.iter().any(|l| l.why == LostWhy::Announced);
    let located = s.tests.as_ref().is_some_and(|t| t.located());
    rules
        .iter()
        .filter(|r| attempted || matches!(r, Rule::FloodThenRepeat | Rule::BudgetExhausted | Rule::Forfeited))
        .filter_map(|r| r.evaluate(s))
        .map(|mut f| {
            f.evidence.sort_by_key(|e| e.step);
            f.evidence.dedup_by_key(|e| e.step);
            f.evidence.truncate(MAX_EVIDENCE);
            if s.tests.is_none() && NEEDS_TEST_RESULTS.contains(&f.rule) && f.confidence > UNTESTED_CAP {
                f.confidence = UNTESTED_CAP;
                f.rationale.push_str(
                    "; the FAIL_TO_PASS results are unknown (no per-instance report joined): weighed, not assigned",
                );
            }
            if located && LOCATION_RULES.contains(&f.rule) && f.confidence > LOCATED_CAP {
                f.confidence = LOCATED_CAP;
                f.rationale.push_str(
                    "; but every FAIL_TO_PASS test passes (only PASS_TO_PASS tests fail): the location was found",
                );
            }
            f
        })
        .collect()
}

fn ev(step: usize, note: impl Into<String>) -> Evidence {
    Evidence { step, note: note.into() }
}

fn last_step(s: &Signals) -> usize {
    s.steps.saturating_sub(1)
}

/// The steps that edited files other than the expected ones: what the agent did instead.
/// Scratch files are not attempts, and an expected file the agent did edit is not "instead".
fn edits_elsewhere(s: &Signals) -> Vec<Evidence> {
    s.files
        .iter()
        .filter(|f| !f.edited.is_empty() && !f.scratch)
        // An edit of a build copy is a lost edit (`edit_lost` cites it), not a place chosen instead.
        .filter(|f| !crate::classify::signals::paths::is_build_copy(&f.path))
        .filter(|f| !s.expected.iter().any(|e| e.path.as_deref() == Some(f.path.as_str())))
        .flat_map(|f| f.edited.first().map(|&st| ev(st, format!("edited {} instead", f.path))))
        .take(3)
        .collect()
}

/// Expected files never seen (`seen == false`) or seen and not edited (`seen == true`).
/// With a gold patch: when the agent changed the core, a missed periphery is propagation, not
/// location, so only core files count. Without one, the rule fires only when the agent edited
/// none of the files the text named, at medium confidence, and files it tried to edit (refused
/// edits) were found, so they do not count.
fn expected_files(s: &Signals, seen: bool) -> Option<Finding> {
    let gold = s.miss_ratio.is_some();
    let none_edited = s.expected.iter().all(|e| !e.edited);
    if !gold && !none_edited {
        return None;
    }
    let core_changed = s.periphery.as_ref().is_some_and(|p| !p.core_edited.is_empty());
    let missed: Vec<&ExpectedFile> = s
        .expected
        .iter()
        .filter(|e| !e.edited)
        .filter(|e| !core_changed || e.role != Some(Role::Periphery))
        // A gold patch's docs, configs, tests, release notes and plumbing are not places the fix
        // had to be; a file that follows the agent's own change is its periphery (propagation).
        .filter(|e| e.required())
        .filter(|e| !s.followers.iter().any(|f| f.site == f.path && e.path.as_deref() == Some(f.path.as_str())))
        .filter(|e| gold || e.rejected_at.is_empty())
        .filter(|e| e.first_seen.is_some() == seen)
        .collect();
    if missed.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    let mut names = Vec::new();
    for m in &missed {
        let name = m.path.as_deref().unwrap_or(&m.named);
        names.push(name.to_string());
        match (m.first_seen, m.first_searched) {
            (Some(st), _) => {
                evidence.push(ev(st, format!("opened {name}, never changed it")));
                evidence.extend(m.rejected_at.iter().map(|&r| ev(r, format!("edit of {name} refused; never applied"))));
            }
            (None, Some(st)) => evidence.push(ev(st, format!("{name} appeared in search output, never opened"))),
            (None, None) => {}
        }
    }
    evidence.extend(edits_elsewhere(s));
    evidence.push(ev(last_step(s), format!("ended without changing {}", names.join(", "))));
    // A bare file name (`models.py`) may be any file of that name, or the reporter's own:
    // weighed, not assigned. A path, or a file named by both the task and a failing test, is
    // firmer.
    let bare = missed.iter().all(|e| !e.named.trim_start_matches("./").contains('/'));
    let confidence: f64 = match (gold, seen) {
        (true, false) => 0.8,
        (true, true) => 0.7,
        (false, _) if missed.iter().any(|e| e.why.len() > 1) => 0.6,
        (false, _) if bare => 0.4,
        (false, _) => 0.5,
    };
    let by = |w: ExpectedWhy| missed.iter().any(|e| e.why.contains(&w));
    let source = match (by(ExpectedWhy::Gold), by(ExpectedWhy::Instruction), by(ExpectedWhy::FailingTest)) {
        (true, _, _) => "the gold patch",
        (_, true, true) => "the task and failing tests",
        (_, true, false) => "the task",
        _ => "failing tests",
    };
    let what = if seen { "opened but never edited" } else { "never opened" };
    let ratio = s.miss_ratio.map(|r| format!(" (miss ratio {r:.2})")).unwrap_or_default();
    let mut rationale = format!("{} named by {source}: {what}{ratio}", names.join(", "));
    // The agent changed most of the gold's files and looked at this one: it found the change's
    // places, and a file left may only serve the gold's own design (failure-modes.md: a gold
    // file the agent's design does not need is not a missed location). Weighed, not assigned.
    let partial = seen && s.miss_ratio.is_some_and(|r| r < PARTIAL_MISS);
    let confidence = if gold && partial {
        rationale.push_str(
            "; but the agent changed most of the gold's files: the one left may serve only the gold's design",
        );
        confidence.min(0.6)
    } else {
        confidence
    };
    // The agent changed the module the task itself names: the gold patch fixed it elsewhere, but
    // the agent's choice followed the task. Weighed, not assigned.
    let confidence = if gold && !s.task_files_edited.is_empty() {
        rationale.push_str(&format!("; but the agent edited {}, which the task names", s.task_files_edited.join(", ")));
        confidence.min(0.4)
    } else {
        confidence
    };
    Some(Finding {
        rule: if seen { Rule::ExpectedFileNotEdited } else { Rule::ExpectedFileNeverSeen },
        confidence,
        evidence,
        rationale,
    })
}

/// The right file, the wrong function: a gold source file the agent changed, none of whose gold
/// hunks' functions or classes the agent's changes reached (failure-modes.md: location is the
/// file and, where the gold patch names it, the function). A function another place of the
/// file was changed for is also missed when a failing FAIL_TO_PASS test is named for it: the
/// harness says the tests of that place fail, so the change elsewhere is not a fix on its path.
fn expected_functions(s: &Signals) -> Option<Finding> {
    let mut evidence = Vec::new();
    let mut what = Vec::new();
    let mut never_seen = false;
    let mut named_by_test = Vec::new();
    for e in s.expected.iter().filter(|e| e.required() && e.in_patch && !e.functions.is_empty()) {
        // A location that follows the agent's own change (a call site of it) is periphery.
        let follows = |name: &str| s.followers.iter().any(|f| f.path == e.named && f.site == name);
        let missed_tested: Vec<_> = e
            .functions
            .iter()
            .filter(|f| f.edited == Some(false) && f.failing_test.is_some() && !follows(&f.name))
            .collect();
        // Judged when the agent's diff of the file is known and reaches none of them, or misses
        // one its failing test is named for.
        let none_reached = e.functions.iter().all(|f| f.edited == Some(false));
        if !none_reached && missed_tested.is_empty() {
            continue;
        }
        let judged: Vec<_> = if none_reached { e.functions.iter().collect() } else { missed_tested };
        let path = e.path.as_deref().unwrap_or(&e.named);
        let names: Vec<&str> = judged.iter().map(|f| f.name.as_str()).collect();
        for f in &judged {
            match f.seen {
                Some(st) => evidence.push(ev(st, format!("showed {} in {path}, never changed it", f.name))),
                None => never_seen = true,
            }
            if let Some(t) = &f.failing_test {
                named_by_test.push(format!("{t} fails and is named for {}", f.name));
            }
        }
        if let Some(file) = s.files.iter().find(|f| f.path == path) {
            evidence.extend(file.edited.iter().take(3).map(|&st| ev(st, format!("changed {path} elsewhere"))));
        }
        what.push(format!("{path}: {}", names.join(", ")));
    }
    if what.is_empty() {
        return None;
    }
    evidence.push(ev(last_step(s), "ended without changing the gold functions"));
    let mut rationale = format!(
        "the right file, the wrong place: the gold patch changes {}; the agent's changes there reach {}",
        what.join("; "),
        if named_by_test.is_empty() { "none of them" } else { "not these" }
    );
    let confidence = if named_by_test.is_empty() {
        if never_seen { 0.65 } else { 0.6 }
    } else {
        rationale.push_str(&format!("; {}", named_by_test.join("; ")));
        0.75
    };
    Some(Finding { rule: Rule::ExpectedFunctionNotEdited, confidence, evidence, rationale })
}

/// Two or more rejected edits on one file and no later applied edit (undefined-name refusals
/// of a gated tool belong to required temporary errors instead).
fn gave_up_applying(s: &Signals) -> Option<Finding> {
    let mut evidence = Vec::new();
    let mut files = Vec::new();
    for f in s.files.iter().filter(|f| f.rejected.len() >= 2 && !f.in_patch) {
        let rs: Vec<_> = s.rejections.iter().filter(|r| r.path == f.path).collect();
        let gave_up = rs.last().is_some_and(|r| r.after == After::Abandoned);
        // Refusals of a legitimate intermediate state belong to required temporary errors; those
        // of names the edit itself swallowed are a failure to apply.
        let undefined = rs.iter().any(|r| {
            r.by == "linter"
                && r.codes.iter().any(|c| UNDEFINED_NAME.contains(&c.as_str()))
                && (!r.pending.is_empty() || r.overwritten.is_empty())
        });
        if gave_up && !undefined {
            files.push(f.path.clone());
            for r in rs {
                let codes = if r.codes.is_empty() { String::new() } else { format!(" ({})", r.codes.join(", ")) };
                evidence.push(ev(r.step, format!("edit of {} refused by the {}{codes}", r.path, r.by)));
            }
        }
    }
    (!files.is_empty()).then(|| Finding {
        rule: Rule::GaveUpApplying,
        confidence: 0.7,
        evidence,
        rationale: format!("gave up applying edits to {} after repeated rejections", files.join(", ")),
    })
}

/// Edits that silently changed nothing. With a gold patch, only losses on gold files count.
/// Without one, a reset counts when tests or a script ran between the fix and the reset (a
/// before/after check), and a shell write missing from the patch only on a file the task named;
/// the rest (clean-ups of debug lines, say) are weighed, not assigned.
fn edit_lost(s: &Signals) -> Option<Finding> {
    let gold: Vec<&str> =
        s.expected.iter().filter(|e| e.why.contains(&ExpectedWhy::Gold)).map(|e| e.named.as_str()).collect();
    let on_gold = |path: &str| {
        gold.iter().any(|g| path == *g || crate::classify::signals::paths::build_copy_target(path) == Some(g))
    };
    let expected = |path: &str| s.expected.iter().any(|e| e.path.as_deref() == Some(path));
    let mut evidence = Vec::new();
    let mut confidence: f64 = 0.0;
    let mut what = Vec::new();
    for l in s.lost_edits.iter().filter(|l| gold.is_empty() || on_gold(&l.path)) {
        let strong = !gold.is_empty() || expected(&l.path);
        match &l.why {
            LostWhy::BuildCopy => {
                confidence = confidence.max(0.7);
                evidence.push(ev(
                    l.step,
                    format!("edited {}, a build copy; the repository file was never changed", l.path),
                ));
                what.push(format!("{} is a build copy", l.path));
            }
            LostWhy::GitRevert { step, checked } => {
                confidence = confidence.max(if *checked || !gold.is_empty() { 0.7 } else { 0.4 });
                evidence.push(ev(l.step, format!("edited {}", l.path)));
                evidence.push(ev(*step, format!("git undid the edit to {}, never re-applied", l.path)));
                what.push(format!("{} reverted by git", l.path));
            }
            // A shell write (`sed -i`) on a needed file absent from the patch may have matched
            // nothing: failure to apply. A tool edit the tool reported applied was undone some
            // other way: weaker.
            LostWhy::NotInPatch { shell } => {
                confidence = confidence.max(if *shell && strong { 0.55 } else { 0.4 });
                let how = if *shell { "shell write" } else { "edit" };
                evidence.push(ev(l.step, format!("{how} to {} is not in the submitted patch", l.path)));
                what.push(format!("{} edited but absent from the patch", l.path));
            }
            // Written in the reply as a tool call the agent's parser never ran: the agent chose
            // the place and the change, and the change never reached the file.
            LostWhy::Announced => {
                confidence = confidence.max(if strong { 0.7 } else { 0.4 });
                evidence.push(ev(l.step, format!("an edit of {} written in the reply, never run", l.path)));
                what.push(format!("the edit of {} was announced and never applied", l.path));
            }
            // Reconstructed: the shell edit matched no line, and nothing changed the file after.
            LostWhy::ChangedNothing => {
                confidence = confidence.max(if strong { 0.55 } else { 0.4 });
                evidence.push(ev(l.step, format!("shell edit to {} matched no line: it changed nothing", l.path)));
                what.push(format!("the last edit to {} changed nothing", l.path));
            }
        }
    }
    (!evidence.is_empty()).then(|| Finding {
        rule: Rule::EditLost,
        confidence,
        evidence,
        rationale: format!("edits that changed nothing in the end: {}", what.join("; ")),
    })
}

/// Linter-gate rejections with undefined-name codes, by what followed: a bypass or an
/// abandoned file (the mode), or a recovery. Recoveries, and gates refusing syntax errors only,
/// come out below the threshold: the agent got past the gate, but a reviewer should see it.
fn gated(s: &Signals, rule: Rule) -> Option<Finding> {
    if !s.tools.gated {
        return None;
    }
    let linted: Vec<&Rejection> = s.rejections.iter().filter(|r| r.by == "linter").collect();
    // Undefined names of a legitimate intermediate state; names the agent's own edit made
    // undefined (it swallowed their definition) are no temporary error of the change.
    let undefined = |r: &Rejection| {
        r.codes.iter().any(|c| UNDEFINED_NAME.contains(&c.as_str()))
            && (!r.pending.is_empty() || r.overwritten.is_empty())
    };
    let then = |a: &After| match rule {
        Rule::GatedRejectionBypassed => matches!(a, After::Bypassed { .. }),
        Rule::GatedRejectionAbandoned => matches!(a, After::Abandoned),
        _ => matches!(a, After::Recovered { .. }),
    };
    let hits: Vec<&Rejection> = linted.iter().copied().filter(|r| undefined(r) && then(&r.after)).collect();
    let mut evidence = Vec::new();
    for r in &hits {
        evidence.push(ev(r.step, format!("edit of {} refused by the linter ({})", r.path, r.codes.join(", "))));
        match r.after {
            After::Bypassed { step } => {
                evidence.push(ev(step, format!("wrote {} through the shell, around the linter", r.path)))
            }
            After::Recovered { step } => evidence.push(ev(step, format!("a later edit of {} applied", r.path))),
            After::Abandoned => {}
        }
    }
    let (confidence, rationale) = match rule {
        Rule::GatedRejectionBypassed if !hits.is_empty() => {
            (0.8, "the linter gate refused a temporarily undefined name and the agent wrote the file around it")
        }
        Rule::GatedRejectionAbandoned if !hits.is_empty() => {
            (0.7, "the linter gate refused a temporarily undefined name and the agent abandoned the file")
        }
        Rule::GatedRejectionRecovered if !hits.is_empty() => {
            (0.35, "the linter gate refused undefined names; the agent recovered with a later edit")
        }
        Rule::GatedRejectionRecovered => {
            let syntax: Vec<&&Rejection> = linted.iter().filter(|r| !undefined(r)).collect();
            for r in &syntax {
                let codes = if r.codes.is_empty() { "no codes".to_string() } else { r.codes.join(", ") };
                evidence.push(ev(r.step, format!("edit of {} refused by the linter ({codes})", r.path)));
            }
            if syntax.is_empty() {
                return None;
            }
            (0.2, "the linter gate refused edits for syntax errors only (not undefined names)")
        }
        _ => return None,
    };
    Some(Finding { rule, confidence, evidence, rationale: rationale.into() })
}

/// A flood of output followed by signs the objective slipped: actions repeated after it,
/// files re-opened, loops. A flood alone comes out below the threshold.
fn flood_then_repeat(s: &Signals) -> Option<Finding> {
    let c = &s.context;
    let mut floods: Vec<usize> =
        c.clipped_steps.iter().chain(&c.large_steps).chain(&c.unbounded_steps).copied().collect();
    floods.sort_unstable();
    floods.dedup();
    if floods.is_empty() && !c.exit_context {
        return None;
    }
    let mut evidence: Vec<Evidence> = floods.iter().take(3).map(|&st| ev(st, "large or clipped output")).collect();
    // Asked again, with a flood between the first use and the repeat, for what was shown before:
    // the flood displaced it. Output that was itself clipped is asked again for the part not
    // shown, which is no sign.
    let displaced = |steps: &[usize]| -> Vec<usize> {
        let Some(&first) = steps.first() else { return Vec::new() };
        if c.clipped_steps.contains(&first) {
            return Vec::new();
        }
        steps.iter().skip(1).copied().filter(|&st| floods.iter().any(|&f| f > first && f < st)).collect()
    };
    let mut signs = Vec::new();
    for r in &s.repeats {
        let again = displaced(&r.steps);
        if !again.is_empty() {
            signs.push(format!("`{}` asked again at steps {:?} after floods", r.action, again));
            evidence.push(ev(r.steps[0], "first use"));
            evidence.extend(
                again.iter().take(2).map(|&st| ev(st, format!("same action, same output again: {}", r.action))),
            );
        }
    }
    for ro in &s.reopened {
        let again = displaced(&ro.steps);
        if !again.is_empty() {
            signs.push(format!("{} re-opened at steps {:?} after floods", ro.path, again));
            evidence.extend(again.iter().take(2).map(|&st| ev(st, format!("re-opened {}, same content", ro.path))));
        }
    }
    let share = format!("observations {:.0}% of the text", c.obs_share * 100.0);
    if signs.is_empty() {
        return Some(Finding {
            rule: Rule::FloodThenRepeat,
            confidence: 0.3,
            evidence,
            rationale: format!("large or clipped output ({share}) but no sign the objective was displaced"),
        });
    }
    let mut confidence: f64 = 0.6;
    if c.exit_context {
        confidence += 0.1;
    }
    if c.obs_share >= 0.8 {
        confidence += 0.1;
    }
    Some(Finding {
        rule: Rule::FloodThenRepeat,
        confidence: confidence.min(0.85),
        evidence,
        rationale: format!("after output floods ({share}): {}", signs.join("; ")),
    })
}

fn stale_identifier(s: &Signals) -> Option<Finding> {
    if s.stale.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    let mut what = Vec::new();
    for st in &s.stale {
        let change = st.change.name();
        if let Some(f) = s.files.iter().find(|f| f.path == st.defined_in) {
            evidence
                .extend(f.edited.first().map(|&e| ev(e, format!("{change} `{}` in {}", st.identifier, st.defined_in))));
        }
        for x in &st.seen_in {
            evidence
                .push(ev(x.step, format!("`{}` still used in {} ({}; left unchanged)", st.identifier, x.path, x.how)));
        }
        let files: Vec<&str> = st.seen_in.iter().map(|x| x.path.as_str()).collect();
        let how = match (&st.renamed_to, st.change) {
            (Some(n), _) => format!(" (renamed to `{n}`)"),
            (None, crate::classify::signals::ChangeKind::Resigned) => {
                format!(" (re-signed to `{}`)", st.new_signature.as_deref().unwrap_or("?"))
            }
            _ => format!(" ({change})"),
        };
        what.push(format!("`{}`{how} still in {}", st.identifier, files.join(", ")));
    }
    let confirmed = s.failing_test_files.iter().any(|m| {
        s.stale.iter().any(|st| st.seen_in.iter().any(|x| x.path.ends_with(&m.path) || m.path.ends_with(&x.path)))
    });
    let mut rationale = format!("definitions the agent's diff removed, renamed or re-signed: {}", what.join("; "));
    if confirmed {
        rationale.push_str("; failing tests name those files");
    }
    Some(Finding { rule: Rule::StaleIdentifier, confidence: if confirmed { 0.85 } else { 0.75 }, evidence, rationale })
}

fn gold_periphery(s: &Signals) -> Option<Finding> {
    let p = s.periphery.as_ref()?;
    let untouched: Vec<_> = p.periphery.iter().filter(|f| !f.edited).collect();
    // Propagation needs the agent's own central change (failure-modes.md): the core file edited
    // some other way, or the problem fixed elsewhere, leaves a location question, not this.
    if p.central_edited.is_empty() || untouched.is_empty() || untouched.len() * 2 < p.periphery.len() {
        return None;
    }
    let mut evidence = Vec::new();
    for core in &p.core_edited {
        if let Some(f) = s.files.iter().find(|f| &f.path == core) {
            evidence.extend(f.edited.iter().map(|&st| ev(st, format!("changed core file {core}"))));
        }
    }
    for f in &untouched {
        if let Some(st) = f.first_seen {
            evidence.push(ev(st, format!("saw {} ({}), never updated it", f.path, f.kind.name())));
        }
    }
    evidence.push(ev(last_step(s), "ended with the periphery stale"));
    // The stale periphery by kind (call sites, tests, docs, build files), as the taxonomy asks.
    let by_kind: Vec<String> = FileKind::ALL
        .iter()
        .filter_map(|k| {
            let files: Vec<&str> = untouched.iter().filter(|f| f.kind == *k).map(|f| f.path.as_str()).collect();
            (!files.is_empty()).then(|| format!("{} {}", k.plural(), files.join(", ")))
        })
        .collect();
    Some(Finding {
        rule: Rule::GoldPeripheryUntouched,
        confidence: 0.7,
        evidence,
        rationale: format!(
            "the gold's central change made ({} in {}); {} of {} periphery files left: {}",
            p.central_edited.join(", "),
            p.core_edited.join(", "),
            untouched.len(),
            p.periphery.len(),
            by_kind.join("; ")
        ),
    })
}

/// Gold sites that follow the agent's own change, left (failure-modes.md: core changed,
/// periphery left stale; propagation needs the agent's own central change, here a gold
/// definition its diff reached). Surer when the run showed the agent a site it then left.
fn change_not_carried(s: &Signals) -> Option<Finding> {
    if s.followers.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    let central: Vec<&str> = s.followers.iter().map(|f| f.follows.as_str()).collect();
    for o in &s.origins {
        evidence.push(ev(o.first(), format!("made the change in {}", o.path)));
    }
    let mut sites = Vec::new();
    for f in &s.followers {
        if let Some(st) = f.seen {
            evidence.push(ev(st, format!("saw {}, which {} `{}`; never changed it", f.site, f.how_words(), f.follows)));
        }
        sites.push(format!("{} ({} `{}`)", f.site, f.how_words(), f.follows));
    }
    evidence.push(ev(last_step(s), "ended with the followers of its change stale"));
    let seen = s.followers.iter().any(|f| f.seen.is_some());
    let mut rationale = format!("the agent's own change ({}) not carried to: {}", central.join(", "), sites.join("; "));
    if seen {
        rationale.push_str("; the run showed the agent a site it left");
    }
    Some(Finding { rule: Rule::ChangeNotCarried, confidence: if seen { 0.8 } else { 0.7 }, evidence, rationale })
}

fn budget(s: &Signals) -> Option<Finding> {
    matches!(s.exit, ExitCategory::Cost | ExitCategory::Timeout).then(|| Finding {
        rule: Rule::BudgetExhausted,
        confidence: 0.9,
        evidence: vec![ev(last_step(s), format!("run ended: {}", s.exit_status.as_deref().unwrap_or("limit")))],
        rationale: format!("hit its {} limit", s.exit.name()),
    })
}

fn forfeited(s: &Signals) -> Option<Finding> {
    let gave_up = s.exit == ExitCategory::Forfeit || (s.exit == ExitCategory::NoPatch && s.first_edit_step.is_none());
    gave_up.then(|| Finding {
        rule: Rule::Forfeited,
        confidence: 0.6,
        evidence: vec![ev(last_step(s), format!("stopped: {}", s.exit_status.as_deref().unwrap_or("no patch")))],
        rationale: "stopped without a patch while budget remained".into(),
    })
}
