//! Server-sent events: the framing every streaming model API shares.
//!
//! An [`SseFramer`] splits a response body into events, whatever the network chunking. What an
//! event's `data` means is the provider's business: the Anthropic Messages API's events are
//! decoded in [`crate::anthropic::stream`], and an OpenAI-compatible client decodes its Chat
//! Completions chunks from the same frames.

mod framer;

pub use framer::{SseError, SseEvent, SseFramer};

use crate::ModelError;

impl From<SseError> for ModelError {
    fn from(error: SseError) -> Self {
        ModelError::InvalidStream(error.to_string())
    }
}
