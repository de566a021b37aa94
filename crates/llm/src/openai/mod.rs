//! The OpenAI Chat Completions provider: OpenAI itself and the servers that speak its
//! dialect (Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter, DeepSeek).
//!
//! The request body ([`request_body`]), the stream decoder ([`stream`]), and the client and
//! its settings ([`OpenAiClient`], [`OpenAiConfig`]) over the shared transport.

mod client;
pub mod providers;
pub mod request_body;
pub mod stream;
mod window_probe;

pub use client::{DEFAULT_CONTEXT_WINDOW, OpenAiClient, OpenAiConfig};
pub use providers::{BUILTIN_PROVIDERS, BuiltinProvider, split_provider};
