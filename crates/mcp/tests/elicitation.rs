//! Elicitation through the face's [`Elicitor`], against the test MCP server over stdio: the
//! elicitor is told the server, its message and its schema; its answer reaches the server,
//! and accepted content that does not fit the schema goes as a decline.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test should fail loudly"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_mcp::config::{ConfiguredServer, Scope, ServerConfig, StdioConfig};
use cairn_mcp::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationFuture, ElicitationRequest, Elicitor,
};
use cairn_mcp::{Limits, McpTools, Roots, StartOptions};
use cairn_test_support::mcp::server_binary;
use cairn_tools::{CallContext, ToolCall, ToolExecutor};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Answers with `answer`, keeping the requests it was asked.
struct Scripted {
    answer: ElicitationAnswer,
    asked: Arc<Mutex<Vec<ElicitationRequest>>>,
}

impl Elicitor for Scripted {
    fn elicit(&self, request: ElicitationRequest) -> ElicitationFuture {
        self.asked.lock().unwrap().push(request);
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

/// What the test server's `elicit` tool says the client answered, with what the elicitor was
/// asked.
async fn elicit(answer: ElicitationAnswer) -> (String, Vec<ElicitationRequest>) {
    let home = tempfile::tempdir().unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let tools = McpTools::start(
        vec![ConfiguredServer {
            name: "test".into(),
            scope: Scope::Flag,
            origin: "test".into(),
            config: ServerConfig::Stdio(StdioConfig {
                command: server_binary().display().to_string(),
                args: vec!["--client-requests".into()],
                env: BTreeMap::new(),
                timeout: None,
                startup_timeout: None,
                always_load: false,
            }),
        }],
        StartOptions {
            cairn_home: home.path().to_path_buf(),
            project: home.path().to_path_buf(),
            inherited_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            limits: Limits {
                startup: Duration::from_secs(20),
                call: Duration::from_secs(20),
                max_output_tokens: 25_000,
            },
            roots: Roots::fixed(Vec::new()),
            elicitation: Elicitation::new(Scripted {
                answer,
                asked: asked.clone(),
            }),
        },
    );
    tools.wait_all().await;
    let call = ToolCall {
        id: "t1".into(),
        name: "mcp__test__elicit".into(),
        input: json!({}),
    };
    let prepared = tools.try_prepare(&call).unwrap();
    let cx = CallContext::detached(CancellationToken::new());
    let output = tools.execute(&prepared, &cx).await;
    let asked = asked.lock().unwrap().clone();
    (output.content.text(), asked)
}

#[tokio::test]
async fn the_elicitor_is_asked_and_its_answer_reaches_the_server() {
    let content = json!({"name": "Ada"}).as_object().cloned().unwrap();
    let (said, asked) = elicit(ElicitationAnswer::Accept(content)).await;
    assert_eq!(said, "elicitation: \"accept\"");
    assert_eq!(
        asked,
        [ElicitationRequest {
            server: "test".into(),
            message: "Your name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        }]
    );
    assert_eq!(
        elicit(ElicitationAnswer::Cancel).await.0,
        "elicitation: \"cancel\""
    );
}

#[tokio::test]
async fn content_that_does_not_fit_the_schema_goes_as_a_decline() {
    let content = json!({"name": 7}).as_object().cloned().unwrap();
    let (said, asked) = elicit(ElicitationAnswer::Accept(content)).await;
    assert_eq!(said, "elicitation: \"decline\"");
    assert_eq!(asked.len(), 1);
}
