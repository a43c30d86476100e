//! The review TUI (ratatui + crossterm). Pure state in `app`, pure views in `views`, the event
//! loop and every effect (database reads, clipboard) in `driver`.

pub mod action;
pub mod app;
pub mod color;
pub mod config;
pub mod diff;
pub mod driver;
pub mod headless;
pub mod highlight;
pub mod keymap;
mod perform;
pub mod terminal;
#[cfg(test)]
mod tests;
pub mod text;
pub mod theme;
pub mod views;
pub mod worker;
