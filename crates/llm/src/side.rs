//! Side requests: a short model call with no tools, beside the conversation.
//!
//! The context pipeline's summaries, memory recall and WebFetch's answer all need the same
//! thing: one question to a small, cheap model, answered as text, paid for and counted. They
//! go through [`SideModel`], over the session's own [`ModelClient`], so a side request uses the
//! same provider, credentials, retries and cancellation as the main loop. Each answered
//! request is added to the side model's [`SideTally`], which the engine empties into the
//! session's totals, so every kind of side request is counted in one place.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cairn_protocol::{Message, SideRequests, SystemPrompt, Usage};
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

/// What Anthropic bills for one server-side web search, in USD ($10 per 1,000).
pub const WEB_SEARCH_USD: f64 = 0.01;

/// The side requests answered since it was last emptied, by model: the one tally every
/// [`SideModel`] sharing it adds to (clones share it), for the engine to put in the turn's
/// totals.
#[derive(Debug, Clone, Default)]
pub struct SideTally {
    by_model: Arc<Mutex<BTreeMap<String, SideRequests>>>,
}

impl SideTally {
    /// Adds one request `model` answered; `cost_usd` is `None` when its prices are unknown.
    pub fn add(&self, model: &str, usage: Usage, cost_usd: Option<f64>, web_searches: u64) {
        let mut by_model = self
            .by_model
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = by_model
            .entry(model.to_string())
            .or_insert_with(|| SideRequests {
                model: model.to_string(),
                cost_usd: Some(0.0),
                ..SideRequests::default()
            });
        entry.requests += 1;
        entry.usage += usage;
        entry.cost_usd = entry.cost_usd.zip(cost_usd).map(|(sum, cost)| sum + cost);
        entry.web_search_requests += web_searches;
    }

    /// What was added since the last call, by model; the tally starts over.
    pub fn take(&self) -> Vec<SideRequests> {
        let mut by_model = self
            .by_model
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::take(&mut *by_model).into_values().collect()
    }
}

/// Sends side requests to one model through a client.
#[derive(Clone)]
pub struct SideModel {
    client: Arc<dyn ModelClient>,
    model: String,
    tally: SideTally,
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
            tally: SideTally::default(),
        }
    }

    /// The same model, adding what it answers to `tally` (the session's).
    pub fn with_tally(mut self, tally: SideTally) -> Self {
        self.tally = tally;
        self
    }

    /// The tally its answers are added to.
    pub fn tally(&self) -> &SideTally {
        &self.tally
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

    /// The model a response names, or the one asked when it names none.
    fn answering_model(&self, named: String) -> String {
        if named.is_empty() {
            self.model.clone()
        } else {
            named
        }
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
        let model = self.answering_model(response.model);
        let cost_usd = self.client.model_info(&model).cost_usd(&response.usage);
        self.tally.add(&model, response.usage, cost_usd, 0);
        Ok(SideAnswer {
            cost_usd,
            text,
            model,
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

/// A passage of a result the answer cites, as the provider quoted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The cited page's URL.
    pub url: String,
    /// The cited page's title.
    pub title: String,
    /// The words cited.
    pub cited_text: String,
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
    /// The passages the answer cites, in its order.
    pub citations: Vec<Citation>,
    /// How many searches the provider ran for it.
    pub web_search_requests: u64,
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
        let mut answer = self.client.search_web(&request, cancel).await?;
        answer.model = self.answering_model(std::mem::take(&mut answer.model));
        let searches = answer.web_search_requests as f64 * WEB_SEARCH_USD;
        let cost_usd = self
            .client
            .model_info(&answer.model)
            .cost_usd(&answer.usage)
            .map(|tokens| tokens + searches);
        self.tally.add(
            &answer.model,
            answer.usage,
            cost_usd,
            answer.web_search_requests,
        );
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_sums_by_model_and_starts_over_when_taken() {
        let tally = SideTally::default();
        let usage = |input_tokens| Usage {
            input_tokens,
            ..Usage::default()
        };
        tally.add("haiku", usage(10), Some(0.5), 0);
        tally.clone().add("haiku", usage(5), Some(0.25), 2);
        tally.add("local", usage(1), None, 0);
        let taken = tally.take();
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].model, "haiku");
        assert_eq!(taken[0].requests, 2);
        assert_eq!(taken[0].usage.input_tokens, 15);
        assert_eq!(taken[0].cost_usd, Some(0.75));
        assert_eq!(taken[0].web_search_requests, 2);
        assert_eq!(taken[1].cost_usd, None, "an unknown price stays unknown");
        assert!(tally.take().is_empty());
    }
}
