//! Claude Code's hooks: shell commands that settings attach to events of a session, run with
//! Claude Code's JSON contract so that existing hook scripts work unchanged.
//!
//! Settings name, per event, groups of commands behind a matcher:
//!
//! ```json
//! { "hooks": { "PreToolUse": [ { "matcher": "Edit|Write",
//!     "hooks": [ { "type": "command", "command": "./lint.sh", "timeout": 30 } ] } ] } }
//! ```
//!
//! [`HookConfig::from_settings`] reads that value, reporting and skipping what is malformed.
//! [`HookRunner::run`] runs every matching command of an event in parallel (`sh -c`, in the
//! project directory, `CLAUDE_PROJECT_DIR` set, the event as JSON on stdin) and folds their
//! answers into one [`HookOutcome`]:
//!
//! - exit 0: stdout is read as JSON when it starts with `{` (`continue`, `stopReason`,
//!   `suppressOutput`, `decision`, `reason`, `systemMessage`, `hookSpecificOutput`); plain
//!   stdout becomes context for `UserPromptSubmit` and `SessionStart` and is ignored otherwise;
//! - exit 2: the hook blocks, and its stderr says why (see [`HookEvent::can_block`] for the
//!   events where nothing can be blocked);
//! - any other exit, a timeout or unreadable output: a warning, and the session carries on.
//!
//! A program driving cairn (an Agent SDK host) may register hooks of its own, answered by
//! it rather than a command ([`CallbackHooks`], [`HookRunner::with_callbacks`]).
//!
//! A hook never crashes the caller: everything that goes wrong with one ends up in
//! [`HookOutcome::warnings`].

mod callback;
mod config;
mod event;
mod output;
mod process;
mod run;

pub use callback::{CallbackFuture, CallbackHooks, HookCallback};
pub use config::HookConfig;
pub use event::HookEvent;
pub use output::{HookOutcome, HookPermission};
pub use run::{HookCommon, HookRunner};
