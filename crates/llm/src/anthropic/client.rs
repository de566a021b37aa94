//! The Anthropic Messages API client: one streaming POST per attempt, retried as the
//! [`RetryPolicy`] says.

use std::fmt;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use cairn_protocol::RetryNotice;
use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::config::{AnthropicConfig, AuthHeaders, Credential, source_headers};
use super::request_body::{PromptCaching, messages_body};
use super::stream::StreamDecoder;
use crate::credential::{CredentialSource, Freshness};
use crate::error::{body_excerpt, error_chain};
use crate::http::{HttpClient, is_event_stream, stream_broke};
use crate::retry::{Setback, is_connection_refused, retry_after_from_headers};
use crate::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, ProviderVariables,
    RetryPolicy,
};

/// The API version cairn speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// After `message_stop`, how long to wait for the body's end before dropping the connection.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

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
    /// The base URL as configured, for saying where nothing is listening.
    base_url: String,
    auth: Auth,
    /// Where the credential and the base URL came from, for error messages.
    variables: ProviderVariables,
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
        let auth = match (config.credential.fixed_headers()?, &config.credential) {
            (Some(headers), _) => Auth::Fixed(headers),
            (None, Credential::Source(source)) => Auth::Source(Arc::clone(source)),
            (None, Credential::ApiKey(_) | Credential::AuthToken(_)) => {
                return Err(ModelError::InvalidCredential {
                    variable: config.credential.variable(),
                });
            }
        };
        Ok(AnthropicClient {
            http: HttpClient::warm_up(config.connect_timeout),
            url,
            base_url: config.base_url.trim_end_matches('/').to_owned(),
            auth,
            variables: config.variables(),
            retry: config.retry,
            idle_timeout: config.idle_timeout,
            request_timeout: config.request_timeout,
            max_response_bytes: config.max_response_bytes,
            prompt_caching: config.prompt_caching,
        })
    }

    /// One attempt: send, then stream the answer. `trace` records what the retry that may
    /// follow needs to know.
    #[allow(
        clippy::too_many_arguments,
        reason = "one attempt's inputs, all distinct"
    )]
    async fn attempt(
        &self,
        body: &Bytes,
        model: &str,
        auth: &AuthHeaders,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        trace: &mut AttemptTrace,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let send = self
            .http
            .get()?
            .post(self.url.clone())
            .headers(request_headers(auth))
            .body(body.clone())
            .send();
        let response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            sent = tokio::time::timeout(self.idle_timeout, send) => match sent {
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
                self.variables,
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
                base_url_variable: self.variables.base_url,
            });
        }

        let mut body = pin!(response.bytes_stream());
        let mut decoder = StreamDecoder::new();
        let mut forward = |event: ModelEvent| {
            trace.emitted = true;
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

    /// The credential headers for the next attempt: the fixed ones, or the source's key
    /// (`Fresh` after a 401), asked for while cancellation can still stop the wait.
    async fn auth_headers(
        &self,
        freshness: Freshness,
        cancel: &CancellationToken,
    ) -> Result<AuthHeaders, ModelError> {
        match &self.auth {
            Auth::Fixed(headers) => Ok(headers.clone()),
            Auth::Source(source) => {
                let key = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(ModelError::Cancelled),
                    key = source.key(freshness) => key?,
                };
                source_headers(&key, source.setting())
            }
        }
    }

    /// The message of a refused connection: where, and which variable says so.
    fn nothing_listening(&self) -> String {
        format!(
            "nothing is listening at {} (connection refused): check {}",
            self.base_url, self.variables.base_url
        )
    }
}

/// The headers of one request: the API version, JSON in, an event stream out, and `auth`.
fn request_headers(auth: &AuthHeaders) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(5);
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
    for (name, value) in auth {
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// How the client authenticates: the same headers every time, or a key asked of a source
/// before each request and again after a 401.
enum Auth {
    Fixed(AuthHeaders),
    Source(Arc<dyn CredentialSource>),
}

/// What one attempt did besides its result, for the retry that may follow.
struct AttemptTrace {
    /// Output was forwarded: a retry notice says to discard it.
    emitted: bool,
    /// How patiently a failure is retried.
    setback: Setback,
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("url", &self.url.as_str())
            .field("credential", &self.variables.credential)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
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
        let mut attempt = 1;
        let mut freshness = Freshness::Kept;
        let mut key_renewed = false;
        loop {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let auth = self.auth_headers(freshness, cancel).await?;
            freshness = Freshness::Kept;
            let mut trace = AttemptTrace {
                emitted: false,
                setback: Setback::Transient,
            };
            let attempted = tokio::time::timeout(
                self.request_timeout,
                self.attempt(&body, &request.model, &auth, on_event, &mut trace, cancel),
            )
            .await;
            let error = match attempted {
                Ok(Ok(response)) => return Ok(response),
                Ok(Err(error)) => error,
                Err(_) => ModelError::RequestTimedOut(self.request_timeout),
            };
            // A key from a source may have expired: ask it for a new one and send once more.
            if matches!(error, ModelError::Unauthorized { .. })
                && matches!(self.auth, Auth::Source(_))
                && !key_renewed
            {
                key_renewed = true;
                freshness = Freshness::Fresh;
                continue;
            }
            if !error.is_retryable() {
                return Err(error);
            }
            let max_attempts = self.retry.attempts_after(trace.setback);
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
            let delay = self
                .retry
                .delay_after(trace.setback, attempt, error.retry_after());
            // The first notice already says where nothing is listening.
            let reason = match trace.setback {
                Setback::NothingListening => format!("nothing is listening at {}", self.base_url),
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
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::anthropic::Credential;

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
                    let Auth::Fixed(auth) = &client.auth else {
                        panic!("a key from a variable is fixed");
                    };
                    shown.push(format!("{:?}", request_headers(auth)));
                }
                Err(error) => panic!("{error}"),
            }
        }
        match source_headers(secret, "apiKeyHelper") {
            Ok(auth) => shown.push(format!("{:?}", request_headers(&auth))),
            Err(error) => panic!("{error}"),
        }
        for text in &shown {
            assert!(!text.contains("SECRET"), "{text}");
        }
        assert_eq!(shown[0], "ApiKey(\"<redacted>\")");
    }

    /// A key from `apiKeyHelper` goes as `x-api-key` and as a bearer token; after a 401 the
    /// helper runs again and the request is sent once more with its new key. A second 401
    /// is the user's to fix, and names the setting.
    #[tokio::test]
    async fn a_refused_helper_key_is_renewed_and_the_request_sent_again_once() {
        use cairn_test_support::{Reply, ScriptedServer};

        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let helper = crate::credential::KeyHelper::new(
            "n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; echo key-$n",
            dir.path().to_path_buf(),
            None,
        );
        let server = ScriptedServer::start();
        let mut config = AnthropicConfig::new(Credential::Source(Arc::new(helper)));
        config.base_url = server.url();
        let client = AnthropicClient::new(config).unwrap_or_else(|error| panic!("{error}"));
        let request = ModelRequest {
            model: "claude-sonnet-4-5".to_string(),
            system: cairn_protocol::SystemPrompt::default(),
            messages: vec![cairn_protocol::Message::user_text("hi")],
            tools: vec![],
            max_tokens: 64,
            text_only: false,
        };
        let send = || async {
            client
                .stream(&request, &mut |_| {}, &CancellationToken::new())
                .await
                .map(|response| response.content)
                .map_err(|error| error.to_string())
        };
        let refused = || Reply::error(401, "authentication_error", "invalid x-api-key");
        server.push(Reply::text("first"));
        server.push(refused());
        server.push(Reply::text("second"));
        server.push(refused());
        server.push(refused());
        assert!(send().await.is_ok());
        assert!(send().await.is_ok());
        assert_eq!(
            send().await,
            Err(
                "the API key was rejected (401 unauthorized): invalid x-api-key: check the \
                 value of apiKeyHelper"
                    .to_string()
            )
        );
        let keys: Vec<(Option<String>, Option<String>)> = server
            .requests()
            .iter()
            .map(|request| {
                (
                    request.header("x-api-key").map(str::to_owned),
                    request.header("authorization").map(str::to_owned),
                )
            })
            .collect();
        let sent = |n: u32| (Some(format!("key-{n}")), Some(format!("Bearer key-{n}")));
        assert_eq!(keys, vec![sent(1), sent(1), sent(2), sent(2), sent(3)]);
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
}
