//! What the tests of both stores share (`sqlite/tests`, `pg/tests.rs`): their helpers, and the
//! tests written once for any store (`reingest.rs`), each run on SQLite and on PostgreSQL.

mod reingest;

use crate::model::{Format, Message, Parsed, Run, Step};
use crate::store::{SourceRecord, Store};

pub(super) fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn record<'a>(path: &'a str, hash: &'a [u8; 32]) -> SourceRecord<'a> {
    SourceRecord { path, kind: "file", format: "test", size: 1, hash }
}

pub(super) fn step(thought: &str, action: &str, observation: &str) -> Step {
    Step { thought: thought.into(), action: action.into(), observation: observation.into(), ..Step::default() }
}

/// A run of `instance` with one step (observing `obs`) and a history of two messages.
pub(super) fn run(instance: &str, model: Option<&str>, obs: &str) -> Run {
    Run {
        instance_id: instance.to_string(),
        format: Some(Format::SweAgent),
        model: model.map(str::to_string),
        steps: vec![step("look around", "ls", obs)],
        history: vec![
            Message { role: "system".into(), content: "You are a helpful agent.".into(), extra: None },
            Message { role: "user".into(), content: format!("Fix {instance}"), extra: None },
        ],
        ..Run::default()
    }
}

/// Runs of these instances at their places in a source.
pub(super) fn placed(instances: &[&str]) -> Parsed {
    let runs = instances.iter().enumerate().map(|(i, id)| Run { position: i as i64, ..run(id, None, "x") }).collect();
    Parsed { runs, ..Parsed::default() }
}

/// `test` on a new SQLite database, then on a new PostgreSQL one when a server is given (else
/// that part is skipped, as `pg/tests.rs` says): the store to write with, and the database
/// opened again to read.
pub(super) fn on_each_store(test: impl Fn(&mut Store, &dyn Fn() -> Store)) {
    let dir = ok(tempfile::tempdir());
    let db = dir.path().join("t.db");
    test(&mut ok(Store::open(&db)), &|| ok(Store::open_read_only(&db)));
    if let Some((_db, url)) = crate::store::pg::tests::database() {
        test(&mut ok(Store::connect(&url)), &|| ok(Store::connect_read_only(&url)));
    }
}
