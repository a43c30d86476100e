//! SQLite storage: the only module with SQL.
