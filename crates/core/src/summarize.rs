//! The summary request autocompact and `/compact` make: the conversation itself, sent once
//! more with the same system prompt and tools (so the cached prefix is reused) and the summary
//! instructions last, answered in text only. PreCompact hooks run first and may refuse.

use cairn_context::{Summarizer, Trigger};
use cairn_llm::{ModelClient, ModelEvent, ModelRequest, SideTally};
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{
    BoxFuture, ContentBlock, EventSender, Message, Role, SystemPrompt, ToolSpec, Usage,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::governance::Governance;

/// The longest summary asked for, in tokens.
const SUMMARY_MAX_TOKENS: u32 = 20_000;

/// Summarizes through the session's own client and request shape.
pub(crate) struct ConversationSummarizer<'a> {
    pub client: &'a dyn ModelClient,
    pub model: String,
    pub system: SystemPrompt,
    pub tools: Vec<ToolSpec>,
    pub governance: &'a Governance,
    pub events: &'a EventSender,
    pub cancel: &'a CancellationToken,
    /// What the summaries cost, by model, for the turn that made them.
    pub cost: SideTally,
}

/// The trigger as hooks and stream-json name it.
pub(crate) fn trigger_name(trigger: &Trigger) -> &'static str {
    match trigger {
        Trigger::Manual { .. } => "manual",
        Trigger::Auto | Trigger::Reactive => "auto",
    }
}

impl Summarizer for ConversationSummarizer<'_> {
    fn summarize<'a>(
        &'a self,
        conversation: Vec<Message>,
        instructions: String,
        trigger: &'a Trigger,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let custom = match trigger {
                Trigger::Manual { instructions } => instructions.clone(),
                Trigger::Auto | Trigger::Reactive => None,
            };
            let mut input = serde_json::Map::new();
            input.insert("trigger".into(), json!(trigger_name(trigger)));
            input.insert(
                "custom_instructions".into(),
                json!(custom.clone().unwrap_or_default()),
            );
            if let Some(outcome) = self
                .governance
                .run_hooks(
                    HookEvent::PreCompact,
                    Some(trigger_name(trigger)),
                    input,
                    self.events,
                    self.cancel,
                )
                .await
                && let Some(reason) = outcome.block.or(outcome.stop)
            {
                return Err(format!("a PreCompact hook stopped it: {reason}"));
            }
            let request = ModelRequest {
                model: self.model.clone(),
                system: self.system.clone(),
                messages: with_instructions(conversation, instructions),
                tools: self.tools.clone(),
                max_tokens: SUMMARY_MAX_TOKENS,
                text_only: true,
                stable_prefix: None,
            };
            // A summary interrupted part-way is billed too: what it had reported counts.
            let mut interrupted = None;
            let streamed = self
                .client
                .stream(
                    &request,
                    &mut |event| {
                        if let ModelEvent::Interrupted(partial) = event {
                            interrupted = Some(partial);
                        }
                    },
                    self.cancel,
                )
                .await;
            let response = match streamed {
                Ok(response) => response,
                Err(err) => {
                    if let Some(partial) = interrupted {
                        self.add_cost(&partial.model, partial.usage);
                    }
                    return Err(err.to_string());
                }
            };
            self.add_cost(&response.model, response.usage);
            let text = Message {
                role: Role::Assistant,
                content: response.content,
            }
            .text();
            if text.trim().is_empty() {
                return Err("the model answered with an empty summary".into());
            }
            Ok(text)
        })
    }
}

impl ConversationSummarizer<'_> {
    /// Adds one summary request's counts and cost.
    fn add_cost(&self, model: &str, usage: Usage) {
        let model = if model.is_empty() { &self.model } else { model };
        let cost_usd = self.client.model_info(model).cost_usd(&usage);
        self.cost.add(model, usage, cost_usd, 0);
    }
}

/// The conversation with the instructions as the last user words: appended to the last
/// message when it is the user's (tool results), a message of their own otherwise.
fn with_instructions(mut conversation: Vec<Message>, instructions: String) -> Vec<Message> {
    match conversation.last_mut() {
        Some(last) if last.role == Role::User => {
            last.content.push(ContentBlock::text(instructions))
        }
        _ => conversation.push(Message::user_text(instructions)),
    }
    conversation
}
