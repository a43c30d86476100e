//! The integration tests, one binary (ripgrep's layout): a module per area, the shared helpers
//! (`common`, the test servers of `src/testkit`) compiled once. Linking one binary instead of
//! one per file is most of what a change costs a `cargo test` on two cores.
//!
//! Kept apart: `tests/tmux.rs`, the terminal tests, which read the screens of the real binary
//! in tmux and wait for them (run beside the rest of the suite they would share two cores with
//! every other test's processes); `tests/zz_skipped.rs`, which must run last to list the tests
//! the others skipped.

#[path = "../common/mod.rs"]
mod common;

#[allow(dead_code)]
#[path = "../../src/testkit/chat_server.rs"]
mod chat_server;

#[allow(dead_code)]
#[path = "../../src/testkit/chromium.rs"]
mod chromium;

mod agents;
mod agreement;
mod architecture;
mod archives;
mod atif;
mod bad_input;
mod classify;
mod cli;
mod compare;
mod corpus;
mod database;
mod datasets;
mod escape_sequences;
mod exports;
mod first_hour;
mod formats;
mod golden_json;
mod hostile_replay;
mod hostile_store;
mod huge_inputs;
mod join_order;
mod layouts;
mod llm;
mod open_file;
mod postgres;
mod report;
mod review;
mod script_edits;
mod validity;
mod verdicts;
