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
            stable_prefix: None,
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

/// A web search the provider runs on its own side (Anthropic's `web_search` server tool),
/// in a side request whose answer cites what it found.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSearchRequest {
    /// The model that searches and answers, aliases resolved.
    pub model: String,
    /// The search, in the model's words.
    pub query: String,
    /// Only results from these domains; empty for any.
    pub allowed_domains: Vec<String>,
    /// Never results from these domains.
    pub blocked_domains: Vec<String>,
    /// The most searches the provider may run for it.
    pub max_uses: u32,
    /// The most tokens the answer may hold.
    pub max_tokens: u32,
}

/// One result the provider's search returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The page's title, as the search gave it.
    pub title: String,
    /// The page's URL.
    pub url: String,
}

/// What a web search came back with.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSearchAnswer {
    /// The model's answer over the results.
    pub text: String,
    /// Every result, in the order the searches returned them.
    pub hits: Vec<SearchHit>,
    /// The model that answered.
    pub model: String,
    /// What the request counted.
    pub usage: Usage,
}

/// The error of a provider without a web search of its own.
pub fn web_search_unavailable() -> ModelError {
    ModelError::InvalidRequest {
        message: "WebSearch is not available with this provider".to_string(),
    }
}

impl SideModel {
    /// Whether the provider can search the web on its side ([`ModelClient::offers_web_search`]).
    pub fn offers_web_search(&self) -> bool {
        self.client.offers_web_search(&self.model)
    }

    /// Searches the web for `query` through the provider's server-side search, answered by
    /// this side model; at most `max_uses` searches.
    pub async fn search_web(
        &self,
        query: &str,
        allowed_domains: Vec<String>,
        blocked_domains: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<WebSearchAnswer, ModelError> {
        let request = WebSearchRequest {
            model: self.model.clone(),
            query: query.to_string(),
            allowed_domains,
            blocked_domains,
            max_uses: 5,
            max_tokens: 4096,
        };
        self.client.search_web(&request, cancel).await
    }
}
