//! The Anthropic provider: a [`ModelClient`](crate::ModelClient) for the Messages API.
//!
//! Everything that knows the Anthropic wire format lives here: the request body with its
//! prompt-caching marks ([`request_body`]), the event stream and its assembly into a
//! [`ModelResponse`](crate::ModelResponse) ([`stream`]), and the client that ties them to
//! HTTP. What every provider shares stays at the crate's top.

mod client;
pub mod request_body;
pub mod stream;

pub use client::{
    ANTHROPIC_VERSION, AnthropicClient, AnthropicConfig, Credential, DEFAULT_BASE_URL,
};
pub use request_body::PromptCaching;
