//! The engine: its configuration, the operations it serves, and the parts of a turn in
//! `turn` (the loop) and `window` (what fits the context window). `docs/ARCHITECTURE.md`
//! follows one turn end to end.

mod plan;
mod side;
mod turn;
mod window;

pub use plan::CARRIED_PLAN_HEADER;
pub(crate) use plan::approved_in;

pub use turn::{INTERRUPTED_NOTE, PLAN_MODE_ACTIVE, PLAN_MODE_ENDED};

use std::sync::Arc;

use cairn_context::memory::{Recall, RecallOutcome};
use cairn_context::{ContextPipeline, PromptSource};
use cairn_llm::{ModelClient, models};
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Message, NobodyToAsk, Op, PermissionBroker,
};
use cairn_session::SessionLog;
use cairn_tools::ToolExecutor;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::agent::TaskNotifications;
use crate::events::Recorder;
use crate::governance::Governance;

/// What one engine instance is allowed and told. Each engine has its own, so a sub-agent can
/// run beside the main one with other limits.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The session's model choice as written (an alias such as `opusplan` is resolved per
    /// request, for the permission mode in force).
    pub model: String,
    /// The system prompt, asked for again at every request so a changed instruction file is
    /// read without a restart.
    pub system_prompt: Arc<dyn PromptSource>,
    /// Model requests allowed per turn; `None` for no limit.
    pub max_requests: Option<u32>,
    /// The most tokens one answer may have (the request's `max_tokens`).
    pub max_output_tokens: u32,
    /// What of the conversation each request sends; it also keeps large tool results out of
    /// the conversation.
    pub pipeline: Arc<dyn ContextPipeline>,
    /// Hooks and the permission gate (there is no default: see [`Governance`]).
    pub governance: Governance,
    /// Memory recall, started when the user submits; `None` when memory is off.
    pub recall: Option<Arc<dyn Recall>>,
}

/// A conversation and the parts that run it.
pub struct Engine {
    client: Arc<dyn ModelClient>,
    tools: Arc<dyn ToolExecutor>,
    config: EngineConfig,
    messages: Vec<Message>,
    permissions: Arc<dyn PermissionBroker>,
    /// The session file, until `run` puts the recorder in front of the face's sink.
    log: Option<SessionLog>,
    /// What the API reported for the last request: input tokens, and how many messages it sent.
    last_reported: Option<(u64, usize)>,
    /// The memory recall running beside the turn, until its result is taken.
    recall_running: Option<tokio::task::JoinHandle<RecallOutcome>>,
    /// The id of the operation whose work runs now, for its [`TurnSummary`]'s `op_id`.
    ///
    /// [`TurnSummary`]: cairn_protocol::TurnSummary
    current_op: String,
    /// Whose turns these are: the main agent's, or a sub-agent's (whose hooks differ).
    scope: AgentScope,
    /// The side requests of the session's tools and recall, put in each turn's totals.
    side_tally: cairn_llm::SideTally,
    /// The plan the user approved last, recorded in the session and carried through
    /// compaction (see `plan`).
    approved_plan: Option<String>,
    /// The model a skill loaded in this turn asks for, until the turn ends.
    skill_model: crate::skill::SkillModel,
    /// What this engine's background agents left for its next request.
    notifications: Option<Arc<TaskNotifications>>,
    /// Whether each turn must end with a `StructuredOutput` value (`--json-schema`).
    structured_output: bool,
    /// The model requests go to once the session's model is overloaded (`--fallback-model`),
    /// until it is used.
    fallback_model: Option<String>,
}

/// Whose turns an engine runs. A sub-agent's prompt is not the user's, so its turns fire no
/// `UserPromptSubmit` hooks, and they end with `SubagentStop` hooks instead of `Stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum AgentScope {
    /// The session's own agent.
    #[default]
    Main,
    /// A sub-agent started by an `Agent` call.
    SubAgent {
        /// Its id, as hooks and events name it.
        agent_id: String,
        /// Its role or custom agent's name, which `SubagentStop` matchers match.
        agent_type: String,
    },
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.config)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

/// What the engine is asked to do next.
enum Work {
    /// A user message and what its custom command changes for its turn.
    Message(Vec<ContentBlock>, TurnOverrides),
    /// `/compact [instructions]`.
    Compact(Option<String>),
}

/// Work and the id of the operation that asked for it.
struct Queued {
    id: String,
    work: Work,
}

impl Queued {
    /// The work `op` asks for; `None` for an operation that starts none.
    fn from_op(op: Op) -> Result<Queued, Op> {
        match op {
            Op::UserMessage {
                id,
                content,
                model,
                allowed_tools,
            } => Ok(Queued {
                id,
                work: Work::Message(
                    content,
                    TurnOverrides {
                        model,
                        allowed_tools,
                    },
                ),
            }),
            Op::Compact { id, instructions } => Ok(Queued {
                id,
                work: Work::Compact(instructions),
            }),
            other => Err(other),
        }
    }
}

/// What a custom command changes for its own turn.
#[derive(Debug, Clone, Default)]
struct TurnOverrides {
    model: Option<String>,
    allowed_tools: Vec<String>,
}

impl Engine {
    /// An engine with an empty conversation that asks `client` and runs calls through
    /// `tools`, judged by `config`'s governance. Nobody answers its questions until
    /// [`Engine::with_permissions`] names a broker; a face gets its engine from the
    /// [`SessionHost`](crate::SessionHost) instead, which does that.
    pub fn new(
        client: Arc<dyn ModelClient>,
        tools: Arc<dyn ToolExecutor>,
        config: EngineConfig,
    ) -> Self {
        Engine {
            client,
            tools,
            config,
            messages: Vec::new(),
            permissions: Arc::new(NobodyToAsk),
            log: None,
            last_reported: None,
            recall_running: None,
            current_op: String::new(),
            scope: AgentScope::Main,
            side_tally: Default::default(),
            approved_plan: None,
            skill_model: Default::default(),
            notifications: None,
            structured_output: false,
            fallback_model: None,
        }
    }

    /// Sends the session's requests to `model` from the first one the API refuses as
    /// overloaded (after its retries), that one again first.
    pub fn with_fallback_model(mut self, model: Option<String>) -> Self {
        self.fallback_model = model;
        self
    }

    /// Ends every turn with a value that fits `output`'s schema, handed over through its
    /// `StructuredOutput` tool, offered after the other tools (see [`crate::structured_output`]).
    pub fn with_structured_output(
        mut self,
        output: crate::structured_output::StructuredOutput,
    ) -> Self {
        self.tools = Arc::new(cairn_tools::CompositeExecutor::new(vec![
            self.tools.clone(),
            Arc::new(output),
        ]));
        self.structured_output = true;
        self
    }

    /// Sends the rest of a turn to the model a skill loaded in it asks for (the Skill tool
    /// sets `skill_model`).
    pub fn with_skill_model(mut self, skill_model: crate::skill::SkillModel) -> Self {
        self.skill_model = skill_model;
        self
    }

    /// Counts the side requests added to `tally` (WebFetch's, WebSearch's, recall's) in the
    /// totals of the turn they happen in.
    pub fn with_side_tally(mut self, tally: cairn_llm::SideTally) -> Self {
        self.side_tally = tally;
        self
    }

    /// Takes the notifications of this engine's background agents (see
    /// [`crate::agent::AgentTool::with_background`]) into its next request: with the next
    /// prompt or the next tool results. Where nobody can be asked anything (`cairn -p`), a
    /// turn that ends while one still runs waits for it and goes on with its notification, so
    /// the run's answer has its result and no agent outlives the run.
    pub fn with_task_notifications(mut self, notifications: Arc<TaskNotifications>) -> Self {
        self.notifications = Some(notifications);
        self
    }

    /// Marks this engine as a sub-agent's (see [`AgentScope`]); only the spawner does this.
    pub(crate) fn for_sub_agent(mut self, scope: AgentScope) -> Self {
        self.scope = scope;
        self
    }

    /// Judges this engine's calls by `mode` where it is narrower than the session's mode,
    /// never by a wider one (a sub-agent's `permissionMode`, see [`Governance::narrowed_to`]).
    pub(crate) fn narrowed_to(mut self, mode: cairn_protocol::PermissionMode) -> Self {
        self.config.governance = self.config.governance.clone().narrowed_to(mode);
        self
    }

    /// Who answers this engine's permission questions: the face's broker (a dialog, a host),
    /// or a parent's for a sub-agent. Without one, nobody can be asked and questions are
    /// refused.
    pub fn with_permissions(mut self, broker: Arc<dyn PermissionBroker>) -> Self {
        self.permissions = broker;
        self
    }

    /// Records the conversation in `log` as it happens (see [`Recorder`]).
    pub fn with_session_log(mut self, log: SessionLog) -> Self {
        self.log = Some(log);
        self
    }

    /// Continues a conversation (a resumed session): `messages` become the history the next
    /// turn is appended to.
    pub fn with_history(mut self, messages: Vec<Message>) -> Self {
        // A session recorded before plans had entries of their own keeps its plan here.
        self.approved_plan = plan::approved_plan(&messages);
        self.messages = messages;
        self
    }

    /// The plan the user approved in the session this engine continues, as its record says;
    /// `None` leaves what the history holds.
    pub fn with_approved_plan(mut self, plan: Option<String>) -> Self {
        if plan.is_some() {
            self.approved_plan = plan;
        }
        self
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// What this engine is allowed and told.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Serves operations until the sender is dropped, emitting through `events` (and recording
    /// the session on the way, when it has a log). An `Interrupt` that arrives while a turn
    /// runs cancels it; a user message that arrives meanwhile is queued for after it.
    pub async fn run(mut self, mut ops: UnboundedReceiver<Op>, events: EventSender) -> Self {
        let events = match self.log.take() {
            Some(log) => events.with_sink(Arc::new(Recorder::new(log, events.sink()))),
            None => events,
        };
        let mut queued: std::collections::VecDeque<Queued> = Default::default();
        loop {
            let Queued { id, work } = match queued.pop_front() {
                Some(queued) => queued,
                None => match ops.recv().await.map(Queued::from_op) {
                    Some(Ok(queued)) => queued,
                    Some(Err(Op::SetModel { model })) => {
                        events.emit(AgentEvent::ModelChanged {
                            model: model.clone(),
                        });
                        self.config.model = model;
                        continue;
                    }
                    Some(Err(Op::SetPermissionMode { mode })) => {
                        set_permission_mode(self.config.governance.gate(), mode, &events);
                        continue;
                    }
                    Some(Err(Op::Shutdown)) | None => return self,
                    // No turn is running, so there is nothing to interrupt and no question
                    // is waiting.
                    Some(Err(_)) => continue,
                },
            };
            self.current_op = id;
            let cancel = CancellationToken::new();
            let broker = self.permissions.clone();
            // A mode change holds at once, for the calls of the running turn too.
            let gate = self.config.governance.gate().clone();
            let mut next_model = None;
            let mut senders_gone = false;
            let mut shutting_down = false;
            let restore_model = match &work {
                Work::Message(_, overrides) => self.apply_overrides(overrides, &events),
                Work::Compact(_) => None,
            };
            {
                let turn = self.run_work(work, &events, &cancel);
                tokio::pin!(turn);
                loop {
                    tokio::select! {
                        _ = &mut turn => break,
                        op = ops.recv(), if !senders_gone => match op.map(Queued::from_op) {
                            // An interrupt stops everything asked for so far: the messages
                            // queued behind this turn are dropped too (the UI gives them back
                            // to the user).
                            Some(Err(Op::Interrupt)) => {
                                cancel.cancel();
                                queued.clear();
                            }
                            Some(Err(Op::Shutdown)) => {
                                cancel.cancel();
                                queued.clear();
                                shutting_down = true;
                            }
                            Some(Ok(work)) => queued.push_back(work),
                            Some(Err(Op::SetModel { model })) => next_model = Some(model),
                            Some(Err(Op::SetPermissionMode { mode })) => {
                                set_permission_mode(&gate, mode, &events);
                            }
                            Some(Err(Op::PermissionAnswer { request_id, answer })) => {
                                broker.answer(&request_id, answer);
                            }
                            Some(Err(Op::UserMessage { .. } | Op::Compact { .. })) => {}
                            None => senders_gone = true,
                        },
                    }
                }
            }
            if let Some(model) = restore_model {
                self.config.model = model;
            }
            self.config.governance.gate().clear_turn_rules();
            self.skill_model.clear();
            if let Some(model) = next_model {
                events.emit(AgentEvent::ModelChanged {
                    model: model.clone(),
                });
                self.config.model = model;
            }
            if shutting_down {
                return self;
            }
        }
    }

    async fn run_work(&mut self, work: Work, events: &EventSender, cancel: &CancellationToken) {
        match work {
            Work::Message(content, _) => {
                self.run_turn(content, events, cancel).await;
            }
            Work::Compact(instructions) => {
                self.compact(instructions, events, cancel).await;
            }
        }
    }

    /// Puts a command's model and allowed tools in force for its turn; returns the model to go
    /// back to after it. A rule that does not parse is reported and left out.
    fn apply_overrides(
        &mut self,
        overrides: &TurnOverrides,
        events: &EventSender,
    ) -> Option<String> {
        if !overrides.allowed_tools.is_empty() {
            let gate = self.config.governance.gate();
            for error in gate.set_turn_rules(&overrides.allowed_tools) {
                events.emit(AgentEvent::Warning {
                    message: format!("allowed-tools: {error}"),
                });
            }
        }
        let model = overrides.model.clone()?;
        Some(std::mem::replace(&mut self.config.model, model))
    }

    /// The model id the next request goes to: the session's model choice (`config.model`)
    /// for the permission mode in force, so that `opusplan` plans with opus.
    fn request_model(&self) -> String {
        let model = self
            .skill_model
            .current()
            .unwrap_or_else(|| self.config.model.clone());
        models::model_for_mode(&model, self.config.governance.mode())
    }
}

/// Puts `mode` in force in `gate` and says so.
fn set_permission_mode(
    gate: &cairn_policy::PermissionGate,
    mode: cairn_protocol::PermissionMode,
    events: &EventSender,
) {
    gate.set_mode(mode);
    events.emit(AgentEvent::PermissionModeChanged { mode });
}
