//! The Anthropic Messages API's event stream, from raw bytes to a [`ModelResponse`].
//!
//! Three steps, each usable on its own:
//!
//! 1. Framing: the provider-neutral [`SseFramer`] splits the byte stream into server-sent
//!    events, whatever the network chunking (events split across chunks or several in one,
//!    `\n`, `\r\n` or `\r` line ends, comments, multi-line `data:`).
//! 2. Decoding: [`parse_event`] reads an event's `data` into a [`StreamEvent`]. Event, delta
//!    and content-block types this version does not know decode to an `Unknown` variant and are
//!    skipped, so a new API feature does not break old clients.
//! 3. Assembling: a [`StreamAssembler`] is fed events in order, reports [`ModelEvent`]s as the
//!    answer grows, and builds the final [`ModelResponse`].
//!
//! [`decode_stream`] runs all three over chunks held in memory, on the same code path as the
//! HTTP client; it is what the benchmark and most tests drive.

use cairn_protocol::{StopReason, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::error::truncate_chars;
use crate::sse::{SseEvent, SseFramer};
use crate::{ModelError, ModelEvent, ModelResponse};

mod assembler;

pub use assembler::StreamAssembler;

/// One event of the Messages API stream, as its `data` JSON reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// `message_start`, always first: the message's id and model, and the input counts.
    MessageStart {
        /// The message as it begins, with no content yet.
        message: MessageStart,
    },
    /// `content_block_start`: a new block of the answer opens.
    ContentBlockStart {
        /// The block's position in the message's content; its deltas and stop carry the
        /// same index.
        index: usize,
        /// What kind of block it is, with whatever of it the API sent up front.
        content_block: BlockStart,
    },
    /// `content_block_delta`: more of an open block.
    ContentBlockDelta {
        /// The block it belongs to.
        index: usize,
        /// The piece.
        delta: BlockDelta,
    },
    /// `content_block_stop`: the block is complete (a tool call's input can now be parsed).
    ContentBlockStop {
        /// The block that closed.
        index: usize,
    },
    /// `message_delta`, near the end: the stop reason and the final counts.
    MessageDelta {
        /// The message-level changes.
        delta: MessageDelta,
        /// The counts so far; they repeat or raise those of `message_start`, so a non-zero
        /// count replaces the earlier one ([`Usage::update_from`]). Zero when absent.
        #[serde(default)]
        usage: Usage,
    },
    /// `message_stop`: the message is complete.
    MessageStop,
    /// `ping`: a keep-alive with no content (its bytes keep the stream from counting as
    /// stalled).
    Ping,
    /// `error`: the API failed mid-stream (overloaded, say); becomes
    /// [`ModelError::StreamError`].
    Error {
        /// The error's type and message.
        error: StreamErrorBody,
    },
    /// An event type this version does not know; skipped.
    #[serde(other)]
    Unknown,
}

/// The message envelope of `message_start`; its content is always empty.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MessageStart {
    /// The API's id for the message (`msg_…`).
    pub id: String,
    /// The model that answers, as the API names it (it may differ from the alias requested).
    pub model: String,
    /// The input counts (with caching, the cache writes and reads); the output count is a
    /// placeholder that `message_delta` replaces. Zero when absent.
    #[serde(default)]
    pub usage: Usage,
}

/// The first sight of a content block in `content_block_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockStart {
    /// A text block.
    Text {
        /// Text sent with the start, usually empty: the text follows as `text_delta`s.
        #[serde(default)]
        text: String,
    },
    /// The model's visible reasoning (extended thinking).
    Thinking {
        /// Reasoning sent with the start, usually empty: it follows as `thinking_delta`s.
        #[serde(default)]
        thinking: String,
        /// The signature that lets the block be sent back, usually empty here: it follows
        /// as a `signature_delta`.
        #[serde(default)]
        signature: String,
    },
    /// Reasoning the API withholds, encrypted; it must be sent back unchanged.
    RedactedThinking {
        /// The encrypted reasoning, whole (no deltas follow).
        data: String,
    },
    /// A tool call.
    ToolUse {
        /// The call's id (`toolu_…`), which its result must name.
        id: String,
        /// The tool's name as offered in the request.
        name: String,
        /// Normally `{}`: the real input follows as `input_json_delta` pieces.
        #[serde(default)]
        input: Value,
    },
    /// A block type this version does not know (server tools, citations…); skipped along with
    /// its deltas.
    #[serde(other)]
    Unknown,
}

/// A piece of a content block in `content_block_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    /// More of a text block.
    TextDelta {
        /// The text to append.
        text: String,
    },
    /// A piece of a tool call's input; the pieces joined are one JSON document.
    InputJsonDelta {
        /// The piece, not valid JSON on its own.
        partial_json: String,
    },
    /// More of a thinking block.
    ThinkingDelta {
        /// The reasoning to append.
        thinking: String,
    },
    /// A thinking block's signature, sent once before the block stops.
    SignatureDelta {
        /// The signature to append.
        signature: String,
    },
    /// A delta type this version does not know; skipped.
    #[serde(other)]
    Unknown,
}

/// The top-level changes in `message_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MessageDelta {
    /// Why the model stopped; `None` when this delta does not say.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
}

/// The body of an `error` event: `{"type": "overloaded_error", "message": "Overloaded"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamErrorBody {
    /// The error's `type` (`overloaded_error`, `api_error`, …), which decides whether the
    /// request is retried.
    #[serde(rename = "type")]
    pub error_type: String,
    /// The API's explanation; empty when absent.
    #[serde(default)]
    pub message: String,
}

/// Decodes the `data` of one SSE event.
pub fn parse_event(data: &str) -> Result<StreamEvent, serde_json::Error> {
    if let Some(event) = parse_content_block_delta(data) {
        return Ok(event);
    }
    serde_json::from_str(data)
}

/// How the API begins the data of a `content_block_delta`, the event that makes up nearly all
/// of a stream.
const DELTA_PREFIX: &str = r#"{"type":"content_block_delta","#;

/// A fast path for `content_block_delta` events as the API writes them.
///
/// The derived decoder of an internally tagged enum first buffers the whole object to find its
/// tag, twice here (the event and its delta); reading the delta's fields flat skips both. Any
/// surprise (another field order, a missing field) returns `None` and the derived decoder has
/// the last word, so the two always agree.
fn parse_content_block_delta(data: &str) -> Option<StreamEvent> {
    #[derive(Deserialize)]
    struct Event {
        index: usize,
        delta: FlatDelta,
    }
    #[derive(Deserialize)]
    struct FlatDelta {
        #[serde(rename = "type")]
        kind: DeltaKind,
        text: Option<String>,
        partial_json: Option<String>,
        thinking: Option<String>,
        signature: Option<String>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum DeltaKind {
        TextDelta,
        InputJsonDelta,
        ThinkingDelta,
        SignatureDelta,
        #[serde(other)]
        Other,
    }

    if !data.starts_with(DELTA_PREFIX) {
        return None;
    }
    let Event { index, delta } = serde_json::from_str(data).ok()?;
    let delta = match delta.kind {
        DeltaKind::TextDelta => BlockDelta::TextDelta { text: delta.text? },
        DeltaKind::InputJsonDelta => BlockDelta::InputJsonDelta {
            partial_json: delta.partial_json?,
        },
        DeltaKind::ThinkingDelta => BlockDelta::ThinkingDelta {
            thinking: delta.thinking?,
        },
        DeltaKind::SignatureDelta => BlockDelta::SignatureDelta {
            signature: delta.signature?,
        },
        DeltaKind::Other => return None,
    };
    Some(StreamEvent::ContentBlockDelta { index, delta })
}

/// SSE event names whose data must decode; data under any other name is skipped when it does
/// not.
const KNOWN_EVENT_NAMES: &[&str] = &[
    "message",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
];

/// The longest stretch of an unreadable event's data quoted in an error.
const MAX_QUOTED_DATA: usize = 200;

/// A response body fed chunk by chunk, framed, decoded and assembled: the path shared by
/// [`decode_stream`] and the HTTP client.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    framer: SseFramer,
    assembler: StreamAssembler,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder::default()
    }

    /// The assembler, for what the answer has reported so far.
    pub(crate) fn assembler(&self) -> &StreamAssembler {
        &self.assembler
    }

    /// Whether `message_stop` has arrived; nothing after it is read.
    pub(crate) fn is_complete(&self) -> bool {
        self.assembler.is_complete()
    }

    /// Reads the next `chunk` of the body, reporting [`ModelEvent`]s to `on_event`.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<(), ModelError> {
        if self.assembler.is_complete() {
            return Ok(());
        }
        let assembler = &mut self.assembler;
        self.framer
            .feed(chunk, |event| push_event(assembler, event, on_event))
    }

    /// The whole response, or why the body did not hold one.
    ///
    /// The body has ended. A last event without its closing blank line is read if its data is
    /// a whole event (cut-off data means the stream was cut), and a `message_delta` that gave
    /// a stop reason ends the message as `message_stop` would: the API has said all it meant
    /// to.
    pub(crate) fn finish(
        mut self,
        on_event: &mut dyn FnMut(ModelEvent),
    ) -> Result<ModelResponse, ModelError> {
        let assembler = &mut self.assembler;
        self.framer.finish(|event| {
            if assembler.is_complete() {
                return Ok(());
            }
            match parse_event(event.data) {
                Ok(decoded) => assembler.push(decoded, on_event),
                Err(_) => Ok::<(), ModelError>(()),
            }
        })?;
        self.assembler.end_of_stream(on_event);
        self.assembler.finish()
    }
}

/// Feeds one framed SSE event to `assembler`.
fn push_event(
    assembler: &mut StreamAssembler,
    event: SseEvent<'_>,
    on_event: &mut dyn FnMut(ModelEvent),
) -> Result<(), ModelError> {
    // Events after `message_stop` in the same chunk are skipped unread, as later chunks are.
    if assembler.is_complete() {
        return Ok(());
    }
    match parse_event(event.data) {
        Ok(decoded) => assembler.push(decoded, on_event),
        Err(error) if KNOWN_EVENT_NAMES.contains(&event.event) => {
            Err(ModelError::InvalidStream(format!(
                "`{}` event: {error}; data: {}",
                event.event,
                truncate_chars(event.data, MAX_QUOTED_DATA)
            )))
        }
        // Some other kind of event whose data is not ours to read.
        Err(_) => Ok(()),
    }
}

/// Decodes a whole response held in memory as `chunks` of bytes, split anywhere.
///
/// ```
/// let body = concat!(
///     "event: message_start\n",
///     "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\"}}\n\n",
///     "event: message_stop\n",
///     "data: {\"type\":\"message_stop\"}\n\n",
/// );
/// let response = cairn_llm::anthropic::stream::decode_stream(body.as_bytes().chunks(7)).unwrap();
/// assert_eq!(response.id, "msg_1");
/// ```
pub fn decode_stream<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Result<ModelResponse, ModelError> {
    decode_stream_with(chunks, &mut |_| {})
}

/// [`decode_stream`], reporting each [`ModelEvent`] to `on_event` as it is decoded.
pub fn decode_stream_with<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    on_event: &mut dyn FnMut(ModelEvent),
) -> Result<ModelResponse, ModelError> {
    let mut decoder = StreamDecoder::new();
    for chunk in chunks {
        decoder.push(chunk, on_event)?;
    }
    decoder.finish(on_event)
}

#[cfg(test)]
mod tests;
