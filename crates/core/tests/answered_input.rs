//! An answer that allows a call with other arguments (`PermissionAnswer::AllowWith`, an
//! Agent SDK host's `updatedInput`): what the answer gives is what runs, checked as the
//! model's own arguments would be, and its rules allow the next matching call unasked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::sync::Arc;

use cairn_core::ChannelSink;
use cairn_policy::rules::RuleSet;
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Op, PermissionAnswer, StopReason, TurnEnd,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{gated_engine, tool_use};
use support::{ScriptedClient, Step, response};

#[tokio::test]
async fn the_answers_input_is_what_runs_and_its_rule_holds_for_the_session() {
    let workspace = tempfile::tempdir().unwrap();
    let first = workspace.path().join("first.txt");
    let second = workspace.path().join("second.txt");
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use(
                "first",
                "Write",
                json!({"file_path": first, "content": "model\n"}),
            )],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![tool_use(
                "second",
                "Write",
                json!({"file_path": second, "content": "2\n"}),
            )],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), Value::Null);
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(sink)))));
    ops.send(Op::user(vec![ContentBlock::text("write")]))
        .unwrap();
    let mut asked = Vec::new();
    loop {
        match events.recv().await.unwrap().event {
            AgentEvent::PermissionRequested {
                request_id,
                tool_use_id,
                ..
            } => {
                asked.push(tool_use_id);
                let answer = PermissionAnswer::AllowWith {
                    updated_input: Some(json!({"file_path": first, "content": "host\n"})),
                    rules: vec!["Write".into()],
                    mode: None,
                };
                ops.send(Op::PermissionAnswer { request_id, answer })
                    .unwrap();
            }
            AgentEvent::TurnFinished(summary) => {
                assert_eq!(summary.end, TurnEnd::Completed);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        asked,
        vec!["first"],
        "the answer's rule lets the second write run"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "host\n");
    assert_eq!(std::fs::read_to_string(&second).unwrap(), "2\n");
    drop(ops);
    task.await.unwrap();
}
