//! The permission mode changed while the session runs (`Op::SetPermissionMode`, Shift+Tab in
//! the TUI): the gate judges the next call by it, idle or in the middle of a turn, and the
//! model is told on its next message when plan mode starts and when it ends. Through the
//! real tools, gate and files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::sync::Arc;

use cairn_core::assembly::system_reminder;
use cairn_core::{ChannelSink, Engine, PLAN_MODE_ACTIVE, PLAN_MODE_ENDED};
use cairn_policy::PermissionMode;
use cairn_policy::rules::RuleSet;
use cairn_protocol::{
    AgentEvent, ContentBlock, EventEnvelope, EventSender, Message, Op, PermissionAnswer, Role,
    StopReason, TurnEnd,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{gated_engine, tool_use};
use support::{ScriptedClient, Step, response};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

fn says(text: &str) -> Step {
    Step::Respond(response(
        vec![ContentBlock::text(text)],
        StopReason::EndTurn,
    ))
}

fn calls(blocks: Vec<ContentBlock>) -> Step {
    Step::Respond(response(blocks, StopReason::ToolUse))
}

/// An engine serving operations, and the ends the test holds.
struct Running {
    ops: UnboundedSender<Op>,
    events: UnboundedReceiver<EventEnvelope>,
    task: tokio::task::JoinHandle<Engine>,
}

fn run(engine: Engine) -> Running {
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, events) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(sink)))));
    Running { ops, events, task }
}

impl Running {
    async fn next_event(&mut self) -> AgentEvent {
        self.events.recv().await.unwrap().event
    }

    /// Sends `text` and collects the turn's events, answering no question.
    async fn turn(&mut self, text: &str) -> Vec<AgentEvent> {
        self.ops
            .send(Op::user(vec![ContentBlock::text(text)]))
            .unwrap();
        let mut events = Vec::new();
        loop {
            let event = self.next_event().await;
            let finished = matches!(&event, AgentEvent::TurnFinished(summary)
                if summary.end == TurnEnd::Completed);
            events.push(event);
            if finished {
                return events;
            }
        }
    }

    async fn set_mode(&mut self, mode: PermissionMode) {
        self.ops.send(Op::SetPermissionMode { mode }).unwrap();
        assert_eq!(
            self.next_event().await,
            AgentEvent::PermissionModeChanged { mode }
        );
    }

    async fn finish(self) -> Engine {
        drop(self.ops);
        self.task.await.unwrap()
    }
}

fn asked(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::PermissionRequested { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        })
        .collect()
}

/// The content of the last message of request `n`.
fn last_message(client: &ScriptedClient, n: usize) -> Message {
    client.requests.lock().unwrap()[n]
        .messages
        .last()
        .unwrap()
        .clone()
}

fn user(blocks: Vec<ContentBlock>) -> Message {
    Message {
        role: Role::User,
        content: blocks,
    }
}

/// The result the model got for call `id`: whether it is an error, and its text.
fn result(engine: &Engine, id: &str) -> (bool, String) {
    engine
        .messages()
        .iter()
        .flat_map(|message| &message.content)
        .find_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                content,
            } if tool_use_id == id => Some((*is_error, content.text())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[tokio::test]
async fn in_plan_mode_an_edit_is_refused_and_the_model_is_told_when_plan_mode_starts_and_ends() {
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("main.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    let edit = json!({"file_path": file, "old_string": "main", "new_string": "start"});
    let client = ScriptedClient::new(vec![
        calls(vec![tool_use("read", "Read", json!({"file_path": file}))]),
        calls(vec![tool_use("edit", "Edit", edit)]),
        says("Here is my plan."),
        says("Going ahead."),
        says("Done."),
    ]);
    let engine = gated_engine(
        client.clone(),
        workspace.path(),
        RuleSet::default(),
        Value::Null,
    );
    let mut running = run(engine);

    running.set_mode(PermissionMode::Plan).await;
    let events = running.turn("rename main").await;
    assert_eq!(
        asked(&events),
        Vec::<String>::new(),
        "plan mode asks nothing"
    );
    assert_eq!(
        last_message(&client, 0),
        user(vec![
            ContentBlock::text("rename main"),
            system_reminder(PLAN_MODE_ACTIVE),
        ])
    );

    running.set_mode(PermissionMode::Default).await;
    running.turn("go ahead").await;
    assert_eq!(
        last_message(&client, 3),
        user(vec![
            ContentBlock::text("go ahead"),
            system_reminder(PLAN_MODE_ENDED),
        ])
    );
    running.turn("thanks").await;
    assert_eq!(
        last_message(&client, 4),
        user(vec![ContentBlock::text("thanks")]),
        "the model is told once"
    );

    let engine = running.finish().await;
    assert_eq!(result(&engine, "read").0, false);
    assert_eq!(
        result(&engine, "edit"),
        (true, cairn_policy::PLAN_MODE_REFUSAL.to_string())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn main() {}\n");
}

#[tokio::test]
async fn a_mode_changed_while_a_question_waits_holds_for_the_next_call_of_the_same_turn() {
    let workspace = tempfile::tempdir().unwrap();
    let first = workspace.path().join("first.txt");
    let second = workspace.path().join("second.txt");
    let client = ScriptedClient::new(vec![
        calls(vec![tool_use(
            "first",
            "Write",
            json!({"file_path": first, "content": "1\n"}),
        )]),
        calls(vec![tool_use(
            "second",
            "Write",
            json!({"file_path": second, "content": "2\n"}),
        )]),
        says("Both written."),
    ]);
    let engine = gated_engine(
        client.clone(),
        workspace.path(),
        RuleSet::default(),
        Value::Null,
    );
    let mut running = run(engine);
    running
        .ops
        .send(Op::user(vec![ContentBlock::text("write both")]))
        .unwrap();
    let mut asked = Vec::new();
    loop {
        match running.next_event().await {
            AgentEvent::PermissionRequested {
                request_id,
                tool_use_id,
                ..
            } => {
                asked.push(tool_use_id);
                // The turn is waiting on this answer: the engine still takes the change.
                running.set_mode(PermissionMode::AcceptEdits).await;
                running
                    .ops
                    .send(Op::PermissionAnswer {
                        request_id,
                        answer: PermissionAnswer::AllowOnce,
                    })
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
        "acceptEdits lets the second write run"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "1\n");
    assert_eq!(std::fs::read_to_string(&second).unwrap(), "2\n");
    running.finish().await;
}

#[tokio::test]
async fn a_session_started_in_plan_mode_is_told_once_even_across_a_resume() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![says("A plan."), says("Another plan.")]);
    let engine = gated_engine(
        client.clone(),
        workspace.path(),
        RuleSet::default(),
        Value::Null,
    );
    engine
        .config()
        .governance
        .gate()
        .set_mode(PermissionMode::Plan);
    let mut running = run(engine);
    running.turn("what would you do").await;
    assert_eq!(
        last_message(&client, 0),
        user(vec![
            ContentBlock::text("what would you do"),
            system_reminder(PLAN_MODE_ACTIVE),
        ])
    );
    let history = running.finish().await.messages().to_vec();

    // Resumed, still in plan mode: the conversation already says so.
    let resumed = gated_engine(
        client.clone(),
        workspace.path(),
        RuleSet::default(),
        Value::Null,
    )
    .with_history(history);
    resumed
        .config()
        .governance
        .gate()
        .set_mode(PermissionMode::Plan);
    let mut running = run(resumed);
    running.turn("and then?").await;
    assert_eq!(
        last_message(&client, 1),
        user(vec![ContentBlock::text("and then?")])
    );
    running.finish().await;
}
