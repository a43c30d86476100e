//! Blame: whose failure a failed run is (failure-modes.md, "Failure onset and blame"), from its
//! signals. The environment's when the harness or the infrastructure broke the run; the task's
//! when its tests fail what the agent could not have known to do; else the agent's. Each rule
//! names what it read, and the evidence a reviewer checks.

use crate::classify::signals::Signals;
use crate::label::{Blame, BlameVerdict, Evidence, ExitCategory};

/// Whose failure the run is. A resolved run has none.
pub fn blame(s: &Signals) -> BlameVerdict {
    if s.resolved == Some(true) {
        return BlameVerdict { value: None, reason: "resolved: no failure to blame".into(), evidence: Vec::new() };
    }
    let last = s.steps.saturating_sub(1);
    let unknown = if s.resolved.is_none() { " (the outcome is unknown: judged as a failure)" } else { "" };
    let mut verdict = environment(s).or_else(|| task(s)).unwrap_or_else(|| agent(s));
    if verdict.evidence.is_empty() && s.steps > 0 {
        verdict.evidence.push(Evidence { step: last, note: "the run's end".into() });
    }
    verdict.reason.push_str(unknown);
    verdict
}

/// The harness or the infrastructure broke the run: an environment or API error ended it, the
/// whole suite failed (no test passes, PASS_TO_PASS tests included: the tests could not run),
/// or the grading
/// failed a patch whose every FAIL_TO_PASS test passes on ids its own log reading cut, or with
/// no failing test at all.
fn environment(s: &Signals) -> Option<BlameVerdict> {
    let exit = s.exit_status.as_deref().unwrap_or("");
    match s.exit {
        ExitCategory::Environment => {
            return Some(BlameVerdict::of(
                Blame::Environment,
                format!("the environment failed: the run ended with {exit}"),
            ));
        }
        ExitCategory::Api => {
            return Some(BlameVerdict::of(
                Blame::Environment,
                format!("the model's API failed and ended the run ({exit}): infrastructure, not the agent's reasoning"),
            ));
        }
        _ => {}
    }
    let t = s.tests.as_ref()?;
    let p2p = t.pass_to_pass;
    if t.fail_to_pass.passed == 0 && p2p.passed == 0 && p2p.failed >= 3 {
        let n = p2p.failed + t.fail_to_pass.failed;
        return Some(BlameVerdict::of(
            Blame::Environment,
            format!(
                "no test passes, PASS_TO_PASS tests included (0 of {n}): the test suite could not run in the harness"
            ),
        ));
    }
    if !t.located() {
        return None;
    }
    let g = &s.grading;
    if p2p.failed == 0 {
        return Some(BlameVerdict::of(
            Blame::Environment,
            "every test the harness reports passes, yet the run was graded failed: the grading, not the patch"
                .to_string(),
        ));
    }
    (!g.cut.is_empty() && g.cut.len() + g.impossible.len() >= p2p.failed).then(|| {
        BlameVerdict::of(
            Blame::Environment,
            format!(
                "every FAIL_TO_PASS test passes; the failing ids are cut short by the harness's reading of the log ({})",
                g.cut.join(", ")
            ),
        )
    })
}

/// The task or its tests are defective: every FAIL_TO_PASS test passes and the only failures
/// are ids no test runner prints (a test that does not exist); the agent's patch is the gold's
/// own change; the failing tests' messages name what only the gold patch introduces; or the
/// gold patch adds a parameter the task never names to a public definition the agent changed
/// too, and the FAIL_TO_PASS tests fail with no PASS_TO_PASS regression (the tests check the
/// gold's own API).
fn task(s: &Signals) -> Option<BlameVerdict> {
    let g = &s.grading;
    let tests = s.tests.as_ref();
    if tests.is_some_and(|t| t.located()) {
        let p2p = tests.map(|t| t.pass_to_pass.failed).unwrap_or(0);
        return (!g.impossible.is_empty() && g.impossible.len() >= p2p).then(|| {
            BlameVerdict::of(
                Blame::Task,
                format!(
                    "every FAIL_TO_PASS test passes; what fails is a test id no runner prints, a test that does not exist ({}): it fails every patch, the gold's too",
                    g.impossible.join(", ")
                ),
            )
        });
    }
    if g.patch_is_gold {
        return Some(BlameVerdict::of(
            Blame::Task,
            "the agent's patch makes the gold patch's own change, and it was graded failed: the tests fail the gold too",
        ));
    }
    if !g.failures_naming_gold.is_empty() {
        let what: Vec<String> = g.failures_naming_gold.iter().map(|n| format!("{} (`{}`)", n.test, n.name)).collect();
        return Some(BlameVerdict::of(
            Blame::Task,
            format!(
                "the failing tests fail on names only the gold patch introduces, which the task never mentions: {}",
                what.join("; ")
            ),
        ));
    }
    let t = tests?;
    if g.unstated.is_empty() || t.fail_to_pass.failed == 0 || t.pass_to_pass.failed > 0 {
        return None;
    }
    let what: Vec<String> =
        g.unstated.iter().map(|u| format!("parameter `{}` of {} ({})", u.name, u.definition, u.path)).collect();
    Some(BlameVerdict::of(
        Blame::Task,
        format!(
            "the agent changed the definition the gold patch re-signs, and the gold adds what the task never names: {}; the FAIL_TO_PASS tests fail with no regression, so they check the gold's own API",
            what.join("; ")
        ),
    ))
}

/// The agent's own error, named by how the run ended.
fn agent(s: &Signals) -> BlameVerdict {
    let reason = match s.exit {
        ExitCategory::Format => "the agent's own unparsed replies ended the run".to_string(),
        ExitCategory::Cost | ExitCategory::Timeout => {
            format!("the agent spent its budget ({}): the budget is a condition of the task", s.exit.name())
        }
        ExitCategory::Context => "the agent filled its context".to_string(),
        _ if s.tests.as_ref().is_some_and(|t| t.located()) => {
            "every FAIL_TO_PASS test passes, and PASS_TO_PASS tests its patch broke fail: its regression".to_string()
        }
        _ if s.first_edit_step.is_none() => "the agent made no change to the code".to_string(),
        _ => "the agent's change does not make the failing tests pass, and nothing shows a defective task or harness"
            .to_string(),
    };
    BlameVerdict::of(Blame::Agent, reason)
}
