//! Streams that end oddly or never end, over real HTTP from the scripted server: a last event
//! without its closing blank line is an answer, not a cut stream; endless pings meet the
//! request deadline; endless deltas meet the size cap; each is retried, then a clear error.

use std::time::{Duration, Instant};

use cairn_llm::{
    AnthropicClient, AnthropicConfig, Credential, ModelClient, ModelError, ModelEvent,
    ModelRequest, ModelResponse, RetryPolicy,
};
use cairn_protocol::{ContentBlock, Message, StopReason};
use cairn_test_support::{Reply, ScriptedServer};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "claude-sonnet-4-5";

fn config(server: &ScriptedServer, attempts: u32) -> AnthropicConfig {
    let mut config = AnthropicConfig::new(Credential::ApiKey("test-key".to_string()));
    config.base_url = server.url();
    config.retry = RetryPolicy {
        max_attempts: attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    };
    config
}

fn client(config: AnthropicConfig) -> AnthropicClient {
    match AnthropicClient::new(config) {
        Ok(client) => client,
        Err(error) => panic!("cannot build the client: {error}"),
    }
}

async fn send(client: &AnthropicClient) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    let request = ModelRequest {
        model: MODEL.to_string(),
        system: cairn_protocol::SystemPrompt::default(),
        messages: vec![Message::user_text("go")],
        tools: vec![],
        max_tokens: 1024,
        text_only: false,
        stable_prefix: None,
    };
    let mut events = Vec::new();
    let result = client
        .stream(
            &request,
            &mut |event| events.push(event),
            &CancellationToken::new(),
        )
        .await;
    (result, events)
}

/// The reasons of the retry notices in `events`.
fn retry_reasons(events: &[ModelEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::Retrying(notice) => Some(notice.reason.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_last_event_without_its_blank_line_is_the_answer_not_a_retry() {
    let text = "The whole answer, every word of it.";
    for (dropped, chunk) in [(1, 1), (1, 7), (2, 1), (2, 64)] {
        let server = ScriptedServer::start();
        server.push(
            Reply::text(text)
                .without_last_bytes(dropped)
                .with_chunk_size(chunk),
        );
        // Served only if the client wrongly retries.
        server.push(Reply::text("a second answer"));
        let (result, events) = send(&client(config(&server, 3))).await;
        let response = result.unwrap_or_else(|error| panic!("{dropped}/{chunk}: {error}"));
        assert_eq!(
            (response.content, response.stop_reason),
            (vec![ContentBlock::text(text)], Some(StopReason::EndTurn)),
            "{dropped} bytes dropped, {chunk}-byte chunks"
        );
        assert_eq!(retry_reasons(&events), Vec::<String>::new());
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn endless_pings_meet_the_request_deadline_then_a_retry() {
    let server = ScriptedServer::start();
    server.push(Reply::endless_pings());
    server.push(Reply::text("Second time lucky."));
    let mut config = config(&server, 3);
    config.request_timeout = Duration::from_millis(1000);
    let started = Instant::now();
    let (result, events) = send(&client(config)).await;
    let response = result.unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        response.content,
        vec![ContentBlock::text("Second time lucky.")]
    );
    assert_eq!(retry_reasons(&events), vec!["request timed out"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn endless_pings_every_time_end_in_a_clear_error() {
    let server = ScriptedServer::start();
    server.set_default_reply(Reply::endless_pings());
    let mut config = config(&server, 2);
    // Long enough that a loaded machine still sends both requests within it.
    config.request_timeout = Duration::from_millis(1000);
    let (result, events) = send(&client(config)).await;
    assert_eq!(
        result.map(|_| ()).map_err(|error| error.to_string()),
        Err(
            "gave up after 2 attempts; last error: no complete answer within 1 s; the stream \
             kept going without finishing (API_TIMEOUT_MS sets this limit)"
                .to_string()
        )
    );
    assert_eq!(retry_reasons(&events), vec!["request timed out"]);
    assert_eq!(server.wait_for_requests(2, Duration::from_secs(5)).len(), 2);
}

#[tokio::test]
async fn endless_deltas_meet_the_size_cap_then_a_clear_error() {
    let server = ScriptedServer::start();
    server.set_default_reply(Reply::endless_text("all work and no play "));
    let mut config = config(&server, 2);
    config.max_response_bytes = 2 * 1024 * 1024;
    let (result, events) = send(&client(config)).await;
    assert_eq!(
        result.map(|_| ()).map_err(|error| error.to_string()),
        Err(
            "gave up after 2 attempts; last error: the response passed 2 MiB without \
             finishing; cairn stopped reading it"
                .to_string()
        )
    );
    assert_eq!(retry_reasons(&events), vec!["response too large"]);
    // What streamed before the cap is bounded by it: the deltas of at most 2 MiB per attempt.
    let streamed: usize = events
        .iter()
        .map(|event| match event {
            ModelEvent::TextDelta(text) => text.len(),
            _ => 0,
        })
        .sum();
    assert!(
        streamed > 0 && streamed < 2 * 2 * 1024 * 1024,
        "{streamed} bytes streamed"
    );
}

#[tokio::test]
async fn a_request_over_the_size_limit_gets_the_apis_400_and_no_retry() {
    let server = ScriptedServer::start();
    server.reject_bodies_over(10);
    server.push(Reply::text("never served"));
    let (result, events) = send(&client(config(&server, 3))).await;
    let error = result.map(|_| ()).map_err(|error| error.to_string());
    let Err(message) = error else {
        panic!("the request should have been refused");
    };
    assert!(
        message.starts_with(
            "the conversation is over the model's context window: prompt is too long: "
        ) && message.ends_with(" bytes > 10 maximum: compact it (/compact) or start a new session"),
        "{message}"
    );
    assert_eq!(retry_reasons(&events), Vec::<String>::new());
    assert_eq!(server.requests().len(), 1);
}
