//! The Anthropic Messages API client: the Messages dialect over the shared
//! [`Transport`](crate::transport::Transport).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::config::{AnthropicConfig, AuthHeaders, Credential, source_headers};
use super::request_body::{PromptCaching, messages_body};
use super::stream::StreamDecoder;
use crate::transport::{Auth, Dialect, StreamDecode, Transport, TransportSettings};
use crate::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, ProviderVariables};

/// The API version cairn speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A [`ModelClient`] for the Anthropic Messages API.
///
/// Each attempt POSTs the request with `stream: true` and decodes the SSE answer as it
/// arrives, forwarding deltas. A failure worth retrying (see [`ModelError::is_retryable`])
/// sends the whole request again after a [`ModelEvent::Retrying`] notice; when the failed
/// attempt had already streamed output, the notice says to discard it. Every wait (the
/// request, each chunk, the pause between attempts) gives way to cancellation at once.
pub struct AnthropicClient {
    transport: Transport,
    dialect: Messages,
    /// The registry with the settings' overrides (`providers.anthropic.models`).
    models: crate::registry::Registry,
}

/// The Messages API's wire format.
struct Messages {
    prompt_caching: PromptCaching,
    thinking: crate::thinking::Thinking,
}

/// The beta that lets thinking come between tool calls in one answer.
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

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
            transport: Transport::new(TransportSettings {
                url,
                base_url: config.base_url.trim_end_matches('/').to_owned(),
                auth,
                variables: config.variables(),
                retry: config.retry,
                connect_timeout: config.connect_timeout,
                idle_timeout: config.idle_timeout,
                request_timeout: config.request_timeout,
                max_response_bytes: config.max_response_bytes,
            }),
            dialect: Messages {
                prompt_caching: config.prompt_caching,
                thinking: config.thinking,
            },
            models: config.models,
        })
    }
}

impl Messages {
    /// The thinking `request` asks for ([`crate::thinking::budget_for`]).
    fn thinking_budget(&self, request: &ModelRequest) -> Option<u32> {
        self.thinking.budget_for(request)
    }
}

impl Dialect for Messages {
    fn body(&self, request: &ModelRequest) -> Result<Vec<u8>, ModelError> {
        let mut body = messages_body(request, self.prompt_caching);
        if let Some(budget) = self.thinking_budget(request) {
            body = body.with_thinking(budget);
        }
        serde_json::to_vec(&body).map_err(|error| ModelError::InvalidRequest {
            message: format!("could not encode the request: {error}"),
        })
    }

    fn headers(&self, request: &ModelRequest, headers: &mut HeaderMap) {
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if self.thinking_budget(request).is_some() {
            headers.insert(
                HeaderName::from_static("anthropic-beta"),
                HeaderValue::from_static(INTERLEAVED_THINKING_BETA),
            );
        }
    }

    fn source_headers(&self, key: &str, setting: &'static str) -> Result<AuthHeaders, ModelError> {
        source_headers(key, setting)
    }

    fn decoder(&self, _request: &ModelRequest) -> Box<dyn StreamDecode> {
        Box::new(StreamDecoder::new())
    }

    /// Claude calls its tools; a Claude answer that is only a call's JSON is more likely an
    /// example the user asked for. Another model behind a gateway on this API may write its
    /// calls as text, as it would on Chat Completions.
    fn reads_calls_in_text(&self, request: &ModelRequest) -> bool {
        crate::models::context_window(&crate::models::resolve_model(&request.model)).is_none()
    }

    fn classify(
        &self,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        variables: ProviderVariables,
        model: &str,
    ) -> ModelError {
        // The Messages API says "prompt is too long: N tokens > M maximum", or that the input
        // and `max_tokens` exceed the context limit.
        let error = ModelError::from_status(status, body, retry_after, variables, model)
            .bad_request(|message| {
                message.contains("prompt is too long") || message.contains("context limit")
            });
        match error {
            // A model that is not Claude's went to Anthropic: say how another provider is chosen.
            ModelError::NotFound {
                model,
                message,
                base_url_variable,
            } if !model.starts_with("claude") => ModelError::NotFound {
                message: format!(
                    "{}{}",
                    if message.is_empty() {
                        ""
                    } else {
                        message.as_str()
                    },
                    provider_hint(&model, message.is_empty())
                ),
                model,
                base_url_variable,
            },
            other => other,
        }
    }
}

/// How to send `model` to another provider, for a 404 from Anthropic's endpoint.
fn provider_hint(model: &str, alone: bool) -> String {
    let names: Vec<String> = crate::openai::BUILTIN_PROVIDERS
        .iter()
        .map(|provider| format!("{}/", provider.name))
        .collect();
    format!(
        "{}it went to the Anthropic API; another provider is chosen with its prefix, such as \
         openai/{}, one of {}",
        if alone { "" } else { "; " },
        model.rsplit('/').next().unwrap_or(model),
        names.join(", ")
    )
}

impl StreamDecode for StreamDecoder {
    fn push(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        StreamDecoder::push(self, chunk, on_event)
    }

    fn is_complete(&self) -> bool {
        StreamDecoder::is_complete(self)
    }

    fn finish(
        self: Box<Self>,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<ModelResponse, ModelError> {
        StreamDecoder::finish(*self, on_event)
    }

    fn so_far(&self) -> Option<crate::PartialAnswer> {
        self.assembler().so_far()
    }
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.transport.settings;
        f.debug_struct("AnthropicClient")
            .field("url", &settings.url.as_str())
            .field("credential", &settings.variables.credential)
            .field("retry", &settings.retry)
            .field("idle_timeout", &settings.idle_timeout)
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
        self.transport
            .stream(&self.dialect, request, on_event, cancel)
            .await
    }

    /// The registry's entry, with the settings' overrides. The Messages API caches what
    /// cairn marks for any model, and nothing once `DISABLE_PROMPT_CACHING` drops the marks.
    fn model_info(&self, model: &str) -> crate::ModelInfo {
        let mut info = self.models.lookup(model);
        info.capabilities.prompt_caching = self.dialect.prompt_caching == PromptCaching::Enabled;
        info
    }

    fn tool_calls_from_text(&self) -> u64 {
        self.transport.text_calls()
    }

    /// The Messages API has the `web_search` server tool.
    fn offers_web_search(&self, _model: &str) -> bool {
        true
    }

    async fn search_web(
        &self,
        request: &crate::WebSearchRequest,
        cancel: &CancellationToken,
    ) -> Result<crate::WebSearchAnswer, ModelError> {
        super::web_search::search_web(&self.transport, &self.dialect, request, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::anthropic::Credential;
    use crate::transport::request_headers;

    fn hello() -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-5".to_string(),
            system: cairn_protocol::SystemPrompt::default(),
            messages: vec![cairn_protocol::Message::user_text("hi")],
            tools: vec![],
            max_tokens: 64,
            text_only: false,
            stable_prefix: None,
        }
    }

    /// The configured budget is asked for; a summary asks for none.
    #[test]
    fn the_configured_budget_is_asked_for_except_in_a_summary() {
        let dialect = Messages {
            prompt_caching: PromptCaching::Enabled,
            thinking: crate::thinking::Thinking::new(Some(4096)),
        };
        let mut request = hello();
        request.max_tokens = 8192;
        let body = |request: &ModelRequest| -> serde_json::Value {
            serde_json::from_slice(&dialect.body(request).unwrap_or_default()).unwrap_or_default()
        };
        assert_eq!(
            body(&request)["thinking"],
            serde_json::json!({"type": "enabled", "budget_tokens": 4096})
        );
        request.text_only = true;
        assert_eq!(body(&request).get("thinking"), None);
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
                    let Auth::Fixed(auth) = &client.transport.settings.auth else {
                        panic!("a key from a variable is fixed");
                    };
                    shown.push(format!(
                        "{:?}",
                        request_headers(&client.dialect, &hello(), auth)
                    ));
                }
                Err(error) => panic!("{error}"),
            }
        }
        match source_headers(secret, "apiKeyHelper") {
            Ok(auth) => shown.push(format!(
                "{:?}",
                request_headers(
                    &Messages {
                        prompt_caching: PromptCaching::Enabled,
                        thinking: crate::thinking::Thinking::new(None),
                    },
                    &hello(),
                    &auth
                )
            )),
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
            stable_prefix: None,
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
