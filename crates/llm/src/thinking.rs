//! How much a model is asked to think, the same on every provider.
//!
//! A run's budget comes from `--max-thinking-tokens`, `MAX_THINKING_TOKENS` or
//! `alwaysThinkingEnabled` (the caller decides which wins); the `ultrathink` keyword in the
//! turn's prompt asks for the most, and a summary for none ([`budget_for`]). The Messages API
//! takes the budget in tokens; OpenAI's reasoning models take a level instead
//! ([`ReasoningEffort::for_budget`]).

use crate::{ModelError, ModelRequest};

/// The variable that sets the thinking budget, as Claude Code reads it.
pub const THINKING_VAR: &str = "MAX_THINKING_TOKENS";

/// The least thinking budget the Messages API accepts.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The budget the `ultrathink` keyword (and `alwaysThinkingEnabled`) asks for: Claude Code's
/// largest.
pub const ULTRATHINK_BUDGET: u32 = 31_999;

/// The budget `text` (of the setting `variable`) asks for: `None` for 0, which turns
/// thinking off; refused below the API's minimum.
pub fn parse_budget(text: &str, variable: &'static str) -> Result<Option<u32>, ModelError> {
    let tokens = text
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|tokens| *tokens == 0 || *tokens >= MIN_THINKING_BUDGET)
        .ok_or_else(|| ModelError::InvalidSetting {
            variable,
            value: text.to_owned(),
            expected: "a whole number of tokens, at least 1024 (0 turns thinking off)",
        })?;
    Ok((tokens > 0).then_some(tokens))
}

/// The thinking `request` asks for with `configured` as the run's budget: the most when the
/// turn's prompt says "ultrathink" (as in Claude Code), none for a summary (plain text).
pub fn budget_for(configured: Option<u32>, request: &ModelRequest) -> Option<u32> {
    if request.text_only {
        return None;
    }
    if ultrathink(request) {
        return Some(ULTRATHINK_BUDGET.max(configured.unwrap_or(0)));
    }
    configured
}

/// Whether the prompt of the turn in progress (the last user message that answers no tool
/// call) says `ultrathink`.
fn ultrathink(request: &ModelRequest) -> bool {
    use cairn_protocol::{ContentBlock, Role};
    request
        .messages
        .iter()
        .rev()
        .find(|message| {
            message.role == Role::User
                && !message
                    .content
                    .iter()
                    .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
        })
        .is_some_and(|prompt| {
            prompt.content.iter().any(|block| match block {
                ContentBlock::Text { text } => text
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|word| word.eq_ignore_ascii_case("ultrathink")),
                _ => false,
            })
        })
}

/// The run's one thinking switch: the budget its settings give, and whether thinking is on
/// (the interactive UI's Tab turns it on and off, as Claude Code's does). Every client of the
/// run holds a clone and reads it for each request, so a toggle applies to the next request
/// on every provider.
///
/// ```
/// use cairn_llm::thinking::{Thinking, ULTRATHINK_BUDGET};
///
/// let thinking = Thinking::new(None);
/// assert_eq!(thinking.budget(), None);
/// assert!(thinking.toggle());
/// assert_eq!(thinking.budget(), Some(ULTRATHINK_BUDGET));
/// let configured = Thinking::new(Some(4096));
/// assert!(!configured.clone().toggle());
/// assert_eq!(configured.budget(), None);
/// configured.set_max_tokens(Some(2048));
/// assert_eq!(configured.budget(), Some(2048));
/// configured.set_max_tokens(Some(0));
/// assert_eq!(configured.budget(), None);
/// configured.set_max_tokens(None);
/// assert_eq!(configured.budget(), Some(4096));
/// ```
#[derive(Debug, Clone)]
pub struct Thinking {
    state: std::sync::Arc<ThinkingState>,
}

#[derive(Debug)]
struct ThinkingState {
    /// The budget the run started with (its flag, variable or setting), if any.
    configured: Option<u32>,
    /// The budget while thinking is on: the configured one, else Claude Code's largest,
    /// unless a host set another ([`Thinking::set_max_tokens`]).
    budget: std::sync::atomic::AtomicU32,
    on: std::sync::atomic::AtomicBool,
}

impl Thinking {
    /// On with `configured` as its budget, or off (turned on, it asks for
    /// [`ULTRATHINK_BUDGET`], as `alwaysThinkingEnabled` does).
    pub fn new(configured: Option<u32>) -> Thinking {
        Thinking {
            state: std::sync::Arc::new(ThinkingState {
                configured,
                budget: std::sync::atomic::AtomicU32::new(configured.unwrap_or(ULTRATHINK_BUDGET)),
                on: std::sync::atomic::AtomicBool::new(configured.is_some()),
            }),
        }
    }

    /// The run's budget now: `None` while thinking is off.
    pub fn budget(&self) -> Option<u32> {
        self.is_on()
            .then(|| self.state.budget.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// Sets the budget of the next requests, as an Agent SDK host's `set_max_thinking_tokens`
    /// does: `Some(0)` turns thinking off, `Some(n)` on with `n` tokens, `None` back to what
    /// the run started with.
    pub fn set_max_tokens(&self, max: Option<u32>) {
        use std::sync::atomic::Ordering::SeqCst;
        let (budget, on) = match max {
            None => (
                self.state.configured.unwrap_or(ULTRATHINK_BUDGET),
                self.state.configured.is_some(),
            ),
            Some(0) => (self.state.budget.load(SeqCst), false),
            Some(tokens) => (tokens, true),
        };
        self.state.budget.store(budget, SeqCst);
        self.state.on.store(on, SeqCst);
    }

    /// Whether thinking is on.
    pub fn is_on(&self) -> bool {
        self.state.on.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Turns thinking off if it was on, on if it was off; returns whether it is on now.
    pub fn toggle(&self) -> bool {
        !self
            .state
            .on
            .fetch_xor(true, std::sync::atomic::Ordering::SeqCst)
    }

    /// The thinking `request` asks for with the run's budget now ([`budget_for`]).
    pub fn budget_for(&self, request: &ModelRequest) -> Option<u32> {
        budget_for(self.budget(), request)
    }
}

impl Default for Thinking {
    /// Off.
    fn default() -> Self {
        Thinking::new(None)
    }
}

/// OpenAI's `reasoning_effort`, for the models the registry marks as taking one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningEffort {
    /// A thinking budget under 10,000 tokens (Claude Code's "think").
    Low,
    /// Under 31,999 tokens ("think hard").
    Medium,
    /// 31,999 tokens and more (`ultrathink`, `alwaysThinkingEnabled`).
    High,
}

impl ReasoningEffort {
    /// The level of a thinking budget, by Claude Code's three keywords: up to "think"'s
    /// 4,000 tokens and below "megathink"'s 10,000 is low, below "ultrathink"'s 31,999
    /// medium, and from there high.
    ///
    /// ```
    /// use cairn_llm::thinking::ReasoningEffort;
    ///
    /// assert_eq!(ReasoningEffort::for_budget(4_096), ReasoningEffort::Low);
    /// assert_eq!(ReasoningEffort::for_budget(16_000), ReasoningEffort::Medium);
    /// assert_eq!(ReasoningEffort::for_budget(31_999), ReasoningEffort::High);
    /// ```
    pub fn for_budget(budget: u32) -> Self {
        match budget {
            0..10_000 => ReasoningEffort::Low,
            10_000..ULTRATHINK_BUDGET => ReasoningEffort::Medium,
            _ => ReasoningEffort::High,
        }
    }

    /// The value as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ContentBlock, Message, Role};
    use pretty_assertions::assert_eq;

    use super::*;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "m".to_string(),
            system: cairn_protocol::SystemPrompt::default(),
            messages,
            tools: vec![],
            max_tokens: 64,
            text_only: false,
            stable_prefix: None,
        }
    }

    /// The keyword in the turn's prompt asks for the most thinking, for every request of
    /// that turn; a summary asks for none; without either, the configured budget.
    #[test]
    fn ultrathink_in_the_prompt_asks_for_the_most_thinking() {
        let mut request = request(vec![Message::user_text("hi")]);
        assert_eq!(budget_for(None, &request), None);
        assert_eq!(budget_for(Some(4096), &request), Some(4096));
        request.messages = vec![Message::user_text("Ultrathink: why does it fail?")];
        assert_eq!(budget_for(None, &request), Some(31_999));
        assert_eq!(budget_for(Some(50_000), &request), Some(50_000));
        request.messages.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "t".into(),
                name: "Read".into(),
                input: serde_json::json!({}),
            }],
        });
        request.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result("t", "ultrathink", false)],
        });
        assert_eq!(budget_for(None, &request), Some(31_999));
        request
            .messages
            .push(Message::user_text("thanks, now the next one"));
        assert_eq!(budget_for(None, &request), None);
        request.messages = vec![Message::user_text("ultrathinking is not the word")];
        assert_eq!(budget_for(None, &request), None);
        request.messages = vec![Message::user_text("ultrathink")];
        request.text_only = true;
        assert_eq!(budget_for(Some(4096), &request), None);
    }

    #[test]
    fn budgets_are_read_and_refused_below_the_minimum() {
        let parse = |text: &str| parse_budget(text, THINKING_VAR).map_err(|e| e.to_string());
        assert_eq!(parse("4096"), Ok(Some(4096)));
        assert_eq!(parse(" 0 "), Ok(None));
        assert_eq!(
            parse("100"),
            Err(
                "MAX_THINKING_TOKENS is `100`: expected a whole number of tokens, at least \
                 1024 (0 turns thinking off)"
                    .into()
            )
        );
        assert!(parse("lots").is_err());
    }

    #[test]
    fn every_budget_has_a_level() {
        let levels: Vec<&str> = [1024, 9_999, 10_000, 31_998, 31_999, 100_000]
            .map(|budget| ReasoningEffort::for_budget(budget).as_str())
            .into();
        assert_eq!(levels, ["low", "low", "medium", "medium", "high", "high"]);
    }
}
