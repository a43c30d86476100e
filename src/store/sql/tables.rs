//! Whole tables read and written as they are (`trajan copy`), alike for both stores: a table's
//! rows streamed out in its key's order, rows written in bulk in one transaction. What a backend
//! adds is [`CopyPath`]'s.

use super::{Arg, Sql};
use crate::error::StoreError;
use crate::store::backend::{Search, Tables};
use crate::store::copy::{Table, Value};

/// What a backend does itself around a copy into it.
pub(in crate::store) trait CopyPath: Sql + Search {
    /// Whether this store may take a copy, said before one begins (PostgreSQL: the privileges its
    /// end needs).
    fn may_load(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The copy's rows are all in, its transaction still open: what the store derives from them
    /// in it (ids given out next, search).
    fn loaded(&self) -> Result<(), StoreError>;
}

impl<'a> From<&'a Value> for Arg<'a> {
    fn from(v: &'a Value) -> Self {
        match v {
            Value::Null => Arg::Null,
            Value::Int(v) => Arg::Int(*v),
            Value::Real(v) => Arg::Real(*v),
            Value::Text(t) => Arg::Text(t),
            Value::Bytes(b) => Arg::Bytes(b),
        }
    }
}

impl<S: CopyPath> Tables for S {
    fn dump(
        &self,
        table: &Table,
        each: &mut dyn FnMut(Vec<Value>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.stream(&table.select(S::ROW_ORDER), &mut |r| {
            each((0..table.columns.len()).map(|i| r.value(i)).collect::<Result<_, _>>()?)
        })
    }

    fn is_empty_store(&self) -> Result<bool, StoreError> {
        self.one(
            "SELECT NOT EXISTS (SELECT 1 FROM sources) AND NOT EXISTS (SELECT 1 FROM labels)
             AND NOT EXISTS (SELECT 1 FROM blobs) AND NOT EXISTS (SELECT 1 FROM llm_cache)
             AND NOT EXISTS (SELECT 1 FROM notes)",
            &[],
            |r| r.flag(0),
        )
    }

    fn begin_load(&mut self) -> Result<(), StoreError> {
        self.may_load()?;
        self.begin()
    }

    fn load(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<(), StoreError> {
        let cells: Vec<Arg<'_>> = rows.iter().flatten().map(Arg::from).collect();
        self.bulk(table.name, table.columns, &cells)
    }

    /// The search index is made after the commit where it is built apart from the write
    /// (SQLite's).
    fn end_load(&mut self) -> Result<(), StoreError> {
        if let Err(e) = self.loaded().and_then(|()| self.commit()) {
            self.rollback();
            return Err(e);
        }
        self.build_search_index(&mut |_, _| {})?;
        Ok(())
    }

    fn abandon_load(&mut self) {
        self.rollback();
    }
}
