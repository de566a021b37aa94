//! What the Anthropic client needs to know, and where it reads it: the credential, the base
//! URL, retries and timeouts, from the environment (or variables supplied in its place).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::HeaderName;

use super::request_body::PromptCaching;
use crate::credential::CredentialSource;
pub(crate) use crate::transport::AuthHeaders;
use crate::transport::sensitive;
use crate::{ModelError, ProviderVariables, RetryPolicy};

/// Where requests go unless `ANTHROPIC_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API key, sent as `x-api-key`.
pub const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// A bearer token, read when there is no API key.
pub const AUTH_TOKEN_VAR: &str = "ANTHROPIC_AUTH_TOKEN";
/// Where the credential is read from, in the order it is looked for.
pub const CREDENTIAL_VARS: &[&str] = &[API_KEY_VAR, AUTH_TOKEN_VAR];
/// The API's root, when it is not [`DEFAULT_BASE_URL`].
pub const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";
/// Set to anything but `0` or `false` to send no prompt-caching breakpoints.
const DISABLE_CACHING_VAR: &str = "DISABLE_PROMPT_CACHING";

/// The longest one attempt may take, in milliseconds.
const API_TIMEOUT_VAR: &str = "API_TIMEOUT_MS";
pub use crate::thinking::THINKING_VAR;
/// Claude Code's default for `API_TIMEOUT_MS`: ten minutes.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// The largest response body read. The longest real answer (128k output tokens, each delta
/// wrapped in its event) is tens of megabytes.
const DEFAULT_MAX_RESPONSE_BYTES: u64 = 256 * 1024 * 1024;

/// How cairn proves who it is to the API. `Debug` never shows the secret.
#[derive(Clone)]
pub enum Credential {
    /// An API key, sent as `x-api-key` (from `ANTHROPIC_API_KEY`).
    ApiKey(String),
    /// A bearer token, sent as `Authorization: Bearer …` (from `ANTHROPIC_AUTH_TOKEN`), as
    /// gateways and proxies in front of the API expect.
    AuthToken(String),
    /// A key asked of a source before each request and again after a 401 (`apiKeyHelper`),
    /// sent both as `x-api-key` and as a bearer token, as Claude Code sends a helper's key.
    Source(Arc<dyn CredentialSource>),
}

impl Credential {
    /// Where this credential is read from (an environment variable, or the setting of a
    /// source); error messages name it.
    pub fn variable(&self) -> &'static str {
        match self {
            Credential::ApiKey(_) => API_KEY_VAR,
            Credential::AuthToken(_) => AUTH_TOKEN_VAR,
            Credential::Source(source) => source.setting(),
        }
    }

    /// The headers of a fixed credential; `None` for a source, whose key is asked for per
    /// request ([`source_headers`]).
    pub(crate) fn fixed_headers(&self) -> Result<Option<AuthHeaders>, ModelError> {
        let variable = self.variable();
        Ok(Some(match self {
            Credential::ApiKey(key) => vec![sensitive(
                HeaderName::from_static("x-api-key"),
                key.clone(),
                variable,
            )?],
            Credential::AuthToken(token) => vec![sensitive(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {token}"),
                variable,
            )?],
            Credential::Source(_) => return Ok(None),
        }))
    }
}

/// The headers that carry a key from a source named `setting`.
pub(crate) fn source_headers(key: &str, setting: &'static str) -> Result<AuthHeaders, ModelError> {
    Ok(vec![
        sensitive(
            HeaderName::from_static("x-api-key"),
            key.to_owned(),
            setting,
        )?,
        sensitive(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {key}"),
            setting,
        )?,
    ])
}

impl PartialEq for Credential {
    fn eq(&self, other: &Credential) -> bool {
        match (self, other) {
            (Credential::ApiKey(a), Credential::ApiKey(b))
            | (Credential::AuthToken(a), Credential::AuthToken(b)) => a == b,
            (Credential::Source(a), Credential::Source(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Credential {}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Credential::ApiKey(_) => "ApiKey",
            Credential::AuthToken(_) => "AuthToken",
            Credential::Source(source) => return f.debug_tuple("Source").field(source).finish(),
        };
        f.debug_tuple(kind).field(&"<redacted>").finish()
    }
}

/// Everything [`AnthropicClient`](super::AnthropicClient) needs: where to send requests, how to authenticate, how
/// to retry, how long to wait.
///
/// ```
/// use cairn_llm::{AnthropicConfig, Credential};
///
/// let config = AnthropicConfig::new(Credential::ApiKey("sk-ant-secret".to_string()));
/// assert!(!format!("{config:?}").contains("secret"));
/// ```
#[derive(Clone)]
pub struct AnthropicConfig {
    /// The API's root, without `/v1/messages`.
    pub base_url: String,
    /// How requests authenticate: a key, a bearer token, or the `apiKeyHelper` command.
    pub credential: Credential,
    /// How many times, and after what waits, a failed request is sent again
    /// (`CAIRN_MAX_RETRIES`).
    pub retry: RetryPolicy,
    /// The limit on opening a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// The longest silence accepted while waiting for response headers or between two chunks
    /// of a stream. The API sends `ping` events, so silence this long means a dead stream.
    pub idle_timeout: Duration,
    /// The longest one attempt may take, headers to `message_stop` (`API_TIMEOUT_MS`, as in
    /// Claude Code). Long answers stream for minutes, so it is generous; it exists for a
    /// stream that keeps sending (pings, deltas) and never ends, which the idle timeout never
    /// catches.
    pub request_timeout: Duration,
    /// The most bytes of one response body read before giving up on it: far above any real
    /// answer, so that a server streaming deltas forever cannot fill the memory.
    pub max_response_bytes: u64,
    /// Whether requests carry prompt-caching breakpoints.
    pub prompt_caching: PromptCaching,
    /// Extended thinking of up to the switch's budget per answer (`MAX_THINKING_TOKENS`, or
    /// the `alwaysThinkingEnabled` setting), while it is on.
    pub thinking: crate::thinking::Thinking,
    /// The model registry with the settings' overrides of Claude's models
    /// (`providers.anthropic.models`).
    pub models: crate::registry::Registry,
}

impl AnthropicConfig {
    /// The defaults (the public API, [`RetryPolicy::default`], a 15 s connect timeout, a
    /// 5 minute idle timeout, a 10 minute request timeout, a 256 MiB response cap) with
    /// `credential`.
    pub fn new(credential: Credential) -> Self {
        AnthropicConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            credential,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(300),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            prompt_caching: PromptCaching::Enabled,
            thinking: crate::thinking::Thinking::default(),
            models: crate::registry::Registry::default(),
        }
    }

    /// The configuration the environment describes: `ANTHROPIC_API_KEY` (or else
    /// `ANTHROPIC_AUTH_TOKEN`), `ANTHROPIC_BASE_URL`, `CAIRN_MAX_RETRIES` and
    /// `API_TIMEOUT_MS`.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with variables looked up through `var`, so that callers
    /// and tests can supply them from somewhere else. Empty values count as unset.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        Self::from_vars_or_source(var, None)
    }

    /// [`from_vars`](Self::from_vars), with `source` (the `apiKeyHelper`) as the credential
    /// when neither credential variable is set.
    pub fn from_vars_or_source(
        var: impl Fn(&str) -> Option<String>,
        source: Option<Arc<dyn CredentialSource>>,
    ) -> Result<Self, ModelError> {
        let value = |name: &str| {
            var(name)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
        };
        let credential = match (value(API_KEY_VAR), value(AUTH_TOKEN_VAR), source) {
            (Some(key), _, _) => Credential::ApiKey(key),
            (None, Some(token), _) => Credential::AuthToken(token),
            (None, None, Some(source)) => Credential::Source(source),
            (None, None, None) => {
                return Err(ModelError::MissingAnthropicCredentials);
            }
        };
        let mut config = AnthropicConfig::new(credential);
        if let Some(base_url) = value(BASE_URL_VAR) {
            config.base_url = base_url;
        }
        config.retry =
            RetryPolicy::from_max_retries(value(crate::retry::MAX_RETRIES_VAR).as_deref())?;
        if value(DISABLE_CACHING_VAR).is_some_and(|value| value != "0" && value != "false") {
            config.prompt_caching = PromptCaching::Disabled;
        }
        if let Some(text) = value(THINKING_VAR) {
            config.thinking =
                crate::thinking::Thinking::new(crate::thinking::parse_budget(&text, THINKING_VAR)?);
        }
        if let Some(text) = value(API_TIMEOUT_VAR) {
            let ms = text
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .ok_or_else(|| ModelError::InvalidSetting {
                    variable: API_TIMEOUT_VAR,
                    value: text.clone(),
                    expected: "a whole number of milliseconds above 0, such as 600000",
                })?;
            config.request_timeout = Duration::from_millis(ms);
        }
        Ok(config)
    }

    /// The variables this configuration's errors name: the credential's and the base URL's.
    pub(crate) fn variables(&self) -> ProviderVariables {
        ProviderVariables {
            credential: self.credential.variable(),
            base_url: BASE_URL_VAR,
        }
    }

    /// The messages endpoint under `base_url`.
    pub(crate) fn messages_url(&self) -> Result<Url, ModelError> {
        crate::transport::endpoint(
            &self.base_url,
            "/v1/messages",
            BASE_URL_VAR,
            "an http or https URL such as https://api.anthropic.com",
        )
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("credential", &self.credential)
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn credentials_come_from_the_environment() {
        let config = AnthropicConfig::from_vars(vars(&[("ANTHROPIC_API_KEY", " sk-ant-1\n")]));
        assert_eq!(
            config.map(|c| c.credential).ok(),
            Some(Credential::ApiKey("sk-ant-1".to_string()))
        );
        let config = AnthropicConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", ""),
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
        ]));
        assert_eq!(
            config.map(|c| c.credential).ok(),
            Some(Credential::AuthToken("tok".to_string()))
        );
    }

    #[test]
    fn missing_credentials_say_what_to_set() {
        let error = AnthropicConfig::from_vars(vars(&[])).err();
        let text = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.starts_with("no API credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"),
            "{text}"
        );
        // Every way that works is named, and why a subscription is not one.
        for way in [
            "apiKeyHelper",
            "--model openai/",
            "--model ollama/",
            "no Claude Pro/Max login",
        ] {
            assert!(text.contains(way), "{way} is missing from: {text}");
        }
    }

    #[test]
    fn base_url_and_retries_come_from_the_environment() {
        let config = AnthropicConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy/"),
            ("CAIRN_MAX_RETRIES", "2"),
        ]));
        let config = match config {
            Ok(config) => config,
            Err(error) => panic!("{error}"),
        };
        assert_eq!(config.retry.max_attempts, 3);
        assert_eq!(
            config.messages_url().map(String::from).ok(),
            Some("http://127.0.0.1:9/proxy/v1/messages".to_string())
        );
    }

    #[test]
    fn the_request_timeout_comes_from_api_timeout_ms() {
        let timeout = |value: &str| {
            AnthropicConfig::from_vars(vars(&[
                ("ANTHROPIC_API_KEY", "k"),
                ("API_TIMEOUT_MS", value),
            ]))
            .map(|config| config.request_timeout)
            .map_err(|error| error.to_string())
        };
        assert_eq!(timeout(""), Ok(Duration::from_secs(600)));
        assert_eq!(timeout("1500"), Ok(Duration::from_millis(1500)));
        assert_eq!(
            timeout("soon"),
            Err(
                "API_TIMEOUT_MS is `soon`: expected a whole number of milliseconds above 0, \
                 such as 600000"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_bad_base_url_is_named() {
        let mut config = AnthropicConfig::new(Credential::ApiKey("k".to_string()));
        config.base_url = "api.anthropic.com".to_string();
        assert_eq!(
            config.messages_url().err().map(|e| e.to_string()),
            Some(
                "ANTHROPIC_BASE_URL is `api.anthropic.com`: expected an http or https URL such \
                 as https://api.anthropic.com"
                    .to_string()
            )
        );
    }

    #[test]
    fn errors_name_the_variable_the_credential_came_from() {
        let variables = |pairs: &[(&str, &str)]| {
            AnthropicConfig::from_vars(vars(pairs)).map(|config| config.variables())
        };
        assert_eq!(
            variables(&[("ANTHROPIC_API_KEY", "k")]).ok(),
            Some(ProviderVariables {
                credential: "ANTHROPIC_API_KEY",
                base_url: "ANTHROPIC_BASE_URL"
            })
        );
        assert_eq!(
            variables(&[("ANTHROPIC_AUTH_TOKEN", "t")]).ok(),
            Some(ProviderVariables {
                credential: "ANTHROPIC_AUTH_TOKEN",
                base_url: "ANTHROPIC_BASE_URL"
            })
        );
    }
}
