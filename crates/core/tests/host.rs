//! The session host: SessionStart's context reaches the next message (after a start and after
//! a compaction), SessionEnd runs with its reason, every turn answers the id it was sent
//! with, whether anyone is asked follows from the broker, and a spawned engine is judged by
//! its parent's governance and asks through its parent's broker.

#![allow(clippy::unwrap_used, reason = "a test should fail loudly")]

mod support;

use std::path::Path;
use std::sync::Arc;

use cairn_context::StandardPipeline;
use cairn_core::assembly::Turn;
use cairn_core::{
    AskThroughEvents, ChannelSink, EndReason, EngineConfig, Governance, NestedConfig, Session,
    SessionHost, SessionParts, StartSource,
};
use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use cairn_protocol::{
    AgentEvent, ContentBlock, DecisionSource, EventSender, NobodyToAsk, Op, PermissionAnswer,
    PermissionBroker, Role, StopReason, SystemPrompt, TurnSummary,
};
use cairn_tools::{SessionState, ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::tool_use;
use support::{ScriptedClient, Step, response};

/// A governance over `workspace` in the default mode with `deny` rules and `hooks`.
fn governance(workspace: &Path, deny: &[&str], hooks: Value) -> Governance {
    let (rules, errors) = RuleSet::new(deny.iter().map(|text| {
        (
            RuleKind::Deny,
            text.to_string(),
            RuleOrigin::new("test", workspace.to_path_buf()),
        )
    }));
    assert!(errors.is_empty(), "{errors:?}");
    support::gated::governance(workspace, rules, &hooks)
}

fn config(workspace: &Path, governance: Governance) -> EngineConfig {
    EngineConfig {
        model: "claude-sonnet-4-5".into(),
        system_prompt: Arc::new(SystemPrompt::default()),
        max_requests: None,
        max_output_tokens: 1000,
        recall: None,
        pipeline: Arc::new(StandardPipeline::new(workspace.join(".spill"))),
        governance,
    }
}

fn host(
    client: &Arc<ScriptedClient>,
    workspace: &Path,
    governance: Governance,
    broker: Arc<dyn PermissionBroker>,
) -> SessionHost {
    let context = ToolContext::new(workspace.to_path_buf());
    let tool_state: Arc<SessionState> = context.session.clone();
    SessionHost::new(
        SessionParts {
            client: client.clone(),
            tools: Arc::new(ToolRegistry::with_builtins(context)),
            config: config(workspace, governance),
            history: Vec::new(),
            log: None,
            tool_state,
            agents: None,
        },
        broker,
    )
}

fn text(reply: &str) -> Step {
    Step::Respond(response(
        vec![ContentBlock::text(reply)],
        StopReason::EndTurn,
    ))
}

fn message(text: &str) -> Turn {
    Turn::message(vec![ContentBlock::text(text)])
}

/// The events up to the main agent's next finished turn, and its summary.
async fn until_finished(session: &mut Session) -> (Vec<AgentEvent>, TurnSummary) {
    let mut events = Vec::new();
    while let Some(envelope) = session.next_event().await {
        if let AgentEvent::TurnFinished(summary) = &envelope.event {
            return (events, summary.clone());
        }
        events.push(envelope.event);
    }
    panic!("the session ended before the turn finished: {events:?}");
}

/// The text blocks of request `n`'s last message.
fn last_user_texts(client: &ScriptedClient, n: usize) -> Vec<String> {
    let requests = client.requests.lock().unwrap();
    let last = requests[n].messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    last.content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn session_start_context_goes_with_the_first_message_only_and_each_turn_answers_its_id() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![text("one"), text("two")]);
    let hooks = json!({"SessionStart": [{"hooks": [
        {"type": "command", "command": "echo 'The build uses make.'"}
    ]}]});
    let host = host(
        &client,
        workspace.path(),
        governance(workspace.path(), &[], hooks),
        Arc::new(NobodyToAsk),
    );
    let mut session = host.start(StartSource::Startup).await;
    let input = session.input();

    let first = input.submit(message("first")).unwrap();
    let (_, summary) = until_finished(&mut session).await;
    assert_eq!(summary.op_id, first);
    let second = input.submit(message("second")).unwrap();
    let (_, summary) = until_finished(&mut session).await;
    assert_eq!(summary.op_id, second);
    assert_ne!(first, second);

    assert_eq!(
        last_user_texts(&client, 0),
        vec![
            "first".to_string(),
            "<system-reminder>\nThe build uses make.\n</system-reminder>".to_string(),
        ]
    );
    assert_eq!(last_user_texts(&client, 1), vec!["second".to_string()]);
    session.end(EndReason::Other).await;
}

#[tokio::test]
async fn session_end_runs_with_its_reason_and_input_after_the_end_fails() {
    let workspace = tempfile::tempdir().unwrap();
    let record = workspace.path().join("end.json");
    let hooks = json!({"SessionEnd": [{"hooks": [
        {"type": "command", "command": format!("cat > '{}'", record.display())}
    ]}]});
    let client = ScriptedClient::new(Vec::new());
    let host = host(
        &client,
        workspace.path(),
        governance(workspace.path(), &[], hooks),
        Arc::new(NobodyToAsk),
    );
    let session = host.start(StartSource::Startup).await;
    let input = session.input();
    session.end(EndReason::Clear).await;

    let said: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(said["hook_event_name"], "SessionEnd");
    assert_eq!(said["reason"], "clear");
    assert!(
        input.submit(message("too late")).is_err(),
        "the engine has stopped"
    );
    assert!(client.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn after_a_compaction_session_start_runs_with_compact_and_its_context_goes_with_the_next_message()
 {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![
        // Long enough that its summary is the smaller: else there is nothing to gain.
        text(&"The first answer, at some length. ".repeat(30)),
        text("The summary of what was said."),
        text("after"),
    ]);
    // Only for `compact`: the start itself adds nothing.
    let hooks = json!({"SessionStart": [{"matcher": "compact", "hooks": [
        {"type": "command", "command": "echo 'Re-read NOTES.md.'"}
    ]}]});
    let host = host(
        &client,
        workspace.path(),
        governance(workspace.path(), &[], hooks),
        Arc::new(NobodyToAsk),
    );
    let mut session = host.start(StartSource::Startup).await;
    let input = session.input();
    input.submit(message("first")).unwrap();
    until_finished(&mut session).await;
    let compaction = input.compact(None).unwrap();
    let (events, summary) = until_finished(&mut session).await;
    assert_eq!(summary.op_id, compaction);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::Compacted(c) if c.summary.is_some())),
        "{events:?}"
    );
    input.submit(message("next")).unwrap();
    until_finished(&mut session).await;

    assert_eq!(last_user_texts(&client, 0), vec!["first".to_string()]);
    let after = last_user_texts(&client, 2);
    assert_eq!(after.first().map(String::as_str), Some("next"));
    assert!(
        after.contains(&"<system-reminder>\nRe-read NOTES.md.\n</system-reminder>".to_string()),
        "{after:?}"
    );
    session.end(EndReason::Other).await;
}

#[tokio::test]
async fn whether_anyone_is_asked_follows_from_the_broker() {
    for (broker, asked) in [
        (Arc::new(NobodyToAsk) as Arc<dyn PermissionBroker>, false),
        (Arc::new(AskThroughEvents::default()), true),
    ] {
        let workspace = tempfile::tempdir().unwrap();
        let target = workspace.path().join("notes.txt");
        let client = ScriptedClient::new(vec![
            Step::Respond(response(
                vec![tool_use(
                    "toolu_w",
                    "Write",
                    json!({"file_path": target, "content": "hello\n"}),
                )],
                StopReason::ToolUse,
            )),
            text("done"),
        ]);
        let host = host(
            &client,
            workspace.path(),
            governance(workspace.path(), &[], Value::Null),
            broker,
        );
        let mut session = host.start(StartSource::Startup).await;
        let input = session.input();
        input.submit(message("write it")).unwrap();
        let mut events = Vec::new();
        while let Some(envelope) = session.next_event().await {
            if let AgentEvent::PermissionRequested { request_id, .. } = &envelope.event {
                input
                    .send(Op::PermissionAnswer {
                        request_id: request_id.clone(),
                        answer: PermissionAnswer::AllowOnce,
                    })
                    .unwrap();
            }
            let finished = matches!(envelope.event, AgentEvent::TurnFinished(_));
            events.push(envelope.event);
            if finished {
                break;
            }
        }
        session.end(EndReason::Other).await;

        let decision = events
            .iter()
            .find_map(|event| match event {
                AgentEvent::PermissionDecided(decision) => Some(decision.clone()),
                _ => None,
            })
            .unwrap();
        if asked {
            assert_eq!(decision.source, DecisionSource::User);
            assert!(decision.allowed);
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
        } else {
            assert_eq!(decision.source, DecisionSource::NonInteractive);
            assert!(!decision.allowed);
            assert!(
                decision
                    .reason
                    .as_deref()
                    .unwrap()
                    .contains("nobody can be asked"),
                "{decision:?}"
            );
            assert!(!target.exists(), "a refused write leaves no file");
        }
    }
}

#[tokio::test]
async fn a_spawned_engine_is_judged_by_its_parents_gate_and_asks_through_its_parents_broker() {
    let workspace = tempfile::tempdir().unwrap();
    let victim = workspace.path().join("keep.txt");
    std::fs::write(&victim, "keep\n").unwrap();
    let target = workspace.path().join("found.txt");
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                tool_use(
                    "toolu_rm",
                    "Bash",
                    json!({"command": format!("rm '{}'", victim.display())}),
                ),
                tool_use(
                    "toolu_w",
                    "Write",
                    json!({"file_path": target, "content": "found\n"}),
                ),
            ],
            StopReason::ToolUse,
        )),
        text("Found it."),
    ]);
    let parent = host(
        &client,
        workspace.path(),
        governance(workspace.path(), &["Bash(rm:*)"], Value::Null),
        Arc::new(AskThroughEvents::default()),
    );
    let spawner = parent.spawner();
    let child = spawner.spawn(NestedConfig {
        model: "claude-haiku-4-5".into(),
        system_prompt: Arc::new(SystemPrompt {
            static_part: "You explore.".into(),
            dynamic_part: String::new(),
        }),
        max_requests: Some(5),
        max_output_tokens: 500,
        pipeline: Arc::new(StandardPipeline::new(workspace.path().join(".spill-child"))),
        tools: None,
    });

    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
    let sender = EventSender::new(Arc::new(ChannelSink(sink))).nested("explore-1", "toolu_agent");
    let task = tokio::spawn(child.run(receiver, sender));
    ops.send(Op::user(vec![ContentBlock::text("find it")]))
        .unwrap();
    let mut decisions = Vec::new();
    let mut asked_by = None;
    while let Some(envelope) = events.recv().await {
        match &envelope.event {
            AgentEvent::PermissionRequested {
                request_id, tool, ..
            } => {
                asked_by = Some((tool.clone(), envelope.from.agent_id.clone()));
                ops.send(Op::PermissionAnswer {
                    request_id: request_id.clone(),
                    answer: PermissionAnswer::AllowOnce,
                })
                .unwrap();
            }
            AgentEvent::PermissionDecided(decision) => decisions.push(decision.clone()),
            AgentEvent::TurnFinished(_) => break,
            _ => {}
        }
    }
    drop(ops);
    let child = task.await.unwrap();

    // The parent's deny rule refused the rm; the write was asked about, labelled with the
    // sub-agent, and ran once answered.
    assert_eq!(
        decisions
            .iter()
            .map(|d| (d.tool_use_id.as_str(), d.allowed, d.source))
            .collect::<Vec<_>>(),
        vec![
            ("toolu_rm", false, DecisionSource::Rule),
            ("toolu_w", true, DecisionSource::User),
        ]
    );
    assert_eq!(
        asked_by,
        Some(("Write".to_string(), Some("explore-1".to_string())))
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "found\n");
    // Its own conversation: the first request held only its prompt, on its own model.
    let requests = client.requests.lock().unwrap();
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].model, "claude-haiku-4-5");
    assert_eq!(child.messages().len(), 4);
}
