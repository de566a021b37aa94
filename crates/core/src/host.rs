//! The session host: what every face runs the engine through.
//!
//! A face (the interactive UI, `cairn -p`, the SDK's stream-json) turns its input into
//! operations, renders events and supplies a [`PermissionBroker`]; everything around the
//! engine happens here, once: the engine is built from the session's parts, `SessionStart`
//! hooks run with their `source` and their context reaches the next message, `SessionEnd`
//! hooks run with their `reason`, the background shells die with the session, and a nested
//! engine for a sub-agent is spawned under the parent's governance and broker.
//!
//! ```text
//! face input ──► SessionInput ──ops──► Engine ──events──► forwarder ──► face output
//!                  (first-message           (records       (SessionStart after
//!                   context, op ids)         the session)    a compaction)
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_llm::ModelClient;
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{
    AgentEvent, CollectedEvents, EventEnvelope, EventSender, Message, Op, PermissionBroker,
};
use cairn_session::SessionLog;
use cairn_tools::{CompositeExecutor, SessionState, ToolExecutor};
use serde_json::{Map, Value};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentCatalog, AgentTool, Background, TaskNotifications};
use crate::assembly::Turn;
use crate::engine::{AgentScope, Engine, EngineConfig};
use crate::events::ChannelSink;
use crate::governance::Governance;

/// How long ending a session waits for the engine to stop (and its log to be written) before
/// it goes on without it.
const ENGINE_STOP_WAIT: Duration = Duration::from_secs(3);

/// Why a session starts: the `source` of its `SessionStart` hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// A new session.
    Startup,
    /// A session continued (`-c`, `--resume`, `/resume`).
    Resume,
    /// A fresh conversation after `/clear`.
    Clear,
    /// The conversation was just compacted (the hooks run again, so what they add is not lost
    /// with the old messages).
    Compact,
}

impl StartSource {
    /// Claude Code's spelling, as hooks read it.
    pub fn as_str(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
            StartSource::Clear => "clear",
            StartSource::Compact => "compact",
        }
    }
}

/// Why a session ends: the `reason` of its `SessionEnd` hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// `/clear` ends it for a fresh one.
    Clear,
    /// The user logged out.
    Logout,
    /// The user left the prompt (`/exit`, Ctrl+D, Ctrl+C twice).
    PromptInputExit,
    /// Anything else: a `-p` run's end, a signal, `/resume` of another session.
    Other,
}

impl EndReason {
    /// Claude Code's spelling, as hooks read it.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Clear => "clear",
            EndReason::Logout => "logout",
            EndReason::PromptInputExit => "prompt_input_exit",
            EndReason::Other => "other",
        }
    }
}

/// What a session is made of, as a face's setup built it from the settings.
pub struct SessionParts {
    /// The model client every request goes to (a routing client may choose the provider).
    pub client: Arc<dyn ModelClient>,
    /// Every tool the session offers.
    pub tools: Arc<dyn ToolExecutor>,
    /// The engine's configuration, governance included.
    pub config: EngineConfig,
    /// The conversation so far, when the session continues an earlier one.
    pub history: Vec<Message>,
    /// The session file the conversation is recorded in; `None` records nothing.
    pub log: Option<SessionLog>,
    /// The tools' session state: its background shells end with the session.
    pub tool_state: Arc<SessionState>,
    /// The sub-agents the main engine may start through the `Agent` tool; `None` offers no
    /// `Agent` tool. Sub-agents get [`SessionParts::tools`] alone, so none starts another.
    pub agents: Option<AgentCatalog>,
}

impl std::fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionParts")
            .field("config", &self.config)
            .field("history", &self.history.len())
            .finish_non_exhaustive()
    }
}

/// A session ready to start: the engine built, nothing run yet.
pub struct SessionHost {
    engine: Engine,
    spawner: Spawner,
    tool_state: Arc<SessionState>,
    agents: Option<AgentCatalog>,
}

impl std::fmt::Debug for SessionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHost")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

impl SessionHost {
    /// Builds the session's engine from `parts`; `broker` answers its permission questions
    /// (and those of every engine spawned under it). Whether anyone can be asked follows from
    /// the broker alone ([`PermissionBroker::can_ask`]).
    pub fn new(parts: SessionParts, broker: Arc<dyn PermissionBroker>) -> SessionHost {
        let SessionParts {
            client,
            tools,
            config,
            history,
            log,
            tool_state,
            agents,
        } = parts;
        let spawner = Spawner {
            client: client.clone(),
            tools: tools.clone(),
            governance: config.governance.clone(),
            broker: broker.clone(),
        };
        let notifications = Arc::new(TaskNotifications::default());
        let tools: Arc<dyn ToolExecutor> = match agents.clone() {
            // First, as Claude Code offers it: the tools a session adds later (loaded by tool
            // search) go at the end, after a prefix that stays the same.
            Some(catalog) => Arc::new(CompositeExecutor::new(vec![
                Arc::new(
                    AgentTool::new(
                        spawner.clone(),
                        catalog,
                        config.model.clone(),
                        config.max_output_tokens,
                        config.max_requests,
                    )
                    .with_background(Background::new(tool_state.clone(), notifications.clone())),
                ),
                tools,
            ])),
            None => tools,
        };
        let engine = Engine::new(client, tools, config)
            .with_history(history)
            .with_permissions(broker)
            .with_task_notifications(notifications);
        let engine = match log {
            Some(log) => engine.with_session_log(log),
            None => engine,
        };
        SessionHost {
            engine,
            spawner,
            tool_state,
            agents,
        }
    }

    /// Counts the side requests added to `tally` in the main engine's turns
    /// ([`Engine::with_side_tally`]).
    pub fn with_side_tally(mut self, tally: cairn_llm::SideTally) -> Self {
        self.engine = self.engine.with_side_tally(tally);
        self
    }

    /// The plan the user approved, from the session's record, for a resumed session
    /// ([`Engine::with_approved_plan`]).
    pub fn with_approved_plan(mut self, plan: Option<String>) -> Self {
        self.engine = self.engine.with_approved_plan(plan);
        self
    }

    /// Sends the rest of a turn to the model a skill loaded in it asks for
    /// ([`Engine::with_skill_model`]).
    pub fn with_skill_model(mut self, skill_model: crate::skill::SkillModel) -> Self {
        self.engine = self.engine.with_skill_model(skill_model);
        self
    }

    /// Ends every main turn with a value fitting `output`'s schema (`--json-schema`,
    /// [`Engine::with_structured_output`]); sub-agents answer as usual.
    pub fn with_structured_output(
        mut self,
        output: crate::structured_output::StructuredOutput,
    ) -> Self {
        self.engine = self.engine.with_structured_output(output);
        self
    }

    /// The model the main engine switches to when the session's is overloaded
    /// (`--fallback-model`, [`Engine::with_fallback_model`]).
    pub fn with_fallback_model(mut self, model: Option<String>) -> Self {
        self.engine = self.engine.with_fallback_model(model);
        self
    }

    /// The sub-agents the `Agent` tool can start (for `/agents`); `None` without the tool.
    pub fn agents(&self) -> Option<&AgentCatalog> {
        self.agents.as_ref()
    }

    /// The engine as built: its configuration and the conversation it continues.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The session's governance.
    pub fn governance(&self) -> &Governance {
        &self.spawner.governance
    }

    /// What spawns nested engines (sub-agents) under this session's governance and broker.
    pub fn spawner(&self) -> Spawner {
        self.spawner.clone()
    }

    /// Runs the `SessionStart` hooks for `source` (their messages become the first events,
    /// their context goes with the next message) and starts the engine.
    pub async fn start(self, source: StartSource) -> Session {
        let SessionHost {
            engine,
            spawner,
            tool_state,
            ..
        } = self;
        let governance = spawner.governance.clone();
        let (face_events, events) = mpsc::unbounded_channel();
        let pending_context = Arc::new(Mutex::new(Vec::new()));
        let face = EventSender::new(Arc::new(ChannelSink(face_events.clone())));
        let context = session_start(&governance, source, &face).await;
        lock(&pending_context).extend(context);

        let (ops, op_receiver) = mpsc::unbounded_channel();
        let (engine_events, engine_receiver) = mpsc::unbounded_channel();
        let engine_task = tokio::spawn(engine.run(
            op_receiver,
            EventSender::new(Arc::new(ChannelSink(engine_events))),
        ));
        let forwarder = tokio::spawn(forward(
            engine_receiver,
            face_events,
            governance.clone(),
            pending_context.clone(),
        ));
        Session {
            input: SessionInput {
                ops,
                pending_context,
                next_id: Arc::new(AtomicU64::new(0)),
            },
            events,
            engine_task,
            forwarder,
            governance,
            tool_state,
        }
    }
}

/// A running session: the face sends through its [`SessionInput`] and reads its events.
pub struct Session {
    input: SessionInput,
    events: UnboundedReceiver<EventEnvelope>,
    engine_task: JoinHandle<Engine>,
    forwarder: JoinHandle<()>,
    governance: Governance,
    tool_state: Arc<SessionState>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// Where the face sends what the user asks for; clones share the session.
    pub fn input(&self) -> SessionInput {
        self.input.clone()
    }

    /// The next event, `None` once the engine has stopped and every event was read.
    pub async fn next_event(&mut self) -> Option<EventEnvelope> {
        self.events.recv().await
    }

    /// Takes the event stream, for a face that reads it elsewhere (the interactive UI's
    /// loop); [`Session::next_event`] then has nothing more to give.
    pub fn take_events(&mut self) -> UnboundedReceiver<EventEnvelope> {
        let (_, closed) = mpsc::unbounded_channel();
        std::mem::replace(&mut self.events, closed)
    }

    /// The session's background shells, for a face that must leave at once (a second
    /// Ctrl-C) without waiting for [`Session::end`].
    pub fn background_shells(&self) -> BackgroundShells {
        BackgroundShells(self.tool_state.clone())
    }

    /// Ends the session: the engine is told to stop (a running turn is interrupted) and its
    /// stop awaited for a moment, so the session log is complete; the background shells are
    /// killed; then the `SessionEnd` hooks run with `reason`. Input sent afterwards through a
    /// [`SessionInput`] clone fails with [`EngineStopped`]. Returns what the hooks said for
    /// the user, since the face may have stopped reading events by then.
    pub async fn end(self, reason: EndReason) -> Vec<String> {
        let Session {
            input,
            events,
            engine_task,
            forwarder,
            governance,
            tool_state,
        } = self;
        let _ = input.ops.send(Op::Shutdown);
        drop(input);
        let _ = tokio::time::timeout(ENGINE_STOP_WAIT, engine_task).await;
        forwarder.abort();
        drop(events);
        tool_state.shells.kill_all();
        let notes = Arc::new(CollectedEvents::default());
        let mut input = Map::new();
        input.insert("reason".into(), reason.as_str().into());
        governance
            .run_hooks(
                HookEvent::SessionEnd,
                Some(reason.as_str()),
                input,
                &EventSender::new(notes.clone()),
                &CancellationToken::new(),
            )
            .await;
        warnings(&notes)
    }
}

/// The background shells of a session: the handle a face keeps to stop them when it leaves
/// at once.
#[derive(Debug, Clone)]
pub struct BackgroundShells(Arc<SessionState>);

impl BackgroundShells {
    /// Kills every background shell of the session, with its process group.
    pub fn kill_all(&self) {
        self.0.shells.kill_all();
    }

    /// Stops the background task `id` (a shell or a background agent), as `TaskStop` does:
    /// what was done, or why there is no such task.
    pub fn stop(&self, id: &str) -> Result<String, String> {
        self.0.shells.stop(id)
    }
}

/// The engine stopped, so nothing more can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the engine has stopped")]
pub struct EngineStopped;

/// What a face sends a session: turns, compactions and controls. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionInput {
    ops: UnboundedSender<Op>,
    /// What `SessionStart` hooks added, waiting for the next message.
    pending_context: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

impl SessionInput {
    /// Input whose operations land in `ops`, with no session behind it: for a face's own
    /// tests, which read what the face would send. Work still gets ids; no hook runs.
    pub fn over_channel(ops: UnboundedSender<Op>) -> SessionInput {
        SessionInput {
            ops,
            pending_context: Arc::default(),
            next_id: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Starts `turn`, or queues it behind the running one. The first message after the
    /// session started (or was compacted) carries what its `SessionStart` hooks added.
    /// Returns the id its [`cairn_protocol::TurnSummary::op_id`] will answer to.
    pub fn submit(&self, mut turn: Turn) -> Result<String, EngineStopped> {
        let context = std::mem::take(&mut *lock(&self.pending_context));
        turn.add_context(context);
        self.send_work(turn.into_op())
    }

    /// `/compact [instructions]`: summarizes the conversation as work of its own. Returns its
    /// id, as [`SessionInput::submit`].
    pub fn compact(&self, instructions: Option<String>) -> Result<String, EngineStopped> {
        self.send_work(Op::compact(instructions))
    }

    /// A control for the engine: an interrupt, a model or mode change, a permission answer.
    /// A message or compaction sent this way gets an id but no `SessionStart` context (use
    /// [`SessionInput::submit`]).
    pub fn send(&self, op: Op) -> Result<(), EngineStopped> {
        match op.work_id() {
            Some(_) => self.send_work(op).map(drop),
            None => self.ops.send(op).map_err(|_| EngineStopped),
        }
    }

    fn send_work(&self, op: Op) -> Result<String, EngineStopped> {
        let id = match op.work_id() {
            Some(id) if !id.is_empty() => id.to_string(),
            Some(_) | None => format!("op_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1),
        };
        self.ops
            .send(op.with_id(id.clone()))
            .map_err(|_| EngineStopped)?;
        Ok(id)
    }
}

/// Spawns nested engines (sub-agents) that share the session's governance and broker: the
/// same gate, mode, rules and hooks, questions to the same person. There is no other way to
/// build a nested engine, so a sub-agent can never be governed less than its parent.
#[derive(Clone)]
pub struct Spawner {
    client: Arc<dyn ModelClient>,
    tools: Arc<dyn ToolExecutor>,
    governance: Governance,
    broker: Arc<dyn PermissionBroker>,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner").finish_non_exhaustive()
    }
}

/// What a nested engine has of its own: everything but governance and the broker.
pub struct NestedConfig {
    /// The model it runs on.
    pub model: String,
    /// Its own system prompt (a role's, a custom agent's body).
    pub system_prompt: Arc<dyn crate::PromptSource>,
    /// Model requests allowed per turn; `None` for no limit.
    pub max_requests: Option<u32>,
    /// Output tokens per request.
    pub max_output_tokens: u32,
    /// What of its conversation each request sends.
    pub pipeline: Arc<dyn cairn_context::ContextPipeline>,
    /// Its tools; `None` offers the session's own.
    pub tools: Option<Arc<dyn ToolExecutor>>,
}

impl std::fmt::Debug for NestedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NestedConfig")
            .field("model", &self.model)
            .field("max_requests", &self.max_requests)
            .finish_non_exhaustive()
    }
}

impl Spawner {
    /// The session's tools, from which a sub-agent's role takes its own.
    pub fn tools(&self) -> &Arc<dyn ToolExecutor> {
        &self.tools
    }

    /// A nested engine with an empty conversation of its own, judged by the session's
    /// governance and asking through the session's broker.
    pub fn spawn(&self, nested: NestedConfig) -> Engine {
        self.spawn_sub_agent(
            nested,
            AgentScope::SubAgent {
                agent_id: String::new(),
                agent_type: String::new(),
            },
        )
    }

    /// [`Spawner::spawn`] for the sub-agent `scope` names (its hooks name it).
    pub(crate) fn spawn_sub_agent(&self, nested: NestedConfig, scope: AgentScope) -> Engine {
        let tools = nested.tools.unwrap_or_else(|| self.tools.clone());
        Engine::new(
            self.client.clone(),
            tools,
            EngineConfig {
                model: nested.model,
                system_prompt: nested.system_prompt,
                max_requests: nested.max_requests,
                max_output_tokens: nested.max_output_tokens,
                pipeline: nested.pipeline,
                governance: self.governance.clone(),
                recall: None,
            },
        )
        .with_permissions(self.broker.clone())
        .for_sub_agent(scope)
    }

    /// The governance every spawned engine is judged by.
    pub(crate) fn governance(&self) -> &Governance {
        &self.governance
    }
}

/// Runs the `SessionStart` hooks of `source`, their messages emitted through `events`;
/// returns the context they add.
async fn session_start(
    governance: &Governance,
    source: StartSource,
    events: &EventSender,
) -> Vec<String> {
    let mut input = Map::new();
    input.insert("source".into(), Value::from(source.as_str()));
    governance
        .run_hooks(
            HookEvent::SessionStart,
            Some(source.as_str()),
            input,
            events,
            &CancellationToken::new(),
        )
        .await
        .map(|outcome| outcome.additional_context)
        .unwrap_or_default()
}

/// Passes the engine's events to the face. After the main conversation is compacted, the
/// `SessionStart` hooks run again with `compact`, and their context waits for the next
/// message, as after a start.
async fn forward(
    mut engine_events: UnboundedReceiver<EventEnvelope>,
    face: UnboundedSender<EventEnvelope>,
    governance: Governance,
    pending_context: Arc<Mutex<Vec<String>>>,
) {
    let sender = EventSender::new(Arc::new(ChannelSink(face.clone())));
    while let Some(envelope) = engine_events.recv().await {
        let compacted = envelope.from.is_main()
            && matches!(&envelope.event, AgentEvent::Compacted(compaction) if compaction.summary.is_some());
        if face.send(envelope).is_err() {
            return;
        }
        if compacted {
            let context = session_start(&governance, StartSource::Compact, &sender).await;
            lock(&pending_context).extend(context);
        }
    }
}

/// The warnings among `notes`, as lines for the user.
fn warnings(notes: &CollectedEvents) -> Vec<String> {
    notes
        .take()
        .into_iter()
        .filter_map(|note| match note.event {
            AgentEvent::Warning { message } => Some(message),
            _ => None,
        })
        .collect()
}

fn lock(context: &Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
    context
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
