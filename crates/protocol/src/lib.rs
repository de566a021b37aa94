//! Plain data types that every cairn crate shares: messages and their content blocks, tool
//! specifications, token usage, and the operations that go into the engine and the events that
//! come out of it.
//!
//! This crate does no I/O. Its serde representation of messages is the Anthropic Messages API
//! wire format, so a message read from a request or a transcript serialises back to the same
//! JSON. Everything else (the model clients, the engine, the user interfaces) speaks in these
//! types, which keeps provider details out of the engine.
//!
//! One rule sits here because every crate that starts a process needs it and this is the
//! crate they all share: [`child_environment`], cairn's environment without its credentials.

mod added_text;
mod asking;
mod child_env;
mod envelope;
mod event;
mod message;
mod permission_mode;
mod private_files;
mod usage;

pub use added_text::{
    command_line, is_shell_context, is_system_reminder, shell_context_text, system_reminder_text,
    typed_text,
};
pub use asking::{BoxFuture, NobodyToAsk, PermissionBroker, PermissionQuestion};
pub use child_env::{child_environment, declare_credential_variables, is_credential_variable};
pub use envelope::{AgentAddress, CollectedEvents, EventEnvelope, EventSender, EventSink};
pub use event::{
    AgentEvent, Compaction, DecisionSource, Op, PermissionAnswer, PermissionDecision, RetryNotice,
    TodoItem, TodoStatus, TurnEnd, TurnSummary,
};
pub use message::{
    ContentBlock, ImageSource, Message, Role, StopReason, SystemPrompt, ToolResultBlock,
    ToolResultContent, ToolSpec,
};
pub use permission_mode::{PermissionMode, UnknownPermissionMode};
pub use private_files::{private_dir_builder, private_file_options};
pub use usage::Usage;
