//! `/context`: what fills the context window, by category, in estimated tokens.

use cairn_context::estimate_tokens;
use cairn_protocol::{ContentBlock, Message, Role, SystemPrompt, ToolSpec, Usage};

/// What `/context` reports on: what the next request would carry, and what the API said of
/// the last one.
#[derive(Debug, Clone, Copy)]
pub struct ContextFacts<'a> {
    /// The session's system prompt, if it has one.
    pub system_prompt: Option<&'a SystemPrompt>,
    /// The tools the model is offered.
    pub tools: &'a [ToolSpec],
    /// The conversation so far.
    pub conversation: &'a [Message],
    /// The usage the API reported for the last request (`None`: no request yet).
    pub last_request: Option<Usage>,
    /// How many tokens the model's context window holds (`None`: unknown).
    pub window: Option<u64>,
}

/// The `/context` report: one line a category, the total, then what the API last reported
/// (with the share of the window when it is known).
pub fn context_report(facts: &ContextFacts<'_>) -> String {
    ContextUsage::estimate(facts.system_prompt, facts.tools, facts.conversation)
        .render(facts.last_request.as_ref(), facts.window)
}

/// Estimated tokens of each part of the next request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextUsage {
    /// The system prompt's part that stays the same across sessions (cached).
    pub system_static: usize,
    /// The system prompt's part that changes (date, git status, memory).
    pub system_dynamic: usize,
    /// The tools' names, descriptions and input schemas.
    pub tool_definitions: usize,
    /// What the user's messages say (tool results apart).
    pub user_messages: usize,
    /// What the model's messages say, tool calls included.
    pub assistant_messages: usize,
    /// The tools' results.
    pub tool_results: usize,
}

impl ContextUsage {
    /// Estimates each category from the texts the request would carry.
    pub fn estimate(
        system: Option<&SystemPrompt>,
        tools: &[ToolSpec],
        messages: &[Message],
    ) -> ContextUsage {
        let mut usage = ContextUsage::default();
        if let Some(system) = system {
            usage.system_static = estimate_tokens(&system.static_part);
            usage.system_dynamic = estimate_tokens(&system.dynamic_part);
        }
        usage.tool_definitions = tools
            .iter()
            .map(|tool| {
                estimate_tokens(&tool.name)
                    + estimate_tokens(&tool.description)
                    + estimate_tokens(&tool.input_schema.to_string())
            })
            .sum();
        for message in messages {
            for block in &message.content {
                let (category, tokens) = match block {
                    ContentBlock::ToolResult { content, .. } => {
                        (&mut usage.tool_results, estimate_tokens(&content.text()))
                    }
                    other => {
                        let tokens = block_tokens(other);
                        match message.role {
                            Role::User => (&mut usage.user_messages, tokens),
                            Role::Assistant => (&mut usage.assistant_messages, tokens),
                        }
                    }
                };
                *category += tokens;
            }
        }
        usage
    }

    /// Every category together: the estimate of the next request's input.
    pub fn total(&self) -> usize {
        self.system_static
            + self.system_dynamic
            + self.tool_definitions
            + self.user_messages
            + self.assistant_messages
            + self.tool_results
    }

    /// The report: one line a category, then the total and what the API last reported.
    pub fn render(&self, last_request: Option<&Usage>, window: Option<u64>) -> String {
        let rows = [
            ("System prompt (static)", self.system_static),
            ("System prompt (dynamic)", self.system_dynamic),
            ("Tool definitions", self.tool_definitions),
            ("User messages", self.user_messages),
            ("Assistant messages", self.assistant_messages),
            ("Tool results", self.tool_results),
        ];
        let mut text = String::from("Context (estimated tokens):");
        for (name, tokens) in rows {
            text.push_str(&format!("\n  {name:<24} {tokens:>8}"));
        }
        text.push_str(&format!("\n  {:<24} {:>8}", "Total", self.total()));
        match last_request {
            Some(usage) => {
                let input = usage.input_tokens
                    + usage.cache_read_input_tokens
                    + usage.cache_creation_input_tokens;
                text.push_str(&format!(
                    "\nLast request: {input} input tokens ({} uncached, {} cache read, {} cache \
                     write)",
                    usage.input_tokens,
                    usage.cache_read_input_tokens,
                    usage.cache_creation_input_tokens
                ));
                if let Some(window) = window.filter(|window| *window > 0) {
                    text.push_str(&format!(
                        " · {}% of {window}",
                        input.saturating_mul(100) / window
                    ));
                }
            }
            None => text.push_str("\nLast request: none yet"),
        }
        text
    }
}

fn block_tokens(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text } => estimate_tokens(text),
        ContentBlock::Thinking { thinking, .. } => estimate_tokens(thinking),
        ContentBlock::RedactedThinking { data } => estimate_tokens(data),
        ContentBlock::ToolUse { name, input, .. } => {
            estimate_tokens(name) + estimate_tokens(&input.to_string())
        }
        ContentBlock::ToolResult { content, .. } => estimate_tokens(&content.text()),
        // The API counts an image by its size; a typical screenshot is about this much.
        ContentBlock::Image { .. } => 1_600,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn counts_each_category() {
        let system = SystemPrompt {
            static_part: "a".repeat(40),
            dynamic_part: "b".repeat(8),
        };
        let tools = [ToolSpec {
            name: "Read".into(),
            description: "read".into(),
            input_schema: json!({}),
        }];
        let messages = [
            Message::user_text("x".repeat(12)),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("y".repeat(20))],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::tool_result("t", "z".repeat(400), false)],
            },
        ];
        assert_eq!(
            ContextUsage::estimate(Some(&system), &tools, &messages),
            ContextUsage {
                system_static: 10,
                system_dynamic: 2,
                tool_definitions: 3,
                user_messages: 3,
                assistant_messages: 5,
                tool_results: 100,
            }
        );
    }

    #[test]
    fn reports_the_last_request_with_cache() {
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_creation_input_tokens: 20,
            cache_read_input_tokens: 70,
        };
        let text = ContextUsage::default().render(Some(&usage), Some(1000));
        assert!(
            text.ends_with(
                "Last request: 100 input tokens (10 uncached, 70 cache read, 20 cache write) · \
                 10% of 1000"
            ),
            "{text}"
        );
    }
}
