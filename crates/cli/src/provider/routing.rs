//! One client for a run whose model may change provider mid-session (`/model`): each
//! request goes to the client of the provider its model names, built when first needed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_llm::openai::split_provider;
use cairn_llm::registry::Registry;
use cairn_llm::thinking::Thinking;
use cairn_llm::{ModelClient, ModelError, ModelEvent, ModelInfo, ModelRequest, ModelResponse};
use tokio_util::sync::CancellationToken;

use super::{ProviderClient, provider_client, run_variable};

/// The default provider's name, which its entry in `providers` (its `models`) goes by.
const DEFAULT_PROVIDER: &str = "anthropic";

/// How a variable of the process environment is read.
pub(super) type ProcessVariable = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What building a provider's client reads, kept for the whole run.
pub(super) struct RunView {
    /// The settings' `env`, which wins over the process's.
    pub env: BTreeMap<String, String>,
    /// The settings' `providers`, as the run's guards left them.
    pub providers: Option<serde_json::Value>,
    /// Each provider's registry, by its name, with the overrides of its `models`.
    pub registries: BTreeMap<String, Registry>,
    /// The `apiKeyHelper` command.
    pub key_helper: Option<String>,
    /// `alwaysThinkingEnabled: true`: models think before they answer.
    pub always_thinking: bool,
    /// `--max-thinking-tokens`, which wins over the variable and the setting.
    pub thinking_flag: Option<u32>,
    /// The run's thinking switch, built from the three above, shared by every client.
    pub thinking: Thinking,
    /// The process environment.
    pub process: ProcessVariable,
}

impl RunView {
    pub(super) fn var(&self, name: &str) -> Option<String> {
        run_variable(&self.env, name, |name| (self.process)(name))
    }

    /// The registry of the provider `model` goes to.
    pub(super) fn registry(&self, model: &str) -> Registry {
        self.registries
            .get(&self.route(model))
            .cloned()
            .unwrap_or_default()
    }

    /// Which provider `model` goes to: a configured one's name, a built-in one's, or
    /// `anthropic`.
    fn route(&self, model: &str) -> String {
        provider_name(self.providers.as_ref(), model)
            .unwrap_or(DEFAULT_PROVIDER)
            .to_owned()
    }
}

/// The provider `model` names with its prefix, a configured one (in `providers`) or a
/// built-in one; `None` for Anthropic's.
pub(super) fn provider_name<'a>(
    providers: Option<&serde_json::Value>,
    model: &'a str,
) -> Option<&'a str> {
    let prefix = model.trim().split_once('/').map(|(prefix, _)| prefix)?;
    let entry = providers.and_then(|providers| providers.get(prefix));
    // `providers.anthropic` with no `baseUrl` only describes the default provider's models
    // (`models`): `anthropic/…` stays a gateway's model id.
    let describes_the_default = prefix.eq_ignore_ascii_case(DEFAULT_PROVIDER)
        && entry.is_some_and(|entry| entry.get("baseUrl").is_none());
    if entry.is_some() && !describes_the_default {
        return Some(prefix);
    }
    split_provider(model).map(|(provider, _)| provider.name)
}

/// The routing client. See the module documentation.
pub(super) struct RoutingClient {
    view: RunView,
    clients: Mutex<Vec<(String, Arc<dyn ModelClient>)>>,
    /// The provider each model a response named came from: a server names its model
    /// without the `--model` prefix (`llama3.2` for `ollama/llama3.2`), and what is known of
    /// it (its cost, its window) is that provider's.
    answered_by: Mutex<BTreeMap<String, String>>,
}

impl RoutingClient {
    /// The client of a run that starts with `model`, whose provider is set up now.
    pub(super) fn start(view: RunView, model: &str) -> Result<ProviderClient, ModelError> {
        let first = provider_client(&view, model)?;
        let route = view.route(model);
        let router = RoutingClient {
            view,
            clients: Mutex::new(vec![(route, first.client)]),
            answered_by: Mutex::new(BTreeMap::new()),
        };
        Ok(ProviderClient {
            client: Arc::new(router),
            credential_variable: first.credential_variable,
            thinking: first.thinking,
        })
    }

    /// The client for `model`'s provider, built the first time it is named.
    fn client(&self, model: &str) -> Result<Arc<dyn ModelClient>, ModelError> {
        let route = self.view.route(model);
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, client)) = clients.iter().find(|(name, _)| *name == route) {
            return Ok(Arc::clone(client));
        }
        let client = provider_client(&self.view, model)?.client;
        clients.push((route, Arc::clone(&client)));
        Ok(client)
    }
}

#[async_trait]
impl ModelClient for RoutingClient {
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let client = self.client(&request.model)?;
        let response = client.stream(request, on_event, cancel).await?;
        let route = self.view.route(&request.model);
        if response.model != request.model && self.view.route(&response.model) != route {
            self.answered_by
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(response.model.clone(), route);
        }
        Ok(response)
    }

    /// The search of the provider `model` routes to.
    fn offers_web_search(&self, model: &str) -> bool {
        self.client(model)
            .is_ok_and(|client| client.offers_web_search(model))
    }

    async fn search_web(
        &self,
        request: &cairn_llm::WebSearchRequest,
        cancel: &CancellationToken,
    ) -> Result<cairn_llm::WebSearchAnswer, ModelError> {
        let client = self.client(&request.model)?;
        client.search_web(request, cancel).await
    }

    /// The answer of the provider's client when the run has one; otherwise the registry's,
    /// without setting a client up (a response names its model without a provider prefix).
    fn model_info(&self, model: &str) -> ModelInfo {
        let answered_by = self
            .answered_by
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(model)
            .cloned();
        let route = answered_by.unwrap_or_else(|| self.view.route(model));
        let client = self
            .clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .find(|(name, _)| *name == route)
            .map(|(_, client)| Arc::clone(client));
        match client {
            Some(client) => client.model_info(model),
            None => {
                let id = provider_name(self.view.providers.as_ref(), model)
                    .and_then(|provider| model.trim().strip_prefix(provider)?.strip_prefix('/'))
                    .unwrap_or(model);
                let mut info = self.view.registry(model).lookup(id);
                if info.context_window.is_none() {
                    info.context_window = cairn_llm::registry::context_window(model);
                }
                info
            }
        }
    }

    /// The calls read from text by every provider's client of the run.
    fn tool_calls_from_text(&self) -> u64 {
        self.clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(_, client)| client.tool_calls_from_text())
            .sum()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use cairn_protocol::{Message, SystemPrompt};
    use cairn_test_support::{Reply, ScriptedServer};
    use pretty_assertions::assert_eq;

    use super::*;

    fn request(model: &str) -> ModelRequest {
        ModelRequest {
            model: model.to_owned(),
            system: SystemPrompt::default(),
            messages: vec![Message::user_text("hi")],
            tools: vec![],
            max_tokens: 64,
            text_only: false,
            stable_prefix: None,
        }
    }

    /// `/model` from Claude to Ollama and back: each request reaches its provider's
    /// endpoint; a provider whose key is missing fails that request, naming the variable.
    #[tokio::test]
    async fn each_request_goes_to_the_provider_its_model_names() {
        let server = ScriptedServer::start();
        let url = server.url();
        let view = RunView {
            env: BTreeMap::new(),
            providers: None,
            registries: BTreeMap::new(),
            key_helper: None,
            always_thinking: false,
            thinking_flag: None,
            thinking: Thinking::default(),
            process: Arc::new(move |name: &str| match name {
                "ANTHROPIC_API_KEY" => Some("sk-ant".to_owned()),
                "ANTHROPIC_BASE_URL" | "OLLAMA_HOST" => Some(url.clone()),
                _ => None,
            }),
        };
        let client = RoutingClient::start(view, "sonnet").unwrap().client;
        let cancel = CancellationToken::new();
        for model in ["claude-sonnet-4-5", "ollama/llama3.2", "claude-haiku-4-5"] {
            server.push(Reply::text("ok"));
            let sent = client.stream(&request(model), &mut |_| {}, &cancel).await;
            assert!(sent.is_ok(), "{model}: {sent:?}");
        }
        let paths: Vec<(String, serde_json::Value)> = server
            .requests()
            .iter()
            .map(|r| (r.path.clone(), r.body["model"].clone()))
            .collect();
        assert_eq!(
            paths,
            vec![
                ("/v1/messages".into(), "claude-sonnet-4-5".into()),
                ("/v1/chat/completions".into(), "llama3.2".into()),
                ("/v1/messages".into(), "claude-haiku-4-5".into()),
            ]
        );
        let missing = client
            .stream(&request("openai/gpt-4o"), &mut |_| {}, &cancel)
            .await
            .map(|_| ())
            .map_err(|error| error.to_string());
        assert_eq!(
            missing,
            Err("no API credentials: set OPENAI_API_KEY".into())
        );
        assert_eq!(
            client.model_info("ollama/llama3.2").context_window,
            Some(128_000)
        );
    }
}
