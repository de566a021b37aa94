//! The cairn engine: the agent loop.
//!
//! [`Engine`] holds a conversation (the message list is the whole state) and runs turns: it
//! sends the conversation to a [`ModelClient`], forwards every delta as an [`AgentEvent`] the
//! moment it arrives, hands each tool call to a [`ToolExecutor`], appends the results, and
//! loops until the model ends its turn, a limit is reached, or the user interrupts. It never
//! prints and knows no tool and no provider: the CLI wires real implementations, tests wire
//! scripted ones, and a sub-agent is a second engine with other parameters.
//!
//! [`ModelClient`]: cairn_llm::ModelClient
//! [`ToolExecutor`]: cairn_tools::ToolExecutor

pub mod assembly;
pub mod commands;
mod engine;
mod events;
mod governance;
pub mod host;
mod orchestrate;
mod permission;
pub mod reports;
mod summarize;

pub use cairn_context::PromptSource;
pub use engine::{Engine, EngineConfig, INTERRUPTED_NOTE, PLAN_MODE_ACTIVE, PLAN_MODE_ENDED};
pub use events::{ChannelSink, Recorder};
pub use governance::Governance;
pub use host::{
    BackgroundShells, EndReason, EngineStopped, NestedConfig, Session, SessionHost, SessionInput,
    SessionParts, Spawner, StartSource,
};
pub use orchestrate::MAX_PARALLEL;
pub use permission::AskThroughEvents;
