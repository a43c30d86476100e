//! The last test binary `cargo test` runs (cargo runs the integration tests in the order of their
//! names): it prints, at the end of the run, the tests that were skipped because a program they
//! need is missing (tmux, Chromium; `common::tools`) and whether the PostgreSQL tests were, with
//! how to enable each. It passes either way: a skip is not a failure unless `.ci/run`'s
//! `TRAJAN_REQUIRE_TOOLS=1` made it one where the test ran.

mod common;

use common::tools::{self, Skipped, Tool};

#[test]
fn say_which_tests_were_skipped() {
    let skipped = tools::take_records(&tools::records_dir(), true);
    let pg_skipped = std::env::var("TRAJAN_TEST_PG").map_or(true, |v| v.is_empty());
    if let Some(summary) = tools::summary(&skipped, pg_skipped) {
        // Past the harness's capture, so it is read whatever the flags.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{summary}");
    }
}

/// The summary names every skipped test with its file and how to enable its tool.
#[test]
fn the_summary_names_each_skipped_test_and_how_to_enable_it() {
    let skipped = vec![
        Skipped {
            tool: Tool::Chromium.name(),
            file: "integration".into(),
            test: "report::the_corpus_report_opens".into(),
        },
        Skipped { tool: Tool::Tmux.name(), file: "tmux".into(), test: "corpus_run_at_80x24".into() },
    ];
    let text = tools::summary(&skipped, false).unwrap_or_default();
    assert!(text.contains("tests/tmux.rs: corpus_run_at_80x24"), "{text}");
    assert!(text.contains("tests/integration/report.rs: the_corpus_report_opens"), "{text}");
    assert!(text.contains("apt-get install tmux") && text.contains("apt-get install chromium"), "{text}");
    assert!(text.contains("TRAJAN_REQUIRE_TOOLS=1"), "{text}");
    assert!(!text.contains("PostgreSQL tests"), "{text}");
    assert!(tools::summary(&[], true).is_some_and(|t| t.contains("TRAJAN_TEST_PG")));
    assert_eq!(tools::summary(&[], false), None, "nothing skipped, nothing said");
}
