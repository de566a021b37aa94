//! What the scripted server answers to one request: a streamed message, an API error or raw
//! SSE bytes, and how the bytes are delivered (late, in small chunks, cut off or stalled).

use std::time::Duration;

use bytes::Bytes;
use hyper::StatusCode;
use hyper::header::{HeaderName, HeaderValue};
use serde::Serialize;

use crate::openai;
use crate::sse::{self, ScriptedMessage};

/// One content block of a scripted assistant message.
#[derive(Clone, Debug)]
pub enum ScriptedBlock {
    /// Plain text, streamed in several `text_delta`s.
    Text(String),
    /// Extended thinking: `thinking_delta`s, then one `signature_delta`.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the client must send back unchanged.
        signature: String,
    },
    /// A tool call; `input` is serialized and streamed in `input_json_delta` pieces.
    ToolUse {
        /// The `tool_use` id (`toolu_…`).
        id: String,
        /// The tool's name, as the model would write it.
        name: String,
        /// The arguments.
        input: serde_json::Value,
    },
    /// A tool call whose input JSON text is sent as-is (may be invalid JSON) in input_json_delta pieces.
    RawToolUse {
        /// The `tool_use` id.
        id: String,
        /// The tool's name.
        name: String,
        /// The input's JSON text, sent unchecked.
        input_json: String,
    },
    /// A search the API ran on its side (the `web_search` server tool): a `server_tool_use`
    /// block with the query, then a `web_search_tool_result` block listing the results. It
    /// takes two block indices, and the Chat Completions dialect leaves it out.
    WebSearch {
        /// The `server_tool_use` id (`srvtoolu_…`).
        id: String,
        /// The query the model searched for.
        query: String,
        /// Each result's title and URL.
        results: Vec<(String, String)>,
    },
}

/// One scripted answer, served to exactly one request.
///
/// Build it with [`Reply::text`], [`Reply::blocks`], [`Reply::tool_use`], [`Reply::error`] or
/// [`Reply::raw_sse`], then adjust it with the `with_*`, [`Reply::cut_after`] and
/// [`Reply::stall_after`] methods:
///
/// ```
/// use std::time::Duration;
/// use cairn_test_support::Reply;
///
/// // A rate limit the client should retry after one second.
/// let limited = Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "1");
/// // A reply whose connection drops after 100 bytes of the body.
/// let dropped = Reply::text("never finished").cut_after(100);
/// // A reply that trickles in one byte per HTTP chunk, after a pause.
/// let slow = Reply::text("slowly").with_chunk_size(1).with_delay(Duration::from_millis(20));
/// # let _ = (limited, dropped, slow);
/// ```
#[derive(Clone, Debug)]
pub struct Reply {
    content: Content,
    headers: Vec<(HeaderName, HeaderValue)>,
    delay: Option<Duration>,
    chunking: Chunking,
    ending: Ending,
    /// The delta field thinking streams in on the Chat Completions dialect.
    reasoning_field: &'static str,
    /// Held back until this many requests with a held reply have arrived.
    hold_until: Option<usize>,
    /// Held back until the test calls [`crate::ScriptedServer::release_held`].
    held_for_release: bool,
}

#[derive(Clone, Debug)]
enum Content {
    Message {
        blocks: Vec<ScriptedBlock>,
        stop_reason: String,
        usage: Usage,
    },
    Error {
        status: StatusCode,
        error_type: String,
        message: String,
    },
    RawSse(String),
    /// A stream that never ends: `opening` events, then `repeated` sent over and over until
    /// the client goes away.
    Endless {
        opening: Vec<String>,
        repeated: String,
    },
}

/// Token counts reported in `message_start` (input) and `message_delta` (output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) cache_creation_input_tokens: u64,
    pub(crate) cache_read_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        }
    }
}

/// How the body is split into HTTP chunks; each chunk is flushed on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chunking {
    /// One chunk per SSE event (one chunk in all for error and raw bodies), as the real API does.
    Natural,
    /// Chunks of exactly this many bytes (the last may be shorter).
    Bytes(usize),
}

/// What happens once the body, or the part of it that is sent, has been sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The response ends cleanly.
    Complete,
    /// The response ends cleanly without the body's last this many bytes (a final event
    /// without its closing blank line).
    CompleteLess(usize),
    /// After this many body bytes the connection is aborted.
    CutAfter(usize),
    /// After this many body bytes nothing more is sent until the client goes away.
    StallAfter(usize),
}

/// A reply made ready for one request: its status, headers and body pieces.
#[derive(Debug)]
pub(crate) struct Rendered {
    pub(crate) status: StatusCode,
    pub(crate) content_type: &'static str,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) delay: Option<Duration>,
    /// The body in its natural pieces (one per SSE event, or one in all).
    pub(crate) pieces: Vec<Bytes>,
    pub(crate) chunking: Chunking,
    pub(crate) ending: Ending,
    /// Whether to announce the full body length up front (as the real API does for errors)
    /// rather than use chunked transfer encoding.
    pub(crate) known_length: bool,
    /// Sent over and over after `pieces`, for as long as the client reads.
    pub(crate) repeated: Option<Bytes>,
}

impl Reply {
    /// One text block, stop_reason `end_turn`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::blocks(vec![ScriptedBlock::Text(text.into())])
    }

    /// Any blocks, in order; stop_reason `tool_use` if any block is a tool call, else `end_turn`.
    pub fn blocks(blocks: Vec<ScriptedBlock>) -> Reply {
        let calls_tool = blocks.iter().any(|block| match block {
            ScriptedBlock::ToolUse { .. } | ScriptedBlock::RawToolUse { .. } => true,
            ScriptedBlock::Text(_)
            | ScriptedBlock::Thinking { .. }
            | ScriptedBlock::WebSearch { .. } => false,
        });
        let stop_reason = if calls_tool { "tool_use" } else { "end_turn" };
        Reply::new(Content::Message {
            blocks,
            stop_reason: stop_reason.to_owned(),
            usage: Usage::default(),
        })
    }

    /// One tool call, stop_reason `tool_use`.
    pub fn tool_use(id: &str, name: &str, input: serde_json::Value) -> Reply {
        Reply::blocks(vec![ScriptedBlock::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        }])
    }

    /// An API error: this HTTP status and the JSON body
    /// `{"type":"error","error":{"type":error_type,"message":message}}`.
    ///
    /// Panics if `status` is not a valid HTTP status code (100..=999).
    pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
        let status = match StatusCode::from_u16(status) {
            Ok(status) => status,
            Err(_) => panic!("Reply::error: {status} is not an HTTP status code"),
        };
        Reply::new(Content::Error {
            status,
            error_type: error_type.to_owned(),
            message: message.to_owned(),
        })
    }

    /// Exactly these SSE body bytes, status 200, content-type `text/event-stream`: for
    /// malformed or unusual streams the other constructors cannot produce.
    pub fn raw_sse(body: impl Into<String>) -> Reply {
        Reply::new(Content::RawSse(body.into()))
    }

    /// A stream that never ends: `message_start`, then `ping` events for as long as the
    /// client reads. Each ping resets an idle timer, so only an overall deadline ends it.
    pub fn endless_pings() -> Reply {
        Reply::new(Content::Endless {
            opening: Vec::new(),
            repeated: sse::PING_EVENT.to_owned(),
        })
    }

    /// A stream that never ends: `message_start` and a text block, then `text_delta` events
    /// of `piece` for as long as the client reads. Only a cap on the response's size (or an
    /// overall deadline) ends it.
    pub fn endless_text(piece: &str) -> Reply {
        Reply::new(Content::Endless {
            opening: vec![sse::text_block_start(0)],
            repeated: sse::text_delta_event(0, piece),
        })
    }

    /// Ends the body cleanly without its last `bytes` bytes: `without_last_bytes(1)` leaves
    /// the final `message_stop` event without its closing blank line, `without_last_bytes(2)`
    /// ends the stream right after its `data:` text. The bytes kept are sent as usual.
    pub fn without_last_bytes(mut self, bytes: usize) -> Reply {
        self.ending = Ending::CompleteLess(bytes);
        self
    }

    /// Adds a response header (e.g. `retry-after`), replacing a default one of the same name.
    ///
    /// Panics if `name` or `value` is not valid in an HTTP header.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        let Ok(header_name) = HeaderName::from_bytes(name.as_bytes()) else {
            panic!("Reply::with_header: {name:?} is not a valid header name");
        };
        let Ok(header_value) = HeaderValue::from_str(value) else {
            panic!("Reply::with_header: {value:?} is not a valid value for header {name}");
        };
        self.headers.push((header_name, header_value));
        self
    }

    /// Replaces the stop reason (e.g. `max_tokens`). No effect on error and raw replies.
    pub fn with_stop_reason(mut self, reason: &str) -> Reply {
        if let Content::Message { stop_reason, .. } = &mut self.content {
            reason.clone_into(stop_reason);
        }
        self
    }

    /// Sets the reported token usage (default: 10 input, 5 output). No effect on error and
    /// raw replies.
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Reply {
        if let Content::Message { usage, .. } = &mut self.content {
            *usage = Usage {
                input_tokens,
                output_tokens,
                ..*usage
            };
        }
        self
    }

    /// Holds the response back until `requests` requests answered by held replies have
    /// arrived (this one among them), then sends it: proof without timing that that many
    /// requests were waiting at the same time. Two replies held until 2 are sent only if the
    /// client sent both requests before either was answered; otherwise the first waits for
    /// ever, and the test's own wait for the second request fails.
    pub fn held_until_waiting(mut self, requests: usize) -> Reply {
        self.hold_until = Some(requests);
        self
    }

    /// How many held requests this reply waits for, if it is held.
    pub(crate) fn hold_until(&self) -> Option<usize> {
        self.hold_until
    }

    /// Holds the response back until the test calls [`crate::ScriptedServer::release_held`]
    /// (each call releases one such reply, in arrival order): the client is then known to be
    /// waiting on this request for as long as the test looks at what it shows meanwhile.
    /// [`crate::ScriptedServer::wait_held`] waits until the request has arrived.
    pub fn held_until_released(mut self) -> Reply {
        self.held_for_release = true;
        self
    }

    /// Whether this reply waits for [`crate::ScriptedServer::release_held`].
    pub(crate) fn held_for_release(&self) -> bool {
        self.held_for_release
    }

    /// Waits this long before sending the response head.
    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = Some(delay);
        self
    }

    /// Delivers the body in HTTP chunks of exactly `bytes` bytes (the last may be shorter;
    /// 0 counts as 1), each flushed separately. Without it, each SSE event is one chunk.
    pub fn with_chunk_size(mut self, bytes: usize) -> Reply {
        self.chunking = Chunking::Bytes(bytes.max(1));
        self
    }

    /// Sends only the first `bytes` bytes of the body, then aborts the connection: the client
    /// sees an error mid-body, not a clean end. Replaces an earlier [`Reply::stall_after`].
    pub fn cut_after(mut self, bytes: usize) -> Reply {
        self.ending = Ending::CutAfter(bytes);
        self
    }

    /// Sends the first `bytes` bytes of the body, then keeps the connection open without
    /// sending more until the client goes away. Replaces an earlier [`Reply::cut_after`].
    pub fn stall_after(mut self, bytes: usize) -> Reply {
        self.ending = Ending::StallAfter(bytes);
        self
    }

    /// Reports `cache` as the input side of this reply's usage (the simulated prompt cache).
    pub(crate) fn with_cache_usage(mut self, cache: crate::cache::CacheUsage) -> Reply {
        if let Content::Message { usage, .. } = &mut self.content {
            usage.input_tokens = cache.input_tokens;
            usage.cache_creation_input_tokens = cache.cache_creation_input_tokens;
            usage.cache_read_input_tokens = cache.cache_read_input_tokens;
        }
        self
    }

    /// The exact SSE body bytes this reply streams (for benchmarks and decode tests). For error replies, the JSON body.
    ///
    /// The message id is `msg_scripted_1`, as when this is the first message a server sends;
    /// the server numbers its messages `msg_scripted_1`, `msg_scripted_2`, ... The whole
    /// body is returned even if the reply is cut or stalled.
    pub fn body_bytes(&self, model: &str) -> Vec<u8> {
        self.body_pieces(model, 1).concat()
    }

    /// Whether serving this reply uses up a message id.
    pub(crate) fn is_message(&self) -> bool {
        match self.content {
            Content::Message { .. } | Content::Endless { .. } => true,
            Content::Error { .. } | Content::RawSse(_) => false,
        }
    }

    /// Thinking streams as `delta.reasoning` (OpenRouter's name) rather than
    /// `delta.reasoning_content` on the Chat Completions dialect.
    pub fn with_reasoning_field(mut self, field: &'static str) -> Reply {
        self.reasoning_field = field;
        self
    }

    /// Everything needed to answer one request, with `message_number` in the message id, in
    /// the Chat Completions dialect when `chat`.
    pub(crate) fn render_in(&self, chat: bool, model: &str, message_number: u64) -> Rendered {
        let (status, content_type, known_length) = match &self.content {
            Content::Message { .. } | Content::RawSse(_) | Content::Endless { .. } => {
                (StatusCode::OK, "text/event-stream", false)
            }
            Content::Error { status, .. } => (*status, "application/json", true),
        };
        let repeated = match &self.content {
            Content::Endless { repeated, .. } => Some(Bytes::from(repeated.clone())),
            Content::Message { .. } | Content::Error { .. } | Content::RawSse(_) => None,
        };
        Rendered {
            status,
            content_type,
            headers: self.headers.clone(),
            delay: self.delay,
            pieces: if chat {
                self.chat_pieces(model, message_number)
            } else {
                self.body_pieces(model, message_number)
            },
            chunking: self.chunking,
            ending: self.ending,
            known_length,
            repeated,
        }
    }

    fn new(content: Content) -> Reply {
        Reply {
            content,
            headers: Vec::new(),
            delay: None,
            chunking: Chunking::Natural,
            ending: Ending::Complete,
            reasoning_field: "reasoning_content",
            hold_until: None,
            held_for_release: false,
        }
    }

    /// The body in the Chat Completions dialect: chunks, or the OpenAI error body.
    fn chat_pieces(&self, model: &str, message_number: u64) -> Vec<Bytes> {
        match &self.content {
            Content::Message {
                blocks,
                stop_reason,
                usage,
            } => openai::completion_events(&openai::ScriptedCompletion {
                id: &format!("chatcmpl-scripted-{message_number}"),
                model,
                blocks,
                stop_reason,
                usage: *usage,
                reasoning_field: self.reasoning_field,
            })
            .into_iter()
            .map(Bytes::from)
            .collect(),
            Content::Error {
                error_type,
                message,
                ..
            } => vec![Bytes::from(openai::error_body(error_type, message))],
            Content::RawSse(body) => vec![Bytes::from(body.clone())],
            // Servers of this dialect keep an idle stream open with SSE comments.
            Content::Endless { .. } => vec![Bytes::from_static(b": keep-alive\n\n")],
        }
    }

    fn body_pieces(&self, model: &str, message_number: u64) -> Vec<Bytes> {
        match &self.content {
            Content::Message {
                blocks,
                stop_reason,
                usage,
            } => sse::message_events(&ScriptedMessage {
                id: &format!("msg_scripted_{message_number}"),
                model,
                blocks,
                stop_reason,
                usage: *usage,
            })
            .into_iter()
            .map(Bytes::from)
            .collect(),
            Content::Error {
                error_type,
                message,
                ..
            } => vec![Bytes::from(error_body(error_type, message))],
            Content::RawSse(body) => vec![Bytes::from(body.clone())],
            Content::Endless { opening, .. } => {
                let start = sse::message_start_event(
                    &format!("msg_scripted_{message_number}"),
                    model,
                    Usage::default(),
                );
                std::iter::once(start)
                    .chain(opening.iter().cloned())
                    .map(Bytes::from)
                    .collect()
            }
        }
    }
}

/// The JSON body of an Anthropic API error.
fn error_body(error_type: &str, message: &str) -> String {
    #[derive(Serialize)]
    struct ErrorBody<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        error: ErrorDetail<'a>,
    }
    #[derive(Serialize)]
    struct ErrorDetail<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        message: &'a str,
    }
    sse::to_json(&ErrorBody {
        kind: "error",
        error: ErrorDetail {
            kind: error_type,
            message,
        },
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn stop_reason(reply: &Reply) -> &str {
        match &reply.content {
            Content::Message { stop_reason, .. } => stop_reason,
            Content::Error { .. } | Content::RawSse(_) | Content::Endless { .. } => {
                panic!("not a message: {reply:?}")
            }
        }
    }

    #[test]
    fn stop_reason_follows_the_blocks_unless_overridden() {
        assert_eq!(stop_reason(&Reply::text("hi")), "end_turn");
        assert_eq!(
            stop_reason(&Reply::tool_use("t", "bash", json!({}))),
            "tool_use"
        );
        let raw = Reply::blocks(vec![
            ScriptedBlock::Text("calling".into()),
            ScriptedBlock::RawToolUse {
                id: "t".into(),
                name: "bash".into(),
                input_json: "{not json".into(),
            },
        ]);
        assert_eq!(stop_reason(&raw), "tool_use");
        assert_eq!(
            stop_reason(&Reply::text("hi").with_stop_reason("max_tokens")),
            "max_tokens"
        );
    }

    #[test]
    fn error_body_is_the_anthropic_error_shape() {
        let body = Reply::error(529, "overloaded_error", "Overloaded \"now\"").body_bytes("m");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded \"now\""}}"#
        );
    }

    #[test]
    fn usage_appears_in_message_start_and_message_delta() {
        let body =
            String::from_utf8(Reply::text("x").with_usage(1234, 56).body_bytes("m")).unwrap();
        assert!(
            body.contains(r#""usage":{"input_tokens":1234,"output_tokens":1,"#),
            "{body}"
        );
        assert!(body.contains(r#""usage":{"output_tokens":56}}"#), "{body}");
    }

    #[test]
    #[should_panic(expected = "not a valid header name")]
    fn invalid_header_name_panics_where_the_reply_is_built() {
        let _ = Reply::text("x").with_header("bad name", "1");
    }
}
