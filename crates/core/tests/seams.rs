//! The engine's seams, through the real tools, gate and hooks: each call's PostToolUse hooks run
//! before the next call, hooks match a call by its canonical name, read-only shell commands
//! run at the same time, and a nested engine's events reach the face with its address.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_context::StandardPipeline;
use cairn_core::{Engine, EngineConfig};
use cairn_policy::rules::RuleSet;
use cairn_protocol::{AgentAddress, StopReason};
use cairn_protocol::{AgentEvent, CollectedEvents, ContentBlock, SystemPrompt, ToolSpec, TurnEnd};
use cairn_tools::{CallContext, PreparedCall, Safety, ToolCall, ToolExecutor, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::gated::{gated_engine, run_answering_yes, tool_use};
use support::{ScriptedClient, Step, response};
use tokio_util::sync::CancellationToken;

fn done() -> Step {
    Step::Respond(response(
        vec![ContentBlock::text("done")],
        StopReason::EndTurn,
    ))
}

/// The text of the result the model got for `id`.
fn result_text(turn: &support::gated::Turn, id: &str) -> (bool, String) {
    turn.results()
        .into_iter()
        .find(|(result_id, _, _)| result_id == id)
        .map(|(_, is_error, text)| (is_error, text))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[tokio::test]
async fn a_post_tool_use_hook_after_an_edit_has_run_before_the_next_bash_reads_the_file() {
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("main.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    // A "formatter": appends a line to the file it is told about.
    let hooks = json!({"PostToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": format!("printf '// formatted\\n' >> '{}'", file.display())}
    ]}]});
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use("read", "Read", json!({"file_path": file}))],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![
                tool_use(
                    "edit",
                    "Edit",
                    json!({"file_path": file, "old_string": "main", "new_string": "start"}),
                ),
                tool_use("cat", "Bash", json!({"command": "cat main.rs"})),
            ],
            StopReason::ToolUse,
        )),
        done(),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), hooks);
    let turn = run_answering_yes(engine, "format it").await;
    assert_eq!(
        result_text(&turn, "cat"),
        (false, "fn start() {}\n// formatted".to_string()),
        "the Bash call read the file after the Edit's hook ran"
    );
}

#[tokio::test]
async fn hooks_matching_read_fire_for_a_call_the_model_named_read_file() {
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("notes.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let log = workspace.path().join("hooks.log");
    let record = format!("cat >> '{0}'; echo >> '{0}'", log.display());
    let hooks = json!({
        "PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": record}]}],
        "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": record}]}],
    });
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use("alias", "read_file", json!({"file_path": file}))],
            StopReason::ToolUse,
        )),
        done(),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), hooks);
    let turn = run_answering_yes(engine, "read it").await;
    assert!(!result_text(&turn, "alias").0, "the call ran");
    let fired: Vec<(String, String)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            (
                input["hook_event_name"].as_str().unwrap().to_string(),
                input["tool_name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        fired,
        vec![
            ("PreToolUse".to_string(), "Read".to_string()),
            ("PostToolUse".to_string(), "Read".to_string()),
        ]
    );
}

#[tokio::test]
async fn two_read_only_bash_calls_of_one_message_run_at_the_same_time() {
    let workspace = tempfile::tempdir().unwrap();
    for fifo in ["first", "second"] {
        let made = std::process::Command::new("mkfifo")
            .arg(workspace.path().join(fifo))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                tool_use("one", "Bash", json!({"command": "cat first"})),
                tool_use("two", "Bash", json!({"command": "cat second"})),
            ],
            StopReason::ToolUse,
        )),
        done(),
    ]);
    // The pipes are fed in reverse order: opening `second` for writing waits until a reader
    // opens it, which happens only if the second call starts while the first still waits for
    // `first`. Run one after the other, the calls would never finish.
    let dir = workspace.path().to_path_buf();
    let writer = std::thread::spawn(move || {
        for (fifo, text) in [("second", "two\n"), ("first", "one\n")] {
            let mut pipe = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join(fifo))
                .unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
    });
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), Value::Null);
    let turn = tokio::time::timeout(
        Duration::from_secs(60),
        run_answering_yes(engine, "read both"),
    )
    .await
    .expect("the two reads ran at the same time");
    writer.join().unwrap();
    assert_eq!(
        turn.asked(),
        Vec::<String>::new(),
        "read-only: nobody asked"
    );
    assert_eq!(result_text(&turn, "one"), (false, "one".to_string()));
    assert_eq!(result_text(&turn, "two"), (false, "two".to_string()));
}

/// An `Agent` tool in miniature: each call runs a nested engine on the call's prompt and
/// returns its answer, streaming the nested engine's events as a sub-agent's.
struct Delegating {
    inner: Arc<ScriptedClient>,
}

#[async_trait]
impl ToolExecutor for Delegating {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "Agent".into(),
            description: "delegates".into(),
            input_schema: json!({"type": "object"}),
        }]
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        Ok(PreparedCall {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        let mut nested = Engine::new(self.inner.clone(), Arc::new(NoTools), config())
            .with_permissions(cx.permissions.clone());
        let prompt = call.input["prompt"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let summary = nested
            .run_turn(
                vec![ContentBlock::text(prompt)],
                &cx.events.nested("agent_1", &call.id),
                &cx.cancel,
            )
            .await;
        ToolOutput::text(summary.result)
    }
}

struct NoTools;

#[async_trait]
impl ToolExecutor for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        Err(ToolOutput::error(format!("No tool named {}", call.name)))
    }

    async fn execute(&self, _call: &PreparedCall, _cx: &CallContext) -> ToolOutput {
        ToolOutput::error("no tools")
    }
}

fn config() -> EngineConfig {
    EngineConfig {
        model: "claude-sonnet-4-5".into(),
        system_prompt: Arc::new(SystemPrompt::default()),
        max_requests: None,
        max_output_tokens: 1000,
        recall: None,
        pipeline: Arc::new(StandardPipeline::new(
            std::env::temp_dir().join("cairn-seams-tests"),
        )),
        governance: support::gated::bypass_governance(&std::env::temp_dir()),
    }
}

#[tokio::test]
async fn a_nested_engines_events_reach_the_face_with_the_parent_tool_use_id() {
    let outer = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use(
                "toolu_agent",
                "Agent",
                json!({"prompt": "look around"}),
            )],
            StopReason::ToolUse,
        )),
        done(),
    ]);
    let inner = ScriptedClient::new(vec![Step::Respond(response(
        vec![ContentBlock::text("found it")],
        StopReason::EndTurn,
    ))]);
    let mut engine = Engine::new(outer, Arc::new(Delegating { inner }), config());
    let collected = Arc::new(CollectedEvents::default());
    let summary = engine
        .run_turn(
            vec![ContentBlock::text("delegate")],
            &cairn_protocol::EventSender::new(collected.clone()),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(summary.end, TurnEnd::Completed);
    let envelopes = collected.take();
    let sub_agent = AgentAddress {
        agent_id: Some("agent_1".into()),
        parent_tool_use_id: Some("toolu_agent".into()),
    };
    let nested_answer = envelopes.iter().find_map(|envelope| match &envelope.event {
        AgentEvent::AssistantMessage { message, .. } if message.text() == "found it" => {
            Some(envelope.from.clone())
        }
        _ => None,
    });
    assert_eq!(nested_answer, Some(sub_agent.clone()));
    // The sub-agent's turn ends inside the call; only the main agent's ends the face's turn.
    let finished: Vec<AgentAddress> = envelopes
        .iter()
        .filter(|envelope| matches!(envelope.event, AgentEvent::TurnFinished(_)))
        .map(|envelope| envelope.from.clone())
        .collect();
    assert_eq!(finished, vec![sub_agent, AgentAddress::default()]);
    assert_eq!(
        engine.messages()[2].content,
        vec![ContentBlock::tool_result("toolu_agent", "found it", false)]
    );
}
