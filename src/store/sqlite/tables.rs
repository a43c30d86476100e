//! A copy into an SQLite store (`trajan copy`; `store::sql::tables` reads and writes the tables):
//! its runs wait for the search index, built once the copy commits.

use super::Sqlite;
use crate::error::StoreError;
use crate::store::sql::tables::CopyPath;

impl CopyPath for Sqlite {
    fn loaded(&self) -> Result<(), StoreError> {
        self.conn.execute("INSERT OR IGNORE INTO search_pending (run_id) SELECT DISTINCT run_id FROM steps", [])?;
        Ok(())
    }
}
