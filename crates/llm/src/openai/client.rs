//! The Chat Completions client: the dialect over the shared
//! [`Transport`](crate::transport::Transport), and its settings.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::request_body::{Replay, chat_body, nine_char_tool_ids};
use super::stream::ChatDecoder;
use super::window_probe::WindowProbes;
use crate::registry::{ModelInfo, Registry};
use crate::thinking::{ReasoningEffort, Thinking};
use crate::transport::{
    Auth, AuthHeaders, Dialect, StreamDecode, Transport, TransportSettings, endpoint, sensitive,
};
use crate::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, ProviderVariables,
    RetryPolicy,
};

/// The window assumed for a model the registry does not know: small enough for any current
/// model of an OpenAI-compatible server.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// How long, once an answer has streamed, the client waits for its model's window lookup
/// still under way ([`window_probe`](super::window_probe)).
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// What an [`OpenAiClient`] needs. `Debug` never shows the key.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API's base, `/chat/completions` is added (`https://api.openai.com/v1`).
    pub base_url: String,
    /// Sent as `Authorization: Bearer …`; `None` for a local server that needs none.
    pub api_key: Option<String>,
    /// The variables errors name: where the key and the base URL come from.
    pub variables: ProviderVariables,
    /// How many times, and after what waits, a failed request is sent again
    /// (`CAIRN_MAX_RETRIES`).
    pub retry: RetryPolicy,
    /// The limit on opening a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// The longest silence accepted while waiting for response headers or between two chunks
    /// of a stream (five minutes by default, as for Anthropic: a local model may take long
    /// over its first token).
    pub idle_timeout: Duration,
    /// The longest one attempt may take, headers to the end of the stream
    /// (`API_TIMEOUT_MS`): for a stream that keeps sending and never ends.
    pub request_timeout: Duration,
    /// The most bytes of one response body read before giving up on it
    /// ([`ModelError::ResponseTooLarge`]).
    pub max_response_bytes: u64,
    /// The provider's name as `--model` prefixes it (`ollama` in `ollama/llama3`): taken off
    /// the model id before it is sent.
    pub model_prefix: Option<&'static str>,
    /// The body field that caps the answer: `max_tokens`, which compatible servers read, or
    /// `max_completion_tokens`, which OpenAI's reasoning models require.
    pub max_tokens_field: &'static str,
    /// Headers sent with every request (a custom provider's `headers`), marked sensitive:
    /// one may carry a key.
    pub headers: Vec<(String, String)>,
    /// The run's thinking switch (`--max-thinking-tokens`, `MAX_THINKING_TOKENS`,
    /// `alwaysThinkingEnabled`, the UI's Tab): its budget is sent as `reasoning_effort` to
    /// the models the registry marks as taking one; without a budget the server's default
    /// holds.
    pub thinking: Thinking,
    /// The model registry with the settings' overrides of this provider's models
    /// (`providers.<name>.models`).
    pub models: Registry,
}

impl OpenAiConfig {
    /// The defaults of the Anthropic client (retries, timeouts, size cap) for `base_url`.
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        variables: ProviderVariables,
    ) -> Self {
        let defaults = crate::AnthropicConfig::new(crate::Credential::ApiKey(String::new()));
        OpenAiConfig {
            base_url: base_url.into(),
            api_key,
            variables,
            retry: defaults.retry,
            connect_timeout: defaults.connect_timeout,
            idle_timeout: defaults.idle_timeout,
            request_timeout: defaults.request_timeout,
            max_response_bytes: defaults.max_response_bytes,
            model_prefix: None,
            max_tokens_field: "max_tokens",
            headers: Vec::new(),
            thinking: Thinking::default(),
            models: Registry::default(),
        }
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("variables", &self.variables)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// A [`ModelClient`] for the Chat Completions API, as OpenAI and compatible servers speak it.
pub struct OpenAiClient {
    transport: Transport,
    dialect: Chat,
    /// The windows the server reported for models the registry does not know.
    windows: WindowProbes,
}

/// The Chat Completions wire format.
struct Chat {
    model_prefix: Option<&'static str>,
    max_tokens_field: &'static str,
    thinking: Thinking,
    models: Registry,
}

impl Chat {
    /// `model` as the server names it: without the provider's prefix.
    fn server_model<'a>(&self, model: &'a str) -> &'a str {
        self.model_prefix
            .and_then(|prefix| {
                let (head, rest) = model.split_once('/')?;
                head.eq_ignore_ascii_case(prefix).then_some(rest)
            })
            .unwrap_or(model)
    }
}

impl OpenAiClient {
    /// A client for `config`; as cheap as the Anthropic one (the HTTP client is built on a
    /// background thread).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let url = endpoint(
            &config.base_url,
            "/chat/completions",
            config.variables.base_url,
            "an http or https URL such as https://api.openai.com/v1",
        )?;
        let mut auth = match &config.api_key {
            Some(key) => vec![sensitive(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {key}"),
                config.variables.credential,
            )?],
            None => Vec::new(),
        };
        for (name, value) in &config.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ModelError::InvalidCredential {
                    variable: config.variables.credential,
                }
            })?;
            auth.push(sensitive(name, value.clone(), config.variables.credential)?);
        }
        Ok(OpenAiClient {
            transport: Transport::new(TransportSettings {
                url,
                base_url: config.base_url.trim_end_matches('/').to_owned(),
                auth: Auth::Fixed(auth),
                variables: config.variables,
                retry: config.retry,
                connect_timeout: config.connect_timeout,
                idle_timeout: config.idle_timeout,
                request_timeout: config.request_timeout,
                max_response_bytes: config.max_response_bytes,
            }),
            dialect: Chat {
                model_prefix: config.model_prefix,
                max_tokens_field: config.max_tokens_field,
                thinking: config.thinking,
                models: config.models,
            },
            windows: WindowProbes::default(),
        })
    }
}

impl Dialect for Chat {
    fn body(&self, request: &ModelRequest) -> Result<Vec<u8>, ModelError> {
        // Reasoning goes back where the model's registry entry says it must.
        let model = self.server_model(&request.model);
        let info = self.models.lookup(model);
        let replay = if info.capabilities.reasoning_replay {
            Replay::ReasoningContent
        } else {
            Replay::Drop
        };
        let mut body = chat_body(request, replay);
        if info.capabilities.nine_char_tool_ids {
            nine_char_tool_ids(&mut body);
        }
        body["model"] = serde_json::Value::String(model.to_owned());
        // The engine's output cap is Claude's; a model with a lower ceiling would refuse it.
        let max_tokens = info
            .max_output_tokens
            .map_or(request.max_tokens, |ceiling| {
                request.max_tokens.min(ceiling)
            });
        if let Some(object) = body.as_object_mut() {
            object.remove("max_tokens");
            object.insert(self.max_tokens_field.to_owned(), max_tokens.into());
            if info.capabilities.reasoning_effort
                && let Some(budget) = self.thinking.budget_for(request)
            {
                let effort = ReasoningEffort::for_budget(budget).as_str();
                object.insert("reasoning_effort".to_owned(), effort.into());
            }
        }
        serde_json::to_vec(&body).map_err(|error| ModelError::InvalidRequest {
            message: format!("could not encode the request: {error}"),
        })
    }

    fn headers(&self, _request: &ModelRequest, _headers: &mut HeaderMap) {}

    fn source_headers(&self, key: &str, setting: &'static str) -> Result<AuthHeaders, ModelError> {
        Ok(vec![sensitive(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {key}"),
            setting,
        )?])
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn StreamDecode> {
        Box::new(ChatDecoder::new(&request.model))
    }

    /// Local models behind these servers often write their calls as text.
    fn reads_calls_in_text(&self, _request: &ModelRequest) -> bool {
        true
    }

    fn classify(
        &self,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        variables: ProviderVariables,
        model: &str,
    ) -> ModelError {
        // OpenAI's error body has the same `error.message` as Anthropic's. A window overflow
        // is `code: context_length_exceeded` (OpenAI, OpenRouter), "maximum context length"
        // (vLLM, DeepSeek) or "exceeds the available context size" (llama.cpp).
        let code_says = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .is_some_and(|body| body["error"]["code"] == "context_length_exceeded");
        ModelError::from_status(status, body, retry_after, variables, model).bad_request(
            |message| {
                code_says
                    || message.contains("context length")
                    || message.contains("context size")
                    || message.contains("context window")
                    || message.contains("prompt is too long")
            },
        )
    }
}

impl OpenAiClient {
    /// The window the server reported for `model` (asked when a request for it was first
    /// sent), waiting up to `limit` for a lookup under way; `None` when it said none.
    pub async fn reported_window(&self, model: &str, limit: Duration) -> Option<u64> {
        self.windows
            .settle(self.dialect.server_model(model), limit)
            .await
    }

    /// Starts asking the server for the window of `model` when neither the registry nor the
    /// settings know it: in the background, so the request goes out at once.
    fn ask_for_window(&self, model: &str) {
        let model = self.dialect.server_model(model);
        if self.dialect.models.lookup(model).context_window.is_some() {
            return;
        }
        let Ok(http) = self.transport.http_client() else {
            return;
        };
        let settings = &self.transport.settings;
        self.windows.start(
            http,
            self.transport.fixed_headers(),
            &settings.base_url,
            model,
        );
    }
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.transport.settings;
        f.debug_struct("OpenAiClient")
            .field("url", &settings.url.as_str())
            .field("credential", &settings.variables.credential)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.ask_for_window(&request.model);
        let response = self
            .transport
            .stream(&self.dialect, request, on_event, cancel)
            .await?;
        // The answer is in: a window lookup still under way gets a moment more, so that what
        // follows from this answer counts with the server's window.
        let settled = self
            .windows
            .settle(self.dialect.server_model(&request.model), SETTLE_LIMIT);
        tokio::select! {
            _ = settled => {}
            () = cancel.cancelled() => {}
        }
        Ok(response)
    }

    /// The registry's entry with the settings' overrides; a model neither knows gets the
    /// window its server reported, until it has 128K, and no price.
    fn model_info(&self, model: &str) -> ModelInfo {
        let model = self.dialect.server_model(model);
        let mut info = self.dialect.models.lookup(model);
        if info.context_window.is_none() {
            info.context_window =
                Some(self.windows.window(model).unwrap_or(DEFAULT_CONTEXT_WINDOW));
        }
        info
    }

    fn tool_calls_from_text(&self) -> u64 {
        self.transport.text_calls()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const OPENAI: ProviderVariables = ProviderVariables {
        credential: "OPENAI_API_KEY",
        base_url: "OPENAI_BASE_URL",
    };

    /// How each server says the conversation is over the window: a typed error the engine
    /// compacts on, whatever the words; any other 400 stays a rejected request.
    #[test]
    fn errors_are_classified_in_this_dialects_words() {
        let classify = |status: u16, body: serde_json::Value| {
            let error = Chat {
                model_prefix: None,
                max_tokens_field: "max_tokens",
                thinking: Thinking::default(),
                models: Registry::default(),
            }
            .classify(status, body.to_string().as_bytes(), None, OPENAI, "gpt-4o");
            (error.is_prompt_too_long(), error.to_string())
        };
        let error = |message: &str, code: serde_json::Value| serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "code": code}});
        let over = [
            error(
                "Your input exceeds the limit.",
                "context_length_exceeded".into(),
            ),
            error(
                "This model's maximum context length is 8192 tokens.",
                serde_json::Value::Null,
            ),
            error(
                "the request exceeds the available context size, try increasing it",
                serde_json::Value::Null,
            ),
        ];
        for body in over {
            let (too_long, text) = classify(400, body);
            assert!(too_long, "{text}");
            assert!(
                text.starts_with("the conversation is over the model's context window"),
                "{text}"
            );
        }
        assert_eq!(
            classify(
                400,
                error("'messages' must be an array", serde_json::Value::Null)
            ),
            (
                false,
                "the API rejected the request (400): 'messages' must be an array".to_string()
            )
        );
        assert_eq!(
            classify(
                401,
                error("Incorrect API key provided", serde_json::Value::Null)
            )
            .1,
            "the API key was rejected (401 unauthorized): Incorrect API key provided: check the \
             value of OPENAI_API_KEY"
        );
    }

    #[test]
    fn the_providers_prefix_is_taken_off_the_model() {
        let chat = Chat {
            model_prefix: Some("openrouter"),
            max_tokens_field: "max_tokens",
            thinking: Thinking::default(),
            models: Registry::default(),
        };
        assert_eq!(
            chat.server_model("openrouter/deepseek/deepseek-r1"),
            "deepseek/deepseek-r1"
        );
        assert_eq!(
            chat.server_model("deepseek/deepseek-r1"),
            "deepseek/deepseek-r1"
        );
        assert_eq!(
            Chat {
                model_prefix: None,
                max_tokens_field: "max_tokens",
                thinking: Thinking::default(),
                models: Registry::default(),
            }
            .server_model("ollama/x"),
            "ollama/x"
        );
    }

    /// The run's thinking budget reaches OpenAI's reasoning models as a level, the most for
    /// "ultrathink"; models that take no level, and summaries, get no field.
    #[test]
    fn the_thinking_budget_is_a_reasoning_effort_for_reasoning_models() {
        let effort = |model: &str, budget: Option<u32>, prompt: &str, text_only: bool| {
            let chat = Chat {
                model_prefix: Some("openai"),
                max_tokens_field: "max_completion_tokens",
                thinking: Thinking::new(budget),
                models: Registry::default(),
            };
            let request = ModelRequest {
                model: model.to_owned(),
                system: cairn_protocol::SystemPrompt::default(),
                messages: vec![cairn_protocol::Message::user_text(prompt)],
                tools: vec![],
                max_tokens: 32_000,
                text_only,
                stable_prefix: None,
            };
            let body: serde_json::Value =
                serde_json::from_slice(&chat.body(&request).unwrap_or_default())
                    .unwrap_or_default();
            body.get("reasoning_effort").cloned()
        };
        let cases = [
            ("openai/o3", Some(4096), "hi", false, Some("low")),
            ("openai/o4-mini", Some(16_000), "hi", false, Some("medium")),
            ("openai/gpt-5", Some(31_999), "hi", false, Some("high")),
            (
                "openai/o3",
                None,
                "ultrathink about it",
                false,
                Some("high"),
            ),
            ("openai/o3", None, "hi", false, None),
            ("openai/o3", Some(4096), "hi", true, None),
            ("openai/gpt-4o", Some(31_999), "hi", false, None),
            ("openai/deepseek-reasoner", Some(31_999), "hi", false, None),
        ];
        for (model, budget, prompt, text_only, expected) in cases {
            assert_eq!(
                effort(model, budget, prompt, text_only),
                expected.map(serde_json::Value::from),
                "{model} {budget:?} {prompt} {text_only}"
            );
        }
    }

    #[test]
    fn debug_output_hides_the_key() {
        let config = OpenAiConfig::new("http://x/v1", Some("sk-SECRET".into()), OPENAI);
        let client = OpenAiClient::new(config.clone()).unwrap_or_else(|error| panic!("{error}"));
        for text in [format!("{config:?}"), format!("{client:?}")] {
            assert!(!text.contains("SECRET"), "{text}");
        }
    }
}
