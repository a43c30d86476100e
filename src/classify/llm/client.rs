//! Transport to any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server,
//! Ollama) through `async-openai`.
//!
//! Retries come in two layers. `async-openai`'s own retry layer retries 429, 5xx and connect
//! errors up to 3 times (100 ms·2ⁿ backoff, or `Retry-After` seconds). [`LlmClient::complete`]
//! wraps that and retries, up to [`LlmSettings::max_retries`] more times with its own backoff,
//! what the inner layer does not: timeouts, malformed or truncated bodies, empty choices, dropped
//! connections, and 429/5xx that outlived the inner retries. Connect errors are not retried
//! again (the inner layer already did), nor are 4xx API errors or configuration errors.
//!
//! HTTP statuses are read by a tap under the retry layer (`StatusTap`): async-openai reports an
//! error body that is not an OpenAI error JSON (`{"detail":"Not Found"}`, an empty body, an HTML
//! page) as a deserialization error without its status, and the tap gives the status back, so
//! such an answer is reported as the HTTP error it was, with the likely cause, never as a
//! malformed response.
//!
//! The API key never appears in errors or `Debug` output: every error text is scrubbed of it.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::{OpenAIError, WrappedError};
use async_openai::middleware::retry::OpenAIRetryLayer;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use async_openai::types::chat::{
    ChatCompletionRequestMessage, CreateChatCompletionRequest, CreateChatCompletionResponse, ResponseFormat,
};
use reqwest::StatusCode;
use tower::{Layer, Service};

use crate::sanitize::sanitize;

/// Longest pause between two attempts of [`LlmClient::complete`] (unless `backoff` is longer).
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Error texts from the server are cut to this many characters.
const MAX_MESSAGE: usize = 300;
/// What an HTTP error body said is cut to this many characters.
const MAX_EXCERPT: usize = 200;
const REDACTED: &str = "[redacted]";
/// Any part of the key this many bytes long (or the whole key, when shorter) is redacted.
const MIN_KEY_PART: usize = 8;
/// The longest request timeout accepted: one day.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Where and how to ask the model.
#[derive(Clone)]
pub struct LlmSettings {
    /// API base including the version, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// Sent as `Authorization: Bearer <key>`. `None` sends an empty key; the `OPENAI_API_KEY`
    /// environment variable is never read here (the caller decides that).
    pub api_key: Option<String>,
    /// The name of the environment variable the key was read from (never the key), named in
    /// the message of a 401 or 403.
    pub api_key_env: Option<String>,
    /// Limit for one HTTP request, connect to last body byte.
    pub timeout: Duration,
    /// Extra attempts `complete` makes after a transient failure (on top of async-openai's own).
    pub max_retries: u32,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
    /// Output token limit (`max_tokens`), when set.
    pub max_tokens: Option<u32>,
    /// Ask for `response_format: {"type": "json_object"}`.
    pub json_mode: bool,
    /// First pause between attempts; doubles each retry up to a few seconds.
    pub backoff: Duration,
    /// How long one attempt may wait beyond its requests' timeouts: async-openai's backoff and a
    /// server's `Retry-After` (honoured up to about this long). Default 65 s.
    pub wait_slack: Duration,
    /// The largest reply body read, in bytes ([`DEFAULT_MAX_REPLY`]): a longer one fails that run
    /// ([`LlmError::TooLarge`]) without being held.
    pub max_reply: u64,
}

/// The largest reply body read by default: a chat completion of the longest answer a model
/// gives is tens of kilobytes.
pub const DEFAULT_MAX_REPLY: u64 = 4 << 20;

impl LlmSettings {
    /// Settings for `model` at `base_url`: no key, 60 s timeout, 2 retries, 200 ms backoff.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> LlmSettings {
        LlmSettings {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(60),
            max_retries: 2,
            temperature: None,
            max_tokens: None,
            json_mode: false,
            backoff: Duration::from_millis(200),
            wait_slack: Duration::from_secs(65),
            max_reply: DEFAULT_MAX_REPLY,
        }
    }
}

/// The largest reply cap accepted, in MB.
const MAX_REPLY_MB: f64 = 1024.0;

/// A reply cap given in megabytes (MiB) by the user (`what` names where): above zero and at most
/// a gigabyte.
pub fn max_reply_from_mb(mb: f64, what: &str) -> Result<u64, LlmError> {
    if mb.is_finite() && mb > 0.0 && mb <= MAX_REPLY_MB {
        Ok(((mb * (1u64 << 20) as f64) as u64).max(1))
    } else {
        Err(LlmError::Config {
            message: format!("{what} must be a number of MB above 0 and at most {MAX_REPLY_MB}, not {mb}"),
        })
    }
}

/// A timeout given in seconds by the user (`what` names where: a flag, a config key): a number
/// above zero (at least a nanosecond) and at most [`MAX_TIMEOUT`]; `inf`, `NaN`, negative numbers
/// and `1e308` are errors, never a panic.
pub fn timeout_from_secs(secs: f64, what: &str) -> Result<Duration, LlmError> {
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if !d.is_zero() && d <= MAX_TIMEOUT => Ok(d),
        _ => Err(LlmError::Config {
            message: format!(
                "{what} must be a number of seconds above 0 and at most {} (one day), not {secs}",
                MAX_TIMEOUT.as_secs()
            ),
        }),
    }
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("api_key_env", &self.api_key_env)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("json_mode", &self.json_mode)
            .field("backoff", &self.backoff)
            .field("max_reply", &self.max_reply)
            .finish()
    }
}

/// Who speaks a chat turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions.
    System,
    /// The question.
    User,
    /// A previous model answer.
    Assistant,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTurn {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl ChatTurn {
    /// A turn by `role`.
    pub fn new(role: Role, content: impl Into<String>) -> ChatTurn {
        ChatTurn { role, content: content.into() }
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Text of the first choice.
    pub content: String,
    /// `usage.prompt_tokens`, when the server reports usage.
    pub tokens_in: Option<u64>,
    /// `usage.completion_tokens`, when the server reports usage.
    pub tokens_out: Option<u64>,
    /// Wall time of the successful attempt (including async-openai's inner retries).
    pub latency: Duration,
    /// Attempts `complete` made, 1 when the first succeeded.
    pub attempts: u32,
    /// `finish_reason` of the first choice, e.g. `stop` or `length` (output cut by `max_tokens`).
    pub finish_reason: Option<String>,
}

/// Why a completion failed. Messages name the URL and, for an HTTP error, the status and its
/// likely cause; they never contain the API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// One HTTP request got no complete answer within the timeout.
    #[error("LLM request timed out after {after:?}")]
    Timeout {
        /// The configured per-request timeout.
        after: Duration,
    },
    /// 429 (other than `insufficient_quota`) after async-openai's retries.
    #[error("{message}")]
    RateLimited {
        /// `LLM rate limited: HTTP 429 … from POST <url>; <hint>; <what the server said>`.
        message: String,
    },
    /// 5xx after async-openai's retries.
    #[error("{message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// `LLM server error: HTTP 500 … from POST <url>; <what the server said>`.
        message: String,
    },
    /// No connection could be made (refused, DNS, TLS), after async-openai's retries.
    #[error("{message}")]
    Connect {
        /// `connection refused by <base URL> (is the server running?)`, or what failed.
        message: String,
    },
    /// The connection dropped before a response arrived.
    #[error("LLM connection dropped: {message}")]
    Transport {
        /// What failed.
        message: String,
    },
    /// A success status whose body was not a chat completion: invalid JSON, or a body cut
    /// short. (An error status is never reported this way, whatever its body.)
    #[error("LLM response malformed: {message}")]
    Malformed {
        /// What was wrong, with the start of the body.
        message: String,
    },
    /// A valid completion with no choices, or whose first choice has no text.
    #[error("LLM response had no choice with content")]
    EmptyChoices,
    /// The endpoint refused the request: 400, 401, 403, 404, `insufficient_quota`, …
    #[error("{message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// `<what>: HTTP <status> <reason> from POST <url>; <likely cause>; <what the server
        /// said>`, e.g. `LLM endpoint not found: HTTP 404 Not Found from POST …; check
        /// --base-url …`.
        message: String,
    },
    /// A reply body longer than `max_reply`: not read further.
    #[error("LLM reply larger than {} (max_reply_mb in the [llm] section of config.toml, or --max-reply-mb): not read", crate::error::bytes(*limit))]
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
    /// Unusable settings or request (bad URL, key not valid in a header, no turns, …).
    #[error("LLM configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
}

impl LlmError {
    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        !matches!(self, LlmError::Api { .. } | LlmError::Config { .. } | LlmError::TooLarge { .. })
    }

    /// Whether `complete` retries this itself. Connect errors are transient but async-openai
    /// has already retried them.
    fn retry_here(&self) -> bool {
        self.is_transient() && !matches!(self, LlmError::Connect { .. })
    }
}

/// A chat-completions client; cheap to clone, usable from many tasks.
#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    config: OpenAIConfig,
    settings: LlmSettings,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// A tower service under async-openai's retry layer that remembers the status of the last
/// response (0 after a transport error): async-openai drops it when an error body is not an
/// OpenAI error JSON. It also reads the body, at most `max_reply` bytes of it (async-openai
/// and its retry layer would read any length whole): a longer one is an error, and `too_large`
/// says so. One tap per attempt, so concurrent requests do not share it.
#[derive(Clone)]
struct StatusTap {
    inner: ReqwestService,
    last: Arc<AtomicU16>,
    max_reply: u64,
    too_large: Arc<std::sync::atomic::AtomicBool>,
}

/// The response with its body read, when it is at most `cap` bytes (`None` when longer).
async fn bounded(mut response: reqwest::Response, cap: u64) -> Result<Option<reqwest::Response>, reqwest::Error> {
    if response.content_length().is_some_and(|n| n > cap) {
        return Ok(None);
    }
    let (status, version) = (response.status(), response.version());
    let headers = std::mem::take(response.headers_mut());
    let mut body: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if (body.len() + chunk.len()) as u64 > cap {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    let mut read = http::Response::new(body);
    *read.status_mut() = status;
    *read.version_mut() = version;
    *read.headers_mut() = headers;
    Ok(Some(reqwest::Response::from(read)))
}

type TapFuture = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send + 'static>>;

impl Service<HttpRequestFactory> for StatusTap {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = TapFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: HttpRequestFactory) -> TapFuture {
        let sent = self.inner.call(request);
        let last = Arc::clone(&self.last);
        let (cap, too_large) = (self.max_reply, Arc::clone(&self.too_large));
        Box::pin(async move {
            let result = sent.await;
            last.store(result.as_ref().map_or(0, |r| r.status().as_u16()), Ordering::Relaxed);
            match bounded(result?, cap).await.map_err(OpenAIError::Reqwest)? {
                Some(response) => Ok(response),
                None => {
                    too_large.store(true, Ordering::Relaxed);
                    Err(OpenAIError::InvalidArgument("the reply is larger than its cap".into()))
                }
            }
        })
    }
}

impl LlmClient {
    /// Check `settings` and build the client (no request is made).
    pub fn new(settings: LlmSettings) -> Result<LlmClient, LlmError> {
        let config_error = |message: String| LlmError::Config { message };
        let base_url = settings.base_url.trim_end_matches('/').to_string();
        match reqwest::Url::parse(&base_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {}
            _ => {
                let shown = scrub(&base_url, settings.api_key.as_deref());
                return Err(config_error(format!("base URL {shown:?} is not an http(s) URL")));
            }
        }
        if settings.model.trim().is_empty() {
            return Err(config_error("no model name".into()));
        }
        if settings.timeout.is_zero() {
            return Err(config_error("timeout must be above zero".into()));
        }
        if settings.timeout > MAX_TIMEOUT {
            return Err(config_error(format!("timeout must be at most {} s (one day)", MAX_TIMEOUT.as_secs())));
        }
        let key = settings.api_key.clone().unwrap_or_default();
        // async-openai unwraps this header on every request; check it here instead.
        if reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).is_err() {
            return Err(config_error("API key holds characters not allowed in an HTTP header".into()));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|e| config_error(format!("HTTP client: {e}")))?;
        // Org and project are set empty so stray OPENAI_* variables are not sent (nor unwrapped).
        let config =
            OpenAIConfig::new().with_api_base(base_url.clone()).with_api_key(key).with_org_id("").with_project_id("");
        Ok(LlmClient { http, config, settings: LlmSettings { base_url, ..settings } })
    }

    /// The settings in use (base URL without a trailing slash).
    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// An async-openai client for one attempt: its default retry layer over a [`StatusTap`]
    /// over reqwest (sharing this client's connection pool), and the tap's status cell.
    fn openai(&self) -> (Client<OpenAIConfig>, Arc<AtomicU16>, Arc<std::sync::atomic::AtomicBool>) {
        let last = Arc::new(AtomicU16::new(0));
        let too_large = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tap = StatusTap {
            inner: ReqwestService::new(self.http.clone()),
            last: Arc::clone(&last),
            max_reply: self.settings.max_reply,
            too_large: Arc::clone(&too_large),
        };
        let service = OpenAIRetryLayer::default().layer(tap);
        (Client::build(self.http.clone(), self.config.clone()).with_http_service(service), last, too_large)
    }

    /// Send `turns` and return the first choice, retrying transient failures (see the module
    /// docs); the last error is returned once retries run out.
    pub async fn complete(&self, turns: &[ChatTurn]) -> Result<Completion, LlmError> {
        if turns.is_empty() {
            return Err(LlmError::Config { message: "no chat turns to send".into() });
        }
        let request = self.request(turns);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let started = Instant::now();
            let (client, last_status, too_large) = self.openai();
            // async-openai's own retries sleep as long as `Retry-After` says; one attempt (its
            // requests and their waits) is bounded, so a server asking for an hour cannot hang
            // the run.
            let deadline = self.settings.timeout.saturating_mul(4).saturating_add(self.settings.wait_slack);
            let result = tokio::time::timeout(deadline, client.chat().create(request.clone())).await;
            let latency = started.elapsed();
            let error = match result {
                Ok(Ok(response)) => match completion(response, latency, attempts) {
                    // A server may echo the Authorization header back in its text.
                    Ok(mut done) => {
                        done.content = scrub_key(&done.content, self.settings.api_key.as_deref());
                        return Ok(done);
                    }
                    Err(e) => e,
                },
                Ok(Err(_)) if too_large.load(Ordering::Relaxed) => {
                    LlmError::TooLarge { limit: self.settings.max_reply }
                }
                Ok(Err(e)) => self.map_error(e, last_status.load(Ordering::Relaxed)),
                Err(_) => LlmError::Timeout { after: deadline },
            };
            if !error.retry_here() || attempts > self.settings.max_retries {
                return Err(error);
            }
            tokio::time::sleep(self.backoff(attempts)).await;
        }
    }

    fn request(&self, turns: &[ChatTurn]) -> CreateChatCompletionRequest {
        let messages = turns
            .iter()
            .map(|t| match t.role {
                Role::System => ChatCompletionRequestMessage::System(t.content.clone().into()),
                Role::User => ChatCompletionRequestMessage::User(t.content.clone().into()),
                Role::Assistant => ChatCompletionRequestMessage::Assistant(t.content.clone().into()),
            })
            .collect();
        // `max_tokens` is deprecated by OpenAI in favour of `max_completion_tokens`, but it is
        // the one vLLM, llama.cpp and Ollama all understand.
        #[allow(deprecated)]
        CreateChatCompletionRequest {
            model: self.settings.model.clone(),
            messages,
            temperature: self.settings.temperature,
            max_tokens: self.settings.max_tokens,
            response_format: self.settings.json_mode.then_some(ResponseFormat::JsonObject),
            ..Default::default()
        }
    }

    /// Pause before attempt `done + 1`: `backoff`·2^(done-1), capped.
    fn backoff(&self, done: u32) -> Duration {
        let factor = 1u32 << done.saturating_sub(1).min(16);
        let cap = MAX_BACKOFF.max(self.settings.backoff);
        self.settings.backoff.saturating_mul(factor).min(cap)
    }

    /// A short, key-free message prefixed with the base URL.
    fn message(&self, detail: &str) -> String {
        let text = format!("{}: {detail}", self.settings.base_url);
        scrub(&text, self.settings.api_key.as_deref())
    }

    /// `error` as an [`LlmError`]; `last_status` is the status of the last response the attempt
    /// got (0: none), which decides whether an unreadable body was an HTTP error.
    fn map_error(&self, error: OpenAIError, last_status: u16) -> LlmError {
        let failed_status = StatusCode::from_u16(last_status).ok().filter(|s| !s.is_success());
        match error {
            OpenAIError::Reqwest(e) => {
                let e = e.without_url();
                let detail = chain(&e);
                if e.is_timeout() {
                    LlmError::Timeout { after: self.settings.timeout }
                } else if e.is_connect() {
                    self.connect_error(&e, &detail)
                } else if e.is_builder() {
                    LlmError::Config { message: self.message(&detail) }
                } else if let Some(status) = failed_status {
                    // An error status whose body could not be read in full.
                    self.http_error(status, &format!("(the body could not be read: {detail})"), false)
                } else if e.is_body() || e.is_decode() {
                    LlmError::Malformed { message: self.message(&detail) }
                } else {
                    LlmError::Transport { message: self.message(&detail) }
                }
            }
            OpenAIError::ApiError(e) => {
                let quota = e.api_error.r#type.as_deref() == Some("insufficient_quota");
                // async-openai keeps 5xx bodies raw (JSON, HTML or text); others it parsed.
                let said =
                    if e.status_code.is_server_error() { e.api_error.message.clone() } else { e.api_error.to_string() };
                self.http_error(e.status_code, &said, quota)
            }
            OpenAIError::JSONDeserialize(e, body) => match failed_status {
                // An error status with a body that is not an OpenAI error JSON (or none).
                Some(status) => self.http_error(status, &body, false),
                None => LlmError::Malformed { message: self.message(&format!("{e}; body: {body}")) },
            },
            OpenAIError::InvalidArgument(m) => LlmError::Config { message: self.message(&m) },
            other => LlmError::Transport { message: self.message(&other.to_string()) },
        }
    }

    /// A connect error: a refusal says so plainly, anything else (DNS, TLS) with its causes.
    fn connect_error(&self, error: &reqwest::Error, detail: &str) -> LlmError {
        let base = scrub(&self.settings.base_url, self.settings.api_key.as_deref());
        let message = if refused(error) {
            format!("connection refused by {base} (is the server running?)")
        } else {
            format!("cannot connect to {}", self.message(detail))
        };
        LlmError::Connect { message }
    }

    /// The error for HTTP `status` whose body was `body`: the status, the URL requested, the
    /// likely cause, and a short excerpt of what the server said.
    fn http_error(&self, status: StatusCode, body: &str, quota: bool) -> LlmError {
        let code = status.as_u16();
        let key = self.settings.api_key.as_deref();
        let said = excerpt(body, key);
        let reason = status.canonical_reason().map(|r| format!(" {r}")).unwrap_or_default();
        let url = format!("{}/chat/completions", self.settings.base_url);
        let model_error = matches!(code, 400 | 404 | 422) && names_unknown_model(&said);
        let (what, hint) = match code {
            _ if model_error => {
                ("LLM model not found", format!("check --model: the server does not serve {:?}", self.settings.model))
            }
            404 => ("LLM endpoint not found", self.base_url_hint()),
            401 => ("LLM key refused", self.key_hint(401)),
            403 => ("LLM access denied", self.key_hint(403)),
            429 if quota => ("LLM quota exhausted", "the account behind the API key has no credit left".into()),
            429 => ("LLM rate limited", "still limited after retries; lower --concurrency or wait".into()),
            500..=599 => ("LLM server error", "still failing after retries; see the server's log".into()),
            _ => ("LLM request refused", String::new()),
        };
        let said = if said.is_empty() { "the body was empty".to_string() } else { format!("the server said: {said}") };
        let hint = if hint.is_empty() { hint } else { format!("; {hint}") };
        let message = scrub_key(&format!("{what}: HTTP {code}{reason} from POST {url}{hint}; {said}"), key);
        match code {
            429 if !quota => LlmError::RateLimited { message },
            500..=599 => LlmError::Server { status: code, message },
            _ => LlmError::Api { status: code, message },
        }
    }

    /// What to check after a 404: the base URL, which most servers want ending in `/v1`.
    fn base_url_hint(&self) -> String {
        let base = &self.settings.base_url;
        let versioned = reqwest::Url::parse(base).ok().is_some_and(|u| {
            u.path_segments().and_then(|mut s| s.next_back()).is_some_and(|last| {
                last.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })
        });
        if versioned {
            "check --base-url: nothing answers chat completions there".into()
        } else {
            format!("check --base-url: most servers need the /v1 suffix (--base-url {base}/v1)")
        }
    }

    /// What to check after a 401 or 403, naming the environment variable the key comes from
    /// (never the key).
    fn key_hint(&self, code: u16) -> String {
        let key = match self.settings.api_key_env.as_deref() {
            Some(var) => format!("the API key in {var} (the variable --api-key-env names)"),
            None => "the API key".to_string(),
        };
        match (self.settings.api_key.is_some(), code) {
            (false, _) => match self.settings.api_key_env.as_deref() {
                Some(var) => format!("no API key was sent: {var} (the variable --api-key-env names) is not set"),
                None => "no API key was sent".to_string(),
            },
            (true, 403) => format!("{key} may not use this model or endpoint"),
            (true, _) => format!("check {key}"),
        }
    }
}

/// What an error body says, for a one-line message: an OpenAI error JSON's text
/// (`type: message (code: …)`), an HTML page's text without its tags, or the body itself;
/// sanitized, on one line, without the key, cut to [`MAX_EXCERPT`] characters.
fn excerpt(body: &str, key: Option<&str>) -> String {
    let text = match serde_json::from_str::<WrappedError>(body) {
        Ok(wrapped) => wrapped.error.to_string(),
        Err(_) if body.trim_start().starts_with('<') => html_text(body),
        Err(_) => body.to_string(),
    };
    let one_line = sanitize(&text).split_whitespace().collect::<Vec<_>>().join(" ");
    let text = scrub_key(&one_line, key);
    match text.char_indices().nth(MAX_EXCERPT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The text of an HTML page: tags removed, `<style>` and `<script>` contents left out, a few
/// entities decoded.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len().min(4096));
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        out.push(' ');
        let tag = &rest[open + 1..];
        let Some(close) = tag.find('>') else {
            rest = "";
            break;
        };
        let name = tag[..close].split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
        rest = &tag[close + 1..];
        if name.eq_ignore_ascii_case("style") || name.eq_ignore_ascii_case("script") {
            // ASCII lowercasing keeps byte offsets.
            let end = format!("</{}", name.to_ascii_lowercase());
            rest = rest.to_ascii_lowercase().find(&end).map_or("", |at| &rest[at..]);
        }
    }
    out.push_str(rest);
    for (entity, c) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&nbsp;", " "), ("&amp;", "&")]
    {
        out = out.replace(entity, c);
    }
    out
}

/// Whether an error text says the model asked for is unknown (OpenAI's `model_not_found`,
/// vLLM's "The model `x` does not exist", Ollama's "model \"x\" not found", …).
fn names_unknown_model(text: &str) -> bool {
    let text = text.to_lowercase();
    text.contains("model_not_found")
        || text.contains("invalid_model")
        || (text.contains("model")
            && ["does not exist", "not found", "no such model", "unknown model", "invalid model", "not a valid model"]
                .iter()
                .any(|p| text.contains(p)))
}

/// Whether a connect error was a refused connection (nothing listening).
fn refused(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused) {
            return true;
        }
        source = e.source();
    }
    chain(error).to_ascii_lowercase().contains("connection refused")
}

/// The first choice of `response`, or why there is none.
fn completion(
    response: CreateChatCompletionResponse,
    latency: Duration,
    attempts: u32,
) -> Result<Completion, LlmError> {
    let choice = response.choices.into_iter().next();
    let Some((content, finish)) = choice.and_then(|c| c.message.content.map(|text| (text, c.finish_reason))) else {
        return Err(LlmError::EmptyChoices);
    };
    let finish_reason = finish.and_then(|r| serde_json::to_value(r).ok()).and_then(|v| v.as_str().map(str::to_string));
    Ok(Completion {
        content,
        tokens_in: response.usage.as_ref().map(|u| u64::from(u.prompt_tokens)),
        tokens_out: response.usage.as_ref().map(|u| u64::from(u.completion_tokens)),
        latency,
        attempts,
        finish_reason,
    })
}

/// An error and its sources, joined with `: `.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

/// `text` with the key, and every part of it [`MIN_KEY_PART`] bytes long or longer, replaced by
/// `[redacted]`: a server may echo the key cut short (all but its last characters), which
/// would give most of it away. Parts that overlap or touch are one `[redacted]`.
fn scrub_key(text: &str, key: Option<&str>) -> String {
    let Some(key) = key.filter(|k| !k.is_empty()) else { return text.to_string() };
    let n = MIN_KEY_PART.min(key.len());
    let parts: HashSet<&[u8]> = key.as_bytes().windows(n).collect();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    // The region of the text being redacted: [start, end).
    let mut region: Option<(usize, usize)> = None;
    for (i, window) in text.as_bytes().windows(n).enumerate() {
        if !parts.contains(window) {
            continue;
        }
        region = match region {
            Some((start, end)) if i <= end => Some((start, i + n)),
            Some((start, end)) => {
                redact(text, start, end, &mut copied, &mut out);
                Some((i, i + n))
            }
            None => Some((i, i + n)),
        };
    }
    if let Some((start, end)) = region {
        redact(text, start, end, &mut copied, &mut out);
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

/// Appends the text from `copied` up to `start`, then `[redacted]` for `start..end` (widened to
/// whole characters).
fn redact(text: &str, start: usize, end: usize, copied: &mut usize, out: &mut String) {
    let start = (0..=start).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0).max(*copied);
    let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
    out.push_str(text.get(*copied..start).unwrap_or_default());
    out.push_str(REDACTED);
    *copied = end;
}

/// `text` without the key or any long part of it ([`scrub_key`]), cut to [`MAX_MESSAGE`]
/// characters.
fn scrub(text: &str, key: Option<&str>) -> String {
    let text = scrub_key(text, key);
    match text.char_indices().nth(MAX_MESSAGE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The scripted server the tests talk to (test support, not part of the library).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../testkit/chat_server.rs"]
mod chat_server;

#[cfg(test)]
mod tests {
    use super::chat_server::{Behaviour, ChatServer};
    use super::*;
    use serde_json::json;
    use std::net::TcpListener;

    const KEY: &str = "sk-test-secret-1234";
    /// The timeout of the tests that time out on purpose.
    const SHORT: Duration = Duration::from_millis(300);
    /// The timeout of every other test: a loaded machine (the whole suite on 2 cores) can keep a
    /// loopback answer waiting past [`SHORT`], and a retry would then take the script's next reply.
    const PATIENT: Duration = Duration::from_secs(10);

    fn settings(server: &ChatServer) -> LlmSettings {
        LlmSettings {
            api_key: Some(KEY.into()),
            timeout: PATIENT,
            max_retries: 2,
            backoff: Duration::from_millis(20),
            ..LlmSettings::new(server.base_url(), "test-model")
        }
    }

    fn client(server: &ChatServer) -> LlmClient {
        LlmClient::new(settings(server)).unwrap()
    }

    /// [`settings`] with the [`SHORT`] timeout.
    fn hasty(server: &ChatServer) -> LlmSettings {
        LlmSettings { timeout: SHORT, ..settings(server) }
    }

    fn ask() -> Vec<ChatTurn> {
        vec![ChatTurn::new(Role::System, "classify"), ChatTurn::new(Role::User, "the trajectory")]
    }

    #[tokio::test]
    async fn good_reply_carries_content_tokens_and_sends_model_messages_and_key() {
        let server = ChatServer::scripted(vec![Behaviour::Reply {
            content: "{\"label\":\"ok\"}".into(),
            tokens_in: 42,
            tokens_out: 7,
        }])
        .unwrap();
        let client = LlmClient::new(LlmSettings {
            temperature: Some(0.0),
            max_tokens: Some(64),
            json_mode: true,
            ..settings(&server)
        })
        .unwrap();
        let done = client.complete(&ask()).await.unwrap();
        assert_eq!(done.content, "{\"label\":\"ok\"}");
        assert_eq!((done.tokens_in, done.tokens_out), (Some(42), Some(7)));
        assert_eq!(done.attempts, 1);
        assert_eq!(done.finish_reason.as_deref(), Some("stop"));

        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        let sent = &requests[0];
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.header("authorization"), Some(&*format!("Bearer {KEY}")));
        let body = sent.json().unwrap();
        assert_eq!(body["model"], "test-model");
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "classify"},
                {"role": "user", "content": "the trajectory"}
            ])
        );
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
    }

    #[tokio::test]
    async fn optional_fields_are_left_out_by_default() {
        let server = ChatServer::scripted(vec![Behaviour::reply("x")]).unwrap();
        client(&server).complete(&ask()).await.unwrap();
        let body = server.requests()[0].json().unwrap().clone();
        for field in ["temperature", "max_tokens", "response_format"] {
            assert!(body.get(field).is_none(), "{field} sent: {body}");
        }
    }

    #[tokio::test]
    async fn rate_limit_honours_retry_after_then_succeeds() {
        let server = ChatServer::scripted(vec![Behaviour::rate_limited(1), Behaviour::reply("ok")]).unwrap();
        let started = Instant::now();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!(done.content, "ok");
        assert!(started.elapsed() >= Duration::from_millis(950), "{:?}", started.elapsed());
        assert_eq!(server.request_count(), 2);
        assert_eq!(done.attempts, 1, "async-openai's inner retry, not ours");
    }

    #[tokio::test]
    async fn an_hour_of_retry_after_does_not_hang_the_attempt() {
        let server = ChatServer::scripted(vec![Behaviour::rate_limited(3600)]).unwrap();
        let started = Instant::now();
        let slow = LlmSettings { max_retries: 0, wait_slack: Duration::from_millis(500), ..hasty(&server) };
        let err = LlmClient::new(slow).unwrap().complete(&ask()).await.unwrap_err();
        assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn a_key_echoed_in_a_good_reply_is_redacted() {
        let server =
            ChatServer::start(|r| Behaviour::reply(format!("auth was {}", r.header("authorization").unwrap_or(""))))
                .unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!(done.content, "auth was Bearer [redacted]");
    }

    #[tokio::test]
    async fn server_errors_then_success() {
        let server = ChatServer::scripted(vec![
            Behaviour::error(500, "boom"),
            Behaviour::error(503, "busy"),
            Behaviour::reply("ok"),
        ])
        .unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!(done.content, "ok");
        assert_eq!(server.request_count(), 3);
    }

    #[tokio::test]
    async fn always_500_is_a_server_error_after_bounded_attempts() {
        // Retry-After: 0 keeps async-openai's inner retries instant.
        let server = ChatServer::scripted(vec![Behaviour::Status {
            code: 500,
            retry_after: Some(0),
            body: super::chat_server::error_body("server_error", "always broken"),
        }])
        .unwrap();
        let client = LlmClient::new(LlmSettings { max_retries: 1, ..settings(&server) }).unwrap();
        let err = client.complete(&ask()).await.unwrap_err();
        match &err {
            LlmError::Server { status, message } => {
                assert_eq!(*status, 500);
                assert!(message.contains("always broken"), "{message}");
                assert!(message.contains(&server.base_url()), "{message}");
            }
            other => panic!("expected Server, got {other:?}"),
        }
        assert!(err.is_transient());
        // (1 + max_retries) calls, each 1 + 3 inner retries.
        assert_eq!(server.request_count(), 8);
    }

    #[tokio::test]
    async fn timeout_then_success() {
        let server = ChatServer::scripted(vec![
            Behaviour::reply("late").after(Duration::from_millis(800)),
            Behaviour::reply("ok"),
        ])
        .unwrap();
        let done = LlmClient::new(hasty(&server)).unwrap().complete(&ask()).await.unwrap();
        assert_eq!(done.content, "ok");
        assert_eq!(done.attempts, 2);
        assert!(done.latency < SHORT, "latency is the good attempt's: {:?}", done.latency);
    }

    #[tokio::test]
    async fn always_timing_out_gives_timeout() {
        let server = ChatServer::scripted(vec![Behaviour::reply("late").after(Duration::from_secs(2))]).unwrap();
        let client = LlmClient::new(LlmSettings { max_retries: 1, ..hasty(&server) }).unwrap();
        let started = Instant::now();
        let err = client.complete(&ask()).await.unwrap_err();
        assert!(matches!(err, LlmError::Timeout { after } if after == SHORT), "{err:?}");
        assert_eq!(server.request_count(), 2);
        assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn malformed_json_then_success() {
        let server =
            ChatServer::scripted(vec![Behaviour::Malformed(r#"{"choices": ["#.into()), Behaviour::reply("ok")])
                .unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!((done.content.as_str(), done.attempts), ("ok", 2));
    }

    #[tokio::test]
    async fn always_malformed_gives_malformed_with_the_body() {
        let server = ChatServer::scripted(vec![Behaviour::Malformed("<html>".into())]).unwrap();
        let err = client(&server).complete(&ask()).await.unwrap_err();
        match err {
            LlmError::Malformed { message } => assert!(message.contains("<html>"), "{message}"),
            other => panic!("expected Malformed, got {other:?}"),
        }
        assert_eq!(server.request_count(), 3);
    }

    #[tokio::test]
    async fn truncated_body_then_success() {
        let server = ChatServer::scripted(vec![Behaviour::Truncated, Behaviour::reply("ok")]).unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!((done.content.as_str(), done.attempts), ("ok", 2));
    }

    #[tokio::test]
    async fn empty_choices_then_success_and_always_empty() {
        let server = ChatServer::scripted(vec![Behaviour::EmptyChoices, Behaviour::reply("ok")]).unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!((done.content.as_str(), done.attempts), ("ok", 2));

        let server = ChatServer::scripted(vec![Behaviour::EmptyChoices]).unwrap();
        let err = client(&server).complete(&ask()).await.unwrap_err();
        assert!(matches!(err, LlmError::EmptyChoices), "{err:?}");
        assert_eq!(server.request_count(), 3);
    }

    #[tokio::test]
    async fn body_cut_short_is_malformed_and_hangup_is_transport() {
        let server = ChatServer::scripted(vec![Behaviour::Truncated]).unwrap();
        let err = client(&server).complete(&ask()).await.unwrap_err();
        assert!(matches!(err, LlmError::Malformed { .. }), "{err:?}");
        let server = ChatServer::scripted(vec![Behaviour::Hangup]).unwrap();
        let err = client(&server).complete(&ask()).await.unwrap_err();
        assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
        assert_eq!(server.request_count(), 3);
    }

    #[tokio::test]
    async fn hangup_then_success() {
        let server = ChatServer::scripted(vec![Behaviour::Hangup, Behaviour::reply("ok")]).unwrap();
        let done = client(&server).complete(&ask()).await.unwrap();
        assert_eq!((done.content.as_str(), done.attempts), ("ok", 2));
    }

    #[tokio::test]
    async fn connection_refused_is_connect_and_quick() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = format!("http://127.0.0.1:{port}/v1");
        let client = LlmClient::new(LlmSettings {
            api_key: Some(KEY.into()),
            timeout: SHORT,
            backoff: Duration::from_millis(20),
            ..LlmSettings::new(base.clone(), "m")
        })
        .unwrap();
        let started = Instant::now();
        let err = client.complete(&ask()).await.unwrap_err();
        match &err {
            LlmError::Connect { message } => {
                assert_eq!(message, &format!("connection refused by {base} (is the server running?)"));
            }
            other => panic!("expected Connect, got {other:?}"),
        }
        assert!(err.is_transient());
        // async-openai's three retries take 100 + 200 + 400 ms; this layer adds none.
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn unauthorized_is_api_error_without_retry() {
        let server =
            ChatServer::scripted(vec![Behaviour::error(401, "Incorrect API key provided"), Behaviour::reply("never")])
                .unwrap();
        let err = client(&server).complete(&ask()).await.unwrap_err();
        match &err {
            LlmError::Api { status, message } => {
                assert_eq!(*status, 401);
                assert!(message.contains("Incorrect API key"), "{message}");
                // No variable named in the settings: the advice alone.
                assert!(
                    message.contains("HTTP 401 Unauthorized") && message.contains("; check the API key;"),
                    "{message}"
                );
            }
            other => panic!("expected Api, got {other:?}"),
        }
        assert!(!err.is_transient());
        assert_eq!(server.request_count(), 1);
    }

    /// The error a server always answering `behaviour` gives, and how many requests it got.
    async fn error_for(behaviour: Behaviour, tweak: impl FnOnce(LlmSettings) -> LlmSettings) -> (LlmError, usize) {
        let server = ChatServer::scripted(vec![behaviour]).unwrap();
        let client = LlmClient::new(tweak(LlmSettings { max_retries: 1, ..settings(&server) })).unwrap();
        let err = client.complete(&ask()).await.unwrap_err();
        (err, server.request_count())
    }

    #[tokio::test]
    async fn not_found_names_the_status_the_url_and_the_base_url_whatever_the_body() {
        for body in [r#"{"detail":"Not Found"}"#, ""] {
            let server = ChatServer::scripted(vec![Behaviour::status(404, body), Behaviour::reply("never")]).unwrap();
            let err = client(&server).complete(&ask()).await.unwrap_err();
            let shown = err.to_string();
            assert!(matches!(err, LlmError::Api { status: 404, .. }), "{err:?}");
            assert!(shown.starts_with("LLM endpoint not found: HTTP 404 Not Found from POST "), "{shown}");
            assert!(shown.contains(&format!("{}/chat/completions", server.base_url())), "{shown}");
            assert!(shown.contains("check --base-url"), "{shown}");
            assert!(!shown.to_lowercase().contains("malformed"), "{shown}");
            let said = if body.is_empty() { "the body was empty".to_string() } else { format!("said: {body}") };
            assert!(shown.ends_with(&said), "{shown}");
            assert!(!err.is_transient());
            assert_eq!(server.request_count(), 1, "a 404 is not retried");
        }
    }

    #[tokio::test]
    async fn a_base_url_without_v1_is_told_to_add_it() {
        // The server's root: its chat endpoint is under /v1, so this asks for /chat/completions.
        let server = ChatServer::scripted(vec![Behaviour::reply("never")]).unwrap();
        let root = server.base_url().trim_end_matches("/v1").to_string();
        let client = LlmClient::new(LlmSettings { base_url: root.clone(), ..settings(&server) }).unwrap();
        let shown = client.complete(&ask()).await.unwrap_err().to_string();
        assert!(shown.contains(&format!("HTTP 404 Not Found from POST {root}/chat/completions")), "{shown}");
        assert!(shown.contains(&format!("most servers need the /v1 suffix (--base-url {root}/v1)")), "{shown}");
        // With /v1 already there the suffix is not suggested again.
        let (err, _) = error_for(Behaviour::status(404, ""), |s| s).await;
        assert!(!err.to_string().contains("suffix"), "{err}");
    }

    #[tokio::test]
    async fn refused_keys_name_the_variable_never_the_key() {
        let echo = |code| {
            ChatServer::start(move |r| {
                Behaviour::error(
                    code,
                    &format!("Incorrect API key provided: {}", r.header("authorization").unwrap_or("")),
                )
            })
            .unwrap()
        };
        for (code, lead) in
            [(401, "LLM key refused: HTTP 401 Unauthorized"), (403, "LLM access denied: HTTP 403 Forbidden")]
        {
            let server = echo(code);
            let named = LlmSettings { api_key_env: Some("MY_LLM_KEY".into()), ..settings(&server) };
            let err = LlmClient::new(named).unwrap().complete(&ask()).await.unwrap_err();
            let (shown, debug) = (err.to_string(), format!("{err:?}"));
            assert!(shown.starts_with(lead), "{shown}");
            assert!(shown.contains("in MY_LLM_KEY (the variable --api-key-env names)"), "{shown}");
            assert!(shown.contains("Bearer [redacted]"), "the echo arrived, redacted: {shown}");
            assert!(!shown.contains(KEY) && !debug.contains(KEY), "{shown}");
            assert_eq!(server.request_count(), 1);
        }
        // No key sent: the message says the variable is not set.
        let server = echo(401);
        let keyless = LlmSettings { api_key: None, api_key_env: Some("MY_LLM_KEY".into()), ..settings(&server) };
        let shown = LlmClient::new(keyless).unwrap().complete(&ask()).await.unwrap_err().to_string();
        assert!(
            shown.contains("no API key was sent: MY_LLM_KEY (the variable --api-key-env names) is not set"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn an_unknown_model_points_at_the_model_not_the_url() {
        let openai = super::chat_server::error_body("invalid_request_error", "The model `gpt-9` does not exist");
        let vllm =
            r#"{"object":"error","message":"The model `gpt-9` does not exist.","type":"NotFoundError","code":404}"#;
        let ollama = r#"{"error":"model \"gpt-9\" not found, try pulling it first"}"#;
        for (code, body) in [(400, openai.as_str()), (404, vllm), (404, ollama)] {
            let (err, asked) = error_for(Behaviour::status(code, body), |s| s).await;
            let shown = err.to_string();
            assert!(shown.starts_with(&format!("LLM model not found: HTTP {code} ")), "{shown}");
            assert!(shown.contains("check --model: the server does not serve \"test-model\""), "{shown}");
            assert!(!shown.contains("--base-url"), "{shown}");
            assert!(shown.contains("gpt-9"), "what the server said is kept: {shown}");
            assert_eq!(asked, 1);
        }
        // A 400 about something else is not blamed on the model.
        let other = super::chat_server::error_body("invalid_request_error", "max_tokens is too large for this model");
        let (err, _) = error_for(Behaviour::status(400, other), |s| s).await;
        assert!(err.to_string().starts_with("LLM request refused: HTTP 400 Bad Request from POST "), "{err}");
    }

    #[tokio::test]
    async fn a_server_error_page_gives_the_status_and_the_page_text() {
        let page = "<html><head><title>500 Internal Server Error</title><style>h1{color:red}</style></head>\r\n\
                    <body><h1>Oops &amp; sorry</h1>\r\n<hr>nginx/1.25</body></html>";
        let (err, asked) =
            error_for(Behaviour::Html { code: 500, body: page.into() }, |s| LlmSettings { max_retries: 0, ..s }).await;
        let shown = err.to_string();
        assert!(matches!(err, LlmError::Server { status: 500, .. }), "{err:?}");
        assert!(shown.starts_with("LLM server error: HTTP 500 Internal Server Error from POST "), "{shown}");
        assert!(shown.ends_with("the server said: 500 Internal Server Error Oops & sorry nginx/1.25"), "{shown}");
        assert_eq!(asked, 4, "async-openai's three retries still apply");
    }

    #[tokio::test]
    async fn a_rate_limit_with_a_text_body_keeps_its_status() {
        let (err, _) = error_for(Behaviour::status(429, "slow down"), |s| LlmSettings { max_retries: 0, ..s }).await;
        let shown = err.to_string();
        assert!(matches!(err, LlmError::RateLimited { .. }), "{err:?}");
        assert!(shown.starts_with("LLM rate limited: HTTP 429 Too Many Requests from POST "), "{shown}");
        assert!(shown.ends_with("the server said: slow down"), "{shown}");
        // Transient: retried by `complete`, and the retry may succeed.
        let server = ChatServer::scripted(vec![Behaviour::status(429, "slow down"), Behaviour::reply("ok")]).unwrap();
        assert_eq!(client(&server).complete(&ask()).await.unwrap().content, "ok");
    }

    #[tokio::test]
    async fn other_statuses_give_the_status_and_a_capped_excerpt() {
        let long = format!("{} {KEY} {}", "x".repeat(150), "y".repeat(400));
        let (err, _) = error_for(Behaviour::status(422, long), |s| s).await;
        let shown = err.to_string();
        assert!(shown.starts_with("LLM request refused: HTTP 422 Unprocessable Entity from POST "), "{shown}");
        assert!(shown.contains("[redacted]") && !shown.contains(KEY), "{shown}");
        let said = shown.split("the server said: ").nth(1).unwrap_or_default();
        assert_eq!(said.chars().count(), MAX_EXCERPT + 1, "{said}");
    }

    #[test]
    fn excerpts_are_one_clean_line_and_redacted_before_they_are_cut() {
        assert_eq!(excerpt("a\n\n b\x1b[31m red\tc", None), "a b red c");
        assert_eq!(excerpt(&super::chat_server::error_body("server_error", "boom"), None), "server_error: boom");
        // The key straddling the cut is redacted first, so no part of it survives.
        let body = format!("{}{KEY}", "z".repeat(MAX_EXCERPT - 3));
        let cut = excerpt(&body, Some(KEY));
        assert!(cut.ends_with("zzz[re…"), "{cut}");
        assert!(!cut.contains("sk-"), "{cut}");
        assert_eq!(html_text("<p>a<script>if (x<y) {}</script>b</p>&lt;c&gt;"), " a  b <c>");
        assert_eq!(html_text("text <unclosed"), "text  ");
    }

    #[test]
    fn unknown_model_wording_is_recognised_narrowly() {
        for yes in
            ["The model `x` does not exist", "model \"x\" not found", "code: model_not_found", "Unknown model: x"]
        {
            assert!(names_unknown_model(yes), "{yes}");
        }
        for no in ["Not Found", "max_tokens too large for this model", "json mode is not supported by this model"] {
            assert!(!names_unknown_model(no), "{no}");
        }
    }

    #[tokio::test]
    async fn key_echoed_by_server_is_redacted() {
        let server = ChatServer::start(|request| Behaviour::Status {
            code: 500,
            retry_after: Some(0),
            body: super::chat_server::error_body(
                "server_error",
                &format!("bad header {:?}", request.header("authorization")),
            ),
        })
        .unwrap();
        let client = LlmClient::new(LlmSettings { max_retries: 0, ..settings(&server) }).unwrap();
        let err = client.complete(&ask()).await.unwrap_err();
        let (shown, debug) = (err.to_string(), format!("{err:?}"));
        // The echo reached us (so the test can fail) but the key did not survive.
        assert!(shown.contains("Bearer [redacted]"), "{shown}");
        assert!(!shown.contains(KEY) && !debug.contains(KEY), "{shown} / {debug}");
        let debug = format!("{client:?} {:?}", settings(&server));
        assert!(!debug.contains(KEY), "{debug}");
        assert!(debug.contains(REDACTED), "{debug}");
    }

    #[tokio::test]
    async fn concurrent_completions_from_clones() {
        let server = ChatServer::scripted(vec![Behaviour::reply("ok")]).unwrap();
        let client = client(&server);
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.complete(&ask()).await })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().unwrap().content, "ok");
        }
        assert_eq!(server.request_count(), 4);
    }

    #[test]
    fn bad_settings_are_config_errors_without_the_key() {
        let base = LlmSettings { api_key: Some(KEY.into()), ..LlmSettings::new("http://127.0.0.1:1/v1", "m") };
        let cases = [
            LlmSettings { base_url: format!("ftp://{KEY}@host"), ..base.clone() },
            LlmSettings { base_url: "not a url".into(), ..base.clone() },
            LlmSettings { model: " ".into(), ..base.clone() },
            LlmSettings { timeout: Duration::ZERO, ..base.clone() },
            LlmSettings { timeout: MAX_TIMEOUT + Duration::from_nanos(1), ..base.clone() },
            LlmSettings { timeout: Duration::MAX, ..base.clone() },
            LlmSettings { api_key: Some("line\nbreak".into()), ..base.clone() },
        ];
        for settings in cases {
            match LlmClient::new(settings.clone()) {
                Err(e @ LlmError::Config { .. }) => {
                    assert!(!e.to_string().contains(KEY), "{e}");
                    assert!(!e.is_transient());
                }
                other => panic!("{settings:?} gave {other:?}"),
            }
        }
        assert!(LlmClient::new(base).is_ok());
    }

    #[test]
    fn timeouts_from_input_are_checked_not_panicked_on() {
        assert_eq!(timeout_from_secs(1.5, "--timeout").unwrap(), Duration::from_millis(1500));
        assert_eq!(timeout_from_secs(86_400.0, "--timeout").unwrap(), MAX_TIMEOUT);
        for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e308, 5e18, 86_400.001, 0.0, -1.0, 1e-12] {
            let err = timeout_from_secs(bad, "--timeout").unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains("--timeout must be a number of seconds above 0 and at most 86400 (one day)"), "{msg}");
            assert!(msg.ends_with(&format!("not {bad}")), "{msg}");
        }
    }

    #[tokio::test]
    async fn a_huge_wait_slack_saturates_the_attempt_deadline() {
        let server = ChatServer::scripted(vec![Behaviour::reply("ok")]).unwrap();
        let client = LlmClient::new(LlmSettings { wait_slack: Duration::MAX, ..settings(&server) }).unwrap();
        assert_eq!(client.complete(&ask()).await.unwrap().content, "ok");
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let mut settings = LlmSettings::new("http://127.0.0.1:1/v1", "m");
        settings.backoff = Duration::from_millis(200);
        let client = LlmClient::new(settings).unwrap();
        let pauses: Vec<_> = (1..=7).map(|n| client.backoff(n).as_millis()).collect();
        assert_eq!(pauses, [200, 400, 800, 1600, 3200, 5000, 5000]);
    }

    #[test]
    fn long_parts_of_the_key_are_redacted_wherever_they_are() {
        let key = Some(KEY);
        let cut = &KEY[..KEY.len() - 4];
        assert_eq!(scrub_key(&format!("Bearer {cut}!"), key), "Bearer [redacted]!");
        assert_eq!(scrub_key(&format!("tail {}", &KEY[4..]), key), "tail [redacted]");
        assert_eq!(scrub_key(&format!("a {} b", &KEY[5..13]), key), "a [redacted] b");
        // Shorter parts stay: they give little away and may be ordinary words.
        assert_eq!(scrub_key(&format!("a {} b", &KEY[5..12]), key), format!("a {} b", &KEY[5..12]));
        // Two parts apart are two redactions; the whole key twice, touching, is one.
        let two = format!("{} and {}", &KEY[..10], &KEY[KEY.len() - 10..]);
        assert_eq!(scrub_key(&two, key), "[redacted] and [redacted]");
        assert_eq!(scrub_key(&format!("{KEY}{KEY}"), key), "[redacted]");
        // A key shorter than a part is redacted whole, and only whole.
        assert_eq!(scrub_key("abc abcd", Some("abcd")), "abc [redacted]");
        assert_eq!(scrub_key("é KEYé", Some("KEY")), "é [redacted]é");
        assert_eq!(scrub_key("no key here", None), "no key here");
    }

    #[test]
    fn scrub_cuts_on_a_char_boundary() {
        let long = "é".repeat(MAX_MESSAGE + 5);
        let cut = scrub(&long, None);
        assert_eq!(cut.chars().count(), MAX_MESSAGE + 1);
        assert_eq!(scrub("a KEY b", Some("KEY")), "a [redacted] b");
        assert_eq!(scrub("abc", Some("")), "abc");
    }
}
