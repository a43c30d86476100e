//! The shared SQL layer (`store::sql`) on SQLite: statements prepared once and cached by
//! rusqlite, the one writer's transaction; what `Sql` provides is SQLite's way (ids after the
//! largest, rows inserted by a prepared statement in a loop, no locks).

use super::Sqlite;
use crate::error::StoreError;
use crate::store::cells::Cells;
use crate::store::copy::Value;
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

impl Cells for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> Result<Value, StoreError> {
        Ok(match self.get_ref(i)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Int(v),
            ValueRef::Real(v) => Value::Real(v),
            ValueRef::Text(t) => Value::Text(
                String::from_utf8(t.to_vec())
                    .map_err(|e| StoreError::Corrupt(format!("text that is not UTF-8: {e}")))?,
            ),
            ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
        })
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
    const BEGIN: &'static str = "BEGIN IMMEDIATE";
    const IN_LIST: &'static str = "(SELECT value FROM json_each({list}))";

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

    fn run(&self, sql: &str) -> Result<(), StoreError> {
        Ok(self.conn.execute_batch(sql)?)
    }

    fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }
}
