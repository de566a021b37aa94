//! Side requests: a short model call with no tools, beside the conversation.
//!
//! The context pipeline's summaries, memory recall and WebFetch's answer all need the same
//! thing: one question to a small, cheap model, answered as text, paid for and counted. They
//! go through [`SideModel`], over the session's own [`ModelClient`], so a side request uses the
//! same provider, credentials, retries and cancellation as the main loop.

use std::sync::Arc;

use cairn_protocol::{Message, SystemPrompt, Usage};
use tokio_util::sync::CancellationToken;

use crate::{ModelClient, ModelError, ModelRequest, models};

/// The variable that names the model for side requests, as Claude Code reads it.
pub const SMALL_MODEL_VARIABLE: &str = "ANTHROPIC_SMALL_FAST_MODEL";

/// The answer to a side request.
#[derive(Debug, Clone, PartialEq)]
pub struct SideAnswer {
    /// The answer's text blocks joined; empty when the model wrote none.
    pub text: String,
    /// The model that answered, as the provider named it in its response.
    pub model: String,
    /// What the request counted, for the session's totals.
    pub usage: Usage,
    /// `None` when the model's prices are unknown.
    pub cost_usd: Option<f64>,
}

/// Sends side requests to one model through a client.
#[derive(Clone)]
pub struct SideModel {
    client: Arc<dyn ModelClient>,
    model: String,
}

impl std::fmt::Debug for SideModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SideModel")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl SideModel {
    /// Side requests to `model` (an id or an alias, resolved here) through `client`.
    /// `opusplan` means its Sonnet: a side request is never in plan mode.
    pub fn new(client: Arc<dyn ModelClient>, model: impl Into<String>) -> Self {
        SideModel {
            client,
            // A side request has no plan mode: `opusplan` is its sonnet.
            model: models::model_for_mode(&model.into(), cairn_protocol::PermissionMode::Default),
        }
    }

    /// The side model a session uses: `small_model` when given (the variable
    /// [`SMALL_MODEL_VARIABLE`], read by the caller), else the small model of the family.
    pub fn small(client: Arc<dyn ModelClient>, small_model: Option<&str>) -> Self {
        SideModel::new(client, small_model.unwrap_or("haiku"))
    }

    /// The model id side requests go to, aliases resolved.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Asks `messages` under `system`, with no tools, for at most `max_tokens` of answer.
    /// Nothing streams to the user; the answer comes back whole.
    pub async fn ask(
        &self,
        system: &str,
        messages: Vec<Message>,
        max_tokens: u32,
        cancel: &CancellationToken,
    ) -> Result<SideAnswer, ModelError> {
        let request = ModelRequest {
            model: self.model.clone(),
            system: SystemPrompt {
                static_part: system.to_string(),
                dynamic_part: String::new(),
            },
            messages,
            tools: Vec::new(),
            max_tokens,
            text_only: true,
        };
        let response = self.client.stream(&request, &mut |_| {}, cancel).await?;
        let text = Message {
            role: cairn_protocol::Role::Assistant,
            content: response.content,
        }
        .text();
        Ok(SideAnswer {
            cost_usd: self
                .client
                .model_info(&response.model)
                .cost_usd(&response.usage),
            text,
            model: response.model,
            usage: response.usage,
        })
    }
}
