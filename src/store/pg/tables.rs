//! A copy into a PostgreSQL store (`trajan copy`; `store::sql::tables` reads and writes the
//! tables, rows sent with `COPY`, read through a cursor): the sequences moved past the copied
//! ids, the search terms made.

use super::term_rows::TermRows;
use super::{Cells, Pg};
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::sql::Sql;
use crate::store::sql::tables::CopyPath;
use crate::store::{terms, texts};

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

impl CopyPath for Pg {
    /// The copy ends by advancing every id sequence past the copied ids (`setval`, which needs
    /// UPDATE on the sequence): a role that may not is told now, not after the whole copy.
    fn may_load(&self) -> Result<(), StoreError> {
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
        Ok(())
    }

    /// Ids given out next come after the copied ones; every step's search terms, read through a
    /// cursor, written with `COPY` about 16 MB at a time.
    fn loaded(&self) -> Result<(), StoreError> {
        for (sequence, max) in SEQUENCES {
            self.exec(&format!("SELECT setval('{sequence}', greatest(coalesce(({max}), 0), 1))"), &[])?;
        }
        let (mut cache, mut rows) = (texts::ChunkCache::default(), TermRows::default());
        self.stream(
            "SELECT t.step_id, t.thought, t.action, t.observation, t.response, t.args, t.chunk_id, t.chunk_at
             FROM step_texts t ORDER BY t.step_id",
            &mut |r| {
                let t = texts::of_row(r, 1, &mut cache, self)?;
                let fields = [sanitize(&t.thought), sanitize(&t.action), sanitize(&t.observation)];
                rows.push(r.int(0)?, &terms::document(&[&fields[0], &fields[1], &fields[2]]));
                if rows.full() {
                    rows.send(self)?;
                }
                Ok(())
            },
        )?;
        rows.send(self)
    }
}
