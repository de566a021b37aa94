//! The lines of `--output-format stream-json` and the `result` object, one definition each.
//!
//! Other programs read these: scripts, and the Agent SDKs (Python `claude-agent-sdk`,
//! TypeScript `@anthropic-ai/claude-agent-sdk`), which start a CLI and parse its output by
//! Claude Code's field names. So the names here are Claude Code's, including its camelCase
//! ones (`permissionMode`, `apiKeySource`, `modelUsage`, `costUSD`), and every line carries
//! the `uuid` and `session_id` the SDKs read. `--output-format json` prints the [`ResultLine`]
//! alone, the same object that ends a stream.
//!
//! These are plain data: the face that prints them (the `output` module's `Printer`) fills
//! them from the engine's events.

use std::collections::BTreeMap;

use cairn_llm::registry::ModelInfo;
use cairn_protocol::{ContentBlock, Message, PermissionDecision, Role, StopReason, TurnEnd, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of stream-json output, told apart by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Line {
    /// `{"type":"system","subtype":…}`: what the session is, and boundaries in it.
    System(SystemLine),
    /// A complete message from the model.
    Assistant(AssistantLine),
    /// A user message: the tool results that go back to the model.
    User(UserLine),
    /// The end of the run: the last line of a stream, the only one of `--output-format json`.
    Result(ResultLine),
    /// With `--include-partial-messages`: one event of the model's stream, in the Messages
    /// API's own shape.
    StreamEvent(StreamEventLine),
    /// A request of the control protocol, either way: the SDK host's (`initialize`,
    /// `interrupt`, …) or cairn's (`can_use_tool`, `hook_callback`, `mcp_message`).
    ControlRequest(ControlRequest),
    /// The answer to a [`Line::ControlRequest`], either way.
    ControlResponse(ControlResponse),
    /// The asker no longer wants an answer to the request `request_id`.
    ControlCancelRequest(ControlCancel),
}

/// A `system` line, told apart by its `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "one init line a session (or a turn, in the SDK face): boxing it would save nothing worth the indirection"
)]
pub enum SystemLine {
    /// The first line: the session's tools, model and settings.
    Init(Init),
    /// The conversation was summarised: what comes after rests on the summary.
    CompactBoundary(CompactBoundary),
    /// A model request failed and will be tried again (the SDK face prints these).
    ApiRetry(ApiRetry),
}

/// `system/api_retry`: a request failed and is tried again after `retry_delay_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiRetry {
    /// The attempt that comes next, counting from 1 for the first request.
    pub attempt: u32,
    /// The attempts in all, the first included.
    pub max_retries: u32,
    pub retry_delay_ms: u64,
    /// The HTTP status of the failure; `null` when cairn keeps only its words.
    pub error_status: Option<u16>,
    /// What failed, in a few words (`overloaded`, `rate limited`).
    pub error: String,
    pub session_id: String,
    pub uuid: String,
}

/// `system/init`: what the session is, before anything else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Init {
    pub cwd: String,
    pub session_id: String,
    /// The names of the tools the model is offered.
    pub tools: Vec<String>,
    pub mcp_servers: Vec<McpServerStatus>,
    pub model: String,
    #[serde(rename = "permissionMode")]
    pub permission_mode: String,
    /// The slash commands a prompt may start with, without their `/`.
    pub slash_commands: Vec<String>,
    /// The sub-agent types the `Agent` tool may start.
    pub agents: Vec<String>,
    /// The skills of `.claude/skills/` (each a slash command too), by name.
    #[serde(default)]
    pub skills: Vec<String>,
    /// The name of the variable the credential came from, never the credential.
    #[serde(rename = "apiKeySource")]
    pub api_key_source: String,
    /// cairn has no output styles: always Claude Code's `default`.
    pub output_style: String,
    /// The CLI's version, under Claude Code's name for it: cairn's own. The Python SDK reads
    /// it from this line and warns "too old to report its version" without it.
    #[serde(default)]
    pub claude_code_version: String,
    pub uuid: String,
}

/// One MCP server of `system/init` and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    /// `connected`, `pending` or `failed`.
    pub status: String,
}

/// `system/compact_boundary`: a summary replaced the conversation before this point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactBoundary {
    pub session_id: String,
    pub compact_metadata: CompactMetadata,
    pub uuid: String,
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactMetadata {
    pub trigger: CompactTrigger,
    /// The conversation's size in tokens before the summary.
    pub pre_tokens: u64,
    /// And after it.
    pub post_tokens: u64,
}

/// Who asked for a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// `/compact`.
    Manual,
    /// The context pipeline, because the window was filling up.
    Auto,
}

/// `assistant`: one complete model message, in the API's own message shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantLine {
    pub message: ApiMessage,
    /// The `tool_use` id of the `Agent` call whose sub-agent wrote this; `null` for the main
    /// agent.
    pub parent_tool_use_id: Option<String>,
    pub session_id: String,
    pub uuid: String,
}

/// A model message as the Messages API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiMessage {
    /// The API's id for the message (`msg_…`).
    pub id: String,
    #[serde(rename = "type")]
    pub kind: ApiMessageKind,
    pub role: Role,
    pub model: String,
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    /// cairn sends no stop sequences: always `null`.
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

/// The API's `type` of a message: there is only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiMessageKind {
    Message,
}

/// `user`: a user message of the conversation (the tool results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserLine {
    pub message: Message,
    /// As in [`AssistantLine::parent_tool_use_id`].
    pub parent_tool_use_id: Option<String>,
    pub session_id: String,
    pub uuid: String,
}

/// `result`: how the run ended, what it cost, and what was refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    pub subtype: ResultSubtype,
    pub is_error: bool,
    /// The answer's text; on an error, what went wrong.
    pub result: String,
    /// Why the last model message stopped; `null` when there was none.
    pub stop_reason: Option<StopReason>,
    /// `null` when the run failed before a session started.
    pub session_id: Option<String>,
    /// Claude Code's "turns" are cairn's model requests.
    pub num_turns: u32,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    /// `null` when some request went to a model without known prices: an unknown cost is
    /// never shown as a figure that leaves part of it out.
    pub total_cost_usd: Option<f64>,
    pub usage: Usage,
    /// The tokens and cost of each model the run's messages came from, by the model id the
    /// API answered with.
    #[serde(rename = "modelUsage")]
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Every tool call refused in the run, whoever refused it.
    pub permission_denials: Vec<PermissionDenial>,
    /// What went wrong, for an error result (the same words as `result`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// With `--json-schema`: the answer parsed as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    /// cairn's own: how many tool calls were read from a model's text rather than its
    /// tool-call fields (a local model that wrote its call as JSON or in `<tool_call>` tags);
    /// left out when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cairn_tool_calls_from_text: u64,
    pub uuid: String,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// How a run ended, in Claude Code's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResultSubtype {
    Success,
    /// The run reached `--max-turns` model requests.
    ErrorMaxTurns,
    /// Anything else that stopped the run: an API failure, an interrupt, a hook's refusal, a
    /// setup that failed.
    ErrorDuringExecution,
    /// The session's requests reached `--max-budget-usd`.
    ErrorMaxBudgetUsd,
    /// The model failed to give an answer fitting `--json-schema` in the attempts allowed.
    ErrorMaxStructuredOutputRetries,
}

impl From<&TurnEnd> for ResultSubtype {
    fn from(end: &TurnEnd) -> Self {
        match end {
            TurnEnd::Completed | TurnEnd::MaxTokens => ResultSubtype::Success,
            TurnEnd::MaxRequests { .. } => ResultSubtype::ErrorMaxTurns,
            TurnEnd::Interrupted | TurnEnd::Failed { .. } | TurnEnd::HookBlocked { .. } => {
                ResultSubtype::ErrorDuringExecution
            }
            TurnEnd::StructuredOutputRetries { .. } => {
                ResultSubtype::ErrorMaxStructuredOutputRetries
            }
        }
    }
}

/// One model's share of the run, with Claude Code's camelCase names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    /// The provider's server-side web searches (WebSearch's), as Anthropic reports them.
    pub web_search_requests: u64,
    /// `null` for a model without known prices, never `0`.
    #[serde(rename = "costUSD")]
    pub cost_usd: Option<f64>,
    /// `null` when the model's window is unknown.
    pub context_window: Option<u64>,
    /// `null` when the model's output ceiling is unknown.
    pub max_output_tokens: Option<u32>,
}

impl ModelUsage {
    /// A model's summed usage, priced and described by what cairn knows of the model.
    pub fn new(usage: &Usage, info: &ModelInfo) -> Self {
        ModelUsage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            web_search_requests: 0,
            cost_usd: info.cost_usd(usage),
            context_window: info.context_window,
            max_output_tokens: info.max_output_tokens,
        }
    }
}

/// A tool call that was refused: by a rule, a hook, the user, or because nobody could be
/// asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    /// The input as it was judged (after any hook rewrote it).
    pub tool_input: Value,
}

impl From<&PermissionDecision> for PermissionDenial {
    fn from(decision: &PermissionDecision) -> Self {
        PermissionDenial {
            tool_name: decision.tool.clone(),
            tool_use_id: decision.tool_use_id.clone(),
            tool_input: decision.input.clone(),
        }
    }
}

/// `stream_event`: one raw event of the model's stream (`message_start`,
/// `content_block_delta`, …), under the agent that streamed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEventLine {
    pub event: Value,
    /// As in [`AssistantLine::parent_tool_use_id`].
    pub parent_tool_use_id: Option<String>,
    pub session_id: String,
    pub uuid: String,
}

/// `control_request`: `request` is an object told apart by its `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlRequest {
    pub request_id: String,
    pub request: Value,
}

/// `control_response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlResponse {
    pub response: ControlOutcome,
}

/// How a control request went, told apart by its `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlOutcome {
    Success {
        request_id: String,
        /// The answer; `{}` when there is nothing to say.
        #[serde(default)]
        response: Value,
    },
    Error {
        request_id: String,
        /// What went wrong, in words for the asker.
        error: String,
    },
}

/// `control_cancel_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlCancel {
    pub request_id: String,
}

/// One line of `--input-format stream-json`, told apart by its `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum InputLine {
    /// A user message: starts a turn, or waits for the running one.
    User(UserInput),
    ControlRequest(ControlRequest),
    ControlResponse(ControlResponse),
    ControlCancelRequest(ControlCancel),
    /// Sent by hosts to keep the pipe alive; nothing to do.
    KeepAlive,
}

/// A user message of stream-json input.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserInput {
    pub message: UserInputMessage,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// The message of a [`UserInput`]: its content is a string or the API's blocks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserInputMessage {
    pub role: Role,
    pub content: UserContent,
}

/// A user message's content, in either of the API's forms.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl UserContent {
    /// The content as blocks.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            UserContent::Text(text) => vec![ContentBlock::text(text)],
            UserContent::Blocks(blocks) => blocks,
        }
    }
}

/// A fresh id for one line, as Claude Code stamps each of its lines.
pub fn line_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}
