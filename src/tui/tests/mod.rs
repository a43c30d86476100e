//! The TUI driven by real key events into ratatui's `TestBackend`, checked with insta snapshots.

mod compare;
mod onset;
mod screens;

use crate::tui::headless::Headless;
use std::path::Path;

/// The app over a database ingested from a fixture folder, drawn into a `TestBackend`.
struct Harness {
    _dir: tempfile::TempDir,
    ui: Headless,
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

impl Harness {
    /// The fixture folder `folder` ingested into a database named `db` in a folder of its own.
    fn over(folder: &Path, db: &str, width: u16, height: u16) -> Harness {
        let (dir, ui) = crate::tui::headless::over_ingested(folder, db, width, height);
        Harness { _dir: dir, ui }
    }

    fn press(&mut self, keys: &str) {
        ok(self.ui.press(keys));
    }

    fn screen(&self) -> String {
        self.ui.screen()
    }
}
