//! The agent loop against a scripted model client and scripted tools.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_context::StandardPipeline;
use cairn_core::{ChannelSink, Engine, EngineConfig};
use cairn_llm::MalformedToolInput;
use cairn_protocol::{
    AgentEvent, CollectedEvents, ContentBlock, EventSender, Message, Op, Role, StopReason,
    SystemPrompt, ToolSpec, TurnEnd,
};
use cairn_tools::{
    Access, CallContext, Concurrency, Destructiveness, PreparedCall, Safety, ToolCall,
    ToolExecutor, ToolOutput,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{ScriptedClient, Step, response};
use tokio_util::sync::CancellationToken;

/// The events a turn emitted, without their (main agent's) address.
fn events_of(collected: &CollectedEvents) -> Vec<AgentEvent> {
    collected
        .take()
        .into_iter()
        .map(|envelope| envelope.event)
        .collect()
}

fn tool_use(id: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: "Echo".into(),
        input,
    }
}

/// Echoes its input back and records every call. `Slow` calls are concurrency-safe and wait
/// until every slow call of the batch has started (a barrier), so they can only finish if they
/// really run at the same time; `Panic` panics; anything else runs alone.
#[derive(Default)]
struct EchoTools {
    calls: Mutex<Vec<PreparedCall>>,
    slow_barrier: Option<Arc<tokio::sync::Barrier>>,
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

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        let concurrency = if call.name == "Slow" {
            Concurrency::Safe
        } else {
            Concurrency::Exclusive
        };
        Ok(PreparedCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            safety: Safety {
                access: Access::ReadOnly,
                destructive: Destructiveness::Harmless,
                concurrency,
            },
            paths: Vec::new(),
        })
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        self.calls.lock().unwrap().push(call.clone());
        if call.name == "Panic" {
            panic!("boom");
        }
        if call.name == "Slow"
            && let Some(barrier) = &self.slow_barrier
        {
            barrier.wait().await;
        }
        ToolOutput::text(format!("{} {}", call.name.to_lowercase(), call.input))
    }
}

fn engine(client: Arc<ScriptedClient>, tools: Arc<EchoTools>, max_requests: Option<u32>) -> Engine {
    Engine::new(
        client,
        tools,
        EngineConfig {
            model: "claude-sonnet-4-5".into(),
            system_prompt: Arc::new(SystemPrompt {
                static_part: "be brief".into(),
                dynamic_part: String::new(),
            }),
            max_requests,
            max_output_tokens: 1000,
            recall: None,
            pipeline: Arc::new(StandardPipeline::new(
                std::env::temp_dir().join("cairn-engine-tests"),
            )),
            governance: support::gated::bypass_governance(&std::env::temp_dir()),
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
    let collected = Arc::new(CollectedEvents::default());
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &EventSender::new(collected.clone()),
            &CancellationToken::new(),
        )
        .await;
    let events = events_of(&collected);

    assert_eq!(summary.end, TurnEnd::Completed);
    assert_eq!(summary.result, "Done.");
    assert_eq!(summary.requests, 2);
    assert_eq!(summary.usage.input_tokens, 200);
    assert!(summary.cost_usd > 0.0);
    let requests = client.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].system.static_part, "be brief");
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
            &EventSender::discard(),
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
            &EventSender::discard(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.end, TurnEnd::MaxRequests { limit: 1 });
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
    let collected = Arc::new(CollectedEvents::default());
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("hi")],
            &EventSender::new(collected.clone()),
            &CancellationToken::new(),
        )
        .await;
    let events = events_of(&collected);
    assert_eq!(summary.end, TurnEnd::MaxTokens);
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Warning { message } if message.contains("output limit"))));
}

#[tokio::test]
async fn interrupt_op_cancels_the_stream_and_keeps_the_partial_answer_marked_interrupted() {
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
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    ops.send(Op::user(vec![ContentBlock::text("first")]))
        .unwrap();
    // Wait for the partial delta, then interrupt.
    loop {
        if let Some(AgentEvent::TextDelta { .. }) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            break;
        }
    }
    ops.send(Op::Interrupt).unwrap();
    let finished = loop {
        if let Some(AgentEvent::TurnFinished(summary)) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            break summary;
        }
    };
    assert_eq!(finished.end, TurnEnd::Interrupted);
    ops.send(Op::user(vec![ContentBlock::text("second")]))
        .unwrap();
    let finished = loop {
        if let Some(AgentEvent::TurnFinished(summary)) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            break summary;
        }
    };
    assert_eq!(finished.end, TurnEnd::Completed);
    drop(ops);
    let engine = task.await.unwrap();
    let texts: Vec<String> = engine.messages().iter().map(Message::text).collect();
    // What had streamed stays, so the model sees what it had written; then the note.
    assert_eq!(
        texts,
        vec![
            "first",
            "partial",
            cairn_core::INTERRUPTED_NOTE,
            "second",
            "Second."
        ]
    );
}

fn named_call(id: &str, name: &str) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input: json!({"id": id}),
    }
}

#[tokio::test]
async fn safe_calls_run_together_and_results_keep_the_models_order() {
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                named_call("a", "Slow"),
                named_call("b", "Slow"),
                named_call("c", "Slow"),
                named_call("d", "Echo"),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("ok")],
            StopReason::EndTurn,
        )),
    ]);
    // The three slow calls finish only if all three are running at once.
    let tools = Arc::new(EchoTools {
        calls: Mutex::default(),
        slow_barrier: Some(Arc::new(tokio::sync::Barrier::new(3))),
    });
    let mut engine = engine(client.clone(), tools.clone(), None);
    let summary = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        engine.run_turn(
            vec![ContentBlock::text("go")],
            &EventSender::discard(),
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("the slow calls did not run in parallel");
    assert_eq!(summary.end, TurnEnd::Completed);
    let ids: Vec<String> = tools
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.id.clone())
        .collect();
    assert_eq!(
        ids.last().map(String::as_str),
        Some("d"),
        "the exclusive call runs after the batch"
    );
    let results: Vec<String> = engine.messages()[2]
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => tool_use_id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(results, vec!["a", "b", "c", "d"]);
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_the_session_goes_on() {
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![named_call("p", "Panic")],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("recovered")],
            StopReason::EndTurn,
        )),
    ]);
    let mut engine = engine(client, Arc::new(EchoTools::default()), None);
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("go")],
            &EventSender::discard(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.result, "recovered");
    match &engine.messages()[2].content[0] {
        ContentBlock::ToolResult {
            is_error, content, ..
        } => {
            assert!(is_error);
            assert!(
                content.text().contains("failed unexpectedly (boom)"),
                "{content:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Echo tools whose calls write the path they are given (so the gate judges them as edits).
#[derive(Default)]
struct WritingTools {
    ran: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolExecutor for WritingTools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "Edit".into(),
            description: "edit".into(),
            input_schema: json!({"type": "object"}),
        }]
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        let path = call.input["file_path"].as_str().unwrap_or("/").to_string();
        Ok(PreparedCall {
            id: call.id.clone(),
            name: "Edit".into(),
            input: call.input.clone(),
            safety: Safety {
                access: Access::Writes,
                destructive: Destructiveness::Harmless,
                concurrency: Concurrency::Exclusive,
            },
            paths: vec![path.into()],
        })
    }

    async fn execute(&self, call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        self.ran.lock().unwrap().push(call.id.clone());
        ToolOutput::text("edited")
    }
}

fn gated_engine(
    client: Arc<ScriptedClient>,
    tools: Arc<WritingTools>,
    workspace: &std::path::Path,
) -> Engine {
    let gate = cairn_policy::PermissionGate::new(
        cairn_policy::PermissionMode::Default,
        cairn_policy::rules::RuleSet::new(Vec::new()).0,
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        workspace.to_path_buf(),
    );
    Engine::new(
        client,
        tools,
        EngineConfig {
            model: "claude-sonnet-4-5".into(),
            system_prompt: Arc::new(SystemPrompt::default()),
            max_requests: None,
            max_output_tokens: 1000,
            recall: None,
            pipeline: Arc::new(StandardPipeline::new(
                std::env::temp_dir().join("cairn-engine-tests"),
            )),
            governance: cairn_core::Governance::new(
                Arc::new(gate),
                Arc::new(cairn_policy::hooks::HookRunner::new(
                    cairn_policy::hooks::HookConfig::default(),
                    workspace.to_path_buf(),
                )),
                cairn_policy::hooks::HookCommon::default(),
            ),
        },
    )
    .with_permissions(Arc::new(cairn_core::AskThroughEvents::default()))
}

fn edit_call(id: &str, path: &std::path::Path) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: "Edit".into(),
        input: json!({"file_path": path}),
    }
}

#[tokio::test]
async fn with_someone_to_ask_a_call_short_of_the_mode_is_asked_and_the_answer_decides() {
    let workspace = tempfile::tempdir().unwrap();
    let inside = workspace.path().join("a.txt");
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                edit_call("asked_yes", &inside),
                edit_call("asked_no", &inside),
                edit_call("outside", std::path::Path::new("/etc/hosts")),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let tools = Arc::new(WritingTools::default());
    let engine = gated_engine(client.clone(), tools.clone(), workspace.path());
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (events, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    ops.send(Op::user(vec![ContentBlock::text("edit")]))
        .unwrap();

    let mut asked = Vec::new();
    let summary = loop {
        match event_rx
            .recv()
            .await
            .map(|envelope| envelope.event)
            .unwrap()
        {
            AgentEvent::PermissionRequested {
                request_id,
                tool_use_id,
                suggested_rule,
                ..
            } => {
                asked.push(tool_use_id.clone());
                let answer = if tool_use_id == "asked_yes" {
                    cairn_protocol::PermissionAnswer::AllowOnce
                } else {
                    cairn_protocol::PermissionAnswer::Deny {
                        message: Some("use the other file".into()),
                    }
                };
                assert!(suggested_rule.is_some());
                ops.send(Op::PermissionAnswer { request_id, answer })
                    .unwrap();
            }
            AgentEvent::TurnFinished(summary) => break summary,
            _ => {}
        }
    };
    assert_eq!(summary.end, TurnEnd::Completed);
    assert_eq!(
        asked,
        vec!["asked_yes", "asked_no", "outside"],
        "the call outside the workspace, two levels short, is asked about too"
    );
    assert_eq!(*tools.ran.lock().unwrap(), vec!["asked_yes"]);
    drop(ops);
    let engine = task.await.unwrap();
    let results = &engine.messages()[2].content;
    let summary: Vec<(String, bool, String)> = results
        .iter()
        .map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                content,
            } => (tool_use_id.clone(), *is_error, content.text()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        summary[0],
        ("asked_yes".to_string(), false, "edited".to_string())
    );
    assert!(
        summary[1].1 && summary[1].2.contains("They said: use the other file"),
        "{summary:?}"
    );
    assert!(
        summary[2].1 && summary[2].2.contains("They said: use the other file"),
        "{summary:?}"
    );
    assert_eq!(
        client.requests.lock().unwrap().len(),
        2,
        "the loop went on after the refusals"
    );
}

#[tokio::test]
async fn a_commands_model_and_allowed_tools_hold_for_its_turn_only() {
    let workspace = tempfile::tempdir().unwrap();
    let inside = workspace.path().join("a.txt");
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![edit_call("by_command", &inside)],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
        Step::Respond(response(
            vec![edit_call("after", &inside)],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done again")],
            StopReason::EndTurn,
        )),
    ]);
    let tools = Arc::new(WritingTools::default());
    let engine = gated_engine(client.clone(), tools.clone(), workspace.path());
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (events, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    ops.send(Op::UserMessage {
        id: String::new(),
        content: vec![ContentBlock::text("edit it")],
        model: Some("claude-haiku-4-5".into()),
        allowed_tools: vec!["Edit".into(), "Bash(".into()],
    })
    .unwrap();
    ops.send(Op::user(vec![ContentBlock::text("edit again")]))
        .unwrap();

    let mut asked = Vec::new();
    let mut warnings = Vec::new();
    let mut finished = 0;
    while finished < 2 {
        match event_rx
            .recv()
            .await
            .map(|envelope| envelope.event)
            .unwrap()
        {
            AgentEvent::PermissionRequested {
                request_id,
                tool_use_id,
                ..
            } => {
                asked.push(tool_use_id);
                ops.send(Op::PermissionAnswer {
                    request_id,
                    answer: cairn_protocol::PermissionAnswer::AllowOnce,
                })
                .unwrap();
            }
            AgentEvent::Warning { message } => warnings.push(message),
            AgentEvent::TurnFinished(_) => finished += 1,
            _ => {}
        }
    }
    assert_eq!(asked, vec!["after"], "the command's turn did not ask");
    assert!(
        warnings.iter().any(|warning| warning.contains("Bash(")),
        "{warnings:?}"
    );
    assert_eq!(*tools.ran.lock().unwrap(), vec!["by_command", "after"]);
    let models: Vec<String> = client
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|request| request.model.clone())
        .collect();
    assert_eq!(
        models,
        vec![
            "claude-haiku-4-5",
            "claude-haiku-4-5",
            "claude-sonnet-4-5",
            "claude-sonnet-4-5"
        ]
    );
    drop(ops);
    task.await.unwrap();
}

#[tokio::test]
async fn an_interrupt_also_drops_the_messages_queued_behind_the_turn() {
    let client = ScriptedClient::new(vec![
        Step::Hang,
        Step::Respond(response(
            vec![ContentBlock::text("Third.")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = engine(client.clone(), Arc::new(EchoTools::default()), None);
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (events, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(events)))));
    ops.send(Op::user(vec![ContentBlock::text("first")]))
        .unwrap();
    loop {
        if let Some(AgentEvent::TextDelta { .. }) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            break;
        }
    }
    ops.send(Op::user(vec![ContentBlock::text("queued")]))
        .unwrap();
    ops.send(Op::Interrupt).unwrap();
    ops.send(Op::user(vec![ContentBlock::text("third")]))
        .unwrap();
    let mut ends = Vec::new();
    while ends.len() < 2 {
        if let Some(AgentEvent::TurnFinished(summary)) =
            event_rx.recv().await.map(|envelope| envelope.event)
        {
            ends.push(summary.end);
        }
    }
    assert_eq!(ends, vec![TurnEnd::Interrupted, TurnEnd::Completed]);
    drop(ops);
    let engine = task.await.unwrap();
    let texts: Vec<String> = engine.messages().iter().map(Message::text).collect();
    assert_eq!(
        texts,
        vec![
            "first",
            "partial",
            cairn_core::INTERRUPTED_NOTE,
            "third",
            "Third."
        ],
        "the queued one was dropped"
    );
}
