//! cairn's governance layer: what may run, decided before it runs.
//!
//! - [`rules`]: permission rules in Claude Code's syntax (`Bash(npm run test:*)`,
//!   `Edit(src/**)`, `WebFetch(domain:example.com)`, `mcp__server__tool`) and their
//!   precedence, deny > ask > allow.
//! - [`hooks`]: Claude Code's hooks, run as shell commands with its JSON contract.
//! - [`protected`]: the project files that decide what runs later (`.claude/`, `.mcp.json`, git's
//!   configuration and hooks), which a tool changes only after asking.
//! - [`sandbox`]: Landlock on Linux, confining commands' writes to the workspace.
//! - [`PermissionGate`]: the decision for each call, from the mode, the rules and the
//!   analysis of Bash commands (`cairn-shell`), escalating one level short to a question and
//!   refusing two levels short.
//!
//! This crate must not know a model or a face. The gate judges the tool names and inputs it is
//! given; it does not run tools, and it asks nobody itself: "ask" is a [`Verdict`], and who
//! answers is the engine's business.

#![deny(missing_docs)]

mod gate;
pub mod hooks;
pub mod protected;
pub mod rules;
pub mod sandbox;

/// The mode the gate is in: one type for every crate, defined in `cairn-protocol`.
pub use cairn_protocol::PermissionMode;
pub use gate::{Asking, CallInfo, Level, PermissionGate, Verdict};
