//! A request interrupted while its answer streams is billed all the same: the engine counts
//! what the API reported of it, end to end against the scripted server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::sync::Arc;

use async_trait::async_trait;
use cairn_context::StandardPipeline;
use cairn_core::{ChannelSink, Engine, EngineConfig};
use cairn_llm::{AnthropicClient, AnthropicConfig, Credential};
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Op, SystemPrompt, ToolSpec, TurnEnd, Usage,
};
use cairn_test_support::{Reply, ScriptedServer};
use cairn_tools::{CallContext, PreparedCall, ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;

mod support;

const MODEL: &str = "claude-sonnet-4-5";
const ANSWER: &str = "Counting the files one by one, slowly, for a long while.";

/// No tools: the answer is text.
struct NoTools;

#[async_trait]
impl ToolExecutor for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        Err(ToolOutput::error(format!("no tool {}", call.name)))
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        ToolOutput::error(format!("no tool {}", call.name))
    }
}

/// The byte offset just after the first `text_delta` event of `body`.
fn after_first_delta(body: &[u8]) -> usize {
    let text = String::from_utf8_lossy(body);
    let mut offset = 0;
    for event in text.split_inclusive("\n\n") {
        offset += event.len();
        if event.contains("text_delta") {
            return offset;
        }
    }
    panic!("no text_delta in the reply");
}

#[tokio::test]
async fn an_interrupted_answer_keeps_its_id_and_its_usage_counts() {
    let server = ScriptedServer::start();
    let reply = Reply::text(ANSWER).with_usage(1_200, 40);
    let stall = after_first_delta(&reply.body_bytes(MODEL));
    server.push(reply.stall_after(stall));
    let mut config = AnthropicConfig::new(Credential::ApiKey("test-key".into()));
    config.base_url = server.url();
    let client = Arc::new(AnthropicClient::new(config).unwrap());
    let engine = Engine::new(
        client,
        Arc::new(NoTools),
        EngineConfig {
            model: MODEL.into(),
            system_prompt: Arc::new(SystemPrompt {
                static_part: "be brief".into(),
                dynamic_part: String::new(),
            }),
            max_requests: None,
            max_output_tokens: 1000,
            recall: None,
            pipeline: Arc::new(StandardPipeline::new(
                std::env::temp_dir().join("cairn-interrupted-usage-tests"),
            )),
            governance: support::gated::bypass_governance(&std::env::temp_dir()),
        },
    );
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (events, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    ops.send(Op::user(vec![ContentBlock::text("count them")]))
        .unwrap();
    // The first words have streamed: the stream is flowing and stalls there.
    let mut streamed = String::new();
    while streamed.is_empty() {
        if let Some(AgentEvent::TextDelta { text }) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            streamed = text;
        }
    }
    ops.send(Op::Interrupt).unwrap();
    let mut answer = None;
    let summary = loop {
        match event_rx.recv().await.map(|envelope| envelope.event) {
            Some(AgentEvent::AssistantMessage {
                message, id, usage, ..
            }) => answer = Some((message, id, usage)),
            Some(AgentEvent::TurnFinished(summary)) => break summary,
            Some(_) => {}
            None => panic!("the engine stopped before the turn ended"),
        }
    };
    drop(ops);
    task.await.unwrap();

    // What message_start reported, with the output that streamed (at least the placeholder).
    let expected = Usage {
        input_tokens: 1_200,
        output_tokens: cairn_context::estimate_tokens(&streamed).max(1) as u64,
        ..Usage::default()
    };
    assert_eq!(summary.end, TurnEnd::Interrupted);
    assert_eq!(summary.requests, 1);
    assert_eq!(summary.usage, expected);
    let price = cairn_llm::registry::lookup(MODEL)
        .cost_usd(&expected)
        .unwrap();
    assert!(price > 0.0);
    assert_eq!(summary.cost(), Some(price));
    let (message, id, usage) = answer.expect("the interrupted answer is reported");
    assert_eq!(id, "msg_scripted_1");
    assert_eq!(usage, expected);
    assert_eq!(message.text(), streamed);
    assert!(
        ANSWER.starts_with(&streamed) && streamed.len() < ANSWER.len(),
        "{streamed:?}"
    );
}
