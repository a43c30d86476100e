//! The shared SQL layer (`store::sql`) on PostgreSQL: `?N` rewritten to `$N` once per statement
//! (`Pg::prepared`, beside the statement cache), parameters bound whatever integer or float width
//! the server asks for and texts escaped ([`super::enc`]), keys locked by advisory locks, ids
//! from sequences, rows sent with `COPY`, a whole table's read through a cursor.

use super::ahead::Ahead;
use super::copy::CopyRows;
use super::{Pg, enc};
use crate::error::StoreError;
use crate::store::read::StepRow;
use crate::store::sql::{Arg, EachRow, Sql};
use crate::store::texts::Chunks;
use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use std::error::Error;
use std::hash::{Hash, Hasher};

type Failure = Box<dyn Error + Sync + Send>;

/// Rows fetched from a cursor at once ([`Sql::stream`]).
const FETCH: usize = 256;

/// `v` bound as a parameter of type `ty`, when `T` can be one.
fn bound<T: ToSql>(v: T, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failure> {
    if !T::accepts(ty) {
        return Err(format!("a {} cannot be bound to a parameter of type {ty}", std::any::type_name::<T>()).into());
    }
    v.to_sql(ty, out)
}

impl ToSql for Arg<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failure> {
        match *self {
            Arg::Null => Ok(IsNull::Yes),
            Arg::Int(v) => match *ty {
                Type::INT2 => bound(i16::try_from(v)?, ty, out),
                Type::INT4 => bound(i32::try_from(v)?, ty, out),
                Type::BOOL => bound(v != 0, ty, out),
                _ => bound(v, ty, out),
            },
            Arg::Real(v) => match *ty {
                Type::FLOAT4 => bound(v as f32, ty, out),
                _ => bound(v, ty, out),
            },
            Arg::Text(s) => bound(enc(s).as_ref(), ty, out),
            Arg::Bytes(b) => bound(b, ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl Sql for Pg {
    const NOW: &'static str = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
    const ROW_ORDER: &'static str = "id";
    const BEGIN: &'static str = "BEGIN";
    const IN_LIST: &'static str = "(SELECT jsonb_array_elements_text(CAST({list} AS text)::jsonb)::bigint)";

    fn each(&self, sql: &str, args: &[Arg<'_>], row: EachRow<'_>) -> Result<(), StoreError> {
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        for r in self.rows(sql, &params)? {
            row(&r)?;
        }
        Ok(())
    }

    fn execute(&self, sql: &str, args: &[Arg<'_>]) -> Result<u64, StoreError> {
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        self.exec(sql, &params)
    }

    fn run(&self, sql: &str) -> Result<(), StoreError> {
        match sql {
            "BEGIN" => self.in_transaction.set(true),
            "COMMIT" | "ROLLBACK" => self.in_transaction.set(false),
            _ => {}
        }
        self.client()?.batch(sql).map_err(|e| self.error(e))
    }

    fn in_transaction(&self) -> bool {
        self.in_transaction.get()
    }

    /// In one order, so two writers of the same keys never wait for each other in a circle.
    fn lock_keys(&self, mut keys: Vec<String>) -> Result<(), StoreError> {
        keys.sort();
        keys.dedup();
        let keys: Vec<String> = keys.iter().map(|t| enc(t).into_owned()).collect();
        if !keys.is_empty() {
            self.exec(
                "SELECT pg_advisory_xact_lock(hashtextextended(k, 2727)) FROM unnest($1::text[]) AS k ORDER BY k",
                &[&keys],
            )?;
        }
        Ok(())
    }

    fn new_ids(&self, table: &str, n: usize) -> Result<Vec<i64>, StoreError> {
        self.ids(&format!("{table}_id_seq"), n)
    }

    fn bulk(&self, table: &str, columns: &[&str], cells: &[Arg<'_>]) -> Result<(), StoreError> {
        if columns.is_empty() || cells.is_empty() {
            return Ok(());
        }
        let mut rows = CopyRows::default();
        for row in cells.chunks(columns.len()) {
            for cell in row {
                match *cell {
                    Arg::Null => rows.null(),
                    Arg::Int(v) => rows.int(v),
                    Arg::Real(v) => rows.opt_real(Some(v)),
                    Arg::Text(s) => rows.text(s),
                    Arg::Bytes(b) => rows.bytes(b),
                };
            }
            rows.end();
        }
        self.copy_in(&format!("COPY {table} ({}) FROM STDIN", columns.join(", ")), rows.data())
    }

    /// Through a cursor, in a transaction of its own unless one is open; a cursor per query: a
    /// `FETCH`'s statement (prepared once) knows its columns.
    fn stream(&self, sql: &str, row: EachRow<'_>) -> Result<(), StoreError> {
        let own = !self.in_transaction();
        if own {
            self.begin()?;
        }
        let mut hash = std::collections::hash_map::DefaultHasher::new();
        sql.hash(&mut hash);
        let cursor = format!("stream_{:x}", hash.finish());
        let streamed = (|| {
            self.run(&format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}"))?;
            loop {
                let rows = self.rows(&format!("FETCH {FETCH} FROM {cursor}"), &[])?;
                for r in &rows {
                    row(r)?;
                }
                if rows.len() < FETCH {
                    break;
                }
            }
            self.run(&format!("CLOSE {cursor}"))
        })();
        match (own, streamed) {
            (true, Ok(())) => self.commit(),
            (true, Err(e)) => {
                self.rollback();
                Err(e)
            }
            (false, streamed) => streamed,
        }
    }

    fn shown_step(&self, run_id: i64, index: i64) -> Result<Option<(StepRow, bool)>, StoreError> {
        self.shown_step_at_once(run_id, index)
    }

    fn with_chunks<R>(&self, named: Vec<i64>, read: impl FnOnce(&dyn Chunks) -> R) -> R {
        read(&Ahead::new(self, named))
    }
}
