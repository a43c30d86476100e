//! `trajan migrate` and `trajan copy --from A --to B`.

use anyhow::{Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use trajan::store::copy::Progress;
use trajan::store::pg::Pg;
use trajan::store::{Location, Store, copy};

/// Create or upgrade the schema of the database `--db` names.
pub fn migrate(db: &Location) -> Result<i32> {
    match db {
        Location::Server(url) => {
            let (before, after) = Pg::migrate(url)?;
            if before == after {
                println!("{}: schema version {after}, nothing to do", url.shown());
            } else {
                println!("{}: schema version {before} -> {after}", url.shown());
            }
        }
        Location::File(path) => {
            let store = Store::open(path)?;
            println!("{}: schema version {}", path.display(), store.schema_version()?);
        }
    }
    Ok(0)
}

/// Copy every table of `from` into the empty store `to`, then compare them table by table.
pub fn run(from: &Location, to: &Location) -> Result<i32> {
    if let (Location::File(a), Location::File(b)) = (from, to)
        && a == b
    {
        bail!("--from and --to name the same file");
    }
    let source = Store::open_at(from, true)?;
    let mut target = Store::open_at(to, false)?;
    let shown = Shown::new();
    let copied = copy::copy(&source, &mut target, &mut |p| shown.tell(p))?;
    if copied.resumed {
        shown.bar.finish_and_clear();
        println!(
            "{} already held every row of {} (a copy stopped before its end): every table compared equal ({} rows); its search index is finished",
            to.shown(),
            from.shown(),
            copied.rows
        );
        return Ok(0);
    }
    let compared = copy::compare(&source, &target, &mut |p| shown.tell(p))?;
    shown.bar.finish_and_clear();
    println!(
        "copied {} rows of {} tables from {} to {}; every table compared equal ({} rows)",
        copied.rows,
        copied.tables,
        from.shown(),
        to.shown(),
        compared
    );
    Ok(0)
}

/// Progress on stderr: a spinner with the table, rows and megabytes so far on a terminal, one
/// line per table otherwise (a log keeps what was copied).
struct Shown {
    bar: ProgressBar,
    terminal: bool,
}

impl Shown {
    fn new() -> Shown {
        let terminal = std::io::stderr().is_terminal();
        let target = if terminal { ProgressDrawTarget::stderr_with_hz(10) } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Shown { bar, terminal }
    }

    fn tell(&self, p: Progress<'_>) {
        let (line, whole) = match p {
            Progress::Copying { table, rows, bytes, done } => {
                (format!("{table}: {rows} rows, {:.1} MB{}", bytes as f64 / 1e6, if done { "" } else { " ..." }), done)
            }
            Progress::Indexing => ("building the target's search index ...".to_string(), true),
            Progress::Compared { table, rows } => (format!("{table}: {rows} rows compared equal"), true),
        };
        if self.terminal {
            self.bar.set_message(line);
        } else if whole {
            eprintln!("{line}");
        }
    }
}
