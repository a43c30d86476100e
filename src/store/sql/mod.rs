//! One SQL layer for both stores: the queries, their rows' mapping and the orchestration around
//! them written once, over [`Sql`], which each backend implements (`sqlite/sql.rs`,
//! `pg/sql.rs`).
//!
//! A statement is written with `?1`, `?2`... placeholders (SQLite's); PostgreSQL's side rewrites
//! them to `$1`, `$2`... once per statement, beside its prepared-statement cache. What the two
//! dialects say differently is a fragment of the trait ([`Sql::NOW`], [`Sql::ROW_ORDER`],
//! [`Sql::BEGIN`], [`Sql::IN_LIST`]); what one does otherwise is a provided
//! method the other overrides (per-key locks, ids taken ahead, bulk rows, a long read's rows).
//! Every interface trait of `backend.rs` that is written here is implemented for every `Sql`
//! (the modules below): `Writes` and `LiveWrites` over [`write_path::WritePath`], `Tables` over
//! [`tables::CopyPath`], what a backend does itself there. A backend keeps only what is its own
//! (connecting, migrations, search, the write path's rows and their encoding).

mod browse;
mod export;
pub(super) mod identity;
mod labels;
pub(super) mod link;
mod live;
mod notes;
pub(super) mod read;
mod sources;
pub(super) mod tables;
mod write;
pub(super) mod write_path;

use super::cells::Cells;
use super::read::StepRow;
use super::texts::Chunks;
use crate::error::StoreError;

/// A statement's parameter, borrowed: a hot loop binds without allocating.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Bytes(&'a [u8]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Int(i64::from(v))
    }
}

impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Arg::Real(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Arg::Bytes(v)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Arg::Null, Into::into)
    }
}

/// `[Arg; N]` from values of any type an [`Arg`] is made from.
macro_rules! args {
    ($($v:expr),* $(,)?) => { [$($crate::store::sql::Arg::from($v)),*] };
}
pub(super) use args;

/// What [`Sql::each`] hands each row to.
pub type EachRow<'r> = &'r mut dyn FnMut(&dyn Cells) -> Result<(), StoreError>;

/// What a backend gives the shared layer: statements, transactions, and a few dialect fragments.
/// What one backend does otherwise than the other is a provided method the other overrides (ids,
/// locks, bulk rows, chunks fetched ahead, a long read's rows).
pub trait Sql: Chunks {
    /// The time now as text, as both stores keep it (`2024-05-01T12:00:00.000Z`).
    const NOW: &'static str;

    /// The column that orders a table's rows as they were written (SQLite's `rowid`, PostgreSQL's
    /// `id`), for the tables whose key does not.
    const ROW_ORDER: &'static str;

    /// The statement that begins a write transaction (SQLite: `BEGIN IMMEDIATE`, the one writer).
    const BEGIN: &'static str;

    /// The ids of a parameter (a JSON array of integers, see [`id_list`]) as a subquery,
    /// `{list}` standing for the parameter ([`Sql::in_list`]).
    const IN_LIST: &'static str;

    /// Each row of `sql` (with `?N` placeholders) handed to `row`, in order.
    fn each(&self, sql: &str, args: &[Arg<'_>], row: EachRow<'_>) -> Result<(), StoreError>;

    /// Run a statement that returns no rows; the number of rows it changed.
    fn execute(&self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StoreError>;

    /// Statements without parameters (transaction control, savepoints, DDL).
    fn run(&self, sql: &str) -> Result<(), StoreError>;

    /// Whether a transaction is open on the connection.
    fn in_transaction(&self) -> bool;

    /// `IN` the ids of parameter `param` (a JSON array of integers, see [`id_list`]).
    fn in_list(param: &str) -> String {
        Self::IN_LIST.replace("{list}", param)
    }

    /// Begin a write transaction.
    fn begin(&self) -> Result<(), StoreError> {
        self.run(Self::BEGIN)
    }

    fn commit(&self) -> Result<(), StoreError> {
        self.run("COMMIT")
    }

    /// Roll the open transaction back, if one is open (after an error: its own error is not the
    /// one to report).
    fn rollback(&self) {
        if self.in_transaction() {
            let _ = self.run("ROLLBACK");
        }
    }

    /// Take these keys' locks for the transaction, so writers of one key take turns: nothing
    /// where one writer holds them all already (SQLite); PostgreSQL's advisory locks.
    fn lock_keys(&self, _keys: Vec<String>) -> Result<(), StoreError> {
        Ok(())
    }

    /// `n` new ids of `table`, ascending, in the open transaction: after the largest, where the
    /// transaction is the only writer's (SQLite, as it gives a rowid); PostgreSQL's sequences.
    fn new_ids(&self, table: &str, n: usize) -> Result<Vec<i64>, StoreError>
    where
        Self: Sized,
    {
        let last = self.one(&format!("SELECT coalesce(max(id), 0) FROM {table}"), &[], |r| r.int(0))?;
        Ok((1..=n as i64).map(|i| last + i).collect())
    }

    /// Rows of `table` (`cells`: a row's `columns.len()` values after another): one statement,
    /// prepared once, run for each row; PostgreSQL sends them with one `COPY`.
    fn bulk(&self, table: &str, columns: &[&str], cells: &[Arg<'_>]) -> Result<(), StoreError> {
        if columns.is_empty() || cells.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
        for row in cells.chunks(columns.len()) {
            self.execute(&sql, row)?;
        }
        Ok(())
    }

    /// Each row of `sql` (no parameters), for a read of a whole table: what [`Sql::each`] does
    /// where rows are read as they are stepped through (SQLite); PostgreSQL's are fetched from a
    /// cursor a batch at a time, never all in memory.
    fn stream(&self, sql: &str, row: EachRow<'_>) -> Result<(), StoreError> {
        self.each(sql, &[], row)
    }

    /// `read` with the chunks of `named` at hand: one at a time where each is a page read
    /// (SQLite); PostgreSQL fetches them ahead in batches, each a round trip.
    fn with_chunks<R>(&self, _named: Vec<i64>, read: impl FnOnce(&dyn Chunks) -> R) -> R
    where
        Self: Sized,
    {
        read(self)
    }

    /// Step `index` of a run with its texts within [`super::texts::SHOWN`], and whether it may have
    /// edits (their texts are read only then); `None` when there is no such step.
    fn shown_step(&self, run_id: i64, index: i64) -> Result<Option<(StepRow, bool)>, StoreError>
    where
        Self: Sized,
    {
        browse::shown_step(self, run_id, index)
    }

    /// Every row of `sql`, made into `T` by `make`.
    fn rows<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        mut make: impl FnMut(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        self.each(sql, args, &mut |r| {
            out.push(make(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of `sql`, if any, made into `T`.
    fn opt<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        make: impl FnOnce(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError>
    where
        Self: Sized,
    {
        let mut make = Some(make);
        let mut out = None;
        self.each(sql, args, &mut |r| {
            if let Some(make) = make.take() {
                out = Some(make(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of `sql`, which must be there.
    fn one<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        make: impl FnOnce(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>
    where
        Self: Sized,
    {
        self.opt(sql, args, make)?.ok_or_else(|| StoreError::Corrupt(format!("no row from: {sql}")))
    }

    /// The integers of the first column.
    fn ints(&self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<i64>, StoreError>
    where
        Self: Sized,
    {
        self.rows(sql, args, |r| r.int(0))
    }

    /// Run `f` in a write transaction: committed when it succeeds, rolled back otherwise.
    fn transaction<T>(&self, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError>
    where
        Self: Sized,
    {
        self.begin()?;
        match f() {
            Ok(v) => {
                self.commit()?;
                Ok(v)
            }
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }
}

/// The values of `column` from `from` (`FROM ... WHERE ...`), sorted, joined by U+001F (SQLite's
/// `string_agg` since 3.44, PostgreSQL's).
pub fn sorted_join(column: &str, from: &str) -> String {
    format!("SELECT string_agg({column}, '\u{1f}' ORDER BY {column}) {from}")
}

/// Ids as [`Sql::in_list`] reads them: a JSON array.
pub fn id_list(ids: &[i64]) -> String {
    let mut out = String::with_capacity(2 + ids.len() * 8);
    out.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&id.to_string());
    }
    out.push(']');
    out
}

/// `?N` placeholders as PostgreSQL's `$N`, outside quoted text and names.
pub fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') if chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
