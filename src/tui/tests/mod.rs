//! The TUI driven by real key events into ratatui's `TestBackend`, checked with insta snapshots.

mod compare;
mod screens;
