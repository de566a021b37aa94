//! The model provider a run talks to, built once the settings are loaded.
//!
//! A provider reads its credential and base URL from the environment as a run sees it: cairn's
//! own environment with the settings' `env` laid over it. Claude Code applies `env` to its
//! process environment at start, so a variable the settings set wins over the same variable
//! exported in the shell; cairn gives the provider the same view without changing its own
//! process environment.
//!
//! The provider is Anthropic's (`ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`, else the
//! `apiKeyHelper` setting's command; `ANTHROPIC_BASE_URL`) unless the model names a built-in
//! OpenAI-compatible provider as its prefix (`openai/gpt-4o`, `ollama/llama3.2`; see
//! [`cairn_llm::openai::providers`]), which then reads its own variables from the same view
//! (`OPENAI_API_KEY` and `OPENAI_BASE_URL`, `OLLAMA_HOST`, …) and needs no Anthropic
//! credential. Any other id with a `/` is the default provider's.
//!
//! Every client gets its provider's view of the model registry: the table with the
//! `models` of the provider's entry in the settings' `providers` laid over it (typed and
//! checked when the settings load, so a bad field names its file), and the run's one
//! thinking switch ([`Thinking`]), which the interactive UI's Tab turns on and off.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_config::LoadedSettings;
use cairn_llm::credential::{API_KEY_HELPER_TTL_VAR, CredentialSource, KeyHelper};
use cairn_llm::openai::split_provider;
use cairn_llm::registry::{CapabilityOverride, ModelOverride, Registry};
use cairn_llm::thinking::{self, Thinking};
use cairn_llm::{AnthropicClient, AnthropicConfig, ModelClient, ModelError, OpenAiClient};
use routing::{RoutingClient, RunView};

mod routing;

/// The client a run sends its requests through, and where its credential came from.
pub struct ProviderClient {
    pub client: Arc<dyn ModelClient>,
    /// The variable the credential was read from, or `apiKeyHelper` (never its value): what
    /// `/doctor` checks and what stream-json's `init` message reports as `apiKeySource`.
    pub credential_variable: &'static str,
    /// The run's thinking switch, which every provider's client reads for each request: the
    /// interactive UI's Tab turns it on and off.
    pub thinking: Thinking,
}

/// The model client `settings` and cairn's environment describe. Fails when the provider's
/// credential is missing, naming the variables it reads, or when one of its variables holds
/// something it cannot use.
///
/// The client routes each request by its model: `/model ollama/llama3.2` mid-session goes to
/// Ollama, `/model sonnet` back to Anthropic. The provider of `model` is set up now (its
/// errors stop the run before it starts); another one when a request first names it.
///
/// `max_thinking_tokens` is `--max-thinking-tokens` (0 for no thinking).
pub fn model_client(
    settings: &LoadedSettings,
    model: &str,
    max_thinking_tokens: Option<u32>,
) -> anyhow::Result<ProviderClient> {
    let mut view = RunView {
        env: settings.env().clone(),
        providers: settings.get("providers").cloned(),
        registries: registries(&settings.settings().providers),
        key_helper: settings.settings().api_key_helper.clone(),
        always_thinking: settings.get("alwaysThinkingEnabled")
            == Some(&serde_json::Value::Bool(true)),
        thinking_flag: max_thinking_tokens,
        thinking: Thinking::default(),
        process: Arc::new(|name: &str| std::env::var(name).ok()),
    };
    view.thinking = Thinking::new(thinking_budget(&view)?);
    Ok(RoutingClient::start(view, model)?)
}

/// Each provider's view of the model registry: the table with the `models` of its entry in
/// the settings' `providers` laid over it (`providers.anthropic.models` for Claude's).
fn registries(
    providers: &BTreeMap<String, cairn_config::ProviderSettings>,
) -> BTreeMap<String, Registry> {
    providers
        .iter()
        .map(|(name, provider)| {
            let overrides = provider
                .models
                .iter()
                .map(|(id, model)| (id.clone(), model_override(model)))
                .collect();
            (name.clone(), Registry::with_overrides(overrides))
        })
        .collect()
}

/// The registry's form of one `providers.<name>.models.<id>` entry.
fn model_override(model: &cairn_config::ModelSettings) -> ModelOverride {
    let price = |price: Option<cairn_config::UsdPerMtok>| price.map(|price| price.0);
    ModelOverride {
        context_window: model.context_window.map(std::num::NonZeroU64::get),
        max_output_tokens: model.max_output_tokens.map(std::num::NonZeroU32::get),
        input_price: price(model.input_price),
        output_price: price(model.output_price),
        cache_write_price: price(model.cache_write_price),
        cache_read_price: price(model.cache_read_price),
        capabilities: CapabilityOverride {
            tools: model.tools,
            images: model.images,
            prompt_caching: model.prompt_caching,
            reasoning: model.reasoning,
            reasoning_replay: model.reasoning_replay,
            reasoning_effort: model.reasoning_effort,
            nine_char_tool_ids: model.nine_char_tool_ids,
        },
    }
}

/// Builds the client of the provider `model` names, reading variables as `view` sees them.
fn provider_client(view: &RunView, model: &str) -> Result<ProviderClient, ModelError> {
    let var = |name: &str| view.var(name);
    let models = view.registry(model);
    let thinking = &view.thinking;
    if let Some(client) = custom_client(view.providers.as_ref(), model, &var, &models, thinking)? {
        return Ok(client);
    }
    if let Some(client) = compatible_client(model, &var, &models, thinking)? {
        return Ok(client);
    }
    let helper = key_helper(view.key_helper.as_deref(), &var)?;
    let mut config = AnthropicConfig::from_vars_or_source(var, helper)?;
    config.thinking = view.thinking.clone();
    config.models = models;
    anthropic_client(config)
}

/// The run's thinking budget: `--max-thinking-tokens` wins over `MAX_THINKING_TOKENS`, which
/// wins over `alwaysThinkingEnabled` (Claude Code's largest budget); 0 is none.
fn thinking_budget(view: &RunView) -> Result<Option<u32>, ModelError> {
    if let Some(tokens) = view.thinking_flag {
        return Ok((tokens > 0).then_some(tokens));
    }
    if let Some(text) = view.var(thinking::THINKING_VAR) {
        return thinking::parse_budget(&text, thinking::THINKING_VAR);
    }
    Ok(view.always_thinking.then_some(thinking::ULTRATHINK_BUDGET))
}

/// The client of the custom provider (`providers` in the settings) `model`'s prefix names:
/// `{"kind": "openai", "baseUrl": …, "apiKeyEnv": …, "headers": {…}}`. A project's settings
/// reach here only when the user approved them (`apply_project_rule` guards `baseUrl`,
/// `apiKeyEnv` and `headers`: a project may not point a credential at a URL of its choosing).
///
/// An entry named after a built-in provider with no `baseUrl` only adds to it (its
/// `smallModel`): the built-in provider serves it.
fn custom_client(
    providers: Option<&serde_json::Value>,
    model: &str,
    var: &impl Fn(&str) -> Option<String>,
    models: &Registry,
    thinking: &Thinking,
) -> Result<Option<ProviderClient>, ModelError> {
    let Some((prefix, _)) = model.trim().split_once('/') else {
        return Ok(None);
    };
    let Some(entry) = providers
        .and_then(serde_json::Value::as_object)
        .and_then(|providers| providers.get(prefix))
    else {
        return Ok(None);
    };
    // Only adds to a built-in provider (or describes Claude's models): no client of its own.
    if entry.get("baseUrl").is_none() && split_provider(model).is_some()
        || routing::provider_name(providers, model).is_none()
    {
        return Ok(None);
    }
    let setting = |field: &str| format!("providers.{prefix}.{field}");
    // Names live for the whole run: the error messages that name them are built from them.
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    let kind = entry["kind"].as_str().unwrap_or("openai");
    if kind != "openai" {
        return Err(ModelError::InvalidSetting {
            variable: leak(setting("kind")),
            value: kind.to_owned(),
            expected: "`openai` (Chat Completions), the only kind of custom provider",
        });
    }
    let Some(base_url) = entry["baseUrl"].as_str() else {
        return Err(ModelError::InvalidSetting {
            variable: leak(setting("baseUrl")),
            value: String::new(),
            expected: "the provider's URL, such as http://host:8000/v1",
        });
    };
    let key_variable = entry["apiKeyEnv"]
        .as_str()
        .map(|name| leak(name.to_owned()));
    let api_key = match key_variable {
        Some(name) => match var(name).filter(|key| !key.trim().is_empty()) {
            Some(key) => Some(key.trim().to_owned()),
            None => {
                return Err(ModelError::MissingCredentials {
                    variables: Box::leak(vec![name].into_boxed_slice()),
                });
            }
        },
        None => None,
    };
    let variables = cairn_llm::ProviderVariables {
        credential: key_variable.unwrap_or_else(|| leak(setting("headers"))),
        base_url: leak(setting("baseUrl")),
    };
    let mut config = cairn_llm::OpenAiConfig::new(base_url, api_key, variables);
    config.model_prefix = Some(leak(prefix.to_owned()));
    config.models = models.clone();
    config.thinking = thinking.clone();
    config.headers = entry["headers"]
        .as_object()
        .map(|headers| {
            headers
                .iter()
                .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(ProviderClient {
        client: Arc::new(OpenAiClient::new(config)?),
        credential_variable: key_variable.unwrap_or("none"),
        thinking: thinking.clone(),
    }))
}

/// The client of the OpenAI-compatible provider `model`'s prefix names, or `None` when it
/// names none (the model is Anthropic's, or a gateway's id with a `/`).
fn compatible_client(
    model: &str,
    var: &impl Fn(&str) -> Option<String>,
    models: &Registry,
    thinking: &Thinking,
) -> Result<Option<ProviderClient>, ModelError> {
    let Some((provider, _)) = split_provider(model) else {
        return Ok(None);
    };
    let mut config = provider.config(var)?;
    config.models = models.clone();
    config.thinking = thinking.clone();
    // stream-json's `apiKeySource`: the variable, or `none` for a local server without one.
    let credential_variable = if config.api_key.is_some() {
        provider.key_variable
    } else {
        "none"
    };
    Ok(Some(ProviderClient {
        client: Arc::new(OpenAiClient::new(config)?),
        credential_variable,
        thinking: thinking.clone(),
    }))
}

/// The model side requests (memory recall) go to for a run of `model`: on Anthropic the
/// small model `anthropic_small` names (`ANTHROPIC_SMALL_FAST_MODEL`, else haiku); on another
/// provider, which has no haiku, the `smallModel` of its entry in the settings' `providers`
/// (`{"ollama": {"smallModel": "qwen2.5-coder:1.5b"}}`, sent to the same provider), else the
/// main model itself.
pub fn small_model(
    settings: &LoadedSettings,
    model: &str,
    anthropic_small: Option<String>,
) -> Option<String> {
    let providers = settings.get("providers");
    let Some(provider) = routing::provider_name(providers, model) else {
        return anthropic_small;
    };
    let configured = providers
        .and_then(|providers| providers.get(provider))
        .and_then(|entry| entry.get("smallModel"))
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|small| !small.is_empty());
    Some(match configured {
        Some(small) if small.starts_with(&format!("{provider}/")) => small.to_owned(),
        Some(small) => format!("{provider}/{small}"),
        None => model.to_owned(),
    })
}

/// The `apiKeyHelper` command, run in the working directory, its key kept for
/// `CLAUDE_CODE_API_KEY_HELPER_TTL_MS`. It runs when the first request needs the key (the
/// interactive UI has asked about the folder by then), and only when no credential variable
/// is set.
fn key_helper(
    command: Option<&str>,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn CredentialSource>>, ModelError> {
    let Some(command) = command.map(str::trim).filter(|command| !command.is_empty()) else {
        return Ok(None);
    };
    let ttl = KeyHelper::ttl_from(var(API_KEY_HELPER_TTL_VAR).as_deref())?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    Ok(Some(Arc::new(KeyHelper::new(command, cwd, ttl))))
}

/// The value of `name` as a run sees it: the settings' `env` first, then `process`. A value
/// the settings set wins even when it is empty, as it would once applied to the process.
fn run_variable(
    settings_env: &BTreeMap<String, String>,
    name: &str,
    process: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    settings_env.get(name).cloned().or_else(|| process(name))
}

/// The provider's client, with every variable looked up through `var`.
#[cfg(test)]
fn client_for(
    var: impl Fn(&str) -> Option<String>,
    helper: Option<Arc<dyn CredentialSource>>,
) -> Result<ProviderClient, ModelError> {
    anthropic_client(AnthropicConfig::from_vars_or_source(var, helper)?)
}

/// The Anthropic client for `config`.
fn anthropic_client(config: AnthropicConfig) -> Result<ProviderClient, ModelError> {
    let credential_variable = config.credential.variable();
    let thinking = config.thinking.clone();
    Ok(ProviderClient {
        client: Arc::new(AnthropicClient::new(config)?),
        credential_variable,
        thinking,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::path::Path;

    use cairn_config::SettingsLoader;
    use cairn_llm::{ModelEvent, ModelRequest};
    use cairn_protocol::{Message, SystemPrompt};
    use cairn_test_support::{Reply, ScriptedServer};
    use pretty_assertions::assert_eq;
    use tokio_util::sync::CancellationToken;

    use super::*;

    /// The settings of a project whose `.claude/settings.json` is `settings`, for a user with
    /// no settings of their own.
    fn load(dir: &Path, settings: serde_json::Value) -> LoadedSettings {
        let (home, project) = (dir.join("home"), dir.join("project"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
        SettingsLoader::new(home, project).load().unwrap()
    }

    /// [`model_client`] as it would run in a process whose environment is `process`.
    fn client_in(
        settings: &LoadedSettings,
        process: &[(&str, &str)],
    ) -> Result<ProviderClient, String> {
        let process = |name: &str| {
            process
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        };
        client_for(|name| run_variable(settings.env(), name, process), None)
            .map_err(|error| error.to_string())
    }

    /// Sends one request and returns the credential header the server received.
    async fn key_received(provider: &ProviderClient, server: &ScriptedServer) -> Option<String> {
        server.push(Reply::text("hello"));
        let request = ModelRequest {
            model: "claude-sonnet-4-5".to_string(),
            system: SystemPrompt::default(),
            messages: vec![Message::user_text("hi")],
            tools: vec![],
            max_tokens: 64,
            text_only: false,
            stable_prefix: None,
        };
        let mut events = Vec::new();
        let sent = provider
            .client
            .stream(
                &request,
                &mut |event: ModelEvent| events.push(event),
                &CancellationToken::new(),
            )
            .await;
        assert!(sent.is_ok(), "the request failed: {:?}", sent.err());
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        requests[0].header("x-api-key").map(str::to_string)
    }

    /// A key and a base URL that only the settings' `env` holds reach the provider: the
    /// request goes to that URL with that key, whatever cairn's own environment says.
    #[tokio::test]
    async fn the_settings_env_supplies_the_key_and_the_base_url() {
        let dir = tempfile::tempdir().unwrap();
        let server = ScriptedServer::start();
        let settings = load(
            dir.path(),
            serde_json::json!({"env": {
                "ANTHROPIC_API_KEY": "key-from-settings",
                "ANTHROPIC_BASE_URL": server.url(),
            }}),
        );
        let provider = model_client(&settings, "claude-sonnet-4-5", None).unwrap();
        assert_eq!(provider.credential_variable, "ANTHROPIC_API_KEY");
        let received = key_received(&provider, &server).await;
        assert!(
            received.as_deref() == Some("key-from-settings"),
            "the server did not receive the key from the settings"
        );
    }

    /// As in Claude Code, a variable the settings set wins over the shell's; one they do not
    /// set comes from the shell.
    #[tokio::test]
    async fn the_settings_env_wins_over_the_process_environment() {
        let dir = tempfile::tempdir().unwrap();
        let server = ScriptedServer::start();
        let settings = load(
            dir.path(),
            serde_json::json!({"env": {"ANTHROPIC_BASE_URL": server.url()}}),
        );
        let provider = client_in(
            &settings,
            &[
                ("ANTHROPIC_API_KEY", "key-from-shell"),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/not-used"),
            ],
        )
        .unwrap();
        let received = key_received(&provider, &server).await;
        assert!(
            received.as_deref() == Some("key-from-shell"),
            "the server did not receive the key from the shell"
        );
    }

    /// An auth token in the settings is a credential too, and the run reports it by name.
    #[test]
    fn an_auth_token_in_the_settings_env_is_reported_by_its_variable() {
        let dir = tempfile::tempdir().unwrap();
        let settings = load(
            dir.path(),
            serde_json::json!({"env": {"ANTHROPIC_AUTH_TOKEN": "token-from-settings"}}),
        );
        let variable = client_in(&settings, &[]).map(|provider| provider.credential_variable);
        assert_eq!(variable, Ok("ANTHROPIC_AUTH_TOKEN"));
    }

    /// Side requests go to the provider's own small model where its settings name one, in
    /// either spelling, else to the main model; Anthropic keeps its own.
    #[test]
    fn side_requests_use_the_providers_small_model() {
        let dir = tempfile::tempdir().unwrap();
        let settings = load(
            dir.path(),
            serde_json::json!({"providers": {
                "ollama": {"smallModel": "qwen2.5-coder:1.5b"},
                "openrouter": {"smallModel": "openrouter/meta-llama/llama-3.2-3b"},
                "mylab": {"kind": "openai", "baseUrl": "http://lab/v1", "smallModel": "tiny"},
            }}),
        );
        let small = |model: &str| small_model(&settings, model, Some("claude-haiku-4-5".into()));
        let cases = [
            ("sonnet", "claude-haiku-4-5"),
            ("anthropic/claude-sonnet-4-5", "claude-haiku-4-5"),
            ("ollama/llama3.2", "ollama/qwen2.5-coder:1.5b"),
            (
                "openrouter/qwen/qwen3-coder",
                "openrouter/meta-llama/llama-3.2-3b",
            ),
            ("mylab/big", "mylab/tiny"),
            ("openai/gpt-4o", "openai/gpt-4o"),
        ];
        for (model, expected) in cases {
            assert_eq!(small(model).as_deref(), Some(expected), "{model}");
        }
    }

    /// With no credential anywhere, the error names the variables the provider reads.
    #[test]
    fn a_missing_key_names_the_variables_the_provider_reads() {
        let dir = tempfile::tempdir().unwrap();
        let settings = load(dir.path(), serde_json::json!({"model": "opus"}));
        assert_eq!(
            client_in(&settings, &[]).map(|provider| provider.credential_variable),
            Err(ModelError::MissingAnthropicCredentials.to_string())
        );
    }

    /// An empty value in the settings unsets the shell's, as it would once applied to the
    /// process; and a bad base URL there is named by its variable.
    #[test]
    fn values_in_the_settings_env_replace_the_shells_even_when_empty_or_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let emptied = load(
            &dir.path().join("emptied"),
            serde_json::json!({"env": {"ANTHROPIC_API_KEY": ""}}),
        );
        assert_eq!(
            client_in(&emptied, &[("ANTHROPIC_API_KEY", "key-from-shell")])
                .map(|provider| provider.credential_variable),
            Err(ModelError::MissingAnthropicCredentials.to_string())
        );
        let wrong = load(
            &dir.path().join("wrong"),
            serde_json::json!({"env": {"ANTHROPIC_BASE_URL": "api.example.com"}}),
        );
        assert_eq!(
            client_in(&wrong, &[("ANTHROPIC_API_KEY", "key-from-shell")])
                .map(|provider| provider.credential_variable),
            Err(
                "ANTHROPIC_BASE_URL is `api.example.com`: expected an http or https URL such \
                 as https://api.anthropic.com"
                    .to_string()
            )
        );
    }
}
