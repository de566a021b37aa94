//! The Anthropic Messages API client: one streaming POST per attempt, retried as the
//! [`RetryPolicy`] says.

use std::fmt;
use std::pin::pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use cairn_protocol::RetryNotice;
use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::error::{body_excerpt, error_chain};
use super::request_body::{PromptCaching, messages_body};
use crate::retry::retry_after_from_headers;
use super::stream::StreamDecoder;
use crate::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, RetryPolicy};

/// The API version cairn speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where requests go unless `ANTHROPIC_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";
const AUTH_TOKEN_VAR: &str = "ANTHROPIC_AUTH_TOKEN";
const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";
/// Set to anything but `0` or `false` to send no prompt-caching breakpoints.
const DISABLE_CACHING_VAR: &str = "DISABLE_PROMPT_CACHING";

/// The longest one attempt may take, in milliseconds.
const API_TIMEOUT_VAR: &str = "API_TIMEOUT_MS";
/// Claude Code's default for `API_TIMEOUT_MS`: ten minutes.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// The largest response body read. The longest real answer (128k output tokens, each delta
/// wrapped in its event) is tens of megabytes.
const DEFAULT_MAX_RESPONSE_BYTES: u64 = 256 * 1024 * 1024;

/// After `message_stop`, how long to wait for the body's end before dropping the connection.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// How cairn proves who it is to the API. `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// An API key, sent as `x-api-key` (from `ANTHROPIC_API_KEY`).
    ApiKey(String),
    /// A bearer token, sent as `Authorization: Bearer …` (from `ANTHROPIC_AUTH_TOKEN`), as
    /// gateways and proxies in front of the API expect.
    AuthToken(String),
}

impl Credential {
    /// The environment variable this kind of credential is read from; error messages name it.
    pub fn variable(&self) -> &'static str {
        match self {
            Credential::ApiKey(_) => API_KEY_VAR,
            Credential::AuthToken(_) => AUTH_TOKEN_VAR,
        }
    }

    /// The request header that carries the credential, marked sensitive so that HTTP-level
    /// debug output leaves it out.
    fn header(&self) -> Result<(HeaderName, HeaderValue), ModelError> {
        let (name, value) = match self {
            Credential::ApiKey(key) => (HeaderName::from_static("x-api-key"), key.clone()),
            Credential::AuthToken(token) => {
                (reqwest::header::AUTHORIZATION, format!("Bearer {token}"))
            }
        };
        let mut value =
            HeaderValue::try_from(value).map_err(|_| ModelError::InvalidCredential {
                variable: self.variable(),
            })?;
        value.set_sensitive(true);
        Ok((name, value))
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Credential::ApiKey(_) => "ApiKey",
            Credential::AuthToken(_) => "AuthToken",
        };
        f.debug_tuple(kind).field(&"<redacted>").finish()
    }
}

/// Everything [`AnthropicClient`] needs: where to send requests, how to authenticate, how
/// to retry, how long to wait.
///
/// ```
/// use cairn_llm::{AnthropicConfig, Credential};
///
/// let config = AnthropicConfig::new(Credential::ApiKey("sk-ant-secret".to_string()));
/// assert!(!format!("{config:?}").contains("secret"));
/// ```
#[derive(Clone)]
pub struct AnthropicConfig {
    /// The API's root, without `/v1/messages`.
    pub base_url: String,
    pub credential: Credential,
    pub retry: RetryPolicy,
    /// The limit on opening a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// The longest silence accepted while waiting for response headers or between two chunks
    /// of a stream. The API sends `ping` events, so silence this long means a dead stream.
    pub idle_timeout: Duration,
    /// The longest one attempt may take, headers to `message_stop` (`API_TIMEOUT_MS`, as in
    /// Claude Code). Long answers stream for minutes, so it is generous; it exists for a
    /// stream that keeps sending (pings, deltas) and never ends, which the idle timeout never
    /// catches.
    pub request_timeout: Duration,
    /// The most bytes of one response body read before giving up on it: far above any real
    /// answer, so that a server streaming deltas forever cannot fill the memory.
    pub max_response_bytes: u64,
    /// Whether requests carry prompt-caching breakpoints.
    pub prompt_caching: PromptCaching,
}

impl AnthropicConfig {
    /// The defaults (the public API, [`RetryPolicy::default`], a 15 s connect timeout, a
    /// 5 minute idle timeout, a 10 minute request timeout, a 256 MiB response cap) with
    /// `credential`.
    pub fn new(credential: Credential) -> Self {
        AnthropicConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            credential,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(300),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            prompt_caching: PromptCaching::Enabled,
        }
    }

    /// The configuration the environment describes: `ANTHROPIC_API_KEY` (or else
    /// `ANTHROPIC_AUTH_TOKEN`), `ANTHROPIC_BASE_URL`, `CAIRN_MAX_RETRIES` and
    /// `API_TIMEOUT_MS`.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with variables looked up through `var`, so that callers
    /// and tests can supply them from somewhere else. Empty values count as unset.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let value = |name: &str| {
            var(name)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
        };
        let credential = match (value(API_KEY_VAR), value(AUTH_TOKEN_VAR)) {
            (Some(key), _) => Credential::ApiKey(key),
            (None, Some(token)) => Credential::AuthToken(token),
            (None, None) => return Err(ModelError::MissingCredentials),
        };
        let mut config = AnthropicConfig::new(credential);
        if let Some(base_url) = value(BASE_URL_VAR) {
            config.base_url = base_url;
        }
        config.retry =
            RetryPolicy::from_max_retries(value(crate::retry::MAX_RETRIES_VAR).as_deref())?;
        if value(DISABLE_CACHING_VAR).is_some_and(|value| value != "0" && value != "false") {
            config.prompt_caching = PromptCaching::Disabled;
        }
        if let Some(text) = value(API_TIMEOUT_VAR) {
            let ms = text
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .ok_or_else(|| ModelError::InvalidSetting {
                    variable: API_TIMEOUT_VAR,
                    value: text.clone(),
                    expected: "a whole number of milliseconds above 0, such as 600000",
                })?;
            config.request_timeout = Duration::from_millis(ms);
        }
        Ok(config)
    }

    /// The messages endpoint under `base_url`.
    fn messages_url(&self) -> Result<Url, ModelError> {
        let invalid = || ModelError::InvalidSetting {
            variable: BASE_URL_VAR,
            value: self.base_url.clone(),
            expected: "an http or https URL such as https://api.anthropic.com",
        };
        let url = Url::parse(&format!(
            "{}/v1/messages",
            self.base_url.trim_end_matches('/')
        ))
        .map_err(|_| invalid())?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid());
        }
        Ok(url)
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("credential", &self.credential)
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

/// A [`ModelClient`] for the Anthropic Messages API.
///
/// Each attempt POSTs the request with `stream: true` and decodes the SSE answer as it
/// arrives, forwarding deltas. A failure worth retrying (see [`ModelError::is_retryable`])
/// sends the whole request again after a [`ModelEvent::Retrying`] notice; when the failed
/// attempt had already streamed output, the notice says to discard it. Every wait (the
/// request, each chunk, the pause between attempts) gives way to cancellation at once.
pub struct AnthropicClient {
    http: HttpClient,
    url: Url,
    auth: (HeaderName, HeaderValue),
    /// Where the credential came from, for error messages.
    credential_variable: &'static str,
    retry: RetryPolicy,
    idle_timeout: Duration,
    request_timeout: Duration,
    max_response_bytes: u64,
    prompt_caching: PromptCaching,
}

impl AnthropicClient {
    /// A client for `config`.
    ///
    /// Cheap (tens of microseconds): the settings are checked here, but the HTTP client, whose
    /// construction reads the system's certificate store, is built on a background thread
    /// while the caller gets on with its own startup, and no connection opens before the
    /// first request.
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        let url = config.messages_url()?;
        let auth = config.credential.header()?;
        Ok(AnthropicClient {
            http: HttpClient::warm_up(config.connect_timeout),
            url,
            auth,
            credential_variable: config.credential.variable(),
            retry: config.retry,
            idle_timeout: config.idle_timeout,
            request_timeout: config.request_timeout,
            max_response_bytes: config.max_response_bytes,
            prompt_caching: config.prompt_caching,
        })
    }

    /// One attempt: send, then stream the answer. `emitted` records whether any output was
    /// forwarded, which a retry notice reports.
    async fn attempt(
        &self,
        body: &Bytes,
        model: &str,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        emitted: &mut bool,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let send = self
            .http
            .get()?
            .post(self.url.clone())
            .headers(self.request_headers())
            .body(body.clone())
            .send();
        let response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            sent = tokio::time::timeout(self.idle_timeout, send) => match sent {
                Ok(Ok(response)) => response,
                Ok(Err(error)) => {
                    return Err(ModelError::Connection { message: error_chain(&error) });
                }
                Err(_) => {
                    return Err(ModelError::Connection {
                        message: format!(
                            "no response within {} s",
                            self.idle_timeout.as_secs()
                        ),
                    });
                }
            },
        };

        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after_from_headers(response.headers());
            let body = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                body = tokio::time::timeout(self.idle_timeout, response.bytes()) => {
                    body.ok().and_then(Result::ok).unwrap_or_default()
                }
            };
            return Err(ModelError::from_status(
                status.as_u16(),
                &body,
                retry_after,
                self.credential_variable,
                model,
            ));
        }

        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        if !is_event_stream(content_type.as_deref()) {
            let body = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                body = tokio::time::timeout(self.idle_timeout, response.bytes()) => {
                    body.ok().and_then(Result::ok).unwrap_or_default()
                }
            };
            return Err(ModelError::NotAnEventStream {
                content_type: content_type.unwrap_or_default(),
                body: body_excerpt(&body),
            });
        }

        let mut body = pin!(response.bytes_stream());
        let mut decoder = StreamDecoder::new();
        let mut forward = |event: ModelEvent| {
            *emitted = true;
            on_event(event);
        };
        let mut received: u64 = 0;
        // Set once the answer is whole: how long the rest of the body may take to end.
        let mut drain_until = None;
        loop {
            if drain_until.is_none() && decoder.is_complete() {
                drain_until = Some(tokio::time::Instant::now() + DRAIN_TIMEOUT);
            }
            let deadline =
                drain_until.unwrap_or_else(|| tokio::time::Instant::now() + self.idle_timeout);
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                next = tokio::time::timeout_at(deadline, body.next()) => next,
            };
            let complete = drain_until.is_some();
            match next {
                // The answer is whole: the rest of the body only matters for reusing the
                // connection, so a failure or a wait there changes nothing.
                Ok(Some(Ok(_))) if complete => {}
                Ok(Some(Err(_))) | Err(_) if complete => break,
                Ok(Some(Ok(chunk))) => {
                    received += chunk.len() as u64;
                    if received > self.max_response_bytes {
                        return Err(ModelError::ResponseTooLarge {
                            limit: self.max_response_bytes,
                        });
                    }
                    decoder.push(&chunk, &mut forward)?;
                }
                Ok(Some(Err(error))) => return Err(stream_broke(&error)),
                Ok(None) => break,
                Err(_) => return Err(ModelError::StreamStalled(self.idle_timeout)),
            }
        }
        decoder.finish(&mut forward)
    }

    fn request_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::with_capacity(4);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(self.auth.0.clone(), self.auth.1.clone());
        headers
    }
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("url", &self.url.as_str())
            .field("credential", &self.credential_variable)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// Whether a successful response's `content-type` promises SSE. A missing header gets the
/// benefit of the doubt.
fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_none_or(|kind| {
        kind.trim_start()
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
    })
}

/// The error for a response body that failed part-way through.
fn stream_broke(error: &dyn std::error::Error) -> ModelError {
    ModelError::StreamBroke {
        message: error_chain(error),
    }
}

/// The reqwest client, built once, off the caller's thread when possible.
///
/// Building it reads and parses the system's root certificates (3–6 ms on Linux), a large
/// share of cairn's startup budget; started early on another thread, that work overlaps
/// whatever the caller does before its first request.
struct HttpClient {
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    connect_timeout: Duration,
}

impl HttpClient {
    fn warm_up(connect_timeout: Duration) -> Self {
        let client = Arc::new(OnceLock::new());
        let warming = Arc::clone(&client);
        // Without a thread, the first request builds the client instead.
        let _ = std::thread::Builder::new()
            .name("cairn-http-init".to_string())
            .spawn(move || {
                warming.get_or_init(|| build_http_client(connect_timeout));
            });
        HttpClient {
            client,
            connect_timeout,
        }
    }

    /// The client, waiting for the warm-up thread if it is still building it.
    fn get(&self) -> Result<&reqwest::Client, ModelError> {
        self.client
            .get_or_init(|| build_http_client(self.connect_timeout))
            .as_ref()
            .map_err(|message| ModelError::HttpClient(message.clone()))
    }
}

fn build_http_client(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    // reqwest is built without a default crypto provider; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| error_chain(&error))
}

#[async_trait]
impl ModelClient for AnthropicClient {
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let body =
            serde_json::to_vec(&messages_body(request, self.prompt_caching)).map_err(|error| {
                ModelError::InvalidRequest {
                    message: format!("could not encode the request: {error}"),
                }
            })?;
        let body = Bytes::from(body);
        let max_attempts = self.retry.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let mut emitted = false;
            let attempted = tokio::time::timeout(
                self.request_timeout,
                self.attempt(&body, &request.model, on_event, &mut emitted, cancel),
            )
            .await;
            let error = match attempted {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(error)) => error,
                Err(_) => ModelError::RequestTimedOut(self.request_timeout),
            };
            if !error.is_retryable() {
                return Err(error);
            }
            if attempt >= max_attempts {
                return Err(if max_attempts > 1 {
                    ModelError::RetriesExhausted {
                        attempts: attempt,
                        last: Box::new(error),
                    }
                } else {
                    error
                });
            }
            let delay = self.retry.delay_for(attempt, error.retry_after());
            on_event(ModelEvent::Retrying(RetryNotice {
                attempt: attempt + 1,
                max_attempts,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason: error.retry_reason(),
                discard_partial: emitted,
            }));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn credentials_come_from_the_environment() {
        let config = AnthropicConfig::from_vars(vars(&[("ANTHROPIC_API_KEY", " sk-ant-1\n")]));
        assert_eq!(
            config.map(|c| c.credential).ok(),
            Some(Credential::ApiKey("sk-ant-1".to_string()))
        );
        let config = AnthropicConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", ""),
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
        ]));
        assert_eq!(
            config.map(|c| c.credential).ok(),
            Some(Credential::AuthToken("tok".to_string()))
        );
    }

    #[test]
    fn missing_credentials_say_what_to_set() {
        let error = AnthropicConfig::from_vars(vars(&[])).err();
        assert_eq!(
            error.map(|e| e.to_string()),
            Some("no API credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)".to_string())
        );
    }

    #[test]
    fn base_url_and_retries_come_from_the_environment() {
        let config = AnthropicConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy/"),
            ("CAIRN_MAX_RETRIES", "2"),
        ]));
        let config = match config {
            Ok(config) => config,
            Err(error) => panic!("{error}"),
        };
        assert_eq!(config.retry.max_attempts, 3);
        assert_eq!(
            config.messages_url().map(String::from).ok(),
            Some("http://127.0.0.1:9/proxy/v1/messages".to_string())
        );
    }

    #[test]
    fn the_request_timeout_comes_from_api_timeout_ms() {
        let timeout = |value: &str| {
            AnthropicConfig::from_vars(vars(&[
                ("ANTHROPIC_API_KEY", "k"),
                ("API_TIMEOUT_MS", value),
            ]))
            .map(|config| config.request_timeout)
            .map_err(|error| error.to_string())
        };
        assert_eq!(timeout(""), Ok(Duration::from_secs(600)));
        assert_eq!(timeout("1500"), Ok(Duration::from_millis(1500)));
        assert_eq!(
            timeout("soon"),
            Err(
                "API_TIMEOUT_MS is `soon`: expected a whole number of milliseconds above 0, \
                 such as 600000"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_bad_base_url_is_named() {
        let mut config = AnthropicConfig::new(Credential::ApiKey("k".to_string()));
        config.base_url = "api.anthropic.com".to_string();
        assert_eq!(
            AnthropicClient::new(config).err().map(|e| e.to_string()),
            Some(
                "ANTHROPIC_BASE_URL is `api.anthropic.com`: expected an http or https URL such \
                 as https://api.anthropic.com"
                    .to_string()
            )
        );
    }

    #[test]
    fn debug_output_hides_secrets() {
        let secret = "sk-ant-api03-SECRET";
        let mut shown = Vec::new();
        for credential in [
            Credential::ApiKey(secret.to_string()),
            Credential::AuthToken(secret.to_string()),
        ] {
            shown.push(format!("{credential:?}"));
            let config = AnthropicConfig::new(credential);
            shown.push(format!("{config:?}"));
            shown.push(format!("{config:#?}"));
            match AnthropicClient::new(config) {
                Ok(client) => {
                    shown.push(format!("{client:?}"));
                    shown.push(format!("{:?}", client.request_headers()));
                }
                Err(error) => panic!("{error}"),
            }
        }
        for text in &shown {
            assert!(!text.contains("SECRET"), "{text}");
        }
        assert_eq!(shown[0], "ApiKey(\"<redacted>\")");
    }

    #[test]
    fn a_key_that_cannot_be_a_header_is_refused_without_showing_it() {
        let config = AnthropicConfig::new(Credential::ApiKey("sk-SECRET\u{7}".to_string()));
        let error = AnthropicClient::new(config).err().map(|e| e.to_string());
        assert_eq!(
            error,
            Some(
                "the value of ANTHROPIC_API_KEY cannot be sent in an HTTP header (it holds a \
                 control character or line break): set it again"
                    .to_string()
            )
        );
    }

    #[test]
    fn only_event_streams_are_decoded() {
        assert!(is_event_stream(Some("text/event-stream")));
        assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
        assert!(is_event_stream(None));
        assert!(!is_event_stream(Some("text/html")));
        assert!(!is_event_stream(Some("application/json")));
        let error = ModelError::NotAnEventStream {
            content_type: "text/html".to_string(),
            body: "<html>Welcome to nginx!</html>".to_string(),
        };
        assert_eq!(
            error.to_string(),
            "expected an event stream from the API but got `text/html`: <html>Welcome to \
             nginx!</html>: check ANTHROPIC_BASE_URL"
        );
        assert!(!error.is_retryable());
    }

    #[test]
    fn a_transport_error_is_a_broken_stream() {
        let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset");
        let error = stream_broke(&error);
        assert_eq!(
            (error.to_string(), error.retry_reason()),
            (
                "the response stream broke: connection reset".to_string(),
                "stream broke".to_string()
            )
        );
    }
}
