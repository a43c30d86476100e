//! The LLM classifier end to end: the real binary against a chat-completions server this test
//! starts on 127.0.0.1 (`src/testkit/chat_server.rs`), scripted per run with good replies and every
//! fault the classifier must survive.

use crate::chat_server;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chat_server::{Behaviour, ChatServer, RecordedRequest, error_body};
use trajan::label::Source;
use trajan::store::Store;

use crate::common;

const KEY_VAR: &str = "TRAJAN_TEST_LLM_KEY";
const KEY: &str = "sk-test-9f8e7d6c5b4a-never-stored";
const MODEL: &str = "test-model";

fn trajan(db: &Path, args: &[&str]) -> Output {
    common::command()
        .arg("--db")
        .arg(db)
        .args(args)
        .env(KEY_VAR, KEY)
        .env("XDG_CONFIG_HOME", db.parent().unwrap_or(Path::new("/")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run trajan: {e}"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A database with the classification fixtures ingested.
fn fixture_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let fixtures = common::fixtures_dir("classify");
    let out = trajan(&db, &["ingest", fixtures.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    (dir, db)
}

/// The instance a request is about, from the prompt's `# Run N (instance)` line.
fn instance_of(r: &RecordedRequest) -> String {
    let messages = r.json().and_then(|b| b["messages"].as_array().cloned()).unwrap_or_default();
    let user = messages.get(1).and_then(|m| m["content"].as_str()).unwrap_or("");
    user.lines()
        .find_map(|l| {
            l.strip_prefix("# Run ")
                .and_then(|rest| rest.split_once('('))
                .map(|(_, i)| i.trim_end_matches(')').to_string())
        })
        .unwrap_or_default()
}

fn is_validation_retry(r: &RecordedRequest) -> bool {
    r.json().and_then(|b| b["messages"].as_array().map(|m| m.len())).unwrap_or(0) > 2
}

fn good(mode: &str, step: usize) -> Behaviour {
    let content = serde_json::json!({
        "modes": [{"mode": mode, "confidence": 0.8, "evidence": [{"step": step, "note": "see here"}], "rationale": "because"}],
        "unclassified": false,
        "summary": "a summary",
        "onset": {"step": step, "evidence": [{"step": step, "note": "the first edit elsewhere"}], "confidence": 0.6,
                  "rationale": "the first edit in the wrong place"},
        "blame": {"value": "agent", "reason": "its own edit"}
    });
    Behaviour::Reply { content: content.to_string(), tokens_in: 1000, tokens_out: 50 }
}

fn unclassified() -> Behaviour {
    Behaviour::Reply {
        content: r#"{"modes": [], "unclassified": true, "summary": "wrong logic", "onset": {"step": 1, "rationale": "the fix it committed to"}, "blame": {"value": "agent", "reason": "wrong logic"}}"#.into(),
        tokens_in: 900,
        tokens_out: 20,
    }
}

/// Per instance: what the server does on the first request, then on later ones.
fn script(instance: &str, attempt: usize, r: &RecordedRequest) -> Behaviour {
    let name = instance.trim_start_matches("classify__");
    let auth = r.header("authorization").unwrap_or("").to_string();
    match (name, attempt) {
        ("gave-up-applying", 0) => Behaviour::rate_limited(1),
        ("temp-errors", 0) => Behaviour::error(500, "overloaded"),
        ("mixture", 0) => Behaviour::Malformed("{\"choices\": [".into()),
        ("silent-noop", 0) => Behaviour::Truncated,
        ("stale-periphery", 0) => Behaviour::EmptyChoices,
        ("gold-periphery", 0) => Behaviour::Hangup,
        // An answer that fails validation, then the corrected one.
        ("flooding", _) if !is_validation_retry(r) => good("flooding_the_context", 1),
        // Always failing: a server error that echoes the key back, and a server too slow.
        ("cut-off", _) => Behaviour::Status {
            code: 500,
            retry_after: None,
            body: error_body("server_error", &format!("bad auth {auth}")),
        },
        ("format-loop", _) => Behaviour::Delay(Duration::from_secs(3), Box::new(unclassified())),
        ("wrong-logic", _) => unclassified(),
        // Invalid every time: the run fails, and what it spent is still counted.
        ("missed-location-gold", _) => good("no_such_mode", 1),
        _ => good("missed_edit_location", 2),
    }
}

fn scripted_server() -> ChatServer {
    let attempts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    ChatServer::start(move |r| {
        let instance = instance_of(r);
        let mut a = attempts.lock().unwrap_or_else(|p| p.into_inner());
        let n = a.entry(instance.clone()).or_default();
        let b = script(&instance, *n, r);
        *n += 1;
        b
    })
    .unwrap()
}

fn llm_args(url: &str) -> Vec<String> {
    [
        "classify",
        "--llm",
        "--base-url",
        url,
        "--model",
        MODEL,
        "--api-key-env",
        KEY_VAR,
        "--concurrency",
        "4",
        "--timeout",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run_llm(db: &Path, url: &str, extra: &[&str]) -> Output {
    let mut args = llm_args(url);
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    trajan(db, &refs)
}

#[test]
fn labels_every_run_and_survives_every_fault() {
    let (_dir, db) = fixture_db();
    let server = scripted_server();
    let out = run_llm(&db, &server.base_url(), &["--price-in", "1", "--price-out", "2"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "three runs fail, so the exit status says so: {all}");
    assert!(!all.contains(KEY), "the key reached the output: {all}");
    assert!(all.contains("8 labelled") && all.contains("3 failed"), "{all}");

    let store = Store::open(&db).unwrap();
    let labels = store.labels(None, true).unwrap();
    let llm: Vec<_> = labels.iter().filter(|l| l.label.source == Source::Llm).collect();
    let by_instance: HashMap<&str, _> = llm.iter().map(|l| (l.instance_id.as_deref().unwrap_or(""), *l)).collect();
    for name in [
        "gave-up-applying",
        "temp-errors",
        "mixture",
        "silent-noop",
        "stale-periphery",
        "gold-periphery",
        "flooding",
        "wrong-logic",
    ] {
        let l = by_instance
            .get(format!("classify__{name}").as_str())
            .unwrap_or_else(|| panic!("no LLM label for {name}: {all}"));
        let p = &l.label.provenance;
        assert_eq!((l.label.rater.as_str(), p.model.as_deref()), (MODEL, Some(MODEL)));
        assert_eq!(p.input_hash.as_ref().map(|h| h.len()), Some(32));
        assert!(p.latency_ms.is_some() && p.cost.is_some_and(|c| c > 0.0), "{name}: {p:?}");
        assert_eq!(l.label.taxonomy_version, "1.0");
    }
    // The repaired reply: two requests' tokens, the corrected mode.
    let flooding = &by_instance["classify__flooding"].label;
    assert_eq!(flooding.modes[0].mode, "missed_edit_location");
    assert_eq!(flooding.provenance.tokens_in, Some(2000));
    assert!(by_instance["classify__wrong-logic"].label.is_unclassified());
    // Failed runs: an error each, and no label at all (never a partial one).
    for name in ["classify__cut-off", "classify__format-loop", "classify__missed-location-gold"] {
        assert!(!by_instance.contains_key(name), "{name} has a label");
    }
    let errors = store.classify_errors(None).unwrap();
    let msgs: Vec<&str> = errors.iter().map(|e| e.error.as_str()).collect();
    assert_eq!(errors.len(), 3, "{msgs:?}");
    assert!(
        msgs.iter().any(|m| m.contains("invalid reply after one retry") && m.contains("2000 tokens in, 100 out spent")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("500"))
            && msgs.iter().any(|m| m.to_lowercase().contains("timed out") || m.contains("timeout")),
        "{msgs:?}"
    );
    // The key is in no table, the WAL or the database file.
    drop(store);
    for f in [db.clone(), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&f) {
            assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "key found in {}", f.display());
        }
    }
    // Every request carried the key and the model; none after the cache.
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}")[..])));
    assert!(requests.iter().all(|r| r.json().is_some_and(|b| b["model"] == MODEL)));

    // Again: labelled runs are unchanged (no request), only the two failures are tried again.
    let before = server.request_count();
    let again = run_llm(&db, &server.base_url(), &[]);
    let again_text = text(&again);
    assert!(again_text.contains("0 labelled") && again_text.contains("8 unchanged"), "{again_text}");
    let new: Vec<String> = server.requests()[before..].iter().map(instance_of).collect();
    let failing = ["classify__cut-off", "classify__format-loop", "classify__missed-location-gold"];
    assert!(new.iter().all(|i| failing.contains(&i.as_str())), "{new:?}");
}

#[test]
fn dry_run_prints_prompts_and_sends_nothing() {
    let (_dir, db) = fixture_db();
    let server = scripted_server();
    let out = run_llm(
        &db,
        &server.base_url(),
        &["--dry-run", "--price-in", "3", "--price-out", "15", "classify__stale-periphery"],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("=== system prompt") && t.contains("incomplete_peripheral_propagation"), "{t}");
    assert!(t.contains("=== run ") && t.contains("tokens") && t.contains("about $"), "{t}");
    assert!(t.contains("### step 1") && t.contains("# Signals"), "{t}");
    assert_eq!(server.request_count(), 0);
    assert!(Store::open(&db).unwrap().labels(None, false).unwrap().is_empty());
}

#[test]
fn refused_connections_fail_each_run_quickly_and_write_no_label() {
    let (_dir, db) = fixture_db();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = Instant::now();
    let out = run_llm(&db, &format!("http://127.0.0.1:{port}/v1"), &["classify__mixture", "classify__temp-errors"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    let store = Store::open(&db).unwrap();
    assert!(store.labels(None, false).unwrap().is_empty());
    let errors = store.classify_errors(None).unwrap();
    assert_eq!(errors.len(), 2);
    assert!(errors.iter().all(|e| e.error.contains(&format!("127.0.0.1:{port}"))), "{errors:?}");
}

#[test]
fn a_refused_connection_is_reported_once_with_the_runs_it_hit() {
    let (_dir, db) = fixture_db();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let refused = format!("connection refused by {base} (is the server running?)");
    // Every one of the 11 runs fails the same way: one line says so, with the count.
    let out = run_llm(&db, &base, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("11 failed"), "{t}");
    let errors: Vec<&str> = t.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{t}");
    assert!(errors[0].starts_with(&format!("error: {refused} — 11 runs (")), "{t}");
    assert!(errors[0].ends_with(", …)"), "ten run ids, then an ellipsis: {t}");
    // The database still has one error per run.
    assert_eq!(Store::open(&db).unwrap().classify_errors(None).unwrap().len(), 11);

    // JSON keeps the per-run list and adds the grouped form.
    let out = run_llm(&db, &base, &["--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let failed = report["failed"].as_array().cloned().unwrap_or_default();
    assert_eq!(failed.len(), 11, "{report}");
    assert!(failed.iter().all(|f| f[1] == refused.as_str()), "{report}");
    let groups = report["failed_grouped"].as_array().cloned().unwrap_or_default();
    assert_eq!(groups.len(), 1, "{report}");
    assert_eq!((groups[0]["error"].as_str(), groups[0]["count"].as_u64()), (Some(refused.as_str()), Some(11)));
    let mut runs: Vec<i64> = failed.iter().filter_map(|f| f[0].as_i64()).collect();
    runs.sort_unstable();
    assert_eq!(groups[0]["runs"], serde_json::json!(runs), "{report}");
}

/// Run one run against a server answering every request with `responder`'s behaviour; the
/// output, which must report a failure.
fn fail_one(db: &Path, responder: impl Fn(&RecordedRequest) -> Behaviour + Send + Sync + 'static) -> (String, String) {
    let server = ChatServer::start(responder).unwrap();
    let out = run_llm(db, &server.base_url(), &["classify__mixture"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(!t.contains(KEY), "the key reached the output: {t}");
    assert!(!t.to_lowercase().contains("malformed"), "an HTTP error reported as a malformed response: {t}");
    (t, server.base_url())
}

#[test]
fn http_errors_name_the_status_and_what_to_check() {
    let (_dir, db) = fixture_db();
    let echo_key =
        |r: &RecordedRequest| format!("Incorrect API key provided: {}", r.header("authorization").unwrap_or(""));

    let (t, url) = fail_one(&db, |_| Behaviour::status(404, r#"{"detail":"Not Found"}"#));
    let line = format!(
        "LLM endpoint not found: HTTP 404 Not Found from POST {url}/chat/completions; check --base-url: \
         nothing answers chat completions there; the server said: {{\"detail\":\"Not Found\"}}"
    );
    assert!(t.contains(&line), "{t}");

    let (t, url) = fail_one(&db, |_| Behaviour::status(404, ""));
    assert!(t.contains(&format!("HTTP 404 Not Found from POST {url}/chat/completions; check --base-url")), "{t}");
    assert!(t.contains("; the body was empty"), "{t}");

    let (t, _) = fail_one(&db, move |r| Behaviour::error(401, &echo_key(r)));
    assert!(t.contains("LLM key refused: HTTP 401 Unauthorized from POST "), "{t}");
    assert!(t.contains(&format!("check the API key in {KEY_VAR} (the variable --api-key-env names)")), "{t}");
    assert!(t.contains("Incorrect API key provided: Bearer [redacted]"), "the echo arrived redacted: {t}");

    let (t, _) = fail_one(&db, move |r| Behaviour::error(403, &echo_key(r)));
    assert!(t.contains("LLM access denied: HTTP 403 Forbidden from POST "), "{t}");
    assert!(
        t.contains(&format!(
            "the API key in {KEY_VAR} (the variable --api-key-env names) may not use this model or endpoint"
        )),
        "{t}"
    );

    let (t, _) = fail_one(&db, |_| Behaviour::Status {
        code: 400,
        retry_after: None,
        body: serde_json::json!({"error": {
            "message": "The model `test-model` does not exist or you do not have access to it.",
            "type": "invalid_request_error", "param": null, "code": "model_not_found"
        }})
        .to_string(),
    });
    assert!(t.contains("LLM model not found: HTTP 400 Bad Request from POST "), "{t}");
    assert!(t.contains(&format!("check --model: the server does not serve \"{MODEL}\"")), "{t}");
    assert!(!t.contains("--base-url"), "{t}");

    let page = "<!DOCTYPE html><html><head><title>Error</title></head><body><h1>Internal Server Error</h1>\
                <p>The upstream model crashed.</p></body></html>";
    let (t, _) = fail_one(&db, |_| Behaviour::Html { code: 500, body: page.into() });
    assert!(t.contains("LLM server error: HTTP 500 Internal Server Error from POST "), "{t}");
    assert!(t.contains("the server said: Error Internal Server Error The upstream model crashed."), "{t}");
    assert!(!t.contains("<h1>"), "tags are left out: {t}");

    // Not one label from all that; an error per attempt, each naming its status.
    let store = Store::open(&db).unwrap();
    assert!(store.labels(None, false).unwrap().is_empty());
    let errors: Vec<String> = store.classify_errors(None).unwrap().into_iter().map(|e| e.error).collect();
    for status in ["HTTP 404", "HTTP 401", "HTTP 403", "HTTP 400", "HTTP 500"] {
        assert!(errors.iter().any(|e| e.contains(status)), "{status}: {errors:?}");
    }
}

/// Issue 24: a reply of gigabytes (one that never ends here, or a completion larger than the
/// cap) fails its run with a clear error instead of being read whole; the cap is configurable.
#[test]
fn a_reply_larger_than_the_cap_fails_its_run_without_being_read() {
    let (_dir, db) = fixture_db();
    let (t, _) = fail_one(&db, |_| Behaviour::Endless);
    assert!(t.contains("LLM reply larger than 4.0 MiB"), "{t}");
    let padded = |_: &RecordedRequest| match good("context_flooding", 1) {
        Behaviour::Reply { content, tokens_in, tokens_out } => {
            Behaviour::Reply { content: format!("{content}{}", " ".repeat(6 << 20)), tokens_in, tokens_out }
        }
        other => other,
    };
    let (t, _) = fail_one(&db, padded);
    assert!(t.contains("LLM reply larger than 4.0 MiB"), "{t}");
    let store = Store::open(&db).unwrap();
    let errors: Vec<String> = store.classify_errors(None).unwrap().into_iter().map(|e| e.error).collect();
    assert!(errors.iter().all(|e| e.contains("larger than 4.0 MiB")), "{errors:?}");
    drop(store);
    // Read with a larger cap, the same reply labels the run.
    let server = ChatServer::start(padded).unwrap();
    let out = run_llm(&db, &server.base_url(), &["classify__mixture", "--max-reply-mb", "16"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = run_llm(&db, &server.base_url(), &["classify__mixture", "--max-reply-mb", "0"]);
    assert!(text(&out).contains("--max-reply-mb must be a number of MB above 0"), "{}", text(&out));
}

#[test]
fn a_prompt_answered_before_is_served_from_the_cache() {
    let (_dir, db) = fixture_db();
    let server = scripted_server();
    let out = run_llm(&db, &server.base_url(), &["classify__mixture"]);
    assert!(out.status.success(), "{}", text(&out));
    let asked = server.request_count();
    // Another label for the run from a different prompt (as after a re-ingest of a changed file)
    // makes the run due again; its prompt is the cached one, so no request is made.
    let store = Store::open(&db).unwrap();
    let mut other = store.labels(None, true).unwrap().remove(0).label;
    other.provenance.input_hash = Some("0".repeat(32));
    store.add_label(&other, None).unwrap();
    drop(store);
    let out = run_llm(&db, &server.base_url(), &["classify__mixture", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["from_cache"].as_u64(), report["labelled"].as_u64()), (Some(1), Some(0)), "{report}");
    assert_eq!(server.request_count(), asked);
}

#[test]
fn llm_without_a_model_or_key_says_what_is_missing() {
    let (_dir, db) = fixture_db();
    let out = trajan(&db, &["classify", "--llm", "--base-url", "http://127.0.0.1:9/v1"]);
    assert!(!out.status.success() && text(&out).contains("--model"), "{}", text(&out));
    let out = common::command()
        .args([
            "--db",
            db.to_str().unwrap(),
            "classify",
            "--llm",
            "--model",
            "m",
            "--api-key-env",
            "TRAJAN_TEST_UNSET_KEY",
        ])
        .env("XDG_CONFIG_HOME", db.parent().unwrap_or(Path::new("/")))
        .output()
        .unwrap();
    assert!(!out.status.success() && text(&out).contains("TRAJAN_TEST_UNSET_KEY is not set"), "{}", text(&out));
}

#[test]
fn a_killed_classification_resumes_without_asking_twice() {
    let (_dir, db) = fixture_db();
    let slow =
        ChatServer::start(|_| Behaviour::Delay(Duration::from_millis(400), Box::new(good("missed_edit_location", 1))))
            .unwrap();
    let url = slow.base_url();
    let args =
        ["classify", "--llm", "--base-url", &url, "--model", MODEL, "--api-key-env", KEY_VAR, "--concurrency", "1"];
    let mut child = common::command()
        .arg("--db")
        .arg(&db)
        .args(args)
        .env(KEY_VAR, KEY)
        .env("XDG_CONFIG_HOME", db.parent().unwrap_or(Path::new("/")))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL: no chance to tidy up) once a few labels are committed.
    let deadline = Instant::now() + Duration::from_secs(30);
    let llm_labels = |db: &Path| Store::open(db).map(|s| s.labels(None, false).unwrap_or_default().len()).unwrap_or(0);
    while llm_labels(&db) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let before = llm_labels(&db);
    assert!((3..11).contains(&before), "killed after {before} labels");
    // The rerun asks only for the runs without a label (the one in flight at most once more).
    let asked = slow.request_count();
    let out = run_llm(&db, &slow.base_url(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let store = Store::open(&db).unwrap();
    let labels = store.labels(None, false).unwrap();
    assert_eq!(labels.len(), 11, "one label per run, none twice");
    let runs: std::collections::BTreeSet<i64> = labels.iter().map(|l| l.label.run_id).collect();
    assert_eq!(runs.len(), 11);
    let new_requests = slow.request_count() - asked;
    assert!(new_requests <= 11 - before + 1, "{new_requests} requests for {} runs left", 11 - before);
    assert!(text(&out).contains(&format!("{before} unchanged")), "{}", text(&out));
}

/// `--timeout` (or `timeout_secs` in config.toml) that is no duration to wait: refused with a
/// message before any request, never a panic (rc 101) in the command or its worker tasks.
#[test]
fn timeouts_that_are_no_duration_are_refused_plainly() {
    let (_dir, db) = fixture_db();
    let server = scripted_server();
    let url = server.base_url();
    let base = ["classify", "--llm", "--base-url", &url, "--model", MODEL, "--api-key-env", KEY_VAR];
    for timeout in ["inf", "1e308", "5e18", "NaN", "0", "-1", "86401"] {
        let flag = format!("--timeout={timeout}");
        let args: Vec<&str> = base.iter().copied().chain([flag.as_str()]).collect();
        let out = trajan(&db, &args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{timeout}: {t}");
        assert!(t.contains("--timeout must be a number of seconds above 0 and at most 86400 (one day)"), "{t}");
    }
    let config = db.parent().unwrap_or(Path::new("/")).join("trajan");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[llm]\ntimeout_secs = inf\n").unwrap();
    let out = trajan(&db, &base);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("timeout_secs in the [llm] section of config.toml must be a number of seconds"), "{t}");
    assert_eq!(server.request_count(), 0);
}

/// Every part of the key 8 bytes long: what redaction must leave nowhere.
fn key_parts() -> Vec<&'static str> {
    (0..=KEY.len() - 8).map(|i| &KEY[i..i + 8]).collect()
}

fn assert_no_key_part(what: &str, bytes: &[u8]) {
    for part in key_parts() {
        assert!(!bytes.windows(part.len()).any(|w| w == part.as_bytes()), "{part:?} of the key in {what}");
    }
}

/// A server that echoes the key cut short (all but its last 4 characters, or without its first
/// 4) gives most of it away: the long part is redacted in errors, replies, the database and the
/// output.
#[test]
fn a_key_echoed_cut_short_is_redacted_everywhere() {
    let (_dir, db) = fixture_db();
    let errors = ChatServer::start(|r| {
        let auth = r.header("authorization").unwrap_or("");
        let cut = auth.get(..auth.len().saturating_sub(4)).unwrap_or("");
        Behaviour::Status { code: 500, retry_after: None, body: error_body("server_error", &format!("bad auth {cut}")) }
    })
    .unwrap();
    let failed = run_llm(&db, &errors.base_url(), &["classify__mixture"]);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));
    let replies = ChatServer::start(|_| {
        let content = serde_json::json!({
            "modes": [{"mode": "missed_edit_location", "confidence": 0.8,
                       "evidence": [{"step": 2, "note": "see here"}], "rationale": format!("because {}", &KEY[4..])}],
            "unclassified": false,
            "summary": format!("key {}", &KEY[..KEY.len() - 4]),
            "onset": {"step": 2, "rationale": "r"},
            "blame": {"value": "agent", "reason": "r"}
        });
        Behaviour::Reply { content: content.to_string(), tokens_in: 10, tokens_out: 5 }
    })
    .unwrap();
    let labelled = run_llm(&db, &replies.base_url(), &["classify__temp-errors"]);
    assert_eq!(labelled.status.code(), Some(0), "{}", text(&labelled));
    let shown = trajan(&db, &["labels", "classify__temp-errors"]);

    let store = Store::open(&db).unwrap();
    let errors = store.classify_errors(None).unwrap();
    assert!(errors.iter().any(|e| e.error.contains("bad auth Bearer [redacted]")), "{errors:?}");
    let labels = store.labels(None, true).unwrap();
    let label = &labels.iter().find(|l| l.label.source == Source::Llm).unwrap().label;
    assert_eq!((label.summary.as_str(), label.modes[0].rationale.as_str()), ("key [redacted]", "because [redacted]"));
    drop(store);
    for out in [&failed, &labelled, &shown] {
        assert_no_key_part("the output", text(out).as_bytes());
    }
    assert!(text(&shown).contains("[redacted]"), "{}", text(&shown));
    for f in [db.clone(), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&f) {
            assert_no_key_part(&f.display().to_string(), &bytes);
        }
    }
}
