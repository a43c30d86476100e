//! Hostile input, round 3 (issue 42), against the real server: two ingests of one streamed
//! file at once.

use super::tests::{database, ok};
use crate::ingest::pipeline::{self, Options, Silent};
use crate::store::Store;
use crate::store::read::RunFilter;

/// An OpenHands `output.jsonl` of `n` instances, each line about 300 bytes.
fn output_jsonl(n: usize) -> String {
    (0..n)
        .map(|i| {
            let history = serde_json::json!([
                {"id": 0, "source": "user", "action": "message", "message": "fix it", "args": {"content": "fix it"}},
                {"id": 1, "source": "agent", "action": "run", "message": format!("run {i}"),
                 "args": {"command": format!("ls {i}")}}
            ]);
            format!("{}\n", serde_json::json!({"instance_id": format!("repo__repo-{i}"), "history": history}))
        })
        .collect()
}

/// Two ingests of one JSON-lines file streamed in parts, at once: the second waits for the whole
/// of the first (not for its next commit) and replaces it; the file is stored once.
#[test]
fn two_ingests_of_one_streamed_file_at_once_store_it_once() {
    let Some((_db, url)) = database() else { return };
    let dir = ok(tempfile::tempdir());
    let file = dir.path().join("output.jsonl");
    ok(std::fs::write(&file, output_jsonl(400)));
    // Streamed, a part committed every 8 KB or so: some fifteen parts.
    let opts = Options { stream_bytes: 0, batch_bytes: 4 << 10, part_bytes: 8 << 10, workers: 1, ..Options::default() };
    let start = std::sync::Arc::new(std::sync::Barrier::new(2));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (url, file, opts, start) = (url.clone(), file.clone(), opts.clone(), start.clone());
            std::thread::spawn(move || {
                let mut store = ok(Store::connect(&url));
                start.wait();
                let report = pipeline::ingest(&mut store, &[file], &opts, &Silent);
                report.problems().iter().map(|p| p.message.clone()).collect::<Vec<_>>()
            })
        })
        .collect();
    for w in writers {
        let problems = w.join().unwrap_or_else(|_| panic!("a writer panicked"));
        assert!(problems.is_empty(), "{problems:?}");
    }
    let store = ok(Store::connect(&url));
    let runs = ok(store.list_runs(RunFilter::default()));
    let instances: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.instance_id.as_str()).collect();
    assert_eq!((runs.len(), instances.len()), (400, 400), "each instance once");
}

/// `f` run on a thread of its own: its result, or a failure once it has taken 30 s (a hang).
fn within_30_s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> (T, std::time::Duration) {
    let (tx, rx) = std::sync::mpsc::channel();
    let started = std::time::Instant::now();
    std::thread::spawn(move || drop(tx.send(f())));
    let done =
        rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap_or_else(|_| panic!("still waiting after 30 s"));
    (done, started.elapsed())
}

/// The error of opening a store at `text`, and how long it took.
fn refused_after(text: &str) -> (String, std::time::Duration) {
    let text = text.to_string();
    within_30_s(move || match PgUrl::parse(&text).and_then(|u| Pg::open(&u)) {
        Ok(_) => panic!("{text}: connected"),
        Err(e) => e.to_string(),
    })
}

/// A listener on 127.0.0.1 that takes connections and reads them without ever answering (an
/// HTTP port given by mistake waits so for a request's end).
fn silent_acceptor() -> u16 {
    let listener = ok(std::net::TcpListener::bind("127.0.0.1:0"));
    let port = ok(listener.local_addr()).port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = std::io::Read::read_to_end(&mut &stream, &mut sink);
            });
        }
    });
    port
}

use super::Pg;
use super::url::PgUrl;

/// Issue 42, item 8: a listener that never answers (it never accepts; the kernel completes the
/// TCP handshake), one that accepts and reads without answering, both at once: each given up
/// within the bound, and named.
#[test]
fn a_server_that_never_answers_is_given_up_within_the_bound_and_named() {
    let quiet = ok(std::net::TcpListener::bind("127.0.0.1:0"));
    let (q, a) = (ok(quiet.local_addr()).port(), silent_acceptor());
    for (url, port) in [
        (format!("postgres://ann:Sekr1t@127.0.0.1:{q}/db?connect_timeout=1"), q),
        (format!("postgres://ann@127.0.0.1:{a}/db?connect_timeout=1&sslmode=disable"), a),
    ] {
        let (said, took) = refused_after(&url);
        assert!(said.contains(&format!("127.0.0.1:{port} did not answer within 1 s")), "{said}");
        assert!(!said.contains("Sekr1t"), "{said}");
        assert!(took < std::time::Duration::from_secs(5), "{took:?}: {said}");
    }
    let (said, took) = refused_after(&format!("host=127.0.0.1,127.0.0.1 port={q},{a} connect_timeout=1"));
    assert!(
        said.contains(&format!("127.0.0.1:{q} did not answer"))
            && said.contains(&format!("127.0.0.1:{a} did not answer")),
        "{said}"
    );
    assert!(took < std::time::Duration::from_secs(8), "{took:?}");
    drop(quiet);
}

/// A proxy on 127.0.0.1 to `to` that goes silent on demand: from then on it forwards nothing,
/// either way, on connections it had and on new ones (a server that stops answering mid-session).
fn proxy(to: std::net::SocketAddr) -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::Ordering::Relaxed;
    let listener = ok(std::net::TcpListener::bind("127.0.0.1:0"));
    let port = ok(listener.local_addr()).port();
    let silent = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let quiet = silent.clone();
    let pump =
        |from: std::net::TcpStream, to: std::net::TcpStream, silent: std::sync::Arc<std::sync::atomic::AtomicBool>| {
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                while let Ok(n @ 1..) = std::io::Read::read(&mut &from, &mut buf) {
                    if !silent.load(Relaxed) && std::io::Write::write_all(&mut &to, &buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(std::net::Shutdown::Both);
            });
        };
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(to) else { continue };
            let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) else { continue };
            pump(client, server, quiet.clone());
            pump(s, c, quiet.clone());
        }
    });
    (port, silent)
}

/// A server that stops answering mid-session: the statement waiting is given up within about
/// twice the bound, named; once it answers again, the next call connects again. A statement that
/// takes longer than the bound on a server that answers is waited for.
#[test]
fn a_statement_the_server_stops_answering_is_given_up_and_a_long_one_is_not() {
    use crate::store::backend::Reads;
    let Some((db, url)) = database() else { return };
    let at: std::net::SocketAddr = ok(url.host_port().parse());
    let (port, silent) = proxy(at);
    let proxied = db.url.replace(&url.host_port(), &format!("127.0.0.1:{port}"));
    let proxied = format!("{proxied}{}connect_timeout=1", if proxied.contains('?') { '&' } else { '?' });
    let ((said, took), _) = within_30_s(move || {
        let pg = ok(Pg::open(&ok(PgUrl::parse(&proxied))));
        // Three seconds of a live server's silence: waited for.
        assert_eq!(ok(pg.one("SELECT 7 FROM pg_sleep(3)", &[])).get::<_, i32>(0), 7);
        silent.store(true, std::sync::atomic::Ordering::Relaxed);
        let started = std::time::Instant::now();
        let said = pg.list_runs(crate::store::read::RunFilter::default()).err().map(|e| e.to_string());
        let took = started.elapsed();
        silent.store(false, std::sync::atomic::Ordering::Relaxed);
        assert!(ok(pg.list_runs(crate::store::read::RunFilter::default())).is_empty(), "connected again");
        (said.unwrap_or_default(), took)
    });
    assert!(said.contains(&format!("127.0.0.1:{port} did not answer within 1 s")), "{said}");
    assert!(took < std::time::Duration::from_secs(6), "{took:?}");
}
