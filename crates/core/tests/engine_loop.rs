//! The agent loop against a scripted model client and scripted tools.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_core::{Engine, EngineConfig};
use cairn_llm::{
    MalformedToolInput, ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse,
};
use cairn_protocol::{
    AgentEvent, ContentBlock, Message, Op, Role, StopReason, ToolSpec, TurnEnd, Usage,
};
use cairn_tools::{ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// What the scripted client does for one request.
enum Step {
    Respond(ModelResponse),
    /// Streams one delta, then waits until cancelled.
    Hang,
}

#[derive(Default)]
struct ScriptedClient {
    steps: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ScriptedClient {
    fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(ScriptedClient {
            steps: Mutex::new(steps.into()),
            requests: Mutex::default(),
        })
    }
}

#[async_trait]
impl ModelClient for ScriptedClient {
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        let step = self
            .steps
            .lock()
            .unwrap()
            .pop_front()
            .expect("a scripted step");
        match step {
            Step::Respond(response) => {
                for block in &response.content {
                    if let ContentBlock::Text { text } = block {
                        on_event(ModelEvent::TextDelta(text.clone()));
                    }
                }
                Ok(response)
            }
            Step::Hang => {
                on_event(ModelEvent::TextDelta("partial".into()));
                cancel.cancelled().await;
                Err(ModelError::Cancelled)
            }
        }
    }
}

fn response(content: Vec<ContentBlock>, stop_reason: StopReason) -> ModelResponse {
    ModelResponse {
        id: "msg_1".into(),
        model: "claude-sonnet-4-5".into(),
        content,
        stop_reason: Some(stop_reason),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        },
        malformed_tool_inputs: Vec::new(),
    }
}

fn tool_use(id: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: "Echo".into(),
        input,
    }
}

/// Echoes its input back; records every call.
#[derive(Default)]
struct EchoTools {
    calls: Mutex<Vec<ToolCall>>,
}

#[async_trait]
impl ToolExecutor for EchoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "Echo".into(),
            description: "echo".into(),
            input_schema: json!({"type": "object"}),
        }]
    }

    async fn execute(&self, call: &ToolCall, _cancel: &CancellationToken) -> ToolOutput {
        self.calls.lock().unwrap().push(call.clone());
        ToolOutput::text(format!("echo {}", call.input))
    }
}

fn engine(client: Arc<ScriptedClient>, tools: Arc<EchoTools>, max_turns: Option<u32>) -> Engine {
    Engine::new(
        client,
        tools,
        EngineConfig {
            model: "claude-sonnet-4-5".into(),
            system_prompt: "be brief".into(),
            max_turns,
            max_output_tokens: 1000,
        },
    )
}

#[tokio::test]
async fn tool_round_trip_sends_results_back_and_ends_with_the_answer() {
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                ContentBlock::text("Let me look."),
                tool_use("t1", json!({"x": 1})),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("Done.")],
            StopReason::EndTurn,
        )),
    ]);
    let tools = Arc::new(EchoTools::default());
    let mut engine = engine(client.clone(), tools.clone(), None);
    let mut events = Vec::new();
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &mut events,
            &CancellationToken::new(),
        )
        .await;

    assert_eq!(summary.end, TurnEnd::Completed);
    assert_eq!(summary.result, "Done.");
    assert_eq!(summary.num_turns, 2);
    assert_eq!(summary.usage.input_tokens, 200);
    assert!(summary.cost_usd > 0.0);
    let requests = client.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].system, "be brief");
    assert_eq!(
        requests[1].messages[2],
        Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result("t1", "echo {\"x\":1}", false)],
        }
    );
    assert_eq!(engine.messages().len(), 4);
    assert!(matches!(events.last(), Some(AgentEvent::TurnFinished(_))));
    assert!(events.contains(&AgentEvent::TextDelta {
        text: "Let me look.".into()
    }));
}

#[tokio::test]
async fn malformed_tool_input_becomes_an_error_result_and_the_loop_goes_on() {
    let mut first = response(vec![tool_use("t1", json!({}))], StopReason::ToolUse);
    first.malformed_tool_inputs.push(MalformedToolInput {
        id: "t1".into(),
        name: "Echo".into(),
        error: "The input for Echo was not valid JSON".into(),
    });
    let client = ScriptedClient::new(vec![
        Step::Respond(first),
        Step::Respond(response(
            vec![ContentBlock::text("Sorry.")],
            StopReason::EndTurn,
        )),
    ]);
    let tools = Arc::new(EchoTools::default());
    let mut engine = engine(client.clone(), tools.clone(), None);
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &mut Vec::new(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.end, TurnEnd::Completed);
    assert!(
        tools.calls.lock().unwrap().is_empty(),
        "a malformed call must not run"
    );
    assert_eq!(
        engine.messages()[2].content,
        vec![ContentBlock::tool_result(
            "t1",
            "The input for Echo was not valid JSON",
            true
        )]
    );
}

#[tokio::test]
async fn max_turns_stops_the_loop_with_an_error_end() {
    let client = ScriptedClient::new(vec![Step::Respond(response(
        vec![tool_use("t1", json!({}))],
        StopReason::ToolUse,
    ))]);
    let mut engine = engine(client.clone(), Arc::new(EchoTools::default()), Some(1));
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &mut Vec::new(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.end, TurnEnd::MaxTurns { limit: 1 });
    assert!(summary.end.is_error());
    assert_eq!(client.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn max_tokens_warns_that_the_answer_was_cut() {
    let client = ScriptedClient::new(vec![Step::Respond(response(
        vec![ContentBlock::text("The answer is")],
        StopReason::MaxTokens,
    ))]);
    let mut engine = engine(client, Arc::new(EchoTools::default()), None);
    let mut events = Vec::new();
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &mut events,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.end, TurnEnd::MaxTokens);
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Warning { message } if message.contains("output limit"))));
}

#[tokio::test]
async fn interrupt_op_cancels_the_stream_and_appends_no_half_message() {
    let client = ScriptedClient::new(vec![
        Step::Hang,
        Step::Respond(response(
            vec![ContentBlock::text("Second.")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = engine(client.clone(), Arc::new(EchoTools::default()), None);
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (events, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut sink = events;
        engine.run(receiver, &mut sink).await
    });
    ops.send(Op::UserMessage {
        content: vec![ContentBlock::text("first")],
    })
    .unwrap();
    // Wait for the partial delta, then interrupt.
    loop {
        if let Some(AgentEvent::TextDelta { .. }) = event_rx.recv().await {
            break;
        }
    }
    ops.send(Op::Interrupt).unwrap();
    let finished = loop {
        if let Some(AgentEvent::TurnFinished(summary)) = event_rx.recv().await {
            break summary;
        }
    };
    assert_eq!(finished.end, TurnEnd::Interrupted);
    ops.send(Op::UserMessage {
        content: vec![ContentBlock::text("second")],
    })
    .unwrap();
    let finished = loop {
        if let Some(AgentEvent::TurnFinished(summary)) = event_rx.recv().await {
            break summary;
        }
    };
    assert_eq!(finished.end, TurnEnd::Completed);
    drop(ops);
    let engine = task.await.unwrap();
    let texts: Vec<String> = engine.messages().iter().map(Message::text).collect();
    assert_eq!(texts, vec!["first", "second", "Second."]);
}
