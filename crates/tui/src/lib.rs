//! cairn's interactive terminal UI: the rendering layer.
//!
//! This crate turns the engine's [`cairn_protocol::AgentEvent`] stream into terminal lines and
//! widgets: a [`Transcript`] of cells (the user's prompts, the assistant's Markdown, thinking,
//! compact tool calls with diffs and checklists, errors), the [`PermissionDialog`] that asks
//! before a tool runs, and the [`StatusLine`]. Everything is drawn with `ratatui` in the styles
//! of a [`Theme`] (dark, light, or plain for `NO_COLOR`).
//!
//! It is a face: it sits under the `cli` crate and above the engine (`cairn-core`). The
//! rendering side does no I/O: finished cells come out as lines for the caller to write into
//! the terminal's scrollback, the live region as lines to redraw below them. The [`app`]
//! module is the event loop on top: it reads keys and the engine's events, owns the terminal
//! (an inline viewport) and sends operations. The questions the binary asks before or beside
//! the app (the [`TrustDialog`], the [`ImportsDialog`], the [`SettingsDialog`] and the session
//! [`picker`]) are here too, each a state with its drawing and a `run_…` function that owns
//! the terminal while it asks.
//!
//! It must not build an engine, run session hooks or write session entries: the binary does,
//! and hands the app a channel of events and a sender of operations.

#![deny(missing_docs)]

pub mod app;
mod choice;
mod dialog;
mod diff;
pub mod elicitation_form;
mod event_reader;
mod highlight;
mod imports_dialog;
mod markdown;
mod mcp_approval_dialog;
mod mcp_face;
mod memory_dialog;
pub mod picker;
mod plan_dialog;
mod question_dialog;
mod settings_dialog;
mod status;
pub mod status_command;
mod sub_agent;
mod table;
mod theme;
mod todos;
mod tool_cell;
mod transcript;
mod trust_dialog;
mod wrap;

pub use dialog::{DialogOutcome, DialogView, PermissionDialog};
pub use diff::{DiffStats, line_of, render_diff, render_diff_from};
pub use imports_dialog::{ImportsAnswer, ImportsDialog, ImportsDialogView, run_imports_dialog};
pub use markdown::render_markdown;
pub use mcp_approval_dialog::{McpApproval, McpApprovalDialog, run_mcp_approval_dialog};
pub use mcp_face::{McpFace, McpFuture};
pub use settings_dialog::{
    SettingsAnswer, SettingsDialog, SettingsDialogView, run_settings_dialog,
};
pub use status::{ModelFacts, StatusLine, StatusView};
pub use theme::{Appearance, ColorSupport, Theme};
pub use todos::render_todos;
pub use tool_cell::key_argument;
pub use transcript::{ThinkingDisplay, Transcript};
pub use trust_dialog::{
    TrustAnswer, TrustDialog, TrustDialogView, TrustQuestion, run_trust_dialog,
};
pub use wrap::{sanitize, truncate};
