//! The `Agent` tool: starts a sub-agent for one task and returns its final answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use cairn_context::StandardPipeline;
use cairn_llm::models;
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{
    ContentBlock, PermissionMode, SystemPrompt, ToolResultContent, ToolSpec, TurnEnd, TurnSummary,
};
use cairn_tools::{
    CallContext, PrepareError, PreparedCall, Safety, ToolCall, ToolExecutor, ToolOutput,
};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::background::{AgentTask, Background, TaskStatus, task_notification};
use super::roles::SUB_AGENT_PREAMBLE;
use super::worktree::Worktree;
use super::{AgentCatalog, AgentProfile, ModelChoice, RoleTools, ToolChoice};
use crate::assembly::system_reminder;
use crate::engine::AgentScope;
use crate::host::{NestedConfig, Spawner};

/// The tool's name; Claude Code's older name, `Task`, is accepted for it.
pub const AGENT_TOOL: &str = "Agent";

/// The `Agent` tool over a session's [`Spawner`]: each call runs a nested engine of the role
/// it names to the end, its events going out under the call's id, and answers with the
/// sub-agent's last message. Calls are concurrency-safe, so several in one message run at
/// once, at most [`AgentCatalog::max_concurrent`] of them.
pub struct AgentTool {
    spawner: Spawner,
    catalog: AgentCatalog,
    parent_model: String,
    max_output_tokens: u32,
    max_requests: Option<u32>,
    running: Arc<Semaphore>,
    next_id: AtomicU64,
    background: Option<Background>,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("catalog", &self.catalog)
            .field("parent_model", &self.parent_model)
            .finish_non_exhaustive()
    }
}

/// What one call asks for.
struct AgentInput {
    description: String,
    prompt: String,
    subagent_type: String,
    model: Option<String>,
    run_in_background: bool,
    /// `isolation: "worktree"`.
    worktree: bool,
}

impl AgentInput {
    fn parse(input: &Value) -> Result<AgentInput, String> {
        let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::trim);
        let required = |name: &str| match field(name) {
            Some(text) if !text.is_empty() => Ok(text.to_string()),
            _ => Err(format!(
                "Agent: `{name}` is required and must be a non-empty string."
            )),
        };
        Ok(AgentInput {
            description: field("description").unwrap_or_default().to_string(),
            prompt: required("prompt")?,
            subagent_type: field("subagent_type")
                .filter(|name| !name.is_empty())
                .unwrap_or("general-purpose")
                .to_string(),
            model: field("model")
                .filter(|model| !model.is_empty())
                .map(String::from),
            run_in_background: match input.get("run_in_background") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(background)) => *background,
                Some(other) => {
                    return Err(format!(
                        "Agent: `run_in_background` must be true or false, not {other}."
                    ));
                }
            },
            worktree: match field("isolation") {
                None => false,
                Some("worktree") => true,
                Some(other) => {
                    return Err(format!(
                        "Agent: `isolation` must be \"worktree\", not {other:?}."
                    ));
                }
            },
        })
    }
}

impl AgentTool {
    /// The tool over `spawner` with `catalog`'s agents; `parent_model` is what `inherit`
    /// means, and sub-agents share the parent's output and request limits.
    pub fn new(
        spawner: Spawner,
        catalog: AgentCatalog,
        parent_model: String,
        max_output_tokens: u32,
        max_requests: Option<u32>,
    ) -> AgentTool {
        AgentTool {
            spawner,
            running: Arc::new(Semaphore::new(catalog.max_concurrent())),
            catalog,
            parent_model,
            max_output_tokens,
            max_requests,
            next_id: AtomicU64::new(0),
            background: None,
        }
    }

    /// Lets calls run their sub-agent in the background (`run_in_background: true`), listed
    /// with `background`'s tasks and ending with a notification for the parent. Without it
    /// such a call is an error result.
    pub fn with_background(mut self, background: Background) -> AgentTool {
        self.background = Some(background);
        self
    }

    fn description(&self) -> String {
        let mut text = String::from(
            "Starts a sub-agent for a task that is better done apart: it works in its own \
             context with its own tools and answers with one final report, which is all you \
             get back (it cannot see this conversation, so say everything it needs in the \
             prompt). Start several in one message to run them at the same time, or set \
             run_in_background to go on working while one runs.\n\n\
             Agent types (subagent_type):\n",
        );
        for profile in self.catalog.profiles() {
            let tools = match &profile.tools {
                ToolChoice::All => "every tool".to_string(),
                ToolChoice::Only(tools) => tools.join(", "),
            };
            text.push_str(&format!(
                "- {}: {} (Tools: {tools})\n",
                profile.name, profile.description
            ));
        }
        text
    }

    fn model_for(&self, profile: &AgentProfile, asked: Option<&str>) -> String {
        match (asked, &profile.model) {
            (Some(model), _) => models::resolve_model(model),
            (None, ModelChoice::Inherit) => self.parent_model.clone(),
            (None, ModelChoice::Small) => self.catalog.small_model(),
            (None, ModelChoice::Named(model)) => models::resolve_model(model),
        }
    }

    fn unknown_role(&self, name: &str) -> ToolOutput {
        ToolOutput::error(format!(
            "No agent type named {name:?}. Available agent types: {}.",
            self.catalog.names().join(", ")
        ))
    }

    /// Runs one sub-agent to the end of its turn.
    async fn run(&self, call: &PreparedCall, input: AgentInput, cx: &CallContext) -> ToolOutput {
        let Some(profile) = self.catalog.find(&input.subagent_type) else {
            return self.unknown_role(&input.subagent_type);
        };
        if input.run_in_background && self.background.is_none() {
            return ToolOutput::error(
                "Agent: `run_in_background` is not available in this session; start the \
                 sub-agent without it.",
            );
        }
        let running = tokio::select! {
            permit = self.running.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return ToolOutput::error("The Agent tool is shutting down."),
            },
            _ = cx.cancel.cancelled() => {
                return ToolOutput::error("The user interrupted before this sub-agent started.");
            }
        };
        let agent_id = format!("agent_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let events = cx.events.nested(agent_id.clone(), call.id.clone());
        let model = self.model_for(profile, input.model.as_deref());

        let mut content = vec![ContentBlock::text(input.prompt)];
        content.extend(
            profile
                .preloaded_skills
                .iter()
                .map(|skill| system_reminder(skill)),
        );
        let mut hook_input = Map::new();
        hook_input.insert("agent_id".into(), agent_id.clone().into());
        hook_input.insert("agent_type".into(), profile.name.clone().into());
        if let Some(outcome) = self
            .spawner
            .governance()
            .run_hooks(
                HookEvent::SubagentStart,
                Some(&profile.name),
                hook_input,
                &events,
                &cx.cancel,
            )
            .await
        {
            content.extend(
                outcome
                    .additional_context
                    .iter()
                    .map(|context| system_reminder(context)),
            );
        }

        let worktree = match self.worktree_for(profile, input.worktree, &agent_id).await {
            Ok(worktree) => worktree,
            Err(message) => return ToolOutput::error(message),
        };
        if let Some(worktree) = &worktree {
            content.push(system_reminder(&format!(
                "You work in a git worktree of your own at {}, on branch {}: relative paths and \
                 your shell start there. Change files there only, never in the project \
                 directory.",
                worktree.path.display(),
                worktree.branch
            )));
        }
        // Its own shell directory, read-file record and todo list: agents that run at once
        // never share what one call leaves for the next, nor with their parent.
        let session_tools = self.spawner.tools();
        let own_tools = session_tools
            .for_agent(worktree.as_ref().map(|worktree| worktree.path.as_path()))
            .unwrap_or_else(|| session_tools.clone());
        let tools = RoleTools::new(
            own_tools,
            profile.tools.clone(),
            profile.disallowed_tools.clone(),
        )
        .with_mcp_servers(profile.mcp_servers.clone());
        let max_output_tokens = models::max_output_tokens(&model)
            .map_or(self.max_output_tokens, |limit| {
                limit.min(self.max_output_tokens)
            });
        let engine = self.spawner.spawn_sub_agent(
            NestedConfig {
                system_prompt: Arc::new(SystemPrompt {
                    static_part: format!("{SUB_AGENT_PREAMBLE}\n\n{}", profile.system_prompt),
                    dynamic_part: self.catalog.environment.clone(),
                }),
                model,
                max_requests: profile.max_turns.or(self.max_requests),
                max_output_tokens,
                pipeline: Arc::new(StandardPipeline::new(
                    self.catalog.spill_dir.join(&agent_id),
                )),
                tools: Some(super::roles::equip(profile, Arc::new(tools), &self.catalog)),
            },
            AgentScope::SubAgent {
                agent_id: agent_id.clone(),
                agent_type: profile.name.clone(),
            },
        );
        // Its file's `permissionMode` may narrow the parent's mode, never widen it.
        let mut engine = match profile
            .permission_mode
            .as_deref()
            .and_then(|mode| mode.parse::<PermissionMode>().ok())
        {
            Some(mode) => engine.narrowed_to(mode),
            None => engine,
        };
        if let (true, Some(background)) = (input.run_in_background, &self.background) {
            return start_in_background(
                background,
                BackgroundRun {
                    engine,
                    content,
                    events,
                    permit: running,
                    agent_id,
                    name: profile.name.clone(),
                    description: input.description,
                    worktree,
                },
            );
        }
        let started = Instant::now();
        let summary = engine.run_turn(content, &events, &cx.cancel).await;
        drop(running);
        let output = answer(
            &profile.name,
            &input.description,
            summary,
            started.elapsed(),
        );
        with_worktree_note(output, worktree).await
    }

    /// The worktree an isolated agent (its definition's `isolation` or the call's) works in,
    /// made now; `None` for an agent that is not isolated.
    async fn worktree_for(
        &self,
        profile: &AgentProfile,
        asked: bool,
        agent_id: &str,
    ) -> Result<Option<Worktree>, String> {
        if !(profile.worktree || asked) {
            return Ok(None);
        }
        let Some((root, project)) = &self.catalog.worktrees else {
            return Err(
                "Agent: `isolation: worktree` is not available in this session.".to_string(),
            );
        };
        let worktree = Worktree::create(project, root, agent_id).await?;
        // Cairn made it for this session: its files are the agent's workspace.
        self.spawner
            .governance()
            .gate()
            .add_workspace_root(worktree.path.clone());
        Ok(Some(worktree))
    }
}

/// `output` with what became of the agent's worktree, once it is done with it.
async fn with_worktree_note(output: ToolOutput, worktree: Option<Worktree>) -> ToolOutput {
    let Some(worktree) = worktree else {
        return output;
    };
    let note = worktree.finish().await;
    ToolOutput {
        content: ToolResultContent::Text(format!("{}\n{note}", output.content.text())),
        ..output
    }
}

/// A sub-agent about to run in the background, with what it holds while it runs.
struct BackgroundRun {
    engine: crate::Engine,
    content: Vec<ContentBlock>,
    events: cairn_protocol::EventSender,
    permit: tokio::sync::OwnedSemaphorePermit,
    agent_id: String,
    name: String,
    description: String,
    worktree: Option<Worktree>,
}

/// Starts `run` on a task of its own, listed for `TaskStop` (and the end of the session) and
/// ending with a notification for the parent; answers the call at once.
fn start_in_background(background: &Background, run: BackgroundRun) -> ToolOutput {
    let BackgroundRun {
        mut engine,
        content,
        events,
        permit,
        agent_id,
        name,
        description,
        worktree,
    } = run;
    let stop = CancellationToken::new();
    let label = if description.is_empty() {
        format!("{name} sub-agent")
    } else {
        format!("{name} sub-agent: {description}")
    };
    let task = Arc::new(AgentTask::new(
        agent_id.clone(),
        label.clone(),
        stop.clone(),
    ));
    background.tasks.shells.add_task(task.clone());
    let notifications = background.notifications.clone();
    notifications.started();
    let task_id = agent_id.clone();
    tokio::spawn(async move {
        let started = Instant::now();
        let summary = engine.run_turn(content, &events, &stop).await;
        drop(permit);
        let status = match &summary.end {
            TurnEnd::Completed | TurnEnd::MaxTokens | TurnEnd::MaxRequests { .. } => {
                TaskStatus::Completed
            }
            TurnEnd::Interrupted => TaskStatus::Killed,
            TurnEnd::Failed { .. }
            | TurnEnd::HookBlocked { .. }
            | TurnEnd::StructuredOutputRetries { .. } => TaskStatus::Failed,
        };
        let result = with_worktree_note(
            answer(&name, &description, summary, started.elapsed()),
            worktree,
        )
        .await;
        let notification =
            task_notification(&task_id, &description, status, &result.content.text());
        task.ended(notification.clone());
        notifications.finished(notification);
    });
    ToolOutput::text(format!(
        "Started {label} in the background as task {agent_id}. It runs on while you work; \
         its final answer comes to you as a <task-notification> with your next request. Stop \
         it with TaskStop (task_id \"{agent_id}\")."
    ))
}

/// The call's result: the sub-agent's last text, then a line with its usage and time.
fn answer(
    name: &str,
    description: &str,
    summary: TurnSummary,
    elapsed: std::time::Duration,
) -> ToolOutput {
    let what = if description.is_empty() {
        format!("{name} sub-agent")
    } else {
        format!("{name} sub-agent ({description})")
    };
    let usage = summary.usage;
    let trailer = format!(
        "[{what}: {} requests, {} input and {} output tokens, {:.1}s]",
        summary.requests,
        usage.input_total(),
        usage.output_tokens,
        elapsed.as_secs_f64()
    );
    let text = summary.result.trim();
    let text = if text.is_empty() {
        "(The sub-agent ended without a final answer.)"
    } else {
        text
    };
    match summary.end {
        TurnEnd::Completed | TurnEnd::MaxTokens => ToolOutput::text(format!("{text}\n\n{trailer}")),
        TurnEnd::MaxRequests { limit } => ToolOutput::text(format!(
            "{text}\n\n(The sub-agent stopped at its limit of {limit} requests.)\n{trailer}"
        )),
        TurnEnd::Interrupted => {
            ToolOutput::error(format!("The user interrupted the sub-agent.\n{trailer}"))
        }
        TurnEnd::Failed { message } | TurnEnd::HookBlocked { message } => {
            ToolOutput::error(format!("The {what} failed: {message}\n{trailer}"))
        }
        // Sub-agents are never asked for structured output; were one, this is how it failed.
        TurnEnd::StructuredOutputRetries { attempts } => ToolOutput::error(format!(
            "The {what} gave no answer fitting its schema in {attempts} attempts.\n{trailer}"
        )),
    }
}

/// Whether the model's `name` means this tool: `Agent` or `Task`, in any case or spelling.
fn names_agent(name: &str) -> bool {
    matches!(
        cairn_tools::canonical_spelling(name).as_str(),
        "agent" | "task"
    )
}

#[async_trait]
impl ToolExecutor for AgentTool {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: AGENT_TOOL.to_string(),
            description: self.description(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "description": "The task in three to five words."
                    },
                    "prompt": {
                        "type": "string",
                        "description": "The whole task for the sub-agent, with everything it needs to know."
                    },
                    "subagent_type": {
                        "type": "string",
                        "description": "The agent type to start (see the list above)."
                    },
                    "model": {
                        "type": "string",
                        "description": "A model for this sub-agent (sonnet, opus, haiku); its type's model otherwise."
                    },
                    "isolation": {
                        "type": "string",
                        "enum": ["worktree"],
                        "description": "\"worktree\" to run the sub-agent in a git worktree of its own; its branch is reported when it changed something."
                    },
                    "run_in_background": {
                        "type": "boolean",
                        "description": "true to return at once with a task id while the sub-agent runs on; its answer comes later as a <task-notification>."
                    }
                },
                "required": ["description", "prompt", "subagent_type"],
                "additionalProperties": false
            }),
        }]
    }

    fn serves(&self, name: &str) -> bool {
        name == AGENT_TOOL
    }

    fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, ToolOutput> {
        self.try_prepare(call).map_err(PrepareError::into_output)
    }

    fn try_prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        if !names_agent(&call.name) {
            return Err(PrepareError::UnknownTool {
                name: call.name.clone(),
                available: vec![AGENT_TOOL.to_string()],
            });
        }
        AgentInput::parse(&call.input).map_err(|message| PrepareError::RejectedInput {
            tool: AGENT_TOOL.to_string(),
            message,
        })?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: AGENT_TOOL.to_string(),
            input: call.input.clone(),
            // The sub-agent's own calls are judged one by one; starting it changes nothing.
            safety: Safety::READ_ONLY,
            paths: Vec::new(),
        })
    }

    async fn validate(&self, call: &PreparedCall) -> Result<(), ToolOutput> {
        let input = AgentInput::parse(&call.input).map_err(ToolOutput::error)?;
        match self.catalog.find(&input.subagent_type) {
            Some(_) => Ok(()),
            None => Err(self.unknown_role(&input.subagent_type)),
        }
    }

    async fn execute(&self, call: &PreparedCall, cx: &CallContext) -> ToolOutput {
        match AgentInput::parse(&call.input) {
            Ok(input) => self.run(call, input, cx).await,
            Err(message) => ToolOutput::error(message),
        }
    }
}
