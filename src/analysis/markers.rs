//! Markers read from observations and actions: clipped output, tool errors, test runs.

use memchr::memmem::Finder;
use std::sync::LazyLock;

/// Strings that show the tool cut or elided its output.
const CLIPPED: &[&str] = &[
    "<response clipped>",
    "Observations should not exceeded",
    "Old environment output:",
    "<elided_chars>",
    "The output of your last command was too long",
    "Observation truncated due to length",
    "[... Observation truncated",
    "lines omitted)",
];

/// Error markers looked for near the start or end of an observation.
const ERROR_MARKERS: &[&str] = &[
    "Traceback (most recent call last)",
    ": command not found",
    "No such file or directory",
    "SyntaxError:",
    "Error: ",
    "ERROR:",
    "Invalid `view_range`",
    "usage: ",
    "Usage: ",
];

/// Searchers for each pattern of a list, built once (every step's observation is read this
/// way, so a searcher per pattern per step cost more than the rest of reading a step).
type Finders = LazyLock<Vec<Finder<'static>>>;

/// Whether `text` contains one of the patterns: a SIMD substring search per pattern. Measured
/// on the 181 MB of observations of `bench ingest --big mini`: 65 ms, where one pass of an
/// Aho-Corasick automaton over the eight clipped markers took 275-330 ms (its prefilter gains
/// little on them).
fn contains_any(finders: &Finders, text: &str) -> bool {
    finders.iter().any(|f| f.find(text.as_bytes()).is_some())
}

fn finders(patterns: &'static [&'static str]) -> Vec<Finder<'static>> {
    patterns.iter().map(|p| Finder::new(p.as_bytes())).collect()
}

static CLIPPED_AT: Finders = LazyLock::new(|| finders(CLIPPED));
static ERROR_AT: Finders = LazyLock::new(|| finders(ERROR_MARKERS));
static TESTS_AT: Finders = LazyLock::new(|| finders(TEST_COMMANDS));

pub fn output_clipped(observation: &str) -> bool {
    contains_any(&CLIPPED_AT, observation)
}

/// Whether an observation reports an error, by its text alone (used when no exit code is
/// known). Only the first and last 2,000 bytes are read: error text sits there, and a file
/// listing that happens to contain "Error: " in the middle is not an error.
pub fn looks_like_error(observation: &str) -> bool {
    let head = prefix(observation, 2000);
    let tail = suffix(observation, 2000);
    contains_any(&ERROR_AT, head) || contains_any(&ERROR_AT, tail)
}

/// Commands that run tests.
const TEST_COMMANDS: &[&str] = &[
    "pytest",
    "py.test",
    "-m unittest",
    "runtests.py",
    "tox ",
    "manage.py test",
    "cargo test",
    "go test",
    "npm test",
    "make test",
    "ctest",
];

/// Whether an action runs tests (pytest, unittest, tox, Django's runtests, cargo/go test...).
pub fn runs_tests(action: &str) -> bool {
    contains_any(&TESTS_AT, action)
}

fn prefix(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = n;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

fn suffix(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = s.len() - n;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_markers_are_recognised() {
        assert!(output_clipped("a\n<response clipped><NOTE>Observations should not exceeded 100000"));
        assert!(output_clipped("<warning>\nThe output of your last command was too long.\n</warning>"));
        assert!(!output_clipped("all fine"));
    }

    #[test]
    fn errors_are_found_at_the_edges_only() {
        assert!(looks_like_error("Traceback (most recent call last):\n  File x"));
        assert!(looks_like_error("bash: foo: command not found"));
        let long_middle = format!("{}Error: inside{}", "x".repeat(5000), "y".repeat(5000));
        assert!(!looks_like_error(&long_middle));
        assert!(!looks_like_error("344"));
    }

    #[test]
    fn multibyte_edges_do_not_panic() {
        let s = "é".repeat(3000);
        assert!(!looks_like_error(&s));
    }

    #[test]
    fn test_runs_are_recognised() {
        assert!(runs_tests("cd /testbed && python -m pytest tests/x.py -q"));
        assert!(runs_tests("./tests/runtests.py forms_tests"));
        assert!(!runs_tests("cat setup.py"));
    }
}
