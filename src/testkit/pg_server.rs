//! A PostgreSQL database of its own for each test, on the server `.ci/run` starts
//! (`.ci/postgres`): `TRAJAN_TEST_PG` is an admin URL of that server. The first test to ask makes
//! a template database with trajan's schema, or brings one an earlier build left up to date
//! (under an advisory lock: test binaries run at once);
//! every test's database is a copy of it (`CREATE DATABASE ... TEMPLATE`, about 40 ms), dropped
//! when the test ends. Without the variable the PostgreSQL tests are skipped, and say so once per
//! test binary on standard error (past the harness's capture).
//!
//! Test support, not part of the library: compiled into the tests with `#[path]`.

use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The template every test database is copied from.
const TEMPLATE: &str = "trajan_test_template";

/// A database made for one test; dropped with it.
pub struct TestDb {
    /// Its URL (the server's admin role, trusted on loopback).
    pub url: String,
    name: String,
    admin: String,
}

/// The admin URL of the test server, or `None` (and a note, once) when no server was given; a
/// failure instead under `TRAJAN_REQUIRE_TOOLS=1` (`.ci/run`, which always gives one).
pub fn server() -> Option<String> {
    match std::env::var("TRAJAN_TEST_PG") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            // `.ci/run` starts a server and sets TRAJAN_REQUIRE_TOOLS=1: there, none is a failure.
            if std::env::var("TRAJAN_REQUIRE_TOOLS").is_ok_and(|v| !v.is_empty() && v != "0") {
                panic!("no PostgreSQL server was given (TRAJAN_TEST_PG) and TRAJAN_REQUIRE_TOOLS is set");
            }
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "note: the PostgreSQL tests were skipped: no server was given (TRAJAN_TEST_PG; .ci/run starts one)"
                );
            });
            None
        }
    }
}

/// `url` with its database replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

/// A fresh database with trajan's schema, or `None` when no server was given. `migrate` applies
/// the schema to a URL (the library's `Pg::migrate`, or `trajan migrate`).
pub fn database(migrate: &dyn Fn(&str) -> Result<(), String>) -> Option<TestDb> {
    let admin = server()?;
    let mut client = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("TRAJAN_TEST_PG names a server that does not answer: {e}"));
    let ok = |r: Result<u64, postgres::Error>, what: &str| {
        r.unwrap_or_else(|e| panic!("{what}: {e}"));
    };
    ok(client.execute("SELECT pg_advisory_lock(7421100999)", &[]), "lock");
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&TEMPLATE])
        .unwrap_or_else(|e| panic!("{e}"))
        .is_some();
    if !exists {
        ok(client.execute(&format!("CREATE DATABASE {TEMPLATE}"), &[]), "create the template");
    }
    // Made new, or left by an earlier build with fewer migrations: brought up to this build's
    // schema once per test binary (migrating an up-to-date database changes nothing).
    static MIGRATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !MIGRATED.load(Ordering::Relaxed) {
        if let Err(e) = migrate(&with_database(&admin, TEMPLATE)) {
            let _ = client.execute(&format!("DROP DATABASE {TEMPLATE}"), &[]);
            panic!("migrating the template: {e}");
        }
        MIGRATED.store(true, Ordering::Relaxed);
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("trajan_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    ok(client.execute(&format!("DROP DATABASE IF EXISTS {name}"), &[]), "drop a leftover");
    ok(client.execute(&format!("CREATE DATABASE {name} TEMPLATE {TEMPLATE}"), &[]), "create a test database");
    ok(client.execute("SELECT pg_advisory_unlock(7421100999)", &[]), "unlock");
    Some(TestDb { url: with_database(&admin, &name), name, admin })
}

impl TestDb {
    /// The database dropped and made again under its name, a fresh copy of the template
    /// (connections to it are cut).
    #[allow(dead_code)] // Only the store's own tests use it; this file is compiled into several.
    pub fn make_again(&self) {
        let mut client = postgres::Client::connect(&self.admin, postgres::NoTls).unwrap_or_else(|e| panic!("{e}"));
        let lock = "SELECT pg_advisory_lock(7421100999)";
        let unlock = "SELECT pg_advisory_unlock(7421100999)";
        let drop = format!("DROP DATABASE {} WITH (FORCE)", self.name);
        let create = format!("CREATE DATABASE {} TEMPLATE {TEMPLATE}", self.name);
        for sql in [lock, &drop, &create, unlock] {
            client.execute(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name), &[]);
        }
    }
}
