//! The JSON body of a Messages API request, with prompt-caching breakpoints.
//!
//! The API caches prefixes of the request in the order tools → system → messages. cairn marks
//! at most four breakpoints, as many as the API allows: the last tool definition, the static
//! half of the system prompt, the end of the stable prefix (the messages that stay as they are
//! when old tool results after them are cleared, [`ModelRequest::stable_prefix`]), and the
//! last block of the newest message (a rolling breakpoint that moves forward every turn, so
//! each request reads what the previous one wrote). The API finds a cached prefix only within
//! 20 blocks before a breakpoint, so without the third a clear far back would write the whole
//! conversation again. Nothing that changes within a session sits before the first two.

use cairn_protocol::Message;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::ModelRequest;

/// The most `cache_control` marks the API accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Whether requests carry prompt-caching breakpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptCaching {
    /// Mark the last tool, the static system prompt and the newest message with
    /// `cache_control`, so each request reads the prefix the previous one wrote (the default).
    Enabled,
    /// `DISABLE_PROMPT_CACHING=1`.
    Disabled,
}

/// The streaming request body for `request`; serialise it with serde. Messages are written
/// straight from the conversation, without an intermediate JSON tree, so a long resumed
/// history costs one pass; only the marked messages are copied, to carry their marks.
pub fn messages_body(request: &ModelRequest, caching: PromptCaching) -> MessagesBody<'_> {
    let mut system = Vec::new();
    if !request.system.static_part.is_empty() {
        let mut block = json!({"type": "text", "text": request.system.static_part});
        mark(&mut block, caching);
        system.push(block);
    }
    if !request.system.dynamic_part.is_empty() {
        system.push(json!({"type": "text", "text": request.system.dynamic_part}));
    }
    let tools = (!request.tools.is_empty()).then(|| {
        let mut tools = json!(request.tools);
        if let Some(last) = tools.as_array_mut().and_then(|tools| tools.last_mut()) {
            mark(last, caching);
        }
        tools
    });
    MessagesBody {
        model: &request.model,
        max_tokens: request.max_tokens,
        system,
        messages: MarkedMessages {
            messages: &request.messages,
            stable_prefix: request
                .stable_prefix
                .filter(|&count| count > 0 && count < request.messages.len()),
            caching,
        },
        tool_choice: (request.text_only && !request.tools.is_empty())
            .then(|| json!({"type": "none"})),
        tools,
        thinking: None,
        stream: true,
    }
}

pub use crate::thinking::MIN_THINKING_BUDGET;

impl MessagesBody<'_> {
    /// Asks for extended thinking of up to `budget` tokens, kept under the answer's
    /// `max_tokens` as the API requires; a budget that cannot fit the API's minimum asks for
    /// none.
    pub fn with_thinking(mut self, budget: u32) -> Self {
        let budget = budget.min(self.max_tokens.saturating_sub(1));
        if budget >= MIN_THINKING_BUDGET {
            self.thinking = Some(json!({"type": "enabled", "budget_tokens": budget}));
        }
        self
    }
}

/// The JSON body of a streaming Messages API request.
#[derive(Debug, Serialize)]
pub struct MessagesBody<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Value>,
    messages: MarkedMessages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    stream: bool,
}

/// The conversation, with the rolling breakpoint on the newest message's last block that
/// can carry one, and one more at the end of the stable prefix (a message before the newest).
#[derive(Debug)]
struct MarkedMessages<'a> {
    messages: &'a [Message],
    stable_prefix: Option<usize>,
    caching: PromptCaching,
}

impl Serialize for MarkedMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut sequence = serializer.serialize_seq(Some(self.messages.len()))?;
        let last = self.messages.len().saturating_sub(1);
        let stable_end = self.stable_prefix.map(|count| count - 1);
        for (index, message) in self.messages.iter().enumerate() {
            if index == last || Some(index) == stable_end {
                sequence.serialize_element(&marked(message, self.caching))?;
            } else {
                sequence.serialize_element(message)?;
            }
        }
        sequence.end()
    }
}

/// `message` as JSON with a breakpoint on its last block that can carry one (only this
/// message is copied, to carry its mark).
fn marked(message: &Message, caching: PromptCaching) -> Value {
    let mut value = json!(message);
    if let Some(block) = value
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .and_then(|content| content.iter_mut().rev().find(|b| accepts_cache_control(b)))
    {
        mark(block, caching);
    }
    value
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
    use cairn_protocol::{ContentBlock, SystemPrompt, ToolSpec};
    use pretty_assertions::assert_eq;

    use super::*;

    fn body_value(request: &ModelRequest, caching: PromptCaching) -> Value {
        serde_json::to_value(messages_body(request, caching)).unwrap()
    }

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
            text_only: false,
            stable_prefix: None,
        }
    }

    #[test]
    fn marks_static_system_last_tool_and_last_message_block() {
        let body = body_value(
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
    fn the_stable_prefix_gets_the_fourth_breakpoint_and_never_a_fifth() {
        let conversation = vec![
            Message::user_text("first"),
            Message {
                role: cairn_protocol::Role::Assistant,
                content: vec![ContentBlock::text("answer")],
            },
            Message::user_text("second"),
        ];
        let marked = |stable_prefix| {
            let mut request = request(conversation.clone());
            request.stable_prefix = stable_prefix;
            body_value(&request, PromptCaching::Enabled)
        };
        let body = marked(Some(2));
        assert_eq!(
            body["messages"][1]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body["messages"][0]["content"][0].get("cache_control"), None);
        assert_eq!(count_breakpoints(&body), MAX_BREAKPOINTS);
        // A stable prefix that is the whole conversation, or nothing, adds no mark.
        assert_eq!(count_breakpoints(&marked(Some(3))), 3);
        assert_eq!(count_breakpoints(&marked(Some(0))), 3);
        assert_eq!(count_breakpoints(&marked(Some(9))), 3);
        let disabled = {
            let mut request = request(conversation.clone());
            request.stable_prefix = Some(2);
            body_value(&request, PromptCaching::Disabled)
        };
        assert_eq!(count_breakpoints(&disabled), 0);
    }

    #[test]
    fn thinking_blocks_are_skipped_for_the_rolling_breakpoint() {
        let body = body_value(
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
        let body = body_value(&plain, PromptCaching::Disabled);
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
            count_breakpoints(&body_value(
                &request(vec![Message::user_text("hi")]),
                PromptCaching::Disabled
            )),
            0
        );
    }
}
