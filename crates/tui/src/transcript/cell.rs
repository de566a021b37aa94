//! One entry of the transcript, as the engine's events build it.

use cairn_protocol::{ContentBlock, Message};

use super::boundary::Boundary;
use super::user_prompt::UserPrompt;
use crate::tool_cell::ToolCall;

/// What a delta streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    Text,
    Thinking,
}

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    User(UserPrompt),
    Assistant(String),
    Thinking(String),
    Tool(ToolCall),
    Error(String),
    Warning(String),
    Info(String),
    /// Where a compaction replaced the conversation with its summary.
    Boundary(Boundary),
}

impl Cell {
    /// The text a delta of `stream` adds to, if this cell is of its kind.
    pub(super) fn stream_text(&mut self, stream: Stream) -> Option<&mut String> {
        match (self, stream) {
            (Cell::Assistant(text), Stream::Text) | (Cell::Thinking(text), Stream::Thinking) => {
                Some(text)
            }
            (Cell::Assistant(_), Stream::Thinking)
            | (Cell::Thinking(_), Stream::Text)
            | (
                Cell::User(_)
                | Cell::Tool(_)
                | Cell::Error(_)
                | Cell::Warning(_)
                | Cell::Info(_)
                | Cell::Boundary(_),
                Stream::Text | Stream::Thinking,
            ) => None,
        }
    }

    pub(super) fn tool_call(&mut self) -> Option<&mut ToolCall> {
        match self {
            Cell::Tool(call) => Some(call),
            Cell::User(_)
            | Cell::Assistant(_)
            | Cell::Thinking(_)
            | Cell::Error(_)
            | Cell::Warning(_)
            | Cell::Info(_)
            | Cell::Boundary(_) => None,
        }
    }

    /// Whether nothing more will change in it: only a tool call waits, for its result.
    pub(super) fn is_complete(&self) -> bool {
        match self {
            Cell::Tool(call) => call.result.is_some(),
            Cell::User(_)
            | Cell::Assistant(_)
            | Cell::Thinking(_)
            | Cell::Error(_)
            | Cell::Warning(_)
            | Cell::Info(_)
            | Cell::Boundary(_) => true,
        }
    }
}

/// The cells of a whole assistant message, for when it was not streamed.
pub(super) fn cells_of(message: &Message) -> Vec<Cell> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(Cell::Assistant(text.clone())),
            ContentBlock::Thinking { thinking, .. } => Some(Cell::Thinking(thinking.clone())),
            ContentBlock::ToolUse { id, name, input } => Some(Cell::Tool(ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: Some(input.clone()),
                result: None,
                file_before: None,
                awaiting_approval: false,
                sub_agent: None,
            })),
            ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolResult { .. }
            | ContentBlock::Image { .. } => None,
        })
        .collect()
}
