//! The streaming transport every provider shares: one POST per attempt, the status turned
//! into a typed error, the idle and request timeouts, the size cap, the drain after the
//! answer, and the retry loop with `retry-after` and credential renewal.
//!
//! What differs between APIs is a [`Dialect`]: the request body, the headers, the stream
//! decoder and how an error response is classified. A provider is a dialect over this
//! transport, not a copy of it.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use cairn_protocol::RetryNotice;
use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::credential::{CredentialSource, Freshness};
use crate::error::{body_excerpt, error_chain};
use crate::http::{HttpClient, is_event_stream, stream_broke};
use crate::retry::{Setback, is_connection_refused, retry_after_from_headers};
use crate::text_calls::{self, Holdback};
use crate::{
    ModelError, ModelEvent, ModelRequest, ModelResponse, PartialAnswer, ProviderVariables,
    RetryPolicy,
};

/// After the answer is complete, how long to wait for the body's end before dropping the
/// connection.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// The headers that carry a credential, each marked sensitive.
pub(crate) type AuthHeaders = Vec<(HeaderName, HeaderValue)>;

/// A response body fed chunk by chunk and assembled into a [`ModelResponse`].
pub(crate) trait StreamDecode: Send {
    /// Reads the next `chunk` of the body, reporting [`ModelEvent`]s to `on_event`.
    fn push(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError>;

    /// Whether the answer is whole; nothing after it is read.
    fn is_complete(&self) -> bool;

    /// The whole response, or why the body did not hold one. The body has ended.
    fn finish(
        self: Box<Self>,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<ModelResponse, ModelError>;

    /// What the answer has reported so far (its id, its counts), for a request cancelled
    /// before it ended; `None` before anything was.
    fn so_far(&self) -> Option<PartialAnswer> {
        None
    }
}

/// What one API's wire format decides: everything the transport does not.
pub(crate) trait Dialect: Send + Sync {
    /// The JSON body of `request`.
    fn body(&self, request: &ModelRequest) -> Result<Vec<u8>, ModelError>;

    /// The dialect's own headers for `request` (an API version, a beta), beside JSON in,
    /// SSE out and the credential's.
    fn headers(&self, request: &ModelRequest, headers: &mut HeaderMap);

    /// The credential headers for a key from a source named `setting`.
    fn source_headers(&self, key: &str, setting: &'static str) -> Result<AuthHeaders, ModelError>;

    /// A decoder for the answer to `request`.
    fn decoder(&self, request: &ModelRequest) -> Box<dyn StreamDecode>;

    /// Whether an answer to `request` whose whole text is a well-formed call of one of its
    /// tools is taken as that call ([`crate::text_calls`]): for models that write their
    /// calls as text.
    fn reads_calls_in_text(&self, request: &ModelRequest) -> bool;

    /// The typed error for an HTTP error `status` with `body`.
    fn classify(
        &self,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        variables: ProviderVariables,
        model: &str,
    ) -> ModelError;
}

/// How a client authenticates: the same headers every time (none for a local server), or a
/// key asked of a source before each request and again after a 401.
pub(crate) enum Auth {
    Fixed(AuthHeaders),
    Source(Arc<dyn CredentialSource>),
}

/// The settings of one transport, the same for every dialect.
pub(crate) struct TransportSettings {
    pub url: Url,
    /// The base URL as configured, for saying where nothing is listening.
    pub base_url: String,
    pub auth: Auth,
    pub variables: ProviderVariables,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
    pub request_timeout: Duration,
    pub max_response_bytes: u64,
}

/// One streaming HTTP transport. See the module documentation.
pub(crate) struct Transport {
    http: HttpClient,
    pub(crate) settings: TransportSettings,
    /// How many tool calls this transport has read from a model's text, for the note that
    /// says so.
    text_calls: AtomicU64,
}

/// What one attempt did besides its result, for the retry that may follow.
struct AttemptTrace {
    /// Output was forwarded: a retry notice says to discard it.
    emitted: bool,
    /// How patiently a failure is retried.
    setback: Setback,
}

impl Transport {
    /// A transport for `settings`. The HTTP client is built on a background thread.
    pub(crate) fn new(settings: TransportSettings) -> Self {
        Transport {
            http: HttpClient::warm_up(settings.connect_timeout),
            settings,
            text_calls: AtomicU64::new(0),
        }
    }

    /// The HTTP client, for a side question to the same server (a model's window).
    pub(crate) fn http_client(&self) -> Result<reqwest::Client, ModelError> {
        self.http.get().cloned()
    }

    /// The fixed credential headers (none for a key asked of a source).
    pub(crate) fn fixed_headers(&self) -> AuthHeaders {
        match &self.settings.auth {
            Auth::Fixed(headers) => headers.clone(),
            Auth::Source(_) => Vec::new(),
        }
    }

    /// How many tool calls this transport has read from a model's text so far.
    pub(crate) fn text_calls(&self) -> u64 {
        self.text_calls.load(Ordering::Relaxed)
    }

    /// Sends `request` in `dialect`, retrying as the policy says. Every wait (the request,
    /// each chunk, the pause between attempts) gives way to cancellation at once.
    pub(crate) async fn stream(
        &self,
        dialect: &dyn Dialect,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let settings = &self.settings;
        let body = Bytes::from(dialect.body(request)?);
        let mut attempt = 1;
        let mut freshness = Freshness::Kept;
        let mut key_renewed = false;
        loop {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let auth = self.auth_headers(dialect, freshness, cancel).await?;
            freshness = Freshness::Kept;
            let mut trace = AttemptTrace {
                emitted: false,
                setback: Setback::Transient,
            };
            let attempted = tokio::time::timeout(
                settings.request_timeout,
                self.attempt(dialect, &body, request, &auth, on_event, &mut trace, cancel),
            )
            .await;
            let error = match attempted {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(error)) => error,
                Err(_) => ModelError::RequestTimedOut(settings.request_timeout),
            };
            // A key from a source may have expired: ask it for a new one and send once more.
            if matches!(error, ModelError::Unauthorized { .. })
                && matches!(settings.auth, Auth::Source(_))
                && !key_renewed
            {
                key_renewed = true;
                freshness = Freshness::Fresh;
                continue;
            }
            if !error.is_retryable() {
                return Err(error);
            }
            let max_attempts = settings.retry.attempts_after(trace.setback);
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
            let delay = settings
                .retry
                .delay_after(trace.setback, attempt, error.retry_after());
            // The first notice already says where nothing is listening.
            let reason = match trace.setback {
                Setback::NothingListening => {
                    format!("nothing is listening at {}", settings.base_url)
                }
                Setback::Transient => error.retry_reason(),
            };
            on_event(ModelEvent::Retrying(RetryNotice {
                attempt: attempt + 1,
                max_attempts,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
                discard_partial: trace.emitted,
            }));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    /// One attempt: send, then stream the answer. `trace` records what the retry that may
    /// follow needs to know.
    #[allow(
        clippy::too_many_arguments,
        reason = "one attempt's inputs, all distinct"
    )]
    async fn attempt(
        &self,
        dialect: &dyn Dialect,
        body: &Bytes,
        request: &ModelRequest,
        auth: &AuthHeaders,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        trace: &mut AttemptTrace,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let settings = &self.settings;
        let idle = settings.idle_timeout;
        let send = self
            .http
            .get()?
            .post(settings.url.clone())
            .headers(request_headers(dialect, request, auth))
            .body(body.clone())
            .send();
        let response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            sent = tokio::time::timeout(idle, send) => match sent {
                Ok(Ok(response)) => response,
                Ok(Err(error)) if is_connection_refused(&error) => {
                    trace.setback = Setback::NothingListening;
                    return Err(ModelError::Connection { message: self.nothing_listening() });
                }
                Ok(Err(error)) => {
                    return Err(ModelError::Connection { message: error_chain(&error) });
                }
                Err(_) => {
                    return Err(ModelError::Connection {
                        message: format!("no response within {} s", idle.as_secs()),
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
                body = tokio::time::timeout(idle, response.bytes()) => {
                    body.ok().and_then(Result::ok).unwrap_or_default()
                }
            };
            return Err(dialect.classify(
                status.as_u16(),
                &body,
                retry_after,
                settings.variables,
                &request.model,
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
                body = tokio::time::timeout(idle, response.bytes()) => {
                    body.ok().and_then(Result::ok).unwrap_or_default()
                }
            };
            return Err(ModelError::NotAnEventStream {
                content_type: content_type.unwrap_or_default(),
                body: body_excerpt(&body),
                base_url_variable: settings.variables.base_url,
            });
        }

        let mut body = pin!(response.bytes_stream());
        let mut decoder = dialect.decoder(request);
        let mut forward = |event: ModelEvent| {
            trace.emitted = true;
            on_event(event);
        };
        // An answer that may be a call written as text is held back until it is whole.
        let mut holdback = Holdback::new(
            !request.text_only && !request.tools.is_empty() && dialect.reads_calls_in_text(request),
        );
        let mut received: u64 = 0;
        // Set once the answer is whole: how long the rest of the body may take to end.
        let mut drain_until = None;
        loop {
            if drain_until.is_none() && decoder.is_complete() {
                drain_until = Some(tokio::time::Instant::now() + DRAIN_TIMEOUT);
            }
            let deadline = drain_until.unwrap_or_else(|| tokio::time::Instant::now() + idle);
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    // The provider bills what it has done: say what it reported of it.
                    if !decoder.is_complete() && let Some(partial) = decoder.so_far() {
                        forward(ModelEvent::Interrupted(partial));
                    }
                    return Err(ModelError::Cancelled);
                }
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
                    if received > settings.max_response_bytes {
                        return Err(ModelError::ResponseTooLarge {
                            limit: settings.max_response_bytes,
                        });
                    }
                    decoder.push(&chunk, &mut |event| holdback.pass(event, &mut forward))?;
                }
                Ok(Some(Err(error))) => return Err(stream_broke(&error)),
                Ok(None) => break,
                Err(_) => return Err(ModelError::StreamStalled(idle)),
            }
        }
        let mut response = decoder.finish(&mut |event| holdback.pass(event, &mut forward))?;
        if let Some(form) = holdback.finish(
            &mut response,
            &request.tools,
            &mut text_calls::fresh_id,
            &mut forward,
        ) {
            let read = response
                .content
                .iter()
                .filter(|block| matches!(block, cairn_protocol::ContentBlock::ToolUse { .. }))
                .count() as u64;
            let total = self.text_calls.fetch_add(read, Ordering::Relaxed) + read;
            forward(ModelEvent::Note(text_calls::note(&response, form, total)));
        }
        Ok(response)
    }

    /// The credential headers for the next attempt: the fixed ones, or the source's key
    /// (`Fresh` after a 401), asked for while cancellation can still stop the wait.
    async fn auth_headers(
        &self,
        dialect: &dyn Dialect,
        freshness: Freshness,
        cancel: &CancellationToken,
    ) -> Result<AuthHeaders, ModelError> {
        match &self.settings.auth {
            Auth::Fixed(headers) => Ok(headers.clone()),
            Auth::Source(source) => {
                let key = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(ModelError::Cancelled),
                    key = source.key(freshness) => key?,
                };
                dialect.source_headers(&key, source.setting())
            }
        }
    }

    /// The message of a refused connection: where, and which variable says so.
    fn nothing_listening(&self) -> String {
        format!(
            "nothing is listening at {} (connection refused): check {}",
            self.settings.base_url, self.settings.variables.base_url
        )
    }
}

/// The headers of one request: the dialect's, JSON in, an event stream out, and `auth`.
pub(crate) fn request_headers(
    dialect: &dyn Dialect,
    request: &ModelRequest,
    auth: &AuthHeaders,
) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(5);
    dialect.headers(request, &mut headers);
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        reqwest::header::ACCEPT,
        HeaderValue::from_static("text/event-stream"),
    );
    for (name, value) in auth {
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// A header marked sensitive, so that HTTP-level debug output leaves it out; a value an
/// HTTP header cannot carry is refused naming `variable`, never showing the value.
pub(crate) fn sensitive(
    name: HeaderName,
    value: String,
    variable: &'static str,
) -> Result<(HeaderName, HeaderValue), ModelError> {
    let mut value =
        HeaderValue::try_from(value).map_err(|_| ModelError::InvalidCredential { variable })?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// `base_url` joined with `path`, refused (naming `variable`) unless it is http or https.
pub(crate) fn endpoint(
    base_url: &str,
    path: &str,
    variable: &'static str,
    example: &'static str,
) -> Result<Url, ModelError> {
    let invalid = || ModelError::InvalidSetting {
        variable,
        value: base_url.to_string(),
        expected: example,
    };
    let url =
        Url::parse(&format!("{}{path}", base_url.trim_end_matches('/'))).map_err(|_| invalid())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid());
    }
    Ok(url)
}
