//! What the sub-agent tests share: reading a tool result out of a recorded request.

#![allow(dead_code, reason = "each test file uses its own part")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::RecordedRequest;
use serde_json::{Value, json};

/// The `tool_result` for `id` in the last message of `request`: its text and `is_error`.
pub fn result_of(request: &RecordedRequest, id: &str) -> (String, bool) {
    let messages = request.body["messages"].as_array().unwrap();
    let result = messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["tool_use_id"] == json!(id))
        .unwrap_or_else(|| panic!("no result for {id} in {messages:?}"))
        .clone();
    let text = match &result["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    (text, result["is_error"] == json!(true))
}
