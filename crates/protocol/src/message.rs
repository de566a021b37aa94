//! Messages and content blocks in the Anthropic Messages API wire format.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One entry of the conversation. The list of messages is the whole state of a session.
///
/// On input, `content` may also be a plain string (as the API allows); it is read as one text
/// block and always written back as an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
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
    Text {
        text: String,
    },
    /// Extended thinking. The signature must be sent back unchanged with the block.
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    /// Thinking the API returns encrypted; it is passed back as it came.
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    Image {
        source: ImageSource,
    },
}

impl ContentBlock {
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
    Text(String),
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
    Text { text: String },
    Image { source: ImageSource },
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// Why the model stopped writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
    ModelContextWindowExceeded,
    /// A reason this version of cairn does not know; treated like `end_turn`.
    #[serde(other)]
    Unknown,
}

/// A tool as the model sees it: its name, what it does, and the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
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
    pub fn is_empty(&self) -> bool {
        self.static_part.is_empty() && self.dynamic_part.is_empty()
    }
}
