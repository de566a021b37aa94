//! The Chat Completions request body: the system prompt first, the conversation as
//! `user`/`assistant`/`tool` messages, tools in function format, streaming with usage.

use cairn_protocol::{ContentBlock, ImageSource, Message, Role, ToolResultBlock};
use serde_json::{Value, json};

use crate::ModelRequest;

/// How the reasoning of earlier answers is sent back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Dropped: most servers ignore it, some reject it.
    Drop,
    /// As `reasoning_content` on the assistant messages of the turn in progress, after the
    /// user's last prompt (DeepSeek's thinking mode answers 400 when it is missing between
    /// tool calls, and does not read it from earlier turns).
    ReasoningContent,
}

/// The body for `request`: `stream: true` with `stream_options.include_usage`, so the last
/// chunk reports the tokens.
pub fn chat_body(request: &ModelRequest, replay: Replay) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let system = [
        request.system.static_part.as_str(),
        request.system.dynamic_part.as_str(),
    ]
    .into_iter()
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join("\n\n");
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    // The turn in progress starts at the last user message that answers no tool call (one
    // that does may carry more, such as an image or a reminder, and is still the same turn).
    let turn_start = request
        .messages
        .iter()
        .rposition(|message| {
            message.role == Role::User
                && !message
                    .content
                    .iter()
                    .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
        })
        .unwrap_or(0);
    for (index, message) in request.messages.iter().enumerate() {
        let replay = if index > turn_start {
            replay
        } else {
            Replay::Drop
        };
        push_message(message, replay, &mut messages);
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                }})
            })
            .collect();
        if request.text_only {
            body["tool_choice"] = json!("none");
        }
    }
    body
}

/// Rewrites every tool-call id in `body` (the assistant's `tool_calls`, the `tool` messages
/// answering them) to 9 letters and digits, as Mistral's models demand. An id already so is
/// kept; another becomes a hash of itself, so a call and its answer still match.
pub fn nine_char_tool_ids(body: &mut Value) {
    let Some(messages) = body["messages"].as_array_mut() else {
        return;
    };
    for message in messages {
        if let Some(id) = message.get_mut("tool_call_id") {
            rewrite_id(id);
        }
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for call in calls {
                if let Some(id) = call.get_mut("id") {
                    rewrite_id(id);
                }
            }
        }
    }
}

fn rewrite_id(id: &mut Value) {
    let Some(text) = id.as_str() else {
        return;
    };
    if text.len() == 9 && text.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
        return;
    }
    // FNV-1a: stable across runs and versions, unlike the standard library's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let short: String = (0..9)
        .map(|_| {
            let digit = DIGITS[(hash % 62) as usize] as char;
            hash /= 62;
            digit
        })
        .collect();
    *id = Value::String(short);
}

/// One conversation message as Chat Completions messages: tool results become one `tool`
/// message each (answered by the call's `id`), and the rest of a user message follows them.
fn push_message(message: &Message, replay: Replay, out: &mut Vec<Value>) {
    match message.role {
        Role::Assistant => {
            let mut text = String::new();
            let mut reasoning = String::new();
            let mut calls = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text { text: piece } => text.push_str(piece),
                    ContentBlock::Thinking { thinking, .. } => reasoning.push_str(thinking),
                    ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    _ => {}
                }
            }
            let mut assistant = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                assistant["tool_calls"] = Value::Array(calls);
            }
            if replay == Replay::ReasoningContent && !reasoning.is_empty() {
                assistant["reasoning_content"] = Value::String(reasoning);
            }
            out.push(assistant);
        }
        Role::User => {
            let mut parts = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let mut text = content.text();
                        if *is_error && !text.starts_with("Error") {
                            text = format!("Error: {text}");
                        }
                        out.push(
                            json!({"role": "tool", "tool_call_id": tool_use_id, "content": text}),
                        );
                        // Chat Completions tool messages carry text only: images follow as
                        // the user's.
                        if let cairn_protocol::ToolResultContent::Blocks(blocks) = content {
                            for block in blocks {
                                if let ToolResultBlock::Image { source } = block {
                                    parts.push(image_part(source));
                                }
                            }
                        }
                    }
                    ContentBlock::Text { text } => {
                        parts.push(json!({"type": "text", "text": text}))
                    }
                    ContentBlock::Image { source } => parts.push(image_part(source)),
                    _ => {}
                }
            }
            if parts.is_empty() {
                return;
            }
            // Plain text goes as a string, which every compatible server reads.
            let content = match parts.as_slice() {
                [only] if only["type"] == "text" => only["text"].clone(),
                _ => Value::Array(parts),
            };
            out.push(json!({"role": "user", "content": content}));
        }
    }
}

/// An image as an `image_url` part: a data URL for inline bytes.
fn image_part(source: &ImageSource) -> Value {
    let url = match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    };
    json!({"type": "image_url", "image_url": {"url": url}})
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{SystemPrompt, ToolSpec};
    use pretty_assertions::assert_eq;

    use super::*;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "deepseek-reasoner".into(),
            system: SystemPrompt {
                static_part: "You are cairn.".into(),
                dynamic_part: "cwd: /p".into(),
            },
            messages,
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "Reads a file".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 100,
            text_only: false,
            stable_prefix: None,
        }
    }

    /// A turn with two calls answered by id, thinking replayed only when asked, and an image
    /// as a data URL after the text.
    #[test]
    fn a_tool_round_trip_is_written_as_chat_messages() {
        let conversation = vec![
            Message::user_text("read both"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "two files".into(),
                        signature: String::new(),
                    },
                    ContentBlock::ToolUse {
                        id: "call_a".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "a"}),
                    },
                    ContentBlock::ToolUse {
                        id: "call_b".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "b"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::tool_result("call_a", "A", false),
                    ContentBlock::tool_result("call_b", "no such file", true),
                    ContentBlock::Image {
                        source: ImageSource::Base64 {
                            media_type: "image/png".into(),
                            data: "iVBOR".into(),
                        },
                    },
                ],
            },
        ];
        let body = chat_body(&request(conversation.clone()), Replay::ReasoningContent);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "You are cairn.\n\ncwd: /p"},
                {"role": "user", "content": "read both"},
                {"role": "assistant", "content": "", "reasoning_content": "two files", "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"b\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_a", "content": "A"},
                {"role": "tool", "tool_call_id": "call_b", "content": "Error: no such file"},
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}]},
            ])
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {"name": "Read", "description": "Reads a file", "parameters": {"type": "object"}}})
        );
        let dropped = chat_body(&request(conversation.clone()), Replay::Drop);
        assert_eq!(dropped["messages"][2].get("reasoning_content"), None);
        // Once the user asks again, that turn's reasoning is not sent back.
        let mut next = conversation;
        next.push(Message::user_text("and now?"));
        let later = chat_body(&request(next), Replay::ReasoningContent);
        assert_eq!(later["messages"][2].get("reasoning_content"), None);
    }

    /// Another provider's ids become 9 letters and digits, the same for a call and its
    /// answer; Mistral's own are kept.
    #[test]
    fn tool_ids_are_rewritten_for_models_that_demand_nine_characters() {
        let conversation = vec![
            Message::user_text("go"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::ToolUse {
                        id: "toolu_01A09q90qw90lq917835lq9".into(),
                        name: "Read".into(),
                        input: json!({}),
                    },
                    ContentBlock::ToolUse {
                        id: "D681PevKs".into(),
                        name: "Read".into(),
                        input: json!({}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::tool_result("toolu_01A09q90qw90lq917835lq9", "a", false),
                    ContentBlock::tool_result("D681PevKs", "b", false),
                ],
            },
        ];
        let mut body = chat_body(&request(conversation), Replay::Drop);
        nine_char_tool_ids(&mut body);
        let calls: Vec<&str> = body["messages"][2]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|call| call["id"].as_str())
            .collect();
        let answers = [
            body["messages"][3]["tool_call_id"].as_str(),
            body["messages"][4]["tool_call_id"].as_str(),
        ];
        assert_eq!(answers, [calls.first().copied(), calls.get(1).copied()]);
        assert_eq!(calls[1], "D681PevKs");
        assert!(
            calls[0].len() == 9 && calls[0].bytes().all(|b| b.is_ascii_alphanumeric()),
            "{calls:?}"
        );
    }

    #[test]
    fn a_summary_may_not_call_tools() {
        let mut summary = request(vec![Message::user_text("sum up")]);
        summary.text_only = true;
        assert_eq!(
            chat_body(&summary, Replay::Drop)["tool_choice"],
            json!("none")
        );
    }
}
