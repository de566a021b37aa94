//! The built-in OpenAI-compatible providers a `--model <provider>/<model>` may name, and the
//! variables each reads.
//!
//! A prefix is a provider only when it is one of these names: any other id with a `/` (a
//! gateway's `anthropic/claude-sonnet-4-5` behind `ANTHROPIC_BASE_URL`) goes to the default
//! provider unchanged.

use crate::{ModelError, ProviderVariables, RetryPolicy};

use super::OpenAiConfig;

/// One built-in provider of the Chat Completions dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinProvider {
    /// What `--model` names it by: `openai`, `ollama`, …
    pub name: &'static str,
    /// The variable that holds its key (`OPENAI_API_KEY`, `OLLAMA_API_KEY`, …).
    pub key_variable: &'static str,
    /// Whether a request without a key is refused before it is sent
    /// ([`ModelError::MissingCredentials`]): true for hosted APIs, false for local servers,
    /// which usually need none.
    pub key_required: bool,
    /// The variable that says where it listens (`OPENAI_BASE_URL`, `OLLAMA_HOST`, …).
    pub base_url_variable: &'static str,
    /// Where it listens when that variable is unset: the hosted API, or the local server's
    /// usual port.
    pub default_base_url: &'static str,
    /// Added to the base URL from the variable (`OLLAMA_HOST` names the server, its
    /// compatible API is under `/v1`).
    pub path: &'static str,
}

const fn provider(
    name: &'static str,
    key_variable: &'static str,
    key_required: bool,
    base_url_variable: &'static str,
    default_base_url: &'static str,
    path: &'static str,
) -> BuiltinProvider {
    BuiltinProvider {
        name,
        key_variable,
        key_required,
        base_url_variable,
        default_base_url,
        path,
    }
}

/// Every built-in provider besides Anthropic's.
pub const BUILTIN_PROVIDERS: &[BuiltinProvider] = &[
    provider(
        "openai",
        "OPENAI_API_KEY",
        true,
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        "",
    ),
    provider(
        "ollama",
        "OLLAMA_API_KEY",
        false,
        "OLLAMA_HOST",
        "http://127.0.0.1:11434",
        "/v1",
    ),
    provider(
        "openrouter",
        "OPENROUTER_API_KEY",
        true,
        "OPENROUTER_BASE_URL",
        "https://openrouter.ai/api/v1",
        "",
    ),
    provider(
        "deepseek",
        "DEEPSEEK_API_KEY",
        true,
        "DEEPSEEK_BASE_URL",
        "https://api.deepseek.com",
        "",
    ),
    provider(
        "vllm",
        "VLLM_API_KEY",
        false,
        "VLLM_BASE_URL",
        "http://127.0.0.1:8000/v1",
        "",
    ),
    provider(
        "llamacpp",
        "LLAMACPP_API_KEY",
        false,
        "LLAMACPP_BASE_URL",
        "http://127.0.0.1:8080/v1",
        "",
    ),
    provider(
        "lmstudio",
        "LMSTUDIO_API_KEY",
        false,
        "LMSTUDIO_BASE_URL",
        "http://127.0.0.1:1234/v1",
        "",
    ),
];

/// The built-in provider `model` names with its prefix, and the model id after it; `None`
/// for a bare id or an id whose prefix is not a built-in provider's name.
///
/// ```
/// use cairn_llm::openai::providers::split_provider;
///
/// assert_eq!(split_provider("ollama/llama3.2").map(|(p, m)| (p.name, m)), Some(("ollama", "llama3.2")));
/// assert_eq!(split_provider("openrouter/deepseek/deepseek-r1").map(|(_, m)| m), Some("deepseek/deepseek-r1"));
/// assert_eq!(split_provider("anthropic/claude-sonnet-4-5"), None);
/// assert_eq!(split_provider("sonnet"), None);
/// ```
pub fn split_provider(model: &str) -> Option<(&'static BuiltinProvider, &str)> {
    let (prefix, rest) = model.trim().split_once('/')?;
    let provider = BUILTIN_PROVIDERS
        .iter()
        .find(|provider| provider.name.eq_ignore_ascii_case(prefix))?;
    (!rest.is_empty()).then_some((provider, rest))
}

impl BuiltinProvider {
    /// The client settings the variables (looked up through `var`; empty counts as unset)
    /// describe for this provider: its key (required or not), its base URL, and
    /// `CAIRN_MAX_RETRIES` and `API_TIMEOUT_MS` as for Anthropic.
    pub fn config(
        &'static self,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiConfig, ModelError> {
        let value = |name: &str| {
            var(name)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
        };
        let key = value(self.key_variable);
        if key.is_none() && self.key_required {
            return Err(ModelError::MissingCredentials {
                variables: std::slice::from_ref(&self.key_variable),
            });
        }
        let base_url = match value(self.base_url_variable) {
            // `OLLAMA_HOST` is often written without a scheme (`0.0.0.0:11434`).
            Some(url) if !url.contains("://") => format!("http://{url}{}", self.path),
            Some(url) => format!("{}{}", url.trim_end_matches('/'), self.path),
            None => format!("{}{}", self.default_base_url, self.path),
        };
        let mut config = OpenAiConfig::new(
            base_url,
            key,
            ProviderVariables {
                credential: self.key_variable,
                base_url: self.base_url_variable,
            },
        );
        config.model_prefix = Some(self.name);
        // OpenAI's own API refuses `max_tokens` for its reasoning models; the compatible
        // servers read `max_tokens`.
        if self.name == "openai" {
            config.max_tokens_field = "max_completion_tokens";
        }
        config.retry =
            RetryPolicy::from_max_retries(value(crate::retry::MAX_RETRIES_VAR).as_deref())?;
        if let Some(text) = value("API_TIMEOUT_MS") {
            let ms = text
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .ok_or_else(|| ModelError::InvalidSetting {
                    variable: "API_TIMEOUT_MS",
                    value: text.clone(),
                    expected: "a whole number of milliseconds above 0, such as 600000",
                })?;
            config.request_timeout = std::time::Duration::from_millis(ms);
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn config_for(model: &str, vars: &[(&str, &str)]) -> Result<(String, bool), String> {
        let (provider, _) = split_provider(model).ok_or("not a provider")?;
        provider
            .config(|name| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            })
            .map(|config| (config.base_url, config.api_key.is_some()))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn each_provider_reads_its_own_variables() {
        assert_eq!(
            config_for("openai/gpt-4o", &[("OPENAI_API_KEY", "k")]),
            Ok(("https://api.openai.com/v1".into(), true))
        );
        assert_eq!(
            config_for("openai/gpt-4o", &[("ANTHROPIC_API_KEY", "k")]),
            Err("no API credentials: set OPENAI_API_KEY".into())
        );
        assert_eq!(
            config_for("ollama/llama3", &[]),
            Ok(("http://127.0.0.1:11434/v1".into(), false))
        );
        assert_eq!(
            config_for("ollama/llama3", &[("OLLAMA_HOST", "0.0.0.0:9999")]),
            Ok(("http://0.0.0.0:9999/v1".into(), false))
        );
        assert_eq!(
            config_for("vllm/qwen", &[("VLLM_BASE_URL", "http://gpu:8000/v1/")]),
            Ok(("http://gpu:8000/v1".into(), false))
        );
        assert_eq!(
            config_for("deepseek/deepseek-reasoner", &[]),
            Err("no API credentials: set DEEPSEEK_API_KEY".into())
        );
    }
}
