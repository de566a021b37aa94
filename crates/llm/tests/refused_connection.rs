//! Failing fast when nothing is there: a refused connection ends within a second or so,
//! naming the URL from the first retry notice, while an overloaded server keeps the full
//! patience of the retry policy.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use cairn_llm::{
    AnthropicClient, AnthropicConfig, Credential, ModelClient, ModelError, ModelEvent,
    ModelRequest, ModelResponse, RetryPolicy,
};
use cairn_protocol::{ContentBlock, Message, RetryNotice};
use cairn_test_support::{Reply, ScriptedServer};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

fn request() -> ModelRequest {
    ModelRequest {
        model: "claude-sonnet-4-5".to_string(),
        system: cairn_protocol::SystemPrompt::default(),
        messages: vec![Message::user_text("hi")],
        tools: vec![],
        max_tokens: 64,
        text_only: false,
        stable_prefix: None,
    }
}

fn client(base_url: String, retry: RetryPolicy) -> AnthropicClient {
    let mut config = AnthropicConfig::new(Credential::ApiKey("test-key".to_string()));
    config.base_url = base_url;
    config.retry = retry;
    match AnthropicClient::new(config) {
        Ok(client) => client,
        Err(error) => panic!("cannot build the client: {error}"),
    }
}

async fn send(client: &AnthropicClient) -> (Result<ModelResponse, ModelError>, Vec<RetryNotice>) {
    let mut notices = Vec::new();
    let result = client
        .stream(
            &request(),
            &mut |event| {
                if let ModelEvent::Retrying(notice) = event {
                    notices.push(notice);
                }
            },
            &CancellationToken::new(),
        )
        .await;
    (result, notices)
}

/// A loopback address where nothing listens: a port bound, then released.
fn refused_url() -> String {
    let listener = match TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(error) => panic!("cannot bind a port: {error}"),
    };
    let port = match listener.local_addr() {
        Ok(address) => address.port(),
        Err(error) => panic!("no local address: {error}"),
    };
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn a_refused_connection_gives_up_after_a_few_quick_attempts_naming_the_url() {
    let url = refused_url();
    // The default policy: ten attempts over about two minutes for anything else.
    let client = client(format!("{url}/"), RetryPolicy::default());
    let started = Instant::now();
    let (result, notices) = send(&client).await;
    let elapsed = started.elapsed();

    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert_eq!(
        result.err().map(|error| error.to_string()),
        Some(format!(
            "gave up after 3 attempts; last error: connection error: nothing is listening at \
             {url} (connection refused): check ANTHROPIC_BASE_URL"
        ))
    );
    let expected: Vec<RetryNotice> = (2..=3)
        .map(|attempt| RetryNotice {
            attempt,
            max_attempts: 3,
            delay_ms: 250,
            reason: format!("nothing is listening at {url}"),
            discard_partial: false,
        })
        .collect();
    assert_eq!(notices, expected);
}

#[tokio::test]
async fn with_retries_turned_off_a_refused_connection_is_one_attempt() {
    let url = refused_url();
    let (result, notices) = send(&client(url.clone(), RetryPolicy::never())).await;
    assert_eq!(
        result.err().map(|error| error.to_string()),
        Some(format!(
            "connection error: nothing is listening at {url} (connection refused): check \
             ANTHROPIC_BASE_URL"
        ))
    );
    assert_eq!(notices, vec![]);
}

#[tokio::test]
async fn an_overloaded_server_keeps_the_policys_full_count_of_attempts() {
    let server = ScriptedServer::start();
    for _ in 0..5 {
        server.push(Reply::error(529, "overloaded_error", "Overloaded"));
    }
    server.push(Reply::text("at last"));
    let quick = RetryPolicy {
        max_attempts: 10,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    };
    let (result, notices) = send(&client(server.url(), quick)).await;
    assert_eq!(
        result.map(|response| response.content).ok(),
        Some(vec![ContentBlock::text("at last")])
    );
    assert_eq!(server.requests().len(), 6);
    assert_eq!(
        notices
            .iter()
            .map(|notice| (notice.attempt, notice.max_attempts, notice.reason.as_str()))
            .collect::<Vec<_>>(),
        (2..=6)
            .map(|attempt| (attempt, 10, "overloaded"))
            .collect::<Vec<_>>()
    );
}
