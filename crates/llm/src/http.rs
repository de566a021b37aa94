//! The HTTP side every provider's client shares: one reqwest client, built off the caller's
//! thread, and the checks on a streaming response that do not depend on the API.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::ModelError;
use crate::error::error_chain;

/// Whether a successful response's `content-type` promises SSE. A missing header gets the
/// benefit of the doubt.
pub(crate) fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_none_or(|kind| {
        kind.trim_start()
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
    })
}

/// The error for a response body that failed part-way through.
pub(crate) fn stream_broke(error: &dyn std::error::Error) -> ModelError {
    ModelError::StreamBroke {
        message: error_chain(error),
    }
}

/// The reqwest client, built once, off the caller's thread when possible.
///
/// Building it reads and parses the system's root certificates (3–6 ms on Linux), a large
/// share of cairn's startup budget; started early on another thread, that work overlaps
/// whatever the caller does before its first request.
pub(crate) struct HttpClient {
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    connect_timeout: Duration,
}

impl HttpClient {
    /// Starts building the client on a background thread.
    pub(crate) fn warm_up(connect_timeout: Duration) -> Self {
        let client = Arc::new(OnceLock::new());
        let warming = Arc::clone(&client);
        // Without a thread, the first request builds the client instead.
        let _ = std::thread::Builder::new()
            .name("cairn-http-init".to_string())
            .spawn(move || {
                warming.get_or_init(|| build_http_client(connect_timeout));
            });
        HttpClient {
            client,
            connect_timeout,
        }
    }

    /// The client, waiting for the warm-up thread if it is still building it.
    pub(crate) fn get(&self) -> Result<&reqwest::Client, ModelError> {
        self.client
            .get_or_init(|| build_http_client(self.connect_timeout))
            .as_ref()
            .map_err(|message| ModelError::HttpClient(message.clone()))
    }
}

fn build_http_client(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    // reqwest is built without a default crypto provider; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| error_chain(&error))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn only_event_streams_are_decoded() {
        assert!(is_event_stream(Some("text/event-stream")));
        assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
        assert!(is_event_stream(None));
        assert!(!is_event_stream(Some("text/html")));
        assert!(!is_event_stream(Some("application/json")));
        let error = ModelError::NotAnEventStream {
            content_type: "text/html".to_string(),
            body: "<html>Welcome to nginx!</html>".to_string(),
            base_url_variable: "ANTHROPIC_BASE_URL",
        };
        assert_eq!(
            error.to_string(),
            "expected an event stream from the API but got `text/html`: <html>Welcome to \
             nginx!</html>: check ANTHROPIC_BASE_URL"
        );
        assert!(!error.is_retryable());
    }

    #[test]
    fn a_transport_error_is_a_broken_stream() {
        let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset");
        let error = stream_broke(&error);
        assert_eq!(
            (error.to_string(), error.retry_reason()),
            (
                "the response stream broke: connection reset".to_string(),
                "stream broke".to_string()
            )
        );
    }
}
