//! Server-sent events from the Anthropic Messages API, from raw bytes to a [`ModelResponse`].
//!
//! Three steps, each usable on its own:
//!
//! 1. Framing: [`eventsource_stream`] splits the byte stream into events, whatever the network
//!    chunking (events split across chunks or several in one, `\n` or `\r\n` line ends,
//!    comments, multi-line `data:`).
//! 2. Decoding: [`parse_event`] reads an event's `data` into a [`StreamEvent`]. Event, delta
//!    and content-block types this version does not know decode to an `Unknown` variant and are
//!    skipped, so a new API feature does not break old clients.
//! 3. Assembling: a [`StreamAssembler`] is fed events in order, reports [`ModelEvent`]s as the
//!    answer grows, and builds the final [`ModelResponse`].
//!
//! [`decode_stream`] runs all three over chunks held in memory, on the same code path as the
//! HTTP client; it is what the benchmark and most tests drive.

use std::convert::Infallible;
use std::pin::pin;

use bytes::Bytes;
use cairn_protocol::{StopReason, Usage};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{error_chain, truncate_chars};
use crate::{ModelError, ModelEvent, ModelResponse};

mod assembler;

pub use assembler::StreamAssembler;

/// One event of the Messages API stream, as its `data` JSON reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Usage,
    },
    MessageStop,
    Ping,
    Error {
        error: StreamErrorBody,
    },
    /// An event type this version does not know; skipped.
    #[serde(other)]
    Unknown,
}

/// The message envelope of `message_start`; its content is always empty.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MessageStart {
    pub id: String,
    pub model: String,
    #[serde(default)]
    pub usage: Usage,
}

/// The first sight of a content block in `content_block_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
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
    TextDelta {
        text: String,
    },
    /// A piece of a tool call's input; the pieces joined are one JSON document.
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Unknown,
}

/// The top-level changes in `message_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
}

/// The body of an `error` event: `{"type": "overloaded_error", "message": "Overloaded"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamErrorBody {
    #[serde(rename = "type")]
    pub error_type: String,
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

/// The size of the pieces handed to the framer.
///
/// eventsource-stream copies its unparsed text once for every line it reads, so its cost grows
/// with the size of the chunks it is given: measured on the benchmark stream, framing 16 KiB
/// chunks runs at ~150 MiB/s and 1 KiB pieces at ~265 MiB/s. Splitting a `Bytes` is free.
const FRAMER_PIECE_BYTES: usize = 1024;

/// Frames a response body into SSE events: the framing step shared by [`decode_stream`] and
/// the HTTP client.
pub(crate) fn sse_frames<S, E>(body: S) -> impl Stream<Item = Result<Event, EventStreamError<E>>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    body.flat_map(|chunk| futures_util::stream::iter(framer_pieces(chunk)))
        .eventsource()
}

/// `chunk` cut into pieces of at most [`FRAMER_PIECE_BYTES`].
fn framer_pieces<E>(chunk: Result<Bytes, E>) -> impl Iterator<Item = Result<Bytes, E>> {
    let (bytes, error) = match chunk {
        Ok(bytes) => (bytes, None),
        Err(error) => (Bytes::new(), Some(error)),
    };
    let len = bytes.len();
    (0..len.div_ceil(FRAMER_PIECE_BYTES))
        .map(move |piece| {
            let start = piece * FRAMER_PIECE_BYTES;
            Ok(bytes.slice(start..len.min(start + FRAMER_PIECE_BYTES)))
        })
        .chain(error.map(Err))
}

/// Feeds one framed SSE event (or framing error) to `assembler`: the step shared by
/// [`decode_stream`] and the HTTP client.
pub(crate) fn push_frame<E>(
    assembler: &mut StreamAssembler,
    frame: Result<Event, EventStreamError<E>>,
    on_event: &mut dyn FnMut(ModelEvent),
) -> Result<(), ModelError>
where
    E: std::error::Error,
{
    let frame = frame.map_err(frame_error)?;
    match parse_event(&frame.data) {
        Ok(event) => assembler.push(event, on_event),
        Err(error) if KNOWN_EVENT_NAMES.contains(&frame.event.as_str()) => {
            Err(ModelError::InvalidStream(format!(
                "`{}` event: {error}; data: {}",
                frame.event,
                truncate_chars(&frame.data, MAX_QUOTED_DATA)
            )))
        }
        // Some other kind of event whose data is not ours to read.
        Err(_) => Ok(()),
    }
}

fn frame_error<E: std::error::Error>(error: EventStreamError<E>) -> ModelError {
    match error {
        EventStreamError::Transport(error) => ModelError::StreamBroke {
            message: error_chain(&error),
        },
        EventStreamError::Utf8(error) => {
            ModelError::InvalidStream(format!("the stream is not UTF-8: {error}"))
        }
        EventStreamError::Parser(error) => {
            ModelError::InvalidStream(format!("malformed SSE framing: {error}"))
        }
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
/// let response = cairn_llm::sse::decode_stream(body.as_bytes().chunks(7)).unwrap();
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
    let body = chunks
        .into_iter()
        .map(|chunk| Ok::<_, Infallible>(Bytes::copy_from_slice(chunk)));
    let mut frames = pin!(sse_frames(futures_util::stream::iter(body)));
    let mut assembler = StreamAssembler::new();
    // An in-memory stream is always ready, so each poll completes at once.
    while let Some(frame) = frames.next().now_or_never().flatten() {
        push_frame(&mut assembler, frame, on_event)?;
    }
    assembler.finish()
}

#[cfg(test)]
mod tests;
