use cairn_protocol::{ContentBlock, StopReason, Usage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::MalformedToolInput;

/// One SSE event as the API writes it: `event:` line, `data:` line, blank line.
fn frame(data: &Value) -> String {
    let name = data["type"].as_str().unwrap_or("message");
    format!("event: {name}\ndata: {}\n\n", api_json(data))
}

/// `value` as compact JSON with `type` first in every object, the way the API writes it.
fn api_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields = map
                .get_key_value("type")
                .into_iter()
                .chain(map.iter().filter(|(key, _)| *key != "type"))
                .map(|(key, value)| format!("{}:{}", Value::from(key.as_str()), api_json(value)))
                .collect::<Vec<_>>();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items = items.iter().map(api_json).collect::<Vec<_>>();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

fn body(events: &[Value]) -> String {
    events.iter().map(frame).collect()
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_01", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5-20250929", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 7}
    }})
}

fn text_start(index: usize) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "text", "text": ""}})
}

fn text_delta(index: usize, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "text_delta", "text": text}})
}

fn tool_start(index: usize, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

fn json_delta(index: usize, partial: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": partial}})
}

fn stop(index: usize) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_delta(stop_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
           "usage": {"output_tokens": output_tokens}})
}

fn message_stop() -> Value {
    json!({"type": "message_stop"})
}

/// A short text answer: "Hello, world!" in two deltas.
fn hello_events() -> Vec<Value> {
    vec![
        message_start(),
        text_start(0),
        json!({"type": "ping"}),
        text_delta(0, "Hello, "),
        text_delta(0, "world!"),
        stop(0),
        message_delta("end_turn", 12),
        message_stop(),
    ]
}

fn hello_response() -> ModelResponse {
    ModelResponse {
        id: "msg_01".to_string(),
        model: "claude-sonnet-4-5-20250929".to_string(),
        content: vec![ContentBlock::text("Hello, world!")],
        stop_reason: Some(StopReason::EndTurn),
        usage: Usage {
            input_tokens: 25,
            output_tokens: 12,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 7,
        },
        malformed_tool_inputs: vec![],
    }
}

/// Decodes `body` delivered as `chunks`, collecting the events reported on the way.
fn decode_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    let mut events = Vec::new();
    let result = decode_stream_with(chunks, &mut |event| events.push(event));
    (result, events)
}

fn decode(body: &str) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    decode_chunks([body.as_bytes()])
}

fn decode_ok(body: &str) -> (ModelResponse, Vec<ModelEvent>) {
    let (result, events) = decode(body);
    match result {
        Ok(response) => (response, events),
        Err(error) => panic!("decoding failed: {error}"),
    }
}

// Framing.

#[test]
fn several_events_in_one_chunk() {
    let (response, events) = decode_ok(&body(&hello_events()));
    assert_eq!(response, hello_response());
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("Hello, ".to_string()),
            ModelEvent::TextDelta("world!".to_string()),
        ]
    );
}

#[test]
fn events_split_across_chunks_at_every_position() {
    let text = body(&hello_events());
    let whole = decode(&text);
    for split in 1..text.len() {
        let (first, second) = text.as_bytes().split_at(split);
        let split_result = decode_chunks([first, second]);
        assert_eq!(
            format!("{split_result:?}"),
            format!("{whole:?}"),
            "split at {split}"
        );
    }
}

#[test]
fn one_byte_chunks_decode_like_one_chunk() {
    let text = body(&hello_events());
    let (result, events) = decode_chunks(text.as_bytes().chunks(1));
    assert_eq!(result.ok(), Some(hello_response()));
    assert_eq!(events.len(), 2);
}

#[test]
fn multi_byte_characters_split_across_chunks() {
    let events = vec![
        message_start(),
        text_start(0),
        text_delta(0, "héllo wörld — ✓ 🦀"),
        stop(0),
        message_delta("end_turn", 3),
        message_stop(),
    ];
    let text = body(&events);
    for size in [1, 2, 3, 5] {
        let (result, _) = decode_chunks(text.as_bytes().chunks(size));
        let content = result.map(|r| r.content).ok();
        assert_eq!(
            content,
            Some(vec![ContentBlock::text("héllo wörld — ✓ 🦀")]),
            "chunk size {size}"
        );
    }
}

#[test]
fn large_chunks_with_multi_byte_characters_decode() {
    // One data line of several KiB of multi-byte characters, in one chunk.
    let text = "ünïcødé ✓ 🦀 ".repeat(300);
    let events = vec![
        message_start(),
        text_start(0),
        text_delta(0, &text),
        stop(0),
        message_delta("end_turn", 3),
        message_stop(),
    ];
    let (response, _) = decode_ok(&body(&events));
    assert_eq!(response.content, vec![ContentBlock::text(text)]);
}

#[test]
fn crlf_line_endings() {
    let text = body(&hello_events()).replace('\n', "\r\n");
    let (response, _) = decode_ok(&text);
    assert_eq!(response, hello_response());
    // A CR and its LF in different chunks.
    let (result, _) = decode_chunks(text.as_bytes().chunks(1));
    assert_eq!(result.ok(), Some(hello_response()));
}

#[test]
fn cr_line_endings() {
    let text = body(&hello_events()).replace('\n', "\r");
    let (response, _) = decode_ok(&text);
    assert_eq!(response, hello_response());
}

#[test]
fn invalid_utf8_is_an_invalid_stream() {
    let mut text = body(&hello_events()[..2]).into_bytes();
    let offset = text.len() + "data: ".len();
    text.extend_from_slice(b"data: \xff\n\n");
    let (result, _) = decode_chunks(text.chunks(5));
    assert_eq!(
        result.map_err(|error| error.to_string()),
        Err(format!(
            "the API sent an event cairn could not read: the event stream is not UTF-8: byte \
             {offset} does not begin a valid character"
        ))
    );
}

#[test]
fn message_stop_without_its_blank_line_ends_the_message() {
    // The stream ends inside the `message_stop` event; it is whole, so it is read.
    let text = body(&hello_events());
    for ending in [text.trim_end_matches('\n'), &text[..text.len() - 1]] {
        let (response, events) = decode_ok(ending);
        assert_eq!(response, hello_response());
        assert_eq!(events.len(), 2);
    }
}

#[test]
fn a_final_event_cut_inside_its_data_is_a_cut_stream() {
    // Without a stop reason before it, a `message_delta` cut mid-JSON ends nothing.
    let events = hello_events();
    let text = body(&events[..events.len() - 1]);
    let cut = text.trim_end_matches('\n');
    let (result, _) = decode(&cut[..cut.len() - 10]);
    assert!(
        matches!(result, Err(ModelError::StreamEndedEarly)),
        "{result:?}"
    );
}

#[test]
fn comments_are_ignored() {
    let text = format!(
        ": connected\n\n{}: keep-alive\n{}",
        frame(&hello_events()[0]),
        body(&hello_events()[1..])
    );
    let (response, _) = decode_ok(&text);
    assert_eq!(response, hello_response());
}

#[test]
fn multi_line_data_is_joined() {
    // The data of one event spread over three `data:` lines; the joining newlines are JSON
    // whitespace.
    let delta = "event: content_block_delta\ndata: {\"type\": \"content_block_delta\",\ndata: \
                 \"index\": 0,\ndata: \"delta\": {\"type\": \"text_delta\", \"text\": \"Hi\"}}\n\n";
    let events = hello_events();
    let text = format!(
        "{}{}{}{}",
        body(&events[..2]),
        delta,
        body(&events[5..]),
        ""
    );
    let (response, deltas) = decode_ok(&text);
    assert_eq!(response.content, vec![ContentBlock::text("Hi")]);
    assert_eq!(deltas, vec![ModelEvent::TextDelta("Hi".to_string())]);
}

#[test]
fn data_without_an_event_line_is_read() {
    let text: String = hello_events()
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    let (response, _) = decode_ok(&text);
    assert_eq!(response, hello_response());
}

// Decoding.

#[test]
fn every_event_kind_decodes() {
    let cases = [
        (
            message_start(),
            StreamEvent::MessageStart {
                message: MessageStart {
                    id: "msg_01".to_string(),
                    model: "claude-sonnet-4-5-20250929".to_string(),
                    usage: Usage {
                        input_tokens: 25,
                        output_tokens: 1,
                        cache_creation_input_tokens: 0,
                        cache_read_input_tokens: 7,
                    },
                },
            },
        ),
        (
            text_start(0),
            StreamEvent::ContentBlockStart {
                index: 0,
                content_block: BlockStart::Text {
                    text: String::new(),
                },
            },
        ),
        (
            json!({"type": "content_block_start", "index": 1, "content_block":
                   {"type": "thinking", "thinking": "", "signature": ""}}),
            StreamEvent::ContentBlockStart {
                index: 1,
                content_block: BlockStart::Thinking {
                    thinking: String::new(),
                    signature: String::new(),
                },
            },
        ),
        (
            json!({"type": "content_block_start", "index": 2, "content_block":
                   {"type": "redacted_thinking", "data": "EuYB"}}),
            StreamEvent::ContentBlockStart {
                index: 2,
                content_block: BlockStart::RedactedThinking {
                    data: "EuYB".to_string(),
                },
            },
        ),
        (
            tool_start(3, "toolu_1", "Read"),
            StreamEvent::ContentBlockStart {
                index: 3,
                content_block: BlockStart::ToolUse {
                    id: "toolu_1".to_string(),
                    name: "Read".to_string(),
                    input: json!({}),
                },
            },
        ),
        (
            text_delta(0, "Hi"),
            StreamEvent::ContentBlockDelta {
                index: 0,
                delta: BlockDelta::TextDelta {
                    text: "Hi".to_string(),
                },
            },
        ),
        (
            json_delta(3, "{\"pa"),
            StreamEvent::ContentBlockDelta {
                index: 3,
                delta: BlockDelta::InputJsonDelta {
                    partial_json: "{\"pa".to_string(),
                },
            },
        ),
        (
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
            StreamEvent::ContentBlockDelta {
                index: 1,
                delta: BlockDelta::ThinkingDelta {
                    thinking: "hmm".to_string(),
                },
            },
        ),
        (
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "signature_delta", "signature": "sig"}}),
            StreamEvent::ContentBlockDelta {
                index: 1,
                delta: BlockDelta::SignatureDelta {
                    signature: "sig".to_string(),
                },
            },
        ),
        (stop(0), StreamEvent::ContentBlockStop { index: 0 }),
        (
            message_delta("tool_use", 9),
            StreamEvent::MessageDelta {
                delta: MessageDelta {
                    stop_reason: Some(StopReason::ToolUse),
                },
                usage: Usage {
                    output_tokens: 9,
                    ..Usage::default()
                },
            },
        ),
        (message_stop(), StreamEvent::MessageStop),
        (json!({"type": "ping"}), StreamEvent::Ping),
        (
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            StreamEvent::Error {
                error: StreamErrorBody {
                    error_type: "overloaded_error".to_string(),
                    message: "Overloaded".to_string(),
                },
            },
        ),
        (
            json!({"type": "message_sparkle", "glitter": true}),
            StreamEvent::Unknown,
        ),
        (
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "citations_delta", "citation": {}}}),
            StreamEvent::ContentBlockDelta {
                index: 0,
                delta: BlockDelta::Unknown,
            },
        ),
        (
            json!({"type": "content_block_start", "index": 4,
                   "content_block": {"type": "server_tool_use", "id": "srvtoolu_1"}}),
            StreamEvent::ContentBlockStart {
                index: 4,
                content_block: BlockStart::Unknown,
            },
        ),
    ];
    for (data, expected) in cases {
        assert_eq!(
            parse_event(&data.to_string()).ok(),
            Some(expected),
            "{data}"
        );
    }
}

#[test]
fn thinking_text_and_tool_use_assemble_in_index_order() {
    let events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block":
               {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "thinking_delta", "thinking": "look."}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "signature_delta", "signature": "EqQBCgIYAh"}}),
        stop(0),
        json!({"type": "content_block_start", "index": 1, "content_block":
               {"type": "redacted_thinking", "data": "EmwKAhgB"}}),
        stop(1),
        text_start(2),
        text_delta(2, "Reading it."),
        stop(2),
        tool_start(3, "toolu_01", "Read"),
        json_delta(3, ""),
        json_delta(3, "{\"file_path\": \"/tmp/"),
        json_delta(3, "a.txt\", \"limit\": 5}"),
        stop(3),
        message_delta("tool_use", 40),
        message_stop(),
    ];
    let (response, reported) = decode_ok(&body(&events));
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Thinking {
                thinking: "Let me look.".to_string(),
                signature: "EqQBCgIYAh".to_string(),
            },
            ContentBlock::RedactedThinking {
                data: "EmwKAhgB".to_string()
            },
            ContentBlock::text("Reading it."),
            ContentBlock::ToolUse {
                id: "toolu_01".to_string(),
                name: "Read".to_string(),
                input: json!({"file_path": "/tmp/a.txt", "limit": 5}),
            },
        ]
    );
    assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(response.usage.output_tokens, 40);
    assert_eq!(
        reported,
        vec![
            ModelEvent::ThinkingDelta("Let me ".to_string()),
            ModelEvent::ThinkingDelta("look.".to_string()),
            ModelEvent::TextDelta("Reading it.".to_string()),
            ModelEvent::ToolUseStarted {
                id: "toolu_01".to_string(),
                name: "Read".to_string()
            },
            ModelEvent::ToolUseComplete {
                id: "toolu_01".to_string(),
                name: "Read".to_string(),
                input: json!({"file_path": "/tmp/a.txt", "limit": 5}),
            },
        ]
    );
}

#[test]
fn blocks_out_of_order_are_sorted_by_index() {
    let events = vec![
        message_start(),
        text_start(1),
        text_delta(1, "second"),
        text_start(0),
        text_delta(0, "first"),
        stop(0),
        stop(1),
        message_delta("end_turn", 2),
        message_stop(),
    ];
    let (response, _) = decode_ok(&body(&events));
    assert_eq!(
        response.content,
        vec![ContentBlock::text("first"), ContentBlock::text("second")]
    );
}

#[test]
fn unknown_events_deltas_and_blocks_are_skipped() {
    let events = vec![
        message_start(),
        json!({"type": "message_sparkle", "glitter": true}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": "{\"query\""}}),
        stop(0),
        text_start(1),
        json!({"type": "content_block_delta", "index": 1,
               "delta": {"type": "citations_delta", "citation": {"type": "web"}}}),
        text_delta(1, "Done."),
        stop(1),
        message_delta("end_turn", 5),
        message_stop(),
    ];
    let mut text = body(&events);
    // An event name cairn does not know, with data that is not even JSON.
    text.insert_str(0, "event: sparkle\ndata: ✨\n\n");
    let (response, _) = decode_ok(&text);
    assert_eq!(response.content, vec![ContentBlock::text("Done.")]);
    assert_eq!(response.malformed_tool_inputs, vec![]);
}

#[test]
fn empty_tool_input_is_an_empty_object() {
    let events = vec![
        message_start(),
        tool_start(0, "toolu_1", "TodoRead"),
        stop(0),
        message_delta("tool_use", 5),
        message_stop(),
    ];
    let (response, reported) = decode_ok(&body(&events));
    assert_eq!(
        response.content,
        vec![ContentBlock::ToolUse {
            id: "toolu_1".to_string(),
            name: "TodoRead".to_string(),
            input: json!({}),
        }]
    );
    assert_eq!(
        reported.last(),
        Some(&ModelEvent::ToolUseComplete {
            id: "toolu_1".to_string(),
            name: "TodoRead".to_string(),
            input: json!({}),
        })
    );
}

#[test]
fn malformed_tool_json_keeps_an_empty_input_and_is_reported() {
    let events = vec![
        message_start(),
        tool_start(0, "toolu_1", "Bash"),
        json_delta(0, "{\"command\": \"ls"),
        stop(0),
        tool_start(1, "toolu_2", "Edit"),
        json_delta(1, "[1, 2]"),
        stop(1),
        message_delta("tool_use", 5),
        message_stop(),
    ];
    let (response, _) = decode_ok(&body(&events));
    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolUse {
                id: "toolu_1".to_string(),
                name: "Bash".to_string(),
                input: json!({}),
            },
            ContentBlock::ToolUse {
                id: "toolu_2".to_string(),
                name: "Edit".to_string(),
                input: json!({}),
            },
        ]
    );
    assert_eq!(
        response.malformed_tool_inputs,
        vec![
            MalformedToolInput {
                id: "toolu_1".to_string(),
                name: "Bash".to_string(),
                error: "the input for tool `Bash` is not valid JSON (EOF while parsing a string \
                        at line 1 column 15); received: {\"command\": \"ls"
                    .to_string(),
            },
            MalformedToolInput {
                id: "toolu_2".to_string(),
                name: "Edit".to_string(),
                error: "the input for tool `Edit` must be a JSON object, not an array; \
                        received: [1, 2]"
                    .to_string(),
            },
        ]
    );
}

#[test]
fn malformed_tool_input_quotes_are_capped() {
    let long = format!("{{\"content\": \"{}", "x".repeat(10_000));
    let events = vec![
        message_start(),
        tool_start(0, "toolu_1", "Write"),
        json_delta(0, &long),
        stop(0),
        message_delta("tool_use", 5),
        message_stop(),
    ];
    let (response, _) = decode_ok(&body(&events));
    let error = &response.malformed_tool_inputs[0].error;
    assert!(error.len() < 400, "{error}");
    assert!(error.ends_with('…'), "{error}");
}

#[test]
fn a_tool_call_never_closed_is_completed_at_message_stop() {
    let events = vec![
        message_start(),
        tool_start(0, "toolu_1", "Glob"),
        json_delta(0, "{\"pattern\": \"*.rs\"}"),
        message_delta("tool_use", 5),
        message_stop(),
    ];
    let (response, reported) = decode_ok(&body(&events));
    let input = json!({"pattern": "*.rs"});
    assert_eq!(
        response.content,
        vec![ContentBlock::ToolUse {
            id: "toolu_1".to_string(),
            name: "Glob".to_string(),
            input: input.clone(),
        }]
    );
    assert_eq!(
        reported.last(),
        Some(&ModelEvent::ToolUseComplete {
            id: "toolu_1".to_string(),
            name: "Glob".to_string(),
            input,
        })
    );
}

#[test]
fn a_stop_reason_then_the_end_of_the_stream_ends_the_message() {
    let events = hello_events();
    let (response, reported) = decode_ok(&body(&events[..events.len() - 1]));
    assert_eq!(response, hello_response());
    assert_eq!(reported.len(), 2);
}

#[test]
fn a_stream_without_a_stop_reason_ended_early() {
    let events = hello_events();
    let (result, events) = decode(&body(&events[..events.len() - 2]));
    assert!(
        matches!(result, Err(ModelError::StreamEndedEarly)),
        "{result:?}"
    );
    assert_eq!(events.len(), 2);
    let (result, _) = decode("");
    assert!(
        matches!(result, Err(ModelError::StreamEndedEarly)),
        "{result:?}"
    );
}

#[test]
fn events_after_message_stop_are_ignored() {
    let mut events = hello_events();
    events.push(text_delta(0, " again"));
    let (response, reported) = decode_ok(&body(&events));
    assert_eq!(response, hello_response());
    assert_eq!(reported.len(), 2);
}

#[test]
fn an_overloaded_error_event_is_retryable() {
    let events = vec![
        message_start(),
        text_start(0),
        text_delta(0, "Hel"),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let (result, _) = decode(&body(&events));
    let error = result.err();
    assert_eq!(
        error.as_ref().map(|e| (e.to_string(), e.is_retryable())),
        Some((
            "the API reported an error mid-stream (overloaded_error): Overloaded".to_string(),
            true
        ))
    );
}

#[test]
fn other_error_events_are_fatal_with_the_api_message() {
    let events = vec![
        message_start(),
        json!({"type": "error", "error": {"type": "invalid_request_error",
                                          "message": "prompt is too long"}}),
    ];
    let (result, _) = decode(&body(&events));
    let error = result.err();
    assert_eq!(
        error.as_ref().map(|e| (e.to_string(), e.is_retryable())),
        Some((
            "the API reported an error mid-stream (invalid_request_error): prompt is too long"
                .to_string(),
            false
        ))
    );
}

#[test]
fn a_known_event_with_bad_data_is_an_error() {
    let text = format!(
        "{}event: content_block_delta\ndata: {{\"type\": \"content_block_delta\"\n\n",
        frame(&message_start())
    );
    let (result, _) = decode(&text);
    assert!(
        matches!(&result, Err(ModelError::InvalidStream(message)) if message.contains("content_block_delta")),
        "{result:?}"
    );
}

#[test]
fn the_delta_fast_path_agrees_with_the_derived_decoder() {
    let deltas = [
        text_delta(0, "plain"),
        text_delta(3, "esc\"aped\n\\ and ünïcode 🦀"),
        json_delta(1, "{\"path\": \"/tmp/x\"}"),
        json!({"type": "content_block_delta", "index": 2,
               "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        json!({"type": "content_block_delta", "index": 2,
               "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "citations_delta", "citation": {"type": "char_location"}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"text": "type comes last", "type": "text_delta"}}),
    ];
    let mut fast = 0;
    for delta in deltas {
        let data = api_json(&delta);
        let derived = serde_json::from_str::<StreamEvent>(&data).map_err(|e| e.to_string());
        let decoded = parse_event(&data).map_err(|e| e.to_string());
        assert_eq!(decoded, derived, "{data}");
        if let Some(event) = parse_content_block_delta(&data) {
            assert_eq!(Ok(event), derived, "{data}");
            fast += 1;
        }
    }
    assert_eq!(fast, 6, "the fast path should take the ordinary deltas");
}

// The end of a stream.

/// Every kind of stream the tests decode, whole: the hand-written ones above and each kind of
/// reply the scripted server sends.
fn recorded_streams() -> Vec<(String, String)> {
    use cairn_test_support::{Reply, ScriptedBlock};

    let mut streams = vec![
        ("hello".to_string(), body(&hello_events())),
        (
            "tool call never closed".to_string(),
            body(&[
                message_start(),
                tool_start(0, "toolu_1", "Glob"),
                json_delta(0, "{\"pattern\": \"*.rs\"}"),
                message_delta("tool_use", 5),
                message_stop(),
            ]),
        ),
        (
            "empty and malformed tool inputs".to_string(),
            body(&[
                message_start(),
                tool_start(0, "toolu_1", "TodoRead"),
                stop(0),
                tool_start(1, "toolu_2", "Bash"),
                json_delta(1, "{\"command\": \"ls"),
                stop(1),
                message_delta("tool_use", 5),
                message_stop(),
            ]),
        ),
        (
            "unknown events".to_string(),
            format!(
                "event: sparkle\ndata: ✨\n\n: a comment\n{}",
                body(&[
                    message_start(),
                    json!({"type": "message_sparkle", "glitter": true}),
                    text_start(0),
                    text_delta(0, "Done."),
                    stop(0),
                    message_delta("end_turn", 5),
                    message_stop(),
                ])
            ),
        ),
    ];
    let replies = [
        ("scripted text", Reply::text("Hello from the script")),
        (
            "scripted multi-byte text",
            Reply::text("héllo wörld — ✓ 🦀 ".repeat(5)),
        ),
        (
            "scripted tool call",
            Reply::tool_use("toolu_1", "Bash", json!({"command": "ls -la /tmp"})),
        ),
        (
            "scripted thinking, text and tool call",
            Reply::blocks(vec![
                ScriptedBlock::Thinking {
                    thinking: "Let me look at the file first.".to_string(),
                    signature: "EqQBCgIYAh".to_string(),
                },
                ScriptedBlock::Text("Reading it.".to_string()),
                ScriptedBlock::ToolUse {
                    id: "toolu_2".to_string(),
                    name: "Read".to_string(),
                    input: json!({"file_path": "/tmp/a.txt"}),
                },
            ]),
        ),
        (
            "scripted malformed tool input",
            Reply::blocks(vec![ScriptedBlock::RawToolUse {
                id: "toolu_3".to_string(),
                name: "Edit".to_string(),
                input_json: "{not json".to_string(),
            }]),
        ),
        (
            "scripted max_tokens",
            Reply::text("cut short").with_stop_reason("max_tokens"),
        ),
    ];
    for (name, reply) in replies {
        let bytes = reply.body_bytes("claude-sonnet-4-5");
        let text = String::from_utf8(bytes).unwrap();
        streams.push((name.to_string(), text));
    }
    streams
}

/// Decodes `text` in chunks of `size` bytes.
fn decode_in_chunks(
    text: &str,
    size: usize,
) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    decode_chunks(text.as_bytes().chunks(size))
}

#[test]
fn every_stream_ends_normally_without_its_last_blank_line_or_message_stop() {
    for (name, whole) in recorded_streams() {
        let (expected, expected_events) = decode_ok(&whole);
        let stop_at = whole.rfind("event: message_stop").unwrap();
        let without_stop = &whole[..stop_at];
        let endings = [
            ("whole", whole.as_str()),
            ("no closing blank line", &whole[..whole.len() - 1]),
            ("data then the end", &whole[..whole.len() - 2]),
            ("no message_stop", without_stop),
            (
                "message_delta without its blank line",
                &without_stop[..without_stop.len() - 1],
            ),
            (
                "message_delta data then the end",
                &without_stop[..without_stop.len() - 2],
            ),
        ];
        for (ending, text) in endings {
            for size in [1, 2, 7, 64] {
                let (result, events) = decode_in_chunks(text, size);
                let response = result.unwrap_or_else(|error| {
                    panic!("{name}, {ending}, {size}-byte chunks: {error}")
                });
                assert_eq!(response, expected, "{name}, {ending}, {size}-byte chunks");
                assert_eq!(
                    events, expected_events,
                    "{name}, {ending}, {size}-byte chunks"
                );
            }
        }
    }
}

#[test]
fn every_stream_cut_before_its_stop_reason_ended_early() {
    for (name, whole) in recorded_streams() {
        let delta_at = whole.rfind("event: message_delta").unwrap();
        let delta_data_at = delta_at + whole[delta_at..].find("data: ").unwrap();
        let cuts = [
            ("before message_delta", &whole[..delta_at]),
            ("inside message_delta's name", &whole[..delta_at + 10]),
            ("inside message_delta's data", &whole[..delta_data_at + 30]),
        ];
        for (cut, text) in cuts {
            for size in [1, 2, 7, 64] {
                let (result, _) = decode_in_chunks(text, size);
                assert!(
                    matches!(result, Err(ModelError::StreamEndedEarly)),
                    "{name}, cut {cut}, {size}-byte chunks: {result:?}"
                );
            }
        }
    }
}
