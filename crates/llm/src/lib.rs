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
//! ([`ModelClient::model_info`]).
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
pub use side::{SideAnswer, SideModel};

/// One request to a model, independent of the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// A model id as the provider names it (aliases already resolved).
    pub model: String,
    /// The system prompt; empty for none.
    pub system: SystemPrompt,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// The answer must be text: the tools are sent (so the cached prefix stays the same) but
    /// the model may not call them (a summary of the conversation).
    pub text_only: bool,
}

/// Something that happened while a response streamed. Deltas are forwarded as they arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    ThinkingDelta(String),
    /// A tool call began; its input is still streaming.
    ToolUseStarted {
        id: String,
        name: String,
    },
    /// A tool call's input is complete and parsed.
    ToolUseComplete {
        id: String,
        name: String,
        input: Value,
    },
    /// The request failed and will be sent again after `delay_ms`.
    Retrying(RetryNotice),
    /// Something the client did that `--verbose` should say, never part of the answer: a
    /// tool call read from the model's text ([`text_calls`]).
    Note(String),
}

/// A tool call whose input the model wrote as something other than a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct MalformedToolInput {
    pub id: String,
    pub name: String,
    /// What was wrong, for the model to read: the parse error and the text it received.
    pub error: String,
}

/// The complete answer to a [`ModelRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// The provider's id for the message.
    pub id: String,
    pub model: String,
    /// The assistant's content. A tool call with malformed input appears here with `{}` as
    /// its input (so the conversation stays valid for the API) and is also listed in
    /// `malformed_tool_inputs`.
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    pub usage: Usage,
    pub malformed_tool_inputs: Vec<MalformedToolInput>,
}

/// A model API. Implementations stream, retry what is worth retrying, and stop promptly when
/// `cancel` fires (returning [`ModelError::Cancelled`]).
#[async_trait]
pub trait ModelClient: Send + Sync {
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
}
