//! The Anthropic client against a scripted Messages API on loopback: streaming, tool calls,
//! retries, errors, chunking and cancellation, all over real HTTP.

use std::time::{Duration, Instant};

use cairn_llm::{
    AnthropicClient, AnthropicConfig, Credential, ModelClient, ModelError, ModelEvent,
    ModelRequest, ModelResponse, PartialAnswer, RetryPolicy,
};
use cairn_protocol::{ContentBlock, Message, RetryNotice, Role, StopReason, ToolSpec, Usage};
use cairn_test_support::{Reply, ScriptedBlock, ScriptedServer};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "claude-sonnet-4-5";

/// Retries that take milliseconds, so the tests stay fast.
fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

fn client_with(server: &ScriptedServer, credential: Credential) -> AnthropicClient {
    let mut config = AnthropicConfig::new(credential);
    config.base_url = server.url();
    config.retry = quick_retries();
    match AnthropicClient::new(config) {
        Ok(client) => client,
        Err(error) => panic!("cannot build the client: {error}"),
    }
}

fn client(server: &ScriptedServer) -> AnthropicClient {
    client_with(server, Credential::ApiKey("test-key".to_string()))
}

fn request(text: &str) -> ModelRequest {
    ModelRequest {
        model: MODEL.to_string(),
        system: cairn_protocol::SystemPrompt::default(),
        messages: vec![Message::user_text(text)],
        tools: vec![],
        max_tokens: 1024,
        text_only: false,
        stable_prefix: None,
    }
}

/// Sends `request`, collecting every event reported on the way.
async fn send(
    client: &AnthropicClient,
    request: &ModelRequest,
) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    let mut events = Vec::new();
    let cancel = CancellationToken::new();
    let result = client
        .stream(request, &mut |event| events.push(event), &cancel)
        .await;
    (result, events)
}

fn ok(result: Result<ModelResponse, ModelError>) -> ModelResponse {
    match result {
        Ok(response) => response,
        Err(error) => panic!("the request failed: {error}"),
    }
}

/// The text of the text deltas in `events`.
fn streamed_text(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn retry_notices(events: &[ModelEvent]) -> Vec<RetryNotice> {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::Retrying(notice) => Some(notice.clone()),
            _ => None,
        })
        .collect()
}

/// The byte offset just past the `n`-th (from 1) SSE event containing `needle` in `body`.
fn offset_after_event(body: &[u8], needle: &str, n: usize) -> usize {
    let text = String::from_utf8_lossy(body);
    let mut seen = 0;
    let mut offset = 0;
    for event in text.split_inclusive("\n\n") {
        offset += event.len();
        if event.contains(needle) {
            seen += 1;
            if seen == n {
                return offset;
            }
        }
    }
    panic!("fewer than {n} events contain {needle:?}");
}

#[tokio::test]
async fn a_plain_reply_streams_and_completes() {
    let server = ScriptedServer::start();
    let text = "Hello from the script, long enough to arrive in several deltas.";
    server.push(Reply::text(text));
    let (result, events) = send(&client(&server), &request("hi")).await;
    assert_eq!(
        ok(result),
        ModelResponse {
            id: "msg_scripted_1".to_string(),
            model: MODEL.to_string(),
            content: vec![ContentBlock::text(text)],
            stop_reason: Some(StopReason::EndTurn),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
            },
            malformed_tool_inputs: vec![],
        }
    );
    assert!(events.len() > 1, "{events:?}");
    assert_eq!(streamed_text(&events), text);
}

#[tokio::test]
async fn a_tool_use_round_trip() {
    let server = ScriptedServer::start();
    let input = json!({"file_path": "/tmp/notes.txt", "limit": 20});
    server.push(Reply::tool_use("toolu_01", "Read", input.clone()));
    server.push(Reply::text("The file has two lines."));
    let client = client(&server);

    let mut first = request("read my notes");
    first.tools = vec![ToolSpec {
        name: "Read".to_string(),
        description: "Reads a file".to_string(),
        input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
    }];
    let (result, events) = send(&client, &first).await;
    let response = ok(result);
    let tool_use = ContentBlock::ToolUse {
        id: "toolu_01".to_string(),
        name: "Read".to_string(),
        input: input.clone(),
    };
    assert_eq!(response.content, vec![tool_use.clone()]);
    assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        events,
        vec![
            ModelEvent::ToolUseStarted {
                id: "toolu_01".to_string(),
                name: "Read".to_string(),
            },
            ModelEvent::ToolUseComplete {
                id: "toolu_01".to_string(),
                name: "Read".to_string(),
                input,
            },
        ]
    );

    let mut second = first.clone();
    second.messages.push(Message {
        role: Role::Assistant,
        content: response.content,
    });
    second.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::tool_result("toolu_01", "one\ntwo", false)],
    });
    let (result, _) = send(&client, &second).await;
    assert_eq!(
        ok(result).content,
        vec![ContentBlock::text("The file has two lines.")]
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "read my notes"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01",
                "name": "Read", "input": {"file_path": "/tmp/notes.txt", "limit": 20}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                "content": "one\ntwo", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
}

#[tokio::test]
async fn an_overloaded_api_is_retried() {
    let server = ScriptedServer::start();
    server.push(Reply::error(529, "overloaded_error", "Overloaded"));
    server.push(Reply::text("Second time lucky."));
    let (result, events) = send(&client(&server), &request("hi")).await;
    assert_eq!(
        ok(result).content,
        vec![ContentBlock::text("Second time lucky.")]
    );
    let notices = retry_notices(&events);
    assert_eq!(notices.len(), 1, "{events:?}");
    assert_eq!(
        (
            notices[0].attempt,
            notices[0].max_attempts,
            notices[0].reason.as_str(),
            notices[0].discard_partial
        ),
        (2, 3, "overloaded", false)
    );
    assert!(notices[0].delay_ms <= 5, "{:?}", notices[0]);
    assert!(matches!(events[0], ModelEvent::Retrying(_)), "{events:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_rate_limit_waits_as_long_as_retry_after_says() {
    let server = ScriptedServer::start();
    server.push(Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "1"));
    server.push(Reply::text("Thanks for waiting."));
    let started = Instant::now();
    let (result, events) = send(&client(&server), &request("hi")).await;
    assert_eq!(
        ok(result).content,
        vec![ContentBlock::text("Thanks for waiting.")]
    );
    assert_eq!(
        retry_notices(&events),
        vec![RetryNotice {
            attempt: 2,
            max_attempts: 3,
            delay_ms: 1000,
            reason: "rate limited".to_string(),
            discard_partial: false,
        }]
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_rejected_key_is_not_retried_and_says_so() {
    let server = ScriptedServer::start();
    server.push(Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let (result, events) = send(&client(&server), &request("hi")).await;
    let error = result.err().map(|error| error.to_string());
    assert_eq!(
        error,
        Some(
            "the API key was rejected (401 unauthorized): invalid x-api-key: check the value of \
             ANTHROPIC_API_KEY"
                .to_string()
        )
    );
    assert_eq!(events, vec![]);
    assert_eq!(server.requests().len(), 1);
}

/// A wrong base URL shows as a 404 or as a page instead of an event stream; both tell the
/// user to check the variable the Anthropic provider reads it from.
#[tokio::test]
async fn a_wrong_endpoint_names_anthropic_base_url() {
    let server = ScriptedServer::start();
    server.push(Reply::error(404, "not_found_error", "no such route"));
    server.push(
        Reply::raw_sse("<html>Welcome to nginx!</html>").with_header("content-type", "text/html"),
    );
    let client = client(&server);
    let mut errors = Vec::new();
    for _ in 0..2 {
        let (result, events) = send(&client, &request("hi")).await;
        assert_eq!(events, vec![]);
        errors.push(result.err().map(|error| error.to_string()));
    }
    assert_eq!(
        errors,
        vec![
            Some(
                "model or endpoint not found (404) for model `claude-sonnet-4-5`: no such route: \
                 check the model name and ANTHROPIC_BASE_URL"
                    .to_string()
            ),
            Some(
                "expected an event stream from the API but got `text/html`: <html>Welcome to \
                 nginx!</html>: check ANTHROPIC_BASE_URL"
                    .to_string()
            ),
        ]
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retries_run_out() {
    let server = ScriptedServer::start();
    for _ in 0..3 {
        server.push(Reply::error(503, "api_error", "try later"));
    }
    let (result, events) = send(&client(&server), &request("hi")).await;
    assert_eq!(
        result.err().map(|error| error.to_string()),
        Some("gave up after 3 attempts; last error: server error 503: try later".to_string())
    );
    let reasons: Vec<(u32, String)> = retry_notices(&events)
        .into_iter()
        .map(|notice| (notice.attempt, notice.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (2, "server error 503".to_string()),
            (3, "server error 503".to_string())
        ]
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_retried_from_scratch() {
    let server = ScriptedServer::start();
    let text = "One two three four five six seven eight nine ten eleven twelve thirteen.";
    let reply = Reply::text(text);
    let cut = offset_after_event(&reply.body_bytes(MODEL), "text_delta", 2);
    server.push(reply.clone().cut_after(cut));
    server.push(reply);
    let (result, events) = send(&client(&server), &request("count")).await;
    assert_eq!(ok(result).content, vec![ContentBlock::text(text)]);

    let notices = retry_notices(&events);
    assert_eq!(
        notices
            .iter()
            .map(|n| (n.attempt, n.reason.as_str(), n.discard_partial))
            .collect::<Vec<_>>(),
        vec![(2, "stream broke", true)]
    );
    // What streamed before the notice is a prefix to discard; after it, the text comes once.
    let notice_at = events
        .iter()
        .position(|event| matches!(event, ModelEvent::Retrying(_)))
        .unwrap_or(events.len());
    let before = streamed_text(&events[..notice_at]);
    assert!(
        !before.is_empty() && text.starts_with(&before),
        "{before:?}"
    );
    assert_eq!(streamed_text(&events[notice_at..]), text);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_overloaded_error_event_mid_stream_is_retried() {
    let server = ScriptedServer::start();
    let reply = Reply::text("Fine now, after the hiccup.");
    let body = String::from_utf8_lossy(&reply.body_bytes(MODEL)).into_owned();
    let cut = offset_after_event(body.as_bytes(), "text_delta", 1);
    server.push(Reply::raw_sse(format!(
        "{}event: error\ndata: {{\"type\": \"error\", \"error\": {{\"type\": \
         \"overloaded_error\", \"message\": \"Overloaded\"}}}}\n\n",
        &body[..cut]
    )));
    server.push(reply);
    let (result, events) = send(&client(&server), &request("hi")).await;
    assert_eq!(
        ok(result).content,
        vec![ContentBlock::text("Fine now, after the hiccup.")]
    );
    let notices = retry_notices(&events);
    assert_eq!(
        notices
            .iter()
            .map(|n| (n.reason.as_str(), n.discard_partial))
            .collect::<Vec<_>>(),
        vec![("overloaded", true)]
    );
}

#[tokio::test]
async fn one_byte_chunks_give_the_same_events_as_whole_delivery() {
    let reply = Reply::blocks(vec![
        ScriptedBlock::Thinking {
            thinking: "The user wants a file listed; ünïcode to split: ✓🦀.".to_string(),
            signature: "EqQBCgIYAhIM".to_string(),
        },
        ScriptedBlock::Text("Listing it — one moment.".to_string()),
        ScriptedBlock::ToolUse {
            id: "toolu_9".to_string(),
            name: "Bash".to_string(),
            input: json!({"command": "ls -la", "description": "list files ✓"}),
        },
    ]);
    let mut outcomes = Vec::new();
    for reply in [reply.clone(), reply.with_chunk_size(1)] {
        let server = ScriptedServer::start();
        server.push(reply);
        let (result, events) = send(&client(&server), &request("ls")).await;
        outcomes.push((ok(result), events));
    }
    let (whole, one_byte) = (&outcomes[0], &outcomes[1]);
    assert_eq!(one_byte, whole);
    assert_eq!(whole.0.content.len(), 3);
    assert!(whole.1.len() > 4, "{:?}", whole.1);
}

#[tokio::test]
async fn cancelling_a_stalled_stream_returns_promptly() {
    let server = ScriptedServer::start();
    let reply = Reply::text("This answer stalls after its first delta and never finishes.");
    let stall = offset_after_event(&reply.body_bytes(MODEL), "text_delta", 1);
    server.push(reply.stall_after(stall));
    let client = client(&server);
    let cancel = CancellationToken::new();

    let (first_delta_tx, first_delta_rx) = tokio::sync::oneshot::channel();
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            // Wait until the stream is known to be flowing, then give up on it.
            let _ = first_delta_rx.await;
            cancel.cancel();
            Instant::now()
        })
    };
    let mut first_delta_tx = Some(first_delta_tx);
    let mut events = Vec::new();
    let result = client
        .stream(
            &request("hi"),
            &mut |event| {
                if let Some(tx) = first_delta_tx.take() {
                    let _ = tx.send(());
                }
                events.push(event);
            },
            &cancel,
        )
        .await;
    let returned = Instant::now();
    let cancelled = match canceller.await {
        Ok(at) => at,
        Err(error) => panic!("the cancelling task failed: {error}"),
    };
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert!(
        returned.duration_since(cancelled) < Duration::from_millis(200),
        "took {:?} to stop",
        returned.duration_since(cancelled)
    );
    // The text that came, then what `message_start` reported: the real id and the input
    // counts, which the API bills though the answer never ended.
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(events[0], ModelEvent::TextDelta(_)), "{events:?}");
    assert_eq!(
        events[1],
        ModelEvent::Interrupted(PartialAnswer {
            id: "msg_scripted_1".into(),
            model: MODEL.into(),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 1,
                ..Usage::default()
            },
        })
    );
}

#[tokio::test]
async fn requests_carry_the_headers_and_body_the_api_expects() {
    let server = ScriptedServer::start();
    server.push(Reply::text("ok"));
    let mut request = request("hello");
    request.system = cairn_protocol::SystemPrompt {
        static_part: "You are terse.".to_string(),
        dynamic_part: "cwd: /tmp".to_string(),
    };
    request.max_tokens = 2048;
    request.tools = vec![ToolSpec {
        name: "Glob".to_string(),
        description: "Finds files".to_string(),
        input_schema: json!({"type": "object"}),
    }];
    let (result, _) = send(&client(&server), &request).await;
    ok(result);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let recorded = &requests[0];
    assert_eq!(
        (recorded.method.as_str(), recorded.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(recorded.header("x-api-key"), Some("test-key"));
    assert_eq!(recorded.header("authorization"), None);
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(
        recorded.body,
        json!({
            "model": MODEL,
            "max_tokens": 2048,
            "system": [
                {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "cwd: /tmp"}
            ],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
            ]}],
            "tools": [{"name": "Glob", "description": "Finds files",
                       "input_schema": {"type": "object"},
                       "cache_control": {"type": "ephemeral"}}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn an_auth_token_is_sent_as_a_bearer() {
    let server = ScriptedServer::start();
    server.push(Reply::text("ok"));
    let client = client_with(&server, Credential::AuthToken("gateway-token".to_string()));
    let (result, _) = send(&client, &request("hi")).await;
    ok(result);
    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer gateway-token")
    );
    assert_eq!(requests[0].header("x-api-key"), None);
}
