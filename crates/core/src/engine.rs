//! The turn loop (DESIGN.md §3).

use std::sync::Arc;
use std::time::Instant;

use cairn_context::memory::{Recall, RecallOutcome};
use cairn_context::{ContextPipeline, PromptSource, TokenAccounting, Trigger};
use cairn_llm::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, models, pricing,
};
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Message, NobodyToAsk, Op, PermissionBroker, Role,
    StopReason, TurnEnd, TurnSummary, Usage,
};
use cairn_session::SessionLog;
use cairn_tools::{ToolCall, ToolExecutor};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::assembly::system_reminder;
use crate::events::Recorder;
use crate::governance::Governance;
use crate::orchestrate::CallRunner;
use crate::summarize::{ConversationSummarizer, trigger_name};

/// What one engine instance is allowed and told. Each engine has its own, so a sub-agent can
/// run beside the main one with other limits.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model: String,
    pub system_prompt: Arc<dyn PromptSource>,
    /// Model requests allowed per turn; `None` for no limit.
    pub max_requests: Option<u32>,
    pub max_output_tokens: u32,
    /// What of the conversation each request sends; it also keeps large tool results out of
    /// the conversation.
    pub pipeline: Arc<dyn ContextPipeline>,
    /// Hooks and the permission gate; the default runs every call.
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
    recall: Option<tokio::task::JoinHandle<RecallOutcome>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.config)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

/// How many times Stop hooks may send the model back to work in one turn.
const MAX_STOP_CONTINUATIONS: u32 = 8;

/// Tallies of the turn in progress.
#[derive(Debug, Default)]
struct TurnTally {
    requests: u32,
    usage: Usage,
    cost_usd: f64,
    duration_api_ms: u64,
    result: String,
}

impl TurnTally {
    /// The turn's summary, ended by `end`.
    fn finish(self, end: TurnEnd) -> TurnSummary {
        TurnSummary {
            end,
            result: self.result,
            requests: self.requests,
            usage: self.usage,
            cost_usd: self.cost_usd,
            duration_api_ms: self.duration_api_ms,
        }
    }
}

/// What the engine is asked to do next.
enum Work {
    /// A user message and what its custom command changes for its turn.
    Message(Vec<ContentBlock>, TurnOverrides),
    /// `/compact [instructions]`.
    Compact(Option<String>),
}

/// What a custom command changes for its own turn.
#[derive(Debug, Clone, Default)]
struct TurnOverrides {
    model: Option<String>,
    allowed_tools: Vec<String>,
}

impl Engine {
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
            recall: None,
        }
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
        self.messages = messages;
        self
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

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
        let mut queued: std::collections::VecDeque<Work> = Default::default();
        loop {
            let work = match queued.pop_front() {
                Some(work) => work,
                None => match ops.recv().await {
                    Some(Op::UserMessage {
                        content,
                        model,
                        allowed_tools,
                    }) => Work::Message(
                        content,
                        TurnOverrides {
                            model,
                            allowed_tools,
                        },
                    ),
                    Some(Op::Compact { instructions }) => Work::Compact(instructions),
                    Some(Op::Interrupt) => continue,
                    // No turn is running, so no question is waiting.
                    Some(Op::PermissionAnswer { .. }) => continue,
                    Some(Op::SetModel { model }) => {
                        events.emit(AgentEvent::ModelChanged {
                            model: model.clone(),
                        });
                        self.config.model = model;
                        continue;
                    }
                    Some(Op::SetPermissionMode { mode }) => {
                        set_permission_mode(self.config.governance.gate.as_deref(), mode, &events);
                        continue;
                    }
                    None => return self,
                },
            };
            let cancel = CancellationToken::new();
            let broker = self.permissions.clone();
            // A mode change holds at once, for the calls of the running turn too.
            let gate = self.config.governance.gate.clone();
            let mut next_model = None;
            let mut senders_gone = false;
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
                        op = ops.recv(), if !senders_gone => match op {
                            // An interrupt stops everything asked for so far: the messages
                            // queued behind this turn are dropped too (the UI gives them back
                            // to the user).
                            Some(Op::Interrupt) => {
                                cancel.cancel();
                                queued.clear();
                            }
                            Some(Op::UserMessage {
                                content,
                                model,
                                allowed_tools,
                            }) => queued.push_back(Work::Message(
                                content,
                                TurnOverrides {
                                    model,
                                    allowed_tools,
                                },
                            )),
                            Some(Op::Compact { instructions }) => {
                                queued.push_back(Work::Compact(instructions));
                            }
                            Some(Op::SetModel { model }) => next_model = Some(model),
                            Some(Op::SetPermissionMode { mode }) => {
                                set_permission_mode(gate.as_deref(), mode, &events);
                            }
                            Some(Op::PermissionAnswer { request_id, answer }) => {
                                broker.answer(&request_id, answer);
                            }
                            None => senders_gone = true,
                        },
                    }
                }
            }
            if let Some(model) = restore_model {
                self.config.model = model;
            }
            if let Some(gate) = &self.config.governance.gate {
                gate.clear_turn_rules();
            }
            if let Some(model) = next_model {
                events.emit(AgentEvent::ModelChanged {
                    model: model.clone(),
                });
                self.config.model = model;
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
        if !overrides.allowed_tools.is_empty()
            && let Some(gate) = &self.config.governance.gate
        {
            for error in gate.set_turn_rules(&overrides.allowed_tools) {
                events.emit(AgentEvent::Warning {
                    message: format!("allowed-tools: {error}"),
                });
            }
        }
        let model = overrides.model.clone()?;
        Some(std::mem::replace(&mut self.config.model, model))
    }

    /// Runs one turn: the user's message, then model requests and tool calls until the model
    /// is done. Emits every event, ending with `TurnFinished`, and returns the same summary.
    pub async fn run_turn(
        &mut self,
        content: Vec<ContentBlock>,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> TurnSummary {
        let mut tally = TurnTally::default();
        let end = match self.submit_prompt(content, events, cancel).await {
            Ok(()) => self.turn_loop(events, cancel, &mut tally).await,
            Err(end) => end,
        };
        let summary = tally.finish(end);
        events.emit(AgentEvent::TurnFinished(summary.clone()));
        summary
    }

    /// Appends the user's message, after the UserPromptSubmit hooks had their say: they may
    /// block the prompt (it is then not sent) or add context to it.
    async fn submit_prompt(
        &mut self,
        mut content: Vec<ContentBlock>,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> Result<(), TurnEnd> {
        let prompt = Message {
            role: Role::User,
            content: content.clone(),
        }
        .text();
        let mut input = serde_json::Map::new();
        input.insert("prompt".into(), serde_json::Value::String(prompt));
        if let Some(outcome) = self
            .config
            .governance
            .run_hooks(HookEvent::UserPromptSubmit, None, input, events, cancel)
            .await
        {
            if let Some(reason) = outcome.block.or(outcome.stop) {
                return Err(TurnEnd::Failed {
                    message: format!("A UserPromptSubmit hook blocked the prompt: {reason}"),
                });
            }
            for context in outcome.additional_context {
                content.push(system_reminder(&context));
            }
        }
        if let Some(gate) = &self.config.governance.gate
            && let Some(reminder) = plan_mode_reminder(&self.messages, gate.mode())
        {
            content.push(system_reminder(reminder));
        }
        // Memories recalled for the last message, if that recall is done by now.
        content.extend(self.take_recalled(events).await);
        if let Some(recall) = &self.config.recall {
            let prompt = Message {
                role: Role::User,
                content: content.clone(),
            }
            .text();
            self.recall = Some(tokio::spawn(recall.start(prompt)));
        }
        let message = Message {
            role: Role::User,
            content,
        };
        events.emit(AgentEvent::UserMessage {
            message: message.clone(),
        });
        self.messages.push(message);
        Ok(())
    }

    /// The memories recall chose, as reminders, once it has finished; nothing while it still
    /// runs (it is never waited for). A recall that did not finish before the next message is
    /// dropped: its message is answered already.
    async fn take_recalled(&mut self, events: &EventSender) -> Vec<ContentBlock> {
        let Some(running) = self.recall.take() else {
            return Vec::new();
        };
        if !running.is_finished() {
            running.abort();
            return Vec::new();
        }
        match running.await {
            Ok(outcome) => {
                if let Some(failure) = outcome.failure {
                    events.emit(AgentEvent::Debug {
                        message: format!("memory recall failed: {failure}"),
                    });
                }
                outcome
                    .reminders
                    .iter()
                    .map(|reminder| system_reminder(reminder))
                    .collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Whether Stop hooks want the model to go on; their reason becomes the next user
    /// message. At most [`MAX_STOP_CONTINUATIONS`] times a turn, so a hook that always
    /// blocks cannot loop forever.
    async fn stop_hooks_continue(
        &mut self,
        continuations: &mut u32,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> bool {
        let mut input = serde_json::Map::new();
        input.insert(
            "stop_hook_active".into(),
            serde_json::Value::Bool(*continuations > 0),
        );
        let Some(outcome) = self
            .config
            .governance
            .run_hooks(HookEvent::Stop, None, input, events, cancel)
            .await
        else {
            return false;
        };
        let Some(reason) = outcome.block else {
            return false;
        };
        if *continuations >= MAX_STOP_CONTINUATIONS {
            events.emit(AgentEvent::Warning {
                message: format!(
                    "A Stop hook asked to continue a {}th time; stopping anyway.",
                    *continuations + 1
                ),
            });
            return false;
        }
        *continuations += 1;
        let message = Message::user_text(format!("A Stop hook says: {reason}"));
        events.emit(AgentEvent::UserMessage {
            message: message.clone(),
        });
        self.messages.push(message);
        true
    }

    /// The model id the next request goes to: the session's model choice (`config.model`)
    /// for the permission mode in force, so that `opusplan` plans with opus.
    fn request_model(&self) -> String {
        let mode = self
            .config
            .governance
            .gate
            .as_deref()
            .map(|gate| gate.mode());
        models::model_for_mode(
            &self.config.model,
            mode.unwrap_or(cairn_protocol::PermissionMode::Default),
        )
    }

    /// What the next request sends: the conversation through the context pipeline, which
    /// may compact it first (reported, and PostCompact hooks told).
    async fn project(
        &mut self,
        trigger: Option<Trigger>,
        events: &EventSender,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Vec<Message>, TurnEnd> {
        let trigger = trigger.unwrap_or(Trigger::Auto);
        let accounting = TokenAccounting {
            last_reported: self.last_reported,
            context_window: models::context_window(&self.config.model),
            max_output_tokens: self.config.max_output_tokens,
        };
        let summarizer = ConversationSummarizer {
            client: self.client.as_ref(),
            model: self.request_model(),
            system: self.config.system_prompt.system_prompt(),
            tools: self.tools.specs(),
            governance: &self.config.governance,
            events,
            cancel,
            cost: Default::default(),
        };
        let projected = tokio::select! {
            projected = self.config.pipeline.project(
                &mut self.messages,
                accounting,
                trigger.clone(),
                &summarizer,
            ) => projected,
            _ = cancel.cancelled() => return Err(TurnEnd::Interrupted),
        };
        let cost = summarizer
            .cost
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        tally.requests += cost.requests;
        tally.usage += cost.usage;
        tally.cost_usd += cost.cost_usd;
        let projection = projected.map_err(|err| TurnEnd::Failed {
            message: err.to_string(),
        })?;
        for notice in projection.notices {
            events.emit(AgentEvent::Warning { message: notice });
        }
        for compaction in projection.compactions {
            if let Some(summary) = &compaction.summary {
                // What was reported belongs to the conversation before.
                self.last_reported = None;
                // Recalled memories were summarised away with it: recall may bring them again.
                if let Some(recall) = &self.config.recall {
                    recall.forget_injected();
                }
                let mut input = serde_json::Map::new();
                input.insert("trigger".into(), trigger_name(&trigger).into());
                input.insert("compact_summary".into(), summary.clone().into());
                self.config
                    .governance
                    .run_hooks(
                        HookEvent::PostCompact,
                        Some(trigger_name(&trigger)),
                        input,
                        events,
                        cancel,
                    )
                    .await;
            }
            events.emit(AgentEvent::Compacted(compaction));
        }
        Ok(projection.messages)
    }

    /// `/compact [instructions]`: summarizes the conversation now, as a turn of its own with
    /// no model request but the summary's.
    async fn compact(
        &mut self,
        instructions: Option<String>,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> TurnSummary {
        let mut tally = TurnTally::default();
        let end = match self
            .project(
                Some(Trigger::Manual { instructions }),
                events,
                cancel,
                &mut tally,
            )
            .await
        {
            Ok(_) => {
                tally.result = "The conversation was compacted.".into();
                TurnEnd::Completed
            }
            Err(end) => end,
        };
        let summary = tally.finish(end);
        events.emit(AgentEvent::TurnFinished(summary.clone()));
        summary
    }

    /// An answer interrupted while it streamed: the text so far stays in the conversation
    /// (and the session), followed by a note that the user interrupted it, so the model
    /// sees what it had written and a resume shows it.
    fn keep_interrupted_answer(&mut self, partial: String, events: &EventSender) {
        if partial.trim().is_empty() {
            return;
        }
        let answer = Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(partial)],
        };
        events.emit(AgentEvent::AssistantMessage {
            message: answer.clone(),
            id: String::new(),
            model: self.config.model.clone(),
            stop_reason: None,
            usage: Usage::default(),
            cost_usd: 0.0,
        });
        self.messages.push(answer);
        let note = Message::user_text(INTERRUPTED_NOTE);
        events.emit(AgentEvent::UserMessage {
            message: note.clone(),
        });
        self.messages.push(note);
    }

    async fn turn_loop(
        &mut self,
        events: &EventSender,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> TurnEnd {
        let mut stop_continuations = 0;
        let mut trigger: Option<Trigger> = None;
        let mut reactive_tried = false;
        loop {
            if let Some(limit) = self.config.max_requests
                && tally.requests >= limit
            {
                return TurnEnd::MaxRequests { limit };
            }
            let messages = match self.project(trigger.take(), events, cancel, tally).await {
                Ok(messages) => messages,
                Err(end) => return end,
            };
            let sent = messages.len();
            let request = ModelRequest {
                model: self.request_model(),
                system: self.config.system_prompt.system_prompt(),
                messages,
                tools: self.tools.specs(),
                max_tokens: self.config.max_output_tokens,
                text_only: false,
            };
            let started = Instant::now();
            let mut partial = String::new();
            let outcome = self
                .client
                .stream(
                    &request,
                    &mut |event| {
                        keep_partial(&mut partial, &event);
                        forward(events, event)
                    },
                    cancel,
                )
                .await;
            tally.duration_api_ms += started.elapsed().as_millis() as u64;
            let response = match outcome {
                Ok(response) => response,
                Err(ModelError::Cancelled) => {
                    self.keep_interrupted_answer(partial, events);
                    return TurnEnd::Interrupted;
                }
                // Over the window after all: compact, then send it once more.
                Err(err) if err.is_prompt_too_long() && !reactive_tried => {
                    reactive_tried = true;
                    trigger = Some(Trigger::Reactive);
                    continue;
                }
                Err(err) => {
                    return TurnEnd::Failed {
                        message: err.to_string(),
                    };
                }
            };
            tally.requests += 1;
            tally.usage += response.usage;
            self.last_reported = Some((response.usage.input_total(), sent));
            let cost_usd = pricing::cost_usd(&response.model, &response.usage);
            tally.cost_usd += cost_usd;
            let message = Message {
                role: Role::Assistant,
                content: response.content.clone(),
            };
            tally.result = message.text();
            events.emit(AgentEvent::AssistantMessage {
                message: message.clone(),
                id: response.id.clone(),
                model: response.model.clone(),
                stop_reason: response.stop_reason,
                usage: response.usage,
                cost_usd,
            });
            if !message.content.is_empty() {
                self.messages.push(message);
            }

            let calls = tool_calls(&response);
            if calls.is_empty() {
                return match response.stop_reason {
                    Some(StopReason::MaxTokens) => {
                        events.emit(AgentEvent::Warning {
                            message: format!(
                                "The answer was cut: the model reached its output limit of {} tokens.",
                                self.config.max_output_tokens
                            ),
                        });
                        TurnEnd::MaxTokens
                    }
                    _ => {
                        if self
                            .stop_hooks_continue(&mut stop_continuations, events, cancel)
                            .await
                        {
                            continue;
                        }
                        TurnEnd::Completed
                    }
                };
            }
            let mut results = CallRunner {
                tools: &self.tools,
                governance: &self.config.governance,
                permissions: &self.permissions,
                events,
                cancel,
            }
            .run(&response, &calls)
            .await;
            let spilled = self.config.pipeline.admit_tool_results(&mut results);
            // The user sees whole results; say which ones the model got only the start of.
            for spill in spilled {
                let tool = calls
                    .iter()
                    .find(|call| call.id == spill.tool_use_id)
                    .map_or("A tool", |call| call.name.as_str());
                let saved = spill
                    .saved
                    .map(|path| format!("; the whole is saved in {}", path.display()))
                    .unwrap_or_default();
                events.emit(AgentEvent::Warning {
                    message: format!(
                        "{tool}'s result ({} characters) was too large for the conversation: \
                         the model got its first {} characters{saved}.",
                        spill.chars, spill.preview_chars
                    ),
                });
            }
            // Memories recall chose meanwhile go to the model with these results.
            if self
                .recall
                .as_ref()
                .is_some_and(|recall| recall.is_finished())
            {
                results.extend(self.take_recalled(events).await);
            }
            let message = Message {
                role: Role::User,
                content: results,
            };
            events.emit(AgentEvent::ToolResultsMessage {
                message: message.clone(),
            });
            self.messages.push(message);
            if cancel.is_cancelled() {
                return TurnEnd::Interrupted;
            }
        }
    }
}

fn tool_calls(response: &ModelResponse) -> Vec<ToolCall> {
    response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some(ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// What the conversation says after an answer the user interrupted, as Claude Code says it.
pub const INTERRUPTED_NOTE: &str = "[Request interrupted by user]";

/// What the model is told on the next user message once plan mode holds.
pub const PLAN_MODE_ACTIVE: &str = "Plan mode is active: the user does not want changes yet. Do \
    not edit files or run commands that change anything (no installs, commits or config \
    changes); read and search only. When you have what you need, present your plan to the user \
    and wait for their approval.";

/// What the model is told on the next user message once plan mode has ended.
pub const PLAN_MODE_ENDED: &str = "Plan mode has ended: you may now edit files and run \
    commands, as the permission mode allows.";

/// The reminder the next user message needs about plan mode, if the model was last told
/// otherwise: the conversation itself says what it was told, so a resumed or compacted
/// conversation is told again when it needs to be.
fn plan_mode_reminder(
    messages: &[Message],
    mode: cairn_protocol::PermissionMode,
) -> Option<&'static str> {
    let active = system_reminder(PLAN_MODE_ACTIVE);
    let ended = system_reminder(PLAN_MODE_ENDED);
    let told_active = messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .flat_map(|message| message.content.iter().rev())
        .find(|block| **block == active || **block == ended)
        .is_some_and(|block| *block == active);
    match (mode == cairn_protocol::PermissionMode::Plan, told_active) {
        (true, false) => Some(PLAN_MODE_ACTIVE),
        (false, true) => Some(PLAN_MODE_ENDED),
        (true, true) | (false, false) => None,
    }
}

/// Puts `mode` in force in `gate` and says so; an engine without a gate runs every call, so
/// there is no mode to change.
fn set_permission_mode(
    gate: Option<&cairn_policy::PermissionGate>,
    mode: cairn_protocol::PermissionMode,
    events: &EventSender,
) {
    if let Some(gate) = gate {
        gate.set_mode(mode);
        events.emit(AgentEvent::PermissionModeChanged { mode });
    }
}

/// Collects the text an answer has streamed so far; a retry that streams the answer again
/// starts it over.
fn keep_partial(partial: &mut String, event: &ModelEvent) {
    match event {
        ModelEvent::TextDelta(text) => partial.push_str(text),
        ModelEvent::Retrying(notice) if notice.discard_partial => partial.clear(),
        _ => {}
    }
}

fn forward(events: &EventSender, event: ModelEvent) {
    events.emit(match event {
        ModelEvent::TextDelta(text) => AgentEvent::TextDelta { text },
        ModelEvent::ThinkingDelta(text) => AgentEvent::ThinkingDelta { text },
        ModelEvent::ToolUseStarted { id, name } => AgentEvent::ToolCallStarted { id, name },
        ModelEvent::ToolUseComplete { id, name, input } => {
            AgentEvent::ToolCallInputComplete { id, name, input }
        }
        ModelEvent::Retrying(notice) => AgentEvent::Retrying(notice),
    });
}
