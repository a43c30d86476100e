//! A scripted OpenAI chat-completions server on 127.0.0.1, for tests and `trajan bench llm`.
//!
//! Real HTTP/1.1 over `std::net`: one thread per connection, keep-alive, `Content-Length` and
//! chunked request bodies. Each `POST /v1/chat/completions` is recorded and answered with the
//! [`Behaviour`] the responder picks; every other request gets a 404 JSON error.

use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// How often an idle connection wakes to check whether the server is stopping.
const IDLE_POLL: Duration = Duration::from_millis(100);
/// How long a started request may take to arrive in full.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Limits that keep a hostile client from exhausting memory.
const MAX_LINE: u64 = 16 * 1024;
const MAX_HEADERS: usize = 100;
const MAX_BODY: usize = 16 * 1024 * 1024;

/// What the server does with one chat-completions request.
#[derive(Debug, Clone, PartialEq)]
pub enum Behaviour {
    /// 200 with a valid `chat.completion`: one choice, `finish_reason: "stop"`, `usage` filled,
    /// `model` echoing the request's model.
    Reply {
        /// The assistant message.
        content: String,
        /// Reported as `usage.prompt_tokens`.
        tokens_in: u32,
        /// Reported as `usage.completion_tokens`.
        tokens_out: u32,
    },
    /// This status with `body` sent as is (see [`error_body`] for an OpenAI error JSON).
    Status {
        /// HTTP status code, e.g. 429, 500, 401.
        code: u16,
        /// Sent as a `Retry-After` header (seconds) when set.
        retry_after: Option<u64>,
        /// Response body, sent verbatim.
        body: String,
    },
    /// This status with an HTML page (`Content-Type: text/html`), as a proxy or a web server
    /// in front of the model sends.
    Html {
        /// HTTP status code, e.g. 500, 502.
        code: u16,
        /// The page, sent verbatim.
        body: String,
    },
    /// Sleep, then behave: server latency, or a stall that outlasts a client timeout.
    Delay(Duration, Box<Behaviour>),
    /// 200 with exactly this body, e.g. `{"choices": [`.
    Malformed(String),
    /// 200 whose `Content-Length` claims a full completion but only half is written before the
    /// connection closes.
    Truncated,
    /// A valid completion with `"choices": []`.
    EmptyChoices,
    /// Close the connection without writing anything.
    Hangup,
    /// 200 with a chunked body that never ends (a JSON string that goes on), written as fast
    /// as the client reads it, until it hangs up.
    Endless,
}

impl Behaviour {
    /// A reply with `content` and small fixed token counts (10 in, 5 out).
    pub fn reply(content: impl Into<String>) -> Behaviour {
        Behaviour::Reply { content: content.into(), tokens_in: 10, tokens_out: 5 }
    }

    /// Status `code` with an OpenAI error JSON carrying `message`, no `Retry-After`.
    pub fn error(code: u16, message: &str) -> Behaviour {
        Behaviour::Status { code, retry_after: None, body: error_body(error_type(code), message) }
    }

    /// 429 with `Retry-After: seconds` and a `rate_limit_error` body.
    pub fn rate_limited(seconds: u64) -> Behaviour {
        Behaviour::Status {
            code: 429,
            retry_after: Some(seconds),
            body: error_body("rate_limit_error", "Rate limit reached"),
        }
    }

    /// Status `code` with `body` sent as is (any text, or nothing), no `Retry-After`.
    pub fn status(code: u16, body: impl Into<String>) -> Behaviour {
        Behaviour::Status { code, retry_after: None, body: body.into() }
    }

    /// This behaviour after `delay`.
    pub fn after(self, delay: Duration) -> Behaviour {
        Behaviour::Delay(delay, Box::new(self))
    }
}

/// An OpenAI error body: `{"error":{"message":..,"type":..,"param":null,"code":null}}`.
pub fn error_body(kind: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
}

/// The OpenAI error `type` usually sent with a status code.
fn error_type(code: u16) -> &'static str {
    match code {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500.. => "server_error",
        _ => "invalid_request_error",
    }
}

/// A request body as received.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestBody {
    /// The body parsed as JSON.
    Json(Value),
    /// A body that is not JSON (lossy UTF-8).
    Raw(String),
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// e.g. `POST`.
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, parsed when it is JSON.
    pub body: RequestBody,
}

impl RecordedRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// The JSON body, if the body was JSON.
    pub fn json(&self) -> Option<&Value> {
        match &self.body {
            RequestBody::Json(v) => Some(v),
            RequestBody::Raw(_) => None,
        }
    }
}

type Responder = dyn Fn(&RecordedRequest) -> Behaviour + Send + Sync;

struct Shared {
    responder: Box<Responder>,
    requests: Mutex<Vec<RecordedRequest>>,
    stop: AtomicBool,
}

impl Shared {
    fn requests(&self) -> MutexGuard<'_, Vec<RecordedRequest>> {
        // A panicking responder must not make the record unreadable.
        self.requests.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The running server; dropping it stops accepting connections.
pub struct ChatServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ChatServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatServer").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl ChatServer {
    /// Bind 127.0.0.1 on a free port and answer each chat request with `responder`'s choice.
    pub fn start(responder: impl Fn(&RecordedRequest) -> Behaviour + Send + Sync + 'static) -> io::Result<ChatServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            responder: Box::new(responder),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("chat-server-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))?;
        Ok(ChatServer { addr, shared, accept: Some(accept) })
    }

    /// Answer request `i` with `script[i]`, repeating the last behaviour once the script runs
    /// out (an empty script answers 500).
    pub fn scripted(script: Vec<Behaviour>) -> io::Result<ChatServer> {
        let next = AtomicUsize::new(0);
        ChatServer::start(move |_| {
            let i = next.fetch_add(1, Ordering::SeqCst);
            script.get(i).or(script.last()).cloned().unwrap_or_else(|| Behaviour::error(500, "empty script"))
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL an OpenAI client expects.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests().clone()
    }

    /// How many requests have been received.
    pub fn request_count(&self) -> usize {
        self.shared.requests().len()
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; if the connect fails the listener is already gone.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(&shared);
        // Connection threads are detached: a stalled one must not block Drop.
        let _ = thread::Builder::new().name("chat-server-conn".into()).spawn(move || {
            let _ = serve_connection(stream, &shared);
        });
    }
}

/// Serve requests on one connection until the client closes, asks to close, or we stop.
fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        if !wait_for_request(&mut reader, shared)? {
            return Ok(());
        }
        reader.get_ref().set_read_timeout(Some(REQUEST_READ_TIMEOUT))?;
        let Some((request, keep_alive)) = read_request(&mut reader)? else {
            write_response(&mut writer, 400, &[], &error_body("invalid_request_error", "bad request"), false)?;
            return Ok(());
        };
        let target = request.path.split('?').next().unwrap_or_default();
        let is_chat = request.method == "POST" && target == "/v1/chat/completions";
        shared.requests().push(request.clone());
        if !is_chat {
            let body = error_body("invalid_request_error", &format!("no route for {} {}", request.method, target));
            write_response(&mut writer, 404, &[], &body, keep_alive)?;
        } else {
            let behaviour = (shared.responder)(&request);
            if !behave(&mut writer, &behaviour, &request, keep_alive)? {
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
        }
        if !keep_alive {
            let _ = writer.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

/// Block until the next request's first byte arrives; false on close or stop.
fn wait_for_request(reader: &mut BufReader<TcpStream>, shared: &Shared) -> io::Result<bool> {
    reader.get_ref().set_read_timeout(Some(IDLE_POLL))?;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        match reader.fill_buf() {
            Ok(buf) => return Ok(!buf.is_empty()),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// One line without its CRLF, at most [`MAX_LINE`] bytes; `None` at end of stream.
fn read_line(reader: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let n = reader.take(MAX_LINE).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    Ok(Some(String::from_utf8_lossy(&line).into_owned()))
}

/// Parse one request; `Ok(None)` when it is malformed. Returns the request and keep-alive.
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<(RecordedRequest, bool)>> {
    let Some(line) = read_line(reader)? else {
        return Ok(None);
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Ok(None);
    };
    let mut headers = Vec::new();
    loop {
        let Some(line) = read_line(reader)? else {
            return Ok(None);
        };
        if line.is_empty() {
            break;
        }
        if headers.len() == MAX_HEADERS {
            return Ok(None);
        }
        let Some((name, value)) = line.split_once(':') else {
            return Ok(None);
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = RecordedRequest {
        method: method.to_string(),
        path: path.to_string(),
        headers,
        body: RequestBody::Raw(String::new()),
    };
    let chunked = request.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        read_chunked(reader)?
    } else {
        match request.header("content-length").map(str::parse::<usize>) {
            None => Some(Vec::new()),
            Some(Ok(len)) if len <= MAX_BODY => {
                let mut body = vec![0; len];
                reader.read_exact(&mut body)?;
                Some(body)
            }
            Some(_) => None,
        }
    };
    let Some(body) = body else { return Ok(None) };
    request.body = match serde_json::from_slice(&body) {
        Ok(v) => RequestBody::Json(v),
        Err(_) => RequestBody::Raw(String::from_utf8_lossy(&body).into_owned()),
    };
    let connection = request.header("connection").map(str::to_ascii_lowercase);
    let keep_alive = match connection.as_deref() {
        Some(c) if c.contains("close") => false,
        Some(c) if c.contains("keep-alive") => true,
        _ => version != "HTTP/1.0",
    };
    Ok(Some((request, keep_alive)))
}

/// A chunked body; `Ok(None)` when the framing is malformed.
fn read_chunked(reader: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut body = Vec::new();
    loop {
        let Some(line) = read_line(reader)? else {
            return Ok(None);
        };
        let size = line.split(';').next().unwrap_or_default().trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            return Ok(None);
        };
        if size == 0 {
            // Trailers, up to the blank line.
            while let Some(line) = read_line(reader)? {
                if line.is_empty() {
                    return Ok(Some(body));
                }
            }
            return Ok(None);
        }
        if body.len().saturating_add(size) > MAX_BODY {
            return Ok(None);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        if read_line(reader)?.is_none_or(|l| !l.is_empty()) {
            return Ok(None);
        }
    }
}

/// Carry out `behaviour`; false when the connection must close afterwards.
fn behave(w: &mut TcpStream, behaviour: &Behaviour, request: &RecordedRequest, keep_alive: bool) -> io::Result<bool> {
    match behaviour {
        Behaviour::Reply { content, tokens_in, tokens_out } => {
            let body = completion(request, Some((content, *tokens_in, *tokens_out)));
            write_response(w, 200, &[], &body, keep_alive)?;
        }
        Behaviour::Status { code, retry_after, body } => {
            let retry = retry_after.map(|s| ("Retry-After", s.to_string()));
            write_response(w, *code, retry.as_slice(), body, keep_alive)?;
        }
        Behaviour::Html { code, body } => {
            write_response(w, *code, &[("Content-Type", "text/html; charset=utf-8".into())], body, keep_alive)?;
        }
        Behaviour::Delay(delay, then) => {
            thread::sleep(*delay);
            return behave(w, then, request, keep_alive);
        }
        Behaviour::Malformed(body) => write_response(w, 200, &[], body, keep_alive)?,
        Behaviour::EmptyChoices => write_response(w, 200, &[], &completion(request, None), keep_alive)?,
        Behaviour::Truncated => {
            let body = completion(request, Some(("truncated", 10, 5)));
            let head = response_head(200, &[], body.len(), false);
            w.write_all(head.as_bytes())?;
            w.write_all(&body.as_bytes()[..body.len() / 2])?;
            w.flush()?;
            return Ok(false);
        }
        Behaviour::Hangup => return Ok(false),
        Behaviour::Endless => {
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            w.write_all(head.as_bytes())?;
            w.write_all(b"8\r\n{\"id\": \"\r\n")?;
            let piece = format!("{:x}\r\n{}\r\n", 64 << 10, "a".repeat(64 << 10));
            // Until the client hangs up (the write fails).
            loop {
                w.write_all(piece.as_bytes())?;
            }
        }
    }
    Ok(true)
}

/// A `chat.completion` JSON; `reply` of `None` gives `"choices": []`.
fn completion(request: &RecordedRequest, reply: Option<(&str, u32, u32)>) -> String {
    let model = request.json().and_then(|b| b.get("model")).and_then(Value::as_str).unwrap_or("unknown");
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (choices, tokens_in, tokens_out) = match reply {
        Some((content, tokens_in, tokens_out)) => (
            json!([{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": null
            }]),
            tokens_in,
            tokens_out,
        ),
        None => (json!([]), 0, 0),
    };
    json!({
        "id": "chatcmpl-trajan",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": choices,
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": u64::from(tokens_in) + u64::from(tokens_out)
        }
    })
    .to_string()
}

/// The status line and headers; `Content-Type: application/json` unless `extra` names another.
fn response_head(code: u16, extra: &[(&str, String)], len: usize, keep_alive: bool) -> String {
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Length: {len}\r\nConnection: {}\r\n",
        reason(code),
        if keep_alive { "keep-alive" } else { "close" },
    );
    if !extra.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn write_response(
    w: &mut TcpStream,
    code: u16,
    extra: &[(&str, String)],
    body: &str,
    keep_alive: bool,
) -> io::Result<()> {
    let mut out = response_head(code, extra, body.len(), keep_alive).into_bytes();
    out.extend_from_slice(body.as_bytes());
    w.write_all(&out)?;
    w.flush()
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn post(body: &str, extra_headers: &str) -> String {
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    /// Read one response: status code, headers (lowercased names) and body.
    fn read_response(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>, String) {
        let status = read_line(reader).unwrap().unwrap();
        let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let line = read_line(reader).unwrap().unwrap();
            if line.is_empty() {
                break;
            }
            let (n, v) = line.split_once(':').unwrap();
            headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
        }
        let len: usize = headers.iter().find(|(n, _)| n == "content-length").unwrap().1.parse().unwrap();
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        (code, headers, String::from_utf8(body).unwrap())
    }

    fn connect(server: &ChatServer) -> (TcpStream, BufReader<TcpStream>) {
        let stream = TcpStream::connect(server.addr()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        (stream, reader)
    }

    #[test]
    fn one_request_gets_a_completion_echoing_the_model() {
        let server =
            ChatServer::start(|_| Behaviour::Reply { content: "hello".into(), tokens_in: 7, tokens_out: 3 }).unwrap();
        assert!(server.base_url().starts_with("http://127.0.0.1:"));
        assert!(server.base_url().ends_with("/v1"));
        let (mut s, mut r) = connect(&server);
        let body = r#"{"model":"m-1","messages":[]}"#;
        s.write_all(post(body, "Authorization: Bearer k\r\n").as_bytes()).unwrap();
        let (code, _, reply) = read_response(&mut r);
        assert_eq!(code, 200);
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["model"], "m-1");
        assert_eq!(reply["choices"][0]["message"]["content"], "hello");
        assert_eq!(reply["choices"][0]["finish_reason"], "stop");
        assert_eq!(reply["usage"]["prompt_tokens"], 7);
        assert_eq!(reply["usage"]["completion_tokens"], 3);
        assert_eq!(reply["usage"]["total_tokens"], 10);

        let recorded = server.requests();
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].method, "POST");
        assert_eq!(recorded[0].path, "/v1/chat/completions");
        assert_eq!(recorded[0].header("Authorization"), Some("Bearer k"));
        assert_eq!(recorded[0].json().unwrap()["model"], "m-1");
    }

    #[test]
    fn keep_alive_serves_a_script_on_one_connection_then_honours_close() {
        let server = ChatServer::scripted(vec![Behaviour::rate_limited(2), Behaviour::reply("second")]).unwrap();
        let (mut s, mut r) = connect(&server);
        s.write_all(post("{}", "").as_bytes()).unwrap();
        let (code, headers, body) = read_response(&mut r);
        assert_eq!(code, 429);
        assert!(headers.contains(&("retry-after".into(), "2".into())));
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["type"], "rate_limit_error");

        s.write_all(post("not json", "Connection: close\r\n").as_bytes()).unwrap();
        let (code, headers, body) = read_response(&mut r);
        assert_eq!(code, 200);
        assert!(headers.contains(&("connection".into(), "close".into())));
        assert!(body.contains("second"));
        // The server closed the connection after the second response.
        assert_eq!(r.fill_buf().unwrap().len(), 0);
        // The script's last entry repeats.
        assert_eq!(server.requests()[1].body, RequestBody::Raw("not json".into()));
        assert_eq!(server.request_count(), 2);
    }

    #[test]
    fn chunked_body_is_decoded_and_other_paths_get_404() {
        let server = ChatServer::scripted(vec![Behaviour::reply("ok")]).unwrap();
        let (mut s, mut r) = connect(&server);
        s.write_all(
            b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
              5\r\n{\"mod\r\n9;ext=1\r\nel\":\"c\"}\r\n0\r\n\r\n",
        )
        .unwrap();
        let (code, _, body) = read_response(&mut r);
        assert_eq!(code, 200);
        assert!(body.contains(r#""model":"c""#), "{body}");
        s.write_all(b"GET /v1/models HTTP/1.1\r\n\r\n").unwrap();
        let (code, _, body) = read_response(&mut r);
        assert_eq!(code, 404);
        assert!(body.contains("no route for GET /v1/models"));
        assert_eq!(server.request_count(), 2);
    }

    #[test]
    fn truncated_hangup_and_malformed_do_what_they_say() {
        let server = ChatServer::scripted(vec![
            Behaviour::Truncated,
            Behaviour::Hangup,
            Behaviour::Malformed(r#"{"choices": ["#.into()),
        ])
        .unwrap();
        let (mut s, mut r) = connect(&server);
        s.write_all(post("{}", "").as_bytes()).unwrap();
        let _status = read_line(&mut r).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        let rest = String::from_utf8_lossy(&rest);
        let (head, body) = rest.split_once("\r\n\r\n").unwrap();
        let claimed: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
        assert_eq!(body.len(), claimed / 2);

        let (mut s, mut r) = connect(&server);
        s.write_all(post("{}", "").as_bytes()).unwrap();
        assert_eq!(r.fill_buf().unwrap().len(), 0, "hangup writes nothing");

        let (mut s, mut r) = connect(&server);
        s.write_all(post("{}", "").as_bytes()).unwrap();
        let (code, _, body) = read_response(&mut r);
        assert_eq!((code, body.as_str()), (200, r#"{"choices": ["#));
    }

    #[test]
    fn html_pages_and_empty_bodies_are_sent_as_scripted() {
        let server = ChatServer::scripted(vec![
            Behaviour::Html { code: 502, body: "<h1>Bad Gateway</h1>".into() },
            Behaviour::status(404, ""),
        ])
        .unwrap();
        let (mut s, mut r) = connect(&server);
        s.write_all(post("{}", "").as_bytes()).unwrap();
        let (code, headers, body) = read_response(&mut r);
        assert_eq!((code, body.as_str()), (502, "<h1>Bad Gateway</h1>"));
        let types: Vec<&str> = headers.iter().filter(|(n, _)| n == "content-type").map(|(_, v)| v.as_str()).collect();
        assert_eq!(types, ["text/html; charset=utf-8"], "one content type, the page's");
        s.write_all(post("{}", "").as_bytes()).unwrap();
        let (code, headers, body) = read_response(&mut r);
        assert_eq!((code, body.as_str()), (404, ""));
        assert!(headers.contains(&("content-type".into(), "application/json".into())));
    }

    #[test]
    fn garbage_gets_400_not_a_panic() {
        let server = ChatServer::scripted(vec![Behaviour::reply("x")]).unwrap();
        let (mut s, mut r) = connect(&server);
        s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: nope\r\n\r\n").unwrap();
        let (code, _, _) = read_response(&mut r);
        assert_eq!(code, 400);
        assert_eq!(server.request_count(), 0);
    }

    #[test]
    fn drop_does_not_hang_with_idle_and_stalled_connections() {
        let server = ChatServer::scripted(vec![Behaviour::reply("late").after(Duration::from_secs(30))]).unwrap();
        let (_idle, _) = connect(&server);
        let (mut stalled, _) = connect(&server);
        stalled.write_all(post("{}", "").as_bytes()).unwrap();
        while server.request_count() == 0 {
            thread::sleep(Duration::from_millis(5));
        }
        let started = Instant::now();
        drop(server);
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }
}
