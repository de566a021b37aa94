//! An engine with the built-in tools, a real gate and real hooks, and a way to run a turn
//! answering every question.

use std::path::Path;
use std::sync::Arc;

use cairn_context::StandardPipeline;
use cairn_core::{AskThroughEvents, ChannelSink, Engine, EngineConfig, Governance};
use cairn_policy::hooks::{HookCommon, HookConfig, HookRunner};
use cairn_policy::rules::RuleSet;
use cairn_policy::{PermissionGate, PermissionMode};
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Op, PermissionAnswer, SystemPrompt, TurnEnd,
};
use cairn_tools::{ToolContext, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::ScriptedClient;

/// Governance over `workspace`: a gate in the default mode (edits in the workspace are asked
/// about) with `rules`, and `hooks` (Claude Code's `hooks` setting; `Value::Null` for none).
pub fn governance(workspace: &Path, rules: RuleSet, hooks: &Value) -> Governance {
    let gate = PermissionGate::new(
        PermissionMode::Default,
        rules,
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        workspace.to_path_buf(),
    );
    let (hook_config, problems) = HookConfig::from_settings(hooks);
    assert_eq!(problems, Vec::<String>::new());
    Governance::new(
        Arc::new(gate),
        Arc::new(HookRunner::new(hook_config, workspace.to_path_buf())),
        HookCommon::default(),
    )
}

/// An engine with the built-in tools working in `workspace`, under [`governance`] with
/// `rules` and `hooks`, asking through events.
pub fn gated_engine(
    client: Arc<ScriptedClient>,
    workspace: &Path,
    rules: RuleSet,
    hooks: Value,
) -> Engine {
    let tools = ToolRegistry::with_builtins(ToolContext::new(workspace.to_path_buf()));
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
            governance: governance(workspace, rules, &hooks),
        },
    )
    .with_permissions(Arc::new(AskThroughEvents::default()))
}

pub fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// Governance that lets every call run: a gate in `bypassPermissions` over `workspace`, no
/// hooks. For tests of the loop itself, where no call is judged.
pub fn bypass_governance(workspace: &Path) -> Governance {
    let gate = PermissionGate::new(
        PermissionMode::BypassPermissions,
        RuleSet::default(),
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        workspace.to_path_buf(),
    );
    Governance::new(
        Arc::new(gate),
        Arc::new(HookRunner::new(
            HookConfig::default(),
            workspace.to_path_buf(),
        )),
        HookCommon::default(),
    )
}

/// What one turn showed: the events, and the engine after it.
pub struct Turn {
    pub events: Vec<AgentEvent>,
    pub engine: Engine,
}

impl Turn {
    /// The ids of the calls the user was asked about, in order.
    pub fn asked(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::PermissionRequested { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// The ids of the calls a permission decision was made for, in order.
    pub fn decided(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::PermissionDecided(decision) => Some(decision.tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every tool result sent to the model: id, whether it is an error, and its text.
    pub fn results(&self) -> Vec<(String, bool, String)> {
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
pub async fn run_answering_yes(engine: Engine, prompt: &str) -> Turn {
    let (ops, receiver) = tokio::sync::mpsc::unbounded_channel();
    let (sink, mut event_rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(engine.run(receiver, EventSender::new(Arc::new(ChannelSink(sink)))));
    ops.send(Op::user(vec![ContentBlock::text(prompt)]))
        .unwrap();
    let mut events = Vec::new();
    loop {
        let event = event_rx
            .recv()
            .await
            .map(|envelope| envelope.event)
            .unwrap();
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
