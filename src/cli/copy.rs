//! `trajan migrate` and `trajan copy --from A --to B`.

use anyhow::{Result, bail};
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
    let copied = copy::copy(&source, &mut target, &mut |table, rows| {
        eprintln!("{table}: {rows} rows");
    })?;
    let compared = copy::compare(&source, &target)?;
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
