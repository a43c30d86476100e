//! Whole tables of a PostgreSQL store read (through a cursor) and written (with `COPY`) as they
//! are (`trajan copy`).

use super::copy::CopyRows;
use super::{Cells, Pg, dec};
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::backend::Tables;
use crate::store::copy::{Table, Value};
use crate::store::{terms, texts};
use postgres::types::Type;

/// Rows fetched from a cursor at once.
const FETCH: usize = 256;

/// The sequences of the tables' ids, and the tables whose ids they give.
const SEQUENCES: [(&str, &str); 12] = [
    ("sources_id_seq", "SELECT max(id) FROM sources"),
    ("blobs_id_seq", "SELECT max(id) FROM blobs"),
    ("tasks_id_seq", "SELECT max(id) FROM tasks"),
    ("outcomes_id_seq", "SELECT max(id) FROM outcomes"),
    ("predictions_id_seq", "SELECT max(id) FROM predictions"),
    (
        "runs_id_seq",
        "SELECT greatest((SELECT max(id) FROM runs), (SELECT max(run_id) FROM labels), (SELECT max(run_id) FROM classify_errors))",
    ),
    ("text_chunks_id_seq", "SELECT max(id) FROM text_chunks"),
    ("steps_id_seq", "SELECT max(id) FROM steps"),
    ("edits_id_seq", "SELECT max(id) FROM edits"),
    ("labels_id_seq", "SELECT max(id) FROM labels"),
    ("classify_errors_id_seq", "SELECT max(id) FROM classify_errors"),
    ("notes_id_seq", "SELECT max(id) FROM notes"),
];

fn value(r: &postgres::Row, i: usize) -> Result<Value, StoreError> {
    let ty = r.columns()[i].type_().clone();
    let v = if ty == Type::INT8 {
        r.opt_int(i)?.map(Value::Int)
    } else if ty == Type::FLOAT8 {
        r.opt_real(i)?.map(Value::Real)
    } else if ty == Type::BYTEA {
        r.try_get::<_, Option<Vec<u8>>>(i).map_err(|e| StoreError::Postgres(e.to_string()))?.map(Value::Bytes)
    } else {
        r.try_get::<_, Option<&str>>(i).map_err(|e| StoreError::Postgres(e.to_string()))?.map(|t| Value::Text(dec(t)))
    };
    Ok(v.unwrap_or(Value::Null))
}

impl Tables for Pg {
    fn dump(
        &self,
        table: &Table,
        each: &mut dyn FnMut(Vec<Value>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let sql = table.select(<Self as crate::store::sql::Sql>::ROW_ORDER);
        let own = !self.in_transaction.get();
        if own {
            self.run("BEGIN")?;
        }
        let dumped = (|| {
            // A cursor per table: a FETCH's statement (prepared once) knows its columns.
            let cursor = format!("dump_{}", table.name);
            self.run(&format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}"))?;
            loop {
                let rows = self.rows(&format!("FETCH {FETCH} FROM {cursor}"), &[])?;
                for r in &rows {
                    each((0..table.columns.len()).map(|i| value(r, i)).collect::<Result<_, _>>()?)?;
                }
                if rows.len() < FETCH {
                    break;
                }
            }
            self.run(&format!("CLOSE {cursor}"))
        })();
        if own {
            if dumped.is_ok() { self.run("COMMIT")? } else { self.abandon() }
        }
        dumped
    }

    fn is_empty_store(&self) -> Result<bool, StoreError> {
        self.one(
            "SELECT NOT EXISTS (SELECT 1 FROM sources) AND NOT EXISTS (SELECT 1 FROM labels)
             AND NOT EXISTS (SELECT 1 FROM blobs) AND NOT EXISTS (SELECT 1 FROM llm_cache)
             AND NOT EXISTS (SELECT 1 FROM notes)",
            &[],
        )?
        .flag(0)
    }

    fn begin_load(&mut self) -> Result<(), StoreError> {
        // The copy ends by advancing every id sequence past the copied ids (`setval`, which needs
        // UPDATE on the sequence): a role that may not is told now, not after the whole copy.
        let names: Vec<String> = SEQUENCES.iter().map(|(s, _)| s.to_string()).collect();
        let missing: Vec<String> = self
            .rows("SELECT s FROM unnest($1::text[]) s WHERE NOT has_sequence_privilege(s, 'UPDATE')", &[&names])?
            .iter()
            .map(|r| r.text(0))
            .collect::<Result<_, _>>()?;
        if !missing.is_empty() {
            let role = self.one("SELECT current_user::text", &[])?.text(0)?;
            return Err(StoreError::CopyPrivileges { role: sanitize(&role).into_owned(), missing: missing.join(", ") });
        }
        self.run("BEGIN")
    }

    fn load(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<(), StoreError> {
        let mut copy = CopyRows::default();
        for row in rows {
            for v in row {
                match v {
                    Value::Null => copy.null(),
                    Value::Int(i) => copy.int(*i),
                    Value::Real(r) => copy.opt_real(Some(*r)),
                    Value::Text(t) => copy.text(t),
                    Value::Bytes(b) => copy.bytes(b),
                };
            }
            copy.end();
        }
        self.copy_in(&format!("COPY {} ({}) FROM STDIN", table.name, table.columns.join(", ")), copy.data())
    }

    fn end_load(&mut self) -> Result<(), StoreError> {
        let ended = (|| {
            for (sequence, max) in SEQUENCES {
                self.exec(&format!("SELECT setval('{sequence}', greatest(coalesce(({max}), 0), 1))"), &[])?;
            }
            self.index_all()
        })();
        match ended {
            Ok(()) => self.run("COMMIT"),
            Err(e) => {
                self.abandon();
                Err(e)
            }
        }
    }

    fn abandon_load(&mut self) {
        self.abandon();
    }
}

impl Pg {
    /// The search terms of every step (after a copy): read through a cursor, written with
    /// `COPY` about 16 MB at a time.
    fn index_all(&self) -> Result<(), StoreError> {
        self.run(
            "DECLARE texts NO SCROLL CURSOR FOR SELECT t.step_id, t.thought, t.action, t.observation, t.response,
                 t.args, t.chunk_id, t.chunk_at FROM step_texts t ORDER BY t.step_id",
        )?;
        let (mut cache, mut rows) = (texts::ChunkCache::default(), super::term_rows::TermRows::default());
        loop {
            let fetched = self.rows(&format!("FETCH {FETCH} FROM texts"), &[])?;
            for r in &fetched {
                let t = texts::of_row(r, 1, &mut cache, self)?;
                let fields = [sanitize(&t.thought), sanitize(&t.action), sanitize(&t.observation)];
                rows.push(r.int(0)?, &terms::document(&[&fields[0], &fields[1], &fields[2]]));
            }
            if rows.full() || fetched.len() < FETCH {
                rows.send(self)?;
            }
            if fetched.len() < FETCH {
                break;
            }
        }
        self.run("CLOSE texts")
    }
}
