//! The Anthropic provider: a [`ModelClient`](crate::ModelClient) for the Messages API.
//!
//! Everything that knows the Anthropic wire format lives here: the request body with its
//! prompt-caching marks ([`request_body`]), the event stream and its assembly into a
//! [`ModelResponse`](crate::ModelResponse) ([`stream`]), the credential headers and the
//! variables the provider reads ([`AnthropicConfig`]: `ANTHROPIC_API_KEY` or
//! `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`), and the client that ties them to HTTP.
//! What every provider shares stays at the crate's top: the request and response types,
//! [`ModelError`](crate::ModelError) (which names the variables a provider gives it), retries,
//! SSE framing and the HTTP client. An OpenAI-compatible provider sits beside this one as
//! `openai/`, reading `OPENAI_API_KEY` and `OPENAI_BASE_URL`.

mod client;
mod config;
pub mod request_body;
pub mod stream;
pub mod web_search;

pub use client::{ANTHROPIC_VERSION, AnthropicClient};
pub use config::{
    API_KEY_VAR, AUTH_TOKEN_VAR, AnthropicConfig, BASE_URL_VAR, CREDENTIAL_VARS, Credential,
    DEFAULT_BASE_URL,
};
pub use request_body::PromptCaching;
