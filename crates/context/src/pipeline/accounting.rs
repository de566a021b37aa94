//! How many tokens a request will hold: the API's last report, plus an estimate of the rest.

use cairn_protocol::{ContentBlock, Message, ToolResultBlock, ToolResultContent};

use crate::estimate_tokens;

/// What an image costs in the window, roughly (the API bills ~1,600 tokens for a 1-megapixel
/// image; its bytes say nothing useful).
const IMAGE_TOKENS: u64 = 1_600;

/// The estimated tokens of one message: characters / 4 of what it carries.
pub fn message_tokens(message: &Message) -> u64 {
    message.content.iter().map(block_tokens).sum()
}

/// The estimated tokens of several messages.
pub fn messages_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(message_tokens).sum()
}

fn block_tokens(block: &ContentBlock) -> u64 {
    let tokens = match block {
        ContentBlock::Text { text } => estimate_tokens(text),
        ContentBlock::Thinking { thinking, .. } => estimate_tokens(thinking),
        ContentBlock::RedactedThinking { data } => estimate_tokens(data),
        ContentBlock::ToolUse { name, input, .. } => {
            estimate_tokens(name) + estimate_tokens(&input.to_string())
        }
        ContentBlock::ToolResult { content, .. } => return result_tokens(content),
        ContentBlock::Image { .. } => return IMAGE_TOKENS,
    };
    tokens as u64
}

/// The estimated tokens of a tool result's content.
pub fn result_tokens(content: &ToolResultContent) -> u64 {
    match content {
        ToolResultContent::Text(text) => estimate_tokens(text) as u64,
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| match block {
                ToolResultBlock::Text { text } => estimate_tokens(text) as u64,
                ToolResultBlock::Image { .. } => IMAGE_TOKENS,
            })
            .sum(),
    }
}

/// The difference between what the API counted and what characters / 4 says: the system
/// prompt and the tools (which the messages' estimate leaves out) and the estimate's error.
/// Learned from the last report, so a request's estimate is the report's count for what it
/// sent before plus characters / 4 of what changed since.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calibration {
    overhead: u64,
}

impl Calibration {
    /// Learns from a report of `reported` input tokens for a request whose messages were
    /// estimated at `sent_estimate`.
    pub fn learn(reported: u64, sent_estimate: u64) -> Self {
        Calibration {
            overhead: reported.saturating_sub(sent_estimate),
        }
    }

    /// The tokens a request holds besides its messages (the system prompt and the tools), as
    /// the last report taught.
    pub fn overhead(&self) -> u64 {
        self.overhead
    }

    /// The estimated input tokens of a request sending `messages`.
    pub fn estimate(&self, messages: &[Message]) -> u64 {
        self.overhead + messages_tokens(messages)
    }

    /// The estimated input tokens of a request whose messages estimate at `messages_estimate`.
    pub fn estimate_from(&self, messages_estimate: u64) -> u64 {
        self.overhead + messages_estimate
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_of_block_counts() {
        let message = Message {
            role: cairn_protocol::Role::Assistant,
            content: vec![
                ContentBlock::text("x".repeat(400)),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "/a"}),
                },
            ],
        };
        // 100 for the text, 1 for the name, 5 for `{"file_path":"/a"}` (18 chars).
        assert_eq!(message_tokens(&message), 106);
        let result = Message {
            role: cairn_protocol::Role::User,
            content: vec![ContentBlock::tool_result("t1", "y".repeat(40), false)],
        };
        assert_eq!(message_tokens(&result), 10);
    }

    #[test]
    fn the_report_calibrates_later_estimates() {
        let sent = vec![Message::user_text("z".repeat(4_000))];
        let calibration = Calibration::learn(6_000, messages_tokens(&sent));
        let mut next = sent.clone();
        next.push(Message::user_text("w".repeat(400)));
        assert_eq!(calibration.estimate(&next), 6_100);
    }
}
