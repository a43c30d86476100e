//! Whole tables of an SQLite store read and written as they are (`trajan copy`).

use super::Sqlite;
use crate::error::StoreError;
use crate::store::backend::{Search, Tables};
use crate::store::copy::{Table, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Bytes(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value(v: ValueRef<'_>) -> Result<Value, StoreError> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(
            String::from_utf8(t.to_vec()).map_err(|e| StoreError::Corrupt(format!("text that is not UTF-8: {e}")))?,
        ),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    })
}

impl Tables for Sqlite {
    fn dump(
        &self,
        table: &Table,
        each: &mut dyn FnMut(Vec<Value>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let sql = table.select(<Self as crate::store::sql::Sql>::ROW_ORDER);
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = (0..table.columns.len()).map(|i| value(r.get_ref(i)?)).collect::<Result<Vec<_>, _>>()?;
            each(row)?;
        }
        Ok(())
    }

    fn is_empty_store(&self) -> Result<bool, StoreError> {
        Ok(self.conn.query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM sources) AND NOT EXISTS (SELECT 1 FROM labels)
             AND NOT EXISTS (SELECT 1 FROM blobs) AND NOT EXISTS (SELECT 1 FROM llm_cache)
             AND NOT EXISTS (SELECT 1 FROM notes)",
            [],
            |r| r.get(0),
        )?)
    }

    fn begin_load(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    }

    fn load(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<(), StoreError> {
        let marks: Vec<String> = (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!("INSERT INTO {} ({}) VALUES ({})", table.name, table.columns.join(", "), marks.join(", "));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        for row in rows {
            stmt.execute(rusqlite::params_from_iter(row))?;
        }
        Ok(())
    }

    fn end_load(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("INSERT OR IGNORE INTO search_pending (run_id) SELECT DISTINCT run_id FROM steps; COMMIT")?;
        self.build_search_index(&mut |_, _| {})?;
        Ok(())
    }

    fn abandon_load(&mut self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
