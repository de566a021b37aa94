//! Messages and content blocks in the Anthropic Messages API wire format.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person or program driving cairn; tool results are sent under this role too.
    User,
    /// The model.
    Assistant,
}

/// One entry of the conversation. The list of messages is the whole state of a session.
///
/// On input, `content` may also be a plain string (as the API allows); it is read as one text
/// block and always written back as an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says, in the order written; never empty in a message cairn sends.
    #[serde(deserialize_with = "content_string_or_blocks")]
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The concatenated text blocks of this message, ignoring every other kind of block.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The `tool_use` blocks of this message, in the order the model wrote them.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

fn content_string_or_blocks<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<ContentBlock>),
    }
    Ok(match Content::deserialize(deserializer)? {
        Content::Text(text) => vec![ContentBlock::text(text)],
        Content::Blocks(blocks) => blocks,
    })
}

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text, from the user or the model.
    Text {
        /// The text itself, Markdown as the model writes it.
        text: String,
    },
    /// Extended thinking. The signature must be sent back unchanged with the block.
    Thinking {
        /// The model's reasoning, shown to the user but not part of its answer.
        thinking: String,
        /// The API's proof that the thinking is unaltered; empty when the API sent none.
        #[serde(default)]
        signature: String,
    },
    /// Thinking the API returns encrypted; it is passed back as it came.
    RedactedThinking {
        /// The encrypted thinking, opaque to cairn.
        data: String,
    },
    /// The model asks for a tool to run; answered by a [`ContentBlock::ToolResult`] with the
    /// same id in the next user message.
    ToolUse {
        /// The API's id for this call (`toolu_…`), unique within the conversation.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
        /// The call's arguments, a JSON object meant to match the tool's input schema.
        input: Value,
    },
    /// The answer to a [`ContentBlock::ToolUse`].
    ToolResult {
        /// The `id` of the tool use this answers.
        tool_use_id: String,
        /// What the tool returned, or why it did not run.
        content: ToolResultContent,
        /// Whether the call failed or was refused; left out of the JSON when false.
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    /// An image the user attached.
    Image {
        /// Where its bytes are.
        source: ImageSource,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// A tool result holding plain text.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ContentBlock::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(text.into()),
            is_error,
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The content of a tool result: a plain string, or a list of text and image blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text, what most tools return.
    Text(String),
    /// Text and images, for tools that return pictures (reading an image file).
    Blocks(Vec<ToolResultBlock>),
}

impl ToolResultContent {
    /// The text of the result, with images left out.
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(text) => text.clone(),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    ToolResultBlock::Text { text } => Some(text.as_str()),
                    ToolResultBlock::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// A block inside a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultBlock {
    /// A piece of text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image.
    Image {
        /// Where its bytes are.
        source: ImageSource,
    },
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// The bytes inline.
    Base64 {
        /// The image's MIME type, such as `image/png`.
        media_type: String,
        /// The image's bytes in standard base64.
        data: String,
    },
    /// An address the API fetches the image from.
    Url {
        /// The image's URL.
        url: String,
    },
}

/// Why the model stopped writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The answer reached the request's `max_tokens` and was cut off.
    MaxTokens,
    /// The model wrote one of the request's stop sequences.
    StopSequence,
    /// The model asked for tools and waits for their results.
    ToolUse,
    /// The API paused a long turn; sending the conversation back lets it continue.
    PauseTurn,
    /// The model declined to answer.
    Refusal,
    /// The conversation no longer fits the model's context window.
    ModelContextWindowExceeded,
    /// A reason this version of cairn does not know; treated like `end_turn`.
    #[serde(other)]
    Unknown,
}

/// A tool as the model sees it: its name, what it does, and the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (`Read`, `mcp__server__tool`).
    pub name: String,
    /// What the tool does and when to use it, written for the model.
    pub description: String,
    /// The JSON Schema of the tool's input object.
    pub input_schema: Value,
}

/// The system prompt, split at the boundary between what never changes in a session and what
/// does: static before dynamic. The static part comes first and can be cached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemPrompt {
    /// Identity, rules and tool guidance: the same for every session of this cairn version.
    pub static_part: String,
    /// Environment, git context and instruction files: fixed within a session.
    pub dynamic_part: String,
}

impl SystemPrompt {
    /// Whether both parts are empty: there is no system prompt to send.
    pub fn is_empty(&self) -> bool {
        self.static_part.is_empty() && self.dynamic_part.is_empty()
    }
}

/// What kind of JSON value `value` is, in words for an error message ("an array").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
