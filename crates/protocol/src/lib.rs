//! Plain data types that every cairn crate shares: messages and their content blocks, tool
//! specifications, token usage, the operations that go into the engine ([`Op`]) and the events
//! that come out of it ([`AgentEvent`], stamped with their agent in an [`EventEnvelope`]), and
//! the two seams a face fills in: [`EventSink`] (where events go) and [`PermissionBroker`]
//! (who is asked before a tool runs).
//!
//! Its serde representation of messages is the Anthropic Messages API wire format, so a message
//! read from a request or a transcript serialises back to the same JSON. Everything else (the
//! model clients, the engine, the user interfaces) speaks in these types, which keeps provider
//! details out of the engine.
//!
//! ```
//! use cairn_protocol::{ContentBlock, Message, Role};
//!
//! let message: Message = serde_json::from_str(r#"{"role":"user","content":"Hello"}"#).unwrap();
//! assert_eq!(message.role, Role::User);
//! assert_eq!(message.content, vec![ContentBlock::text("Hello")]);
//! // A plain-string content is read as one text block and written back as an array.
//! assert_eq!(
//!     serde_json::to_string(&message).unwrap(),
//!     r#"{"role":"user","content":[{"type":"text","text":"Hello"}]}"#,
//! );
//! ```
//!
//! Two rules sit here because every crate that needs them already depends on this one:
//! [`child_environment`], cairn's environment without its credentials, and
//! [`private_file_options`] / [`private_dir_builder`], the 0600/0700 modes of everything cairn
//! keeps under `~/.cairn`.
//!
//! This crate must not do I/O (beyond reading the process environment for
//! [`child_environment`]) and must not depend on any other cairn crate: every crate sits above
//! it.

#![deny(missing_docs)]

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
    SideRequests, TodoItem, TodoStatus, TurnEnd, TurnSummary,
};
pub use message::{
    ContentBlock, ImageSource, Message, Role, StopReason, SystemPrompt, ToolResultBlock,
    ToolResultContent, ToolSpec, json_kind,
};
pub use permission_mode::{PermissionMode, UnknownPermissionMode};
pub use private_files::{private_dir_builder, private_file_options};
pub use usage::Usage;
