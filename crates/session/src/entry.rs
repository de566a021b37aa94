//! The lines of a session file, as serde types: the header and the entries.
//!
//! These types are the file format. Changing what a field means, or removing one, needs a new
//! [`FORMAT_VERSION`] and a migration (see [`crate::migrate`]); adding an optional field or a
//! new entry type does not, because readers ignore unknown fields and skip unknown types.

use std::time::{SystemTime, UNIX_EPOCH};

use cairn_protocol::{Message, TodoItem, Usage};
use serde::{Deserialize, Serialize};

use crate::SessionId;

/// The version of the file format this build writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// Milliseconds since the Unix epoch (UTC), the unit of every timestamp in a session file.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The first line of every session file.
///
/// ```json
/// {"type":"header","format_version":1,"cairn_version":"0.1.0","session_id":"…","cwd":"/work/app","git_branch":"main","model":"claude-sonnet-4-5","started_at":1760000000000}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// The format the rest of the file is written in ([`FORMAT_VERSION`] for new files).
    pub format_version: u32,
    /// The cairn that created the file.
    pub cairn_version: String,
    /// The session's id; the file's name is this id.
    pub session_id: SessionId,
    /// The working directory the session ran in (lossy if it was not UTF-8).
    pub cwd: String,
    /// The git branch checked out when the session started; `None` outside a repository or
    /// on a detached HEAD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The model the session started with; `model_change` entries record later switches.
    pub model: String,
    /// Unix milliseconds.
    pub started_at: u64,
    /// The session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<SessionId>,
}

/// How the header is written: the struct's fields behind `"type":"header"`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum HeaderLine<'a> {
    Header(&'a SessionHeader),
}

/// One line after the header. Every entry carries a `timestamp` in Unix milliseconds and is
/// built only from cairn's own types: no request, header or credential ever goes into a
/// session file.
///
/// On disk the variant is the `"type"` field, written first:
/// `user`, `assistant`, `tool_results`, `permission`, `todos`, `compaction`, `model_change`,
/// `turn_failed`, `collapse`, `sub_agent`, `plan`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// Something the user said.
    User(MessageEntry),
    /// One answer of the model.
    Assistant(AssistantEntry),
    /// The user-role message that carries the results of the previous answer's tool calls.
    ToolResults(MessageEntry),
    /// A permission decision about one tool call.
    Permission(PermissionEntry),
    /// The todo list, whole, each time it changes.
    Todos(TodosEntry),
    /// A compaction boundary: the history before it is replaced by a summary.
    Compaction(CompactionEntry),
    /// The user switched models.
    ModelChange(ModelChangeEntry),
    /// A turn ended in an error (the API unreachable, the key refused): what the user was
    /// told. It is not part of the conversation the model sees. Added within version 1: a
    /// cairn from before it skips the line with a warning and loads the rest unchanged.
    TurnFailed(TurnFailedEntry),
    /// How far requests show the conversation collapsed (the context pipeline's step 4), so
    /// a resume shows the same view. Added within version 1: a cairn from before it skips the
    /// line with a warning, and its resumed requests show the conversation uncollapsed.
    Collapse(CollapseEntry),
    /// A sub-agent started by one of the conversation's `Agent` calls, and the file its own
    /// transcript went to. Added within version 1: a cairn from before it skips the line with
    /// a warning and loads the rest unchanged.
    SubAgent(SubAgentEntry),
    /// The user approved a plan (`ExitPlanMode`): the plan the session follows from here on,
    /// which a resume restores and a compaction carries into the new opening. Added within
    /// version 1: a cairn from before it skips the line with a warning and finds the plan in
    /// the conversation instead.
    Plan(PlanEntry),
}

impl Entry {
    /// A `user` entry stamped now.
    pub fn user(message: Message) -> Self {
        Entry::User(MessageEntry {
            timestamp: now_ms(),
            message,
        })
    }

    /// A `tool_results` entry stamped now.
    pub fn tool_results(message: Message) -> Self {
        Entry::ToolResults(MessageEntry {
            timestamp: now_ms(),
            message,
        })
    }

    /// A `todos` entry stamped now.
    pub fn todos(todos: Vec<TodoItem>) -> Self {
        Entry::Todos(TodosEntry {
            timestamp: now_ms(),
            todos,
        })
    }

    /// A `model_change` entry stamped now.
    pub fn model_change(model: impl Into<String>) -> Self {
        Entry::ModelChange(ModelChangeEntry {
            timestamp: now_ms(),
            model: model.into(),
        })
    }

    /// A `turn_failed` entry stamped now.
    pub fn turn_failed(message: impl Into<String>) -> Self {
        Entry::TurnFailed(TurnFailedEntry {
            timestamp: now_ms(),
            message: message.into(),
        })
    }

    /// A `plan` entry stamped now.
    pub fn plan(plan: impl Into<String>) -> Self {
        Entry::Plan(PlanEntry {
            timestamp: now_ms(),
            plan: plan.into(),
        })
    }

    /// When the entry was written, in Unix milliseconds.
    pub fn timestamp(&self) -> u64 {
        match self {
            Entry::User(entry) | Entry::ToolResults(entry) => entry.timestamp,
            Entry::Assistant(entry) => entry.timestamp,
            Entry::Permission(entry) => entry.timestamp,
            Entry::Todos(entry) => entry.timestamp,
            Entry::Compaction(entry) => entry.timestamp,
            Entry::ModelChange(entry) => entry.timestamp,
            Entry::TurnFailed(entry) => entry.timestamp,
            Entry::Collapse(entry) => entry.timestamp,
            Entry::SubAgent(entry) => entry.timestamp,
            Entry::Plan(entry) => entry.timestamp,
        }
    }

    /// Whether the entry is part of the conversation itself (something said, an answer, tool
    /// results, a compaction): a new session's file is created at the first such entry, so a
    /// session in which nothing was said leaves no file behind.
    pub fn is_conversation(&self) -> bool {
        match self {
            Entry::User(_) | Entry::Assistant(_) | Entry::ToolResults(_) | Entry::Compaction(_) => {
                true
            }
            Entry::Permission(_)
            | Entry::Todos(_)
            | Entry::ModelChange(_)
            | Entry::TurnFailed(_)
            | Entry::Collapse(_)
            | Entry::SubAgent(_)
            | Entry::Plan(_) => false,
        }
    }
}

/// A `user` or `tool_results` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageEntry {
    /// When it was written, in Unix milliseconds.
    pub timestamp: u64,
    /// The user message: a prompt, or the results of the tool calls before it.
    pub message: Message,
}

/// An `assistant` entry: the message and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantEntry {
    /// When it was written, in Unix milliseconds.
    pub timestamp: u64,
    /// The model's message.
    pub message: Message,
    /// The model that answered, as the API named it.
    pub model: String,
    /// The API's id for the message (`msg_…`), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The tokens of the request that produced it.
    pub usage: Usage,
    /// That request's cost in USD; 0 when the model's prices are unknown.
    pub cost_usd: f64,
}

/// A `permission` entry, written by the governance layer for each decision about a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionEntry {
    /// When it was decided, in Unix milliseconds.
    pub timestamp: u64,
    /// The tool's canonical name.
    pub tool_name: String,
    /// The id of the `tool_use` block decided on.
    pub tool_use_id: String,
    /// What was decided.
    pub decision: PermissionOutcome,
    /// The settings rule that decided, as written (`Bash(npm run test:*)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Why, in words, when there is more to say than the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What was decided about a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// The call ran.
    Allow,
    /// The call was refused.
    Deny,
    /// The call was to be asked about. Read but not written: cairn records the answer.
    Ask,
}

/// A `todos` entry: the whole list after a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodosEntry {
    /// When the list changed, in Unix milliseconds.
    pub timestamp: u64,
    /// Every item of the new list, in order.
    pub todos: Vec<TodoItem>,
}

/// A `compaction` entry. When loading, every message before it is dropped and the history
/// restarts with one user message whose text is `summary`, exactly as written: put any framing
/// ("This session continues an earlier conversation…") into `summary` itself. The file keeps
/// the messages before the boundary, so nothing is lost to a later reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionEntry {
    /// When the compaction happened, in Unix milliseconds.
    pub timestamp: u64,
    /// The summary that replaced the messages before it.
    pub summary: String,
    /// Estimated tokens of the history before compaction.
    pub tokens_before: u64,
    /// Estimated tokens after it.
    pub tokens_after: u64,
    /// The messages the compacted conversation starts with (the summary and the re-injected
    /// state); a resume continues from exactly these. Files written before this field
    /// existed have none, and resume from the summary alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opening: Vec<Message>,
}

/// A `collapse` entry: from here on, requests showed the first `collapsed_through` messages
/// of the history (counted from the last compaction boundary) collapsed into a log. The
/// history itself is unchanged; a resume gives the last mark to the context pipeline, and a
/// later `compaction` entry ends it.
///
/// ```json
/// {"type":"collapse","timestamp":1760000000300,"collapsed_through":42,"tokens_before":150412,"tokens_after":98650}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollapseEntry {
    /// When the collapse was made, in Unix milliseconds.
    pub timestamp: u64,
    /// How many messages, from the last compaction boundary, requests show collapsed.
    pub collapsed_through: u64,
    /// Estimated tokens of a request before the collapse.
    pub tokens_before: u64,
    /// Estimated tokens of a request after it.
    pub tokens_after: u64,
}

/// A `plan` entry: the plan the user approved, whole, each time one is approved; the last
/// one is the session's.
///
/// ```json
/// {"type":"plan","timestamp":1760000000400,"plan":"# Plan\n\n1. Fix the off-by-one."}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// When it was approved, in Unix milliseconds.
    pub timestamp: u64,
    /// The plan, as the model wrote it (Markdown).
    pub plan: String,
}

/// A `model_change` entry: requests went to another model from here on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChangeEntry {
    /// When the model changed, in Unix milliseconds.
    pub timestamp: u64,
    /// The new model.
    pub model: String,
}

/// A `turn_failed` entry: a turn that ended in an error. `cairn sessions` lists a session
/// that failed before any answer as failed rather than as a count of messages.
///
/// ```json
/// {"type":"turn_failed","timestamp":1760000000200,"message":"connection error: nothing is listening at http://127.0.0.1:9 (connection refused)"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFailedEntry {
    /// When the turn failed, in Unix milliseconds.
    pub timestamp: u64,
    /// The error, as the user was told it.
    pub message: String,
}

/// A `sub_agent` entry: the parent's link to a sub-agent's transcript. The sub-agent's file
/// is a session file of its own (same header, same entries), named by `file` relative to the
/// directory of the parent's file, so a fork's copy of the entry still finds it.
///
/// ```json
/// {"type":"sub_agent","timestamp":1760000000400,"agent_id":"agent_1","agent_type":"Explore","description":"find the loader","tool_use_id":"toolu_01","file":"0b7c…/subagents/agent-agent_1.jsonl"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentEntry {
    /// When the sub-agent started, in Unix milliseconds.
    pub timestamp: u64,
    /// The sub-agent's id, as its events and hooks name it.
    pub agent_id: String,
    /// Its role or custom agent (`Explore`), as the `Agent` call named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The task in a few words, as the `Agent` call gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The id of the `Agent` call's `tool_use` block that started it.
    pub tool_use_id: String,
    /// Its transcript, relative to the directory of the parent's file:
    /// `<session-id>/subagents/agent-<agent-id>.jsonl`.
    pub file: String,
}
