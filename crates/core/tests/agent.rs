//! Sub-agents through the session host: the `Agent` tool starts a nested engine with its own
//! context, its role's tools and model; only its final answer returns; `Task` and loose role
//! names work; an unknown role is an error listing the roles; custom agents get exactly what
//! they declare; the main agent's hooks do not fire for a sub-agent but SubagentStart and
//! SubagentStop do; several Agent calls in one message run at once, up to the cap.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use cairn_context::StandardPipeline;
use cairn_context::agents::{AgentDefinition, AgentOrigin};
use cairn_core::agent::AgentCatalog;
use cairn_core::assembly::Turn;
use cairn_core::{EngineConfig, Session, SessionHost, SessionParts, StartSource};
use cairn_llm::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse};
use cairn_protocol::{
    AgentEvent, ContentBlock, EventEnvelope, NobodyToAsk, StopReason, SystemPrompt, TurnSummary,
};
use cairn_tools::{SessionState, ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{bypass_governance, tool_use};
use support::{ScriptedClient, Step, response};
use tokio_util::sync::CancellationToken;

const MAIN_MODEL: &str = "claude-sonnet-4-5";

fn host(
    client: Arc<dyn ModelClient>,
    workspace: &Path,
    catalog: AgentCatalog,
    hooks: Value,
) -> SessionHost {
    let context = ToolContext::new(workspace.to_path_buf());
    let tool_state: Arc<SessionState> = context.session.clone();
    let mut governance = bypass_governance(workspace);
    if !hooks.is_null() {
        let (config, problems) = cairn_policy::hooks::HookConfig::from_settings(&hooks);
        assert_eq!(problems, Vec::<String>::new());
        governance = cairn_core::Governance::new(
            governance.gate().clone(),
            Arc::new(cairn_policy::hooks::HookRunner::new(
                config,
                workspace.to_path_buf(),
            )),
            cairn_policy::hooks::HookCommon::default(),
        );
    }
    SessionHost::new(
        SessionParts {
            client,
            tools: Arc::new(ToolRegistry::with_builtins(context)),
            config: EngineConfig {
                model: MAIN_MODEL.into(),
                system_prompt: Arc::new(SystemPrompt {
                    static_part: "You are the main agent.".into(),
                    dynamic_part: String::new(),
                }),
                max_requests: None,
                max_output_tokens: 1000,
                recall: None,
                pipeline: Arc::new(StandardPipeline::new(workspace.join(".spill"))),
                governance,
            },
            history: Vec::new(),
            log: None,
            tool_state,
            agents: Some(catalog.with_spill_dir(workspace.join(".agents"))),
        },
        Arc::new(NobodyToAsk),
    )
}

fn text(reply: &str) -> Step {
    Step::Respond(response(
        vec![ContentBlock::text(reply)],
        StopReason::EndTurn,
    ))
}

fn calls(blocks: Vec<ContentBlock>) -> Step {
    Step::Respond(response(blocks, StopReason::ToolUse))
}

fn agent_call(id: &str, name: &str, role: &str, prompt: &str) -> ContentBlock {
    tool_use(
        id,
        name,
        json!({"description": "look around", "prompt": prompt, "subagent_type": role}),
    )
}

/// Every event up to the main agent's finished turn, and its summary.
async fn run(session: &mut Session, prompt: &str) -> (Vec<EventEnvelope>, TurnSummary) {
    session
        .input()
        .submit(Turn::message(vec![ContentBlock::text(prompt)]))
        .unwrap();
    let mut events = Vec::new();
    while let Some(envelope) = session.next_event().await {
        if let (true, AgentEvent::TurnFinished(summary)) =
            (envelope.from.is_main(), &envelope.event)
        {
            return (events, summary.clone());
        }
        events.push(envelope);
    }
    panic!("the session ended before the turn finished");
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|tool| tool.name.clone()).collect()
}

/// The `(content, is_error)` of the result for `id` in `request`'s last message.
fn result_of(request: &ModelRequest, id: &str) -> (String, bool) {
    request
        .messages
        .last()
        .unwrap()
        .content
        .iter()
        .find_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } if tool_use_id == id => Some((content.text(), *is_error)),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn an_explore_sub_agent_has_its_own_context_read_only_tools_and_the_small_model() {
    let workspace = tempfile::tempdir().unwrap();
    let notes = workspace.path().join("notes.txt");
    std::fs::write(&notes, "INTERMEDIATE-42\n").unwrap();
    let client = ScriptedClient::new(vec![
        calls(vec![agent_call(
            "toolu_agent",
            "Agent",
            "Explore",
            "Where is the note?",
        )]),
        calls(vec![tool_use(
            "toolu_read",
            "Read",
            json!({"file_path": notes}),
        )]),
        text("The note is in notes.txt."),
        text("Done."),
    ]);
    let mut session = host(
        client.clone(),
        workspace.path(),
        AgentCatalog::built_in().with_small_model(Some("claude-3-5-haiku-20241022".into())),
        Value::Null,
    )
    .start(StartSource::Startup)
    .await;
    let (events, summary) = run(&mut session, "Find the note; the parent's secret is P-7.").await;
    assert_eq!(summary.result, "Done.");

    let requests = client.requests.lock().unwrap();
    assert_eq!(requests.len(), 4);
    assert!(tool_names(&requests[0]).contains(&"Agent".to_string()));
    let child = &requests[1];
    assert_eq!(tool_names(child), ["Read", "Glob", "Grep", "LS"]);
    assert_eq!(child.model, "claude-3-5-haiku-20241022");
    assert_eq!(child.messages.len(), 1, "only its own prompt");
    assert_eq!(child.messages[0].text(), "Where is the note?");
    assert!(child.system.static_part.contains("read and search"));
    assert!(!child.system.static_part.contains("main agent"));
    // Its intermediate result stays in its own context.
    assert!(
        result_of(&requests[2], "toolu_read")
            .0
            .contains("INTERMEDIATE-42")
    );
    let (answer, is_error) = result_of(&requests[3], "toolu_agent");
    assert!(!is_error, "{answer}");
    assert!(answer.starts_with("The note is in notes.txt.\n\n[Explore sub-agent (look around): 2 requests, 200 input and 20 output tokens, "), "{answer}");
    assert!(!answer.contains("INTERMEDIATE-42"), "{answer}");
    assert_eq!(requests[3].messages.len(), 3, "the parent's own turn only");

    // The sub-agent's messages go out under the Agent call's id.
    let nested: Vec<(Option<&str>, Option<&str>)> = events
        .iter()
        .filter(|envelope| matches!(envelope.event, AgentEvent::AssistantMessage { .. }))
        .map(|envelope| {
            (
                envelope.from.agent_id.as_deref(),
                envelope.from.parent_tool_use_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        nested,
        vec![
            (None, None),
            (Some("agent_1"), Some("toolu_agent")),
            (Some("agent_1"), Some("toolu_agent")),
            (None, None),
        ]
    );
}

#[tokio::test]
async fn task_is_an_alias_loose_role_names_work_and_an_unknown_role_lists_the_roles() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![
        calls(vec![agent_call("toolu_1", "Task", "explorer", "Look.")]),
        text("Looked."),
        calls(vec![agent_call("toolu_2", "Agent", "deployer", "Deploy.")]),
        text("Done."),
    ]);
    let mut session = host(
        client.clone(),
        workspace.path(),
        AgentCatalog::built_in(),
        Value::Null,
    )
    .start(StartSource::Startup)
    .await;
    run(&mut session, "go").await;

    let requests = client.requests.lock().unwrap();
    assert_eq!(requests.len(), 4, "the unknown role started no sub-agent");
    assert_eq!(requests[1].model, "claude-haiku-4-5", "Explore, on haiku");
    assert!(result_of(&requests[2], "toolu_1").0.starts_with("Looked."));
    assert_eq!(
        result_of(&requests[3], "toolu_2"),
        (
            "No agent type named \"deployer\". Available agent types: general-purpose, \
             Explore, Plan, Verification, statusline-setup, cairn-guide."
                .to_string(),
            true
        )
    );
}

#[tokio::test]
async fn each_role_gets_its_tools_and_never_the_agent_tool() {
    let cases: [(&str, &[&str]); 4] = [
        (
            "general-purpose",
            &[
                "Bash",
                "BashOutput",
                "TaskStop",
                "TaskOutput",
                "Read",
                "Glob",
                "Grep",
                "LS",
                "Write",
                "Edit",
                "MultiEdit",
                "NotebookEdit",
                "TodoWrite",
            ],
        ),
        ("Plan", &["Read", "Glob", "Grep", "LS", "TodoWrite"]),
        (
            "Verification",
            &["Bash", "BashOutput", "Read", "Glob", "Grep", "LS"],
        ),
        ("statusline-setup", &["Read", "Edit"]),
    ];
    for (role, tools) in cases {
        let workspace = tempfile::tempdir().unwrap();
        let client = ScriptedClient::new(vec![
            calls(vec![agent_call("toolu_a", "Agent", role, "Work.")]),
            text("Worked."),
            text("Done."),
        ]);
        let mut session = host(
            client.clone(),
            workspace.path(),
            AgentCatalog::built_in(),
            Value::Null,
        )
        .start(StartSource::Startup)
        .await;
        run(&mut session, "go").await;
        let requests = client.requests.lock().unwrap();
        assert_eq!(tool_names(&requests[1]), tools, "{role}");
        assert_eq!(requests[1].model, MAIN_MODEL, "{role} inherits the model");
    }
}

#[tokio::test]
async fn a_custom_agent_gets_exactly_its_tools_its_model_and_its_body_as_system_prompt() {
    let workspace = tempfile::tempdir().unwrap();
    let client = ScriptedClient::new(vec![
        calls(vec![agent_call(
            "toolu_r",
            "Agent",
            "Reviewer",
            "Review it.",
        )]),
        calls(vec![tool_use(
            "toolu_w",
            "Write",
            json!({"file_path": "x", "content": "x"}),
        )]),
        text("Reviewed."),
        text("Done."),
    ]);
    let reviewer = AgentDefinition {
        name: "reviewer".into(),
        description: "Reviews diffs.".into(),
        origin: AgentOrigin::Project,
        path: None,
        tools: Some(vec![
            "Read".into(),
            "Bash(git diff:*)".into(),
            "Grep".into(),
        ]),
        disallowed_tools: vec!["Grep".into()],
        model: Some("opus".into()),
        max_turns: Some(3),
        permission_mode: None,
        worktree: false,
        skills: Vec::new(),
        mcp_servers: None,
        prompt: "You review code and nothing else.".into(),
    };
    let mut session = host(
        client.clone(),
        workspace.path(),
        AgentCatalog::built_in().with_custom(vec![reviewer]),
        Value::Null,
    )
    .start(StartSource::Startup)
    .await;
    run(&mut session, "review").await;

    let requests = client.requests.lock().unwrap();
    let description = &requests[0]
        .tools
        .iter()
        .find(|tool| tool.name == "Agent")
        .unwrap()
        .description;
    assert!(
        description.contains("- reviewer: Reviews diffs. (Tools: Read, Bash(git diff:*), Grep)"),
        "{description}"
    );
    let child = &requests[1];
    assert_eq!(tool_names(child), ["Bash", "Read"]);
    assert_eq!(child.model, cairn_llm::models::resolve_model("opus"));
    assert!(
        child
            .system
            .static_part
            .ends_with("You review code and nothing else."),
        "{}",
        child.system.static_part
    );
    // A tool it was not given is unknown to it, and nothing was written.
    let (refused, is_error) = result_of(&requests[2], "toolu_w");
    assert!(is_error);
    assert_eq!(
        refused,
        "No tool named \"Write\". Available tools: Bash, Read."
    );
    assert!(!workspace.path().join("x").exists());
}

#[tokio::test]
async fn a_sub_agent_fires_subagent_start_and_stop_but_not_the_main_agents_hooks() {
    let workspace = tempfile::tempdir().unwrap();
    let log = workspace.path().join("hooks.log");
    let record =
        json!([{"hooks": [{"type": "command", "command": "cat >> hooks.log; echo >> hooks.log"}]}]);
    let hooks = json!({
        "UserPromptSubmit": record,
        "Stop": record,
        "SubagentStart": record,
        "SubagentStop": record,
    });
    let client = ScriptedClient::new(vec![
        calls(vec![agent_call("toolu_p", "Agent", "plan", "Plan it.")]),
        text("The plan."),
        text("Done."),
    ]);
    let mut session = host(client, workspace.path(), AgentCatalog::built_in(), hooks)
        .start(StartSource::Startup)
        .await;
    run(&mut session, "go").await;

    let fired: Vec<(String, Option<String>, Option<String>)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            let field = |name: &str| input.get(name).and_then(Value::as_str).map(String::from);
            (
                field("hook_event_name").unwrap(),
                field("agent_type"),
                field("last_assistant_message"),
            )
        })
        .collect();
    assert_eq!(
        fired,
        vec![
            ("UserPromptSubmit".into(), None, None),
            ("SubagentStart".into(), Some("Plan".into()), None),
            (
                "SubagentStop".into(),
                Some("Plan".into()),
                Some("The plan.".into())
            ),
            ("Stop".into(), None, None),
        ]
    );
}

/// A client for the parallel tests: the main agent's first request starts two sub-agents;
/// each sub-agent's request waits until `together` of them are in flight.
struct Fanout {
    together: usize,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    arrived: tokio::sync::Notify,
}

#[async_trait]
impl ModelClient for Fanout {
    async fn stream(
        &self,
        request: &ModelRequest,
        _on_event: &mut (dyn FnMut(ModelEvent) + Send),
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let sub_agent = request.system.static_part.contains("sub-agent of cairn");
        if !sub_agent {
            let content = if request.messages.len() == 1 {
                vec![
                    agent_call("toolu_1", "Agent", "Explore", "one"),
                    agent_call("toolu_2", "Agent", "Explore", "two"),
                ]
            } else {
                vec![ContentBlock::text("Done.")]
            };
            return Ok(response(content, StopReason::ToolUse));
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        self.arrived.notify_waiters();
        // Held until the others it must run with have arrived too.
        loop {
            let notified = self.arrived.notified();
            if self.most_in_flight.load(Ordering::SeqCst) >= self.together {
                break;
            }
            notified.await;
        }
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let prompt = request.messages[0].text();
        Ok(response(
            vec![ContentBlock::text(format!("answer to {prompt}"))],
            StopReason::EndTurn,
        ))
    }
}

async fn fan_out(together: usize, cap: usize) -> (usize, Vec<String>) {
    let workspace = tempfile::tempdir().unwrap();
    let client = Arc::new(Fanout {
        together,
        in_flight: AtomicUsize::new(0),
        most_in_flight: AtomicUsize::new(0),
        arrived: tokio::sync::Notify::new(),
    });
    let mut session = host(
        client.clone(),
        workspace.path(),
        AgentCatalog::built_in().with_max_concurrent(cap),
        Value::Null,
    )
    .start(StartSource::Startup)
    .await;
    // Run one after the other, the first would wait for the second forever: fail instead.
    let (events, _) = tokio::time::timeout(Duration::from_secs(30), run(&mut session, "go"))
        .await
        .expect("the two sub-agents ran one after the other");
    let results = events
        .iter()
        .filter(|envelope| envelope.from.is_main())
        .filter_map(|envelope| match &envelope.event {
            AgentEvent::ToolCallResult { content, .. } => Some(
                content
                    .text()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            ),
            _ => None,
        })
        .collect();
    (client.most_in_flight.load(Ordering::SeqCst), results)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agent_calls_in_one_message_run_at_the_same_time() {
    let (most, mut results) = fan_out(2, 10).await;
    assert_eq!(most, 2);
    results.sort();
    assert_eq!(results, vec!["answer to one", "answer to two"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_holds_sub_agents_back() {
    let (most, results) = fan_out(1, 1).await;
    assert_eq!(most, 1);
    assert_eq!(results.len(), 2);
}
