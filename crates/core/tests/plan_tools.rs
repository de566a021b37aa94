//! The tools that talk to the user, asked as permission questions the way an SDK host
//! answers them (`can_use_tool`): the answers to `AskUserQuestion` come back in the call's
//! updated input, a plan approved with a plain "allow" ends plan mode, and one approved with
//! a mode goes on in it. Through the real tools, gate and governance.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::sync::Arc;

use cairn_context::StandardPipeline;
use cairn_core::{AskThroughEvents, ChannelSink, Engine, EngineConfig};
use cairn_policy::PermissionMode;
use cairn_policy::rules::RuleSet;
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Op, PermissionAnswer, StopReason, SystemPrompt, TurnEnd,
};
use cairn_tools::{PlanHandback, ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{governance, tool_use};
use support::{ScriptedClient, Step, response};

fn engine(client: Arc<ScriptedClient>, workspace: &std::path::Path) -> Engine {
    let mut tools = ToolRegistry::with_builtins(ToolContext::new(workspace.to_path_buf()));
    tools.register_dialog_tools(PlanHandback::Approved, None);
    Engine::new(
        client,
        Arc::new(tools),
        EngineConfig {
            model: "claude-sonnet-4-5".into(),
            system_prompt: Arc::new(SystemPrompt::default()),
            max_requests: None,
            max_output_tokens: 1000,
            recall: None,
            pipeline: Arc::new(StandardPipeline::new(workspace.join(".spill"))),
            governance: governance(workspace, RuleSet::default(), &Value::Null),
        },
    )
    .with_permissions(Arc::new(AskThroughEvents::default()))
}

/// Runs one turn, answering each question with what `answer` makes of its tool and input;
/// returns the turn's events.
async fn turn(
    engine: Engine,
    mode: PermissionMode,
    answer: impl Fn(&str, &Value) -> PermissionAnswer,
) -> (Engine, Vec<AgentEvent>) {
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut events) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(sink)))));
    ops.send(Op::SetPermissionMode { mode }).unwrap();
    ops.send(Op::user(vec![ContentBlock::text("go")])).unwrap();
    let mut seen = Vec::new();
    loop {
        let event = events.recv().await.unwrap().event;
        if let AgentEvent::PermissionRequested {
            request_id,
            tool,
            input,
            ..
        } = &event
        {
            ops.send(Op::PermissionAnswer {
                request_id: request_id.clone(),
                answer: answer(tool, input),
            })
            .unwrap();
        }
        let done = matches!(&event, AgentEvent::TurnFinished(_));
        seen.push(event);
        if done {
            break;
        }
    }
    drop(ops);
    (task.await.unwrap(), seen)
}

fn calls(blocks: Vec<ContentBlock>) -> Step {
    Step::Respond(response(blocks, StopReason::ToolUse))
}

/// The model hands back the plan `1. Fix it`, then works on it.
fn plan_then_work() -> Arc<ScriptedClient> {
    ScriptedClient::new(vec![
        calls(vec![tool_use(
            "x1",
            "ExitPlanMode",
            json!({"plan": "1. Fix it"}),
        )]),
        says("Fixing it."),
    ])
}

fn says(text: &str) -> Step {
    Step::Respond(response(
        vec![ContentBlock::text(text)],
        StopReason::EndTurn,
    ))
}

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
        .unwrap()
}

fn modes(events: &[AgentEvent]) -> Vec<PermissionMode> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::PermissionModeChanged { mode } => Some(*mode),
            _ => None,
        })
        .collect()
}

fn questions() -> Value {
    json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "SQLite", "description": "One file"},
            {"label": "Postgres", "description": "A server"}
        ],
        "multiSelect": false
    }]})
}

#[tokio::test]
async fn answers_in_the_updated_input_reach_the_model_and_the_decision_records_them() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![
        calls(vec![tool_use("q1", "AskUserQuestion", questions())]),
        says("Postgres, then."),
    ]);
    let (engine, events) = turn(
        engine(client, workspace.path()),
        PermissionMode::Default,
        |tool, input| {
            assert_eq!(tool, "AskUserQuestion");
            let mut answered = input.clone();
            answered["answers"] = json!({"Which database?": "Postgres"});
            PermissionAnswer::AllowWith {
                updated_input: Some(answered),
                rules: Vec::new(),
                mode: None,
            }
        },
    )
    .await;
    assert_eq!(
        result(&engine, "q1"),
        (
            false,
            "User has answered your questions: \"Which database?\"=\"Postgres\". You can now \
             continue with the user's answers in mind."
                .to_string()
        )
    );
    let decided = events
        .iter()
        .find_map(|event| match event {
            AgentEvent::PermissionDecided(decision) => Some(decision.input.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(decided["answers"], json!({"Which database?": "Postgres"}));
}

#[tokio::test]
async fn an_updated_input_that_does_not_fit_the_tool_is_an_error_and_nothing_runs() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![
        calls(vec![tool_use("q1", "AskUserQuestion", questions())]),
        says("Then I will guess."),
    ]);
    let (engine, _) = turn(
        engine(client, workspace.path()),
        PermissionMode::Default,
        |_, _| PermissionAnswer::AllowWith {
            updated_input: Some(json!({"questions": []})),
            rules: Vec::new(),
            mode: None,
        },
    )
    .await;
    assert_eq!(
        result(&engine, "q1"),
        (
            true,
            "AskUserQuestion takes 1 to 4 questions, not 0.".to_string()
        )
    );
}

#[tokio::test]
async fn a_plan_approved_with_a_mode_goes_on_in_it_and_a_plain_allow_ends_plan_mode() {
    for (answer, expected) in [
        (
            PermissionAnswer::AllowWith {
                updated_input: None,
                rules: Vec::new(),
                mode: Some(PermissionMode::AcceptEdits),
            },
            vec![PermissionMode::Plan, PermissionMode::AcceptEdits],
        ),
        (
            PermissionAnswer::AllowOnce,
            vec![PermissionMode::Plan, PermissionMode::Default],
        ),
    ] {
        let workspace = tempfile::tempdir().unwrap();
        let client = plan_then_work();
        let (engine, events) = turn(
            engine(client, workspace.path()),
            PermissionMode::Plan,
            |_, _| answer.clone(),
        )
        .await;
        assert_eq!(modes(&events), expected, "{answer:?}");
        assert_eq!(
            engine.config().governance.gate().mode(),
            *expected.last().unwrap()
        );
        let (is_error, text) = result(&engine, "x1");
        assert!(
            !is_error && text.ends_with("## Approved Plan:\n1. Fix it"),
            "{text}"
        );
        assert!(matches!(
            events.last(),
            Some(AgentEvent::TurnFinished(summary)) if summary.end == TurnEnd::Completed
                && summary.result == "Fixing it."
        ));
    }
}

#[tokio::test]
async fn an_approved_plan_is_a_session_entry_of_its_own_that_a_resume_restores() {
    use cairn_session::{Entry, NewSession, SessionId, SessionStore, read_entries};

    let workspace = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let id = SessionId::new();
    let new = NewSession {
        model: "claude-sonnet-4-5".into(),
        git_branch: None,
    };
    let client = plan_then_work();
    let engine =
        engine(client, workspace.path()).with_session_log(store.start(workspace.path(), &id, new));
    turn(engine, PermissionMode::Plan, |_, _| {
        PermissionAnswer::AllowOnce
    })
    .await;

    let loaded = store.load(workspace.path(), &id).unwrap();
    assert_eq!(loaded.approved_plan.as_deref(), Some("1. Fix it"));
    // Right after the results that approved it.
    let entries = read_entries(&loaded.path).unwrap().entries;
    let plan = entries
        .iter()
        .position(|entry| matches!(entry, Entry::Plan(plan) if plan.plan == "1. Fix it"))
        .expect("a plan entry");
    assert!(
        matches!(entries[plan - 1], Entry::ToolResults(_)),
        "{entries:?}"
    );
    assert_eq!(
        entries
            .iter()
            .filter(|entry| matches!(entry, Entry::Plan(_)))
            .count(),
        1
    );
}
