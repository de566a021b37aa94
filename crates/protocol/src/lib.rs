//! Plain data types that every cairn crate shares: messages and their content blocks, tool
//! specifications, token usage, and the operations that go into the engine and the events that
//! come out of it.
//!
//! This crate does no I/O. Its serde representation of messages is the Anthropic Messages API
//! wire format, so a message read from a request or a transcript serialises back to the same
//! JSON. Everything else (the model clients, the engine, the user interfaces) speaks in these
//! types, which keeps provider details out of the engine.

mod event;
mod message;
mod usage;

pub use event::{
    AgentEvent, DecisionSource, Op, PermissionAnswer, PermissionDecision, RetryNotice, TodoItem,
    TodoStatus, TurnEnd, TurnSummary,
};
pub use message::{
    ContentBlock, ImageSource, Message, Role, StopReason, SystemPrompt, ToolResultBlock,
    ToolResultContent, ToolSpec,
};
pub use usage::Usage;
