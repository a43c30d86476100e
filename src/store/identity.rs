//! What identifies a run across re-ingests (SQLite's migration 8, PostgreSQL's 3): its source's
//! path, its instance, its RetryAgent attempt, and which of the source's runs with that instance
//! and attempt it is (0 the first, in the order the source holds them). Labels and notes name
//! their run by it beside its id, and are pointed at the run that has it whenever its source is
//! written (`follow_runs` in `sql/identity.rs`, which reads and writes the rows on either
//! store): a human's work follows its run through any re-ingest, even one that gave the run a
//! new id (a source removed, then ingested again, or its runs moved in the file).

/// A run's identity, as labels and notes store it (`run_source`, `run_instance`, `run_attempt`,
/// `run_nth`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Identity {
    pub source: String,
    pub instance: String,
    pub attempt: Option<i64>,
    pub nth: i64,
}

/// The tables whose rows name a run by identity.
pub(super) const FOLLOWERS: [&str; 2] = ["labels", "notes"];
