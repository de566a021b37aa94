//! The session's model choice is resolved for each request: `opusplan` asks opus while the
//! permission mode is plan and sonnet otherwise, switching as the mode changes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::sync::Arc;

use cairn_core::ChannelSink;
use cairn_policy::PermissionMode;
use cairn_policy::rules::RuleSet;
use cairn_protocol::{AgentEvent, ContentBlock, EventSender, Op, StopReason, TurnEnd};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{gated_engine, tool_use};
use support::{ScriptedClient, Step, response};

fn says(text: &str) -> Step {
    Step::Respond(response(
        vec![ContentBlock::text(text)],
        StopReason::EndTurn,
    ))
}

#[tokio::test]
async fn opusplan_requests_opus_in_plan_mode_and_sonnet_otherwise() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "hello\n").unwrap();
    let read = tool_use(
        "read-1",
        "Read",
        json!({"file_path": workspace.path().join("notes.txt")}),
    );
    let client = ScriptedClient::new(vec![
        says("acting"),
        Step::Respond(response(vec![read], StopReason::ToolUse)),
        says("planned"),
        says("acting again"),
    ]);
    let engine = gated_engine(
        client.clone(),
        workspace.path(),
        RuleSet::default(),
        Value::Null,
    );
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(sink)))));
    // A mode sent during a turn holds at once, so each turn is waited for before the next
    // mode is sent.
    let mut turn = async |text: &str| {
        ops.send(Op::user(vec![ContentBlock::text(text)])).unwrap();
        loop {
            if let AgentEvent::TurnFinished(summary) = events.recv().await.unwrap().event {
                assert_eq!(summary.end, TurnEnd::Completed);
                return;
            }
        }
    };

    ops.send(Op::SetModel {
        model: "opusplan".into(),
    })
    .unwrap();
    turn("do it").await;
    ops.send(Op::SetPermissionMode {
        mode: PermissionMode::Plan,
    })
    .unwrap();
    turn("plan it").await;
    ops.send(Op::SetPermissionMode {
        mode: PermissionMode::AcceptEdits,
    })
    .unwrap();
    turn("do it now").await;
    drop(ops);
    task.await.unwrap();

    let models: Vec<String> = client
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|request| request.model.clone())
        .collect();
    assert_eq!(
        models,
        [
            "claude-sonnet-4-5",
            // Both requests of the planning turn, the tool call's follow-up included.
            "claude-opus-4-5",
            "claude-opus-4-5",
            "claude-sonnet-4-5",
        ]
    );
}
