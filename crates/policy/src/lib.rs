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
//! ```
//! use std::path::PathBuf;
//! use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
//! use cairn_policy::{Asking, CallInfo, PermissionGate, PermissionMode, Verdict};
//! use cairn_protocol::DecisionSource;
//! use serde_json::json;
//!
//! let project = tempfile::tempdir()?;
//! let root = project.path().to_path_buf();
//! let origin = RuleOrigin::new("--allowedTools", &root);
//! let (rules, errors) = RuleSet::new([(RuleKind::Allow, "Bash(cargo test:*)".into(), origin)]);
//! assert!(errors.is_empty());
//! let gate = PermissionGate::new(
//!     PermissionMode::Default,
//!     rules,
//!     vec![root.clone()],
//!     root.clone(),
//!     PathBuf::from("/home/me"),
//! );
//! let shell_dir = [root.clone()];
//! let bash = |input: &serde_json::Value| -> Verdict {
//!     gate.check(&CallInfo {
//!         tool: "Bash",
//!         input,
//!         paths: &shell_dir,
//!         read_only: false,
//!         destructive: false,
//!         // Someone can answer (the engine's broker says so), so the gate may ask.
//!         asking: Asking::Interactive,
//!     })
//! };
//!
//! // A read-only command runs; so does one a rule allows.
//! assert!(matches!(bash(&json!({"command": "ls -la"})), Verdict::Allow { .. }));
//! assert_eq!(
//!     bash(&json!({"command": "cargo test -p cairn-policy"})),
//!     Verdict::Allow { source: DecisionSource::Rule, rule: Some("Bash(cargo test:*)".into()) },
//! );
//! // Anything else is a question, with the rule "don't ask again" would add.
//! let Verdict::Ask { suggested_rule, .. } = bash(&json!({"command": "npm install"})) else {
//!     panic!("npm install is asked about");
//! };
//! assert_eq!(suggested_rule.as_deref(), Some("Bash(npm install:*)"));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```
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
pub use gate::{Asking, CallInfo, Level, PLAN_MODE_REFUSAL, PermissionGate, Verdict};
