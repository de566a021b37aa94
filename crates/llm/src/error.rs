//! What can go wrong when talking to a model API, in words a user can act on.
//!
//! The errors are the same for every provider; the names in them are not. A provider says
//! which environment variables it reads ([`ProviderVariables`]), and the error carries those
//! names, so that an Anthropic user is told to check `ANTHROPIC_BASE_URL` and an
//! OpenAI-compatible one `OPENAI_BASE_URL`.

use std::time::Duration;

use thiserror::Error;

use crate::retry;

/// The environment variables behind one client's requests, as the provider names them: what
/// an error tells the user to check. The Anthropic client fills it with `ANTHROPIC_API_KEY`
/// (or `ANTHROPIC_AUTH_TOKEN`) and `ANTHROPIC_BASE_URL`; an OpenAI-compatible client would
/// fill it with `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderVariables {
    /// The variable the credential was read from (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`).
    pub credential: &'static str,
    /// The variable that says where requests go (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`).
    pub base_url: &'static str,
}

/// Why a model request failed.
///
/// The `Display` text is what the user reads: it says what happened and, where there is one,
/// what to do. When the API explained itself (the `message` of its JSON error body), that
/// explanation is part of the text. Variables are named as the provider that failed reads
/// them. No variant ever holds a credential.
#[derive(Debug, Error)]
pub enum ModelError {
    /// None of the variables a provider reads its credential from is set. `variables` lists
    /// them, the one it reads first first.
    #[error("no API credentials: set {}", one_of(.variables))]
    MissingCredentials {
        /// The variables the provider reads its credential from, in the order it reads them.
        variables: &'static [&'static str],
    },

    /// Anthropic's API has no credential: neither variable is set and no `apiKeyHelper` is
    /// configured. The text names every way that works, and says why a Claude subscription is
    /// not one of them.
    #[error(
        "no API credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or `apiKeyHelper` \
         in the settings (a command that prints a key), or pick another provider's model \
         (--model openai/gpt-5, --model ollama/qwen2.5-coder). There is no Claude Pro/Max \
         login: cairn does not use Claude Code's sign-in or its stored credentials"
    )]
    MissingAnthropicCredentials,

    /// An environment variable or setting holds a value cairn cannot use.
    #[error("{variable} is `{value}`: expected {expected}")]
    InvalidSetting {
        /// The variable or setting as the user spells it (`API_TIMEOUT_MS`,
        /// `ANTHROPIC_BASE_URL`, `CAIRN_MAX_RETRIES`).
        variable: &'static str,
        /// The value found, trimmed, quoted back so the user sees what was read.
        value: String,
        /// What would be accepted, with an example ("a whole number of milliseconds above 0,
        /// such as 600000").
        expected: &'static str,
    },

    /// The credential holds bytes an HTTP header cannot carry. The value is never shown.
    #[error(
        "the value of {variable} cannot be sent in an HTTP header (it holds a control character or line break): set it again"
    )]
    InvalidCredential {
        /// The variable the credential was read from (`ANTHROPIC_API_KEY`, …).
        variable: &'static str,
    },

    /// The command that supplies the key (`apiKeyHelper`) failed. `problem` says how, and
    /// quotes its error output, never its output (which would be the key).
    #[error("the {setting} command failed: {problem}; check the {setting} setting")]
    CredentialHelper {
        /// The setting that holds the command (`apiKeyHelper`).
        setting: &'static str,
        /// How it failed: could not start, exit status with its error output, printed
        /// nothing, took too long.
        problem: String,
    },

    /// The HTTP client could not be built (its TLS set-up failed, say); the text is reqwest's
    /// error with its sources. Every request of the client fails the same way.
    #[error("could not set up the HTTP client: {0}")]
    HttpClient(String),

    /// 401: the credential was refused. `variable` names where it came from.
    #[error(
        "the API key was rejected (401 unauthorized){}: check the value of {variable}",
        api_says(.message)
    )]
    Unauthorized {
        /// The variable the refused credential was read from.
        variable: &'static str,
        /// The API's own explanation (its error body's `message`); empty when it gave none.
        message: String,
    },

    /// 403: the credential is valid but may not do this.
    #[error(
        "permission denied (403){}: the credential in {variable} may not use this model or endpoint",
        api_says(.message)
    )]
    PermissionDenied {
        /// The variable the credential was read from.
        variable: &'static str,
        /// The API's own explanation; empty when it gave none.
        message: String,
    },

    /// 404: usually a misspelt model id, sometimes a wrong base URL (`base_url_variable`).
    #[error(
        "model or endpoint not found (404) for model `{model}`{}: check the model name and {base_url_variable}",
        api_says(.message)
    )]
    NotFound {
        /// The model id the request asked for.
        model: String,
        /// The API's own explanation; empty when it gave none.
        message: String,
        /// The variable that says where requests go (`ANTHROPIC_BASE_URL`,
        /// `OPENAI_BASE_URL`).
        base_url_variable: &'static str,
    },

    /// 413: the request body is over the API's size limit.
    #[error(
        "request too large (413){}: the conversation is over the API's size limit; compact it or drop large attachments",
        api_says(.message)
    )]
    RequestTooLarge {
        /// The API's own explanation; empty when it gave none.
        message: String,
    },

    /// 400: the API's own message says what it did not accept.
    #[error("the API rejected the request (400): {message}")]
    InvalidRequest {
        /// The API's own explanation, or "no details given" when its body had none.
        message: String,
    },

    /// The conversation is over the model's window, as the provider's dialect recognised
    /// from its own error ("prompt is too long", `context_length_exceeded`): compacting it
    /// may help, and the engine does so once by itself.
    #[error(
        "the conversation is over the model's context window{}: compact it (/compact) or start a new session",
        api_says(.message)
    )]
    ContextWindowExceeded {
        /// The API's own explanation, which often says how many tokens were sent and how
        /// many fit.
        message: String,
    },

    /// Any other HTTP error status (429, 5xx, 529, …). `retry_after` is the server's
    /// `retry-after-ms` / `retry-after` header, when it sent one.
    #[error("{}{}", status_summary(*.status), api_says(.message))]
    Api {
        /// The HTTP status code.
        status: u16,
        /// The API's own explanation, or the start of a body that is not the API's JSON
        /// error (a proxy's page); empty when the body was empty.
        message: String,
        /// The wait the server asked for before trying again; `None` when it sent neither
        /// header. Retries honour it up to [`MAX_RETRY_AFTER`](crate::MAX_RETRY_AFTER).
        retry_after: Option<Duration>,
    },

    /// The request never got an answer: DNS, connect, TLS, reset, or no response headers.
    #[error("connection error: {message}")]
    Connection {
        /// What failed: the HTTP library's error with its causes joined by `: `, that
        /// nothing listens at the address, or how long the response headers were waited for.
        message: String,
    },

    /// The response body failed part-way through.
    #[error("the response stream broke: {message}")]
    StreamBroke {
        /// What failed, with the underlying causes joined by `: `.
        message: String,
    },

    /// The response body ended cleanly but before the API's `message_stop` event.
    #[error("the response stream ended early, before the message was complete")]
    StreamEndedEarly,

    /// No bytes arrived for this long in the middle of a response: the idle limit.
    #[error("the response stream stalled: no data for {} s", .0.as_secs())]
    StreamStalled(Duration),

    /// One attempt went on longer than `API_TIMEOUT_MS` allows (the limit is the value held):
    /// a stream that kept sending (pings, deltas) without ever finishing.
    #[error(
        "no complete answer within {} s; the stream kept going without finishing (API_TIMEOUT_MS sets this limit)",
        .0.as_secs_f64()
    )]
    RequestTimedOut(Duration),

    /// The response body grew past the size cap without finishing.
    #[error(
        "the response passed {} MiB without finishing; cairn stopped reading it",
        .limit / (1024 * 1024)
    )]
    ResponseTooLarge {
        /// The cap, in bytes of response body.
        limit: u64,
    },

    /// An `error` event in the stream, such as `overloaded_error`.
    #[error("the API reported an error mid-stream ({error_type}): {message}")]
    StreamError {
        /// The error's type in Anthropic's words (`overloaded_error`, `api_error`), which
        /// decides whether it is retried. The OpenAI dialect maps a server error to
        /// `api_error` and otherwise passes its `type` through (`error` when it has none).
        error_type: String,
        /// The provider's explanation.
        message: String,
    },

    /// A successful response that is not an event stream: usually the base URL
    /// (`base_url_variable`) points at something other than the provider's API. `body` is the
    /// start of what came instead.
    #[error(
        "expected an event stream from the API but got `{content_type}`{}: check {base_url_variable}",
        api_says(.body)
    )]
    NotAnEventStream {
        /// The response's `Content-Type`; empty when it had none.
        content_type: String,
        /// The start of the body (at most 300 bytes), trimmed.
        body: String,
        /// The variable that says where requests go.
        base_url_variable: &'static str,
    },

    /// The stream held something that is not the provider's event protocol; the text says
    /// what could not be read (an SSE line, an event's JSON).
    #[error("the API sent an event cairn could not read: {0}")]
    InvalidStream(String),

    /// Every attempt failed with an error worth retrying.
    #[error("gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted {
        /// How many times the request was sent, the first included.
        attempts: u32,
        /// The error of the last attempt.
        last: Box<ModelError>,
    },

    /// The caller's cancellation token fired; nothing more was read or retried.
    #[error("the request was cancelled")]
    Cancelled,
}

/// `": <message>"`, or nothing when the API gave no message.
fn api_says(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// `A`, `A (or B)`, `A (or B, or C)`: the variables a credential may be set in.
fn one_of(variables: &[&str]) -> String {
    match variables.split_first() {
        None => "an API key".to_string(),
        Some((first, [])) => (*first).to_string(),
        Some((first, rest)) => format!("{first} (or {})", rest.join(", or ")),
    }
}

fn status_summary(status: u16) -> String {
    match status {
        429 => "rate limited (429)".to_string(),
        529 => "the API is overloaded (529)".to_string(),
        408 => "the API timed out waiting for the request (408)".to_string(),
        500..=599 => format!("server error {status}"),
        _ => format!("API error {status}"),
    }
}

impl ModelError {
    /// Whether the API refused the request because the conversation is over the model's
    /// window ("prompt is too long", or a body over the size limit): compacting it may help.
    pub fn is_prompt_too_long(&self) -> bool {
        matches!(
            self,
            ModelError::ContextWindowExceeded { .. } | ModelError::RequestTooLarge { .. }
        )
    }

    /// A 400 whose message is `message` as [`ContextWindowExceeded`](Self::ContextWindowExceeded)
    /// when `over_window` says the provider meant that, else as
    /// [`InvalidRequest`](Self::InvalidRequest). Each dialect says what its words are.
    pub(crate) fn bad_request(self, over_window: impl Fn(&str) -> bool) -> ModelError {
        match self {
            ModelError::InvalidRequest { message }
                if over_window(&message.to_ascii_lowercase()) =>
            {
                ModelError::ContextWindowExceeded { message }
            }
            other => other,
        }
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Api { status, .. } => retry::is_retryable_status(*status),
            ModelError::StreamError { error_type, .. } => {
                retry::is_retryable_stream_error(error_type)
            }
            ModelError::Connection { .. }
            | ModelError::StreamBroke { .. }
            | ModelError::StreamEndedEarly
            | ModelError::StreamStalled(_)
            | ModelError::RequestTimedOut(_)
            | ModelError::ResponseTooLarge { .. } => true,
            ModelError::MissingCredentials { .. }
            | ModelError::MissingAnthropicCredentials
            | ModelError::InvalidSetting { .. }
            | ModelError::InvalidCredential { .. }
            | ModelError::CredentialHelper { .. }
            | ModelError::HttpClient(_)
            | ModelError::Unauthorized { .. }
            | ModelError::PermissionDenied { .. }
            | ModelError::NotFound { .. }
            | ModelError::RequestTooLarge { .. }
            | ModelError::InvalidRequest { .. }
            | ModelError::ContextWindowExceeded { .. }
            | ModelError::NotAnEventStream { .. }
            | ModelError::InvalidStream(_)
            | ModelError::RetriesExhausted { .. }
            | ModelError::Cancelled => false,
        }
    }

    /// Whether the API said it is overloaded (529, or an `overloaded_error` in the stream),
    /// on the last attempt when the request was retried.
    pub fn is_overloaded(&self) -> bool {
        match self {
            ModelError::Api { status: 529, .. } => true,
            ModelError::StreamError { error_type, .. } => error_type == "overloaded_error",
            ModelError::RetriesExhausted { last, .. } => last.is_overloaded(),
            _ => false,
        }
    }

    /// The wait the server asked for before trying again, if it asked.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A few words for a retry notice: `overloaded`, `rate limited`, `server error 503`.
    pub fn retry_reason(&self) -> String {
        match self {
            ModelError::Api { status: 529, .. } => "overloaded".to_string(),
            ModelError::Api { status: 429, .. } => "rate limited".to_string(),
            ModelError::Api { status: 408, .. } => "request timeout".to_string(),
            ModelError::Api { status, .. } if *status >= 500 => format!("server error {status}"),
            ModelError::Api { status, .. } => format!("HTTP {status}"),
            ModelError::StreamError { error_type, .. } if error_type == "overloaded_error" => {
                "overloaded".to_string()
            }
            ModelError::StreamError { error_type, .. } if error_type == "api_error" => {
                "server error".to_string()
            }
            ModelError::StreamError { error_type, .. } => error_type.clone(),
            ModelError::Connection { .. } => "connection error".to_string(),
            ModelError::StreamBroke { .. } => "stream broke".to_string(),
            ModelError::StreamEndedEarly => "stream ended early".to_string(),
            ModelError::StreamStalled(_) => "stream stalled".to_string(),
            ModelError::RequestTimedOut(_) => "request timed out".to_string(),
            ModelError::ResponseTooLarge { .. } => "response too large".to_string(),
            other => other.to_string(),
        }
    }

    /// The error for an HTTP error status, from the response body (the API's JSON error
    /// object, or the raw text when it is not one).
    ///
    /// `variables` names where the credential and the base URL came from; `model` is the
    /// requested model id.
    pub(crate) fn from_status(
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        variables: ProviderVariables,
        model: &str,
    ) -> ModelError {
        let message = api_error_message(body);
        match status {
            400 => ModelError::InvalidRequest {
                message: if message.is_empty() {
                    "no details given".to_string()
                } else {
                    message
                },
            },
            401 => ModelError::Unauthorized {
                variable: variables.credential,
                message,
            },
            403 => ModelError::PermissionDenied {
                variable: variables.credential,
                message,
            },
            404 => ModelError::NotFound {
                model: model.to_string(),
                message,
                base_url_variable: variables.base_url,
            },
            413 => ModelError::RequestTooLarge { message },
            _ => ModelError::Api {
                status,
                message,
                retry_after,
            },
        }
    }
}

/// The longest stretch of a non-JSON error body quoted in a message.
const MAX_QUOTED_BODY: usize = 300;

/// The `error.message` of an API error body
/// (`{"type":"error","error":{"type":…,"message":…}}`), or the start of the body's text when
/// it is something else (a proxy's HTML page, say).
pub(crate) fn api_error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: Inner,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        #[serde(default)]
        message: String,
    }
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(body) {
        return envelope.error.message;
    }
    body_excerpt(body)
}

/// An error and its sources, joined with `: ` (reqwest's own text is often just
/// "error decoding response body", with the useful part in a source).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The start of a body that is not what was expected, as text to quote in a message.
pub(crate) fn body_excerpt(body: &[u8]) -> String {
    truncate_chars(String::from_utf8_lossy(body).trim(), MAX_QUOTED_BODY)
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn error_body(error_type: &str, message: &str) -> Vec<u8> {
        serde_json::json!({"type": "error", "error": {"type": error_type, "message": message}})
            .to_string()
            .into_bytes()
    }

    const ANTHROPIC: ProviderVariables = ProviderVariables {
        credential: "ANTHROPIC_API_KEY",
        base_url: "ANTHROPIC_BASE_URL",
    };

    const OPENAI: ProviderVariables = ProviderVariables {
        credential: "OPENAI_API_KEY",
        base_url: "OPENAI_BASE_URL",
    };

    #[test]
    fn unauthorized_names_the_variable_and_quotes_the_api() {
        let error = ModelError::from_status(
            401,
            &error_body("authentication_error", "invalid x-api-key"),
            None,
            ANTHROPIC,
            "claude-sonnet-4-5",
        );
        assert_eq!(
            error.to_string(),
            "the API key was rejected (401 unauthorized): invalid x-api-key: check the value of \
             ANTHROPIC_API_KEY"
        );
        assert!(!error.is_retryable());
    }

    #[test]
    fn not_found_names_the_model() {
        let error = ModelError::from_status(
            404,
            &error_body("not_found_error", "model: claude-nope"),
            None,
            ANTHROPIC,
            "claude-nope",
        );
        assert_eq!(
            error.to_string(),
            "model or endpoint not found (404) for model `claude-nope`: model: claude-nope: check \
             the model name and ANTHROPIC_BASE_URL"
        );
    }

    /// The same failures from an OpenAI-compatible provider name the variables it reads.
    #[test]
    fn errors_name_the_variables_of_the_provider_that_failed() {
        let texts = [
            ModelError::from_status(401, b"", None, OPENAI, "gpt-5"),
            ModelError::from_status(403, b"", None, OPENAI, "gpt-5"),
            ModelError::from_status(404, b"", None, OPENAI, "gpt-5"),
            ModelError::NotAnEventStream {
                content_type: "text/html".to_string(),
                body: String::new(),
                base_url_variable: OPENAI.base_url,
            },
            ModelError::MissingCredentials {
                variables: &["OPENAI_API_KEY"],
            },
        ]
        .map(|error| error.to_string());
        assert_eq!(
            texts,
            [
                "the API key was rejected (401 unauthorized): check the value of OPENAI_API_KEY",
                "permission denied (403): the credential in OPENAI_API_KEY may not use this model \
                 or endpoint",
                "model or endpoint not found (404) for model `gpt-5`: check the model name and \
                 OPENAI_BASE_URL",
                "expected an event stream from the API but got `text/html`: check OPENAI_BASE_URL",
                "no API credentials: set OPENAI_API_KEY",
            ]
        );
    }

    #[test]
    fn missing_credentials_list_every_variable_in_order() {
        let missing = |variables| ModelError::MissingCredentials { variables }.to_string();
        assert_eq!(
            [
                missing(&["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]),
                missing(&["A", "B", "C"]),
                missing(&[]),
            ],
            [
                "no API credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
                "no API credentials: set A (or B, or C)",
                "no API credentials: set an API key",
            ]
        );
    }

    #[test]
    fn bad_request_shows_the_api_message() {
        let error = ModelError::from_status(
            400,
            &error_body("invalid_request_error", "max_tokens: must be at least 1"),
            None,
            ANTHROPIC,
            "m",
        );
        assert_eq!(
            error.to_string(),
            "the API rejected the request (400): max_tokens: must be at least 1"
        );
    }

    #[test]
    fn permission_and_size_errors_read_clearly() {
        let token = ProviderVariables {
            credential: "ANTHROPIC_AUTH_TOKEN",
            ..ANTHROPIC
        };
        let forbidden = ModelError::from_status(403, b"", None, token, "m");
        assert_eq!(
            forbidden.to_string(),
            "permission denied (403): the credential in ANTHROPIC_AUTH_TOKEN may not use this \
             model or endpoint"
        );
        let too_large = ModelError::from_status(413, b"", None, ANTHROPIC, "m");
        assert!(too_large.to_string().starts_with("request too large (413)"));
    }

    #[test]
    fn non_json_bodies_are_quoted_and_capped() {
        let body = format!("<html>{}</html>", "x".repeat(1000));
        let error = ModelError::from_status(502, body.as_bytes(), None, ANTHROPIC, "m");
        let text = error.to_string();
        assert!(text.starts_with("server error 502: <html>xxx"), "{text}");
        assert!(text.ends_with('…'), "{text}");
        assert!(text.len() < 400, "{text}");
        assert!(error.is_retryable());
        assert_eq!(error.retry_reason(), "server error 502");
    }

    #[test]
    fn retries_exhausted_says_how_many_and_why() {
        let error = ModelError::RetriesExhausted {
            attempts: 10,
            last: Box::new(ModelError::from_status(
                529,
                &error_body("overloaded_error", "Overloaded"),
                None,
                ANTHROPIC,
                "m",
            )),
        };
        assert_eq!(
            error.to_string(),
            "gave up after 10 attempts; last error: the API is overloaded (529): Overloaded"
        );
    }

    #[test]
    fn retry_reasons_are_short() {
        let api = |status| ModelError::Api {
            status,
            message: String::new(),
            retry_after: None,
        };
        assert_eq!(api(529).retry_reason(), "overloaded");
        assert_eq!(api(429).retry_reason(), "rate limited");
        assert_eq!(api(503).retry_reason(), "server error 503");
        let overloaded = ModelError::StreamError {
            error_type: "overloaded_error".to_string(),
            message: "Overloaded".to_string(),
        };
        assert_eq!(overloaded.retry_reason(), "overloaded");
        assert_eq!(
            ModelError::Connection {
                message: "reset".to_string()
            }
            .retry_reason(),
            "connection error"
        );
        assert_eq!(
            ModelError::StreamBroke {
                message: "eof".to_string()
            }
            .retry_reason(),
            "stream broke"
        );
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), "h…");
        assert_eq!(truncate_chars("hello", 5), "hello");
    }
}
