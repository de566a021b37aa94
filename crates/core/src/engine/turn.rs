//! One turn: the user's message, then requests and tool calls until the model is done.

use std::time::Instant;

use cairn_context::Trigger;
use cairn_context::estimate_tokens;
use cairn_llm::{ModelError, ModelEvent, ModelRequest, ModelResponse, PartialAnswer};
use cairn_policy::hooks::HookEvent;
use cairn_protocol::{
    AgentEvent, ContentBlock, EventSender, Message, Role, StopReason, TurnEnd, TurnSummary, Usage,
};
use cairn_tools::ToolCall;
use tokio_util::sync::CancellationToken;

use super::{AgentScope, Engine};
use crate::assembly::system_reminder;
use crate::orchestrate::{CallRunner, ToolUseIds, rename_duplicate_tool_use_ids};
use crate::structured_output::{MAX_STRUCTURED_OUTPUT_ATTEMPTS, StructuredOutput};

/// How many times Stop hooks may send the model back to work in one turn.
const MAX_STOP_CONTINUATIONS: u32 = 8;

/// Tallies of the turn in progress.
#[derive(Debug, Default)]
pub(super) struct TurnTally {
    pub(super) requests: u32,
    pub(super) usage: Usage,
    pub(super) cost_usd: f64,
    /// Some request's cost was unknown (a model without known prices).
    pub(super) cost_unknown: bool,
    pub(super) duration_api_ms: u64,
    pub(super) result: String,
}

impl TurnTally {
    /// Adds one request's cost, `None` when its model's prices are unknown.
    pub(super) fn add_cost(&mut self, cost: Option<f64>) {
        match cost {
            Some(cost) => self.cost_usd += cost,
            None => self.cost_unknown = true,
        }
    }

    /// The turn's summary, ended by `end`.
    pub(super) fn finish(self, end: TurnEnd) -> TurnSummary {
        TurnSummary {
            op_id: String::new(),
            end,
            result: self.result,
            requests: self.requests,
            usage: self.usage,
            cost_usd: self.cost_usd,
            cost_unknown: self.cost_unknown,
            duration_api_ms: self.duration_api_ms,
        }
    }
}

impl Engine {
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
        self.count_side_requests(&mut tally, events);
        let mut summary = tally.finish(end);
        summary.op_id = std::mem::take(&mut self.current_op);
        events.emit(AgentEvent::TurnFinished(summary.clone()));
        summary
    }

    /// Appends the user's message, after the UserPromptSubmit hooks had their say: they may
    /// block the prompt (it is then not sent) or add context to it.
    pub(super) async fn submit_prompt(
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
        // A sub-agent's prompt comes from the model, not the user.
        let hooks = match self.scope {
            AgentScope::Main => {
                self.config
                    .governance
                    .run_hooks(HookEvent::UserPromptSubmit, None, input, events, cancel)
                    .await
            }
            AgentScope::SubAgent { .. } => None,
        };
        if let Some(outcome) = hooks {
            if let Some(reason) = outcome.block.or(outcome.stop) {
                return Err(TurnEnd::HookBlocked {
                    message: format!("A UserPromptSubmit hook blocked the prompt: {reason}"),
                });
            }
            for context in outcome.additional_context {
                content.push(system_reminder(&context));
            }
        }
        if let Some(reminder) = plan_mode_reminder(&self.messages, self.config.governance.mode()) {
            content.push(system_reminder(reminder));
        }
        content.extend(self.take_notifications());
        // Memories recalled for the last message, if that recall is done by now.
        content.extend(self.take_recalled(events).await);
        if let Some(recall) = &self.config.recall {
            let prompt = Message {
                role: Role::User,
                content: content.clone(),
            }
            .text();
            self.recall_running = Some(tokio::spawn(recall.start(prompt)));
        }
        self.push_user_message(content, events);
        Ok(())
    }

    /// Adds a user message of `content` to the conversation, and says so.
    fn push_user_message(&mut self, content: Vec<ContentBlock>, events: &EventSender) {
        let message = Message {
            role: Role::User,
            content,
        };
        events.emit(AgentEvent::UserMessage {
            message: message.clone(),
        });
        self.messages.push(message);
    }

    /// The notifications background agents left for this request, as text blocks.
    fn take_notifications(&self) -> Vec<ContentBlock> {
        self.notifications
            .as_ref()
            .map(|notifications| notifications.take())
            .unwrap_or_default()
            .into_iter()
            .map(ContentBlock::text)
            .collect()
    }

    /// At the end of a main turn where nobody can be asked anything (`cairn -p`): waits for
    /// the background agents still running and puts their notifications in a user message,
    /// so the turn goes on with them (true). False when none runs or waits, or elsewhere.
    async fn waited_for_background(
        &mut self,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> bool {
        let Some(notifications) = self.notifications.clone() else {
            return false;
        };
        if self.scope != AgentScope::Main || self.permissions.can_ask() || !notifications.pending()
        {
            return false;
        }
        tokio::select! {
            () = notifications.next() => {}
            () = cancel.cancelled() => return false,
        }
        let content = self.take_notifications();
        if content.is_empty() {
            return false;
        }
        self.push_user_message(content, events);
        true
    }

    /// Whether Stop hooks want the model to go on; their reason becomes the next user
    /// message. At most [`MAX_STOP_CONTINUATIONS`] times a turn, so a hook that always
    /// blocks cannot loop forever.
    pub(super) async fn stop_hooks_continue(
        &mut self,
        continuations: &mut u32,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> bool {
        let Some(text) = self.stop_hooks_reason(continuations, events, cancel).await else {
            return false;
        };
        let message = Message::user_text(text);
        events.emit(AgentEvent::UserMessage {
            message: message.clone(),
        });
        self.messages.push(message);
        true
    }

    /// What Stop hooks that want the model to go on tell it (`None` lets the turn end), within
    /// [`MAX_STOP_CONTINUATIONS`]; the caller puts it in the conversation.
    async fn stop_hooks_reason(
        &mut self,
        continuations: &mut u32,
        events: &EventSender,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let mut input = serde_json::Map::new();
        input.insert(
            "stop_hook_active".into(),
            serde_json::Value::Bool(*continuations > 0),
        );
        let (event, subject) = match &self.scope {
            AgentScope::Main => (HookEvent::Stop, None),
            AgentScope::SubAgent {
                agent_id,
                agent_type,
            } => {
                input.insert("agent_id".into(), agent_id.clone().into());
                input.insert("agent_type".into(), agent_type.clone().into());
                let last = self
                    .messages
                    .last()
                    .filter(|message| message.role == Role::Assistant)
                    .map(Message::text)
                    .unwrap_or_default();
                input.insert("last_assistant_message".into(), last.into());
                if let Some(path) = events.sub_agent_transcript() {
                    input.insert(
                        "agent_transcript_path".into(),
                        path.display().to_string().into(),
                    );
                }
                (HookEvent::SubagentStop, Some(agent_type.clone()))
            }
        };
        let outcome = self
            .config
            .governance
            .run_hooks(event, subject.as_deref(), input, events, cancel)
            .await?;
        let reason = outcome.block?;
        if *continuations >= MAX_STOP_CONTINUATIONS {
            events.emit(AgentEvent::Warning {
                message: format!(
                    "A {event} hook asked to continue a {}th time; stopping anyway.",
                    *continuations + 1
                ),
            });
            return None;
        }
        *continuations += 1;
        Some(format!("A {event} hook says: {reason}"))
    }

    /// A request interrupted while its answer streamed. What the provider reported of it
    /// counts in the turn, as it does on the bill: the input counts of `message_start`, and
    /// as output at least what streamed. The text so far stays in the conversation (and the
    /// session), under the message's real id, followed by a note that the user interrupted
    /// it, so the model sees what it had written and a resume shows it.
    fn keep_interrupted_answer(
        &mut self,
        streamed: Streamed,
        sent: usize,
        events: &EventSender,
        tally: &mut TurnTally,
    ) {
        let (id, model, usage, cost_usd) = match &streamed.reported {
            Some(reported) => {
                let mut usage = reported.usage;
                usage.output_tokens = usage.output_tokens.max(streamed.output_estimate());
                let model = if reported.model.is_empty() {
                    self.config.model.clone()
                } else {
                    reported.model.clone()
                };
                tally.requests += 1;
                tally.usage += usage;
                let cost = self.client.model_info(&model).cost_usd(&usage);
                tally.add_cost(cost);
                if usage.input_total() > 0 {
                    self.last_reported = Some((usage.input_total(), sent));
                }
                (reported.id.clone(), model, usage, cost.unwrap_or(0.0))
            }
            None => (
                String::new(),
                self.config.model.clone(),
                Usage::default(),
                0.0,
            ),
        };
        let kept = !streamed.text.trim().is_empty();
        let answer = Message {
            role: Role::Assistant,
            content: if kept {
                vec![ContentBlock::text(streamed.text)]
            } else {
                Vec::new()
            },
        };
        // An empty message still carries the request's usage to the faces; the session and
        // the conversation keep only an answer with text.
        if kept || streamed.reported.is_some() {
            events.emit(AgentEvent::AssistantMessage {
                message: answer.clone(),
                id,
                model,
                stop_reason: None,
                usage,
                cost_usd,
            });
        }
        if !kept {
            return;
        }
        self.messages.push(answer);
        let note = Message::user_text(INTERRUPTED_NOTE);
        events.emit(AgentEvent::UserMessage {
            message: note.clone(),
        });
        self.messages.push(note);
    }

    pub(super) async fn turn_loop(
        &mut self,
        events: &EventSender,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> TurnEnd {
        let mut stop_continuations = 0;
        let mut structured_failures = 0;
        let mut trigger: Option<Trigger> = None;
        let mut reactive_tried = false;
        loop {
            if let Some(limit) = self.config.max_requests
                && tally.requests >= limit
            {
                return TurnEnd::MaxRequests { limit };
            }
            let (messages, stable_prefix) =
                match self.project(trigger.take(), events, cancel, tally).await {
                    Ok(projected) => projected,
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
                stable_prefix,
            };
            let started = Instant::now();
            let mut streamed = Streamed::default();
            let mut ids = ToolUseIds::default();
            let outcome = self
                .client
                .stream(
                    &request,
                    &mut |event| {
                        streamed.take(&event);
                        forward(events, event, &mut ids)
                    },
                    cancel,
                )
                .await;
            tally.duration_api_ms += started.elapsed().as_millis() as u64;
            let mut response = match outcome {
                Ok(response) => response,
                Err(ModelError::Cancelled) => {
                    self.keep_interrupted_answer(streamed, sent, events, tally);
                    return TurnEnd::Interrupted;
                }
                // Over the window after all: compact, then send it once more.
                Err(err) if err.is_prompt_too_long() && !reactive_tried => {
                    reactive_tried = true;
                    trigger = Some(Trigger::Reactive);
                    continue;
                }
                // Overloaded: the same request goes to the fallback model, which the session
                // keeps from now on.
                Err(err)
                    if err.is_overloaded()
                        && self
                            .fallback_model
                            .as_ref()
                            .is_some_and(|fallback| *fallback != request.model) =>
                {
                    let fallback = self.fallback_model.take().unwrap_or_default();
                    events.emit(AgentEvent::Warning {
                        message: format!(
                            "{} is overloaded ({err}); switching to the fallback model {fallback} \
                             (--fallback-model).",
                            request.model
                        ),
                    });
                    events.emit(AgentEvent::ModelChanged {
                        model: fallback.clone(),
                    });
                    self.config.model = fallback;
                    continue;
                }
                Err(err) => {
                    return TurnEnd::Failed {
                        message: err.to_string(),
                    };
                }
            };
            // Before anything keeps the message: history, the session log and the results
            // must each see one id per call.
            rename_duplicate_tool_use_ids(&mut response);
            tally.requests += 1;
            tally.usage += response.usage;
            self.last_reported = Some((response.usage.input_total(), sent));
            // The provider prices its own models; an unknown price is not a cost of zero.
            let cost = self
                .client
                .model_info(&response.model)
                .cost_usd(&response.usage);
            tally.add_cost(cost);
            let cost_usd = cost.unwrap_or(0.0);
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
                    _ if self.structured_output => {
                        // The answer had to come through StructuredOutput: send it back.
                        structured_failures += 1;
                        if structured_failures >= MAX_STRUCTURED_OUTPUT_ATTEMPTS {
                            return TurnEnd::StructuredOutputRetries {
                                attempts: structured_failures,
                            };
                        }
                        self.push_user_message(
                            vec![system_reminder(&StructuredOutput::reminder())],
                            events,
                        );
                        continue;
                    }
                    _ => {
                        if self
                            .stop_hooks_continue(&mut stop_continuations, events, cancel)
                            .await
                            || self.waited_for_background(events, cancel).await
                        {
                            continue;
                        }
                        TurnEnd::Completed
                    }
                };
            }
            let ran = CallRunner {
                tools: &self.tools,
                governance: &self.config.governance,
                permissions: &self.permissions,
                events,
                cancel,
            }
            .run(&response, &calls)
            .await;
            let mut results = ran.blocks;
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
                .recall_running
                .as_ref()
                .is_some_and(|recall| recall.is_finished())
            {
                results.extend(self.take_recalled(events).await);
            }
            // A plan handed back ends the turn, so the Stop hooks have their say; what they
            // want changed goes to the model with the results.
            let hook_says = match ran.handed_back {
                Some(_) if !cancel.is_cancelled() => {
                    self.stop_hooks_reason(&mut stop_continuations, events, cancel)
                        .await
                }
                _ => None,
            };
            results.extend(hook_says.iter().map(ContentBlock::text));
            results.extend(self.take_notifications());
            let message = Message {
                role: Role::User,
                content: results,
            };
            events.emit(AgentEvent::ToolResultsMessage {
                message: message.clone(),
            });
            self.approved_plan = super::approved_in(&message).or(self.approved_plan.take());
            self.messages.push(message);
            if cancel.is_cancelled() {
                return TurnEnd::Interrupted;
            }
            // The answer, handed over: the turn ends with it. A value that did not fit counts
            // against the attempts.
            if let Some(value) = ran.structured {
                tally.result = value.to_string();
                return TurnEnd::Completed;
            }
            structured_failures += ran.refused_structured;
            if structured_failures >= MAX_STRUCTURED_OUTPUT_ATTEMPTS {
                return TurnEnd::StructuredOutputRetries {
                    attempts: structured_failures,
                };
            }
            // Nobody is here to approve the plan: it is what the turn gives back.
            if let Some(plan) = ran.handed_back
                && hook_says.is_none()
            {
                tally.result = plan;
                return TurnEnd::Completed;
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
    with the ExitPlanMode tool and wait for their approval.";

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

/// What an answer has streamed so far, for a request that is interrupted: its text, how much
/// thinking came with it, and what the provider reported of it. A retry that streams the
/// answer again starts it over.
#[derive(Debug, Default)]
struct Streamed {
    text: String,
    thinking: String,
    reported: Option<PartialAnswer>,
}

impl Streamed {
    fn take(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::TextDelta(text) => self.text.push_str(text),
            ModelEvent::ThinkingDelta(text) => self.thinking.push_str(text),
            ModelEvent::Retrying(notice) if notice.discard_partial => {
                self.text.clear();
                self.thinking.clear();
            }
            ModelEvent::Interrupted(partial) => self.reported = Some(partial.clone()),
            ModelEvent::Retrying(_)
            | ModelEvent::ToolUseStarted { .. }
            | ModelEvent::ToolUseComplete { .. }
            | ModelEvent::Note(_) => {}
        }
    }

    /// The output tokens of what streamed, estimated: the provider counts output only at the
    /// end, and bills what it generated before the interruption all the same.
    fn output_estimate(&self) -> u64 {
        (estimate_tokens(&self.text) + estimate_tokens(&self.thinking)) as u64
    }
}

/// Tells the face what the model streams, each tool call under the id cairn keeps for it
/// (`ids`: a repeated id is renamed as the finished message will be).
fn forward(events: &EventSender, event: ModelEvent, ids: &mut ToolUseIds) {
    let event = match event {
        ModelEvent::TextDelta(text) => AgentEvent::TextDelta { text },
        ModelEvent::ThinkingDelta(text) => AgentEvent::ThinkingDelta { text },
        ModelEvent::ToolUseStarted { id, name } => AgentEvent::ToolCallStarted {
            id: ids.started(&id),
            name,
        },
        ModelEvent::ToolUseComplete { id, name, input } => AgentEvent::ToolCallInputComplete {
            id: ids.current(&id),
            name,
            input,
        },
        ModelEvent::Retrying(notice) => {
            // The answer is streamed again from its start.
            if notice.discard_partial {
                *ids = ToolUseIds::default();
            }
            AgentEvent::Retrying(notice)
        }
        ModelEvent::Note(message) => AgentEvent::Debug { message },
        // Counted with the interrupted answer, when the turn ends.
        ModelEvent::Interrupted(_) => return,
    };
    events.emit(event);
}
