//! The PostgreSQL backend: one database on a server, shared by a team (reviewers labelling from
//! their machines, evaluation workers ingesting at once).
//!
//! The same tables as SQLite (`schema.rs`); reads, labels, notes and what a write does around its
//! rows are `store::sql`'s, over `sql.rs` (`?N` placeholders rewritten to `$N`). Writes: a unit
//! in one transaction (a batch of units: one transaction, a savepoint each), its rows sent with
//! `COPY` (`copy.rs`), ids
//! from sequences, the unit's path under an advisory lock so two workers never write one file
//! twice (`write.rs`). Labels: the writers of one (run, source, rater, taxonomy) take an advisory
//! lock on it, so "the latest label" is the last committed (`Sql::lock_keys`). Search: the terms of
//! SQLite's tokenizer under a trigram index (`search.rs`). A dropped connection is opened again
//! on the next call; what was in flight is an error.
//!
//! Every text goes through [`enc`] and comes back through [`Cells`]: PostgreSQL's `text` cannot
//! hold U+0000, which a trajectory may.

mod ahead;
mod aside;
mod browse;
mod chunks;
mod connect;
pub mod conninfo;
mod copy;
mod schema;
mod search;
mod sql;
mod tables;
mod term_rows;
mod tls;
pub mod url;
mod write;

use super::backend::{Admin, Backend};
pub use super::cells::Cells;
use super::copy::Value;
use super::sql::Sql;
use super::sql::write_path::Writing;
use super::texts;
use crate::error::StoreError;
use connect::{Conn, Failed};
use postgres::types::{ToSql, Type};
use postgres::{Row, Statement};
use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell, RefMut};
use std::collections::HashMap;
use url::PgUrl;

pub use schema::APPLICATION;

/// A connection to a trajan database on a PostgreSQL server.
pub struct Pg {
    client: RefCell<Conn>,
    url: PgUrl,
    read_only: bool,
    /// For a store opened read-only, the connection [`Admin::writer`] opened to write.
    writer: OnceCell<Box<Pg>>,
    /// Prepared statements, by their SQL.
    statements: RefCell<HashMap<String, Statement>>,
    /// The compressed chunks read last (`chunks.rs`): the TUI's next step is mostly in the chunk
    /// of the one before, not fetched again.
    chunks: RefCell<chunks::Held>,
    /// Compresses step texts (made on the first write).
    packer: Option<texts::Packer>,
    /// A batch open, a source written in parts (`store::sql::write`).
    writing: Writing,
    /// The terms thread (`aside.rs`), started by the first unit written.
    aside: Option<aside::Aside>,
    /// Steps whose terms were sent to the terms thread for the unit being written, and for the
    /// units of the open batch already released: deleted again if their unit is given up.
    unit_terms: RefCell<Vec<i64>>,
    batch_terms: Vec<i64>,
    /// The path whose lock this session holds past its transactions, while the write of a source
    /// committed in parts goes on (`write.rs`, `before_commit`).
    held: Option<String>,
    /// A transaction is open (a write in progress): a lost connection is not silently reopened.
    in_transaction: Cell<bool>,
    /// The server said it ends the session (terminated, shutting down) or the link broke: the
    /// next call outside a transaction connects again, even before the client notices the
    /// socket closed.
    lost: Cell<bool>,
    /// Statements prepared and run: round trips to the server (what the tests count).
    #[cfg(test)]
    trips: Cell<u64>,
}

pub type Params<'a> = [&'a (dyn ToSql + Sync)];

impl Pg {
    /// Connect to write. The schema must be the current one (`trajan migrate` makes it).
    pub fn open(url: &PgUrl) -> Result<Pg, StoreError> {
        Pg::connect(url, false)
    }

    /// Connect to read: every transaction of this connection is read-only.
    pub fn open_read_only(url: &PgUrl) -> Result<Pg, StoreError> {
        Pg::connect(url, true)
    }

    fn connect(url: &PgUrl, read_only: bool) -> Result<Pg, StoreError> {
        let pg = Pg::unchecked(url, read_only)?;
        let known = schema::MIGRATIONS.len() as i64;
        match pg.version()? {
            Some(v) if v == known => Ok(pg),
            Some(v) if v > known => Err(StoreError::TooNew { found: v, known }),
            found => Err(StoreError::Unmigrated { url: url.shown().to_string(), found: found.unwrap_or(0), known }),
        }
    }

    /// A connection whatever the schema (for `migrate`).
    fn unchecked(url: &PgUrl, read_only: bool) -> Result<Pg, StoreError> {
        let client = url.connect()?;
        Pg::session(&client, read_only).map_err(|e| failed(url, e))?;
        Ok(Pg {
            client: RefCell::new(client),
            url: url.clone(),
            read_only,
            writer: OnceCell::new(),
            statements: RefCell::new(HashMap::new()),
            chunks: RefCell::new(chunks::Held::default()),
            packer: None,
            writing: Writing::default(),
            aside: None,
            unit_terms: RefCell::new(Vec::new()),
            batch_terms: Vec::new(),
            held: None,
            in_transaction: Cell::new(false),
            lost: Cell::new(false),
            #[cfg(test)]
            trips: Cell::new(0),
        })
    }

    fn session(client: &Conn, read_only: bool) -> Result<(), Failed> {
        let sets = "SET client_min_messages = warning; SET statement_timeout = 0; SET work_mem = '64MB'";
        match read_only {
            true => client.session(&format!("{sets}; SET default_transaction_read_only = on")),
            false => client.session(sets),
        }
    }

    /// Apply the migrations this database lacks, in one transaction under an advisory lock (two
    /// `migrate` at once apply them once). The role must own the database (or may create in it).
    /// Returns (version before, version after).
    pub fn migrate(url: &PgUrl) -> Result<(i64, i64), StoreError> {
        let pg = Pg::unchecked(url, false)?;
        pg.run("BEGIN")?;
        let done = (|| {
            pg.exec("SELECT pg_advisory_xact_lock(7421100101)", &[])?;
            let before = pg.version()?.unwrap_or(0);
            let known = schema::MIGRATIONS.len() as i64;
            if before > known {
                return Err(StoreError::TooNew { found: before, known });
            }
            for sql in schema::MIGRATIONS.iter().skip(before as usize) {
                pg.run(sql)?;
            }
            schema::tune(&pg)?;
            pg.exec("DELETE FROM trajan_schema", &[])?;
            pg.exec("INSERT INTO trajan_schema (application, version) VALUES ($1, $2)", &[&APPLICATION, &known])?;
            Ok((before, known))
        })();
        match done {
            Ok(v) => {
                pg.run("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = pg.run("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The schema version, `None` when the database has no trajan schema; another program's
    /// tables are refused.
    fn version(&self) -> Result<Option<i64>, StoreError> {
        let found = self.opt("SELECT to_regclass('trajan_schema') IS NOT NULL", &[])?;
        if !found.is_some_and(|r| r.flag(0).unwrap_or(false)) {
            return Ok(None);
        }
        let row = self.opt("SELECT application, version FROM trajan_schema", &[])?;
        match row {
            None => Ok(None),
            Some(r) if r.text(0)? == APPLICATION => Ok(Some(r.int(1)?)),
            Some(_) => Err(StoreError::NotTrajanServer(self.url.shown().to_string())),
        }
    }

    /// The connection, opened again when the server dropped it (outside a transaction: one in
    /// flight is lost, and its error says so).
    fn client(&self) -> Result<RefMut<'_, Conn>, StoreError> {
        let mut client = self.client.borrow_mut();
        if (client.is_closed() || self.lost.get()) && !self.in_transaction.get() {
            let fresh = self.url.connect()?;
            Pg::session(&fresh, self.read_only).map_err(|e| failed(&self.url, e))?;
            *client = fresh;
            self.statements.borrow_mut().clear();
            // The server may hold another database of that name by now (dropped, made again).
            *self.chunks.borrow_mut() = chunks::Held::default();
            self.lost.set(false);
        }
        Ok(client)
    }

    fn prepared(&self, client: &Conn, sql: &str) -> Result<Statement, StoreError> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        #[cfg(test)]
        self.trips.set(self.trips.get() + 1);
        let stmt = client.prepare(&crate::store::sql::dollars(sql)).map_err(|e| self.error(e))?;
        self.statements.borrow_mut().insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    fn error(&self, e: Failed) -> StoreError {
        if let Failed::Client(e) = &e
            && !session_ended(e)
        {
            return pg_error(&self.url, e);
        }
        self.lost.set(true);
        failed(&self.url, e)
    }

    pub(super) fn rows(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, StoreError> {
        let client = self.client()?;
        let stmt = self.prepared(&client, sql)?;
        #[cfg(test)]
        self.trips.set(self.trips.get() + 1);
        client.query(&stmt, params).map_err(|e| self.error(e))
    }

    /// A statement prepared for this call only: planned with the parameters' values every time
    /// (a cached statement may be given a generic plan after a few calls), for queries whose best
    /// plan depends on them (search).
    pub(super) fn rows_once(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, StoreError> {
        let client = self.client()?;
        #[cfg(test)]
        self.trips.set(self.trips.get() + 1);
        client.query(sql, params).map_err(|e| self.error(e))
    }

    pub(super) fn opt(&self, sql: &str, params: &Params<'_>) -> Result<Option<Row>, StoreError> {
        Ok(self.rows(sql, params)?.into_iter().next())
    }

    pub(super) fn one(&self, sql: &str, params: &Params<'_>) -> Result<Row, StoreError> {
        self.opt(sql, params)?.ok_or_else(|| StoreError::Postgres(format!("no row from: {sql}")))
    }

    pub(super) fn exec(&self, sql: &str, params: &Params<'_>) -> Result<u64, StoreError> {
        let client = self.client()?;
        let stmt = self.prepared(&client, sql)?;
        client.execute(&stmt, params).map_err(|e| self.error(e))
    }

    /// `COPY table (columns) FROM STDIN` with rows already in COPY's text format.
    pub(super) fn copy_in(&self, sql: &str, data: &[u8]) -> Result<(), StoreError> {
        self.client()?.copy_in(sql, data).map_err(|e| self.error(e))?;
        Ok(())
    }

    /// `n` new ids of a sequence, in increasing order.
    pub(super) fn ids(&self, sequence: &str, n: usize) -> Result<Vec<i64>, StoreError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let sql = format!("SELECT nextval('{sequence}') FROM generate_series(1, $1::bigint)");
        let mut ids: Vec<i64> = self.rows(&sql, &[&(n as i64)])?.iter().map(|r| r.int(0)).collect::<Result<_, _>>()?;
        ids.sort_unstable();
        Ok(ids)
    }
}

/// Whether the error ends the session: the link broke, or the server ends it (SQLSTATE class 57P:
/// terminated by an administrator, shutting down; class 08: a connection exception).
fn session_ended(e: &postgres::Error) -> bool {
    e.is_closed() || e.code().is_some_and(|c| c.code().starts_with("57P") || c.code().starts_with("08"))
}

/// A failed call as a store error: the server's words, or the host that stopped answering.
fn failed(url: &PgUrl, e: Failed) -> StoreError {
    match e {
        Failed::Client(e) => pg_error(url, &e),
        Failed::Silent(why) => StoreError::Postgres(url.scrub(&why)),
    }
}

/// A client error as a store error: the server's words, never the password.
fn pg_error(url: &PgUrl, e: &postgres::Error) -> StoreError {
    if e.is_closed() {
        return StoreError::Postgres(format!("the connection to {} was lost", url.host_port()));
    }
    StoreError::Postgres(url.scrub(&connect::describe(e)))
}

impl Admin for Pg {
    fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn writer(&self) -> Result<&dyn Backend, StoreError> {
        if !self.read_only {
            return Ok(self);
        }
        if let Some(w) = self.writer.get() {
            return Ok(&**w);
        }
        let writer = Pg::open(&self.url)?;
        Ok(&**self.writer.get_or_init(|| Box::new(writer)))
    }

    fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self.version()?.unwrap_or(0))
    }

    /// The server keeps its pages whole; what is checked here is trajan's own: every step's
    /// texts and every chunk they name are there.
    fn integrity_check(&self) -> Result<String, StoreError> {
        let row = self.one(
            "SELECT (SELECT count(*) FROM steps s LEFT JOIN step_texts t ON t.step_id = s.id WHERE t.step_id IS NULL),
                    (SELECT count(*) FROM step_texts t LEFT JOIN text_chunks c ON c.id = t.chunk_id
                     WHERE t.chunk_id IS NOT NULL AND c.id IS NULL)",
            &[],
        )?;
        let (textless, chunkless) = (row.int(0)?, row.int(1)?);
        Ok(if textless == 0 && chunkless == 0 {
            "ok".into()
        } else {
            format!("{textless} steps without texts, {chunkless} without their chunk")
        })
    }

    fn stored_bytes(&self) -> Result<u64, StoreError> {
        Ok(self.one("SELECT pg_database_size(current_database())", &[])?.int(0)?.max(0) as u64)
    }

    fn location(&self) -> String {
        self.url.shown().to_string()
    }

    fn login(&self) -> Option<String> {
        self.url.user().map(str::to_string)
    }
}

impl texts::Chunks for Pg {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        if let Some(body) = self.chunks.borrow_mut().get(chunk_id) {
            return Ok(body);
        }
        let body = self.one("SELECT body FROM text_chunks WHERE id = $1", &[&chunk_id])?.bytes(0)?;
        self.chunks.borrow_mut().keep(chunk_id, &body);
        Ok(body)
    }
}

/// The character that escapes in stored text: U+0000 is written as `ESC 0`, ESC itself as
/// `ESC 1` (a noncharacter, so real text almost never pays for it).
const ESC: char = '\u{10FFFF}';

/// Text as stored: U+0000 and [`ESC`] escaped.
pub fn enc(s: &str) -> Cow<'_, str> {
    if !s.contains(['\0', ESC]) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\0' => out.extend([ESC, '0']),
            ESC => out.extend([ESC, '1']),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// An optional text as stored.
pub fn enc_opt(s: Option<&str>) -> Option<Cow<'_, str>> {
    s.map(enc)
}

/// Stored text as it was written.
pub fn dec(s: &str) -> String {
    if !s.contains(ESC) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (c, c == ESC) {
            (_, true) => match chars.next() {
                Some('0') => out.push('\0'),
                Some('1') => out.push(ESC),
                Some(other) => out.extend([ESC, other]),
                None => out.push(ESC),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

fn column(e: postgres::Error) -> StoreError {
    StoreError::Postgres(format!("unexpected column: {e}"))
}

impl Cells for Row {
    /// `count`, `length` and the like are 32-bit; a boolean is 0 or 1.
    fn value(&self, i: usize) -> Result<Value, StoreError> {
        let ty = self.columns().get(i).ok_or_else(|| StoreError::Postgres(format!("no column {i}")))?.type_();
        let v = match *ty {
            Type::INT8 => self.try_get::<_, Option<i64>>(i).map_err(column)?.map(Value::Int),
            Type::INT4 => self.try_get::<_, Option<i32>>(i).map_err(column)?.map(|v| Value::Int(v.into())),
            Type::INT2 => self.try_get::<_, Option<i16>>(i).map_err(column)?.map(|v| Value::Int(v.into())),
            Type::BOOL => self.try_get::<_, Option<bool>>(i).map_err(column)?.map(|v| Value::Int(v.into())),
            Type::FLOAT8 => self.try_get::<_, Option<f64>>(i).map_err(column)?.map(Value::Real),
            Type::FLOAT4 => self.try_get::<_, Option<f32>>(i).map_err(column)?.map(|v| Value::Real(v.into())),
            Type::BYTEA => self.try_get::<_, Option<Vec<u8>>>(i).map_err(column)?.map(Value::Bytes),
            _ => self.try_get::<_, Option<&str>>(i).map_err(column)?.map(|t| Value::Text(dec(t))),
        };
        Ok(v.unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
pub(super) mod tests;
#[cfg(test)]
mod upgrade_tests;
