//! The JSON body of a Messages API request, with prompt-caching breakpoints.
//!
//! The API caches prefixes of the request in the order tools → system → messages. cairn marks
//! at most three breakpoints (the API allows four): the last tool definition, the static half
//! of the system prompt, and the last block of the newest message (a rolling breakpoint that
//! moves forward every turn, so each request reads what the previous one wrote). Nothing
//! that changes within a session sits before the first two.

use serde_json::{Map, Value, json};

use crate::ModelRequest;

/// The most `cache_control` marks the API accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Whether requests carry prompt-caching breakpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptCaching {
    Enabled,
    /// `DISABLE_PROMPT_CACHING=1`.
    Disabled,
}

/// The streaming request body for `request`.
pub fn messages_body(request: &ModelRequest, caching: PromptCaching) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    let mut system = Vec::new();
    if !request.system.static_part.is_empty() {
        let mut block = json!({"type": "text", "text": request.system.static_part});
        mark(&mut block, caching);
        system.push(block);
    }
    if !request.system.dynamic_part.is_empty() {
        system.push(json!({"type": "text", "text": request.system.dynamic_part}));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let mut messages = json!(request.messages);
    if let Some(last) = messages
        .as_array_mut()
        .and_then(|messages| messages.last_mut())
        .and_then(|message| message.get_mut("content"))
        .and_then(Value::as_array_mut)
        && let Some(block) = last
            .iter_mut()
            .rev()
            .find(|block| accepts_cache_control(block))
    {
        mark(block, caching);
    }
    body.insert("messages".into(), messages);
    if !request.tools.is_empty() {
        let mut tools = json!(request.tools);
        if let Some(last) = tools.as_array_mut().and_then(|tools| tools.last_mut()) {
            mark(last, caching);
        }
        body.insert("tools".into(), tools);
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn mark(block: &mut Value, caching: PromptCaching) {
    match caching {
        PromptCaching::Enabled => {
            if let Some(object) = block.as_object_mut() {
                object.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
        }
        PromptCaching::Disabled => {}
    }
}

/// Thinking blocks cannot carry a breakpoint; every other kind can.
fn accepts_cache_control(block: &Value) -> bool {
    !matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// How many breakpoints a body carries (for tests and assertions).
pub fn count_breakpoints(body: &Value) -> usize {
    match body {
        Value::Object(object) => {
            usize::from(object.contains_key("cache_control"))
                + object.values().map(count_breakpoints).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_breakpoints).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ContentBlock, Message, SystemPrompt, ToolSpec};
    use pretty_assertions::assert_eq;

    use super::*;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: SystemPrompt {
                static_part: "You are cairn.".into(),
                dynamic_part: "cwd: /tmp".into(),
            },
            messages,
            tools: vec![
                ToolSpec {
                    name: "A".into(),
                    description: "a".into(),
                    input_schema: json!({"type": "object"}),
                },
                ToolSpec {
                    name: "B".into(),
                    description: "b".into(),
                    input_schema: json!({"type": "object"}),
                },
            ],
            max_tokens: 100,
        }
    }

    #[test]
    fn marks_static_system_last_tool_and_last_message_block() {
        let body = messages_body(
            &request(vec![
                Message::user_text("first"),
                Message {
                    role: cairn_protocol::Role::Assistant,
                    content: vec![ContentBlock::text("answer")],
                },
                Message {
                    role: cairn_protocol::Role::User,
                    content: vec![ContentBlock::text("a"), ContentBlock::text("b")],
                },
            ]),
            PromptCaching::Enabled,
        );
        assert_eq!(
            body["system"],
            json!([
                {"type": "text", "text": "You are cairn.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "cwd: /tmp"}
            ])
        );
        assert_eq!(body["tools"][0].get("cache_control"), None);
        assert_eq!(
            body["tools"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body["messages"][2]["content"][0].get("cache_control"), None);
        assert_eq!(
            body["messages"][2]["content"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(count_breakpoints(&body), 3);
    }

    #[test]
    fn thinking_blocks_are_skipped_for_the_rolling_breakpoint() {
        let body = messages_body(
            &request(vec![Message {
                role: cairn_protocol::Role::Assistant,
                content: vec![
                    ContentBlock::text("x"),
                    ContentBlock::Thinking {
                        thinking: "t".into(),
                        signature: "s".into(),
                    },
                ],
            }]),
            PromptCaching::Enabled,
        );
        assert_eq!(
            body["messages"][0]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(count_breakpoints(&body), 3);
    }

    #[test]
    fn disabled_caching_marks_nothing_and_empty_parts_are_omitted() {
        let mut plain = request(vec![Message::user_text("hi")]);
        plain.tools.clear();
        plain.system = SystemPrompt::default();
        let body = messages_body(&plain, PromptCaching::Disabled);
        assert_eq!(
            body,
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "stream": true,
            })
        );
        assert_eq!(
            count_breakpoints(&messages_body(
                &request(vec![Message::user_text("hi")]),
                PromptCaching::Disabled
            )),
            0
        );
    }
}
