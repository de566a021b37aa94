//! The service layer's model clients: everything cairn needs to talk to a model API.
//!
//! [`ModelClient`] is the provider-neutral contract the engine depends on: send a
//! [`ModelRequest`], receive [`ModelEvent`]s while the answer streams, and get the complete
//! [`ModelResponse`] at the end.
//!
//! Each provider is a dialect over one streaming transport (`transport`: the POST, the
//! status turned into a typed error, timeouts, the size cap, retries with `retry-after` and
//! credential renewal). [`anthropic`] speaks the Anthropic Messages API
//! ([`AnthropicClient`]); [`openai`] speaks Chat Completions ([`OpenAiClient`]), for OpenAI
//! and the compatible servers (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, DeepSeek).
//! What they share stays here: [`ModelError`], whose messages name the variables the failing
//! provider reads ([`ProviderVariables`]); [`RetryPolicy`]; SSE framing ([`sse`]); and the
//! model [`registry`], which a client reports a model's window, prices and capabilities from
//! ([`ModelClient::model_info`]), with the settings' overrides ([`registry::Registry`]); a
//! Chat Completions client asks its server for the window of a model neither knows, in the
//! background (`openai::window_probe`).
//!
//! # What [`Usage`] counts
//!
//! Every dialect maps its provider's counts into the same four numbers, each counted once:
//! `input_tokens` is the input that was neither written to nor read from a cache,
//! `cache_creation_input_tokens` the input written to a cache, `cache_read_input_tokens` the
//! input read from one, and `output_tokens` everything the model wrote, its reasoning
//! included. Their sum ([`Usage::input_total`]) is what the request filled of the window.
//! Anthropic reports them so; OpenAI's `prompt_tokens` includes its cached tokens
//! (`prompt_tokens_details.cached_tokens`), so that dialect subtracts them.
//!
//! # One request
//!
//! A client is built from its configuration (here pointed at a scripted Messages API on
//! loopback instead of `api.anthropic.com`), streams the answer to a callback, and returns
//! the whole response, whose cost the registry knows:
//!
//! ```
//! use cairn_llm::{
//!     AnthropicClient, AnthropicConfig, Credential, ModelClient, ModelEvent, ModelRequest,
//! };
//! use cairn_protocol::{ContentBlock, Message, StopReason, SystemPrompt};
//! use cairn_test_support::{Reply, ScriptedServer};
//! use tokio_util::sync::CancellationToken;
//!
//! let server = ScriptedServer::start();
//! server.push(Reply::text("Hello!").with_usage(1_000_000, 100_000));
//!
//! let mut config = AnthropicConfig::new(Credential::ApiKey("test-key".into()));
//! config.base_url = server.url();
//! let client = AnthropicClient::new(config)?;
//! let request = ModelRequest {
//!     model: "claude-sonnet-4-5".into(),
//!     system: SystemPrompt::default(),
//!     messages: vec![Message::user_text("Say hello")],
//!     tools: vec![],
//!     max_tokens: 1024,
//!     text_only: false,
//!     stable_prefix: None,
//! };
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let mut streamed = String::new();
//! let mut on_event = |event| {
//!     if let ModelEvent::TextDelta(text) = event {
//!         streamed.push_str(&text);
//!     }
//! };
//! let response =
//!     runtime.block_on(client.stream(&request, &mut on_event, &CancellationToken::new()))?;
//!
//! assert_eq!(streamed, "Hello!");
//! assert_eq!(response.content, vec![ContentBlock::text("Hello!")]);
//! assert_eq!(response.stop_reason, Some(StopReason::EndTurn));
//! // A million input tokens of Sonnet 4.5 at $3, a hundred thousand output tokens at $15.
//! let cost = client.model_info(&response.model).cost_usd(&response.usage);
//! assert_eq!(cost, Some(4.5));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```
//!
//! # What this crate must not do
//!
//! It talks to models and nothing else: it must not run tools (a tool call is data in the
//! response, run by whoever holds the executors), write sessions, or decide permissions. No
//! credential may reach a log, a `Debug` output or an error message: configurations and
//! credentials print the secret as `<redacted>`, errors name the variable a credential came from, never
//! its value, and the `apiKeyHelper`'s output is never quoted ([`credential`]). It must not
//! print; it depends on no cairn crate but `cairn-protocol`.

#![deny(missing_docs)]

pub mod anthropic;
pub mod credential;
mod error;
mod http;
pub mod models;
pub mod openai;
pub mod pricing;
pub mod registry;
mod retry;
pub mod side;
pub mod sse;
pub mod text_calls;
pub mod thinking;
mod transport;

use async_trait::async_trait;
use cairn_protocol::{
    ContentBlock, Message, RetryNotice, StopReason, SystemPrompt, ToolSpec, Usage,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use anthropic::{AnthropicClient, AnthropicConfig, Credential, PromptCaching};
pub use error::{ModelError, ProviderVariables};
pub use openai::{OpenAiClient, OpenAiConfig};
pub use registry::{Capabilities, ModelInfo};
pub use retry::RetryPolicy;
pub use retry::{MAX_RETRY_AFTER, is_retryable_status};
pub use side::{
    Citation, SearchHit, SideAnswer, SideModel, SideTally, WebSearchAnswer, WebSearchRequest,
};

/// One request to a model, independent of the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// A model id as the provider names it (aliases already resolved).
    pub model: String,
    /// The system prompt; empty for none.
    pub system: SystemPrompt,
    /// The conversation so far, oldest first, in the Anthropic wire shape of
    /// `cairn-protocol`; the OpenAI dialect translates it.
    pub messages: Vec<Message>,
    /// The tools the model is offered, by name, description and input schema; empty for
    /// none.
    pub tools: Vec<ToolSpec>,
    /// The most tokens the answer may hold (the wire's `max_tokens`). The OpenAI dialect
    /// lowers it to the model's own ceiling when the registry knows a lower one.
    pub max_tokens: u32,
    /// The answer must be text: the tools are sent (so the cached prefix stays the same) but
    /// the model may not call them (a summary of the conversation).
    pub text_only: bool,
    /// How many leading messages the next requests are expected to send unchanged, however
    /// old results after them are cleared (the context pipeline's frontier). A provider whose
    /// prompt cache is marked marks their end too, so a clear after them reads them from
    /// the cache instead of writing them again; `None` (or a count that leaves nothing
    /// before the newest message) marks only the newest message.
    pub stable_prefix: Option<usize>,
}

/// Something that happened while a response streamed. Deltas are forwarded as they arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// More of the answer's text, to append to what came before.
    TextDelta(String),
    /// More of the model's reasoning (Anthropic's `thinking` blocks, the OpenAI-compatible
    /// servers' `reasoning_content` or `reasoning`), to append.
    ThinkingDelta(String),
    /// A tool call began; its input is still streaming.
    ToolUseStarted {
        /// The call's id, which its result must name (made up when a local server sends
        /// none).
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
    },
    /// A tool call's input is complete and parsed.
    ToolUseComplete {
        /// The call's id, the same as in [`ToolUseStarted`](Self::ToolUseStarted).
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
        /// The input, always a JSON object: `{}` when what the model wrote was not one (the
        /// response lists that call in
        /// [`malformed_tool_inputs`](ModelResponse::malformed_tool_inputs)).
        input: Value,
    },
    /// The request failed and will be sent again after `delay_ms`.
    Retrying(RetryNotice),
    /// Something the client did that `--verbose` should say, never part of the answer: a
    /// tool call read from the model's text ([`text_calls`]).
    Note(String),
    /// The request was cancelled while its answer streamed: what the provider had said of it
    /// by then. Sent once, last, just before the request returns [`ModelError::Cancelled`],
    /// so that what the provider bills for it is still counted.
    Interrupted(PartialAnswer),
}

/// What an answer cancelled while it streamed had reported: Anthropic's `message_start`
/// gives the id and the input counts, a later `message_delta` the output so far; an
/// OpenAI-compatible server gives the id at once and its counts only at the end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartialAnswer {
    /// The provider's id for the message; empty when the server sent none.
    pub id: String,
    /// The model that was answering, as the provider names it.
    pub model: String,
    /// The counts reported so far (zero where nothing was reported yet).
    pub usage: Usage,
}

/// A tool call whose input the model wrote as something other than a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct MalformedToolInput {
    /// The call's id, as in the response's `tool_use` block.
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// What was wrong, for the model to read: the parse error and the text it received.
    pub error: String,
}

/// The complete answer to a [`ModelRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// The provider's id for the message (`msg_…` from Anthropic, `chatcmpl-…` from OpenAI);
    /// empty when an OpenAI-compatible server sent none.
    pub id: String,
    /// The model that answered, as the provider names it in its response: it may differ
    /// from the id requested (a dated id for an undated one, no `provider/` prefix).
    pub model: String,
    /// The assistant's content. A tool call with malformed input appears here with `{}` as
    /// its input (so the conversation stays valid for the API) and is also listed in
    /// `malformed_tool_inputs`.
    pub content: Vec<ContentBlock>,
    /// Why the model stopped; `None` when an Anthropic stream never said (the OpenAI
    /// dialect always sets one, [`StopReason::Unknown`] for a reason it does not know).
    pub stop_reason: Option<StopReason>,
    /// What the request counted, in the four numbers described at the crate's top.
    pub usage: Usage,
    /// The tool calls whose input was not a JSON object, each with the message the model is
    /// to read as that call's error result instead of the call being run.
    pub malformed_tool_inputs: Vec<MalformedToolInput>,
}

/// A model API. Implementations stream, retry what is worth retrying, and stop promptly when
/// `cancel` fires (returning [`ModelError::Cancelled`]).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Sends `request` and streams the answer: each [`ModelEvent`] goes to `on_event` as it
    /// is decoded, and the complete [`ModelResponse`] is returned once the stream ends. A
    /// retried request first reports [`ModelEvent::Retrying`], then the new attempt's events
    /// from its start. Fails with the first error not worth retrying, or with
    /// [`ModelError::RetriesExhausted`] holding the last one when every allowed attempt
    /// failed.
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError>;

    /// What this provider knows of `model`: its window, output ceiling, prices and
    /// capabilities. The engine reads the window and the cost here, never from a table of
    /// its own; a model without known prices has no cost (`None`), never a cost of zero.
    fn model_info(&self, model: &str) -> ModelInfo {
        registry::lookup(model)
    }

    /// How many tool calls this client has read from a model's text instead of its tool-call
    /// fields so far in the run ([`text_calls`]): what `--verbose` notes and the result
    /// counts.
    fn tool_calls_from_text(&self) -> u64 {
        0
    }

    /// Whether the provider of `model` searches the web on its side
    /// ([`ModelClient::search_web`]). Only Anthropic's Messages API does; a face offers
    /// WebSearch only where it is true.
    fn offers_web_search(&self, _model: &str) -> bool {
        false
    }

    /// One side request with the provider's web search tool: the provider runs the searches
    /// and the model answers over the results. Without one: [`side::web_search_unavailable`].
    async fn search_web(
        &self,
        _request: &side::WebSearchRequest,
        _cancel: &CancellationToken,
    ) -> Result<side::WebSearchAnswer, ModelError> {
        Err(side::web_search_unavailable())
    }
}
