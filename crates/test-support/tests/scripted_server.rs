//! The scripted server seen from the wire, through a raw HTTP/1.1 client.

#![allow(clippy::unwrap_used, reason = "a test should fail loudly")]

mod raw_http;

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_test_support::{RecordedRequest, Reply, ScriptedBlock, ScriptedServer};
use pretty_assertions::assert_eq;
use raw_http::{Ending, post, read_until, send};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(20);

fn request_body(model: &str) -> String {
    json!({"model": model, "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]})
        .to_string()
}

const HELLO_SSE: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_scripted_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

"#;

/// The `data:` JSON of each SSE event in `body`.
fn event_data(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let data = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

#[test]
fn text_reply_streams_the_api_sse_byte_for_byte_one_event_per_chunk() {
    let server = ScriptedServer::start();
    server.push(Reply::text("Hello"));

    let response = post(&server.url(), &[], &request_body("claude-test"));

    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("request-id"), Some("req_scripted_1"));
    assert_eq!(response.ending, Ending::Complete);
    assert_eq!(response.body_text(), HELLO_SSE);
    assert_eq!(
        Reply::text("Hello").body_bytes("claude-test"),
        HELLO_SSE.as_bytes()
    );
    let event_sizes: Vec<usize> = HELLO_SSE.split_inclusive("\n\n").map(str::len).collect();
    assert_eq!(response.chunk_sizes, event_sizes);
}

#[test]
fn chunk_size_one_delivers_the_same_bytes_one_per_chunk() {
    let server = ScriptedServer::start();
    let reply = Reply::text("Grüße, 世界! A longer text that needs several deltas 🦀.");
    server.push(reply.clone().with_chunk_size(1));
    server.push(reply.clone().with_chunk_size(7));

    let ones = post(&server.url(), &[], &request_body("m"));
    let sevens = post(&server.url(), &[], &request_body("m"));

    assert_eq!(ones.ending, Ending::Complete);
    assert_eq!(ones.body, reply.body_bytes("m"));
    assert!(ones.chunk_sizes.iter().all(|size| *size == 1));
    // The second message carries the next id and is otherwise the same.
    let second = String::from_utf8(reply.body_bytes("m"))
        .unwrap()
        .replace("msg_scripted_1", "msg_scripted_2");
    assert_eq!(sevens.body_text(), second);
    let (last, full) = sevens.chunk_sizes.split_last().unwrap();
    assert!(
        full.iter().all(|size| *size == 7),
        "{:?}",
        sevens.chunk_sizes
    );
    assert!((1..=7).contains(last));
}

#[test]
fn message_ids_count_messages_and_model_falls_back() {
    let server = ScriptedServer::start();
    server.push(Reply::text("one"));
    server.push(Reply::error(529, "overloaded_error", "Overloaded"));
    server.push(Reply::text("two"));

    let first = post(&server.url(), &[], &request_body("claude-a"));
    let overloaded = post(&server.url(), &[], &request_body("claude-a"));
    let second = post(&server.url(), &[], "not json");

    assert_eq!(
        event_data(&first.body_text())[0]["message"]["id"],
        "msg_scripted_1"
    );
    assert_eq!(overloaded.status, 529);
    assert_eq!(overloaded.header("request-id"), Some("req_scripted_2"));
    let start = &event_data(&second.body_text())[0]["message"];
    assert_eq!(start["id"], "msg_scripted_2");
    assert_eq!(start["model"], "scripted-model");
}

#[test]
fn blocks_stream_in_order_with_their_indices() {
    let server = ScriptedServer::start();
    server.push(Reply::blocks(vec![
        ScriptedBlock::Thinking {
            thinking: "Pondering".into(),
            signature: "c2ln".into(),
        },
        ScriptedBlock::Text("Let me look.".into()),
        ScriptedBlock::ToolUse {
            id: "toolu_1".into(),
            name: "read".into(),
            input: json!({"path": "src/main.rs"}),
        },
        ScriptedBlock::RawToolUse {
            id: "toolu_2".into(),
            name: "bash".into(),
            input_json: "{\"command\": \"ls".into(),
        },
    ]));

    let response = post(&server.url(), &[], &request_body("m"));

    let events = event_data(&response.body_text());
    let shape: Vec<String> = events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap();
            match (&event["index"], &event["delta"]["type"]) {
                (Value::Number(index), Value::String(delta)) => format!("{kind} {index} {delta}"),
                (Value::Number(index), _) => format!("{kind} {index}"),
                _ => kind.to_owned(),
            }
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            "message_start",
            "ping",
            "content_block_start 0",
            "content_block_delta 0 thinking_delta",
            "content_block_delta 0 signature_delta",
            "content_block_stop 0",
            "content_block_start 1",
            "content_block_delta 1 text_delta",
            "content_block_stop 1",
            "content_block_start 2",
            "content_block_delta 2 input_json_delta",
            "content_block_delta 2 input_json_delta",
            "content_block_delta 2 input_json_delta",
            "content_block_stop 2",
            "content_block_start 3",
            "content_block_delta 3 input_json_delta",
            "content_block_delta 3 input_json_delta",
            "content_block_stop 3",
            "message_delta",
            "message_stop",
        ]
    );
    assert_eq!(
        events[9]["content_block"],
        json!({"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}})
    );
    let raw_input: String = events[15..17]
        .iter()
        .map(|event| event["delta"]["partial_json"].as_str().unwrap())
        .collect();
    assert_eq!(raw_input, "{\"command\": \"ls");
    assert_eq!(events[18]["delta"]["stop_reason"], "tool_use");
}

#[test]
fn cut_after_sends_exactly_the_first_bytes_then_drops_the_connection() {
    let server = ScriptedServer::start();
    let reply = Reply::text("This reply never gets to finish.");
    server.push(reply.clone().cut_after(300));
    server.push(reply.clone().with_chunk_size(1).cut_after(5));

    let cut = post(&server.url(), &[], &request_body("m"));
    let tiny = post(&server.url(), &[], &request_body("m"));

    assert_eq!(cut.status, 200);
    assert_eq!(cut.ending, Ending::Truncated);
    assert_eq!(cut.body, reply.body_bytes("m")[..300]);
    assert_eq!(tiny.ending, Ending::Truncated);
    assert_eq!(tiny.body, b"event");
    assert_eq!(tiny.chunk_sizes, vec![1; 5]);
}

#[test]
fn cut_after_zero_still_sends_the_head() {
    let server = ScriptedServer::start();
    server.push(Reply::error(500, "api_error", "boom").cut_after(0));

    let response = post(&server.url(), &[], &request_body("m"));

    assert_eq!(response.status, 500);
    assert_eq!(response.body, b"");
    assert_eq!(response.ending, Ending::Truncated);
}

#[test]
fn stall_after_sends_the_first_bytes_then_nothing() {
    let server = ScriptedServer::start();
    let reply = Reply::text("Stuck halfway.");
    server.push(reply.clone().stall_after(100));

    let stream = send(&server.url(), "/v1/messages", &[], &request_body("m"));
    let (response, mut stream) = read_until(stream, |response| response.body.len() >= 100);

    assert_eq!(response.body, reply.body_bytes("m")[..100]);
    // Proving a negative needs a bounded wait: nothing more arrives within it.
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let err = stream.read(&mut [0u8; 64]).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err}"
    );
    // Dropping the server with the stalled connection open must not hang.
    drop(server);
}

#[test]
fn error_reply_has_its_status_headers_and_json_body() {
    let server = ScriptedServer::start();
    server.push(
        Reply::error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )
        .with_header("retry-after", "3")
        .with_header("x-should-retry", "true"),
    );

    let response = post(&server.url(), &[], &request_body("m"));

    assert_eq!(response.status, 429);
    assert_eq!(response.ending, Ending::Complete);
    assert_eq!(response.header("retry-after"), Some("3"));
    assert_eq!(response.header("x-should-retry"), Some("true"));
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("request-id"), Some("req_scripted_1"));
    assert_eq!(
        serde_json::from_slice::<Value>(&response.body).unwrap(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"}})
    );
}

#[test]
fn requests_are_recorded_with_headers_and_json_body() {
    let server = ScriptedServer::start();
    server.push(Reply::text("a"));
    server.push(Reply::text("b"));
    let body = request_body("claude-test");

    post(
        &server.url(),
        &[
            ("x-api-key", "sk-test"),
            ("Anthropic-Version", "2023-06-01"),
        ],
        &body,
    );
    post(&server.url(), &[], "{not json");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.body, serde_json::from_str::<Value>(&body).unwrap());
    assert_eq!(first.header("X-API-KEY"), Some("sk-test"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.header("x-missing"), None);
    assert!(
        first
            .headers
            .contains(&("anthropic-version".to_owned(), "2023-06-01".to_owned()))
    );
    assert_eq!(requests[1].body, Value::Null);
}

#[test]
fn empty_queue_answers_500_naming_the_request() {
    let server = ScriptedServer::start();
    server.push(Reply::text("only one"));

    post(&server.url(), &[], &request_body("m"));
    let response = post(&server.url(), &[], &request_body("m"));

    assert_eq!(response.status, 500);
    let body: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "api_error");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("scripted server: no reply queued for request 2"),
        "{message}"
    );
}

#[test]
fn default_reply_serves_every_request_once_the_queue_is_empty() {
    let server = ScriptedServer::start();
    server.push(Reply::text("queued"));
    server.set_default_reply(Reply::text("again"));

    let bodies: Vec<String> = (0..3)
        .map(|_| post(&server.url(), &[], &request_body("m")).body_text())
        .collect();

    let texts: Vec<String> = bodies
        .iter()
        .map(|body| {
            event_data(body)[3]["delta"]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(texts, vec!["queued", "again", "again"]);
}

#[test]
fn wait_for_requests_wakes_when_requests_arrive() {
    let server = ScriptedServer::start();
    server.push(Reply::text("a"));
    server.push(Reply::text("b"));
    let url = server.url();

    let client = std::thread::spawn(move || {
        post(&url, &[], &request_body("first"));
        post(&url, &[], &request_body("second"));
    });
    let requests: Vec<RecordedRequest> = server.wait_for_requests(2, TIMEOUT);
    client.join().unwrap();

    let models: Vec<&Value> = requests.iter().map(|r| &r.body["model"]).collect();
    assert_eq!(models, vec!["first", "second"]);
}

#[test]
#[should_panic(expected = "for 1 request(s), but 0 arrived")]
fn wait_for_requests_panics_after_the_timeout() {
    let server = ScriptedServer::start();
    server.wait_for_requests(1, Duration::from_millis(10));
}

#[test]
fn delay_holds_back_the_response_head() {
    let server = ScriptedServer::start();
    let delay = Duration::from_millis(100);
    server.push(Reply::text("late").with_delay(delay));

    let started = Instant::now();
    let response = post(&server.url(), &[], &request_body("m"));

    assert!(started.elapsed() >= delay, "{:?}", started.elapsed());
    assert_eq!(response.status, 200);
    assert_eq!(response.ending, Ending::Complete);
}

#[tokio::test]
async fn works_from_an_async_test() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let server = ScriptedServer::start();
    server.push(Reply::text("async"));
    let body = request_body("m");
    let address = server.url().trim_start_matches("http://").to_owned();

    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: {address}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();

    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(
        response.contains(r#""text_delta","text":"async""#),
        "{response}"
    );
    assert!(response.ends_with("0\r\n\r\n"), "{response}");
}

#[test]
fn binary_prints_its_url_and_answers_every_request() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn-scripted-server"))
        .args(["--text", "bench reply", "--chunk-size", "64"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim_end().to_owned();

    let responses: Vec<_> = (0..3)
        .map(|_| post(&url, &[], &request_body("m")))
        .collect();
    child.kill().unwrap();
    child.wait().unwrap();

    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    for (n, response) in responses.iter().enumerate() {
        let expected = String::from_utf8(Reply::text("bench reply").body_bytes("m"))
            .unwrap()
            .replace("msg_scripted_1", &format!("msg_scripted_{}", n + 1));
        assert_eq!(response.body_text(), expected);
        assert_eq!(response.chunk_sizes[0], 64);
    }
}
