//! What can go wrong, and what loading tolerates with a warning.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::{InvalidSessionId, SessionId};

/// An error from writing or reading session files. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The project's session directory could not be created.
    #[error("cannot create the session directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// Appending to (or creating) a session file failed; a full disk is one.
    #[error("cannot write the session file {}: {source}", path.display())]
    Write {
        /// The session file.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// A session file (or the directory listing it) could not be read.
    #[error("cannot read the session file {}: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// Cleaning up could not delete an old session's file or directory.
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },

    /// `--resume <id>` named a session this project does not have.
    #[error("no session {id} for this project (looked for {})", path.display())]
    NotFound {
        /// The id asked for.
        id: SessionId,
        /// Where its file would be.
        path: PathBuf,
    },

    /// A session file is already there for the id of a new session or fork: it is never
    /// overwritten.
    #[error("the session file {} already exists", path.display())]
    AlreadyExists {
        /// The file.
        path: PathBuf,
    },

    /// Another process is writing the session (a second `cairn -c` in the same project):
    /// appending too would interleave the two conversations in one file.
    #[error(
        "the session {} is in use by another cairn; fork it (--fork-session) to continue it here",
        path.display()
    )]
    Locked {
        /// The session file.
        path: PathBuf,
    },

    /// The file was written by a newer cairn; reading it could mis-read it, so it is refused.
    #[error(
        "{} was written in session format version {found}, newer than this cairn reads \
         (up to version {supported}); upgrade cairn to open it",
        path.display()
    )]
    NewerFormat {
        /// The session file.
        path: PathBuf,
        /// The version its header names.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },

    /// Resuming appends entries in this build's format, which must not be mixed into a file
    /// of an older format; forking copies the history into a file of the current format.
    #[error(
        "{} is in session format version {found} and this cairn appends only to version \
         {current}; fork the session to continue it",
        path.display()
    )]
    OlderFormat {
        /// The session file.
        path: PathBuf,
        /// The version its header names.
        found: u32,
        /// The version this build writes.
        current: u32,
    },

    /// The first line is not a session header, so the file is not a session cairn wrote.
    #[error("{}: line 1 is not a valid session header: {reason}", path.display())]
    InvalidHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong with the line.
        reason: String,
    },

    /// A session id given by the user is not a UUID.
    #[error(transparent)]
    InvalidId(#[from] InvalidSessionId),
}

/// Something `load` tolerated. Show it to the user; the session loaded anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The session file.
    pub path: PathBuf,
    /// 1-based line of the file the warning is about.
    pub line: usize,
    /// What was tolerated.
    pub kind: LoadWarningKind,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} line {}: {}",
            self.path.display(),
            self.line,
            self.kind
        )
    }
}

/// What [`LoadWarning`] is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadWarningKind {
    /// An entry cut short, most likely by a crash while it was written.
    #[error("skipped an incomplete entry (the session was probably interrupted while writing it)")]
    TornLine,
    /// A line no crash explains (complete JSON of the wrong shape, or garbage): skipped, so
    /// the conversation there is missing.
    #[error(
        "skipped a damaged entry (column {column}: {message}); the conversation is missing \
         whatever it held"
    )]
    DamagedLine {
        /// Where on the line the JSON parser stopped, counting from 1.
        column: usize,
        /// The JSON parser's description.
        message: String,
    },
    /// The first messages were lost (their lines were damaged), so what is left began with
    /// the assistant; a short user message saying so stands in front of it.
    #[error(
        "the conversation's first prompt could not be read; a note that it was lost stands in \
         its place"
    )]
    LostStart,
    /// An entry type this build does not know, from a newer cairn of the same format version.
    #[error("skipped an entry of unknown type `{entry_type}` (written by a newer cairn?)")]
    UnknownEntryType {
        /// The entry's `"type"`.
        entry_type: String,
    },
    /// Tool results with no tool call waiting for them; the API would refuse them.
    #[error("dropped tool results that answer no pending tool call: {}", tool_use_ids.join(", "))]
    UnmatchedToolResults {
        /// The `tool_use_id`s of the dropped results.
        tool_use_ids: Vec<String>,
    },
    /// Tool calls whose results were never written; they are answered as interrupted.
    #[error(
        "tool calls without a recorded result were marked as interrupted: {}",
        tool_use_ids.join(", ")
    )]
    InterruptedToolCalls {
        /// The ids of the calls answered as interrupted.
        tool_use_ids: Vec<String>,
    },
}
