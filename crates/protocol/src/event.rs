//! What goes into the engine ([`Op`]) and what comes out of it ([`AgentEvent`]).
//!
//! The interactive UI, the headless `-p` runner and the stream-json protocol are three faces of
//! one engine: each sends operations and renders the same stream of events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ContentBlock, Message, StopReason, ToolResultContent, Usage};

/// An operation for the engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The user says something; starts a turn. A custom slash command's prompt may run its
    /// turn on the command's `model` and let it use the tools its `allowed-tools` rules allow
    /// without asking; both hold for that turn only.
    UserMessage {
        /// The id the turn's [`TurnSummary::op_id`] answers to; empty when the sender
        /// needs none (the session host gives every turn one).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        id: String,
        /// What the user says: text, and images they attached.
        content: Vec<ContentBlock>,
        /// The model for this turn only (a custom command's `model`); `None` keeps the
        /// session's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Permission rules (`Bash(git status:*)`) whose calls run without asking during this
        /// turn only; empty for an ordinary message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allowed_tools: Vec<String>,
    },
    /// Stop the running turn as soon as possible.
    Interrupt,
    /// Summarize the conversation now (`/compact [instructions]`). Runs like a turn, in order
    /// with the messages around it, and ends with [`AgentEvent::TurnFinished`].
    Compact {
        /// As [`Op::UserMessage`]'s.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        id: String,
        /// What the summary should keep or stress, as the user wrote it after `/compact`;
        /// `None` for the default summary.
        instructions: Option<String>,
    },
    /// Use another model from the next request on.
    SetModel {
        /// The model's id or alias, as the provider knows it.
        model: String,
    },
    /// Judge tool calls by another permission mode from now on (Shift+Tab in the TUI); the
    /// engine answers with [`AgentEvent::PermissionModeChanged`].
    SetPermissionMode {
        /// The mode to switch to.
        mode: crate::PermissionMode,
    },
    /// The user's answer to a [`AgentEvent::PermissionRequested`].
    PermissionAnswer {
        /// The `request_id` of the question answered.
        request_id: String,
        /// What the user chose.
        answer: PermissionAnswer,
    },
    /// Stop serving: a running turn is interrupted (it still ends with its
    /// [`AgentEvent::TurnFinished`]), what is queued is dropped, and the engine returns.
    Shutdown,
}

impl Op {
    /// The operation that starts a turn with `content`, on the session's model and rules.
    pub fn user(content: Vec<ContentBlock>) -> Op {
        Op::turn(content, None, Vec::new())
    }

    /// The operation that starts a turn with `content`, with a custom command's model and
    /// allowed tools for that turn.
    pub fn turn(
        content: Vec<ContentBlock>,
        model: Option<String>,
        allowed_tools: Vec<String>,
    ) -> Op {
        Op::UserMessage {
            id: String::new(),
            content,
            model,
            allowed_tools,
        }
    }

    /// `/compact [instructions]` as an operation.
    pub fn compact(instructions: Option<String>) -> Op {
        Op::Compact {
            id: String::new(),
            instructions,
        }
    }

    /// The id of an operation that starts work (a message, a compaction); `None` for the
    /// others.
    pub fn work_id(&self) -> Option<&str> {
        match self {
            Op::UserMessage { id, .. } | Op::Compact { id, .. } => Some(id),
            Op::Interrupt
            | Op::Shutdown
            | Op::SetModel { .. }
            | Op::SetPermissionMode { .. }
            | Op::PermissionAnswer { .. } => None,
        }
    }

    /// The same operation with `new_id` as its id, when it starts work; others unchanged.
    pub fn with_id(mut self, new_id: impl Into<String>) -> Op {
        if let Op::UserMessage { id, .. } | Op::Compact { id, .. } = &mut self {
            *id = new_id.into();
        }
        self
    }
}

/// What the user said when asked whether a tool call may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PermissionAnswer {
    /// Allow this one call; ask again next time.
    AllowOnce,
    /// Allow, and allow what `rule` matches for the rest of this session only (Claude Code's
    /// "Yes, allow all edits during this session"): nothing is saved.
    AllowForSession {
        /// A permission rule in Claude Code's syntax, usually the question's suggested rule.
        rule: String,
    },
    /// Allow, and allow what `rule` matches from now on: for the rest of the session and,
    /// where the face keeps rules, in the project's `.claude/settings.local.json`.
    AllowAlways {
        /// A permission rule in Claude Code's syntax, usually the question's suggested rule.
        rule: String,
    },
    /// Allow this call as the answerer shaped it: with `updated_input` in place of the
    /// call's own arguments (an Agent SDK host's `updatedInput`, a question's answers written
    /// into `AskUserQuestion`'s input; checked again as the model's own would be), with what
    /// `rules` match allowed for the rest of this session (the SDKs' `updatedPermissions`),
    /// and from `mode` on (a plan approved into `acceptEdits`, a `setMode` update).
    AllowWith {
        /// The input the call runs with instead of the one asked about; `None` keeps it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        updated_input: Option<Value>,
        /// Permission rules in Claude Code's syntax, allowed for this session only.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rules: Vec<String>,
        /// The permission mode from this call on; `None` keeps the one in force.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<crate::PermissionMode>,
    },
    /// Deny; `message` goes to the model with the refusal ("do it differently: …").
    Deny {
        /// The user's words to the model; `None` for a bare refusal.
        message: Option<String>,
    },
}

/// Who or what decided a permission question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// A permission rule from settings or flags.
    Rule,
    /// The permission mode (or the call being read-only).
    Mode,
    /// A PreToolUse hook.
    Hook,
    /// The user, asked.
    User,
    /// Nobody could be asked (`-p`), so the question became a denial.
    NonInteractive,
}

/// One permission decision, as recorded in the session (a protected item for compaction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    /// The id of the `tool_use` block judged.
    pub tool_use_id: String,
    /// The tool's canonical name.
    pub tool: String,
    /// Whether the call may run.
    pub allowed: bool,
    /// Who or what decided.
    pub source: DecisionSource,
    /// The rule that decided, when one did.
    pub rule: Option<String>,
    /// Why, in words for the user (a hook's message, the mode's refusal); `None` when the
    /// rule or the source says it all.
    pub reason: Option<String>,
    /// The call's input as judged (after any hook rewrote it), for the result's
    /// `permission_denials`.
    #[serde(default)]
    pub input: Value,
}

/// A request that failed and will be tried again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryNotice {
    /// The attempt that comes next, counting from 1 for the first request.
    pub attempt: u32,
    /// The number of attempts in all, the first included; after the last one the request
    /// fails for good.
    pub max_attempts: u32,
    /// How long the engine waits before the next attempt, in milliseconds.
    pub delay_ms: u64,
    /// Short and human: `overloaded`, `rate limited`, `connection reset`.
    pub reason: String,
    /// The failed attempt had already streamed part of an answer: a UI drops what it showed of
    /// it, because the retry streams the whole answer again.
    pub discard_partial: bool,
}

/// One entry of the session's todo list, with Claude Code's field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TodoItem {
    /// What is to be done, in the imperative: "Run the tests".
    pub content: String,
    /// Where the item stands.
    pub status: TodoStatus,
    /// The same in the present continuous, shown while it runs: "Running the tests".
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// Where a todo item stands, with Claude Code's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now; the list shows its `activeForm`.
    InProgress,
    /// Done.
    Completed,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model finished (`end_turn` or an equivalent stop).
    Completed,
    /// The model hit its output limit; the answer is cut.
    MaxTokens,
    /// The turn reached the configured number of model requests (`--max-turns`, named as
    /// Claude Code names it).
    MaxRequests {
        /// The limit that was reached.
        limit: u32,
    },
    /// The user interrupted the turn.
    Interrupted,
    /// A request failed for good (the API, the network, the context pipeline).
    Failed {
        /// What went wrong, in words for the user.
        message: String,
    },
    /// A hook refused the turn (a UserPromptSubmit hook blocked the prompt).
    HookBlocked {
        /// The hook's reason, as it gave it.
        message: String,
    },
    /// The run asks for structured output (`--json-schema`) and the model failed to give a
    /// value that fits the schema, this many times.
    StructuredOutputRetries {
        /// The attempts that failed.
        attempts: u32,
    },
}

impl TurnEnd {
    /// Whether the turn ended short of what was asked (stream-json's `is_error`). A cut
    /// answer ([`TurnEnd::MaxTokens`]) is not an error.
    pub fn is_error(&self) -> bool {
        match self {
            TurnEnd::Completed | TurnEnd::MaxTokens => false,
            TurnEnd::MaxRequests { .. }
            | TurnEnd::Interrupted
            | TurnEnd::Failed { .. }
            | TurnEnd::HookBlocked { .. }
            | TurnEnd::StructuredOutputRetries { .. } => true,
        }
    }
}

/// The totals of one turn. A *turn* is one user message and everything it caused until the
/// model is done; each call to the model within it is a *request*.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSummary {
    /// The id of the operation this turn answers ([`Op::work_id`]); empty when it had none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op_id: String,
    /// How the turn ended.
    pub end: TurnEnd,
    /// The text of the last assistant message.
    pub result: String,
    /// Model requests that completed in this turn (stream-json's `num_turns`).
    pub requests: u32,
    /// Tokens summed over the turn's requests.
    pub usage: Usage,
    /// The cost of the requests whose model has known prices.
    pub cost_usd: f64,
    /// Some request went to a model without known prices: the turn's cost is unknown, and
    /// `cost_usd` counts only the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_unknown: bool,
    /// Time spent waiting on the model API, in milliseconds, summed over the requests.
    pub duration_api_ms: u64,
}

impl TurnSummary {
    /// The turn's cost in USD, or `None` when some of it is unknown.
    pub fn cost(&self) -> Option<f64> {
        (!self.cost_unknown).then_some(self.cost_usd)
    }
}

/// Something the engine reports while it works. Deltas arrive as the model streams them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The user's message that starts a turn, as appended to the conversation.
    UserMessage {
        /// The message, with any hook context and reminders the engine added.
        message: Message,
    },
    /// A piece of the model's answer text, as it streams.
    TextDelta {
        /// The new text, to append to what came before.
        text: String,
    },
    /// A piece of the model's extended thinking, as it streams.
    ThinkingDelta {
        /// The new thinking, to append to what came before.
        text: String,
    },
    /// The model began a tool call; its input is still streaming.
    ToolCallStarted {
        /// The `tool_use` id.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
    },
    /// The whole input of a tool call has arrived.
    ToolCallInputComplete {
        /// The `tool_use` id.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
        /// The call's arguments.
        input: Value,
    },
    /// A tool call finished, was refused or failed; what the model will be told.
    ToolCallResult {
        /// The `tool_use` id.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
        /// The tool's output, or the reason it did not run.
        content: ToolResultContent,
        /// Whether the call failed or was refused.
        is_error: bool,
    },
    /// A complete assistant message, after its stream ended.
    AssistantMessage {
        /// The message as appended to the conversation.
        message: Message,
        /// The API's id for the message (`msg_…`).
        id: String,
        /// The model that answered, as the API named it.
        model: String,
        /// Why the model stopped; `None` when the API did not say.
        stop_reason: Option<StopReason>,
        /// The tokens of this one request.
        usage: Usage,
        /// This request's cost in USD; 0 when the model's prices are unknown (the turn's
        /// [`TurnSummary::cost_unknown`] says so).
        cost_usd: f64,
    },
    /// The user message that carries tool results back to the model.
    ToolResultsMessage {
        /// The message, one `tool_result` block per call of the assistant message before it.
        message: Message,
    },
    /// A model request failed and will be tried again.
    Retrying(RetryNotice),
    /// A tool call needs the user's approval; answer with [`Op::PermissionAnswer`].
    PermissionRequested {
        /// The id the answer must carry; unique among the questions open at once.
        request_id: String,
        /// The `tool_use` id of the call in question.
        tool_use_id: String,
        /// The tool's canonical name.
        tool: String,
        /// The call's arguments, as they will run.
        input: Value,
        /// Why it needs approval, in words for the user.
        reason: String,
        /// The rule "don't ask again" would add.
        suggested_rule: Option<String>,
    },
    /// A tool call was allowed or refused, and by whom.
    PermissionDecided(PermissionDecision),
    /// The session's todo list changed (the `TodoWrite` tool); the whole new list.
    TodosChanged {
        /// Every item, in order.
        todos: Vec<TodoItem>,
    },
    /// Requests use another model from now on.
    ModelChanged {
        /// The new model.
        model: String,
    },
    /// Tool calls are judged by this permission mode from now on.
    PermissionModeChanged {
        /// The new mode.
        mode: crate::PermissionMode,
    },
    /// Something the user should know that does not stop the turn.
    Warning {
        /// The warning, in words for the user.
        message: String,
    },
    /// A detail for `--verbose` only (a memory recall that failed, a skipped memory file):
    /// never shown otherwise, never sent to the model.
    Debug {
        /// The detail.
        message: String,
    },
    /// The context pipeline made the conversation smaller before a request.
    Compacted(Compaction),
    /// Requests made beside the conversation (a compaction's summary, WebFetch's answer, a
    /// web search, memory recall) that count in the turn's totals: one model's share.
    SideRequests(SideRequests),
    /// The turn is over; the last event of every turn, [`Op::Compact`]'s included.
    TurnFinished(TurnSummary),
}

/// One model's side requests (see [`AgentEvent::SideRequests`]), already in the
/// [`TurnSummary`] of their turn; the faces add them to what they show by model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SideRequests {
    /// The model that answered them.
    pub model: String,
    /// How many requests.
    pub requests: u32,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost in USD (searches included); `None` when the model's prices are unknown.
    pub cost_usd: Option<f64>,
    /// The provider's server-side web searches among them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_search_requests: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the context pipeline did to fit the conversation in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The step that did it: `snip`, `microcompact`, `collapse`, `autocompact`.
    pub step: String,
    /// The user asked for it (`/compact`), rather than the pipeline's thresholds or the API.
    pub manual: bool,
    /// The estimated tokens of the conversation before.
    pub tokens_before: u64,
    /// The estimated tokens of the conversation after.
    pub tokens_after: u64,
    /// The summary that replaced the stored conversation before it (autocompact,
    /// `/compact`), which the session records as a compaction boundary; `None` when only
    /// what requests send changed.
    pub summary: Option<String>,
    /// The messages the rewritten conversation now starts with (the summary and the
    /// re-injected state), so a resume continues from exactly them; empty when the stored
    /// conversation was not rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opening: Vec<Message>,
    /// How far requests now show the stored conversation collapsed (step `collapse`): its
    /// first this many messages go out as a log of what happened in them. The session records
    /// it, so a resume shows the same view; `None` for every other step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed_through: Option<u64>,
}
