//! What the sub-agent tests share: the model's Agent call, the tools a request offers, and
//! reading a tool result out of a recorded request.

#![allow(dead_code, reason = "each test file uses its own part")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use cairn_test_support::{RecordedRequest, Reply, ScriptedBlock};
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

/// The model's call of the tool `name` (`Agent`, or its alias `Task`) starting a `role`
/// sub-agent on `prompt`, described as "a look".
pub fn agent_use(id: &str, name: &str, role: &str, prompt: &str) -> ScriptedBlock {
    ScriptedBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input: json!({"description": "a look", "prompt": prompt, "subagent_type": role}),
    }
}

/// An answer that is only an `Agent` call ([`agent_use`]).
pub fn agent_call(id: &str, role: &str, prompt: &str) -> Reply {
    Reply::blocks(vec![agent_use(id, "Agent", role, prompt)])
}

/// The names of the tools `request` offers, in order.
pub fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}
