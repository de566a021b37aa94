//! The read-time view of the conversation: what snip and microcompact decided to leave out of
//! requests, applied to the stored conversation (which they never rewrite).
//!
//! Decisions are sticky: once a result is cleared it stays cleared, so every later request
//! repeats the same bytes and the API's prompt cache keeps serving them. They are keyed by
//! tool-use id, which the conversation keeps for good.

use std::collections::{BTreeMap, BTreeSet};

use cairn_protocol::{ContentBlock, Message, Role, ToolResultContent};

/// What requests leave out of the stored conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewDecisions {
    /// Tool calls dropped whole: the assistant message that made the call and the user message
    /// that carried its result, both holding nothing else of use.
    pub dropped: BTreeSet<String>,
    /// Tool results whose content requests replace with a short marker, by tool-use id.
    pub replaced: BTreeMap<String, String>,
}

impl ViewDecisions {
    /// The messages a request sends for `conversation`.
    pub fn project(&self, conversation: &[Message]) -> Vec<Message> {
        conversation
            .iter()
            .filter_map(|message| self.shown(message))
            .collect()
    }

    /// What a request sends of `message`: `None` when it is left out.
    pub fn shown(&self, message: &Message) -> Option<Message> {
        (!self.drops(message)).then(|| self.replace_results(message))
    }

    /// Whether a decision already covers the call `id`.
    pub fn covers(&self, id: &str) -> bool {
        self.dropped.contains(id) || self.replaced.contains_key(id)
    }

    fn drops(&self, message: &Message) -> bool {
        if self.dropped.is_empty() {
            return false;
        }
        match message.role {
            Role::Assistant => {
                let mut calls = message.tool_uses().peekable();
                calls.peek().is_some() && calls.all(|(id, _, _)| self.dropped.contains(id))
            }
            Role::User => {
                !message.content.is_empty()
                    && message.content.iter().all(|block| match block {
                        ContentBlock::ToolResult { tool_use_id, .. } => {
                            self.dropped.contains(tool_use_id)
                        }
                        _ => false,
                    })
            }
        }
    }

    fn replace_results(&self, message: &Message) -> Message {
        if self.replaced.is_empty() || message.role != Role::User {
            return message.clone();
        }
        let content = message
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    is_error,
                    ..
                } => match self.replaced.get(tool_use_id) {
                    Some(marker) => ContentBlock::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content: ToolResultContent::Text(marker.clone()),
                        is_error: *is_error,
                    },
                    None => block.clone(),
                },
                _ => block.clone(),
            })
            .collect();
        Message {
            role: message.role,
            content,
        }
    }
}

/// One tool call of the conversation, with where it sits and what it returned.
#[derive(Debug)]
pub struct Call<'a> {
    /// The index of the assistant message that made it.
    pub index: usize,
    /// The `tool_use` id.
    pub id: &'a str,
    /// The tool's name as the model wrote it.
    pub name: &'a str,
    /// The call's arguments.
    pub input: &'a serde_json::Value,
    /// Its result, when the conversation holds one.
    pub result: Option<&'a ToolResultContent>,
    /// Whether that result says the call failed or was refused.
    pub failed: bool,
}

/// The tool calls of `conversation`, oldest first.
pub fn calls(conversation: &[Message]) -> Vec<Call<'_>> {
    let mut results: BTreeMap<&str, (&ToolResultContent, bool)> = BTreeMap::new();
    for message in conversation
        .iter()
        .filter(|message| message.role == Role::User)
    {
        for block in &message.content {
            if let ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = block
            {
                results.insert(tool_use_id, (content, *is_error));
            }
        }
    }
    conversation
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::Assistant)
        .flat_map(|(index, message)| {
            message
                .tool_uses()
                .map(move |(id, name, input)| (index, id, name, input))
        })
        .map(|(index, id, name, input)| Call {
            index,
            id,
            name,
            input,
            result: results.get(id).map(|&(content, _)| content),
            failed: results.get(id).is_some_and(|&(_, failed)| failed),
        })
        .collect()
}

/// The index from which messages are too recent to touch: the last `keep` messages, and
/// never the first message (the user's first prompt opens every request).
pub fn protected_from(conversation: &[Message], keep: usize) -> usize {
    conversation.len().saturating_sub(keep)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "Read".into(),
                input: json!({"file_path": "/a"}),
            }],
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result(id, text, false)],
        }
    }

    #[test]
    fn dropped_calls_leave_with_their_results_and_replaced_results_keep_their_call() {
        let conversation = vec![
            Message::user_text("start"),
            call("a"),
            result("a", "old"),
            call("b"),
            result("b", "newer"),
        ];
        let decisions = ViewDecisions {
            dropped: BTreeSet::from(["a".to_string()]),
            replaced: BTreeMap::from([("b".to_string(), "[cleared]".to_string())]),
        };
        assert_eq!(
            decisions.project(&conversation),
            vec![
                Message::user_text("start"),
                call("b"),
                result("b", "[cleared]"),
            ]
        );
    }
}
