//! The cairn engine: the agent loop, and the session host every face runs it through.
//!
//! [`Engine`] holds a conversation (the message list is the whole state) and runs turns: it
//! sends the conversation to a [`ModelClient`], forwards every delta as an
//! [`AgentEvent`](cairn_protocol::AgentEvent) the moment it arrives, hands each tool call to
//! a [`ToolExecutor`] after its [`Governance`] (hooks, the permission gate, the broker) let
//! it through, appends the results, and loops until the model ends its turn, a limit is
//! reached, or the user interrupts. It never prints and knows no tool and no provider.
//!
//! [`SessionHost`] is what a program embeds: given a model client, tools, a configuration
//! with its governance, and a [`PermissionBroker`](cairn_protocol::PermissionBroker), it
//! builds the engine, runs the session hooks, takes what the user asks for through a
//! [`SessionInput`] and hands out the events. [`commands`] is the one slash-command table,
//! [`reports`] the text of the commands that report, [`assembly`] how a typed line becomes a
//! turn. The crate must not print, read the terminal or choose a provider: faces and the
//! command line do that.
//!
//! A session with a scripted model server (`cairn-test-support`, a dev-dependency), nobody
//! to ask and no tools:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//!
//! use cairn_context::StandardPipeline;
//! use cairn_core::assembly::Turn;
//! use cairn_core::{EndReason, EngineConfig, Governance, SessionHost, SessionParts, StartSource};
//! use cairn_llm::{AnthropicClient, AnthropicConfig};
//! use cairn_policy::hooks::{HookCommon, HookConfig, HookRunner};
//! use cairn_policy::{PermissionGate, PermissionMode, rules::RuleSet};
//! use cairn_protocol::{AgentEvent, ContentBlock, NobodyToAsk, SystemPrompt};
//! use cairn_tools::{ToolContext, ToolRegistry};
//!
//! let server = cairn_test_support::ScriptedServer::start();
//! server.push(cairn_test_support::Reply::text("Hello."));
//! let url = server.url();
//! let client = AnthropicClient::new(AnthropicConfig::from_vars(|name| match name {
//!     "ANTHROPIC_API_KEY" => Some("sk-example".into()),
//!     "ANTHROPIC_BASE_URL" => Some(url.clone()),
//!     _ => None,
//! })?)?;
//! let dir = std::env::temp_dir();
//! let gate = PermissionGate::new(
//!     PermissionMode::Default,
//!     RuleSet::default(),
//!     vec![dir.clone()],
//!     dir.clone(),
//!     dir.clone(),
//! );
//! let hooks = HookRunner::new(HookConfig::default(), dir.clone());
//! let governance = Governance::new(Arc::new(gate), Arc::new(hooks), HookCommon::default());
//! let tools = ToolRegistry::new(ToolContext::new(dir.clone()));
//! let tool_state = tools.context().session.clone();
//! let host = SessionHost::new(
//!     SessionParts {
//!         client: Arc::new(client),
//!         tools: Arc::new(tools),
//!         config: EngineConfig {
//!             model: "claude-sonnet-4-5".into(),
//!             system_prompt: Arc::new(SystemPrompt::default()),
//!             max_requests: Some(5),
//!             max_output_tokens: 1000,
//!             pipeline: Arc::new(StandardPipeline::new(dir.join("cairn-doc-spill"))),
//!             governance,
//!             recall: None,
//!         },
//!         history: Vec::new(),
//!         log: None,
//!         tool_state,
//!         agents: None,
//!     },
//!     Arc::new(NobodyToAsk),
//! );
//! let mut session = host.start(StartSource::Startup).await;
//! session.input().submit(Turn::message(vec![ContentBlock::text("Say hello.")]))?;
//! while let Some(envelope) = session.next_event().await {
//!     if let AgentEvent::TurnFinished(summary) = envelope.event {
//!         assert_eq!(summary.result, "Hello.");
//!         break;
//!     }
//! }
//! session.end(EndReason::Other).await;
//! # Ok(())
//! # }
//! ```
//!
//! `crates/core/examples/embedded_session.rs` adds a tool and a broker of the program's own.
//!
//! [`ModelClient`]: cairn_llm::ModelClient
//! [`ToolExecutor`]: cairn_tools::ToolExecutor

#![deny(missing_docs)]

pub mod agent;
pub mod assembly;
pub mod commands;
mod engine;
mod events;
mod governance;
pub mod host;
mod orchestrate;
mod permission;
pub mod reports;
pub mod skill;
pub mod structured_output;
mod summarize;
pub mod web;

pub use cairn_context::PromptSource;
pub use engine::{
    CARRIED_PLAN_HEADER, Engine, EngineConfig, INTERRUPTED_NOTE, PLAN_MODE_ACTIVE, PLAN_MODE_ENDED,
};
pub use events::{ChannelSink, Recorder};
pub use governance::Governance;
pub use host::{
    BackgroundShells, EndReason, EngineStopped, NestedConfig, Session, SessionHost, SessionInput,
    SessionParts, Spawner, StartSource,
};
pub use orchestrate::MAX_PARALLEL;
pub use permission::AskThroughEvents;
