//! Append-only session transcripts: writing a session's history durably as it happens, and
//! reading it back to resume, list, fork or clean up sessions.
//!
//! A user must never lose a conversation, not to Ctrl-C, a crash, a full disk or an upgrade
//! of cairn. The message list is the whole state of a session (no state beside it), so a
//! session file is that list written down, one entry at a time. The engine (`cairn-core`)
//! writes through a [`SessionLog`]; `--resume` and `--continue` read through
//! [`SessionStore`]. This crate does blocking file I/O and must never print (warnings are
//! returned) or depend on any cairn crate but `cairn-protocol`.
//!
//! # The file format (version 1)
//!
//! One JSONL file per session, `<cairn_home>/projects/<project-key>/<session-id>.jsonl`
//! ([`project_key`], [`SessionId`]). Files are created readable by the user alone (0600),
//! directories 0700, and a session is written by one process at a time ([`SessionWriter`]
//! holds a lock on its file). A new session's file is created with its first message
//! ([`SessionStore::start`]), so a session in which nothing was said leaves no file to list
//! or continue. Line 1 is a [`SessionHeader`]; each later line is an [`Entry`], with
//! `"type"` first and a `"timestamp"`:
//!
//! ```text
//! {"type":"header","format_version":1,"cairn_version":"0.1.0","session_id":"…","cwd":"/work/app","model":"claude-sonnet-4-5","started_at":1760000000000}
//! {"type":"user","timestamp":1760000000100,"message":{"role":"user","content":[{"type":"text","text":"Fix the test"}]}}
//! {"type":"assistant","timestamp":1760000003000,"message":{…},"model":"…","message_id":"msg_…","usage":{…},"cost_usd":0.0123}
//! ```
//!
//! - Timestamps are Unix milliseconds (UTC) everywhere: no date library, no time zones to get
//!   wrong, cheap to compare; `jq '.timestamp / 1000 | todate'` makes them readable.
//! - Messages are stored in the Anthropic wire format of `cairn-protocol`.
//! - Entries are built only from cairn's own types. No request, HTTP header, API key or
//!   `Authorization` value is ever written.
//!
//! A sub-agent's transcript is a file of the same format beside its parent's, under the
//! parent's own directory: `<project-key>/<session-id>/subagents/agent-<agent-id>.jsonl` (the
//! layout Claude Code uses), linked from the parent's file by a `sub_agent` entry
//! ([`SubAgentEntry`], [`SessionLog::start_sub_agent`]). Only the parent's file is listed,
//! resumed or continued; cleaning up a session removes its directory, sub-agents included.
//!
//! # Versions
//!
//! The header's `format_version` says how to read the rest. A file of a newer version than
//! [`FORMAT_VERSION`] is refused with [`SessionError::NewerFormat`], never guessed at; older
//! versions load through the migrations in `migrate.rs` (none yet: version 1 is the first).
//! Within a version, readers ignore unknown fields and skip unknown entry types with a
//! warning, so adding either needs no new version. `tests/fixtures/v1-session.jsonl` is a
//! hand-written version-1 file that every later cairn must keep loading.
//!
//! # Durability
//!
//! See [`SessionWriter`] (one `write` per line, fsync per turn), [`SessionLog`] (a full disk
//! becomes one warning, and the session carries on in memory) and [`load_file`] (what a
//! torn or damaged line does, and how dangling tool calls are repaired).
//!
//! ```
//! use cairn_protocol::Message;
//! use cairn_session::{Entry, NewSession, Persistence, SessionId, SessionStore};
//!
//! let cairn_home = tempfile::tempdir()?;
//! let project = tempfile::tempdir()?;
//! let store = SessionStore::new(cairn_home.path());
//! let id = SessionId::new();
//! let new = NewSession { model: "claude-sonnet-4-5".into(), git_branch: None };
//!
//! let mut log = store.start(project.path(), &id, new);
//! // A model switch before anything was said waits in memory: no file to list yet.
//! log.append(&Entry::model_change("claude-opus-4-1"));
//! assert_eq!(log.persistence(), Persistence::NotStarted);
//! assert_eq!(store.latest(project.path())?, None);
//!
//! // The first message creates the file; resuming reads the conversation back.
//! log.append(&Entry::user(Message::user_text("Fix the failing test")));
//! log.sync();
//! assert_eq!(log.persistence(), Persistence::OnDisk);
//! let loaded = store.load(project.path(), &id)?;
//! assert_eq!(loaded.messages, vec![Message::user_text("Fix the failing test")]);
//! assert_eq!(loaded.model, "claude-opus-4-1");
//! assert_eq!(store.latest(project.path())?, Some(id));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod decode;
mod entry;
mod error;
mod history;
mod id;
mod load;
mod log;
mod migrate;
mod project;
mod recorder;
mod store;
mod summary;
mod writer;

pub use entry::{
    AssistantEntry, CollapseEntry, CompactionEntry, Entry, FORMAT_VERSION, MessageEntry,
    ModelChangeEntry, PermissionEntry, PermissionOutcome, PlanEntry, SessionHeader, SubAgentEntry,
    TodosEntry, TurnFailedEntry, now_ms,
};
pub use error::{LoadWarning, LoadWarningKind, SessionError};
pub use history::{INTERRUPTED_TOOL_RESULT, LOST_START};
pub use id::{InvalidSessionId, SessionId};
pub use load::{LoadedSession, SessionEntries, load_file, read_entries};
pub use log::{LogWarning, Persistence, SessionLog, SubAgentStart};
pub use project::project_key;
pub use recorder::entry_for;
pub use store::{CleanupScope, NewSession, SessionStore};
pub use summary::SessionSummary;
pub use writer::SessionWriter;
