//! A call bound to fail fails at once: the engine validates each call (the real tools, a
//! real permission gate) before its hooks run and before the user is asked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod support;

use std::path::Path;
use std::sync::Arc;

use cairn_core::{Engine, EngineConfig, Governance};
use cairn_policy::hooks::{HookCommon, HookConfig, HookRunner};
use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use cairn_policy::{Asking, Mode, PermissionGate};
use cairn_protocol::{
    AgentEvent, ContentBlock, Op, PermissionAnswer, StopReason, SystemPrompt, TurnEnd,
};
use cairn_tools::{ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{ScriptedClient, Step, response};

/// An engine with the built-in tools working in `workspace`, a gate in the default mode (edits
/// in the workspace are asked about) with `rules`, and `hooks`.
fn gated_engine(
    client: Arc<ScriptedClient>,
    workspace: &Path,
    rules: RuleSet,
    hooks: Value,
) -> Engine {
    let gate = PermissionGate::new(
        Mode::Default,
        rules,
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        workspace.to_path_buf(),
        Asking::Interactive,
    );
    let (hook_config, problems) = HookConfig::from_settings(&hooks);
    assert_eq!(problems, Vec::<String>::new());
    let tools = ToolRegistry::with_builtins(ToolContext::new(workspace.to_path_buf()));
    Engine::new(
        client,
        Arc::new(tools),
        EngineConfig {
            model: "claude-sonnet-4-5".into(),
            system_prompt: Arc::new(SystemPrompt::default()),
            max_turns: None,
            max_output_tokens: 1000,
            spill_dir: workspace.join(".spill"),
            governance: Governance {
                gate: Some(Arc::new(gate)),
                hooks: Some(Arc::new(HookRunner::new(
                    hook_config,
                    workspace.to_path_buf(),
                ))),
                hook_common: Some(HookCommon::default()),
            },
        },
    )
}

fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// What one turn showed: the events, and the engine after it.
struct Turn {
    events: Vec<AgentEvent>,
    engine: Engine,
}

impl Turn {
    /// The ids of the calls the user was asked about, in order.
    fn asked(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::PermissionRequested { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// The ids of the calls a permission decision was made for, in order.
    fn decided(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::PermissionDecided(decision) => Some(decision.tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every tool result sent to the model: id, whether it is an error, and its text.
    fn results(&self) -> Vec<(String, bool, String)> {
        self.engine
            .messages()
            .iter()
            .flat_map(|message| &message.content)
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    is_error,
                    content,
                } => Some((tool_use_id.clone(), *is_error, content.text())),
                _ => None,
            })
            .collect()
    }
}

/// Runs one turn, answering "yes, this once" to every question.
async fn run_answering_yes(engine: Engine, prompt: &str) -> Turn {
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut sink = sink;
        engine.run(receiver, &mut sink).await
    });
    ops.send(Op::UserMessage {
        content: vec![ContentBlock::text(prompt)],
    })
    .unwrap();
    let mut events = Vec::new();
    loop {
        let event = event_rx.recv().await.unwrap();
        if let AgentEvent::PermissionRequested { request_id, .. } = &event {
            ops.send(Op::PermissionAnswer {
                request_id: request_id.clone(),
                answer: PermissionAnswer::AllowOnce,
            })
            .unwrap();
        }
        let finished = matches!(&event, AgentEvent::TurnFinished(summary)
            if summary.end == TurnEnd::Completed);
        events.push(event);
        if finished {
            break;
        }
    }
    drop(ops);
    Turn {
        events,
        engine: task.await.unwrap(),
    }
}

#[tokio::test]
async fn an_edit_bound_to_fail_fails_at_once_unasked_and_unhooked_and_a_valid_one_still_asks() {
    let workspace = tempfile::tempdir().unwrap();
    let readme = workspace.path().join("README.md");
    let items = "- item\n".repeat(39);
    std::fs::write(&readme, format!("# Title\n{items}")).unwrap();
    let notes = workspace.path().join("notes.txt");
    std::fs::write(&notes, "never read\n").unwrap();
    let hook_log = workspace.path().join("pre-tool-use.log");
    let hooks = json!({"PreToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": format!("cat >> '{}'; echo >> '{}'", hook_log.display(), hook_log.display())}
    ]}]});
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use("read", "Read", json!({"file_path": readme}))],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![
                tool_use(
                    "many",
                    "Edit",
                    json!({"file_path": readme, "old_string": "- item", "new_string": "- thing"}),
                ),
                tool_use(
                    "unread",
                    "Edit",
                    json!({"file_path": notes, "old_string": "never", "new_string": "once"}),
                ),
                tool_use(
                    "valid",
                    "Edit",
                    json!({"file_path": readme, "old_string": "# Title", "new_string": "# Cairn"}),
                ),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), hooks);

    let turn = run_answering_yes(engine, "retitle the readme").await;

    assert_eq!(
        turn.asked(),
        vec!["valid"],
        "only the valid edit is asked about"
    );
    assert_eq!(turn.decided(), vec!["read", "valid"]);
    let hooked: Vec<String> = std::fs::read_to_string(&hook_log)
        .unwrap()
        .lines()
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            input["tool_use_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(hooked, vec!["valid"], "only the valid edit meets the hooks");

    let results = turn.results();
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(
        results[1],
        (
            "many".to_string(),
            true,
            format!(
                "Found 39 matches of old_string in {} (at lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, \
                 …), but replace_all is not set. Add surrounding lines to old_string so that it \
                 matches exactly one place, or set replace_all to true to replace every match.",
                readme.display()
            )
        )
    );
    assert_eq!(
        results[2],
        (
            "unread".to_string(),
            true,
            format!(
                "{} has not been read in this session. Read it first, then change it.",
                notes.display()
            )
        )
    );
    let (id, is_error, text) = &results[3];
    assert_eq!((id.as_str(), *is_error), ("valid", false), "{text}");
    assert!(text.starts_with("Edited "), "{text}");
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        format!("# Cairn\n{items}")
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "never read\n");
}

#[tokio::test]
async fn each_call_is_checked_in_the_state_the_calls_before_it_left() {
    let workspace = tempfile::tempdir().unwrap();
    let new_file = workspace.path().join("new.txt");
    // The Edit would be refused if it were checked before the Write created the file.
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![
                tool_use(
                    "write",
                    "Write",
                    json!({"file_path": new_file, "content": "one\n"}),
                ),
                tool_use(
                    "edit",
                    "Edit",
                    json!({"file_path": new_file, "old_string": "one", "new_string": "two"}),
                ),
            ],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), RuleSet::default(), Value::Null);

    let turn = run_answering_yes(engine, "make a file").await;

    assert_eq!(turn.asked(), vec!["write", "edit"]);
    let outcomes: Vec<(String, bool)> = turn
        .results()
        .into_iter()
        .map(|(id, is_error, _)| (id, is_error))
        .collect();
    assert_eq!(
        outcomes,
        vec![("write".to_string(), false), ("edit".to_string(), false)],
        "{:?}",
        turn.results()
    );
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "two\n");
}

#[tokio::test]
async fn a_call_a_deny_rule_refuses_gets_the_refusal_not_its_validation_error() {
    let workspace = tempfile::tempdir().unwrap();
    let secret = workspace.path().join("secret.txt");
    std::fs::write(&secret, "hidden\n").unwrap();
    let (rules, errors) = RuleSet::new([(
        RuleKind::Deny,
        "Edit".to_string(),
        RuleOrigin::new("the test", workspace.path()),
    )]);
    assert_eq!(errors, Vec::new());
    let client = ScriptedClient::new(vec![
        Step::Respond(response(
            vec![tool_use(
                "edit",
                "Edit",
                json!({"file_path": secret, "old_string": "hidden", "new_string": "shown"}),
            )],
            StopReason::ToolUse,
        )),
        Step::Respond(response(
            vec![ContentBlock::text("done")],
            StopReason::EndTurn,
        )),
    ]);
    let engine = gated_engine(client, workspace.path(), rules, Value::Null);

    let turn = run_answering_yes(engine, "edit the secret").await;

    // Not "has not been read in this session", which would say the file exists.
    assert_eq!(
        turn.results(),
        vec![(
            "edit".to_string(),
            true,
            "The permission rule Edit denies this call.".to_string()
        )]
    );
    assert_eq!(turn.asked(), Vec::<String>::new());
}
