//! cairn's MCP client: the servers a run has, read from Claude Code's configuration, and their
//! tools offered to the model as cairn tools.
//!
//! It sits beside `cairn-tools`: [`McpTools`] is a [`cairn_tools::ToolExecutor`] that the CLI
//! puts behind a [`cairn_tools::CompositeExecutor`] with the built-in registry. Servers are
//! found by [`config::load`] (`~/.claude.json`, the project's `.mcp.json` once approved,
//! `--mcp-config`), started in the background by [`McpTools::start`] over rmcp (the official
//! SDK: child processes and streamable HTTP), and never block the first request: a server not
//! up within a short bound has its tools offered from the [`cache::ManifestCache`], and a call
//! to one waits for that server only. Tools are named `mcp__<server>__<tool>` ([`names`]);
//! their annotations are only the server's word, so the gate asks before they run unless a
//! rule allows them.
//!
//! The other way round, [`serve::ToolServer`] serves cairn's own tools to other MCP clients
//! (`cairn mcp serve`), each call behind a [`serve::CallGate`].
//!
//! It must not block the first request on a server, hand a server cairn's credentials (a stdio
//! server's environment is exactly [`StartOptions::inherited_env`] and its own `env`, and a
//! project's `.mcp.json` may not name a credential: [`VariableError`]), or let a server's
//! annotations make a call read-only ([`McpTools`] reports its calls' safety as only
//! claimed).
//!
//! ```no_run
//! # async fn run() -> Result<(), cairn_mcp::config::ConfigError> {
//! use std::path::Path;
//! use cairn_mcp::config::{self, ConfigSources, ProjectApproval};
//! use cairn_mcp::{Limits, McpTools, Roots, StartOptions};
//!
//! let configured = config::load(&ConfigSources {
//!     home: Path::new("/home/me"),
//!     cairn_home: Path::new("/home/me/.cairn"),
//!     project: Path::new("/home/me/app"),
//!     flags: &[],
//!     strict: false,
//!     approval: ProjectApproval::default(),
//! })?;
//! let tools = McpTools::start(configured.servers, StartOptions {
//!     cairn_home: "/home/me/.cairn".into(),
//!     project: "/home/me/app".into(),
//!     inherited_env: Vec::new(),
//!     limits: Limits::from_env(|name| std::env::var(name).ok()),
//!     roots: Roots::fixed(vec!["/home/me/app".into()]),
//!     elicitation: cairn_mcp::elicitation::Elicitation::decline(),
//! });
//! tools.settle(std::time::Duration::from_millis(500)).await;
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

pub mod auth;
pub mod cache;
pub mod config;
pub mod edit;
pub mod elicitation;
mod executor;
mod expand;
pub mod names;
mod private_write;
mod prompts;
mod resources;
mod result;
mod sdk_transport;
pub mod serve;
mod server;
pub mod toggles;
mod tool;

pub use executor::{McpAction, McpTools, ServerReport, StartOptions};
pub use expand::VariableError;
pub use prompts::{PromptError, PromptInfo};
pub use resources::{LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
pub use result::DEFAULT_MAX_OUTPUT_TOKENS;
pub use sdk_transport::{ExchangeFuture, SdkMcpChannel, SdkTransport, SdkTransportError};
pub use server::{Limits, Roots, Status};
