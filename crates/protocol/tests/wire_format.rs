//! The protocol types read and write the Anthropic wire format exactly.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_protocol::{ContentBlock, Message, Role, StopReason, ToolResultContent, Usage};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A recorded conversation in the API's wire format, one message per line.
fn recorded_messages() -> Vec<(&'static str, Message)> {
    include_str!("fixtures/messages.jsonl")
        .lines()
        .map(|line| (line, serde_json::from_str(line).unwrap()))
        .collect()
}

#[test]
fn recorded_conversation_round_trips_byte_for_byte() {
    let recorded = recorded_messages();
    assert_eq!(recorded.len(), 4);
    for (line, message) in recorded {
        assert_eq!(serde_json::to_string(&message).unwrap(), line);
    }
}

#[test]
fn every_block_kind_reads_as_expected() {
    let messages: Vec<Message> = recorded_messages().into_iter().map(|(_, m)| m).collect();
    assert_eq!(
        messages[1].content[0],
        ContentBlock::Thinking {
            thinking: "The user wants the file.".into(),
            signature: "EqQBCkYIARgCIkA".into(),
        }
    );
    assert_eq!(
        messages[1].content[1],
        ContentBlock::RedactedThinking {
            data: "cmVkYWN0ZWQ=".into()
        }
    );
    assert_eq!(
        messages[1].tool_uses().collect::<Vec<_>>(),
        vec![
            ("toolu_01", "Read", &json!({"file_path": "/tmp/a.txt"})),
            ("toolu_02", "Read", &json!({"file_path": "/tmp/b.png"}))
        ]
    );
    match &messages[2].content[0] {
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            assert_eq!(tool_use_id, "toolu_01");
            assert_eq!(content.text(), "     1\thello");
            assert!(!is_error);
        }
        other => panic!("expected a tool result, got {other:?}"),
    }
    match &messages[2].content[1] {
        ContentBlock::ToolResult {
            content: ToolResultContent::Blocks(blocks),
            is_error,
            ..
        } => {
            assert_eq!(blocks.len(), 2);
            assert!(is_error);
        }
        other => panic!("expected a tool result with blocks, got {other:?}"),
    }
}

#[test]
fn string_content_reads_as_one_text_block() {
    let message: Message =
        serde_json::from_value(json!({"role": "user", "content": "hi"})).unwrap();
    assert_eq!(
        message,
        Message {
            role: Role::User,
            content: vec![ContentBlock::text("hi")]
        }
    );
}

#[test]
fn usage_reads_null_and_missing_cache_fields_as_zero() {
    let usage: Usage = serde_json::from_value(json!({
        "input_tokens": 12, "output_tokens": 3, "cache_creation_input_tokens": null
    }))
    .unwrap();
    assert_eq!(
        usage,
        Usage {
            input_tokens: 12,
            output_tokens: 3,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0
        }
    );
}

#[test]
fn unknown_stop_reason_is_not_fatal() {
    let reason: StopReason = serde_json::from_value(json!("something_new")).unwrap();
    assert_eq!(reason, StopReason::Unknown);
    let reason: StopReason = serde_json::from_value(json!("tool_use")).unwrap();
    assert_eq!(reason, StopReason::ToolUse);
}
