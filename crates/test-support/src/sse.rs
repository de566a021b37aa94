//! Rendering a scripted message as the events of the Anthropic streaming Messages API.
//!
//! The field order, the `ping` event and the way content arrives in several deltas follow what
//! the real API sends, so a client decoding these bytes is decoding the real thing.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::reply::{ScriptedBlock, Usage};

/// Longest delta piece, in chars: small enough that every non-trivial block arrives in
/// several deltas, as it does from the real API.
const PIECE_CHARS: usize = 20;

/// The `ping` event, spelled exactly as the real API spells it (note the space).
pub(crate) const PING_EVENT: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// What one streamed message is made of.
#[derive(Debug)]
pub(crate) struct ScriptedMessage<'a> {
    pub(crate) id: &'a str,
    pub(crate) model: &'a str,
    pub(crate) blocks: &'a [ScriptedBlock],
    pub(crate) stop_reason: &'a str,
    pub(crate) usage: Usage,
}

/// The message as SSE events, each a complete `event: ..\ndata: ..\n\n` string, in order.
pub(crate) fn message_events(message: &ScriptedMessage<'_>) -> Vec<String> {
    let mut events = vec![
        message_start_event(message.id, message.model, message.usage),
        PING_EVENT.to_owned(),
    ];
    let mut index = 0;
    for block in message.blocks {
        if let ScriptedBlock::WebSearch { id, query, results } = block {
            web_search_events(index, id, query, results, &mut events);
            index += 2;
            continue;
        }
        block_events(index, block, &mut events);
        index += 1;
    }
    events.push(event(&StreamEvent::MessageDelta {
        delta: MessageDeltaBody {
            stop_reason: message.stop_reason,
            stop_sequence: None,
        },
        usage: DeltaUsage {
            output_tokens: message.usage.output_tokens,
        },
    }));
    events.push(event(&StreamEvent::MessageStop));
    events
}

/// The `message_start` event of message `id`.
pub(crate) fn message_start_event(id: &str, model: &str, usage: Usage) -> String {
    event(&StreamEvent::MessageStart {
        message: MessageStart {
            id,
            kind: "message",
            role: "assistant",
            model,
            content: [],
            stop_reason: None,
            stop_sequence: None,
            usage: StartUsage {
                input_tokens: usage.input_tokens,
                output_tokens: 1,
                cache_creation_input_tokens: usage.cache_creation_input_tokens,
                cache_read_input_tokens: usage.cache_read_input_tokens,
            },
        },
    })
}

/// The `content_block_start` of an empty text block at `index`.
pub(crate) fn text_block_start(index: usize) -> String {
    event(&StreamEvent::ContentBlockStart {
        index,
        content_block: BlockStart::Text { text: "" },
    })
}

/// One `text_delta` of the block at `index`.
pub(crate) fn text_delta_event(index: usize, text: &str) -> String {
    event(&StreamEvent::ContentBlockDelta {
        index,
        delta: Delta::Text { text },
    })
}

/// A server-side search: its `server_tool_use` block at `index` (the query streamed as
/// input JSON), then its `web_search_tool_result` block, whole in its start, at `index + 1`.
fn web_search_events(
    index: usize,
    id: &str,
    query: &str,
    results: &[(String, String)],
    events: &mut Vec<String>,
) {
    let raw = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    events.push(raw(
        "content_block_start",
        serde_json::json!({"type": "content_block_start", "index": index, "content_block":
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {}}}),
    ));
    events.push(raw(
        "content_block_delta",
        serde_json::json!({"type": "content_block_delta", "index": index, "delta":
            {"type": "input_json_delta",
             "partial_json": serde_json::json!({"query": query}).to_string()}}),
    ));
    events.push(raw(
        "content_block_stop",
        serde_json::json!({"type": "content_block_stop", "index": index}),
    ));
    let content: Vec<serde_json::Value> = results
        .iter()
        .map(|(title, url)| {
            serde_json::json!({"type": "web_search_result", "title": title, "url": url,
                               "encrypted_content": "scripted", "page_age": null})
        })
        .collect();
    events.push(raw(
        "content_block_start",
        serde_json::json!({"type": "content_block_start", "index": index + 1, "content_block":
            {"type": "web_search_tool_result", "tool_use_id": id, "content": content}}),
    ));
    events.push(raw(
        "content_block_stop",
        serde_json::json!({"type": "content_block_stop", "index": index + 1}),
    ));
}

fn block_events(index: usize, block: &ScriptedBlock, events: &mut Vec<String>) {
    let delta = |delta: Delta<'_>| event(&StreamEvent::ContentBlockDelta { index, delta });
    match block {
        ScriptedBlock::Text(text) => {
            events.push(event(&StreamEvent::ContentBlockStart {
                index,
                content_block: BlockStart::Text { text: "" },
            }));
            events.extend(split_chars(text).map(|text| delta(Delta::Text { text })));
        }
        ScriptedBlock::Thinking {
            thinking,
            signature,
        } => {
            events.push(event(&StreamEvent::ContentBlockStart {
                index,
                content_block: BlockStart::Thinking { thinking: "" },
            }));
            events
                .extend(split_chars(thinking).map(|thinking| delta(Delta::Thinking { thinking })));
            events.push(delta(Delta::Signature { signature }));
        }
        ScriptedBlock::ToolUse { id, name, input } => {
            tool_events(index, id, name, &input.to_string(), events);
        }
        ScriptedBlock::RawToolUse {
            id,
            name,
            input_json,
        } => tool_events(index, id, name, input_json, events),
        // Sent by `web_search_events`, as two blocks.
        ScriptedBlock::WebSearch { .. } => return,
    }
    events.push(event(&StreamEvent::ContentBlockStop { index }));
}

fn tool_events(index: usize, id: &str, name: &str, input_json: &str, events: &mut Vec<String>) {
    events.push(event(&StreamEvent::ContentBlockStart {
        index,
        content_block: BlockStart::ToolUse {
            id,
            name,
            input: Map::new(),
        },
    }));
    // The real API opens a tool's input with an empty piece; clients must cope with it.
    let pieces = std::iter::once("").chain(split_chars(input_json));
    events.extend(pieces.map(|partial_json| {
        event(&StreamEvent::ContentBlockDelta {
            index,
            delta: Delta::InputJson { partial_json },
        })
    }));
}

/// Splits `text` into pieces of at most [`PIECE_CHARS`] chars, always on char boundaries.
/// Empty text yields no pieces.
pub(crate) fn split_chars(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .nth(PIECE_CHARS)
            .map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

fn event(event: &StreamEvent<'_>) -> String {
    let name = match event {
        StreamEvent::MessageStart { .. } => "message_start",
        StreamEvent::ContentBlockStart { .. } => "content_block_start",
        StreamEvent::ContentBlockDelta { .. } => "content_block_delta",
        StreamEvent::ContentBlockStop { .. } => "content_block_stop",
        StreamEvent::MessageDelta { .. } => "message_delta",
        StreamEvent::MessageStop => "message_stop",
    };
    format!("event: {name}\ndata: {}\n\n", to_json(event))
}

/// Serializes one of this module's event types.
pub(crate) fn to_json(value: &impl Serialize) -> String {
    match serde_json::to_string(value) {
        Ok(json) => json,
        // Only plain structs with string keys are serialized here, which cannot fail.
        Err(err) => panic!("scripted server: cannot serialize an SSE event: {err}"),
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent<'a> {
    MessageStart {
        message: MessageStart<'a>,
    },
    ContentBlockStart {
        index: usize,
        content_block: BlockStart<'a>,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDeltaBody<'a>,
        usage: DeltaUsage,
    },
    MessageStop,
}

#[derive(Serialize)]
struct MessageStart<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    role: &'a str,
    model: &'a str,
    content: [Value; 0],
    stop_reason: Option<&'a str>,
    stop_sequence: Option<&'a str>,
    usage: StartUsage,
}

#[derive(Serialize)]
struct StartUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockStart<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Map<String, Value>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
}

#[derive(Serialize)]
struct MessageDeltaBody<'a> {
    stop_reason: &'a str,
    stop_sequence: Option<&'a str>,
}

#[derive(Serialize)]
struct DeltaUsage {
    output_tokens: u64,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn split_chars_keeps_multibyte_chars_whole() {
        let text = "é".repeat(25) + "🦀";
        let pieces: Vec<&str> = split_chars(&text).collect();
        assert_eq!(pieces, vec!["é".repeat(20), "é".repeat(5) + "🦀"]);
    }

    #[test]
    fn split_chars_of_empty_text_is_empty() {
        assert_eq!(split_chars("").count(), 0);
    }

    #[test]
    fn tool_input_arrives_in_pieces_that_join_to_the_input() {
        let input = json!({"command": "ls -la /tmp && echo done", "timeout": 5});
        let blocks = [ScriptedBlock::ToolUse {
            id: "toolu_1".into(),
            name: "bash".into(),
            input: input.clone(),
        }];
        let events = message_events(&ScriptedMessage {
            id: "msg_scripted_1",
            model: "m",
            blocks: &blocks,
            stop_reason: "tool_use",
            usage: Usage::default(),
        });
        let pieces: Vec<String> = events
            .iter()
            .filter_map(|event| event.strip_prefix("event: content_block_delta\ndata: "))
            .map(|data| {
                let data: Value = serde_json::from_str(data.trim_end()).unwrap();
                data["delta"]["partial_json"].as_str().unwrap().to_owned()
            })
            .collect();
        assert!(pieces.len() > 2, "{pieces:?}");
        assert_eq!(pieces[0], "");
        let joined: Value = serde_json::from_str(&pieces.concat()).unwrap();
        assert_eq!(joined, input);
    }

    #[test]
    fn thinking_block_ends_with_one_signature_delta() {
        let blocks = [ScriptedBlock::Thinking {
            thinking: "Let me think about this carefully.".into(),
            signature: "sig".into(),
        }];
        let events = message_events(&ScriptedMessage {
            id: "msg_scripted_1",
            model: "m",
            blocks: &blocks,
            stop_reason: "end_turn",
            usage: Usage::default(),
        });
        let block: Vec<&str> = events[2..6].iter().map(|e| e.as_str()).collect();
        assert_eq!(
            block,
            vec![
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me think about t\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"his carefully.\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n",
            ]
        );
        assert_eq!(
            events[6],
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
        );
    }
}
