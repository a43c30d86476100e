//! The shared SQL layer (`store::sql`) on SQLite: statements prepared once and cached by
//! rusqlite, the one writer's transaction, rows inserted by a prepared statement in a loop.

use super::Sqlite;
use crate::error::StoreError;
use crate::store::sql::{Arg, EachRow, Sql};
use crate::store::texts::Chunks;
use rusqlite::types::{ToSqlOutput, ValueRef};

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Arg::Null => ValueRef::Null,
            Arg::Int(v) => ValueRef::Integer(v),
            Arg::Real(v) => ValueRef::Real(v),
            Arg::Text(s) => ValueRef::Text(s.as_bytes()),
            Arg::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

impl Chunks for Sqlite {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError> {
        self.conn.chunk(chunk_id)
    }
}

impl Sql for Sqlite {
    const NOW: &'static str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    const ROW_ORDER: &'static str = "rowid";

    fn in_list(param: &str) -> String {
        format!("(SELECT value FROM json_each({param}))")
    }

    fn sorted_join(column: &str, from: &str) -> String {
        format!("SELECT group_concat({column}, char(31)) FROM (SELECT {column} {from} ORDER BY {column})")
    }

    fn each(&self, sql: &str, args: &[Arg<'_>], row: EachRow<'_>) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
        while let Some(r) = rows.next()? {
            row(r)?;
        }
        Ok(())
    }

    fn execute(&self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StoreError> {
        Ok(self.conn.prepare_cached(sql)?.execute(rusqlite::params_from_iter(args))? as u64)
    }

    fn begin(&self) -> Result<(), StoreError> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    fn commit(&self) -> Result<(), StoreError> {
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    fn rollback(&self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn lock_keys(&self, _keys: Vec<String>) -> Result<(), StoreError> {
        Ok(())
    }

    /// After the largest id, as SQLite gives a rowid: the transaction is the only writer's.
    fn new_ids(&self, table: &str, n: usize) -> Result<Vec<i64>, StoreError> {
        let last: i64 = self
            .conn
            .prepare_cached(&format!("SELECT coalesce(max(id), 0) FROM {table}"))?
            .query_row([], |r| r.get(0))?;
        Ok((1..=n as i64).map(|i| last + i).collect())
    }

    fn bulk(&self, table: &str, columns: &[&str], cells: &[Arg<'_>]) -> Result<(), StoreError> {
        if columns.is_empty() || cells.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        for row in cells.chunks(columns.len()) {
            stmt.execute(rusqlite::params_from_iter(row))?;
        }
        Ok(())
    }

    fn with_chunks<R>(&self, _named: Vec<i64>, read: impl FnOnce(&dyn Chunks) -> R) -> R {
        read(self)
    }
}
